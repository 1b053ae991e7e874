"""Nim in JAX with pgx's State/step contract, and its exact oracle.

Normal play: players alternately remove one or more counters from a single heap; the
player who takes the last counter wins. The Sprague-Grundy theorem solves it: the
player to move loses exactly when the nim-sum (XOR of the heap sizes) is zero, and a
winning move is one that leaves a zero nim-sum (Bouton, 1901; used as a test bed by
Zhou & Riis, "Impartial Games: A Challenge for Reinforcement Learning").

Action encoding: ``action = heap * max_heap + (take - 1)`` for ``take`` in
``1..max_heap``, so ``num_actions = num_heaps * max_heap``; taking more counters than a
heap holds is illegal.

Two board encodings (``Nim(heaps, encoding=...)``):

- ``"one_hot"``: the heap sizes one-hot, a ``[num_heaps, max_heap + 1, 1]`` plane (the default);
- ``"unary"``: Zhou & Riis's bitstring, each heap's counters in unary (1: a counter still
  there, 0: one removed), heaps separated by -1, as a ``[L, 1, 1]`` sequence with
  ``L = sum(heaps) + num_heaps - 1`` (29, 41 and 55 cells for 5, 6 and 7 heaps of odd
  sizes 1, 3, 5, ...).
"""

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core as core
from pgx._src.struct import dataclass

Array = jax.Array

DEFAULT_HEAPS = (1, 3, 5, 7, 9)
ENCODINGS = ("one_hot", "unary")


@dataclass
class State(core.State):
    """A Nim position; field layout follows pgx (one item; vmap for batches)."""

    current_player: Array = jnp.int32(0)  # [] player id to move (0 or 1)
    observation: Array = jnp.zeros((1, 1, 1), dtype=jnp.float32)  # [K, M+1, 1] one-hot heaps
    rewards: Array = jnp.float32([0.0, 0.0])  # [2] by player id
    terminated: Array = jnp.bool_(False)  # []
    truncated: Array = jnp.bool_(False)  # []
    legal_action_mask: Array = jnp.zeros(1, dtype=jnp.bool_)  # [K * M]
    _step_count: Array = jnp.int32(0)  # []
    heaps: Array = jnp.zeros(1, dtype=jnp.int32)  # [K] counters left per heap

    @property
    def env_id(self) -> str:
        return "nim"


def _legal_action_mask(heaps: Array, max_heap: int) -> Array:
    takes = jnp.arange(1, max_heap + 1)
    return (takes[None, :] <= heaps[:, None]).reshape(-1)


def _one_hot_heaps(heaps: Array, max_heap: int) -> Array:
    return jax.nn.one_hot(heaps, max_heap + 1, dtype=jnp.float32)


def unary_layout(initial_heaps: Sequence[int]):
    """The unary encoding's cells: ``(heap [L], index [L])`` as numpy int arrays.

    Cell ``c`` shows counter ``index[c]`` of heap ``heap[c]``; a separator has heap -1.
    """
    heap, index = [], []
    for k, size in enumerate(initial_heaps):
        if k:
            heap.append(-1)
            index.append(0)
        heap.extend([k] * size)
        index.extend(range(size))
    return np.asarray(heap, np.int32), np.asarray(index, np.int32)


def _unary_heaps(heaps: Array, layout) -> Array:
    heap, index = layout
    present = index < heaps[np.maximum(heap, 0)]
    return jnp.where(heap < 0, -1.0, present.astype(jnp.float32))


