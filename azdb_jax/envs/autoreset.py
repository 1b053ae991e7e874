"""Auto-reset stepping for batched self-play loops.

A ``lax.scan`` over moves of many games needs every game to keep going: a game that
ends is replaced by a fresh start position in the same step. The finishing step's
``terminated``/``truncated``/``rewards`` are kept on the new state so the caller can
read the outcome; they are cleared again before that state is stepped.
"""

from typing import Callable, Optional

import jax
import jax.numpy as jnp
import pgx.core

Array = jax.Array
InitFn = Callable[[Array], pgx.core.State]


def step_autoreset(
    env: pgx.core.Env,
    state: pgx.core.State,
    action: Array,
    key: Array,
    *,
    init_fn: Optional[InitFn] = None,
) -> pgx.core.State:
    """Steps one game and restarts it if the step ended it.

    Args:
      env: the env (``azdb_jax.games.make``).
      state: one game's state (vmap for a batch). If it carries the end flags of the
        previous game (a state this function just reset), they are cleared first.
      action: the action to play.
      key: consumed; draws the new start position.
      init_fn: start-position sampler ``key -> State``; ``env.init`` by default.

    Returns:
      The next state; where the game ended, a new initial state carrying the
      finishing step's ``terminated``, ``truncated`` and ``rewards``.
    """
    state = state.replace(  # type: ignore
        terminated=jnp.zeros_like(state.terminated),
        truncated=jnp.zeros_like(state.truncated),
        rewards=jnp.zeros_like(state.rewards),
    )
    state = env.step(state, action)
    restarted = reset_where_done(env, state, key, init_fn=init_fn)
    return restarted.replace(  # type: ignore
        terminated=state.terminated, truncated=state.truncated, rewards=state.rewards
    )


def reset_where_done(
    env: pgx.core.Env,
    state: pgx.core.State,
    key: Array,
    *,
    init_fn: Optional[InitFn] = None,
) -> pgx.core.State:
    """Replaces a finished game (terminated or truncated) by a fresh start position.

    For loops that read the final position of a game (features, records) before it is
    replaced: step with ``env.step``, read, then call this. The result is ready to be
    searched and stepped (no end flags). ``key`` is consumed.
    """
    init_fn = env.init if init_fn is None else init_fn
    done = state.terminated | state.truncated
    return jax.tree.map(lambda a, b: jnp.where(done, a, b), init_fn(key), state)
