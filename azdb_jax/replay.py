"""A fixed-capacity replay buffer that lives on device: pure, jittable init/add/sample.

Self-play produces a batch of transitions per move; the learner samples uniformly from
the most recent ``capacity`` stored ones (paper §4, setup: a window of 1M positions;
SPEC §1.13). Everything here has fixed shapes so the whole buffer update sits inside
one jitted self-play or training step:

* the buffer is a pytree shaped like one transition with a leading row axis; the
  self-play module decides the fields (observation, search policy, player id, z, z_d,
  weight, ...), this module only needs an example transition;
* the rows are split into ``streams`` rings of equal size (``init``): stream ``s`` owns
  rows ``[s C, (s + 1) C)`` with ``C = ceil(capacity / streams)``, its own next-write
  position and size. A training run gives every game slot of self-play its own stream,
  so a device that plays some of the games owns their rows and writes them without
  talking to another device (``azdb_jax.trainer``). One stream is a plain ring buffer;
* ``add`` writes, per stream, the rows of a batch whose mask is True, in order (a
  cumulative-sum scatter; masked-out rows are dropped), so "store 10% of positions"
  is just a mask from `store_mask`;
* a stream's stored rows always occupy its first ``size`` rows, so `sample` draws
  uniformly below the sizes. ``groups`` splits the streams into contiguous blocks that
  each draw their share of the batch with a key of their own, so the rows a block draws
  do not depend on which other blocks are sampled in the same call (a device samples
  only the blocks it holds, and all devices together draw the one-device batch).

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
    """The buffer: ``S`` streams of ``C`` rows; stream ``s`` holds its transitions at rows
    ``[s C, s C + size[s])`` and writes the next one at row ``s C + position[s]``."""

    data: Transition  # pytree of [S * C, ...] arrays, observation field compacted
    position: Array  # [S] int32: row of its stream that each stream's next transition goes to
    size: Array  # [S] int32: number of stored rows of each stream, <= C


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


def stream_rows(capacity: int, streams: int) -> int:
    """Rows per stream, ``C = ceil(capacity / streams)``: the buffer holds ``streams * C``
    rows, at most ``streams − 1`` more than ``capacity``."""
    if isinstance(streams, bool) or not isinstance(streams, int) or streams < 1:
        raise ValueError(f"replay: streams must be an int >= 1, got {streams!r}")
    return -(-capacity // streams)


def init(config: ReplayConfig, transition_example: Transition, *, streams: int = 1) -> ReplayState:
    """An empty buffer of ``streams`` rings for transitions shaped like ``transition_example``
    (unbatched); ``stream_rows(config.capacity, streams)`` rows each.

    Leaves may be arrays or ``jax.ShapeDtypeStruct``; only shapes and dtypes are read.
    """
    rows = streams * stream_rows(config.capacity, streams)
    found = []

    def empty(path, leaf):
        dtype = leaf.dtype
        if _is_field(path, config.observation_field):
            found.append(path)
            dtype = _storage_dtype(config, dtype)
        return jnp.zeros((rows,) + tuple(leaf.shape), dtype)

    data = jax.tree_util.tree_map_with_path(empty, transition_example)
    if not found:
        leaves = jax.tree_util.tree_leaves_with_path(transition_example)
        fields = sorted({jax.tree_util.keystr(path[:1]) for path, _ in leaves})
        raise ValueError(
            f"replay.init: the transition has no field {config.observation_field!r} "
            f"(ReplayConfig.observation_field); its fields: {fields}"
        )
    zeros = jnp.zeros((streams,), jnp.int32)
    return ReplayState(data=data, position=zeros, size=zeros)


def capacity(state: ReplayState) -> int:
    """Number of rows the buffer holds, all streams together (static)."""
    return jax.tree_util.tree_leaves(state.data)[0].shape[0]


def num_streams(state: ReplayState) -> int:
    """Number of streams (static)."""
    return state.position.shape[0]


def stored(state: ReplayState) -> Array:
    """[] int32: transitions stored, all streams together."""
    return jnp.sum(state.size)


def stored_rows(state: ReplayState) -> Any:
    """The indices of the stored rows, stream after stream, each stream's in row order (a
    numpy array; the state must be concrete): ``tree_map(lambda x: x[rows], state.data)``
    is everything the buffer holds."""
    import numpy as np  # pylint: disable=g-import-not-at-top

    sizes = np.asarray(jax.device_get(state.size))
    per_stream = capacity(state) // sizes.shape[0]
    return np.concatenate([s * per_stream + np.arange(n) for s, n in enumerate(sizes)]).astype(np.int64)


def _check_batch(state: ReplayState, batch: Transition, mask: Array) -> None:
    streams = num_streams(state)
    if mask.ndim != 2 or mask.dtype != jnp.bool_ or mask.shape[1] != streams:
        raise ValueError(f"replay.add: mask must be a [T, {streams}] bool array (T rows for each of the "
                         f"{streams} streams; [B] with one stream), got {mask.dtype}{list(mask.shape)}")
    stored_tree = jax.tree_util.tree_structure(state.data)
    batch_tree = jax.tree_util.tree_structure(batch)
    if stored_tree != batch_tree:
        raise ValueError(f"replay.add: batch structure {batch_tree} differs from the buffer's {stored_tree}")
    for (path, stored_leaf), leaf in zip(jax.tree_util.tree_leaves_with_path(state.data),
                                         jax.tree_util.tree_leaves(batch)):
        want = mask.shape + stored_leaf.shape[1:]
        if tuple(leaf.shape) != want:
            raise ValueError(
                f"replay.add: field {jax.tree_util.keystr(path)} has shape {tuple(leaf.shape)}, "
                f"expected {want} (the mask's [T, streams], then the stored shape)"
            )


def add(state: ReplayState, batch: Transition, mask: Array) -> ReplayState:
    """Stores the rows of ``batch`` where ``mask`` is True, each stream's in order.

    ``batch`` leaves are ``[T, S, ...]`` and ``mask`` ``[T, S]``: ``T`` candidate rows for
    each of the ``S`` streams (with one stream, ``[B, ...]`` and ``[B]`` too). The k-th
    masked row of stream ``s`` goes to its row ``(position[s] + k) % C``. If more than
    ``C`` rows of a stream are masked, only its last ``C`` are kept, as if they had been
    added one by one.
    """
    mask = jnp.asarray(mask)
    if mask.ndim == 1 and num_streams(state) == 1:
        mask = mask[:, None]
        batch = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[:, None], batch)
    _check_batch(state, batch, mask)
    streams = num_streams(state)
    rows_per_stream = capacity(state) // streams
    count = jnp.sum(mask, axis=0, dtype=jnp.int32)  # [S]
    rank = jnp.cumsum(mask, axis=0, dtype=jnp.int32) - 1  # [T, S]: index among the stream's masked rows
    keep = mask & (rank >= count - rows_per_stream)
    base = jnp.arange(streams, dtype=jnp.int32) * rows_per_stream
    rows = jnp.where(keep, base + (state.position + rank) % rows_per_stream, capacity(state))  # out of range: dropped
    rows = rows.reshape(-1)

    def write(stored_leaf: Array, new: Array) -> Array:
        new = new.reshape((-1,) + new.shape[2:])
        return stored_leaf.at[rows].set(new.astype(stored_leaf.dtype), mode="drop")

    data = jax.tree_util.tree_map(write, state.data, batch)
    return ReplayState(
        data=data,
        position=(state.position + count) % rows_per_stream,
        size=jnp.minimum(state.size + count, rows_per_stream),
    )


def store_mask(rng_key: Array, valid: Array, fraction: float) -> Array:
    """``valid`` with each True kept with probability ``fraction``; consumes the key.

    The paper stores 10% of positions in full runs and all of them in fast runs (§4).
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"store_mask: fraction must be in [0, 1], got {fraction!r}")
    valid = jnp.asarray(valid, jnp.bool_)
    if fraction >= 1.0:
        return valid
    return valid & jax.random.bernoulli(rng_key, fraction, valid.shape)


