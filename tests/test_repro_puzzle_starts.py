"""Figure group puzzle_starts (Table 1, Fig. 4, 20).

The notebook runs end to end on the ci results folder; its numbers are then checked
against independent computations: the held-out puzzle sets against the manifest each
run wrote when it trained (and the split function), every solve flag by replaying the
played moves against the puzzle file read with the csv module, and each row's paired
differences from the report's solve flags. The figure functions are tested on hand-made
reports.
"""

import csv
import json
import pathlib

import chess
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import reproduction, runs
from azdb_jax import games
from azdb_jax import start_positions as start_positions_lib
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import loading
from azdb_jax.figures import puzzle_starts as figures_puzzle_starts
from azdb_jax.reproduction import puzzle_starts as puzzle_group
from azdb_jax.reproduction import scales

from conftest import figure_numbers, run_notebook, stderr_of  # pylint: disable=g-bad-import-order

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"
PUZZLES = pathlib.Path(__file__).resolve().parents[1] / "azdb_jax" / "data" / "gardner_puzzles"

def _puzzle_lines():
    """puzzle key -> (FEN, moves) read from the packaged CSV files with the csv module."""
    out = {}
    for path in PUZZLES.glob("*.csv"):
        if path.stem == "values":
            continue
        lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
        for row in csv.DictReader(lines):
            out[f"{path.stem}:{row['PuzzleId']}"] = (row["FEN"], row["Moves"].split())
    return out


def _mates(board, uci):
    board = board.copy(stack=False)
    board.push_uci(uci)
    return board.is_checkmate()


def _solved_by_hand(fen, line, played):
    """Lichess scoring: after line[0], each solver move must be the line's or mate."""
    board = GardnerBoard(fen)
    board.push_uci(line[0])
    solver_moves = line[1::2]
    for step, move in enumerate(played):
        if move != solver_moves[step] and not _mates(board, move):
            return False
        if _mates(board, move) or step == len(solver_moves) - 1:
            return step == len(played) - 1
        board.push_uci(move)
        board.push_uci(line[2 * step + 2])
    return False


# ------------------------------------------------------------------ puzzle_starts on the ci folder


