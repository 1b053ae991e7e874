"""Helpers the profiling benchmarks share: a median timer (compile first, then the median
of ``repeats`` runs) and random root positions."""

import statistics
import time

import jax
import jax.numpy as jnp


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
