"""Tests for azdb_jax.envs.chess: the pgx traps it fixes, its limits, hand-checked moves.

Every expectation is checked against python-chess (FIDE rules, ``fen()`` with the
default "legal" en-passant field) or written out by hand.
"""

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest

from azdb_jax.envs.chess import MAX_TERMINATION_STEPS, Chess, State, zobrist_hash
from azdb_jax.envs.chess_interop import (
    legal_uci_moves,
    required_max_pieces,
    state_from_fen,
    state_to_fen,
    uci_to_action,
)

KNIGHT_DANCE = "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8"  # start position again after plies 4, 8
# The position after 1.e4 (no en-passant capture possible) recurs after plies 5 and 9.
E4_DANCE = "e2e4 b8c6 g1f3 c6b8 f3g1 b8c6 g1f3 c6b8 f3g1"
# A composed position with 218 legal moves for White (more than pgx's 200-move buffer).
MOST_MOVES_FEN = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"
# Paper Penrose position 30: White has 19 pieces (python-chess: too many white pieces).
CROWDED_FEN = "n1B4r/r1p2k2/BpPp3p/pP1PpBpP/P2bPpPb/1R1RbPb1/R1K1R1R1/1R3R2 w - - 0 1"

_STEPS: dict = {}


def jitted_step(env) -> callable:
    """One compiled single-state step per env configuration for the whole module."""
    key = (type(env), getattr(env, "max_pieces", None))
    if key not in _STEPS:
        _STEPS[key] = jax.jit(env.step)
    return _STEPS[key]


def play(env, state: State, line: str, board: chess.Board | None = None):
    """Step ``state`` through UCI moves; returns states after each ply and the python-chess board."""
    board = chess.Board() if board is None else board
    states = []
    for uci in line.split():
        state = jitted_step(env)(state, jnp.int32(uci_to_action(uci, board)))
        board.push_uci(uci)
        states.append(state)
    return states, board


def repetition_flags(env, line: str) -> tuple[list[bool], list[bool]]:
    """(env terminated, python-chess is_repetition(3)) after every ply of ``line`` from the start."""
    states, board = play(env, env.init(jax.random.PRNGKey(0)), line)
    replay = chess.Board()
    expected = []
    for uci in line.split():
        replay.push_uci(uci)
        expected.append(replay.is_repetition(3))
    return [bool(s.terminated) for s in states], expected


# --------------------------------------------------------------------------- the two traps


@pytest.mark.parametrize("line", [KNIGHT_DANCE, E4_DANCE])
def test_threefold_repetition_ends_on_the_right_ply(line):
    terminated, expected = repetition_flags(Chess(), line)
    assert terminated == expected
    assert terminated[-1] and not any(terminated[:-1])


@pytest.mark.parametrize("line", [KNIGHT_DANCE, E4_DANCE])
def test_plain_pgx_still_has_the_traps(line):
    """pgx 2.6 misses both repetitions: if this fails, pgx fixed them (revisit Chess)."""
    terminated, expected = repetition_flags(pgx.make("chess"), line)
    assert expected[-1] and not terminated[-1]


def test_initial_hash_history_is_the_true_hash():
    state = Chess().init(jax.random.PRNGKey(3))
    loaded = state_from_fen(chess.STARTING_FEN)
    np.testing.assert_array_equal(state._x.hash_history[0], zobrist_hash(state._x))
    np.testing.assert_array_equal(state._x.hash_history[0], loaded._x.hash_history[0])


def test_en_passant_square_kept_only_when_a_capture_is_legal():
    env = Chess()
    states, board = play(env, env.init(jax.random.PRNGKey(0)), "e2e4")
    assert int(states[-1]._x.en_passant) == -1  # no black pawn can take on e3
    expected = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert state_to_fen(states[-1]) == board.fen() == expected
    states, board = play(env, states[-1], "g8f6 e4e5 d7d5", board)
    expected = "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"
    assert state_to_fen(states[-1]) == board.fen() == expected
    assert "e5d6" in legal_uci_moves(states[-1])
    states, board = play(env, states[-1], "e5d6", board)  # the d5 pawn disappears
    expected = "rnbqkb1r/ppp1pppp/3P1n2/8/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3"
    assert state_to_fen(states[-1]) == board.fen() == expected


def test_en_passant_square_dropped_when_the_capture_is_pinned():
    start = "8/2p5/8/KP5r/8/8/8/7k b - - 0 1"  # bxc6 would expose the king on a5 to the rook
    states, board = play(Chess(), state_from_fen(start), "c7c5", chess.Board(start))
    assert "b5c6" not in legal_uci_moves(states[-1])
    assert state_to_fen(states[-1]) == board.fen() == "8/8/8/KPp4r/8/8/8/7k w - - 0 2"


def test_observation_sees_the_corrected_repetition():
    """Repetition planes (channel 13: seen before) of the observation use the fixed hashes."""
    env = Chess()
    states, _ = play(env, env.init(jax.random.PRNGKey(0)), E4_DANCE)
    observation = np.asarray(states[4].observation)  # after ply 5: the post-1.e4 position again
    assert observation[..., 13].all() and not observation[..., 12].any()


# --------------------------------------------------------------------------- limits


def test_more_than_16_pieces_needs_max_pieces():
    board = chess.Board(CROWDED_FEN)
    expected = sorted(move.uci() for move in board.legal_moves)
    assert required_max_pieces([CROWDED_FEN]) == 32
    assert sorted(legal_uci_moves(state_from_fen(CROWDED_FEN))) == expected  # auto: 32
    default = legal_uci_moves(state_from_fen(CROWDED_FEN, max_pieces=16))
    assert len(expected) == 40 and len(default) == 36  # pgx sees 16 of White's 19 pieces
    assert set(default) < set(expected)


