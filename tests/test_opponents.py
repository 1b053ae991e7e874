"""Fixed opponents, checked against brute-force minimax, nim-sums and hand-built positions."""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import games, opponents, search
from azdb_jax.agent import search_policy
from azdb_jax.games.nim import nim_oracle_policy
from azdb_jax.games.tic_tac_toe import perfect_tic_tac_toe_table, tic_tac_toe_code, tic_tac_toe_perfect_policy
from azdb_jax.policies import uniform_random_policy

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


# ----------------------------------------------------------- independent references


def _winner(board):
    for a, b, c in LINES:
        if board[a] != -1 and board[a] == board[b] == board[c]:
            return board[a]
    return None


@functools.lru_cache(maxsize=None)
def _value(board):
    """Game value (+1/0/-1) for the side to move, by exhaustive search (no depth preference)."""
    mover = sum(c != -1 for c in board) % 2
    if _winner(board) is not None:
        return -1  # the previous mover completed a line
    empties = [i for i, c in enumerate(board) if c == -1]
    if not empties:
        return 0
    return max(-_value(board[:i] + (mover,) + board[i + 1:]) for i in empties)


def _reachable():
    seen, frontier = set(), [(-1,) * 9]
    while frontier:
        board = frontier.pop()
        if board in seen:
            continue
        seen.add(board)
        if _winner(board) is None and -1 in board:
            mover = sum(c != -1 for c in board) % 2
            frontier += [board[:i] + (mover,) + board[i + 1:] for i, c in enumerate(board) if c == -1]
    return seen


def _play(env_id, moves, **options):
    """A single state after ``moves`` from the initial position (pgx picks the seat)."""
    env = games.make(env_id, **options)
    state = env.init(jax.random.PRNGKey(0))
    step = env.step
    for action in moves:
        state = step(state, action)
    assert not bool(state.terminated)
    return env, state


def _batch(state, size):
    return jax.tree.map(lambda x: jnp.stack([x] * size), state)


def _actions(policy, state, size=32, params=None, seed=0):
    """The set of actions ``policy`` plays in ``state`` over ``size`` random keys."""
    actions = jax.jit(policy)(params, jax.random.PRNGKey(seed), _batch(state, size))
    return set(np.asarray(actions).tolist())


# ----------------------------------------------------------- tic-tac-toe


def test_perfect_table_matches_brute_force_on_every_reachable_position():
    table = perfect_tic_tac_toe_table()
    positions = _reachable()
    assert len(positions) == 5478  # the well-known count of reachable tic-tac-toe positions
    for board in positions:
        row = table[tic_tac_toe_code(np.asarray(board))]
        empties = [i for i, c in enumerate(board) if c == -1]
        if _winner(board) is not None or not empties:
            assert not row.any(), board
            continue
        mover = sum(c != -1 for c in board) % 2
        child_values = {i: -_value(board[:i] + (mover,) + board[i + 1:]) for i in empties}
        best = max(child_values.values())
        chosen = set(np.flatnonzero(row).tolist())
        assert chosen and chosen <= {i for i, v in child_values.items() if v == best}, board


def test_every_opening_move_draws_and_is_kept():
    assert _value((-1,) * 9) == 0
    assert all(_value(tuple(0 if j == i else -1 for j in range(9))) == 0 for i in range(9))
    assert perfect_tic_tac_toe_table()[tic_tac_toe_code(np.full(9, -1))].all()


def test_perfect_player_blocks_the_only_threat():
    # X 0, O 4, X 1: O must block at 2, every other move loses at once.
    _, state = _play("tic_tac_toe", [0, 4, 1])
    assert _value((0, 0, -1, -1, 1, -1, -1, -1, -1)) == 0
    assert _actions(tic_tac_toe_perfect_policy(), state) == {2}


def test_perfect_player_wins_at_once_rather_than_blocking():
    # X 0, O 3, X 1, O 4: X wins at 2 (O threatens 5).
    _, state = _play("tic_tac_toe", [0, 3, 1, 4])
    assert _actions(tic_tac_toe_perfect_policy(), state) == {2}


def test_perfect_player_answers_a_corner_with_the_centre():
    # Against a corner opening only the centre draws (every other reply loses).
    _, state = _play("tic_tac_toe", [0])
    assert _actions(tic_tac_toe_perfect_policy(), state) == {4}


# ----------------------------------------------------------- minimax


def test_minimax_depth1_takes_an_immediate_connect_four_win():
    # Mover has the bottom row 0,1,2; column 3 wins. The opponent has no threat.
    env, state = _play("connect_four", [0, 0, 1, 1, 2, 6])
    assert _actions(opponents.minimax_policy(env, 1), state) == {3}


@pytest.mark.slow
def test_minimax_depth2_blocks_and_depth1_does_not():
    # The opponent has the bottom row 0,1,2 and threatens column 3; the mover has no win.
    env, state = _play("connect_four", [0, 6, 1, 6, 2])
    assert _actions(opponents.minimax_policy(env, 2), state) == {3}
    assert len(_actions(opponents.minimax_policy(env, 1), state, size=64)) > 1


def test_minimax_prefers_its_own_win_to_a_block():
    # Bottom row X X X _ O O O with X to move: column 3 wins for X and is also O's threat.
    env, state = _play("connect_four", [0, 4, 1, 5, 2, 6])
    assert _actions(opponents.minimax_policy(env, 3), state) == {3}


