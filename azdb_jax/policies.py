"""Policies of fixed strength: uniform random play and depth-limited minimax, over any game.

A *policy* is a pure function ``policy(params, rng_key, state) -> action`` over a
batched pgx ``State`` ``[B]``, returning ``[B]`` int32 legal actions; ``params`` is any
pytree (network parameters for the trained agent, ``None`` for fixed opponents) and
``rng_key`` is consumed. The arena (``azdb_jax.arena``) plays any two policies against
each other. Every policy here breaks ties uniformly at random among its best actions,
so repeated games between deterministic-strength players still cover different lines.

The games' own fixed players (the Nim oracle, perfect tic-tac-toe) live in their game's
module (``azdb_jax.games``) and build on the samplers here; ``azdb_jax.opponents`` adds
the trained agent and names each game's opponents.
"""

from typing import Any, Callable

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import tree_search

Array = jax.Array
# (params, rng_key, batched State [B]) -> actions [B] int32
Policy = Callable[[Any, Array, pgx.core.State], Array]

MAX_MINIMAX_LEAVES = 100_000


def sample_uniform(rng_key: Array, mask: Array) -> Array:
    """Samples one True entry of each row of ``mask`` [B, A] uniformly; consumes the key.

    Rows with no True entry return 0 (only terminal states, whose action is ignored).
    """
    noise = jax.random.uniform(rng_key, mask.shape)
    return jnp.argmax(jnp.where(mask, noise, -1.0), axis=-1).astype(jnp.int32)


def sample_by_visits(rng_key: Array, visits: Array) -> Array:
    """Samples one action per row of ``visits`` [B, A] with probability ∝ its visit count.

    Entries <= 0 (unvisited or illegal) are never drawn; consumes the key.
    """
    visits = jnp.asarray(visits, jnp.float32)
    logits = jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1e-30)), -jnp.inf)
    return jax.random.categorical(rng_key, logits, axis=-1).astype(jnp.int32)


def uniform_random_policy() -> Policy:
    """Plays a uniformly random legal move."""

    def policy(params, rng_key, state):
        del params
        return sample_uniform(rng_key, state.legal_action_mask)

    return policy


# ------------------------------------------------------------------ minimax


def minimax_policy(env: pgx.core.Env, depth: int, *, num_moves: int, max_leaves: int = MAX_MINIMAX_LEAVES) -> Policy:
    """Depth-limited negamax over the legal moves of the real game.

    The tree is unrolled at trace time: each level steps the position's legal moves —
    its first ``num_moves`` legal actions in id order (``azdb_jax.tree_search.legal_slots``;
    ``azdb_jax.opponents.minimax_policy`` defaults it to the game's search bound, which
    covers every position seen in random play) — with ``jax.vmap(env.step)``,
    so one decision costs ``num_moves^depth`` leaf steps per position (connect four depth
    4: 2,401; Gardner chess depth 2: 48² = 2,304 instead of 1,225² over all actions). A
    terminal move is worth its reward for the mover scaled by ``1 + 0.1·(plies left in
    the horizon)`` — sooner wins and later losses score higher in magnitude; a
    non-terminal leaf is worth 0. So depth 1 takes a win in one, depth 2 also avoids moves
    that let the opponent win in one. Ties are broken uniformly at random among the best
    actions.

    Raises:
      ValueError: ``depth < 1`` or ``num_moves ** depth > max_leaves``.
    """
    width = min(int(num_moves), env.num_actions)
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"minimax depth must be an int >= 1, got {depth!r}")
    if width**depth > max_leaves:
        raise ValueError(
            f"minimax over '{env.id}' at depth {depth} needs {width}^{depth} leaf steps per "
            f"position, more than max_leaves={max_leaves}; use a smaller depth or another opponent")

    def moves(state) -> Array:
        """[W] the legal actions of one state, -1 padded."""
        legal = state.legal_action_mask & ~(state.terminated | state.truncated)
        return tree_search.legal_slots(legal[None], jnp.zeros((1, env.num_actions)), width)[0]

    def action_scores(state, plies_left: int) -> Array:
        """[W] negamax score of each legal move (slot) for the mover of one state."""
        actions = moves(state)
        children = jax.vmap(env.step, in_axes=(None, 0))(state, jnp.maximum(actions, 0))
        reward = children.rewards[:, state.current_player]
        terminal_score = reward * (1.0 + 0.1 * (plies_left - 1))
        if plies_left == 1:
            continuation = jnp.zeros_like(reward)
        else:
            # One child's subtree at a time: the deepest level is the only one held in memory
            # (a Gardner position's 48 x 48 grandchildren, not all levels at once).
            continuation = -jax.lax.map(lambda child: state_value(child, plies_left - 1), children)
        scores = jnp.where(children.terminated, terminal_score, continuation)
        return jnp.where(actions >= 0, scores, -jnp.inf)

    def state_value(state, plies_left: int) -> Array:
        best = jnp.max(action_scores(state, plies_left))
        return jnp.where(state.terminated | ~jnp.isfinite(best), 0.0, best)

    def policy(params, rng_key, state):
        del params
        scores = jax.vmap(lambda s: action_scores(s, depth))(state)
        actions = jax.vmap(moves)(state)
        best = (scores >= jnp.max(scores, axis=-1, keepdims=True) - 1e-6) & (actions >= 0)
        slot = sample_uniform(rng_key, best)
        return jnp.take_along_axis(actions, slot[:, None], axis=1)[:, 0].astype(jnp.int32)

    return policy


__all__ = ["MAX_MINIMAX_LEAVES", "Policy", "minimax_policy", "sample_by_visits", "sample_uniform",
           "uniform_random_policy"]
