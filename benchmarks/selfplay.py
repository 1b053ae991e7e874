"""Self-play throughput and search overhead, printed as JSON.

  python benchmarks/selfplay.py --game=connect_four --batch=64 --simulations=32 --num_players=5

Measures (after compilation, median of --repeats timed runs):
  positions_per_s     searched-and-played positions per second in a jitted self-play
                      window of --plies plies (``azdb_jax.selfplay.selfplay_iteration``);
  forward_ms          one batched network forward pass on --batch observations;
  overhead_ratio      time of one self-play ply / time of (S + 1) forward passes: how
                      much the tree search, env steps and bookkeeping cost on top of the
                      network calls a search must make (1.0 = free search).
"""

import functools
import json
import statistics
import sys
import time

from absl import app, flags
import jax
import jax.numpy as jnp

from azdb_jax import diversity, envs, features, matchmaking, networks, search, selfplay

_GAME = flags.DEFINE_enum("game", "connect_four", list(envs.ENV_IDS), "Game.")
_BATCH = flags.DEFINE_integer("batch", 64, "Games played side by side.")
_SIMULATIONS = flags.DEFINE_integer("simulations", 32, "Search simulations per move.")
_NUM_PLAYERS = flags.DEFINE_integer("num_players", 1, "Team size (latents).")
_CHANNELS = flags.DEFINE_integer("channels", 32, "Network channels.")
_BLOCKS = flags.DEFINE_integer("blocks", 2, "Residual blocks.")
_PLIES = flags.DEFINE_integer("plies", 16, "Plies per timed self-play window.")
_ALGORITHM = flags.DEFINE_enum("algorithm", "puct", list(search.ALGORITHMS), "Search algorithm.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed repetitions.")


def _timed(fn, *args, repeats):
    jax.block_until_ready(fn(*args))  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv):
    del argv
    env = envs.make(_GAME.value)
    n = _NUM_PLAYERS.value
    net_config = networks.NetworkConfig(channels=_CHANNELS.value, num_blocks=_BLOCKS.value,
                                        value_hidden=_CHANNELS.value)
    network = networks.make_network(net_config, num_actions=env.num_actions, num_players=n)
    graph = matchmaking.uniform(jnp.zeros((n, n)))
    games = selfplay.init_selfplay(env, jax.random.PRNGKey(0), num_games=_BATCH.value, graph=graph)
    params = network.init(jax.random.PRNGKey(1), games.env_state.observation)
    sp_config = selfplay.SelfPlayConfig(num_games=_BATCH.value, num_plies=_PLIES.value)
    search_config = search.SearchConfig(num_simulations=_SIMULATIONS.value, algorithm=_ALGORITHM.value)
    play = jax.jit(functools.partial(
        selfplay.selfplay_iteration, env, network.apply, lambdas=diversity.lambdas(n, 1.0), config=sp_config,
        search_config=search_config, graph=graph, feature_fn=features.feature_fn(env)))
    key = jax.random.PRNGKey(2)
    window_s = _timed(lambda p, k, g: play(p, k, g)[1].action, params, key, games, repeats=_REPEATS.value)
    forward = jax.jit(network.apply)
    players = jnp.zeros((_BATCH.value,), jnp.int32)
    forward_s = _timed(lambda p, o: forward(p, o, players).value, params, games.env_state.observation,
                       repeats=max(_REPEATS.value, 5))
    ply_s = window_s / _PLIES.value
    result = dict(
        game=_GAME.value, batch=_BATCH.value, simulations=_SIMULATIONS.value, num_players=n,
        channels=_CHANNELS.value, blocks=_BLOCKS.value, algorithm=_ALGORITHM.value,
        device=str(jax.devices()[0].platform), num_devices=jax.device_count(),
        positions_per_s=round(_BATCH.value * _PLIES.value / window_s, 1),
        ply_ms=round(1e3 * ply_s, 2),
        forward_ms=round(1e3 * forward_s, 3),
        overhead_ratio=round(ply_s / ((_SIMULATIONS.value + 1) * forward_s), 2),
    )
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    app.run(main)
