"""Figure groups solve_rates (Fig. 5, 16, 17), scaling (Fig. 7) and selection (Fig. 8).

The notebooks run end to end on the ci results folder; their numbers are then checked
against independent computations: every column's "solved" replayed on a ``GardnerBoard``
from the puzzle file's own line (read with the csv module), mates confirmed by
Fairy-Stockfish, rates and standard errors recomputed from the rows with numpy, the
oracle groups (max over latents, over copies) recomputed from their members, and the
scaling group's players and copies compared with the solve_rates group's TeamSolver at
the same budget. The figure functions: tests/test_repro_puzzle_figures.py.
"""

import csv
import pathlib

import numpy as np
import pytest

from azdb_jax import reproduction
from azdb_jax.data import gardner
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import fairy_stockfish
from azdb_jax.figures import solve_rates as figures_solve_rates

from conftest import figure_numbers, run_notebook, stderr_of  # pylint: disable=g-bad-import-order

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"
SETS = ("mate_in_1", "mate_in_2", "mate_in_3", "only_move")
ONE_MOVE = ("mate_in_1", "only_move")
RULES = ("visit", "value", "lcb", "gap")


def _puzzle_lines():
    """{puzzle id: (FEN, [UCI moves])} read straight from the packaged CSV files."""
    out = {}
    for name in SETS:
        with open(gardner.packaged_path(name)) as f:
            lines = [line for line in f if not line.startswith("#")]
        for record in csv.DictReader(lines):
            out[record["PuzzleId"]] = (record["FEN"], record["Moves"].split())
    return out


def _replay_solved(fen, line, moves):
    """Whether ``moves`` (the solver's, one per step) solve the puzzle: each the line's move
    or a mating move; a mate or the line's last move ends it. Also the moves a column
    should have played (it stops at its first wrong move)."""
    board = GardnerBoard(fen)
    board.push_uci(line[0])
    solution = line[1::2]
    for step, move in enumerate(moves):
        assert step < len(solution)
        mates = False
        if move != solution[step]:
            trial = GardnerBoard(board.fen())
            try:
                trial.push_uci(move)
            except ValueError:
                return False, step + 1
            mates = trial.is_checkmate()
            if not mates:
                return False, step + 1
        if mates or step == len(solution) - 1:
            return True, step + 1
        board.push_uci(solution[step])
        trial = GardnerBoard(board.fen())
        if trial.is_checkmate():  # the line's move mated before its end
            return True, step + 1
        board.push_uci(line[2 * step + 2])
    return False, len(moves)


def _check_rows_against_lines(rows, columns):
    """Every column's ``_solved`` and its number of moves agree with a board replay."""
    lines = _puzzle_lines()
    checked = 0
    for row in rows:
        fen, line = lines[row["puzzle_id"]]
        assert row["fen"] == GardnerBoard(fen).fen() or row["fen"] == fen
        for c in columns:
            moves = row[f"{c}_moves"].split() if row[f"{c}_moves"] else []
            solved, steps = _replay_solved(fen, line, moves)
            assert row[f"{c}_solved"] == int(solved), (row["puzzle_id"], c, moves, line)
            assert len(moves) == steps
            checked += 1
    return checked


def _mates_by_engine(engine, fen, line_head, move):
    """Fairy-Stockfish: after ``move`` the side to move is in check and has no legal move."""
    moves = list(line_head) + [move]
    return not engine.legal_moves(fen, moves) and bool(engine.checkers(fen, moves))


def _group_check(rows, group, members, prefix=""):
    for row in rows:
        assert row[f"{prefix}{group}_solved"] == max(row[f"{m}_solved"] for m in members)


# ------------------------------------------------------------------ notebooks on the ci folder