def test_stepping_a_crowded_position_stays_exact_with_max_pieces_32():
    env = Chess(max_pieces=32)
    board = chess.Board(CROWDED_FEN)
    states, board = play(env, state_from_fen(CROWDED_FEN), "b3b4 h8g8 b4b3 g8h8", board)
    assert sorted(legal_uci_moves(states[-1])) == sorted(move.uci() for move in board.legal_moves)
    assert state_to_fen(states[-1]) == board.fen()


def test_more_than_200_moves_needs_max_pieces():
    board = chess.Board(MOST_MOVES_FEN)
    assert board.legal_moves.count() == 218
    assert required_max_pieces([board]) == 32
    assert len(legal_uci_moves(state_from_fen(MOST_MOVES_FEN, max_pieces=16))) <= 200
    exact = legal_uci_moves(state_from_fen(MOST_MOVES_FEN, max_pieces=32))
    assert sorted(exact) == sorted(move.uci() for move in board.legal_moves)


def test_ply_cap_is_a_draw_after_512_plies():
    env = Chess()
    state = env.init(jax.random.PRNGKey(0))
    state = state.replace(_x=state._x._replace(step_count=jnp.int32(MAX_TERMINATION_STEPS - 1)))
    after = jitted_step(env)(state, jnp.int32(uci_to_action("e2e4", chess.Board())))
    assert bool(after.terminated) and not np.asarray(after.rewards).any()
    assert not chess.Board(state_to_fen(after)).is_game_over()  # python-chess plays on


def test_max_pieces_is_validated():
    with pytest.raises(ValueError, match="max_pieces"):
        Chess(max_pieces=8)


# --------------------------------------------------------------------------- hand-checked moves


def test_castling_both_sides_both_colours():
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    states, board = play(Chess(), state_from_fen(fen), "e1g1 e8c8", chess.Board(fen))
    assert state_to_fen(states[0]) == "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1"
    assert state_to_fen(states[1]) == board.fen() == "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2"
    states, board = play(Chess(), state_from_fen(fen), "e1c1 e8g8", chess.Board(fen))
    assert state_to_fen(states[1]) == board.fen() == "r4rk1/8/8/8/8/8/8/2KR3R w - - 2 2"


@pytest.mark.parametrize(
    "fen,castles",
    [
        ("r3k2r/8/8/8/8/7b/8/R3K2R w KQkq - 0 1", {"e1c1"}),  # f1 attacked: no O-O
        ("r3k2r/8/8/8/4b3/8/8/R3K2R w KQkq - 0 1", {"e1c1", "e1g1"}),  # b1, h1 attacked: fine
        ("r3k2r/8/8/8/8/3n4/8/R3K2R w KQkq - 0 1", set()),  # in check
        ("r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1", set()),  # blocked
        ("r3k2r/8/8/2B5/8/8/8/4K3 b kq - 0 1", {"e8c8"}),  # f8 attacked: no O-O
    ],
)
def test_castling_rules(fen, castles):
    moves = legal_uci_moves(state_from_fen(fen))
    assert sorted(moves) == sorted(move.uci() for move in chess.Board(fen).legal_moves)
    assert {m for m in moves if m in ("e1c1", "e1g1", "e8c8", "e8g8")} == castles


def test_rook_capture_removes_castling_right():
    fen = "r3k2r/8/8/8/8/8/6b1/R3K2R b KQkq - 0 1"
    states, board = play(Chess(), state_from_fen(fen), "g2h1", chess.Board(fen))
    assert state_to_fen(states[0]) == board.fen() == "r3k2r/8/8/8/8/8/8/R3K2b w Qkq - 0 2"


def test_promotions_and_underpromotions_both_colours():
    fen = "r7/1P6/7k/8/8/2K5/6p1/8 w - - 0 1"
    states, board = play(Chess(), state_from_fen(fen), "b7a8n g2g1r", chess.Board(fen))
    assert state_to_fen(states[0]) == "N7/8/7k/8/8/2K5/6p1/8 b - - 0 1"
    assert state_to_fen(states[1]) == board.fen() == "N7/8/7k/8/8/2K5/8/6r1 w - - 0 2"
    states, _ = play(Chess(), state_from_fen(fen), "b7b8q g2g1b", chess.Board(fen))
    assert state_to_fen(states[1]) == "rQ6/8/7k/8/8/2K5/8/6b1 w - - 0 2"


def test_checkmate_rewards_winner():
    env = Chess()
    states, board = play(env, env.init(jax.random.PRNGKey(1)), "f2f3 e7e5 g2g4 d8h4")
    mated = states[-1]
    assert board.is_checkmate() and bool(mated.terminated)
    loser = int(mated.current_player)  # White, to move and mated
    assert np.asarray(mated.rewards)[loser] == -1 and np.asarray(mated.rewards)[1 - loser] == 1


def test_drop_in_for_pgx_chess():
    """Same State type, shapes and initial observation as pgx.make('chess')."""
    ours, theirs = Chess(), pgx.make("chess")
    a, b = ours.init(jax.random.PRNGKey(5)), theirs.init(jax.random.PRNGKey(5))
    assert type(a) is type(b) and ours.id == theirs.id and ours.num_actions == 4672
    assert jax.tree.map(jnp.shape, a) == jax.tree.map(jnp.shape, b)
    np.testing.assert_array_equal(a.observation, b.observation)
    np.testing.assert_array_equal(a.current_player, b.current_player)