def test_puzzle_starts_notebook_heldout_sets_and_solve_rates(ci_results):
    run_notebook(COLABS / "puzzle_starts.ipynb", ci_results)
    results = reproduction.Results(ci_results)
    report = results.read_report("puzzle_starts")
    summary, rows = report["summary"], report["rows"]
    scale = results.scale
    lines = _puzzle_lines()

    # The held-out sets are what the runs' training excluded (their own manifests).
    for split, arm in (("random", "az_starts_random"), ("ood", "az_starts_ood")):
        workdir = pathlib.Path(ci_results) / "runs" / f"{arm}_s0"
        manifest = json.loads((workdir / "start_positions" / "manifest.json").read_text())
        test_ids = {p["puzzle_id"] for p in manifest["test"] if p["step"] == 0}
        train_ids = {p["puzzle_id"] for p in manifest["train"] if p["step"] == 0}
        assert not test_ids & train_ids
        config = reproduction.Results(ci_results).run(f"{arm}_s0")
        split_set = start_positions_lib.load_start_positions(
            "gardner_chess", runs.load_run_config(config.workdir).start_positions)
        assert {r.puzzle_id for r in split_set.heldout_records} == test_ids
        held, train = summary["sets"][f"{split}_heldout"], summary["sets"][f"{split}_train"]
        assert held["total"] == len(test_ids) and train["total"] == len(train_ids)
        assert len(held["puzzles"]) == min(scale.eval.puzzles_per_set, len(test_ids)) == 8
        assert {k.split(":")[1] for k in held["puzzles"]} <= test_ids
        assert {k.split(":")[1] for k in train["puzzles"]} <= train_ids
        if split == "random":
            assert len(test_ids) == scale.test_count
        else:  # the whole held-out group, nothing else
            group = {k for k in lines if k.startswith(scale.heldout_group.split(":")[1] + ":")}
            assert test_ids == {k.split(":")[1] for k in group}
            assert all(k.startswith("mate_in_3:") for k in held["puzzles"])

    # Every solve flag by replaying the played moves; rates and standard errors from the rows.
    puzzle_rows = [r for r in rows if r["kind"] == "puzzle"]
    for row in puzzle_rows:
        fen, line = lines[row["puzzle"]]
        played = row["moves"].split() if row["moves"] else []
        assert row["solved"] == int(_solved_by_hand(fen, line, played)), row
    for arm, data in summary["arms"].items():
        for name, item in data["sets"].items():
            flags = [r["solved"] for r in puzzle_rows if r["arm"] == arm and r["set"] == name]
            assert [r["puzzle"] for r in puzzle_rows if r["arm"] == arm and r["set"] == name] == \
                summary["sets"][name]["puzzles"]
            assert item["solve_rate"] == pytest.approx(np.mean(flags))
            assert item["stderr"] == pytest.approx(stderr_of(flags)) and item["stderr_over"] == "puzzles"
            trained = [r["trained_on"] for r in puzzle_rows if r["arm"] == arm and r["set"] == name]
            assert item["trained_share"] == pytest.approx(np.mean(trained))
            expected_share = 1.0 if (arm, name) in (("az_starts_random", "random_train"),
                                                    ("az_starts_ood", "ood_train")) else None
            if arm == "az" or name == f"{arm.split('_')[-1]}_heldout":
                expected_share = 0.0
            if arm == "az_starts" or arm in scales.TABLE1_LOWER:  # trained from every puzzle
                expected_share = 1.0
            if expected_share is not None:
                assert item["trained_share"] == expected_share, (arm, name)
    # Rows 2 and 5-7 trained from every puzzle: the whole set, then the solution lines'
    # positions (row 5 on), each an intermediate position of its puzzle's line.
    assert summary["sets"]["all_train"]["total"] == sum(
        1 for k in lines if k.split(":")[0] in {s.split(":")[1] for s in scale.start_sources})
    for arm in ("az_starts", *scales.TABLE1_LOWER):
        workdir = pathlib.Path(ci_results) / "runs" / f"{arm}_s0"
        manifest = json.loads((workdir / "start_positions" / "manifest.json").read_text())
        assert not manifest["test"]
        steps = [p for p in manifest["train"] if p["step"] > 0]
        assert bool(steps) == (arm != "az_starts")
        for position in steps[:20]:  # the puzzle's position after the solver's k-th move and the reply
            fen, moves = lines[f"{position['group'].split(':')[1]}:{position['puzzle_id']}"]
            board = GardnerBoard(fen)
            for move in moves[:1 + 2 * position["step"]]:
                board.push_uci(move)
            assert board.fen() == position["fen"], position
        config = runs.load_run_config(workdir)
        assert config.start_positions.halfmove_clocks == ((0, 20, 40, 60, 80) if arm == "az_starts_halfmove" else (0,))
    assert [r["arm"] for r in summary["table1"]] == [arm for _, arm, _ in puzzle_group.TABLE1]
    table1 = {(r["arm"], r["set"]): r for r in summary["table1"]}
    assert table1[("az_starts_ood", "ood_heldout")]["solve_rate"] == \
        summary["arms"]["az_starts_ood"]["sets"]["ood_heldout"]["solve_rate"]
    # Each row's paired differences (from AZ; rows 5-7 also from the row before), recomputed
    # from the solve flags of the same puzzles.
    def flags(arm, name):
        return np.array([r["solved"] for r in puzzle_rows if r["arm"] == arm and r["set"] == name], float)

    previous = {"az_starts_intermediate": "az_starts", "az_starts_exploration": "az_starts_intermediate",
                "az_starts_halfmove": "az_starts_exploration"}
    for row in summary["table1"]:
        for key, base in (("vs_az", None if row["arm"] == "az" else "az"), ("vs_previous", previous.get(row["arm"]))):
            if base is None:
                assert row[key] is None, (row["row"], key)
                continue
            gaps = flags(row["arm"], row["set"]) - flags(base, row["set"])
            assert row[key]["against"] == base and row[key]["stderr_over"] == "puzzles (paired)"
            assert row[key]["difference"] == pytest.approx(np.mean(gaps))
            assert row[key]["stderr"] == pytest.approx(stderr_of(gaps), nan_ok=True)
    numbers = figure_numbers(ci_results, "table1_puzzle_starts")
    for row in numbers["table1"]:
        assert row["solve_rate"] == pytest.approx(100 * table1[(row["arm"], row["set"])]["solve_rate"])
        source = table1[(row["arm"], row["set"])]["vs_az"]
        assert (row["vs_az"] is None) == (source is None)
        if source is not None:
            assert row["vs_az"]["difference"] == pytest.approx(100 * source["difference"])
    for n in range(2):
        numbers = figure_numbers(ci_results, f"fig4_move_values_{n}")
        assert numbers["position"]["fen"] == summary["positions"][n]["fen"]
        assert set(numbers["arms"]) == set(puzzle_group.BAR_ARMS)
        bars = summary["arms"]["az"]["bars"][n]
        assert numbers["moves"] == sorted(numbers["moves"]) and set(numbers["moves"]) <= set(bars["moves"])
    numbers = figure_numbers(ci_results, "fig20_move_values_1")
    assert numbers["position"]["step"] == 1 and numbers["position"]["figure"] == "fig20"


