"""azdb_jax/rbc/synopsis.py: synopsis planes against python-chess and set arithmetic.

- the 104 planes carry the paper's numbering (Appendix A, Tables 9-10);
- one board's planes agree with python-chess computed square by square (attackers,
  pseudo-legal destinations, pieces);
- over a set, "definitely" planes are the squares where every board has the feature
  and "possibly" where some board has it (checked square by square), so definitely ⊆
  possibly, with equality for a single board; in games, the true board sits between them;
- context and previous planes are copied where they belong; unpacking is rank-major.
"""

import random

import chess
import numpy as np
import pytest
import reconchess
from reconchess import utilities
from reconchess.bots.random_bot import RandomBot

from azdb_jax.rbc import rules, synopsis
from azdb_jax.rbc.player import TrackingPlayer

CONTEXT = synopsis.Context(move_stage=True)


def _index(name):
    return synopsis.PLANES.index(name)


def _squares(plane):
    return {s for s in chess.SQUARES if int(plane) >> s & 1}


def _positions(count=40, seed=3):
    rng = random.Random(seed)
    board, out = chess.Board(), []
    while len(out) < count:
        if board.king(chess.WHITE) is None or board.king(chess.BLACK) is None or board.fullmove_number > 40:
            board = chess.Board()
        out.append(board.copy(stack=False))
        board = rules.play(board, rng.choice(rules.taken_moves(board)[1:] or [None]))
    return out


def test_planes_follow_the_papers_numbering():
    assert len(synopsis.PLANES) == synopsis.NUM_PLANES == 104 and len(set(synopsis.PLANES)) == 104
    for index, name in [(10, "stage"), (11, "not_own_piece"), (17, "own_king"), (18, "definitely_not_opposing"),
                        (24, "definitely_opposing_king"), (31, "possibly_opposing_king"),
                        (35, "last_opponent_capture"), (36, "definitely_attackable"),
                        (51, "definitely_attackable_by_opponent"), (65, "possibly_safe_opposing_king"),
                        (68, "known_squares"), (79, "all_own_pieces"), (80, "definitely_empty"),
                        (83, "definitely_may_castle"), (85, "own_queens_bishop_neighbours"),
                        (86, "previous_definitely_not_opposing"), (103, "previous_last_opponent_capture")]:
        assert synopsis.PLANES[index] == name


@pytest.mark.parametrize("color", [chess.WHITE, chess.BLACK])
def test_one_boards_planes_are_python_chess(color):
    for board in _positions():
        planes = synopsis.board_planes(board, color, CONTEXT)
        them = not color
        attacked = {s for s in chess.SQUARES if board.attackers(color, s)}
        doubly = {s for s in chess.SQUARES if len(board.attackers(color, s)) >= 2}
        by_them = {s for s in chess.SQUARES if board.attackers(them, s)}
        assert _squares(planes[_index("definitely_attackable")]) == attacked
        assert _squares(planes[_index("definitely_doubly_attackable")]) == doubly
        assert _squares(planes[_index("possibly_attackable_by_opponent")]) == by_them
        pawn_attacks = {s for s in chess.SQUARES if any(board.piece_type_at(a) == chess.PAWN
                                                         for a in board.attackers(color, s))}
        assert _squares(planes[_index("definitely_attackable_by_pawns")]) == pawn_attacks
        for kind, name in zip(chess.PIECE_TYPES, ("pawns", "knights", "bishops", "rooks", "queens", "king")):
            assert _squares(planes[_index(f"own_{name}")]) == set(board.pieces(kind, color))
            assert _squares(planes[_index(f"definitely_opposing_{name}")]) == set(board.pieces(kind, them))
        their_turn = board.copy(stack=False)
        if their_turn.turn != them:  # an en-passant square is theirs to use only on their move
            their_turn.turn, their_turn.ep_square = them, None
        taken = {rules.taken_move(their_turn, m) for m in utilities.move_actions(their_turn)}  # reconchess's way
        assert _squares(planes[_index("opponent_may_move_to")]) == {m.to_square for m in taken if m is not None}
        empty = {s for s in chess.SQUARES if board.piece_at(s) is None}
        assert _squares(planes[_index("definitely_empty")]) == empty
        assert _squares(planes[_index("known_squares")]) == set(chess.SQUARES)
        for definitely, possibly in synopsis.PAIRS:
            assert planes[definitely] == planes[possibly], synopsis.PLANES[definitely]


