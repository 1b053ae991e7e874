"""Where a team's search time goes: a team of 10 against a team of 1, one search on the same roots.

  python benchmarks/team_profile.py --game=chess --algorithm=puct

Times, each alone in one process on the same root positions (medians of ``--repeats``):
``n1`` one search of a team of 1 (λ = 1); ``n10_nodiv`` the team of 10's network (its
latent a gathered per-player map in the stem) searching without diversity (λ = 1, no r_d); ``n10`` the team
of 10 with λ_i = 0.9 and r_d in the search, as self-play runs it; and ``*_fwd`` the S + 1
batched forward passes of each network. Prints one JSON line (milliseconds).
"""

import functools
import json

from absl import app, flags
import jax
import jax.numpy as jnp

import profiling  # benchmarks/profiling.py (this folder is on the path when a script runs)
from azdb_jax import diversity, features, games, networks, search
from azdb_jax.config import DiversityConfig, TeamConfig

_FLAGS = profiling.define_search_flags()
flags.adopt_module_key_flags(profiling)  # --help lists the shared search flags with this script's own
_PLAYERS = flags.DEFINE_integer("num_players", 10, "Team size compared with a team of 1.")


def main(argv):
    del argv
    env = games.make(_FLAGS.game.value)
    batch, sims, team = _FLAGS.batch.value, _FLAGS.simulations.value, _PLAYERS.value
    roots = profiling.random_positions(env, batch, _FLAGS.opening_plies.value, jax.random.PRNGKey(0))
    config = search.SearchConfig(num_simulations=sims, algorithm=_FLAGS.algorithm.value)
    feature_fn = features.feature_fn(env)
    num_features = jax.eval_shape(feature_fn, jax.eval_shape(env.init, jax.random.PRNGKey(0))).shape[-1]
    fns = {}
    for n, diverse in ((1, False), (team, False), (team, True)):
        net = networks.make_network(
            networks.NetworkConfig(channels=_FLAGS.channels.value, num_blocks=_FLAGS.blocks.value,
                                   value_hidden=_FLAGS.channels.value),
            num_actions=env.num_actions, num_players=n)
        params = net.init(jax.random.PRNGKey(1), roots.observation)
        players = jnp.arange(batch) % n
        lams = jnp.asarray(TeamConfig(n, 0.9).lambdas)[players] if diverse else jnp.ones((batch,))
        psi = 0.1 * jax.random.uniform(jax.random.PRNGKey(3), (n, num_features))  # players apart: r_d is not 0
        reward_fn = functools.partial(diversity.team_intrinsic_reward, l0=DiversityConfig().l0) if diverse else None
        label = f"n{n}" + ("" if diverse or n == 1 else "_nodiv")

        def run(p, k, s, psi, net=net, players=players, lams=lams, reward_fn=reward_fn):
            return search.run_search(env, net.apply, p, k, s, players, lams, config=config, add_noise=True,
                                     feature_fn=feature_fn if reward_fn else None, intrinsic_reward_fn=reward_fn,
                                     hook_params=psi).action

        def forwards(p, obs, net=net, players=players):
            def body(c, _):
                return c + net.apply(p, obs + c, players).value.sum() * 0.0, None
            return jax.lax.scan(body, 0.0, None, length=sims + 1)[0]

        fns[label] = (jax.jit(run), (params, jax.random.PRNGKey(2), roots, psi))
        if not diverse:
            fns[label + "_fwd"] = (jax.jit(forwards), (params, roots.observation))
    out = {label: profiling.timed(fn, *args, repeats=_FLAGS.repeats.value) for label, (fn, args) in fns.items()}
    print(json.dumps({label: round(seconds * 1e3, 1) for label, seconds in out.items()}))


if __name__ == "__main__":
    app.run(main)
