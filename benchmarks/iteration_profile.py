"""Where a training iteration's wall time goes: each part timed alone, in one run, as JSON.

  python benchmarks/iteration_profile.py --preset=demo
  python benchmarks/iteration_profile.py --preset=gardner_cpu

The run's own compiled programs (``runner.programs``), after ``--warmup`` iterations so
that the replay buffer holds batches and games are under way; medians of ``--repeats``:

  iteration_s     one whole iteration (a self-play window, then the learner steps), as the
                  training loop runs it;
  selfplay_s      the self-play window alone (T plies of B games: searches, moves, φ, r_d,
                  the targets and replay writes, ψ and the payoffs);
  learner_s       the window's ``run.learner_steps`` learner steps alone (one step's median
                  times the steps);
  search_s        T searches of the B games' current positions alone, as self-play runs them
                  (the team's λ_i and r_d, root noise), i.e. self-play's searches;
  forwards_s      T x (S + 1) batched network forwards on those positions (what the
                  searches must spend on the network);
  env_steps_s     T x (S + 1) batched env steps (what the searches must spend on the game);
and the shares: search / self-play, self-play / iteration, learner / iteration, forwards /
search, env steps / search. The in-training evaluation (``run.eval_every``) is not part of
an iteration and is not timed here; a run's ``metrics.jsonl`` has its ``eval_seconds``.
"""

import functools
import json
import sys

from absl import app, flags
import jax
import jax.numpy as jnp

import profiling  # benchmarks/profiling.py (this folder is on the path when a script runs)
from azdb_jax import presets, runner, search, trainer
from azdb_jax import config as config_lib

_PRESET = flags.DEFINE_string("preset", "demo", "Training preset.")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "Config overrides (section.field=value).")
_WARMUP = flags.DEFINE_integer("warmup", 4, "Iterations before the timings.", lower_bound=1)
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed repetitions of each part.", lower_bound=1)


def main(argv):
    del argv
    config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDES.value)
    kept = runner.programs(config)
    c = kept.components
    repeats = _REPEATS.value
    state = kept.init(jax.random.PRNGKey(config.run.seed))
    for _ in range(_WARMUP.value):
        state, _ = trainer.train_iteration(c, state, selfplay_fn=kept.selfplay, learner_fn=kept.learner)
    state = jax.block_until_ready(state)

    holder = {"state": state}

    def chained(phase):
        def run():
            holder["state"], metrics = phase(holder["state"])
            return holder["state"], metrics  # waited on together: no step spills into the next timing
        return run

    iteration_s = profiling.timed(chained(functools.partial(trainer.train_iteration, c, selfplay_fn=kept.selfplay,
                                                            learner_fn=kept.learner)), repeats=repeats)
    selfplay_s = profiling.timed(chained(kept.selfplay), repeats=repeats)
    learner_step_s = profiling.timed(chained(kept.learner), repeats=repeats)
    state = holder["state"]

    plies, sims = c.selfplay_config.num_plies, c.search_config.num_simulations
    roots = state.games.env_state
    batch = roots.current_player.shape[0]
    params = state.train_state.params
    agent = c.agent(params, state.expected_features.psi)
    hook = agent.intrinsic_reward()
    in_search = agent.intrinsic_in_search and c.diverse
    players = jnp.arange(batch, dtype=jnp.int32) % c.lambdas.shape[0]
    lams = c.lambdas[players]

    def searches(p, key, s):
        def body(carry, k):
            out = search.run_search(c.env, c.network.apply, p, k, s, players, lams, config=c.search_config,
                                    add_noise=True, feature_fn=c.feature_fn if in_search else None,
                                    intrinsic_reward_fn=hook.intrinsic_reward_fn if in_search else None,
                                    hook_params=hook.hook_params, opponent=players)
            return carry + out.search_value.sum() * 0.0, None
        return jax.lax.scan(body, 0.0, jax.random.split(key, plies))[0]
    search_s = profiling.timed(jax.jit(searches), params, jax.random.PRNGKey(1), roots, repeats=repeats)

    def forwards(p, obs):
        def body(carry, _):
            return carry + c.network.apply(p, obs + carry, players).value.sum() * 0.0, None
        return jax.lax.scan(body, 0.0, None, length=plies * (sims + 1))[0]
    forwards_s = profiling.timed(jax.jit(forwards), params, roots.observation, repeats=repeats)

    def steps(s, key):
        def body(state, k):
            action = jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -1e9))
            nxt = jax.vmap(c.env.step)(state, action)
            done = nxt.terminated | nxt.truncated
            keep = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
            return jax.tree.map(keep, s, nxt), None
        return jax.lax.scan(body, s, jax.random.split(key, plies * (sims + 1)))[0].rewards
    env_steps_s = profiling.timed(jax.jit(steps), roots, jax.random.PRNGKey(2), repeats=repeats)

    learner_s = learner_step_s * c.learner_steps
    result = dict(
        preset=_PRESET.value, overrides=_OVERRIDES.value, device=str(jax.devices()[0].platform),
        games=batch, plies=plies, simulations=sims, learner_steps=c.learner_steps, batch_size=c.batch_size,
        iteration_s=round(iteration_s, 6), selfplay_s=round(selfplay_s, 6), learner_s=round(learner_s, 6),
        search_s=round(search_s, 6), forwards_s=round(forwards_s, 6), env_steps_s=round(env_steps_s, 6),
        search_share_of_selfplay=round(search_s / selfplay_s, 4),
        selfplay_share_of_iteration=round(selfplay_s / iteration_s, 4),
        learner_share_of_iteration=round(learner_s / iteration_s, 4),
        forwards_share_of_search=round(forwards_s / search_s, 4),
        env_steps_share_of_search=round(env_steps_s / search_s, 4),
    )
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    app.run(main)
