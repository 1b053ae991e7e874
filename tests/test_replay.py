"""Tests for azdb_jax/replay.py: ring buffers (one or many streams), masked add, uniform and
grouped sampling, compaction."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import replay


class Transition(NamedTuple):
    observation: jax.Array  # [2, 2, 3]
    index: jax.Array  # [] int32: which transition this is, to check what was stored
    z: jax.Array  # []


def _example(obs_dtype=jnp.float32) -> Transition:
    return Transition(jnp.zeros((2, 2, 3), obs_dtype), jnp.zeros((), jnp.int32), jnp.zeros(()))


def _batch(start: int, size: int, obs_dtype=jnp.float32) -> Transition:
    index = jnp.arange(start, start + size, dtype=jnp.int32)
    obs = jnp.broadcast_to((index % 2)[:, None, None, None], (size, 2, 2, 3)).astype(obs_dtype)
    return Transition(obs, index, index.astype(jnp.float32) / 10)


def _stored(state: replay.ReplayState, stream: int = 0) -> list:
    rows = replay.capacity(state) // replay.num_streams(state)
    start = stream * rows
    return np.asarray(state.data.index[start: start + int(state.size[stream])]).tolist()


def test_ring_buffer_wraps_around():
    config = replay.ReplayConfig(capacity=5)
    state = replay.init(config, _example())
    all_true = jnp.ones(3, bool)
    state = replay.add(state, _batch(0, 3), all_true)
    assert _stored(state) == [0, 1, 2] and int(state.position[0]) == 3
    state = replay.add(state, _batch(3, 3), all_true)
    assert _stored(state) == [5, 1, 2, 3, 4] and int(state.position[0]) == 1 and int(state.size[0]) == 5
    state = replay.add(state, _batch(6, 3), all_true)
    assert _stored(state) == [5, 6, 7, 8, 4] and int(state.position[0]) == 4


def test_batch_larger_than_capacity_keeps_the_last_rows():
    state = replay.init(replay.ReplayConfig(capacity=4), _example())
    state = replay.add(state, _batch(0, 1), jnp.ones(1, bool))
    state = replay.add(state, _batch(1, 7), jnp.ones(7, bool))  # 8 added one by one
    assert sorted(_stored(state)) == [4, 5, 6, 7]
    assert int(state.position[0]) == 0  # (1 + 7) % 4: the oldest row (4) is next


def test_masked_add_stores_only_masked_rows_in_order():
    state = replay.init(replay.ReplayConfig(capacity=6), _example())
    mask = jnp.array([False, True, False, True, True])
    state = replay.add(state, _batch(10, 5), mask)
    assert _stored(state) == [11, 13, 14] and int(state.size[0]) == 3
    np.testing.assert_allclose(state.data.z[:3], [1.1, 1.3, 1.4], rtol=1e-6)
    state = replay.add(state, _batch(20, 5), jnp.zeros(5, bool))
    assert _stored(state) == [11, 13, 14] and int(state.position[0]) == 3


def test_add_and_sample_are_jittable_and_match_eager():
    config = replay.ReplayConfig(capacity=7)
    mask = jnp.array([True, False, True, True])
    eager = replay.add(replay.init(config, _example()), _batch(0, 4), mask)
    jitted = jax.jit(replay.add)(replay.init(config, _example()), _batch(0, 4), mask)
    jax.tree_util.tree_map(np.testing.assert_array_equal, eager, jitted)
    sample = jax.jit(replay.sample, static_argnums=2, static_argnames="config")
    a = sample(eager, jax.random.PRNGKey(0), 8, config=config)
    b = replay.sample(eager, jax.random.PRNGKey(0), 8, config=config)
    jax.tree_util.tree_map(np.testing.assert_array_equal, a, b)


def test_sampling_is_uniform_over_stored_rows_only():
    config = replay.ReplayConfig(capacity=50)
    state = replay.init(config, _example())
    state = replay.add(state, _batch(0, 10), jnp.ones(10, bool))
    drawn = replay.sample(state, jax.random.PRNGKey(3), 20_000, config=config)
    counts = np.bincount(np.asarray(drawn.index), minlength=50)
    assert counts[10:].sum() == 0
    # 2000 expected per row; 5 standard deviations is ~ +-212.
    assert np.all(np.abs(counts[:10] - 2000) < 5 * np.sqrt(2000 * 0.9))
    assert drawn.observation.dtype == jnp.float32


def test_store_mask_fraction():
    valid = jnp.arange(10_000) % 2 == 0
    mask = replay.store_mask(jax.random.PRNGKey(0), valid, 0.1)
    assert not np.any(np.asarray(mask) & ~np.asarray(valid))
    assert abs(float(mask.sum()) - 500) < 5 * np.sqrt(5000 * 0.09)
    np.testing.assert_array_equal(replay.store_mask(jax.random.PRNGKey(0), valid, 1.0), valid)
    assert not replay.store_mask(jax.random.PRNGKey(0), valid, 0.0).any()


def test_auto_compaction_of_bool_observations_is_exact():
    config = replay.ReplayConfig(capacity=64)
    obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 2, 2, 3))
    batch = Transition(obs, jnp.arange(64, dtype=jnp.int32), jnp.zeros(64))
    state = replay.add(replay.init(config, _example(jnp.bool_)), batch, jnp.ones(64, bool))
    assert state.data.observation.dtype == jnp.uint8
    drawn = replay.sample(state, jax.random.PRNGKey(1), 256, config=config)
    assert drawn.observation.dtype == jnp.float32
    np.testing.assert_array_equal(drawn.observation, obs[drawn.index].astype(jnp.float32))


def test_auto_keeps_real_valued_observations_in_float32():
    state = replay.init(replay.ReplayConfig(capacity=3), _example(jnp.float32))
    assert state.data.observation.dtype == jnp.float32


def test_float16_is_exact_on_chess_planes_except_the_halfmove_clock():
    """Chess plane 113 (ply / 512) survives float16; plane 118 (halfmove / 100) nearly."""
    plies = np.arange(513, dtype=np.float32) / 512
    halfmoves = np.arange(101, dtype=np.float32) / 100
    config = replay.ReplayConfig(capacity=513, observation_dtype="float16")
    example = {"observation": jnp.zeros((2,)), "z": jnp.zeros(())}
    obs = np.stack([plies, np.resize(halfmoves, 513)], axis=1)
    state = replay.add(replay.init(config, example), {"observation": obs, "z": np.zeros(513)}, jnp.ones(513, bool))
    restored = np.asarray(state.data["observation"].astype(jnp.float32))
    np.testing.assert_array_equal(restored[:, 0], plies)
    assert np.max(np.abs(restored[:, 1] - obs[:, 1])) <= 2.5e-4


def test_memory_bytes_reflects_compaction():
    big = replay.init(replay.ReplayConfig(capacity=10, observation_dtype="float32"), _example())
    small = replay.init(replay.ReplayConfig(capacity=10, observation_dtype="uint8"), _example())
    assert replay.memory_bytes(big) - replay.memory_bytes(small) == 10 * 12 * 3


def test_errors_are_clear():
    with pytest.raises(ValueError, match="capacity"):
        replay.ReplayConfig(capacity=0)
    with pytest.raises(ValueError, match="observation_dtype"):
        replay.ReplayConfig(observation_dtype="int4")
    with pytest.raises(ValueError, match="no field 'obs'"):
        replay.init(replay.ReplayConfig(observation_field="obs"), _example())
    config = replay.ReplayConfig(capacity=4)
    state = replay.init(config, _example())
    with pytest.raises(ValueError, match="empty"):
        replay.sample(state, jax.random.PRNGKey(0), 2, config=config)
    with pytest.raises(ValueError, match=r"\.observation has shape"):
        bad = _batch(0, 2)._replace(observation=jnp.zeros((2, 3, 3)))
        replay.add(state, bad, jnp.ones(2, bool))
    with pytest.raises(ValueError, match="bool"):
        replay.add(state, _batch(0, 2), jnp.ones(2))


def _streams_batch(start: int, plies: int, streams: int) -> Transition:
    """[T, S] transitions numbered start + t * S + s."""
    flat = _batch(start, plies * streams)
    return jax.tree_util.tree_map(lambda x: x.reshape((plies, streams) + x.shape[1:]), flat)


def test_each_stream_is_its_own_ring_buffer():
    """Three streams of ceil(7 / 3) = 3 rows: each keeps its own masked rows in order and wraps
    on its own, as a one-stream buffer fed only that stream's rows would."""
    config = replay.ReplayConfig(capacity=7)
    state = replay.init(config, _example(), streams=3)
    assert replay.capacity(state) == 9 and replay.num_streams(state) == 3 and replay.stream_rows(7, 3) == 3
    mask = jnp.array([[True, False, True], [True, True, False], [False, True, True]])
    state = replay.add(state, _streams_batch(0, 3, 3), mask)  # rows t * 3 + s
    assert [_stored(state, s) for s in range(3)] == [[0, 3], [4, 7], [2, 8]]
    state = replay.add(state, _streams_batch(100, 2, 3), jnp.ones((2, 3), bool))
    assert [_stored(state, s) for s in range(3)] == [[103, 3, 100], [104, 7, 101], [105, 8, 102]]
    np.testing.assert_array_equal(state.position, [1, 1, 1])
    np.testing.assert_array_equal(state.size, [3, 3, 3])
    assert int(replay.stored(state)) == 9
    # Stream 1 alone, as a one-stream buffer of 3 rows.
    alone = replay.init(replay.ReplayConfig(capacity=3), _example())
    for start, plies, column in ((0, 3, mask[:, 1]), (100, 2, jnp.ones(2, bool))):
        alone = replay.add(alone, jax.tree_util.tree_map(lambda x: x[:, 1], _streams_batch(start, plies, 3)), column)
    assert _stored(alone) == _stored(state, 1)


