"""Outcome and intrinsic value targets on hand-built streams and against brute force."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import targets

# ---------------------------------------------------------------------------------------
# z: two games back to back (a draw, then a win for seat 1) and an unfinished tail.
# ---------------------------------------------------------------------------------------

#            game A (draw)       game B (seat 1 starts, seat 1 wins)   tail
MOVER = [0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1]
DONE = [0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0]
REWARDS = [[0, 0]] * 8 + [[-1, 1]] + [[0, 0]] * 2


def test_outcome_targets_two_games_and_tail():
    out = targets.outcome_targets(
        jnp.array(REWARDS, jnp.float32), jnp.array(MOVER), jnp.array(DONE, bool)
    )
    expected_z = [0, 0, 0, 0, 1, -1, 1, -1, 1, 0, 0]
    expected_valid = [True] * 9 + [False] * 2
    np.testing.assert_array_equal(out.value, expected_z)
    np.testing.assert_array_equal(out.valid, expected_valid)


def test_outcome_targets_jit_matches_eager():
    args = (jnp.array(REWARDS, jnp.float32), jnp.array(MOVER), jnp.array(DONE, bool))
    eager = targets.outcome_targets(*args)
    jitted = jax.jit(targets.outcome_targets)(*args)
    np.testing.assert_array_equal(eager.value, jitted.value)
    np.testing.assert_array_equal(eager.valid, jitted.valid)


# ---------------------------------------------------------------------------------------
# z_d: an 8-ply game (ends at t = 7), then a second game that is still running.
# ---------------------------------------------------------------------------------------

MOVER_D = [0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0]
DONE_D = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
# r_d of seat 0's moves are 1, 2, 3, 4; seat 1's are 10, 20, 30, 40 (game 1).
R_D = [1, 10, 2, 20, 3, 30, 4, 40, 100, 200, 300, 400, 500, 600]
V_D = [t + 0.5 for t in range(14)]


def _z_d(n_td):
    return targets.intrinsic_value_targets(
        jnp.array(R_D, jnp.float32),
        jnp.array(V_D, jnp.float32),
        jnp.array(MOVER_D),
        jnp.array(DONE_D, bool),
        n_td=n_td,
    )


def test_intrinsic_value_targets_two_step():
    out = _z_d(2)
    expected = [
        1 + 2.5,  # r_d(0) + v_d(2)
        10 + 3.5,
        2 + 4.5,
        20 + 5.5,
        3 + 6.5,
        30 + 7.5,
        4,  # game ends at t = 7: no bootstrap, the opponent's 40 is zeroed
        40,  # the finishing move itself
        100 + 10.5,  # next game: nothing of game 1 used
        200 + 11.5,
        300 + 12.5,
        400 + 13.5,
        0,  # s_14 lies past the window: masked
        0,
    ]
    np.testing.assert_allclose(out.value, expected)
    np.testing.assert_array_equal(out.valid, [True] * 12 + [False] * 2)


def test_intrinsic_value_targets_four_step():
    out = _z_d(4)
    expected = [
        1 + 2 + 4.5,  # r_d(0) + r_d(2) + v_d(4); opponent's 10, 20 zeroed
        10 + 20 + 5.5,
        2 + 3 + 6.5,
        20 + 30 + 7.5,
        3 + 4,  # truncated at the end of game 1; v_d(8) is the next game's
        30 + 40,
        4,
        40,
        100 + 300 + 12.5,
        200 + 400 + 13.5,
        0,
        0,
        0,
        0,
    ]
    np.testing.assert_allclose(out.value, expected)
    np.testing.assert_array_equal(out.valid, [True] * 10 + [False] * 4)


@pytest.mark.parametrize("n_td", [0, 1, 3, 2.0])
def test_intrinsic_value_targets_rejects_bad_n_td(n_td):
    with pytest.raises(ValueError, match="n_td"):
        _z_d(n_td)


# ---------------------------------------------------------------------------------------
# Random streams against plain Python loops.
# ---------------------------------------------------------------------------------------


def _random_stream(rng, length):
    """Alternating movers, random game ends, random start seat per game."""
    mover, done = [], []
    seat = int(rng.integers(2))
    for _ in range(length):
        mover.append(seat)
        ends = rng.random() < 0.15
        done.append(ends)
        seat = int(rng.integers(2)) if ends else 1 - seat
    rewards = np.zeros((length, 2), np.float32)
    for t in np.flatnonzero(done):
        result = rng.choice([-1.0, 0.0, 1.0])
        rewards[t] = [result, -result] if mover[t] == 0 else [-result, result]
    r_d = rng.normal(size=length).astype(np.float32)
    v_d = rng.normal(size=length).astype(np.float32)
    return np.array(mover), np.array(done), rewards, r_d, v_d


def _brute_force(mover, done, rewards, r_d, v_d, n_td):
    length = len(mover)
    z, z_valid, z_d, z_d_valid = [], [], [], []
    for t in range(length):
        end = next((k for k in range(t, length) if done[k]), None)
        z_valid.append(end is not None)
        z.append(rewards[end][mover[t]] if end is not None else 0.0)
        total, valid = 0.0, False
        for k in range(0, n_td, 2):
            if t + k >= length:
                break
            total += r_d[t + k]
            if any(done[t + k : t + k + 2]):
                valid = True
                break
        else:
            if t + n_td < length:
                total += v_d[t + n_td]
                valid = True
        z_d.append(total if valid else 0.0)
        z_d_valid.append(valid)
    return z, z_valid, z_d, z_d_valid


@pytest.mark.parametrize("n_td", [2, 4, 6])
def test_targets_match_brute_force(n_td):
    rng = np.random.default_rng(n_td)
    outcome = jax.jit(targets.outcome_targets)
    intrinsic = jax.jit(functools.partial(targets.intrinsic_value_targets, n_td=n_td))
    for _ in range(5):
        mover, done, rewards, r_d, v_d = _random_stream(rng, 40)
        z, z_valid, z_d, z_d_valid = _brute_force(mover, done, rewards, r_d, v_d, n_td)
        out = outcome(rewards, mover, done)
        np.testing.assert_array_equal(out.value, z)
        np.testing.assert_array_equal(out.valid, z_valid)
        out_d = intrinsic(r_d, v_d, mover, done)
        np.testing.assert_allclose(out_d.value, z_d, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(out_d.valid, z_d_valid)


def test_intrinsic_value_targets_vmap_is_batch_independent():
    rng = np.random.default_rng(0)
    streams = [_random_stream(rng, 30) for _ in range(4)]
    mover, done, _, r_d, v_d = (np.stack(x) for x in zip(*streams))
    fn = functools.partial(targets.intrinsic_value_targets, n_td=4)
    batched = jax.jit(jax.vmap(fn))(r_d, v_d, mover, done)
    single_fn = jax.jit(fn)
    for b in range(4):
        single = single_fn(r_d[b], v_d[b], mover[b], done[b])
        np.testing.assert_allclose(batched.value[b], single.value, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(batched.valid[b], single.valid)
    # Changing one stream leaves the others' targets untouched.
    r_d2 = r_d.copy()
    r_d2[1] += 100.0
    again = jax.jit(jax.vmap(fn))(r_d2, v_d, mover, done)
    for b in (0, 2, 3):
        np.testing.assert_array_equal(again.value[b], batched.value[b])


def test_opponent_intrinsic_value_targets_two_step():
    # The non-mover's return from s_t is the mover-at-t+1's z_d(s_{t+1}); 0 where a_t ended
    # the game (nothing left to earn), masked where s_{t+1}'s own target is unknown.
    z_d = _z_d(2)
    out = targets.opponent_intrinsic_value_targets(z_d, jnp.array(DONE_D, bool))
    expected = [
        10 + 3.5,  # = z_d(s_1)
        2 + 4.5,
        20 + 5.5,
        3 + 6.5,
        30 + 7.5,
        4,
        40,
        0,  # the move at t = 7 ended game 1
        200 + 11.5,
        300 + 12.5,
        400 + 13.5,
        0,  # z_d(s_12) is masked
        0,
        0,
    ]
    np.testing.assert_allclose(out.value, expected)
    np.testing.assert_array_equal(out.valid, [True] * 11 + [False] * 3)