def test_solve_rates_notebook_rates_and_solved_agree_with_boards_and_engine(fsf_path, ci_results):
    run_notebook(COLABS / "solve_rates.ipynb", ci_results)
    report = reproduction.Results(ci_results).read_report("solve_rates")
    summary, rows = report["summary"], report["rows"]
    assert summary["sets"] == list(SETS) and summary["set_sizes"] == {s: 8 for s in SETS}  # ci: puzzles_per_set
    assert summary["engine_nodes"] == 200 and summary["num_simulations"] == 8
    n = summary["num_players"]
    assert n == 3 and summary["azdb_search"]["search"] == "selfplay"
    assert len(rows) == 4 * len(SETS) * 8  # az, azdb, control, engine

    # rates and standard errors recomputed from the rows
    for bar in summary["bars"]:
        for name in SETS + ("all",):
            flags = [r[f"{bar['column']}_solved"] for r in rows
                     if r["arm"] == bar["arm"] and (name == "all" or r["set"] == name)]
            data = summary["rates"][bar["key"]][name]
            assert len(flags) == (32 if name == "all" else 8)
            assert data["rate"] == pytest.approx(np.mean(flags))
            assert (data["stderr"] or 0.0) == pytest.approx(stderr_of(flags))
    assert summary["rates"]["engine"]["mate_in_1"]["rate"] == 1.0  # a reference engine mates in one

    # every column's "solved" replayed on boards from the puzzle file's own line
    by_arm = {arm: [r for r in rows if r["arm"] == arm] for arm in ("az", "azdb", "control", "engine")}
    azdb_columns = ([f"player_{j}" for j in range(n)] + [f"team_{r}" for r in RULES]
                    + [f"homogeneous_{c}" for c in range(n)] + [f"homogeneous_{r}" for r in RULES])
    checked = _check_rows_against_lines(by_arm["azdb"], azdb_columns)
    checked += _check_rows_against_lines(by_arm["az"], ["player_0"])
    checked += _check_rows_against_lines(by_arm["control"], [f"player_{j}" for j in range(n)]
                                         + [f"team_{r}" for r in RULES])
    checked += _check_rows_against_lines(by_arm["engine"], [summary["engine_column"]])
    assert checked == 32 * (len(azdb_columns) + 1 + n + len(RULES) + 1)

    # oracle groups from their members; on one-move sets they bound every rule; every
    # rule's first move is one of the players' first moves (the same position for all)
    _group_check(by_arm["azdb"], "max_over_latents", [f"player_{j}" for j in range(n)])
    _group_check(by_arm["azdb"], "homogeneous_max", [f"homogeneous_{c}" for c in range(n)])
    _group_check(by_arm["control"], "max_over_latents", [f"player_{j}" for j in range(n)])
    for arm in ("azdb", "control"):
        for row in by_arm[arm]:
            firsts = {row[f"player_{j}_moves"].split()[0] for j in range(n)}
            for r in RULES:
                assert row[f"team_{r}_moves"].split()[0] in firsts
                if row["set"] in ONE_MOVE:
                    assert row[f"team_{r}_solved"] <= row["max_over_latents_solved"]
    for name in SETS:
        for j in range(n):
            assert summary["rates"]["azdb_max"][name]["rate"] >= summary["rates"][f"azdb_player_{j}"][name]["rate"]

    # mates confirmed by Fairy-Stockfish (its own move generator and check detection)
    lines = _puzzle_lines()
    with fairy_stockfish.FairyStockfish(fsf_path) as engine:
        for row in rows:
            if row["set"] != "mate_in_1":
                continue
            fen, line = lines[row["puzzle_id"]]
            assert _mates_by_engine(engine, fen, line[:1], line[1])  # the labelled answer mates
            for key in [k for k in row if k.endswith("_moves")]:
                column = key[:-len("_moves")]
                assert row[f"{column}_solved"] == int(_mates_by_engine(engine, fen, line[:1], row[key])), column

    numbers = figure_numbers(ci_results, "fig5_solve_rates")
    assert "engine" not in [b["key"] for b in numbers["bars"]]
    for bar in numbers["bars"]:
        np.testing.assert_allclose(bar["rate"], [summary["rates"][bar["key"]][s]["rate"] for s in numbers["sets"]])
    numbers = figure_numbers(ci_results, "fig16_17_engine")
    assert numbers["bars"][-1]["key"] == "engine"
    gains = figure_numbers(ci_results, "fig5_team_gains")
    max_gain = [b for b in gains["bars"] if b["key"] == "azdb_max"][0]["gain_points"]
    np.testing.assert_allclose(max_gain, [100 * (summary["rates"]["azdb_max"][s]["rate"]
                                                 - summary["rates"]["azdb_player_0"][s]["rate"])
                                          for s in gains["sets"]])
    assert all(g >= 0 for g in max_gain)


