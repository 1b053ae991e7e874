"""Where the STT expector's time goes: one move decision, its parts timed alone, as JSON.

  python benchmarks/expector_profile.py --game=gardner_chess --batch=32 --junior_simulations=16

The expector (``skill.agents.stt_move_values``) looks two plies ahead from every
candidate move: the opponent's reply from the half-half mixture of its junior and senior,
then the expector's side's move from its own mixture, and the strong value at the end. So
one decision over ``B`` positions calls the move models on ``B·K`` and ``B·K·k`` positions
and the value on ``B·K·k²`` (``K`` candidate slots, ``k = junior_top_k + senior_top_k``).

``legal_moves`` is the batch's number of legal moves: the pairs the batched form looks
ahead from (the per-game form looks at all ``B·K`` slots).

Timed (jitted alone, median of --repeats runs after compilation), with random networks of
the ``gardner_cpu`` shape (cost does not depend on the weights):

  per_game_ms           one decision as ``arena`` played the expector before it had a
                        batched form: ``vmap`` over games of a batch of one, all ``K`` slots
                        of a game in one chunk (under ``vmap`` a skip would be a select, so
                        every slot of every game is looked at);
  batched_ms            the batched form (``expector.rows``), every game asking (regular play);
  half_active_ms        the batched form with every other game asking (STT: the coin gives
                        the junior the other moves);
  policy_junior_ms      ``batched_ms`` with a policy junior (the search's share is the difference);
  junior_search_ms      the junior's model alone on the ``B·K + B·K·k`` positions it sees;
  senior_policy_ms      the strong policy alone on the same positions;
  value_ms              the strong value alone on the ``B·K·k²`` leaves;
  env_steps_ms          the ``B·K + B·K·k + B·K·k²`` env steps alone.
"""

import functools
import json

from absl import app, flags
import jax
import jax.numpy as jnp

import profiling  # benchmarks/profiling.py (this folder is on the path when a script runs)
from azdb_jax import games, networks, search
from azdb_jax.cli import common_flags
from azdb_jax.skill import agents

_GAME = common_flags.define_game("Game.", default="gardner_chess", choices=games.IDS)
_BATCH = flags.DEFINE_integer("batch", 32, "Positions decided side by side (a match's half of the games).")
_JUNIOR_SIMULATIONS = flags.DEFINE_integer("junior_simulations", 16, "The junior's PUCT simulations.")
_JUNIOR_TOP_K = flags.DEFINE_integer("junior_top_k", 4, "The expector's model of a junior: its top-k moves.")
_NUM_MOVES = flags.DEFINE_integer("num_moves", 0, "Candidate slots (0: the game's search bound).")
_CHANNELS = flags.DEFINE_integer("channels", 32, "Network channels.")
_BLOCKS = flags.DEFINE_integer("blocks", 3, "Residual blocks.")
_PLIES = flags.DEFINE_integer("opening_plies", 8, "Random plies from the start to get positions.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed repetitions.")


def _repeat(state, times):
    return jax.tree.map(lambda x: jnp.repeat(x, times, axis=0), state)


def main(argv):
    del argv
    env = games.make(_GAME.value)
    batch, repeats = _BATCH.value, _REPEATS.value
    network = networks.make_network(
        networks.NetworkConfig(channels=_CHANNELS.value, num_blocks=_BLOCKS.value, value_hidden=_CHANNELS.value),
        num_actions=env.num_actions, num_players=1)
    roots = profiling.random_positions(env, batch, _PLIES.value, jax.random.PRNGKey(0))
    params = network.init(jax.random.PRNGKey(1), roots.observation)
    config = search.SearchConfig(algorithm="puct", num_simulations=_JUNIOR_SIMULATIONS.value)
    search_junior = agents.junior_move_model(env, network.apply, config, "search",
                                             simulations=_JUNIOR_SIMULATIONS.value)
    policy = agents.network_move_model(network.apply)
    value = agents.network_value(network.apply)
    width = _NUM_MOVES.value or search.num_slots_for(env)
    k = _JUNIOR_TOP_K.value + 1
    expector_kw = dict(junior_top_k=_JUNIOR_TOP_K.value, num_moves=width)

    def decide(junior, active=None, per_game=False):
        models = agents.STTModels(value, junior, policy, junior, policy)

        def values(p, s, a, **chunking):
            return agents.stt_move_values(env, models, agents.STTModels(p, p, p, p, p), s, active=a, **expector_kw,
                                          **chunking)[1]
        if per_game:
            one = lambda p, s: values(p, jax.tree.map(lambda x: x[None], s), None,  # noqa: E731
                                      pairs_per_chunk=width)[0]
            return jax.jit(jax.vmap(one, in_axes=(None, 0)))
        return jax.jit(lambda p, s: values(p, s, active))

    # Positions of the sizes each part sees (the roots repeated: cost, not content, matters).
    n1, n2, n3 = batch * width, batch * width * k, batch * width * k * k
    ply1, ply2, leaves = _repeat(roots, width), _repeat(roots, width * k), _repeat(roots, width * k * k)

    def model_on_both(model, p, s1, s2):
        return model(p, s1).sum() + model(p, s2).sum()

    def steps(s1, s2, s3):
        out = 0.0
        for s in (s1, s2, s3):
            action = jnp.argmax(s.legal_action_mask, axis=-1)
            out = out + jax.vmap(env.step)(s, action).rewards.sum()
        return out

    parts = dict(
        per_game_ms=profiling.timed(decide(search_junior, per_game=True), params, roots, repeats=repeats),
        batched_ms=profiling.timed(decide(search_junior), params, roots, repeats=repeats),
        half_active_ms=profiling.timed(decide(search_junior, active=jnp.arange(batch) % 2 == 0), params, roots,
                              repeats=repeats),
        policy_junior_ms=profiling.timed(decide(policy), params, roots, repeats=repeats),
        junior_search_ms=profiling.timed(jax.jit(functools.partial(model_on_both, search_junior)), params, ply1, ply2,
                                repeats=repeats),
        senior_policy_ms=profiling.timed(jax.jit(functools.partial(model_on_both, policy)), params, ply1, ply2,
                                repeats=repeats),
        value_ms=profiling.timed(jax.jit(lambda p, s: value(p, s).sum()), params, leaves, repeats=repeats),
        env_steps_ms=profiling.timed(jax.jit(steps), ply1, ply2, leaves, repeats=repeats),
    )
    legal = int(jnp.minimum(roots.legal_action_mask.sum(-1), width).sum())
    result = dict(game=_GAME.value, batch=batch, candidate_slots=width, legal_moves=legal, mixture_support=k,
                  junior_simulations=_JUNIOR_SIMULATIONS.value, positions=dict(ply1=n1, ply2=n2, leaves=n3),
                  device=str(jax.devices()[0].platform),
                  **{name: round(1e3 * seconds, 1) for name, seconds in parts.items()})
    print(json.dumps(result))


if __name__ == "__main__":
    app.run(main)