def test_puzzle_starts_move_bars_are_the_networks_view(ci_results):
    results = reproduction.Results(ci_results)
    report = reproduction.load_or_evaluate(ci_results, "puzzle_starts")
    summary = report["summary"]
    simulations = results.scale.eval.simulations
    assert [p["figure"] for p in summary["positions"]] == ["fig4", "fig4", "fig20", "fig20"]
    lines = _puzzle_lines()
    interop = games.board_game("gardner_chess")
    for index, position in enumerate(summary["positions"]):
        board = GardnerBoard(position["fen"])
        fen, line = lines[position["puzzle"]]
        assert position["solution"] == line[1::2][position["step"]]
        legal = sorted(m.uci() for m in board.legal_moves)
        assert {arm for arm, data in summary["arms"].items() if data["bars"]} == set(puzzle_group.BAR_ARMS)
        for arm in puzzle_group.BAR_ARMS:
            bars = summary["arms"][arm]["bars"][index]
            assert bars["moves"] == legal
            assert bars["correct"] == [m == position["solution"] or _mates(board, m) for m in legal]
            prior = np.asarray(bars["prior"], float)
            assert (prior >= 0).all() and prior.sum() == pytest.approx(1.0, abs=1e-5)
            visits = np.asarray(bars["visits"])
            assert 0 < visits.sum() <= simulations
            q = np.array([np.nan if x is None else x for x in bars["q"]], float)
            np.testing.assert_array_equal(np.isnan(q), visits == 0)
            assert np.all(np.abs(np.asarray(bars["raw_value"], float)) <= 1.0)
            for k, move in enumerate(legal):
                if _mates(board, move):
                    assert bars["raw_value"][k] == 1.0
    # The prior and the raw values by hand: the network's softmax over the legal moves, and
    # minus its value of each position after a move.
    team = loading.load_team(pathlib.Path(ci_results) / "runs" / "az_s0", num_simulations=simulations)
    board = GardnerBoard(summary["positions"][0]["fen"])
    bars = summary["arms"]["az"]["bars"][0]
    states = interop.states_from_boards([board], max_pieces=None)
    out = team.apply_fn(team.params, states.observation, jnp.zeros(1, jnp.int32))
    logits = np.asarray(out.policy_logits[0], np.float64)[[interop.move_to_action(chess.Move.from_uci(m), board)
                                                           for m in bars["moves"]]]
    np.testing.assert_allclose(bars["prior"], np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum(),
                               atol=1e-5)
    for k, move in enumerate(bars["moves"]):
        child = board.copy(stack=False)
        child.push_uci(move)
        if child.is_game_over():
            continue
        value = team.apply_fn(team.params, interop.states_from_boards([child], max_pieces=None).observation,
                              jnp.zeros(1, jnp.int32)).value
        assert bars["raw_value"][k] == pytest.approx(-float(value[0]), abs=1e-5)


# ------------------------------------------------------------------ library pieces by hand


def test_puzzle_subset_and_hand_scoring():
    records = list(range(10))
    assert puzzle_group.subset(records, 0) == records and puzzle_group.subset(records, 20) == records
    picked = puzzle_group.subset(records, 4)
    assert len(picked) == 4 and picked == sorted(picked) and picked == puzzle_group.subset(records, 4)
    # the hand scorer itself: a mate-in-2 line, right and wrong
    lines = _puzzle_lines()
    fen, line = lines["mate_in_2:gm20001"]
    assert _solved_by_hand(fen, line, line[1::2])
    assert not _solved_by_hand(fen, line, line[1:2])
    board = GardnerBoard(fen)
    board.push_uci(line[0])
    wrong = next(m.uci() for m in board.legal_moves if m.uci() != line[1] and not _mates(board, m.uci()))
    assert not _solved_by_hand(fen, line, [wrong])


# ------------------------------------------------------------------ figures on hand-made reports