def test_definitely_and_possibly_over_a_set_are_every_and_some_board():
    boards = [b for b in _positions(60) if b.turn == chess.WHITE]
    # One player's set shares its own pieces: give every board White's pieces of the first.
    own = boards[0]
    same_own = []
    for board in boards:
        mixed = board.copy(stack=False)
        for square in chess.SQUARES:
            if own.color_at(square) == chess.WHITE or mixed.color_at(square) == chess.WHITE:
                mixed.set_piece_at(square, own.piece_at(square) if own.color_at(square) == chess.WHITE else None)
        same_own.append(mixed)
    planes = synopsis.synopsis(same_own, chess.WHITE, CONTEXT)
    for kind, name in zip(chess.PIECE_TYPES, ("pawns", "knights", "bishops", "rooks", "queens", "king")):
        every = {s for s in chess.SQUARES if all(b.piece_at(s) == chess.Piece(kind, chess.BLACK) for b in same_own)}
        some = {s for s in chess.SQUARES if any(b.piece_at(s) == chess.Piece(kind, chess.BLACK) for b in same_own)}
        assert _squares(planes[_index(f"definitely_opposing_{name}")]) == every
        assert _squares(planes[_index(f"possibly_opposing_{name}")]) == some
    known = {s for s in chess.SQUARES if len({b.piece_at(s) for b in same_own}) == 1}
    assert _squares(planes[_index("known_squares")]) == known
    for definitely, possibly in synopsis.PAIRS:
        assert planes[definitely] & ~planes[possibly] == 0, synopsis.PLANES[definitely]


def test_in_games_the_true_board_lies_between_definitely_and_possibly():
    checked = 0
    for seed in range(2):
        random.seed(seed)
        me = TrackingPlayer(seconds_per_move=0.02, max_boards=None, seed=seed)
        players = {seed == 0: me, seed != 0: RandomBot()}  # colour True is White
        game = reconchess.LocalGame(seconds_per_player=None)
        for color, player in players.items():
            player.handle_game_start(color, game.board.copy(), "opponent")
        game.start()
        while not game.is_over():
            if players[game.turn] is not me:
                reconchess.play_turn(game, players[game.turn], end_turn_last=True)
                continue
            sense_actions, move_actions = game.sense_actions(), game.move_actions()
            reconchess.notify_opponent_move_results(game, me)
            reconchess.play_sense(game, me, sense_actions, move_actions)
            boards = me.tracker.boards
            if len(boards) <= 200:
                planes = synopsis.synopsis(boards, me.color, CONTEXT)
                truth = synopsis.board_planes(game.board, me.color, CONTEXT)
                for definitely, possibly in synopsis.PAIRS:
                    assert planes[definitely] & ~planes[possibly] == 0
                    assert planes[definitely] & ~truth[definitely] == 0
                    assert truth[possibly] & ~planes[possibly] == 0
                checked += 1
            reconchess.play_move(game, me, move_actions, end_turn_last=True)
    assert checked >= 5


def test_context_previous_and_unpacking():
    board = chess.Board()
    context = synopsis.Context(move_stage=False, last_from=chess.E2, last_to=chess.E4, last_own_capture=None,
                               last_opponent_capture=chess.D5)
    first = synopsis.board_planes(board, chess.WHITE, context)
    assert first[_index("stage")] == 0 and _squares(first[_index("last_to")]) == {chess.E4}
    assert _squares(first[_index("last_opponent_capture")]) == {chess.D5} and first[_index("last_own_capture")] == 0
    assert not first[86:].any()
    second = synopsis.board_planes(board, chess.WHITE, CONTEXT, previous=first)
    assert second[_index("stage")] == chess.BB_ALL
    np.testing.assert_array_equal(second[86:], first[18:36])
    grid = synopsis.unpack(second)
    assert grid.shape == (104, 8, 8) and grid.dtype == bool
    assert grid[_index("own_pawns"), 1].all() and grid[_index("own_pawns")].sum() == 8
    assert grid[_index("own_king"), 0, 4] and grid[_index("dark_squares"), 0, 0]
    with pytest.raises(ValueError, match="at least one board"):
        synopsis.synopsis([], chess.WHITE, CONTEXT)
