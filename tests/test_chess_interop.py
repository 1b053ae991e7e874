"""Tests for azdb_jax.envs.chess_interop and chess_pgn against python-chess."""

import io
import xml.etree.ElementTree as ElementTree

import chess
import chess.pgn
import jax
import numpy as np
import pytest

from azdb_jax.envs import chess_interop
from azdb_jax.envs.chess import Chess
from azdb_jax.envs.chess_interop import (
    action_squares,
    action_to_uci,
    legal_uci_moves,
    state_from_fen,
    state_to_board,
    state_to_fen,
    states_from_fens,
    uci_to_action,
)
from azdb_jax.envs.chess_pgn import (
    game_result,
    game_to_pgn,
    pgn_string,
    position_svg,
    replay_actions,
    termination_reason,
)

ROUND_TRIP_FENS = [
    chess.STARTING_FEN,
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # white may take e.p.
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 3",  # black may take e.p.
    "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 37 61",  # castling subset, clocks, black to move
    "r3k2r/8/8/8/8/8/8/R3K2R w Qk - 0 1",
    "4k3/8/8/8/8/8/8/4K3 b - - 99 150",
    "8/1P4k1/8/8/8/8/6p1/2K5 b - - 5 80",
]
# Positions where every kind of move occurs, for both colours.
TRICKY_FENS = [
    "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 20",  # promotions (capturing too), O-O, O-O-O, e.p.
    "r3k2r/1P4P1/8/8/3pP3/8/1p4p1/R3K2R b KQkq e3 0 20",  # the same for Black
    "rn2k2r/1P6/8/8/8/8/6p1/R3K1NR b KQk - 0 9",  # b-pawn captures promote, partial rights
    "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",  # e.p. square given but the capture is pinned
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # both castlings, rook moves along the back rank
]


@pytest.fixture(scope="module")
def tricky_states():
    return jax.tree.map(np.asarray, states_from_fens(TRICKY_FENS))


def index(tree, i):
    return jax.tree.map(lambda leaf: leaf[i], tree)


# --------------------------------------------------------------------------- FEN


def test_fen_round_trips():
    states = jax.tree.map(np.asarray, states_from_fens(ROUND_TRIP_FENS))
    for i, fen in enumerate(ROUND_TRIP_FENS):
        state = index(states, i)
        assert state_to_fen(state) == fen == chess.Board(fen).fen()
        assert state_to_board(state) == chess.Board(fen)
        white = chess.Board(fen).turn == chess.WHITE
        assert int(state.current_player) == (0 if white else 1)  # White is player 0
        assert state._x.halfmove_count == chess.Board(fen).halfmove_clock


def test_loaded_state_has_no_history(tricky_states):
    state = index(tricky_states, 0)
    assert state._x.step_count == 0 and not state.terminated and not state.rewards.any()
    assert not state._x.board_history[1:].any() and state._x.board_history[0].any()
    assert not state._x.hash_history[1:].any() and state._x.hash_history[0].any()
    slots = state.observation[..., :112].reshape(8, 8, 8, 14)  # 8 history slots of 14 planes
    assert slots[:, :, 0, :12].any() and not slots[:, :, 1:, :12].any()  # no earlier boards


