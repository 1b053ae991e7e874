"""Tests of the Gardner chess env, FEN/UCI interop and GardnerBoard, against hand-checked
positions, pgx's own FEN routine and Fairy-Stockfish (the Gardner reference engine).

Fairy-Stockfish is installed on CI (Debian package ``fairy-stockfish``); without it the
engine tests skip, or fail with the install message when ``AZDB_REQUIRE_DATA=1``.
"""

import os

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from pgx import gardner_chess as pgx_gardner

from azdb_jax import games
from azdb_jax.envs import gardner_interop as gi
from azdb_jax.envs.gardner import MAX_TERMINATION_STEPS, GardnerChess, zobrist_hash
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import fairy_stockfish

START = gi.STARTING_FEN


@pytest.fixture(scope="module")
def engine():
    try:
        path = fairy_stockfish.find_fairy_stockfish()
    except fairy_stockfish.FairyStockfishNotFound as e:
        if os.environ.get("AZDB_REQUIRE_DATA") == "1":
            pytest.fail(str(e))
        pytest.skip(str(e))
    with fairy_stockfish.FairyStockfish(path) as fs:
        yield fs


@pytest.fixture(scope="module")
def env():
    return games.make("gardner_chess")


@pytest.fixture(scope="module")
def step(env):
    return jax.jit(env.step)


# --------------------------------------------------------------------------- FEN <-> state


def test_start_position_by_hand(env):
    state = gi.state_from_fen(START)
    # pgx squares are file * 5 + rank from the mover's side: a1 = 0, a2 = 1, b1 = 5, e5 = 24.
    board = np.asarray(state._board)
    assert board[0] == 4 and board[1] == 1 and board[5] == 2 and board[20] == 6  # Ra1, Pa2, Nb1, Ke1
    assert board[3] == -1 and board[4] == -4 and board[24] == -6  # pa4, ra5, ke5
    assert int(state.current_player) == 0 and int(state._turn) == 0
    # pgx's own start position: same board, legal moves and (true) hash as env.init.
    init = env.init(jax.random.PRNGKey(3))
    np.testing.assert_array_equal(board, np.asarray(init._board))
    np.testing.assert_array_equal(np.asarray(state.legal_action_mask), np.asarray(init.legal_action_mask))
    np.testing.assert_array_equal(np.asarray(state._zobrist_hash), np.asarray(init._zobrist_hash))
    assert gi.state_to_fen(state) == START == gi.state_to_fen(init)


def test_black_to_move_is_mirrored():
    state = gi.state_from_fen("4k/5/5/1p3/R3K b - - 7 31")
    board = np.asarray(state._board)
    # Black's view: ranks mirrored, Black's pieces positive. b2 -> file 1, rank 4 - 1 = 3.
    assert board[1 * 5 + 3] == 1 and board[4 * 5 + 0] == 6  # pb2, ke5 (rank 5 -> 0)
    assert board[0 * 5 + 4] == -4 and board[4 * 5 + 4] == -6  # Ra1 (rank 1 -> 4), Ke1
    assert int(state.current_player) == 1 and int(state._halfmove_count) == 7 and int(state._fullmove_count) == 31
    assert gi.state_to_fen(state) == "4k/5/5/1p3/R3K b - - 7 31"


@pytest.mark.parametrize("fen", [
    START,
    "4k/5/5/1p3/R3K b - - 7 31",
    "r1bqk/ppppp/n4/PPPPP/RNBQK w - - 1 2",
    "1k3/1Q3/1K3/5/5 b - - 0 1",  # checkmated
    "k4/2Q2/1K3/5/5 b - - 0 1",  # stalemate
])
def test_builder_agrees_with_pgx_from_fen(fen):
    ours = gi.state_from_fen(fen)
    theirs = pgx_gardner.State._from_fen(fen)  # pylint: disable=protected-access
    for field in ("_board", "_turn", "_halfmove_count", "_fullmove_count", "terminated"):
        np.testing.assert_array_equal(np.asarray(getattr(ours, field)), np.asarray(getattr(theirs, field)),
                                      err_msg=field)
    # pgx's routine always makes the side to move player 0; ours makes White player 0.
    mover_reward = lambda s: float(s.rewards[int(s.current_player)])  # noqa: E731
    assert mover_reward(ours) == mover_reward(theirs)
    assert int(ours.current_player) == int(ours._turn) and int(theirs.current_player) == 0
    if not bool(ours.terminated):
        np.testing.assert_array_equal(np.asarray(ours.legal_action_mask), np.asarray(theirs.legal_action_mask))
    # pgx's routine keeps its own start position (board and stale hash) in the history; ours has none.
    assert int((np.asarray(ours._hash_history) != 0).any(axis=1).sum()) == 1
    assert int((np.asarray(theirs._hash_history) != 0).any(axis=1).sum()) == 2
    assert int((np.asarray(theirs._board_history) != 0).any(axis=1).sum()) == 2
    assert int((np.asarray(ours._board_history) != 0).any(axis=1).sum()) == 1


