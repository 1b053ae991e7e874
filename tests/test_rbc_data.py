"""azdb_jax/rbc/data.py, azdb_jax/rbc/dataset.py and experiments/rbc_generate.py: recorded games and their examples.

- the examples of a recorded game are checked against the history itself: one example per
  sense and per move decision, the taken action's index decodes back to the sensed square's
  window and to the requested move (which is among the legal requests), the result, SoonWin
  and SoonLose targets follow the history's winner and the game's length, the piece counts
  are python-chess's on the history's true board, the first synopsis is the start
  position's;
- example files round-trip, and missing or corrupt files fail with one line naming them;
- the split by game puts no game in both sets;
- bad options are refused with a message naming them.
"""

import dataclasses
import pathlib
import subprocess
import sys

import chess
import numpy as np
import pytest
import reconchess

from azdb_jax.rbc import actions, data, dataset, rules, synopsis

REPO = pathlib.Path(__file__).resolve().parents[1]
CONFIG = data.ExampleConfig(synopsis_boards=16, max_boards=200, horizon=5)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two short games of TrackingPlayer against RandomBot, their histories and examples."""
    out = tmp_path_factory.mktemp("rbc_games")
    records = data.play_games(data.parse_matchups("tracking:random=2"), out, seed=3, seconds_per_move=0.02,
                              max_turns=12)
    paths = data.list_histories(out / "games")
    examples = data.history_examples(paths, CONFIG, root=out / "games")
    return out, records, paths, examples


def _decisions(history, color):
    """(turn, stage) of every decision of ``color`` in the history: senses that chose a square, moves."""
    out = []
    for turn in history.turns(color):
        if history.has_sense(turn) and history.sense(turn) is not None:
            out.append((turn, 0))
        if history.has_move(turn):
            out.append((turn, 1))
    return out


def test_examples_agree_with_the_history(recorded):
    out, records, paths, examples = recorded
    assert len(paths) == 2 and [r["file"] for r in records] == [f"games/{p.name}" for p in paths]
    seen = 0
    for game_index, path in enumerate(paths):
        history = reconchess.GameHistory.from_file(str(path))
        names = {chess.WHITE: history.get_white_player_name(), chess.BLACK: history.get_black_player_name()}
        assert sorted(names.values()) == ["RandomBot", "TrackingPlayer"]
        all_actions = [(t, s) for t in history.turns() for s in (0, 1)
                       if (history.has_sense(t) if s == 0 else history.has_move(t))]
        winner = history.get_winner_color()
        for color in (chess.WHITE, chess.BLACK):
            rows = np.flatnonzero((examples.game == examples.games.index(path.name)) & (examples.color == color))
            decisions = _decisions(history, color)
            assert len(rows) == len(decisions) > 0
            assert {examples.groups[g] for g in examples.group[rows]} == {names[color]}
            for row, (turn, stage) in zip(rows, decisions):
                assert examples.stage[row] == stage and examples.turn[row] == turn.turn_number
                truth = history.truth_board_before_move(turn) if history.has_move(turn) else None
                if stage == 0:
                    square = history.sense(turn)
                    window = set(rules.sense_window(actions.sense_square(int(examples.action[row]))))
                    assert {s for s, _ in history.sense_result(turn)} <= window
                    assert square in window
                else:
                    requested = history.requested_move(turn)
                    decoded = actions.index_move(int(examples.action[row]), truth)
                    if requested is None:
                        assert decoded is None
                    else:
                        assert (decoded.from_square, decoded.to_square) == (requested.from_square,
                                                                             requested.to_square)
                        assert decoded.promotion == (requested.promotion or decoded.promotion)
                        assert requested in reconchess.utilities.move_actions(truth) or \
                            reconchess.utilities.add_pawn_queen_promotion(truth, requested) in \
                            reconchess.utilities.move_actions(truth)
                    legal = dataset.unpack_mask(examples.legal[row])
                    assert legal[examples.action[row]] and legal[actions.PASS]
                    assert legal.sum() == len({actions.move_index(m)
                                               for m in reconchess.utilities.move_actions(truth)}) + 1
                if truth is not None:  # python-chess's counts on the history's board
                    own = [sum(1 for p in truth.piece_map().values() if p.color == color and p.piece_type == k)
                           for k in range(1, 7)]
                    theirs = [sum(1 for p in truth.piece_map().values() if p.color != color and p.piece_type == k)
                              for k in range(1, 7)]
                    assert examples.pieces[row].tolist() == own + theirs
                expected = 0 if winner is None else (1 if winner == color else -1)
                assert examples.result[row] == expected
                remaining = len(all_actions) - all_actions.index((turn, stage))
                assert examples.soon_win[row] == (expected == 1 and remaining <= CONFIG.horizon)
                assert examples.soon_lose[row] == (expected == -1 and remaining <= CONFIG.horizon)
                seen += 1
            if names[color] == "TrackingPlayer":  # its sets stay small: the truth is always tracked
                assert examples.tracked[rows].all()
    assert seen == len(examples)
    assert examples.soon_win.any() or examples.soon_lose.any() or all(r["winner"] is None for r in records)


def test_the_first_synopsis_is_the_start_positions():
    history = reconchess.GameHistory()
    history.store_players("A", "B")
    board = chess.Board()
    history.store_sense(chess.WHITE, chess.E7, [(s, board.piece_at(s)) for s in rules.sense_window(chess.E7)])
    history.store_fen_before_move(chess.WHITE, board.fen())
    history.store_move(chess.WHITE, chess.Move.from_uci("e2e4"), chess.Move.from_uci("e2e4"), None)
    board.push_uci("e2e4")
    history.store_fen_after_move(chess.WHITE, board.fen())
    history.store_results(chess.WHITE, reconchess.WinReason.TIMEOUT)
    rows, counts = data.game_examples(history, chess.WHITE, CONFIG)
    assert counts["decisions"] == 2 and [r["stage"] for r in rows] == [0, 1]
    first = synopsis.synopsis([chess.Board()], chess.WHITE, synopsis.Context(False))
    np.testing.assert_array_equal(rows[0]["synopses"], first)
    second = synopsis.synopsis([chess.Board()], chess.WHITE, synopsis.Context(True), previous=first)
    np.testing.assert_array_equal(rows[1]["synopses"], second)
    assert rows[1]["action"] == chess.E2 * 64 + chess.E4 and rows[0]["action"] == actions.sense_index(chess.E7)
    assert [r["soon_win"] for r in rows] == [True, True] and [r["result"] for r in rows] == [1, 1]
    black, _ = data.game_examples(history, chess.BLACK, CONFIG)
    assert black == []  # Black never decided


def test_files_round_trip_and_bad_files_are_named(recorded, tmp_path):
    _, _, paths, examples = recorded
    path = examples.save(tmp_path / "ex.npz")
    back = dataset.Examples.load(path)
    for field in ("synopses", "stage", "action", "legal", "result", "soon_win", "soon_lose", "pieces", "game",
                  "group"):
        np.testing.assert_array_equal(getattr(back, field), getattr(examples, field))
    assert back.games == examples.games and back.groups == examples.groups
    both = dataset.Examples.load([path, path])
    assert len(both) == 2 * len(examples) and both.games == examples.games
    with pytest.raises(FileNotFoundError, match="missing.npz does not exist"):
        dataset.Examples.load(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="bad.npz is unreadable"):
        dataset.Examples.load(tmp_path / "bad.npz")
    (tmp_path / "bad.json").write_text('{"white_name": ')
    with pytest.raises(ValueError, match="bad.json is not a reconchess GameHistory file"):
        data.load_history(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="nothing.json does not exist"):
        data.load_history(tmp_path / "nothing.json")


def test_the_split_puts_no_game_in_both_sets(recorded):
    _, _, _, examples = recorded
    many = dataset.Examples.concatenate([examples] + [
        dataclasses.replace(examples, games=[f"copy{i}/{g}" for g in examples.games]) for i in range(20)])
    train, held = dataset.split_by_game(many, 0.3)
    assert len(train) + len(held) == len(many) and len(train) and len(held)
    train_games = {train.games[g] for g in train.game}
    held_games = {held.games[g] for g in held.game}
    assert not train_games & held_games and len(train_games | held_games) == len(many.games)
    assert all(dataset.game_in_validation(g, 0.3) for g in held_games)
    with pytest.raises(ValueError, match="validation fraction"):
        dataset.split_by_game(many, 1.5)


def test_masks_and_options():
    indices = [0, 63, 64, 4095, actions.PASS]
    assert np.flatnonzero(dataset.unpack_mask(dataset.pack_mask(indices))).tolist() == indices
    for spec, message in (("tracking:random", "FIRST:SECOND=GAMES"), ("tracking:nobody=3", "unknown player"),
                          ("tracking:random=0", ">= 1"), ("tracking:random=x", "not an integer")):
        with pytest.raises(ValueError, match=message):
            data.parse_matchups(spec)
    with pytest.raises(ValueError, match="ExampleConfig.horizon"):
        data.ExampleConfig(horizon=0)
    with pytest.raises(ValueError, match="ExampleConfig.scheme"):
        data.ExampleConfig(scheme="colour")
    assert data.headset_of("RandomBot", "TroutBot", "matchup") == "RandomBot-vs-TroutBot"


def test_the_script_refuses_bad_options_in_one_line(tmp_path):
    run = subprocess.run([sys.executable, "experiments/rbc_generate.py", f"--out={tmp_path}",
                          "--matchups=tracking:nobody=2"], cwd=REPO, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].endswith("unknown player 'nobody'; one of tracking, random, attacker, "
                                                        "trout")