class Nim(core.Env):
    """Nim with configurable heaps, e.g. ``Nim((1, 3, 5, 7, 9))``.

    The observation is the one-hot heap sizes as a ``[num_heaps, max_heap + 1, 1]``
    plane, or with ``encoding="unary"`` the paper's ``[L, 1, 1]`` bitstring (module
    docstring). Nim is impartial: the view does not depend on who is to move.
    """

    def __init__(self, heaps: Sequence[int] = DEFAULT_HEAPS, encoding: str = "one_hot"):
        super().__init__()
        heaps = tuple(heaps)
        if not heaps or any((not isinstance(h, int)) or h < 1 for h in heaps):
            raise ValueError(f"Nim heaps must be a non-empty sequence of positive ints, got {heaps!r}")
        if encoding not in ENCODINGS:
            raise ValueError(f"Nim encoding must be one of {ENCODINGS}, got {encoding!r}")
        self.initial_heaps = heaps
        self.max_heap = max(heaps)
        self.encoding = encoding
        self._layout = unary_layout(heaps)

    def _init(self, key: Array) -> State:
        return self.state_from_heaps(jnp.int32(self.initial_heaps), jax.random.bernoulli(key).astype(jnp.int32))

    def state_from_heaps(self, heaps, current_player=0) -> State:
        """A state at an arbitrary position (e.g. for oracle evaluation); jittable."""
        heaps = jnp.asarray(heaps, dtype=jnp.int32)
        state = State(  # type: ignore
            current_player=jnp.asarray(current_player, dtype=jnp.int32),
            heaps=heaps,
            legal_action_mask=_legal_action_mask(heaps, self.max_heap),
            terminated=jnp.all(heaps == 0),
        )
        return state.replace(observation=self.observe(state))  # type: ignore

    def _step(self, state: core.State, action: Array, key) -> State:
        del key
        assert isinstance(state, State)
        heap, take = action // self.max_heap, action % self.max_heap + 1
        heaps = state.heaps.at[heap].add(-take)
        terminated = jnp.all(heaps == 0)
        mover = state.current_player
        # Normal play: the mover who empties the board wins.
        won = jnp.where(jnp.arange(2) == mover, 1.0, -1.0).astype(jnp.float32)
        return state.replace(  # type: ignore
            current_player=1 - mover,
            heaps=heaps,
            legal_action_mask=_legal_action_mask(heaps, self.max_heap),
            terminated=terminated,
            rewards=jnp.where(terminated, won, jnp.zeros(2, jnp.float32)),
        )

    def _observe(self, state: core.State, player_id: Array) -> Array:
        del player_id  # impartial game: same view for both players
        assert isinstance(state, State)
        if self.encoding == "unary":
            return _unary_heaps(state.heaps, self._layout)[:, None, None]
        return _one_hot_heaps(state.heaps, self.max_heap)[..., None]

    @property
    def id(self) -> str:
        return "nim"

    @property
    def version(self) -> str:
        return "v0"

    @property
    def num_players(self) -> int:
        return 2

    @property
    def num_actions(self) -> int:
        return len(self.initial_heaps) * self.max_heap

    def action(self, heap: int, take: int) -> int:
        """Action id of taking ``take`` counters from heap ``heap``."""
        if not 0 <= heap < len(self.initial_heaps) or not 1 <= take <= self.max_heap:
            raise ValueError(f"no Nim action takes {take} from heap {heap} (heaps {self.initial_heaps})")
        return heap * self.max_heap + take - 1


# ---------------------------------------------------------------- the oracle


def nim_sum(heaps: Array) -> Array:
    """XOR of the heap sizes; zero exactly for positions lost by the player to move."""
    return jax.lax.reduce(jnp.asarray(heaps, jnp.int32), jnp.int32(0), jax.lax.bitwise_xor, (0,))


def position_value(heaps: Array) -> Array:
    """Game-theoretic value for the player to move: +1 (win) if nim-sum != 0, else -1.

    The empty board has nim-sum 0 and value -1: the previous mover took the last counter.
    """
    return jnp.where(nim_sum(heaps) != 0, 1, -1).astype(jnp.int32)


def winning_moves(heaps: Array, max_heap: int) -> Array:
    """Boolean mask over actions of the moves that leave a zero nim-sum.

    Taking ``t`` from heap ``k`` wins iff ``heaps[k] - t == heaps[k] XOR s`` with
    ``s = nim_sum(heaps) != 0``; all False in a lost position.

    Args:
      heaps: ``[K]`` heap sizes.
      max_heap: the env's ``max_heap``, which fixes the action layout.
    """
    heaps = jnp.asarray(heaps, jnp.int32)
    s = nim_sum(heaps)
    target_take = heaps - jnp.bitwise_xor(heaps, s)  # [K]; > 0 only for winning heaps
    takes = jnp.arange(1, max_heap + 1)
    mask = (takes[None, :] == target_take[:, None]) & (s != 0)
    return mask.reshape(-1)