def test_batch_equals_single_builds():
    fens = [START, "4k/5/5/1p3/R3K b - - 7 31", "1k3/1Q3/1K3/5/5 b - - 0 1"]
    batch = gi.states_from_fens(fens)
    assert batch._board.shape == (3, 25)
    for index, fen in enumerate(fens):
        single = gi.state_from_fen(fen)
        jax.tree.map(lambda a, b: np.testing.assert_array_equal(np.asarray(a)[index], np.asarray(b)), batch, single)


@pytest.mark.parametrize("fen, reason", [
    ("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0", "5 fields"),
    ("rnbqk/ppppp/5/PPPPP w - - 0 1", "4 ranks"),
    ("rnbqk/ppppp/6/PPPPP/RNBQK w - - 0 1", "bad empty-square count '6'"),
    ("rnbqk/pppppp/5/PPPPP/RNBQK w - - 0 1", "6 squares"),
    ("rnbqk/ppxpp/5/PPPPP/RNBQK w - - 0 1", "'x' is not a piece letter"),
    ("rnbqk/ppppp/5/PPPPP/RNBQQ w - - 0 1", "White has 0 kings"),
    ("rnbkk/ppppp/5/PPPPP/RNBQK w - - 0 1", "Black has 2 kings"),
    ("rnbqk/ppppp/5/PPPPP/RNBQK x - - 0 1", "side to move 'x'"),
    ("rnbqk/ppppp/5/PPPPP/RNBQK w KQkq - 0 1", "no castling"),
    ("rnbqk/ppppp/5/PPPPP/RNBQK w - a3 0 1", "never move two squares"),
    ("rnbqk/ppppp/5/PPPPP/RNBQK w - - -1 1", "half-move clock '-1'"),
    ("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 0", "move number '0'"),
    ("P3k/5/5/5/K4 w - - 0 1", "first or last rank"),
    ("4k/5/5/5/K3p w - - 0 1", "first or last rank"),
    ("kqqqq/qqqqq/1q3/5/K4 w - - 0 1", "at most 10"),
    ("4k/4R/5/5/K4 w - - 0 1", "side not to move is in check"),
])
def test_bad_fens_name_the_reason(fen, reason):
    with pytest.raises(ValueError, match="invalid Gardner FEN") as info:
        gi.states_from_fens([START, fen])
    assert reason in str(info.value) and fen in str(info.value)


def test_fen_without_clocks_defaults_to_zero_one():
    assert gi.state_to_fen(gi.state_from_fen("4k/5/5/1p3/R3K b - -")) == "4k/5/5/1p3/R3K b - - 0 1"


def test_board_text():
    assert gi.board_text(START).splitlines() == [
        "5 r n b q k", "4 p p p p p", "3 . . . . .", "2 P P P P P", "1 R N B Q K", "  a b c d e", "White to move"]


# --------------------------------------------------------------------------- actions <-> UCI


def test_start_moves_and_action_ids_by_hand():
    state = gi.state_from_fen(START)
    # pgx lists the start position's legal action ids itself (INIT_LEGAL_ACTION_MASK):
    # a2a3 = a2 (1) * 49 + plane 13 (one step up) = 62; b1a3 = 5 * 49 + 44 = 289; ...
    assert gi.legal_actions(state).tolist() == [62, 289, 293, 307, 552, 797, 1042]
    assert gi.legal_uci_moves(state) == ["a2a3", "b1a3", "b1c3", "b2b3", "c2c3", "d2d3", "e2e3"]
    for action, uci in zip([62, 289, 293], ["a2a3", "b1a3", "b1c3"]):
        assert gi.action_to_uci(action, state) == uci and gi.uci_to_action(uci, state) == action