def test_grouped_sampling_draws_each_groups_share_from_its_own_streams():
    config = replay.ReplayConfig(capacity=40)
    state = replay.init(config, _example(), streams=4)  # 10 rows a stream
    fill = jnp.array([[t < 2, t < 5, False, t < 1] for t in range(6)])  # stream sizes 2, 5, 0, 1
    state = replay.add(state, _streams_batch(0, 6, 4), fill)
    drawn = np.asarray(replay.sample(state, jax.random.PRNGKey(0), 4000, config=config, groups=2).index)
    first, second = drawn[:2000], drawn[2000:]
    assert set(first) == {0, 4, 1, 5, 9, 13, 17}  # streams 0 and 1: their 7 stored rows
    counts = np.bincount(first, minlength=20)[[0, 4, 1, 5, 9, 13, 17]]
    assert np.all(np.abs(counts - 2000 / 7) < 5 * np.sqrt(2000 / 7))  # uniform over them
    assert set(second) == {3}  # streams 2 (empty) and 3 (one row)


def test_a_group_sampled_alone_draws_what_it_draws_among_all_groups():
    """A device holding groups 2 and 3 of 4 draws, from its streams, the rows those groups
    draw when one buffer holds all of them: the batch does not depend on the split."""
    config = replay.ReplayConfig(capacity=64)
    state = replay.init(config, _example(), streams=8)
    state = replay.add(state, _streams_batch(0, 6, 8), jax.random.bernoulli(jax.random.PRNGKey(1), 0.7, (6, 8)))
    key = jax.random.PRNGKey(5)
    whole = replay.sample(state, key, 16, config=config, groups=4)
    half = jax.tree_util.tree_map(lambda x: x[4 * 8:], state.data)
    part = replay.ReplayState(half, state.position[4:], state.size[4:])
    second = jax.jit(lambda s, g: replay.sample(s, key, 8, config=config, groups=2, first_group=g))(part, 2)
    jax.tree_util.tree_map(np.testing.assert_array_equal, second, jax.tree_util.tree_map(lambda x: x[8:], whole))


