"""Nim env and oracle, checked against brute-force minimax."""

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax.envs import nim


def _minimax_value(heaps):
    """+1 if the player to move wins under normal play, by exhaustive search."""

    @functools.lru_cache(maxsize=None)
    def value(position):
        if sum(position) == 0:
            return -1  # the previous mover took the last counter
        return max(-value(child) for child in _children(position).values())

    return value(tuple(heaps))


def _children(position):
    children = {}
    for k, h in enumerate(position):
        for take in range(1, h + 1):
            child = list(position)
            child[k] -= take
            children[(k, take)] = tuple(child)
    return children


def _all_positions(heaps):
    return list(itertools.product(*[range(h + 1) for h in heaps]))


@pytest.mark.parametrize("heaps", [(1, 2, 3), (1, 3, 5)])
def test_oracle_matches_minimax_on_every_position(heaps):
    env = nim.Nim(heaps)
    positions = _all_positions(heaps)
    batch = jnp.int32(positions)
    values = jax.jit(jax.vmap(nim.position_value))(batch)
    winning = jax.jit(jax.vmap(lambda h: nim.winning_moves(h, env.max_heap)))(batch)
    for position, value, win_mask in zip(positions, np.asarray(values), np.asarray(winning)):
        assert value == _minimax_value(position), position
        expected = {env.action(k, t) for (k, t), child in _children(position).items() if _minimax_value(child) == -1}
        assert set(np.flatnonzero(win_mask)) == expected, position


def test_nim_sum_hand_values():
    assert int(nim.nim_sum(jnp.int32([1, 3, 5, 7, 9]))) == 1 ^ 3 ^ 5 ^ 7 ^ 9 == 9
    assert int(nim.nim_sum(jnp.int32([1, 2, 3]))) == 0
    assert int(nim.position_value(jnp.int32([0, 0, 0]))) == -1


def test_taking_the_last_counter_wins():
    env = nim.Nim((1, 2))
    state = env.state_from_heaps(jnp.int32([1, 2]), current_player=1)
    state = env.step(state, env.action(1, 2))  # player 1 leaves [1, 0]
    assert not bool(state.terminated) and int(state.current_player) == 0
    state = env.step(state, env.action(0, 1))  # player 0 takes the last counter
    assert bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])


def test_legal_moves_and_illegal_take():
    env = nim.Nim((1, 3, 5))
    state = env.state_from_heaps(jnp.int32([0, 2, 5]))
    legal = {(a // env.max_heap, a % env.max_heap + 1) for a in np.flatnonzero(state.legal_action_mask)}
    assert legal == {(1, 1), (1, 2)} | {(2, t) for t in range(1, 6)}
    state = env.step(state, env.action(1, 3))  # more than heap 1 holds: pgx's illegal-move rule
    assert bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [-1.0, 1.0])


def test_bad_heaps_rejected():
    for bad in [(), (0, 1), (1, -2), (1.5,)]:
        with pytest.raises(ValueError, match="heaps"):
            nim.Nim(bad)
    with pytest.raises(ValueError, match="heap 3"):
        nim.Nim((1, 2)).action(3, 1)