def test_promotions_both_colours_by_hand():
    white = gi.state_from_fen("4k/P4/5/5/K4 w - - 0 1")
    # a4 is square 3: underpromotion planes 0/3/6 (rook/bishop/knight straight), queen = plane 13.
    assert {u: gi.uci_to_action(u, white) for u in ("a4a5r", "a4a5b", "a4a5n", "a4a5q")} == {
        "a4a5r": 147, "a4a5b": 150, "a4a5n": 153, "a4a5q": 160}
    black = gi.state_from_fen("4k/5/5/1p3/R3K b - - 0 1")
    # Black's b2 is mover-side square 1 * 5 + 3 = 8; capturing towards the a-file is plane % 3 == 2.
    assert gi.uci_to_action("b2b1r", black) == 8 * 49 + 0 and gi.uci_to_action("b2a1r", black) == 8 * 49 + 2
    assert gi.uci_to_action("b2a1n", black) == 8 * 49 + 8
    assert sorted(gi.legal_uci_moves(black)) == sorted(
        [f"b2{t}{p}" for t in ("b1", "a1") for p in "qrbn"] + ["e5e4", "e5d5", "e5d4"])
    for uci in gi.legal_uci_moves(black):
        assert gi.action_to_uci(gi.uci_to_action(uci, black), black) == uci


@pytest.mark.parametrize("uci, reason", [
    ("a4a5", "needs a promotion piece"),
    ("a1a2q", "is not a promotion"),
    ("a1a3", "is not legal"),
    ("a1f1", "not a square of the 5x5 board"),
    ("a4a5k", "bad UCI move"),
    ("e2", "bad UCI move"),
])
def test_bad_moves_name_the_reason(uci, reason):
    with pytest.raises(ValueError, match=reason):
        gi.uci_to_action(uci, gi.state_from_fen("4k/P4/5/5/K4 w - - 0 1"))


def test_action_to_uci_rejects_illegal_and_off_board():
    state = gi.state_from_fen(START)
    with pytest.raises(ValueError, match=r"action 13 \(a1a2\) is not legal"):
        gi.action_to_uci(13, state)
    with pytest.raises(ValueError, match="move off the board"):
        gi.action_to_uci(0, state)  # a1 has no underpromotion planes
    with pytest.raises(ValueError, match="must be in"):
        gi.action_to_uci(1225, state)


# --------------------------------------------------------------------------- the env's fixes


def test_hashes_match_fen_builds_where_pgx_does_not(step):
    """The initial hash and the hash after a queen promotion (pgx keeps a pawn there)."""
    raw = pgx_gardner.GardnerChess()
    raw_init = raw.init(jax.random.PRNGKey(0))
    assert not np.array_equal(np.asarray(raw_init._zobrist_hash), np.asarray(zobrist_hash(raw_init)))
    ours = GardnerChess().init(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(ours._zobrist_hash), np.asarray(zobrist_hash(ours)))

    before = gi.state_from_fen("4k/P4/5/5/K4 w - - 0 1")
    promoted = step(before, jnp.int32(160))  # a4a5q
    assert gi.state_to_fen(promoted) == "Q3k/5/5/5/K4 b - - 0 1"
    rebuilt = gi.state_from_fen("Q3k/5/5/5/K4 b - - 0 1")
    np.testing.assert_array_equal(np.asarray(promoted._zobrist_hash), np.asarray(rebuilt._zobrist_hash))
    raw_promoted = jax.jit(raw.step)(before, jnp.int32(160))
    assert not np.array_equal(np.asarray(raw_promoted._zobrist_hash), np.asarray(rebuilt._zobrist_hash))


def _play(board_or_fen, moves):
    board = GardnerBoard(board_or_fen)
    for uci in moves:
        board.push_uci(uci)
    return board


SHUFFLE = ["b1a3", "b5c3", "a3b1", "c3b5"]


