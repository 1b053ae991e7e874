"""Game states as a search tree stores them: only what the next ``env.step`` reads.

A search keeps one state per tree node (``[B, S + 1, ...]``); a pgx chess state is ~46 KB,
30 KB of it the observation (SPEC §4). ``codec(env)`` returns a ``StateCodec`` whose
``pack`` keeps what stepping the state needs, in the smallest exact form, and whose
``unpack`` rebuilds a state that ``env.step`` treats exactly as the original:

- the observation is dropped: the network reads the observation ``env.step`` produces,
  never the stored one;
- the legal-action masks are dropped and restored as all-True: ``env.step`` reads the
  stored mask only to flag an illegal action (a search only plays legal actions) and
  computes the new position's mask itself;
- board planes and piece lists are stored as int8 (piece codes are within ±6, squares
  below 64);
- the repetition history keeps its newest ``HASH_ROWS`` entries: a position cannot
  recur across a capture or a pawn move, and the fifty-move rule ends a game 100 plies
  after the last one, so older entries never match (zero rows, pgx's empty marker, stand
  in for them).

A chess state goes from 46.3 KB (15.8 KB without its observation) to 1.65 KB; a Gardner
chess state from 15.8 KB to 1.3 KB. Other games only drop the observation: a game is
packed so only when its record says its ``env.step`` allows it (``Game.compact_state``).
"""

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import games

HASH_ROWS = 128  # > 101 = the plies a repetition can span under the fifty-move rule

# Fields (by name, anywhere in the state) kept as int8, and repetition histories.
_INT8_FIELDS = ("board", "board_history", "_board", "_board_history", "_possible_piece_positions")
_HASH_FIELDS = ("hash_history", "_hash_history")
_MASK_FIELDS = ("legal_action_mask",)


class StateCodec(NamedTuple):
    """``pack(state) -> stored``, ``unpack(stored) -> state``; both for one state or a batch."""

    pack: Callable[[pgx.core.State], Any]
    unpack: Callable[[Any], pgx.core.State]


def _name(path) -> str:
    key = path[-1]
    return str(getattr(key, "name", getattr(key, "key", key)))


def _rewrite(tree: Any, fn: Callable[[str, jax.Array], jax.Array]) -> Any:
    return jax.tree_util.tree_map_with_path(lambda path, leaf: fn(_name(path), leaf), tree)


def codec(env: pgx.core.Env) -> StateCodec:
    """The codec of ``env``'s states (see the module docstring)."""
    template = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    compact = games.get(env).compact_state
    shapes = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(template)[0]:
        shapes[_name(path)] = leaf

    def pack(state: pgx.core.State) -> Any:
        batch = state.current_player.shape  # () for one state, (B,) for a batch

        def one(name: str, leaf: jax.Array) -> jax.Array:
            if name == "observation":
                return jnp.zeros(batch, jnp.int8)
            if not compact:
                return leaf
            if name in _MASK_FIELDS:
                return jnp.zeros(batch, jnp.bool_)
            if name in _INT8_FIELDS:
                return leaf.astype(jnp.int8)
            if name in _HASH_FIELDS:
                return leaf[..., :HASH_ROWS, :]
            return leaf

        return _rewrite(state, one)

    def unpack(stored: Any) -> pgx.core.State:
        batch = stored.current_player.shape

        def one(name: str, leaf: jax.Array) -> jax.Array:
            full = shapes[name]
            if name == "observation":
                return jnp.zeros(batch + full.shape, full.dtype)
            if not compact:
                return leaf
            if name in _MASK_FIELDS:
                return jnp.ones(batch + full.shape, full.dtype)
            if name in _INT8_FIELDS:
                return leaf.astype(full.dtype)
            if name in _HASH_FIELDS:
                missing = full.shape[-2] - leaf.shape[-2]
                pad = [(0, 0)] * (leaf.ndim - 2) + [(0, missing), (0, 0)]
                return jnp.pad(leaf, pad)
            return leaf

        return _rewrite(stored, one)

    return StateCodec(pack=pack, unpack=unpack)


__all__ = ["StateCodec", "codec", "HASH_ROWS"]
