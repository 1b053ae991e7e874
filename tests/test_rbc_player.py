"""azdb_jax/rbc/{sensing,player,gauntlet}.py and experiments/rbc_gauntlet.py.

- the expected remaining set size of a sense is Σ n_k² / N on hand-counted partitions,
  and the chosen sense separates boards that differ;
- the player captures the king when a possible board allows it, does not leave its own
  king capturable when a move avoids it, and attacks a known king when it safely can;
- a gauntlet writes its report and reconchess GameHistory files that load back;
- the script refuses bad options in one line naming them, and TroutBot (Stockfish)
  plays when Stockfish is installed (skipped with the install hint otherwise).
"""

import json
import pathlib
import random
import subprocess
import sys

import chess
import numpy as np
import pytest
import reconchess

from azdb_jax.rbc import gauntlet, rules, sensing, tracking
from azdb_jax.rbc.player import TrackingPlayer

REPO = pathlib.Path(__file__).resolve().parents[1]


def _with_knight(square):
    board = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    if square is not None:
        board.set_piece_at(square, chess.Piece(chess.KNIGHT, chess.BLACK))
    return board


def test_expected_remaining_size_on_hand_counted_partitions():
    boards = [_with_knight(chess.C3), _with_knight(chess.C4), _with_knight(chess.G6)]
    codes = sensing.piece_codes(boards)
    assert sensing.expected_remaining(codes, chess.B7) == 3.0  # every board looks the same there
    assert sensing.expected_remaining(codes, chess.G7) == pytest.approx((2 ** 2 + 1) / 3)  # {c3, c4} | {g6}
    assert sensing.expected_remaining(codes, chess.C3) == 1.0  # c3, c4 and neither: three cells
    square = sensing.choose_sense(boards, np.random.default_rng(0))
    assert {chess.C3, chess.C4} <= set(rules.sense_window(square))
    assert sensing.choose_sense([], np.random.default_rng(0)) is None


def _player_on(boards, color=chess.WHITE):
    player = TrackingPlayer(seconds_per_move=0.2, seed=0)
    player.handle_game_start(color, chess.Board(), "opponent")
    player.tracker = tracking.PossibleStates.from_boards(boards, color, max_boards=None)
    return player


def test_the_king_is_captured_when_a_possible_board_allows_it():
    boards = [chess.Board("3k4/8/8/8/8/8/8/R3K3 w - - 0 1"), chess.Board("k7/8/8/8/8/8/8/R3K3 w - - 0 1")]
    player = _player_on(boards)
    move = player.choose_move(rules.move_actions(boards[0]), 900)
    assert move == chess.Move.from_uci("a1a8") and player.king_capture_tries == 1


def test_the_own_king_is_not_left_capturable():
    # Black's rook on e8 attacks our king on e1 on every possible board (its knight varies).
    boards = [chess.Board(f"4r2k/8/8/8/8/{row}/8/4K3 w - - 0 1") for row in ("n7", "7n", "8")]
    player = _player_on(boards)
    move = player.choose_move(rules.move_actions(boards[0]), 900)
    for board in boards:
        after = rules.play(board, rules.taken_move(board, move))
        assert not after.attackers(chess.BLACK, after.king(chess.WHITE)), move


def test_a_safe_attack_on_a_known_king_is_preferred():
    board = chess.Board("4k3/8/8/8/8/8/8/R6K w - - 0 1")
    player = _player_on([board])
    move = player.choose_move(rules.move_actions(board), 900)
    after = rules.play(board, rules.taken_move(board, move))
    assert after.attackers(chess.WHITE, chess.E8), move


def test_a_gauntlet_writes_its_report_and_game_histories(tmp_path):
    def make_player(seed):
        return TrackingPlayer(seconds_per_move=0.02, seed=seed)

    report = gauntlet.run_gauntlet(make_player, "random", 2, seed=5, out=tmp_path)
    assert report["games"] == 2 and report["wins"] + report["draws"] + report["losses"] == 2
    assert [r["player_color"] for r in report["records"]] == ["white", "black"]
    low, high = report["elo_95"]
    assert low < high and report["tracker"]["truth_checks"] > 0 and report["tracker"]["truth_misses"] == 0
    assert json.loads((tmp_path / "report.json").read_text())["games"] == 2
    for record in report["records"]:
        history = reconchess.GameHistory.from_file(str(tmp_path / record["history"]))
        assert not history.is_empty() and history.get_white_player_name() in ("TrackingPlayer", "RandomBot")


def test_summary_counts_and_elo_interval():
    def record(result, color="white"):
        return gauntlet.GameRecord(color, result, "KING_CAPTURE", 10, 1.0, 3, 0, {})

    summary = gauntlet.summarize([record(1), record(1, "black"), record(0), record(-1, "black")])
    assert (summary["wins"], summary["draws"], summary["losses"], summary["score"]) == (2, 1, 1, 0.625)
    low, high = summary["elo_95"]
    assert low < summary["elo"] < high and not summary["saturated"]
    assert summary["by_colour"] == {"white": [1, 1, 0], "black": [1, 0, 1]}
    perfect = gauntlet.summarize([record(1), record(1)])
    assert perfect["saturated"] and perfect["elo"] is None and perfect["elo_95"][1] > 0


def _script(*args, env=None):
    return subprocess.run([sys.executable, str(REPO / "experiments" / "rbc_gauntlet.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO, env=env)


@pytest.mark.parametrize("flag, words", [("--seconds_per_move=0", "--seconds_per_move must be > 0"),
                                         ("--games=0", "--games=0"), ("--max_boards=-1", "--max_boards=-1"),
                                         ("--opponent=stockfish", "--opponent")])
@pytest.mark.slow
def test_the_script_refuses_bad_options_in_one_line(flag, words):
    result = _script(flag)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and words in lines[0], result.stderr[-2000:]


@pytest.mark.slow
def test_the_script_names_the_missing_stockfish(tmp_path):
    import os  # pylint: disable=g-import-not-at-top
    env = dict(os.environ, STOCKFISH_EXECUTABLE=str(tmp_path / "no_stockfish"))
    result = _script("--opponent=trout", f"--out={tmp_path}", env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and "STOCKFISH_EXECUTABLE" in lines[0], result.stderr[-2000:]


def test_trout_bot_plays_a_short_game(stockfish_path, monkeypatch):
    monkeypatch.setenv(gauntlet.STOCKFISH_ENV, stockfish_path)
    random.seed(0)
    player = TrackingPlayer(seconds_per_move=0.02, seed=0)
    record, history = gauntlet.play_game(player, gauntlet.make_opponent("trout"), chess.WHITE, max_turns=3)
    assert record.truth_checks > 0 and not history.is_empty()
    assert record.truth_misses == 0 or not player.tracker.exact