def test_threefold_repetition_ends_the_game():
    board = _play(START, SHUFFLE)  # the start position, second time
    assert not board.is_game_over() and board.is_repetition(2)
    board = _play(START, SHUFFLE * 2)  # third time
    assert board.is_game_over() and board.termination() == "threefold_repetition" and board.result() == "1/2-1/2"
    assert np.asarray(board.state.rewards).tolist() == [0.0, 0.0]
    # Loaded from a FEN, the position counts from the load (no stale start position in history).
    board = _play(START, SHUFFLE)
    assert board.root().fen() == START and not board.is_repetition(3)


def test_fifty_move_rule_and_mate_on_the_hundredth_ply():
    quiet = _play("4k/5/5/5/R3K w - - 99 80", ["a1a2"])
    assert quiet.is_game_over() and quiet.termination() == "fifty_moves" and quiet.halfmove_clock == 100
    capture = _play("4k/5/5/r4/R3K w - - 99 80", ["a1a2"])
    assert not capture.is_game_over() and capture.halfmove_clock == 0
    mate = _play("4k/R4/5/5/1R2K w - - 99 80", ["b1b5"])  # Rb5#: Ra4 covers the fourth rank
    assert mate.is_checkmate() and mate.result() == "1-0"
    assert np.asarray(mate.state.rewards).tolist() == [1.0, -1.0]  # White (player 0) wins


def test_insufficient_material_and_stalemate():
    assert GardnerBoard("4k/5/5/5/KN3 w - - 0 1").termination() == "insufficient_material"
    assert GardnerBoard("4k/5/5/5/KB1b1 w - - 0 1").termination() == "insufficient_material"  # b1, d1: same colour
    assert not GardnerBoard("4k/5/5/5/KBb2 w - - 0 1").is_game_over()  # b1 and c1: opposite colours
    assert not GardnerBoard("4k/5/5/1P3/K4 w - - 0 1").is_game_over()
    stalemate = GardnerBoard("k4/2Q2/1K3/5/5 b - - 0 1")
    assert stalemate.is_stalemate() and stalemate.termination() == "stalemate" and stalemate.result() == "1/2-1/2"


def test_move_cap_is_a_draw(step):
    state = gi.state_from_fen("4k/5/5/5/R3K w - - 0 1")
    state = state.replace(_step_count=jnp.int32(MAX_TERMINATION_STEPS - 1))
    after = step(state, jnp.int32(gi.uci_to_action("a1a2", state)))
    assert bool(after.terminated) and np.asarray(after.rewards).tolist() == [0.0, 0.0]
    before_cap = step(state.replace(_step_count=jnp.int32(MAX_TERMINATION_STEPS - 2)),
                      jnp.int32(gi.uci_to_action("a1a2", state)))
    assert not bool(before_cap.terminated)


# --------------------------------------------------------------------------- GardnerBoard


def test_gardner_board_api():
    board = GardnerBoard()
    assert board.turn == chess.WHITE and board.ply() == 0 and len(board.legal_moves) == 7
    move = board.push_uci("e2e3")
    assert move == chess.Move.from_uci("e2e3") and board.fen() == "rnbqk/ppppp/4P/PPPP1/RNBQK b - - 0 1"
    assert board.turn == chess.BLACK and board.ply() == 1 and board.move_stack == [move]
    copy = board.copy()
    copy.push_uci("d4e3")
    assert board.fen() != copy.fen() and copy.copy(stack=False).move_stack == []
    assert board.pop() == move and board.fen() == START
    with pytest.raises(chess.IllegalMoveError):
        board.parse_uci("e2e4")
    with pytest.raises(chess.InvalidMoveError):
        board.parse_uci("zz")
    mated = GardnerBoard("1k3/1Q3/1K3/5/5 b - - 0 1")
    assert mated.is_checkmate() and mated.is_check() and mated.result() == "1-0"
    with pytest.raises(ValueError, match="is not legal|illegal"):
        mated.push_uci("b5a5")


