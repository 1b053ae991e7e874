"""Tests of the UCI client (azdb_jax/evaluation/uci.py) and Fairy-Stockfish as Gardner solver
and opponent (azdb_jax/evaluation/fairy_stockfish.py).

Fairy-Stockfish is installed on CI (Debian package ``fairy-stockfish``); without it the
engine tests skip, or fail with the install message when ``AZDB_REQUIRE_DATA=1``.
"""

import os
import sys

import chess
import chess.engine
import numpy as np
import pytest

from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import fairy_stockfish, uci
from azdb_jax.evaluation.team import SolverOutput

MATE_IN_ONE = "k1K2/5/5/5/1R3 w - - 0 1"  # Rb1-a1#: Kc5 covers b4 and b5
MATED = "1k3/1Q3/1K3/5/5 b - - 0 1"


@pytest.fixture(scope="module")
def path(fsf_path) -> str:
    return fsf_path


@pytest.fixture(scope="module")
def solver(path):
    with fairy_stockfish.FairyStockfishSolver(path, depth=6) as s:
        yield s


# ------------------------------------------------------------------ parsing, by hand


def test_parse_info_lines():
    info = uci.parse_info("info depth 12 seldepth 15 multipv 2 score cp -37 upperbound nodes 5012 nps 100 "
                          "tbhits 0 time 3 pv e2e3 d4e3 d2e3")
    assert (info.depth, info.multipv, info.score, info.bound, info.nodes) == (12, 2, chess.engine.Cp(-37),
                                                                             "upperbound", 5012)
    assert info.pv == ("e2e3", "d4e3", "d2e3")
    mated = uci.parse_info("info depth 0 score mate 0")
    assert mated.score.mate() == 0 and mated.multipv == 1 and mated.pv == ()
    assert uci.parse_info("info string variant gardner files 5") is None
    with pytest.raises(uci.UciError, match="malformed info line"):
        uci.parse_info("info depth 3 score cp")
    with pytest.raises(uci.UciError, match="unknown score kind"):
        uci.parse_info("info depth 3 score wdl 1")


def test_parse_option_lines():
    parse = uci._parse_option  # pylint: disable=protected-access
    option = parse("option name Skill Level type spin default 20 min -20 max 20")
    assert (option.name, option.type, option.default, option.min, option.max) == ("Skill Level", "spin", "20", -20, 20)
    combo = parse("option name UCI_Variant type combo default chess var 3check var gardner")
    assert combo.choices == ("3check", "gardner") and combo.default == "chess"
    empty = parse("option name Debug Log File type string default ")
    assert empty.name == "Debug Log File" and empty.default is None


# ------------------------------------------------------------------ process failures (fake engines)


def _fake_engine(tmp_path, body: str) -> list:
    script = tmp_path / "fake_engine.py"
    script.write_text("import sys\n" + body)
    return [sys.executable, str(script)]


def test_engine_that_exits_is_reported_with_code_and_stderr(tmp_path):
    command = _fake_engine(tmp_path, "sys.stderr.write('no variants here\\n'); sys.exit(3)\n")
    with pytest.raises(uci.UciError, match=r"exited with code 3 .*no variants here"):
        uci.UciEngine(command, name="fake")


def test_engine_that_hangs_times_out_and_is_stopped(tmp_path):
    command = _fake_engine(tmp_path, "import time\ntime.sleep(60)\n")
    with pytest.raises(uci.UciError, match="did not answer within 1 s"):
        uci.UciEngine(command, name="sleeper", timeout=1.0)


def test_engine_dying_mid_search(tmp_path):
    body = ("for line in sys.stdin:\n"
            "    if line.strip() == 'uci': print('id name dier'); print('uciok', flush=True)\n"
            "    elif line.startswith('go'): print('info depth 1 score cp 3', flush=True); sys.exit(9)\n")
    with uci.UciEngine(_fake_engine(tmp_path, body)) as engine:
        assert engine.name == "dier"
        engine.position("4k/5/5/5/K4 w - - 0 1")
        with pytest.raises(uci.UciError, match="exited with code 9 while searching"):
            engine.go(depth=1)
        assert not engine.alive


def test_missing_binary(tmp_path):
    with pytest.raises(uci.UciError, match="could not start"):
        uci.UciEngine([str(tmp_path / "nothing-here")])