def test_minimax_refuses_huge_trees():
    env = games.make("connect_four")
    with pytest.raises(ValueError, match="max_leaves"):
        opponents.minimax_policy(env, 7)  # 7^7 = 823543 leaves
    with pytest.raises(ValueError, match="depth"):
        opponents.minimax_policy(env, 0)
    assert callable(opponents.minimax_policy(env, 4))  # 2401 leaves is fine


# ----------------------------------------------------------- nim


def test_nim_oracle_leaves_zero_nim_sum_and_random_is_legal():
    env = games.make("nim", heaps=(1, 3, 5))
    state = env.state_from_heaps(jnp.int32([1, 3, 5]))
    for action in _actions(nim_oracle_policy(env.max_heap), state):
        heap, take = divmod(action, env.max_heap)
        heaps = [1, 3, 5]
        heaps[heap] -= take + 1
        assert heaps[0] ^ heaps[1] ^ heaps[2] == 0
    legal = set(np.flatnonzero(state.legal_action_mask).tolist())
    played = _actions(uniform_random_policy(), state, size=256)
    assert played == legal  # all 9 legal moves show up over 256 draws, nothing else


# ----------------------------------------------------------- search agent


class _Out(NamedTuple):
    policy_logits: jax.Array  # [B, A]
    value: jax.Array  # [B]
    value_d: jax.Array  # [B]


def _uniform_net(num_actions):
    def apply_fn(params, obs, player):
        del params, player
        batch = obs.shape[0]
        return _Out(jnp.zeros((batch, num_actions)), jnp.zeros(batch), jnp.zeros(batch))

    return apply_fn


@pytest.mark.parametrize("config, player, lam", [
    # The zero-value stand-in knows only terminal rewards: the search must try the winning move.
    (search.SearchConfig(num_simulations=32, pb_c_init=5.0), 0, 1.0),
    (search.SearchConfig(algorithm="gumbel", num_simulations=7, max_num_considered_actions=7), 1, 0.5),
])
@pytest.mark.slow
def test_search_policy_takes_an_immediate_win_and_plays_legal_moves(config, player, lam):
    env, win = _play("connect_four", [0, 0, 1, 1, 2, 6])  # column 3 wins at once
    _, full = _play("connect_four", [3, 3, 3, 3, 3, 3])  # column 3 is full
    states = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), _batch(win, 8), _batch(full, 8))
    policy = search_policy(env, _uniform_net(7), config, player=player, lam=lam)
    actions = np.asarray(jax.jit(policy)(None, jax.random.PRNGKey(0), states))
    assert (actions[:8] == 3).all()
    assert set(actions[8:].tolist()) <= {0, 1, 2, 4, 5, 6}


def test_opponents_for_names():
    assert set(opponents.opponents_for("connect_four")) == {"random", "minimax2"}
    assert set(opponents.opponents_for("tic_tac_toe")) == {"random", "perfect", "minimax2"}
    assert set(opponents.opponents_for("nim", games.make("nim", heaps=(1, 2)))) == {"random", "oracle"}
    with pytest.raises(ValueError):
        opponents.opponents_for("nim", games.make("connect_four"))


def _brute_force_minimax2(env, state):
    """The depth-2 negamax scores of every legal action, over all 1,225 actions (host loops
    over the moves; a child's replies are stepped in one batch, padded to a multiple of 32
    with repeats of its legal replies so that few batch sizes compile)."""
    step = jax.jit(env.step)
    replies_of = jax.jit(jax.vmap(env.step, in_axes=(None, 0)))
    scores = {}
    for a in np.flatnonzero(np.asarray(state.legal_action_mask)):
        child = step(state, jnp.int32(a))
        if bool(child.terminated):
            scores[int(a)] = 1.1 * float(child.rewards[state.current_player])
            continue
        legal = np.flatnonzero(np.asarray(child.legal_action_mask))
        padded = np.resize(legal, -(-len(legal) // 32) * 32)
        rewards = np.asarray(replies_of(child, jnp.asarray(padded, jnp.int32)).rewards)[: len(legal)]
        scores[int(a)] = -max(float(rewards[:, int(child.current_player)].max()), 0.0)
    best = max(scores.values())
    return {a for a, v in scores.items() if v >= best - 1e-6}


@pytest.mark.slow
def test_minimax_over_legal_moves_matches_brute_force_on_gardner_chess():
    from pgx import gardner_chess  # pylint: disable=g-import-not-at-top

    env = games.make("gardner_chess")
    # White mates with Qa4 (the king on b3 guards a4 and b4, the queen covers b5).
    mate_in_one = gardner_chess.State._from_fen("k4/4Q/1K3/5/5 w - - 0 1")  # pylint: disable=protected-access
    positions = [mate_in_one]
    key = jax.random.PRNGKey(0)
    state = env.init(key)
    step = env.step
    for ply in range(36):  # positions along a random game, where mates and threats appear
        key, sub = jax.random.split(key)
        state = step(state, jax.random.categorical(sub, jnp.where(state.legal_action_mask, 0.0, -1e9)))
        if bool(state.terminated):
            break
        if ply % 12 == 11:
            positions.append(state)
    policy = opponents.minimax_policy(env, 2)
    for position in positions:
        expected = _brute_force_minimax2(env, position)
        assert _actions(policy, position, size=16) <= expected  # 16 keys: each costs 2,304 Gardner steps
    assert len(_brute_force_minimax2(env, mate_in_one)) >= 1
    mates = _actions(opponents.minimax_policy(env, 1), mate_in_one)
    for action in mates:  # depth 1 plays a mate
        child = step(mate_in_one, jnp.int32(action))
        assert bool(child.terminated) and float(child.rewards[mate_in_one.current_player]) == 1.0
