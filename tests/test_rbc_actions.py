"""Action indices: every request reconchess offers has its own index and comes back."""

import random

import chess
import pytest
from reconchess.utilities import add_pawn_queen_promotion

from azdb_jax.rbc import actions, rules


def test_every_request_of_random_positions_round_trips_to_a_distinct_index():
    rng = random.Random(0)
    under = set()
    boards = [chess.Board(), chess.Board("8/PPPPPPPP/8/2k5/5K2/8/pppppppp/8 w - - 0 1"),
              chess.Board("8/PPPPPPPP/8/2k5/5K2/8/pppppppp/8 b - - 0 1")]
    board = chess.Board()
    for _ in range(60):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
        boards.append(board.copy())
    for b in boards:
        seen = {}
        for request in rules.move_actions(b) + [None]:
            # a pawn request onto the last rank without a piece is LocalGame's queen promotion
            move = None if request is None else add_pawn_queen_promotion(b, request)
            i = actions.move_index(request)
            assert 0 <= i < actions.NUM_MOVES
            assert actions.index_move(i, b) == move
            assert seen.setdefault(i, move) == move  # no two requests of a board share an index
            if move is not None and move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK):
                under.add(i)
        assert seen[actions.PASS] is None
    # every under-promotion of both colours (8 pushes + 14 captures a side, 3 kinds) has its own index
    assert len(under) == 2 * 22 * 3 and min(under) == 4096 + 1  # a7a8n: pair (file a, straight)
    assert max(under) == 4096 + 2 * 48 + 46 and actions.NUM_MOVES == 4241  # h2h1r, the last pair of rooks


def test_senses_cover_the_board_with_the_interior_windows():
    assert actions.NUM_SENSES == 36
    for square in chess.SQUARES:
        window = set(rules.sense_window(square))
        interior = actions.sense_square(actions.sense_index(square))
        assert window <= set(rules.sense_window(interior))
    assert [actions.sense_index(s) for s in rules.INTERIOR_SQUARES] == list(range(36))
    assert actions.sense_index(chess.A1) == actions.sense_index(chess.B2)
    with pytest.raises(ValueError, match="sense index 36"):
        actions.sense_square(36)
    with pytest.raises(ValueError, match="move index"):
        actions.index_move(actions.NUM_MOVES)
