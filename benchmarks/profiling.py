"""Helpers the profiling benchmarks share: a median timer (compile first, then the median
of ``repeats`` runs), random root positions, and the flags of a search profile."""

import statistics
import time
import types

import jax
import jax.numpy as jnp
from absl import flags


def define_search_flags() -> types.SimpleNamespace:
    """The flags of a search profile (game, batch, simulations, network, algorithm, roots,
    repeats), defined once per script; their holders by name."""
    from azdb_jax import games, search  # pylint: disable=g-import-not-at-top
    from azdb_jax.cli import common_flags  # pylint: disable=g-import-not-at-top

    return types.SimpleNamespace(
        game=common_flags.define_game("Game.", default="chess", choices=games.IDS),
        batch=flags.DEFINE_integer("batch", 32, "Positions searched side by side."),
        simulations=common_flags.define_simulations("Simulations per search.", default=32),
        channels=flags.DEFINE_integer("channels", 32, "Network channels."),
        blocks=flags.DEFINE_integer("blocks", 4, "Residual blocks."),
        algorithm=flags.DEFINE_enum("algorithm", "puct", list(search.ALGORITHMS), "Search algorithm."),
        opening_plies=flags.DEFINE_integer("opening_plies", 8,
                                           "Random plies played from the start to get root positions."),
        repeats=flags.DEFINE_integer("repeats", 5, "Timed repetitions."),
    )


def timed(fn, *args, repeats):
    jax.block_until_ready(fn(*args))  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_positions(env, batch, plies, key):
    """Root positions a few random plies into the game (none terminal)."""
    def body(state, k):
        action = jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -1e9))
        nxt = jax.vmap(env.step)(state, action)
        done = nxt.terminated | nxt.truncated
        keep = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
        return jax.tree.map(keep, state, nxt), None
    state = jax.vmap(env.init)(jax.random.split(key, batch))
    return jax.jit(lambda s, k: jax.lax.scan(body, s, jax.random.split(k, plies))[0])(state, key)


__all__ = ["timed", "random_positions"]