def test_scaling_notebook_tables_from_rows_and_players_match_solve_rates(fsf_path, ci_results):
    run_notebook(COLABS / "scaling.ipynb", ci_results)
    results = reproduction.Results(ci_results)
    report = results.read_report("scaling")
    summary, rows = report["summary"], report["rows"]
    assert summary["simulations"] == [4, 8] and summary["trials"] == [1, 2, 3] and summary["rule"] == "lcb"
    assert summary["num_puzzles"] == 32 and len(rows) == 2 * 32
    n = summary["num_players"]
    for row in rows:
        previous = {"latents": 0, "copies": 0}
        for k in summary["trials"]:
            for team, members in (("latents", [f"player_{j}" for j in range(k)]),
                                  ("copies", [f"copy_{c}" for c in range(k)])):
                solved = row[f"{team}_{k}_max_solved"]
                assert solved == max(row[f"{m}_solved"] for m in members)
                assert solved >= previous[team]  # more trials never solve less, by construction
                previous[team] = solved
        assert row["latents_1_lcb_moves"] == row["player_0_moves"]  # one latent: the rule plays player 0
        assert row["copies_1_lcb_moves"] == row["copy_0_moves"]
    _check_rows_against_lines(rows, [f"player_{j}" for j in range(n)] + [f"copy_{c}" for c in range(3)]
                              + [f"latents_{k}_lcb" for k in (1, 2, 3)])

    for kind in summary["kinds"]:
        for team in summary["teams"]:
            table = summary["tables"][f"{kind}/{team}"]
            rate = np.array(table["rate"], float)
            for s, sims in enumerate(summary["simulations"]):
                base = None
                for t, k in enumerate(table["trials"]):
                    name = f"{team}_{k}_max" if kind == "max" else f"{team}_{k}_{kind}"
                    flags = [r[f"{name}_solved"] for r in rows if r["simulations"] == sims]
                    assert len(flags) == 32
                    assert rate[t, s] == pytest.approx(np.mean(flags))
                    assert table["stderr"][t][s] == pytest.approx(stderr_of(flags))
                    base = np.mean(flags) if base is None else base
                    expected = 100 * (np.mean(flags) / base - 1) if base > 0 else None
                    assert table["relative_gain"][t][s] == (pytest.approx(expected) if expected is not None
                                                            else None)

    # the same searches as the solve_rates group's TeamSolver at its budget (same keys)
    solve = reproduction.load_or_evaluate(ci_results, "solve_rates")
    budget = solve["summary"]["num_simulations"]
    assert budget in summary["simulations"]
    theirs = {(r["set"], r["puzzle_id"]): r for r in solve["rows"] if r["arm"] == "azdb"}
    for row in [r for r in rows if r["simulations"] == budget]:
        other = theirs[(row["set"], row["puzzle_id"])]
        for j in range(n):
            assert row[f"player_{j}_moves"] == other[f"player_{j}_moves"]
            assert row[f"copy_{j}_moves"] == other[f"homogeneous_{j}_moves"]
        assert row[f"latents_{n}_lcb_moves"] == other["team_lcb_moves"]
        assert row[f"latents_{n}_max_solved"] == other["max_over_latents_solved"]

    numbers = figure_numbers(ci_results, "fig7_scaling_max")
    np.testing.assert_allclose(numbers["rate_percent"], 100 * np.array(summary["tables"]["max/latents"]["rate"]))
    numbers = figure_numbers(ci_results, "fig7_scaling_lcb")
    assert numbers["kind"] == "lcb" and numbers["trials"] == [1, 2, 3]