def _puzzle_report():
    sets = {name: {"solve_rate": rate, "stderr": 0.1, "num_puzzles": 10, "trained_share": share}
            for name, rate, share in (("random_heldout", 0.5, 0.0), ("ood_heldout", 0.2, 0.0),
                                      ("random_train", 0.9, 1.0), ("ood_train", 0.7, 0.0))}
    bars = {"run": "az_s0", "moves": ["a2a3", "b1c3", "e1d2"], "correct": [False, True, False],
            "prior": [0.2, 0.5, 0.3], "raw_value": [0.1, -0.2, 1.0], "q": [0.0, None, 0.5], "visits": [3, 0, 5],
            "root_value": 0.3, "search_value": 0.5}
    arms = {"az": {"sets": sets, "bars": [bars]},
            "az_starts_ood": {"sets": sets, "bars": [dict(bars, prior=[0.1, 0.8, 0.1], run="az_starts_ood_s0")]}}
    position = {"figure": "fig4", "set": "ood_heldout", "puzzle": "mate_in_3:x", "step": 0,
                "fen": "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1", "solution": "b1c3"}
    table1 = [{"row": "(4) OOD", "arm": "az_starts_ood", "set": "ood_heldout", "solve_rate": 0.2, "stderr": 0.1,
               "num_puzzles": 10,
               "vs_az": {"against": "az", "difference": 0.05, "stderr": 0.02, "stderr_over": "puzzles (paired)"}}]
    return {"summary": {"arms": arms, "positions": [position], "table1": table1, "num_simulations": 8}, "rows": []}


def test_paired_difference_over_puzzles_then_over_seeds():
    # one seed each: per-puzzle gaps [1, 0, -1, 1] -> mean 0.25, SE = std([1,0,-1,1], ddof=1) / 2
    one = puzzle_group.paired_difference([[True, False, False, True]], [[False, False, True, False]], "az")
    assert one["against"] == "az" and one["stderr_over"] == "puzzles (paired)"
    assert one["difference"] == pytest.approx(0.25)
    assert one["stderr"] == pytest.approx(np.sqrt((0.75 ** 2 * 2 + 0.25 ** 2 + 1.25 ** 2) / 3) / 2)
    # an arm with two seeds against one seed: the arm's mean flag per puzzle, still paired by puzzle
    mixed = puzzle_group.paired_difference([[True, True], [False, True]], [[False, True]], "az")
    assert mixed["difference"] == pytest.approx(0.25) and mixed["stderr_over"] == "puzzles (paired)"
    # two seeds each: seed k against seed k (rates 0.5, 1.0 against 0.5, 0.0): gaps 0, 1
    seeds = puzzle_group.paired_difference([[True, False], [True, True]], [[False, True], [False, False]], "az")
    assert seeds["stderr_over"] == "seeds" and seeds["difference"] == pytest.approx(0.5)
    assert seeds["stderr"] == pytest.approx(0.5)


def test_puzzle_starts_figures_show_the_report():
    report = _puzzle_report()
    _, numbers = figures_puzzle_starts.solve_rates(report)
    assert numbers["rates"]["az"]["random_train"] == {"solve_rate": 90.0, "stderr": 10.0, "num_puzzles": 10,
                                                      "trained_share": 1.0}
    assert numbers["table1"][0]["solve_rate"] == 20.0 and numbers["sets"][0] == "random_heldout"
    assert numbers["table1"][0]["vs_az"] == {"against": "az", "difference": pytest.approx(5.0),
                                             "stderr": pytest.approx(2.0), "stderr_over": "puzzles (paired)"}
    assert numbers["table1"][0]["vs_previous"] is None  # a report without it
    _, numbers = figures_puzzle_starts.move_values(report, 0)
    assert numbers["moves"] == ["a2a3", "b1c3", "e1d2"] and numbers["correct"] == [False, True, False]
    np.testing.assert_allclose(numbers["arms"]["az_starts_ood"]["prior"], [0.1, 0.8, 0.1])
    assert np.isnan(numbers["arms"]["az"]["q"][1]) and numbers["arms"]["az"]["visits"] == [3, 0, 5]
    # two moves at most: the correct one, then the highest-prior other (by the first arm's prior)
    _, numbers = figures_puzzle_starts.move_values(report, 0, max_moves=2)
    assert numbers["moves"] == ["b1c3", "e1d2"]
    np.testing.assert_allclose(numbers["arms"]["az"]["raw_value"], [-0.2, 1.0])
