"""A fixed-capacity replay buffer that lives on device: pure, jittable init/add/sample.

Self-play produces a batch of transitions per move; the learner samples uniformly from
the most recent ``capacity`` stored ones (paper §4, setup: a window of 1M positions;
SPEC §1.13). Everything here has fixed shapes so the whole buffer update sits inside
one jitted self-play or training step:

* the buffer is a pytree shaped like one transition with a leading ``[capacity]`` axis;
  the self-play module decides the fields (observation, search policy, player id, z,
  z_d, weight, ...), this module only needs an example transition;
* ``add`` writes the rows of a batch whose mask is True, in batch order, as a ring
  buffer (a cumulative-sum scatter; masked-out rows are dropped), so "store 10% of
  positions" is just a mask from `store_mask`;
* stored rows always occupy indices ``[0, size)``, so `sample` draws indices uniformly
  below ``size``.

Observation compaction (``ReplayConfig.observation_dtype``): at 1M positions a float32
chess observation (8 x 8 x 119) costs 30 GB, so the observation field can be stored
in a smaller dtype and is restored to float32 by `sample`::

  "auto"      uint8 for boolean observations (connect four, tic-tac-toe): exact;
              real-valued observations are kept as float32: exact.
  "uint8"     exact only when every value is an integer in [0, 255], e.g. nim's
              one-hot planes; NOT for chess or gardner chess (see below).
  "float16"   2 bytes; exact for values k / 2^m with few significant bits. For pgx
              chess every plane is exact except plane 118 (halfmove clock / 100),
              off by at most 2.4e-4.
  "bfloat16"  2 bytes; 8 significant bits, so chess planes 113 and 118 are rounded.
  "float32"   no compaction.

pgx chess observation layout (``pgx/_src/games/chess.py``, ``observe``), [8, 8, 119]:
planes 14k .. 14k+13 for history step k = 0 (current position) .. 7 hold 6 own-piece
planes, 6 opponent-piece planes and two repetition planes, all binary; plane 112 is
the colour to move (binary); 113 is the ply count / 512 (NOT binary); 114-117 are the
castling rights (binary); 118 is the halfmove clock / 100 (NOT binary). Gardner chess
([5, 5, 115]) has the same 112 history planes, then colour, ply count / 256 and
halfmove clock / 100.
"""

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

Array = jax.Array
Transition = Any  # a pytree of arrays; the self-play module defines its fields

OBSERVATION_DTYPES = ("auto", "float32", "uint8", "float16", "bfloat16")


@dataclasses.dataclass(frozen=True)
class ReplayConfig:
    """Size and storage format of the replay buffer.

    Attributes:
      capacity: number of transitions kept (the most recent ones).
      observation_field: name of the transition field holding the observation (a dict
        key or a NamedTuple/dataclass attribute at the top level of the transition).
      observation_dtype: storage dtype of that field, see the module docstring.
    """

    capacity: int = 100_000
    observation_field: str = "observation"
    observation_dtype: str = "auto"

    def __post_init__(self):
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 1:
            raise ValueError(f"ReplayConfig.capacity must be an int >= 1, got {self.capacity!r}")
        if not isinstance(self.observation_field, str) or not self.observation_field:
            raise ValueError(
                f"ReplayConfig.observation_field must be a non-empty str, got {self.observation_field!r}"
            )
        if self.observation_dtype not in OBSERVATION_DTYPES:
            raise ValueError(
                f"ReplayConfig.observation_dtype must be one of {OBSERVATION_DTYPES}, "
                f"got {self.observation_dtype!r}"
            )


class ReplayState(NamedTuple):
    """The buffer: transitions stored at rows [0, size), next write at ``position``."""

    data: Transition  # pytree of [capacity, ...] arrays, observation field compacted
    position: Array  # [] int32: row the next stored transition goes to
    size: Array  # [] int32: number of stored rows, <= capacity


def _is_field(path: tuple, name: str) -> bool:
    """Whether a pytree path starts at the top-level field ``name``."""
    if not path:
        return False
    key = path[0]
    return getattr(key, "key", None) == name or getattr(key, "name", None) == name


def _storage_dtype(config: ReplayConfig, dtype: Any) -> Any:
    choice = config.observation_dtype
    if choice == "auto":
        return jnp.uint8 if jnp.dtype(dtype) == jnp.bool_ else jnp.float32
    return jnp.dtype(choice)


