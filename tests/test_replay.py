"""Tests for azdb_jax/replay.py: ring buffer, masked add, uniform sampling, compaction."""

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


def _stored(state: replay.ReplayState) -> list:
    return np.asarray(state.data.index[: int(state.size)]).tolist()


def test_ring_buffer_wraps_around():
    config = replay.ReplayConfig(capacity=5)
    state = replay.init(config, _example())
    all_true = jnp.ones(3, bool)
    state = replay.add(state, _batch(0, 3), all_true)
    assert _stored(state) == [0, 1, 2] and int(state.position) == 3
    state = replay.add(state, _batch(3, 3), all_true)
    assert _stored(state) == [5, 1, 2, 3, 4] and int(state.position) == 1 and int(state.size) == 5
    state = replay.add(state, _batch(6, 3), all_true)
    assert _stored(state) == [5, 6, 7, 8, 4] and int(state.position) == 4


def test_batch_larger_than_capacity_keeps_the_last_rows():
    state = replay.init(replay.ReplayConfig(capacity=4), _example())
    state = replay.add(state, _batch(0, 1), jnp.ones(1, bool))
    state = replay.add(state, _batch(1, 7), jnp.ones(7, bool))  # 8 added one by one
    assert sorted(_stored(state)) == [4, 5, 6, 7]
    assert int(state.position) == 0  # (1 + 7) % 4: the oldest row (4) is next


def test_masked_add_stores_only_masked_rows_in_order():
    state = replay.init(replay.ReplayConfig(capacity=6), _example())
    mask = jnp.array([False, True, False, True, True])
    state = replay.add(state, _batch(10, 5), mask)
    assert _stored(state) == [11, 13, 14] and int(state.size) == 3
    np.testing.assert_allclose(state.data.z[:3], [1.1, 1.3, 1.4], rtol=1e-6)
    state = replay.add(state, _batch(20, 5), jnp.zeros(5, bool))
    assert _stored(state) == [11, 13, 14] and int(state.position) == 3


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