def test_selection_notebook_rules_and_search_types_from_rows(ci_results):
    run_notebook(COLABS / "selection.ipynb", ci_results)
    report = reproduction.Results(ci_results).read_report("selection")
    summary, rows = report["summary"], report["rows"]
    types = ["puct/selfplay", "puct/extrinsic_only", "gumbel/selfplay", "gumbel/extrinsic_only"]
    assert summary["search_types"] == types and summary["trials"] == [1, 2, 3]
    assert summary["trained_algorithm"] == "gumbel" and summary["selfplay_lambdas"] == pytest.approx([1, 0.9, 0.9])
    assert len(rows) == len(types) * 32
    n = summary["num_players"]
    by_type = {t: [r for r in rows if r["search_type"] == t] for t in types}
    for t, part in by_type.items():
        algorithm, mode = t.split("/")
        assert {r["algorithm"] for r in part} == {algorithm} and {r["search"] for r in part} == {mode}
        for row in part:
            for r in RULES:
                assert row[f"latents_1_{r}_moves"] == row["player_0_moves"]  # one trial: player 0
                for k in summary["trials"]:
                    first = row[f"latents_{k}_{r}_moves"].split()[0]
                    assert first in {row[f"player_{j}_moves"].split()[0] for j in range(k)}
                    if row["set"] in ONE_MOVE:
                        assert row[f"latents_{k}_{r}_solved"] <= row[f"latents_{k}_max_solved"]
            for move in summary["moves"]:
                suffix = "" if move == "visits" else f"_{move}"
                for k in summary["trials"]:
                    assert row[f"latents_{k}_max{suffix}_solved"] == max(row[f"player_{j}{suffix}_solved"]
                                                                          for j in range(k))
        columns = [f"player_{j}{s}" for j in range(n) for s in ("", "_value", "_lcb")]
        _check_rows_against_lines(part, columns + [f"latents_3_{r}" for r in RULES])
        for k in summary["trials"]:
            for r in RULES:
                flags = [row[f"latents_{k}_{r}_solved"] for row in part]
                data = summary["sub_additive"][t][r][str(k)]
                assert data["rate"] == pytest.approx(np.mean(flags))
                assert (data["stderr"] or 0.0) == pytest.approx(stderr_of(flags))
            for move in summary["moves"]:
                suffix = "" if move == "visits" else f"_{move}"
                flags = [row[f"latents_{k}_max{suffix}_solved"] for row in part]
                assert summary["max_over_latents"][t][move][str(k)]["rate"] == pytest.approx(np.mean(flags))
    # latent 0 searches with λ_0 = 1: the same moves whether the team searches as in self-play or not
    for algorithm in ("puct", "gumbel"):
        assert ([r["player_0_moves"] for r in by_type[f"{algorithm}/selfplay"]]
                == [r["player_0_moves"] for r in by_type[f"{algorithm}/extrinsic_only"]])

    numbers = figure_numbers(ci_results, "fig8_selection")
    for k in ("1", "2", "3"):
        for t in types:
            np.testing.assert_allclose(numbers["sub_additive"][k][t]["rate"],
                                       [summary["sub_additive"][t][r][k]["rate"] for r in RULES])


# ------------------------------------------------------------------ several seeds, on hand-made rows


def test_several_seeds_average_over_seeds_and_take_any_seed():
    from azdb_jax.reproduction import _puzzle_common as common  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import scaling, solve_rates  # pylint: disable=g-import-not-at-top

    # two runs, four puzzles, one budget: run a solves puzzles {0} alone and {0, 1} with 2 latents,
    # run b solves {2} alone and {1, 2, 3} with 2 latents
    solved = {"a": ([1, 0, 0, 0], [1, 1, 0, 0]), "b": ([0, 0, 1, 0], [0, 1, 1, 1])}
    rows = [{"arm": "azdb", "run": run, "set": "s", "simulations": 8, "player_0_solved": one[p],
             "latents_1_max_solved": one[p], "latents_2_max_solved": two[p]}
            for run, (one, two) in solved.items() for p in range(4)]
    out = scaling.tables(rows, ["a", "b"], [8], [1, 2], {1: "latents_1_max", 2: "latents_2_max"},
                         np.random.default_rng(0))
    np.testing.assert_allclose(np.array(out["rate"])[:, 0], [0.25, 0.625])
    assert out["stderr"][1][0] == pytest.approx(stderr_of([0.5, 0.75]))  # over seeds
    gains = [100 * (0.5 / 0.25 - 1), 100 * (0.75 / 0.25 - 1)]
    assert out["relative_gain"][1][0] == pytest.approx(np.mean(gains))
    assert out["relative_gain_stderr"][1][0] == pytest.approx(stderr_of(gains))
    summary = common.over_seeds([common.rate([1, 0, 0, 0]), common.rate([0, 0, 1, 1])])
    assert summary["rate"] == 0.375 and summary["stderr_over"] == "seeds" and summary["per_run"] == [0.25, 0.5]
    across = solve_rates._across_seeds(rows, "azdb", "player_0", ["a", "b"], ["s"])  # pylint: disable=protected-access
    assert across["s"]["rate"] == 0.5 and across["all"]["count"] == 4  # puzzles 0 and 2: one seed each
    one = common.rate([1, 0, 1, 1])
    assert one["rate"] == 0.75 and one["stderr"] == pytest.approx(stderr_of([1, 0, 1, 1]))
    assert scaling.relative_gain(0.3, 0.0) != scaling.relative_gain(0.3, 0.0)  # NaN without a base
    # The seeds as a team (AZdb's and AZ's seeds alike): max over the first k runs' player 0,
    # per budget; k past the runs is NaN. Runs a, b solve {0} and {2}: any of them {0, 2}.
    seeds = scaling._seeds_table(rows, ["a", "b"], [8], [1, 2, 3])  # pylint: disable=protected-access
    np.testing.assert_allclose(seeds["rate"][:2, 0], [0.25, 0.5])
    assert np.isnan(seeds["rate"][2, 0]) and seeds["trials"] == [1, 2]
    assert seeds["stderr"][1, 0] == pytest.approx(stderr_of([1, 0, 1, 0]))  # over puzzles
    assert seeds["relative_gain"][1, 0] == pytest.approx(100.0)