def init(config: ReplayConfig, transition_example: Transition) -> ReplayState:
    """An empty buffer for transitions shaped like ``transition_example`` (unbatched).

    Leaves may be arrays or ``jax.ShapeDtypeStruct``; only shapes and dtypes are read.
    """
    found = []

    def empty(path, leaf):
        dtype = leaf.dtype
        if _is_field(path, config.observation_field):
            found.append(path)
            dtype = _storage_dtype(config, dtype)
        return jnp.zeros((config.capacity,) + tuple(leaf.shape), dtype)

    data = jax.tree_util.tree_map_with_path(empty, transition_example)
    if not found:
        leaves = jax.tree_util.tree_leaves_with_path(transition_example)
        fields = sorted({jax.tree_util.keystr(path[:1]) for path, _ in leaves})
        raise ValueError(
            f"replay.init: the transition has no field {config.observation_field!r} "
            f"(ReplayConfig.observation_field); its fields: {fields}"
        )
    return ReplayState(data=data, position=jnp.zeros((), jnp.int32), size=jnp.zeros((), jnp.int32))


def capacity(state: ReplayState) -> int:
    """Number of rows the buffer holds (static)."""
    return jax.tree_util.tree_leaves(state.data)[0].shape[0]


def _check_batch(state: ReplayState, batch: Transition, mask: Array) -> None:
    if mask.ndim != 1 or mask.dtype != jnp.bool_:
        raise ValueError(f"replay.add: mask must be a [B] bool array, got {mask.dtype}{list(mask.shape)}")
    stored_tree = jax.tree_util.tree_structure(state.data)
    batch_tree = jax.tree_util.tree_structure(batch)
    if stored_tree != batch_tree:
        raise ValueError(f"replay.add: batch structure {batch_tree} differs from the buffer's {stored_tree}")
    for (path, stored), leaf in zip(jax.tree_util.tree_leaves_with_path(state.data), jax.tree_util.tree_leaves(batch)):
        want = (mask.shape[0],) + stored.shape[1:]
        if tuple(leaf.shape) != want:
            raise ValueError(
                f"replay.add: field {jax.tree_util.keystr(path)} has shape {tuple(leaf.shape)}, "
                f"expected {want} (batch of {mask.shape[0]} from the mask, then the stored shape)"
            )


def add(state: ReplayState, batch: Transition, mask: Array) -> ReplayState:
    """Stores the rows of ``batch`` (leaves [B, ...]) where ``mask`` [B] is True, in order.

    The k-th masked row goes to row ``(position + k) % capacity``. If more than
    ``capacity`` rows are masked, only the last ``capacity`` are kept, as if they had
    been added one by one.
    """
    mask = jnp.asarray(mask)
    _check_batch(state, batch, mask)
    cap = capacity(state)
    count = jnp.sum(mask, dtype=jnp.int32)
    rank = jnp.cumsum(mask, dtype=jnp.int32) - 1  # [B]: index among the masked rows
    keep = mask & (rank >= count - cap)
    rows = jnp.where(keep, (state.position + rank) % cap, cap)  # [B]; cap = out of range: dropped

    def write(stored: Array, new: Array) -> Array:
        return stored.at[rows].set(new.astype(stored.dtype), mode="drop")

    data = jax.tree_util.tree_map(write, state.data, batch)
    return ReplayState(
        data=data,
        position=(state.position + count) % cap,
        size=jnp.minimum(state.size + count, cap),
    )


def store_mask(rng_key: Array, valid: Array, fraction: float) -> Array:
    """``valid`` [B] with each True kept with probability ``fraction``; consumes the key.

    The paper stores 10% of positions in full runs and all of them in fast runs (§4).
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"store_mask: fraction must be in [0, 1], got {fraction!r}")
    valid = jnp.asarray(valid, jnp.bool_)
    if fraction >= 1.0:
        return valid
    return valid & jax.random.bernoulli(rng_key, fraction, valid.shape)


def sample(state: ReplayState, rng_key: Array, batch_size: int, *, config: ReplayConfig) -> Transition:
    """``batch_size`` transitions drawn uniformly (with replacement) from the stored rows.

    Consumes ``rng_key``. The observation field comes back as float32. The buffer must
    not be empty: this is checked when ``state.size`` is concrete; under jit an empty
    buffer returns copies of row 0 (zeros), so gate training on ``state.size``.
    """
    try:
        empty = int(state.size) == 0
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError):
        empty = False
    if empty:
        raise ValueError("replay.sample: the buffer is empty; add transitions before sampling")
    rows = jax.random.randint(rng_key, (batch_size,), 0, jnp.maximum(state.size, 1))

    def take(path, stored: Array) -> Array:
        out = stored[rows]
        if _is_field(path, config.observation_field):
            out = out.astype(jnp.float32)
        return out

    return jax.tree_util.tree_map_with_path(take, state.data)


def memory_bytes(state: ReplayState) -> int:
    """Bytes held by the buffer's arrays (to size ``capacity`` and compaction)."""
    return int(sum(x.size * x.dtype.itemsize for x in jax.tree_util.tree_leaves(state.data)))


__all__ = [
    "ReplayConfig",
    "ReplayState",
    "OBSERVATION_DTYPES",
    "init",
    "add",
    "sample",
    "store_mask",
    "capacity",
    "memory_bytes",
]