def test_loaded_start_position_observes_like_init():
    """Empty history slots look exactly like pgx's freshly initialised game."""
    loaded = state_from_fen(chess.STARTING_FEN)
    fresh = Chess().init(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(loaded.observation, fresh.observation)
    np.testing.assert_array_equal(loaded._x.hash_history, fresh._x.hash_history)
    np.testing.assert_array_equal(loaded.legal_action_mask, fresh.legal_action_mask)


def test_batch_matches_single_loads_and_does_not_recompile():
    batch = states_from_fens(ROUND_TRIP_FENS[:3])
    single = state_from_fen(ROUND_TRIP_FENS[1])
    compiled = chess_interop._build_batch_fn(16)._cache_size()
    states_from_fens(ROUND_TRIP_FENS[4:8])  # 4 positions: the same padded shape as 3
    state_from_fen(ROUND_TRIP_FENS[5])
    assert chess_interop._build_batch_fn(16)._cache_size() == compiled
    for a, b in zip(jax.tree.leaves(index(batch, 1)), jax.tree.leaves(single)):
        np.testing.assert_array_equal(a, b)


def test_unusual_but_playable_positions_load():
    nine_pawns = "8/p4p2/kpP2p2/qrp1bp2/rpP2p2/pP6/P3K3/8 w - - 0 1"
    crowded = "n1B4r/r1p2k2/BpPp3p/pP1PpBpP/P2bPpPb/1R1RbPb1/R1K1R1R1/1R3R2 w - - 0 1"
    for fen in (nine_pawns, crowded):
        assert not chess.Board(fen).is_valid()
        assert state_to_fen(state_from_fen(fen)) == fen


def test_stray_rights_and_en_passant_squares_are_dropped():
    rights = state_from_fen("4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1")
    assert state_to_fen(rights) == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    assert state_to_fen(state_from_fen("4k3/8/8/8/8/8/8/4K3 w - e6 0 1")) == "4k3/8/8/8/8/8/8/4K3 w - - 0 1"


@pytest.mark.parametrize(
    "fen,reason",
    [
        ("not a fen", "invalid FEN 'not a fen'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "invalid FEN"),
        ("8/8/8/8/8/8/8/4K3 w - - 0 1", "no black king"),
        ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "more than one king"),
        ("P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "pawns on the first or last rank"),
        ("4k3/8/8/8/8/8/4R3/3K4 w - - 0 1", "not to move is in check"),
    ],
)
def test_bad_fens_raise_with_the_fen_and_reason(fen, reason):
    with pytest.raises(ValueError, match=reason) as error:
        state_from_fen(fen)
    assert fen in str(error.value)


# --------------------------------------------------------------------------- actions <-> UCI


def test_known_action_ids():
    start = chess.Board()
    assert uci_to_action("e2e4", start) == 33 * 73 + 17 == 2426  # e2 = file 4 * 8 + rank 1
    after_e4 = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert uci_to_action("e7e5", after_e4) == 2426  # ranks are mirrored for Black
    castle = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert uci_to_action("e1g1", castle) == 2367 and uci_to_action("e1c1", castle) == 2364
    promote = chess.Board("8/1P4k1/8/8/8/8/8/2K5 w - - 0 1")
    assert uci_to_action("b7b8q", promote) == (8 + 6) * 73 + 16  # the plain one-step-up plane
    assert uci_to_action("b7b8r", promote) == 14 * 73 + 0
    assert uci_to_action("b7b8n", promote) == 14 * 73 + 6
    assert action_squares(2426, chess.BLACK) == (chess.E7, chess.E5)


def test_every_legal_move_round_trips(tricky_states):
    kinds = set()
    for i, fen in enumerate(TRICKY_FENS):
        board, state = chess.Board(fen), index(tricky_states, i)
        expected = sorted(move.uci() for move in board.legal_moves)
        assert sorted(legal_uci_moves(state)) == expected
        actions = set()
        for move in board.legal_moves:
            action = uci_to_action(move.uci(), board)
            assert action == uci_to_action(move.uci(), state)
            assert action_to_uci(action, board) == move.uci() == action_to_uci(action, state)
            actions.add(action)
            kinds.add((board.turn, "castle" if board.is_castling(move) else "ep" if board.is_en_passant(move)
                       else chess.piece_symbol(move.promotion) if move.promotion else "move"))
        assert actions == set(np.flatnonzero(state._x.legal_action_mask).tolist())
    for color in chess.COLORS:  # every move kind was exercised for both colours
        assert {(color, k) for k in ("castle", "ep", "q", "r", "b", "n", "move")} <= kinds


@pytest.mark.parametrize(
    "uci,match",
    [("e2e5", "not legal"), ("zz", "bad UCI"), ("e1g1", "not legal"), ("e7e8q", "not legal")],
)
def test_illegal_uci_moves_raise(uci, match):
    with pytest.raises(ValueError, match=match):
        uci_to_action(uci, chess.Board())
    with pytest.raises(ValueError, match=match):
        uci_to_action(uci, state_from_fen(chess.STARTING_FEN))


def test_promotion_without_piece_is_rejected(tricky_states):
    with pytest.raises(ValueError, match="promotion piece"):
        uci_to_action("g7g8", index(tricky_states, 0))
    with pytest.raises(ValueError, match="not legal"):
        uci_to_action("g7g8", chess.Board(TRICKY_FENS[0]))


@pytest.mark.parametrize(
    "action,match", [(0, "off the board"), (5000, "must be in"), (33 * 73 + 18, "not legal")]
)
def test_bad_action_ids_raise(action, match):
    with pytest.raises(ValueError, match=match):
        action_to_uci(action, chess.Board())


def test_batched_state_is_rejected(tricky_states):
    with pytest.raises(ValueError, match="single state"):
        legal_uci_moves(tricky_states)


# --------------------------------------------------------------------------- PGN and SVG


def actions_of(line: str, start: chess.Board | None = None) -> list[int]:
    board = chess.Board() if start is None else start.copy()
    actions = []
    for uci in line.split():
        actions.append(uci_to_action(uci, board))
        board.push_uci(uci)
    return actions


def test_pgn_parses_back_to_the_same_moves_and_result():
    line = "f2f3 e7e5 g2g4 d8h4"
    text = pgn_string(actions_of(line), white="player 0", black="player 3", headers={"Event": "demo"})
    game = chess.pgn.read_game(io.StringIO(text))
    assert [move.uci() for move in game.mainline_moves()] == line.split()
    assert game.headers["Result"] == "0-1" and game.headers["White"] == "player 0"
    assert game.headers["Event"] == "demo" and "FEN" not in game.headers
    assert game.end().board().is_checkmate()


def test_pgn_from_a_position_with_draw_by_repetition():
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 10 40")
    line = "e1d1 e8d8 d1e1 d8e8 e1d1 e8d8 d1e1 d8e8"
    game = game_to_pgn(actions_of(line, start), start=start.fen())
    assert game.headers["FEN"] == start.fen() and game.headers["SetUp"] == "1"
    assert game.headers["Result"] == "1/2-1/2"  # threefold: the env ends the game here
    parsed = chess.pgn.read_game(io.StringIO(str(game)))
    assert [m.uci() for m in parsed.mainline_moves()] == line.split()
    assert game_to_pgn(actions_of(line, start)[:4], start=start).headers["Result"] == "*"
    assert game_to_pgn([], start=start, result="1-0").headers["Result"] == "1-0"


@pytest.mark.parametrize(
    "fen,num_plies,reason,result",
    [
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", None, "stalemate", "1/2-1/2"),
        ("7k/8/8/8/8/8/8/K6N w - - 0 1", None, "insufficient_material", "1/2-1/2"),
        ("7k/8/8/8/8/8/8/K6R w - - 100 90", None, "fifty_moves", "1/2-1/2"),
        ("R6k/8/6K1/8/8/8/8/8 b - - 100 90", None, "checkmate", "1-0"),  # mate beats 50 moves
        (chess.STARTING_FEN, 512, "ply_cap", "1/2-1/2"),
        (chess.STARTING_FEN, 511, None, "*"),
    ],
)
def test_game_end_rules(fen, num_plies, reason, result):
    board = chess.Board(fen)
    assert termination_reason(board, num_plies=num_plies) == reason
    assert game_result(board, num_plies=num_plies) == result


def test_illegal_action_in_a_game_names_the_ply():
    actions = actions_of("e2e4 e7e5")
    with pytest.raises(ValueError, match="ply 3"):
        replay_actions(actions + [actions[0]])
    with pytest.raises(ValueError, match="result must be"):
        game_to_pgn(actions, result="white wins")


def test_svg_is_valid_xml_with_last_move():
    board = chess.Board()
    action = uci_to_action("e2e4", board)
    board.push_uci("e2e4")
    state = state_from_fen(board.fen())
    svg = position_svg(state, last_action=action)
    root = ElementTree.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "lastmove" in svg
    checked = position_svg(chess.Board("4k3/8/8/8/8/8/8/4R1K1 b - - 0 1"))
    assert "check" in checked
    ElementTree.fromstring(checked)