def sample(state: ReplayState, rng_key: Array, batch_size: int, *, config: ReplayConfig, groups: int = 1,
           first_group: Any = 0) -> Transition:
    """``batch_size`` transitions drawn uniformly (with replacement) from the stored rows.

    The streams are split into ``groups`` contiguous blocks of equal size; block ``g``
    draws ``batch_size / groups`` rows uniformly from its streams' stored rows, with the
    key ``fold_in(rng_key, first_group + g)``, and the batch holds them block by block.
    With one group (the default) the rows are uniform over the whole buffer. A block
    that stores nothing returns copies of a row never written (zeros: weight 0 where
    the transitions carry a weight). ``first_group``: the global index of this buffer's first
    block, where the buffer is one device's part of a larger one (may be traced).

    Consumes ``rng_key``. The observation field comes back as float32. The buffer must
    not be empty: this is checked when ``state.size`` is concrete; under jit an empty
    buffer returns copies of row 0 (zeros), so gate training on ``stored(state)``.
    """
    streams = num_streams(state)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or streams % groups:
        raise ValueError(f"replay.sample: groups must divide the {streams} streams, got {groups!r}")
    if batch_size % groups:
        raise ValueError(f"replay.sample: batch_size ({batch_size}) must be a multiple of groups ({groups})")
    try:
        empty = int(stored(state)) == 0
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError):
        empty = False
    if empty:
        raise ValueError("replay.sample: the buffer is empty; add transitions before sampling")
    rows_per_stream = capacity(state) // streams
    per_group, draws = streams // groups, batch_size // groups
    sizes = state.size.reshape(groups, per_group)

    def block(g, sizes):
        ends = jnp.cumsum(sizes)  # [per_group]: the group's stored rows, stream after stream
        key = jax.random.fold_in(rng_key, first_group + g)
        u = jax.random.randint(key, (draws,), 0, jnp.maximum(ends[-1], 1))
        stream = jnp.minimum(jnp.searchsorted(ends, u, side="right"), per_group - 1)
        within = u - (ends[stream] - sizes[stream])
        return (g * per_group + stream) * rows_per_stream + within

    rows = jax.vmap(block)(jnp.arange(groups), sizes).reshape(-1)

    def take(path, stored_leaf: Array) -> Array:
        out = stored_leaf[rows]
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
    "num_streams",
    "stored",
    "stored_rows",
    "stream_rows",
    "memory_bytes",
]