def test_not_found_message(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(fairy_stockfish.ENV_VAR, raising=False)
    missing = str(tmp_path / "no-fairy-stockfish")
    with pytest.raises(fairy_stockfish.FairyStockfishNotFound) as info:
        fairy_stockfish.find_fairy_stockfish(missing)
    text = str(info.value)
    assert missing in text and "apt-get install fairy-stockfish" in text and fairy_stockfish.ENV_VAR in text
    monkeypatch.setenv(fairy_stockfish.ENV_VAR, missing)
    with pytest.raises(fairy_stockfish.FairyStockfishNotFound, match=fairy_stockfish.ENV_VAR):
        fairy_stockfish.find_fairy_stockfish()


def test_finds_debian_path_off_path(monkeypatch, path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(fairy_stockfish.ENV_VAR, raising=False)
    if os.path.isfile(fairy_stockfish.DEBIAN_PATH):
        assert fairy_stockfish.find_fairy_stockfish() == fairy_stockfish.DEBIAN_PATH
    monkeypatch.setenv(fairy_stockfish.ENV_VAR, path)
    assert fairy_stockfish.find_fairy_stockfish() == path


# ------------------------------------------------------------------ the real engine


def test_options_are_checked(path):
    with pytest.raises(ValueError, match="Skill Level=30 is not an int in"):
        fairy_stockfish.FairyStockfish(path, skill_level=30)
    with pytest.raises(ValueError, match="UCI_Variant='gardener' is not one of"):
        fairy_stockfish.FairyStockfish(path, variant="gardener")
    with fairy_stockfish.FairyStockfish(path) as engine:
        with pytest.raises(ValueError, match="no UCI option 'Elo'"):
            engine.engine.set_option("Elo", 3)
        assert engine.name.startswith("Fairy-Stockfish")


def test_analyse_multipv_and_a_clean_shutdown(path):
    engine = fairy_stockfish.FairyStockfish(path)
    result = engine.analyse(GardnerBoard().fen(), limit=chess.engine.Limit(depth=6), multipv=3)
    assert result.bestmove == result.lines[0].pv[0] and [line.multipv for line in result.lines] == [1, 2, 3]
    assert len({line.pv[0] for line in result.lines}) == 3
    mated = engine.analyse(MATED, limit=chess.engine.Limit(depth=4))
    assert mated.bestmove is None and mated.lines[0].score.mate() == 0
    engine.close()
    assert not engine.engine.alive
    with pytest.raises(uci.UciError, match="exited"):
        engine.legal_moves(MATED)


def test_solver_finds_mate_and_values_by_side(solver):
    boards = [GardnerBoard(MATE_IN_ONE), GardnerBoard("4k/5/5/5/QK3 b - - 0 1")]
    out = solver(boards)
    assert isinstance(out, SolverOutput) and solver.columns == ("fairy_stockfish",) and solver.groups == {}
    after = boards[0].copy()
    after.push_uci(out.moves["fairy_stockfish"][0])
    assert after.is_checkmate()  # our env confirms the engine's mate
    values = out.values["fairy_stockfish"]
    assert values[0] == 1.0 and -1.0 <= values[1] < -0.5  # a queen down for Black
    expected = fairy_stockfish.score_value(chess.engine.Cp(0))
    assert expected == pytest.approx(0.0)


def test_solver_rejects_game_over_positions(solver):
    with pytest.raises(ValueError, match="already over \\(checkmate\\)"):
        solver([GardnerBoard(MATED)])
    with pytest.raises(ValueError, match="exactly one"):
        fairy_stockfish.FairyStockfishSolver(depth=3, nodes=10)


def test_solver_sends_the_move_stack(solver, path):
    """Two knight shuffles from the start: a third repetition is a draw for the engine too."""
    board = GardnerBoard()
    for uci_move in ["b1a3", "b5c3", "a3b1", "c3b5", "b1a3", "b5c3", "a3b1"]:
        board.push_uci(uci_move)
    with fairy_stockfish.FairyStockfish(path) as engine:
        fen, moves = board.root().fen(), [m.uci() for m in board.move_stack]
        assert engine.engine_fen(fen, moves) == board.fen()


def test_player_plays_legal_moves_with_a_skill_limit(path):
    with fairy_stockfish.FairyStockfishPlayer(path, nodes=500, skill_level=0) as player:
        assert "nodes=500" in player.name and "skill=0" in player.name
        board = GardnerBoard()
        for _ in range(16):
            if board.is_game_over():
                break
            move = player(board)
            assert board.is_legal(move)
            board.push(move)
        player.new_game()
        assert player(GardnerBoard(MATE_IN_ONE)) in GardnerBoard(MATE_IN_ONE).legal_moves
    with fairy_stockfish.FairyStockfishPlayer(path, depth=8) as strong:
        board = GardnerBoard(MATE_IN_ONE)
        board.push(strong(board))
        assert board.is_checkmate()


def test_value_is_lost_for_the_mated_side(solver):
    # Black: king a5 against Kb3 + Rb1; Kb5 is the only move, then Rc1 and Rc5# (mate in 2 against).
    out = solver([GardnerBoard("k4/5/1K3/5/1R3 b - - 0 1")])
    assert out.values["fairy_stockfish"][0] <= -0.9
    assert np.isfinite(out.values["fairy_stockfish"]).all()


# ------------------------------------------------------------------ the reference engine of a game's record


def test_reference_engines_follow_the_game_records():
    from azdb_jax.evaluation import reference_engines, stockfish  # pylint: disable=g-import-not-at-top

    gardner = reference_engines.reference_engine("gardner_chess")
    assert (gardner.key, gardner.name, gardner.find) == ("fairy_stockfish", "Fairy-Stockfish",
                                                         fairy_stockfish.find_fairy_stockfish)
    chess_engine = reference_engines.reference_engine("chess")
    assert (chess_engine.key, chess_engine.name, chess_engine.find) == ("stockfish", "Stockfish",
                                                                        stockfish.find_stockfish)
    with pytest.raises(ValueError, match="connect_four has no reference engine; games with one: chess, gardner_chess"):
        reference_engines.reference_engine("connect_four")


def test_the_reference_player_of_gardner_speaks_its_uci_variant(path):
    from azdb_jax.evaluation import reference_engines  # pylint: disable=g-import-not-at-top

    player = reference_engines.reference_engine("gardner_chess").player(path=path, nodes=50)
    try:
        assert player._engine.variant == "gardner"  # pylint: disable=protected-access
        assert player(GardnerBoard()) in GardnerBoard().legal_moves
    finally:
        player.close()
