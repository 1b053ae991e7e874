"""azdb_jax/rbc/rules.py: RBC's move rules against reconchess itself.

- ``taken_moves`` (the opponent's possible moves, enumerated without going through
  every request) is exactly ``{revise_move(b, m) : m in reconchess's move_actions(b)} ∪
  {pass}`` on random RBC positions and on hand-built ones with castles, en passant and
  promotions;
- ``taken_move`` / ``capture_square`` give what ``reconchess.LocalGame.move`` plays and
  reports, on hand-written cases whose expected results are written out here;
- ``touched_squares`` covers every square a move changes (the lazy tracking relies on it);
- the sense window is ``LocalGame.sense``'s.
"""

import random

import chess
import pytest
import reconchess
from reconchess import utilities

from azdb_jax.rbc import rules


def _brute_force(board):
    return {rules.taken_move(board, m) for m in utilities.move_actions(board)} | {None}


def _random_positions(num_games=12, plies=60, seed=0):
    """Boards met in random RBC play (any taken move, passes and castles included)."""
    rng = random.Random(seed)
    out = []
    for _ in range(num_games):
        board = chess.Board()
        for _ in range(plies):
            if board.king(chess.WHITE) is None or board.king(chess.BLACK) is None:
                break
            out.append(board.copy(stack=False))
            board = rules.play(board, rng.choice(sorted(rules.taken_moves(board), key=lambda m: m.uci() if m else "")))
    return out


HAND_BUILT = [
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # both sides may castle
    "r3k2r/8/8/8/8/8/5q2/R3K2R w KQkq - 0 1",  # castling through attacked squares (allowed in RBC)
    "r3k2r/8/8/8/8/8/8/R2bKb1R w KQkq - 0 1",  # castles blocked by opponent pieces
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",  # en passant
    "1n2k3/P7/8/8/8/8/6p1/4K2R b K - 0 1",  # promotions with and without captures
    "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",  # a pinned piece (may move in RBC)
    "4k3/8/8/8/4p3/8/4P3/4K3 w - - 0 1",  # a blocked double push
]


def test_taken_moves_is_the_brute_force_over_move_actions():
    boards = _random_positions() + [chess.Board(fen) for fen in HAND_BUILT]
    assert len(boards) > 500
    for board in boards:
        fast = rules.taken_moves(board)
        assert len(fast) == len(set(fast)), board.fen()
        assert set(fast) == _brute_force(board), board.fen()


def test_touched_squares_cover_every_square_a_move_changes():
    for board in _random_positions(num_games=6) + [chess.Board(fen) for fen in HAND_BUILT]:
        for move in rules.taken_moves(board):
            child = rules.play(board, move)
            changed = {s for s in chess.SQUARES if board.piece_at(s) != child.piece_at(s)}
            assert changed <= set(chess.SquareSet(rules.touched_squares(board, move))), (board.fen(), move)


def test_castling_through_check_is_a_taken_move_and_a_blocked_castle_is_not():
    through = chess.Board(HAND_BUILT[1])
    assert chess.Move.from_uci("e1g1") in rules.taken_moves(through)
    assert chess.Move.from_uci("e1g1") not in list(through.generate_pseudo_legal_moves())  # python-chess refuses it
    blocked = chess.Board(HAND_BUILT[2])
    assert not any(m is not None and blocked.is_castling(m) for m in rules.taken_moves(blocked))


# (FEN, requested move, expected taken move or None, expected capture square name or None)
CASES = [
    ("k7/8/8/p7/8/8/8/R3K3 w - - 0 1", "a1a8", "a1a5", "a5"),  # a rook slide stops at the first piece
    ("k7/8/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", "a1a8", "a8"),  # the king captured
    ("4k3/8/8/8/4p3/8/4P3/4K3 w - - 0 1", "e2e4", "e2e3", None),  # a double push stops short
    ("4k3/8/8/8/8/4p3/4P3/4K3 w - - 0 1", "e2e3", None, None),  # a blocked push passes
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "e2d3", None, None),  # a pawn capture onto an empty square passes
    ("4k3/8/8/8/8/8/5r2/4K2R w K - 0 1", "e1g1", "e1g1", None),  # castling through check
    ("4k3/8/8/8/8/8/8/4Kb1R w K - 0 1", "e1g1", None, None),  # castling blocked by an opponent piece
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "e5d6", "d5"),  # en passant: the pawn's square
    ("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8", "a7a8q", None),  # promotion to a queen by default
    ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8n", "a7b8n", "b8"),  # an underpromotion capture as asked
    ("4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1", "e2d3", "e2d3", None),  # a pinned bishop moves
    ("4k3/8/8/8/2n5/8/8/Q3K3 w - - 0 1", "a1h8", "a1h8", None),  # a queen's diagonal past a knight beside it
    ("4k3/8/8/8/3n4/8/8/Q3K3 w - - 0 1", "a1h8", "a1d4", "d4"),  # ... and stopped by a knight
    ("r3k3/8/8/8/8/8/8/4K3 b q - 0 1", "e8c8", "e8c8", None),  # Black castles queenside
]


@pytest.mark.parametrize("fen, requested, taken, capture", CASES)
def test_taken_move_and_capture_are_local_games(fen, requested, taken, capture):
    request = chess.Move.from_uci(requested)
    game = reconchess.LocalGame(seconds_per_player=None)
    game.board = chess.Board(fen)
    game.turn = game.board.turn
    board = chess.Board(fen)
    assert utilities.add_pawn_queen_promotion(board, request) in game.move_actions()  # as LocalGame checks it
    _, game_taken, game_capture = game.move(request)
    expected_taken = chess.Move.from_uci(taken) if taken else None
    expected_capture = chess.parse_square(capture) if capture else None
    assert (game_taken, game_capture) == (expected_taken, expected_capture)
    ours = rules.taken_move(board, request)
    assert (ours, rules.capture_square(board, ours)) == (expected_taken, expected_capture)
    assert rules.board_key(rules.play(board, ours)) == rules.board_key(game.board)


@pytest.mark.parametrize("square", [chess.A1, chess.E4, chess.H8, chess.B7, chess.H3])
def test_sense_window_is_local_games(square):
    game = reconchess.LocalGame(seconds_per_player=None)
    assert rules.sense_window(square) == [s for s, _ in game.sense(square)]


def test_board_key_ignores_an_en_passant_square_no_pawn_can_use():
    board = chess.Board()
    board.push_uci("e2e4")  # python-chess keeps e3 although no black pawn can take there
    same = chess.Board(board.fen(en_passant="legal"))
    assert board.ep_square is not None and same.ep_square is None
    assert rules.board_key(board) == rules.board_key(same)
    usable = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert rules.board_key(usable) != rules.board_key(chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - - 0 1"))