def test_chess_puzzle_sets_read_the_lichess_file(data_dir):
    from azdb_jax.reproduction import _puzzle_common as common  # pylint: disable=g-import-not-at-top

    sets = common.puzzle_sets("chess", 3)
    assert list(sets) == ["lichess"] and len(sets["lichess"]) == 3
    assert all(p.game == "chess" and p.solution for p in sets["lichess"])
    gardner_sets = common.puzzle_sets("gardner_chess", 0, ["only_move"])
    assert len(gardner_sets["only_move"]) == 200
    with pytest.raises(ValueError, match="puzzle sets need"):
        common.puzzle_sets("connect_four", 3)


def test_trials_solver_answers_do_not_depend_on_batch_or_order(ci_results):
    """``TeamSolver`` with ``trials`` (the scaling group's solver) answers a puzzle alike in
    other batches and another order."""
    from azdb_jax.evaluation import loading, solvers  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import _puzzle_common as common  # pylint: disable=g-import-not-at-top

    report = reproduction.load_or_evaluate(ci_results, "scaling")
    sims = report["summary"]["simulations"][0]
    team = loading.load_team(pathlib.Path(ci_results) / "runs" / report["summary"]["runs"][0], num_simulations=sims)
    solver = solvers.TeamSolver(team, trials=(1, 2, 3), rules=("lcb",), homogeneous_copies=3, batch_size=3)
    sets = common.puzzle_sets("gardner_chess", 8, ONE_MOVE)
    records = [p for name in ONE_MOVE for p in sets[name]][::-1]  # another order, other batches
    out = solver([p.board_at(0) for p in records])
    theirs = {r["puzzle_id"]: r for r in report["rows"] if r["simulations"] == sims}
    for k, record in enumerate(records):
        row = theirs[record.puzzle_id]
        for column in ("player_0", "player_1", "player_2", "copy_0", "copy_2", "latents_3_lcb", "copies_2_lcb"):
            assert out.moves[column][k] == row[f"{column}_moves"], (record.puzzle_id, column)
    assert set(solver.groups["latents_2_max"]) == {"player_0", "player_1"}
    assert solver.groups["copies_3_max"] == ("copy_0", "copy_1", "copy_2")


def test_seeds_solver_is_each_runs_team_solver_and_duplicates_change_no_choice(fsf_path, ci_results):
    """``TeamSolver`` given several teams (the seeds as one team, Fig. 5 right): each run's
    players answer as the run alone does, and a duplicated run changes no rule's choice."""
    from azdb_jax.evaluation import loading, solvers  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import _puzzle_common as common  # pylint: disable=g-import-not-at-top

    report = reproduction.load_or_evaluate(ci_results, "solve_rates")
    summary = report["summary"]
    team = loading.load_team(pathlib.Path(ci_results) / "runs" / summary["runs"]["azdb"][0],
                             num_simulations=summary["num_simulations"])
    # the same run twice: every player is duplicated, and ties go to the lower index, so
    # every rule chooses what it chooses for the run alone
    solver = solvers.TeamSolver([team, team], rules=RULES, batch_size=8)
    assert solver.groups["max_over_seeds"] == tuple(f"seed_{s}_player_{j}" for s in (0, 1) for j in range(3))
    sets = common.puzzle_sets("gardner_chess", 8, ONE_MOVE)
    records = [p for name in ONE_MOVE for p in sets[name]]
    out = solver([p.board_at(0) for p in records])
    theirs = {r["puzzle_id"]: r for r in report["rows"] if r["arm"] == "azdb"}
    for k, record in enumerate(records):
        row = theirs[record.puzzle_id]
        for j in range(3):
            assert out.moves[f"seed_0_player_{j}"][k] == out.moves[f"seed_1_player_{j}"][k] == row[f"player_{j}_moves"]
        for r in RULES:
            assert out.moves[f"team_{r}"][k] == row[f"team_{r}_moves"], (record.puzzle_id, r)
    one = solvers.TeamSolver([team, team], players=1, rules=("value",), batch_size=8)
    assert one.columns == ("seed_0_player_0", "seed_1_player_0", "team_value")
    assert one.groups == {"max_over_seeds": ("seed_0_player_0", "seed_1_player_0")}