def test_an_empty_group_draws_unwritten_rows():
    config = replay.ReplayConfig(capacity=8)
    state = replay.init(config, _example(), streams=2)
    state = replay.add(state, _streams_batch(1, 1, 2), jnp.array([[True, False]]))
    drawn = replay.sample(state, jax.random.PRNGKey(0), 6, config=config, groups=2)
    np.testing.assert_array_equal(drawn.index, [1, 1, 1, 0, 0, 0])  # the second group: zeros (never written)
    np.testing.assert_array_equal(drawn.z[3:], 0.0)


def test_stream_and_group_errors_are_clear():
    config = replay.ReplayConfig(capacity=8)
    with pytest.raises(ValueError, match="streams must be an int >= 1"):
        replay.init(config, _example(), streams=0)
    state = replay.add(replay.init(config, _example(), streams=4), _streams_batch(0, 1, 4), jnp.ones((1, 4), bool))
    with pytest.raises(ValueError, match="groups must divide the 4 streams"):
        replay.sample(state, jax.random.PRNGKey(0), 6, config=config, groups=3)
    with pytest.raises(ValueError, match=r"batch_size \(6\) must be a multiple of groups \(4\)"):
        replay.sample(state, jax.random.PRNGKey(0), 6, config=config, groups=4)
    with pytest.raises(ValueError, match=r"mask must be a \[T, 4\] bool array"):
        replay.add(state, _batch(0, 4), jnp.ones(4, bool))
