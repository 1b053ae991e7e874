"""Tests of azdb_jax/evaluation/stockfish.py against python-chess and the data helpers.

Stockfish is installed on CI (Debian package ``stockfish``); without it these tests
skip, or fail with the install message when ``AZDB_REQUIRE_DATA=1``.
"""

import os

import chess
import numpy as np
import pytest

from azdb_jax import data
from azdb_jax.evaluation import stockfish
from azdb_jax.evaluation.team import SolverOutput


# stockfish_path: tests/conftest.py (skips with the install hint, fails on CI).


@pytest.fixture(scope="module")
def solver(stockfish_path):
    with stockfish.StockfishSolver(stockfish_path, nodes=10_000) as s:
        yield s


# A mate in one for White (Rd8#, back rank).
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"
# Black to move has only Kb8, then Rh8 mates: a mate score against the side to move.
LOST_FOR_BLACK = "k7/8/1K6/8/8/8/8/7R b - - 0 1"
# White has a queen and a rook more: won for White, lost for Black.
WHITE_UP = "4k3/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1"
BLACK_TO_MOVE_DOWN = "4k3/8/8/8/8/8/PPPPPPPP/RNBQKBNR b KQ - 0 1"


def test_solver_finds_mate_in_one(solver):
    board = chess.Board(MATE_IN_ONE)
    out = solver([board])
    assert isinstance(out, SolverOutput) and isinstance(out.values["stockfish"], np.ndarray)
    assert solver.columns == ("stockfish",) and solver.groups == {}
    move = chess.Move.from_uci(out.moves["stockfish"][0])
    assert board.is_legal(move)
    board.push(move)
    assert board.is_checkmate()  # python-chess confirms
    assert out.values["stockfish"][0] == 1.0


def test_value_sign(solver):
    out = solver([chess.Board(WHITE_UP), chess.Board(BLACK_TO_MOVE_DOWN), chess.Board(LOST_FOR_BLACK)])
    values = out.values["stockfish"]
    assert values.shape == (3,) and np.all(np.abs(values) <= 1.0)
    assert values[0] > 0.9 and values[1] < -0.9
    assert values[2] == -1.0  # mated next move: a mate score against the side to move


def test_score_to_value_by_hand():
    white = chess.WHITE
    assert stockfish.score_to_value(chess.engine.PovScore(chess.engine.Mate(3), white), white) == 1.0
    assert stockfish.score_to_value(chess.engine.PovScore(chess.engine.Mate(3), white), chess.BLACK) == -1.0
    assert stockfish.score_to_value(chess.engine.PovScore(chess.engine.Mate(-2), white), white) == -1.0
    assert stockfish.score_to_value(chess.engine.PovScore(chess.engine.Cp(0), white), white) == pytest.approx(0.0)
    cp = chess.engine.PovScore(chess.engine.Cp(150), white)
    wdl = chess.engine.Cp(150).wdl(model="sf", ply=30)
    expected = 2 * (wdl.wins + wdl.draws / 2) / 1000 - 1
    assert stockfish.score_to_value(cp, white) == pytest.approx(expected)
    assert stockfish.score_to_value(cp, chess.BLACK) == pytest.approx(-expected)


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "exactly one"),
    (dict(nodes=10, depth=3), "exactly one"),
    (dict(nodes=0), "nodes must be an int >= 1"),
    (dict(nodes=1.5), "nodes must be an int >= 1"),
    (dict(time=-1.0), "time must be a positive"),
    (dict(time=float("nan")), "time must be a positive"),
    (dict(depth=0), "depth must be an int >= 1"),
])
def test_limit_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        stockfish.make_limit(**kwargs)
    with pytest.raises(ValueError, match=message):
        stockfish.StockfishSolver("/nonexistent/stockfish", **kwargs)  # validated before the engine starts