def test_san_by_hand():
    board = GardnerBoard()
    assert [board.san(chess.Move.from_uci(u)) for u in ("b1c3", "b1a3", "e2e3")] == ["Nc3", "Na3", "e3"]
    board.push_uci("b2b3")
    assert board.san(chess.Move.from_uci("a4b3")) == "axb3" and board.san(chess.Move.from_uci("c4b3")) == "cxb3"
    rooks = GardnerBoard("R3R/5/n1k2/5/R3K w - - 0 1")  # a5 and e5 reach c5; a5 and a1 reach a3
    assert rooks.san(chess.Move.from_uci("a5c5")) == "Rac5+" and rooks.san(chess.Move.from_uci("a1a3")) == "R1xa3+"
    assert rooks.san(chess.Move.from_uci("e5e4")) == "Re4"
    promotion = GardnerBoard("4k/P4/5/5/K4 w - - 0 1")
    assert promotion.san(chess.Move.from_uci("a4a5q")) == "a5=Q+"
    assert promotion.san(chess.Move.from_uci("a4a5n")) == "a5=N"
    assert GardnerBoard("1k3/5/1K3/Q4/5 w - - 0 1").san(chess.Move.from_uci("a2a3")) == "Qa3"
    assert GardnerBoard("1k3/5/1K3/3Q1/5 w - - 0 1").san(chess.Move.from_uci("d2b4")) == "Qb4#"
    with pytest.raises(chess.IllegalMoveError):
        GardnerBoard().san(chess.Move.from_uci("e2e4"))


def test_san_agrees_with_python_chess_on_the_same_pieces():
    """python-chess writes SAN on an 8x8 board holding the same pieces on a1..e5: piece
    letters, captures and disambiguation must agree (the moves to a square of the 5x5
    corner are the same on both boards), a check must be a check on both, and a mate on
    the big board a mate here (the small board only takes escape squares away)."""
    rng = np.random.default_rng(7)
    checked = checks = 0
    for _ in range(6):
        board = GardnerBoard()
        while not board.is_game_over() and board.ply() < 40:
            big = chess.Board(None)
            big.set_piece_map(board.piece_map())
            big.turn = board.turn
            for move in board.legal_moves:
                if move.promotion:
                    continue
                ours, theirs = board.san(move), big.san(move)
                assert ours.rstrip("+#") == theirs.rstrip("+#"), (board.fen(), move)
                assert (ours[-1] in "+#") == (theirs[-1] in "+#"), (board.fen(), move)
                assert not theirs.endswith("#") or ours.endswith("#"), (board.fen(), move)
                checked += 1
                checks += ours[-1] in "+#"
            moves = board.legal_moves
            board.push(moves[rng.integers(len(moves))])
    assert checked > 500 and checks > 10, (checked, checks)


# --------------------------------------------------------------------------- Fairy-Stockfish


def test_engine_sees_the_same_moves_and_plays_on_where_we_end(engine):
    assert sorted(engine.legal_moves(START)) == sorted(gi.legal_uci_moves(gi.state_from_fen(START)))
    assert engine.legal_moves("4k/P4/5/5/K4 w - - 0 1")[:4] == ["a4a5q", "a4a5r", "a4a5b", "a4a5n"]
    # Our draw rules: the engine (like any UCI engine) adjudicates none of them.
    assert engine.legal_moves(START, SHUFFLE * 2)  # threefold: we stop, it plays on
    assert engine.legal_moves("4k/5/5/5/R3K w - - 99 80", ["a1a2"])  # fifty moves
    assert engine.legal_moves("4k/5/5/5/KN3 w - - 0 1")  # insufficient material
    assert engine.legal_moves("k4/2Q2/1K3/5/5 b - - 0 1") == []  # stalemate: no moves ...
    assert engine.checkers("k4/2Q2/1K3/5/5 b - - 0 1") == []  # ... and no check
    assert engine.checkers("1k3/1Q3/1K3/5/5 b - - 0 1") == ["b4"]  # checkmate


def test_small_crosscheck_against_fairy_stockfish(engine):
    from azdb_jax.evaluation.gardner_crosscheck import crosscheck  # pylint: disable=g-import-not-at-top

    report = crosscheck(engine, positions=400, seed=1)
    assert report["positions"] >= 400
    assert report["unexplained_mismatches"] == 0, report["mismatches"][:5]
    assert report["counts"]["moves_checked"] > 3000 and report["counts"]["fen_builds_checked"] == report["positions"]