def test_two_identical_seeds_agree_with_one(fsf_path, ci_results, tmp_path):
    """A ci folder whose seed 1 is a copy of seed 0: the multi-seed paths (means and SE over
    seeds, the seeds as one team, max over seeds) must reproduce the one-seed numbers."""
    import dataclasses  # pylint: disable=g-import-not-at-top
    import shutil  # pylint: disable=g-import-not-at-top

    from azdb_jax.reproduction import scaling, solve_rates  # pylint: disable=g-import-not-at-top

    one = reproduction.Results(ci_results)
    single = {"solve_rates": reproduction.load_or_evaluate(ci_results, "solve_rates"),
              "scaling": reproduction.load_or_evaluate(ci_results, "scaling")}
    root = tmp_path / "two_seeds"
    shutil.copytree(ci_results, root, ignore=shutil.ignore_patterns("eval", "figures"))
    for arm in ("az", "azdb", "control"):
        shutil.copytree(root / "runs" / f"{arm}_s0", root / "runs" / f"{arm}_s1")
    scale = dataclasses.replace(one.scale, seeds=(0, 1),
                                eval=dataclasses.replace(one.scale.eval, scaling_simulations=(4,)))
    two = reproduction.Results(root, scale)
    assert [r.name for r in two.runs("azdb")] == ["azdb_s0", "azdb_s1"]

    batched = solve_rates.evaluate(two, batch_members=True)  # each arm's seeds as members of one program
    report = solve_rates.evaluate(two, batch_members=False)
    assert batched["summary"]["members_batched"] and not report["summary"]["members_batched"]
    assert batched["rows"] == report["rows"]
    summary = report["summary"]
    assert summary["stderr_over"] == "seeds" and summary["runs"]["azdb"] == ["azdb_s0", "azdb_s1"]
    for bar in summary["bars"]:
        for name in SETS:
            data, alone = summary["rates"][bar["key"]][name], single["solve_rates"]["summary"]["rates"][bar["key"]][name]
            assert data["rate"] == pytest.approx(alone["rate"])
            if bar["arm"] != "engine":
                assert data["stderr_over"] == "seeds" and data["stderr"] == pytest.approx(0.0)
    across = summary["across_seeds"]
    rates = single["solve_rates"]["summary"]["rates"]
    for name in SETS + ("all",):
        assert across["az_player_0"][name]["rate"] == pytest.approx(rates["az"][name]["rate"])
        assert across["azdb_max"][name]["rate"] == pytest.approx(rates["azdb_max"][name]["rate"])
        assert across["azdb_max_over_seeds"][name]["rate"] == pytest.approx(rates["azdb_max"][name]["rate"])
        for rule in RULES:  # duplicated players change no rule's choice (ties go to the lower index)
            assert across[f"azdb_{rule}"][name]["rate"] == pytest.approx(rates[f"azdb_{rule}"][name]["rate"])
            assert across[f"az_{rule}"][name]["rate"] == pytest.approx(rates["az"][name]["rate"])
    _, numbers = figures_solve_rates.across_seeds(report)
    np.testing.assert_allclose(numbers["azdb_max"]["rate"], [across["azdb_max"][s]["rate"] for s in numbers["sets"]])

    report = scaling.evaluate(two)
    summary = report["summary"]
    alone = single["scaling"]["summary"]
    column = alone["simulations"].index(4)
    for key, table in summary["tables"].items():
        np.testing.assert_allclose(np.array(table["rate"], float)[:, 0],
                                   np.array(alone["tables"][key]["rate"], float)[:, column])
        assert all(v == pytest.approx(0.0) for v in np.array(table["stderr"], float)[:, 0])
    seeds = summary["training_seeds"]
    assert seeds["trials"] == [1, 2]  # two seeds: max over 1 and 2 of them, equal here
    assert seeds["rate"][1][0] == pytest.approx(seeds["rate"][0][0])
    assert seeds["rate"][0][0] == pytest.approx(alone["tables"]["max/latents"]["rate"][0][column])
