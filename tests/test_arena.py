"""The arena: bookkeeping on forced games, known strength gaps, batch independence."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import arena, games, opponents
from azdb_jax.games.nim import nim_oracle_policy
from azdb_jax.games.tic_tac_toe import tic_tac_toe_perfect_policy
from azdb_jax.policies import uniform_random_policy


def _play(env, policy_a, policy_b, seed=0, *, num_games, max_plies, initial_state=None, jit=True):
    def run(key, start):
        return arena.play_games(env, policy_a, None, policy_b, None, key, num_games=num_games,
                                max_plies=max_plies, initial_state=start)

    run = jax.jit(run) if jit else run
    return jax.tree.map(np.asarray, run(jax.random.PRNGKey(seed), initial_state))


def _nim_starts(env, heaps, count):
    """``count`` start positions, cycling through ``heaps`` (one tuple or a list of them)."""
    cycle = heaps if isinstance(heaps, list) else [heaps]
    states = [env.state_from_heaps(jnp.int32(cycle[i % len(cycle)]), current_player=0) for i in range(count)]
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


RANDOM = uniform_random_policy()


# ----------------------------------------------------------- forced outcomes


@pytest.mark.parametrize("heaps, first_mover_wins, plies", [((1,), True, 1), ((1, 1), False, 2)])
def test_bookkeeping_on_forced_nim_games(heaps, first_mover_wins, plies):
    # With one counter the first mover wins in one ply; with two single heaps it loses in two,
    # whatever either player does.
    env = games.make("nim", heaps=heaps)
    results = _play(env, RANDOM, RANDOM, num_games=8, max_plies=5, initial_state=_nim_starts(env, heaps, 4))
    np.testing.assert_array_equal(results.a_first, [True] * 4 + [False] * 4)
    sign = 1.0 if first_mover_wins else -1.0
    np.testing.assert_array_equal(results.result, np.where(results.a_first, sign, -sign))
    np.testing.assert_array_equal(results.length, [plies] * 8)
    assert results.finished.all() and results.in_turn.all()
    summary = arena.summarize(results)
    assert (summary["wins"], summary["draws"], summary["losses"], summary["score"]) == (4, 0, 4, 0.5)
    assert summary["as_first"]["wins"] == (4 if first_mover_wins else 0)
    assert summary["as_second"]["losses"] == (4 if first_mover_wins else 0)
    assert summary["mean_length"] == plies


def test_nim_oracle_wins_every_won_position():
    env = games.make("nim", heaps=(1, 3, 5))
    oracle = nim_oracle_policy(env.max_heap)
    # (1, 3, 5) has nim-sum 7: the first mover wins; (1, 2, 3) has nim-sum 0: it loses.
    # Pairs alternate between the two, so the oracle faces a won position in every game
    # where it moves first from (1, 3, 5) or second from (1, 2, 3).
    starts = _nim_starts(env, [(1, 3, 5), (1, 2, 3)], 16)
    results = _play(env, oracle, RANDOM, num_games=32, max_plies=9, initial_state=starts)
    oracle_to_win = np.tile(np.arange(16) % 2 == 0, 2) == results.a_first
    assert (results.result[oracle_to_win] == 1).all() and oracle_to_win.sum() == 16
    assert results.finished.all() and (results.result[~oracle_to_win] != 0).all()
    # Oracle against oracle: whoever moves first from a won position wins.
    duel = _play(env, oracle, oracle, num_games=16, max_plies=9, initial_state=_nim_starts(env, (1, 3, 5), 8))
    np.testing.assert_array_equal(duel.result, np.where(duel.a_first, 1.0, -1.0))
    summary = arena.summarize(duel)
    assert summary["as_first"]["score"] == 1.0 and summary["as_second"]["score"] == 0.0


def test_unfinished_games_count_as_neither():
    env = games.make("nim", heaps=(1, 3, 5))
    results = _play(env, RANDOM, RANDOM, num_games=4, max_plies=1, initial_state=_nim_starts(env, (1, 3, 5), 2))
    assert not results.finished.any() and (results.result == 0).all() and (results.length == 1).all()
    summary = arena.summarize(results)
    assert summary["unfinished"] == 4 and summary["finished"] == 0 and np.isnan(summary["score"])


# ----------------------------------------------------------- strength gaps


def test_perfect_tic_tac_toe_never_loses():
    env = games.make("tic_tac_toe")
    perfect = tic_tac_toe_perfect_policy()
    summary = arena.summarize(_play(env, perfect, RANDOM, num_games=400, max_plies=9))
    assert summary["finished"] == 400 and summary["losses"] == 0
    assert summary["as_first"]["wins"] > summary["as_second"]["wins"] > 100  # X has the edge
    duel = _play(env, perfect, perfect, num_games=32, max_plies=9, seed=1)
    assert (duel.result == 0).all() and (duel.length == 9).all() and duel.finished.all()


def test_minimax2_beats_random_at_connect_four():
    env = games.make("connect_four")
    summary = arena.summarize(_play(env, opponents.minimax_policy(env, 2), RANDOM, num_games=200, max_plies=42))
    # A pure-Python win-or-block-else-random player scores about 0.94 against random.
    assert summary["finished"] == 200 and summary["score"] >= 0.9


# ----------------------------------------------------------- batching


def test_games_do_not_depend_on_the_batch():
    env = games.make("nim", heaps=(1, 3, 5))  # env.init draws the seat to move first
    small = _play(env, RANDOM, RANDOM, seed=3, num_games=2, max_plies=9)
    large = _play(env, RANDOM, RANDOM, seed=3, num_games=8, max_plies=9)
    for field_small, field_large in zip(small, large):
        np.testing.assert_array_equal(field_small, field_large[[0, 4]])  # pair 0, both colours
    assert len(set(zip(large.length.tolist(), large.result.tolist()))) > 1  # the games differ


def test_jit_and_eager_agree():
    env = games.make("nim", heaps=(1, 3, 5))
    starts = _nim_starts(env, (1, 3, 5), 2)
    jitted = _play(env, RANDOM, RANDOM, seed=5, num_games=4, max_plies=9, initial_state=starts)
    eager = _play(env, RANDOM, RANDOM, seed=5, num_games=4, max_plies=9, initial_state=starts, jit=False)
    for a, b in zip(jitted, eager):
        np.testing.assert_array_equal(a, b)


def test_bad_arguments_and_out_of_turn_games_are_rejected():
    env = games.make("nim", heaps=(1, 3))
    with pytest.raises(ValueError, match="even"):
        arena.play_games(env, RANDOM, None, RANDOM, None, jax.random.PRNGKey(0), num_games=3, max_plies=4)
    with pytest.raises(ValueError, match="max_plies"):
        arena.play_games(env, RANDOM, None, RANDOM, None, jax.random.PRNGKey(0), num_games=2, max_plies=0)
    with pytest.raises(ValueError, match="initial_state"):
        arena.play_games(env, RANDOM, None, RANDOM, None, jax.random.PRNGKey(0), num_games=2, max_plies=4,
                         initial_state=_nim_starts(env, (1, 3), 3))
    results = arena.GameResults(result=np.zeros(2), a_first=np.array([True, False]), length=np.ones(2, int),
                                finished=np.ones(2, bool), in_turn=np.array([True, False]))
    with pytest.raises(ValueError, match="out of turn"):
        arena.summarize(results)


# ----------------------------------------------------------- players that read the game's moves


def _reading(policy):
    """``policy``'s twin whose batched form reads each game's moves so far (as host players do,
    ``referee.host_policy``), on tic-tac-toe: it plays ``policy``'s move while the record it is
    handed is its game's — one move per ply played (``_step_count`` counts them from the empty
    board), in a prefix, on exactly the squares taken — and an occupied square (an illegal
    move, which loses at once) otherwise."""
    batched = arena.per_game_policy(policy)

    def rows(params, keys, states, moves):
        played = (moves >= 0).sum(-1)
        prefix = jnp.all((moves >= 0) == (jnp.arange(moves.shape[1])[None] < played[:, None]), axis=-1)
        taken = jnp.any(jax.nn.one_hot(moves, 9, dtype=bool), axis=1)  # -1 (no move) is no square
        whole = (played == states._step_count) & prefix & jnp.all(taken == ~states.legal_action_mask, axis=-1)
        occupied = jnp.argmin(states.legal_action_mask, axis=-1).astype(jnp.int32)
        return jnp.where(whole | ~states.legal_action_mask.any(-1), batched(params, keys, states), occupied)

    rows.reads_moves = True

    def reading(params, rng_key, state):
        raise AssertionError("the arena plays a policy with a batched form through it")

    reading.rows = rows
    return reading


def test_a_policy_reading_the_moves_gets_each_games_record_and_plays_the_same_games():
    # A reading player sees, every ply, its own games' moves so far in order; once every game
    # has ended the arena skips the plies left, which changes nothing of the results.
    env = games.make("tic_tac_toe")
    plain = _play(env, RANDOM, RANDOM, seed=2, num_games=8, max_plies=12)
    for policy_a, policy_b in ((_reading(RANDOM), RANDOM), (RANDOM, _reading(RANDOM))):
        read = _play(env, policy_a, policy_b, seed=2, num_games=8, max_plies=12)
        for field, a, b in zip(arena.GameResults._fields, plain, read):
            np.testing.assert_array_equal(a, b, err_msg=field)
    assert plain.finished.all() and plain.length.max() < 12  # plies left over: skipped with a reader
    # ... and so does each reading opponent of play_each, in its own block.
    keys = jax.random.split(jax.random.PRNGKey(4), 2)
    each = jax.jit(lambda k: arena.play_each(env, RANDOM, None, [RANDOM, _reading(RANDOM)], [None, None], k,
                                             num_games=4, max_plies=9))(keys)
    single = jax.jit(lambda k: arena.play_games(env, RANDOM, None, RANDOM, None, k, num_games=4, max_plies=9))
    for j in range(2):
        np.testing.assert_array_equal(np.asarray(each.actions[j]), np.asarray(single(keys[j]).actions))