def test_solver_option_validation(stockfish_path):
    with pytest.raises(ValueError, match="threads"):
        stockfish.StockfishSolver(stockfish_path, nodes=10, threads=0)
    with pytest.raises(ValueError, match="hash_mb"):
        stockfish.StockfishSolver(stockfish_path, nodes=10, hash_mb=0)


def test_not_found_message(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(stockfish.ENV_VAR, raising=False)
    missing = str(tmp_path / "no-stockfish")
    with pytest.raises(stockfish.StockfishNotFound) as info:
        stockfish.find_stockfish(missing)
    text = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert missing in text and "apt-get install stockfish" in text
    assert "--stockfish=PATH" in text and stockfish.ENV_VAR in text
    monkeypatch.setenv(stockfish.ENV_VAR, missing)
    with pytest.raises(stockfish.StockfishNotFound, match=stockfish.ENV_VAR):
        stockfish.find_stockfish()


def test_finds_debian_path_off_path(monkeypatch, stockfish_path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(stockfish.ENV_VAR, raising=False)
    if os.path.isfile(stockfish.DEBIAN_PATH):
        assert stockfish.find_stockfish() == stockfish.DEBIAN_PATH
    monkeypatch.setenv(stockfish.ENV_VAR, stockfish_path)
    assert stockfish.find_stockfish() == stockfish_path


def test_game_over_position_is_rejected(solver):
    mated = chess.Board(MATE_IN_ONE)
    mated.push_uci("d1d8")
    with pytest.raises(ValueError, match="already over"):
        solver([mated])


def test_player_elo_bounds_and_legal_moves(stockfish_path):
    with stockfish.StockfishPlayer(stockfish_path, nodes=2_000, elo=1350) as player:
        low, high = player.elo_range
        assert low <= 1350 <= high
        assert "elo=1350" in player.name
        board = chess.Board()
        for _ in range(12):
            if board.is_game_over():
                break
            move = player(board)
            assert board.is_legal(move)
            board.push(move)
        for bad in (low - 1, high + 1):
            with pytest.raises(ValueError, match="UCI_Elo range"):
                stockfish.StockfishPlayer(stockfish_path, nodes=100, elo=bad)
    with pytest.raises(ValueError, match="skill_level"):
        stockfish.StockfishPlayer(stockfish_path, nodes=100, skill_level=21)
    with pytest.raises(ValueError, match="not both"):
        stockfish.StockfishPlayer(stockfish_path, nodes=100, elo=1500, skill_level=3)
    with stockfish.StockfishPlayer(stockfish_path, nodes=1_000, skill_level=0, name="weak") as player:
        assert player.name == "weak"
        board = chess.Board(MATE_IN_ONE)
        assert board.is_legal(player(board))


def test_engine_death_is_reported(stockfish_path):
    solver = stockfish.StockfishSolver(stockfish_path, nodes=1_000)
    solver._engine.engine.transport.kill()  # simulate a crash of the engine process
    with pytest.raises(stockfish.StockfishError, match="died|failed"):
        solver([chess.Board()])
    solver.close()


def test_tiny_sts_and_lichess_run(solver, data_dir):
    sts = data.load_epd(data_dir / "sts" / "STS1-STS15_LAN_v6.epd", c0="scores")[:10]
    out = solver([record.board() for record in sts])
    scores = [data.sts_score(record, move) for record, move in zip(sts, out.moves["stockfish"])]
    assert all(0.0 <= s <= 1.0 for s in scores)
    # STS positions have a clear best move; Stockfish scores far above a random legal move.
    assert np.mean(scores) > 0.6
    puzzles = data.load_lichess_puzzles(data_dir / "puzzles" / "lichess_puzzles_kagi_1000_random.csv")[:10]
    out = solver([puzzle.board_at(0) for puzzle in puzzles])
    correct = [data.is_correct_solver_move(p, 0, m) for p, m in zip(puzzles, out.moves["stockfish"])]
    assert sum(correct) >= 8
