"""Figures of the groups solve_rates (Fig. 5, 16, 17), scaling (Fig. 7) and selection (Fig. 8)
drawn from small hand-made reports: the numbers each figure returns are the report's."""

import numpy as np
import pytest

from azdb_jax.figures import scaling as figures_scaling
from azdb_jax.figures import selection as figures_selection
from azdb_jax.figures import solve_rates as figures_solve_rates

SETS = ("mate_in_1", "mate_in_2", "mate_in_3", "only_move")
RULES = ("visit", "value", "lcb", "gap")

def _rate(rate, stderr=0.1, over="puzzles"):
    return {"rate": rate, "stderr": stderr, "count": 10, "stderr_over": over}


def test_solve_rate_figures_show_the_report():
    sets = ["mate_in_1", "only_move"]
    layout = [{"key": "az", "arm": "az", "column": "player_0", "label": "AZ"},
              {"key": "azdb_player_0", "arm": "azdb", "column": "player_0", "label": "AZdb player 0"},
              {"key": "azdb_gap", "arm": "azdb", "column": "team_gap", "label": "AZdb gap"},
              {"key": "azdb_max", "arm": "azdb", "column": "max_over_latents", "label": "AZdb max"},
              {"key": "engine", "arm": "engine", "column": "fairy_stockfish", "label": "engine"}]
    values = {"az": (0.1, 0.2, 0.15), "azdb_player_0": (0.2, 0.3, 0.25), "azdb_gap": (0.3, 0.3, 0.3),
              "azdb_max": (0.5, 0.4, 0.45), "engine": (1.0, 0.9, 0.95)}
    rates = {k: {s: _rate(v) for s, v in zip(sets + ["all"], vs)} for k, vs in values.items()}
    rates["azdb_gap"]["all"]["stderr"] = None  # NaN in the JSON: drawn without a bar
    summary = {"game": "gardner_chess", "sets": sets, "num_simulations": 8, "stderr_over": "puzzles", "bars": layout,
               "rates": rates, "rules": ["gap"], "runs": {"azdb": ["a", "b"]}, "across_seeds": None}
    report = {"summary": summary, "rows": []}
    _, numbers = figures_solve_rates.solve_rates(report)
    assert numbers["sets"] == sets + ["all"] and [b["key"] for b in numbers["bars"]] == list(values)
    np.testing.assert_allclose(numbers["bars"][3]["rate"], [0.5, 0.4, 0.45])
    assert np.isnan(numbers["bars"][2]["stderr"][-1])
    _, numbers = figures_solve_rates.solve_rates(report, ["engine"], pooled=False)
    assert numbers["sets"] == sets and numbers["bars"][0]["label"] == "engine"
    with pytest.raises(ValueError, match="no bar"):
        figures_solve_rates.solve_rates(report, ["stockfish"])
    _, numbers = figures_solve_rates.team_gains(report)
    assert [b["key"] for b in numbers["bars"]] == ["azdb_gap", "azdb_max"]
    np.testing.assert_allclose(numbers["bars"][1]["gain_points"], [30, 10, 20])
    with pytest.raises(ValueError, match="one training seed"):
        figures_solve_rates.across_seeds(report)
    summary["across_seeds"] = {k: {s: _rate(v) for s in sets + ["all"]}
                               for k, v in (("az_player_0", 0.2), ("azdb_player_0", 0.3), ("azdb_max", 0.6))}
    _, numbers = figures_solve_rates.across_seeds(report)
    np.testing.assert_allclose(numbers["azdb_max"]["rate"], [0.6] * 3)


def test_scaling_figure_shows_the_report():
    def table(rate, gain, trials):
        return {"rate": rate, "stderr": [[0.01, 0.02]] * len(rate), "relative_gain": gain,
                "relative_gain_stderr": [[1.0, 2.0]] * len(rate), "trials": trials}

    tables = {"max/latents": table([[0.1, 0.2], [0.2, 0.3], [0.3, 0.35]], [[0, 0], [100, 50], [200, 75]], [1, 2, 3]),
              "max/copies": table([[0.1, 0.2], [0.15, 0.2], [0.2, 0.2]], [[0, 0], [50, 0], [100, 0]], [1, 2, 3]),
              "lcb/latents": table([[0.0, 0.2], [0.1, 0.2], [None, None]], [[None, 0], [None, 0], [None, None]],
                                   [1, 2]),
              "lcb/copies": table([[0.0, 0.2], [0.0, 0.2], [0.1, 0.2]], [[None, 0], [None, 0], [None, 0]], [1, 2, 3])}
    report = {"summary": {"kinds": ["max", "lcb"], "simulations": [4, 8], "tables": tables,
                          "training_seeds": {"trials": [1, 2], "relative_gain": [[0, 0], [30, 20], [None, None]]}},
              "rows": []}
    _, numbers = figures_scaling.scaling(report, "max")
    np.testing.assert_allclose(numbers["rate_percent"], [[10, 20], [20, 30], [30, 35]])
    np.testing.assert_allclose(numbers["relative_gain"][2], [200, 75])
    np.testing.assert_allclose(numbers["copies_relative_gain"][1], [50, 0])
    np.testing.assert_allclose(numbers["seeds_relative_gain"][1], [30, 20])
    _, numbers = figures_scaling.scaling(report, "lcb")
    assert numbers["trials"] == [1, 2] and numbers["rate_percent"].shape == (2, 2)
    assert np.isnan(numbers["relative_gain"][1, 0]) and numbers["seeds_relative_gain"] is None
    with pytest.raises(ValueError, match="kind must be one of"):
        figures_scaling.scaling(report, "gap")


def test_selection_figure_shows_the_report():
    types = ["puct/selfplay", "gumbel/extrinsic_only"]
    rules, moves = ["visit", "gap"], ["visits", "lcb"]
    sub = {t: {r: {"1": _rate(0.1 * (i + 1)), "2": _rate(0.2 * (i + 1) + 0.01 * j)} for j, r in enumerate(rules)}
           for i, t in enumerate(types)}
    sub["puct/selfplay"]["gap"]["1"]["stderr"] = None
    top = {t: {m: {"1": _rate(0.3), "2": _rate(0.4 + 0.1 * i)} for m in moves} for i, t in enumerate(types)}
    report = {"summary": {"game": "gardner_chess", "num_puzzles": 10, "num_simulations": 8, "stderr_over": "puzzles",
                          "trials": [1, 2], "search_types": types, "rules": rules, "moves": moves,
                          "sub_additive": sub, "max_over_latents": top}, "rows": []}
    _, numbers = figures_selection.selection(report)
    np.testing.assert_allclose(numbers["sub_additive"]["2"]["gumbel/extrinsic_only"]["rate"], [0.4, 0.41])
    np.testing.assert_allclose(numbers["max_over_latents"]["2"]["gumbel/extrinsic_only"]["rate"], [0.5, 0.5])
    assert np.isnan(numbers["sub_additive"]["1"]["puct/selfplay"]["stderr"][1])
    assert numbers["trials"] == [1, 2] and numbers["search_types"] == types


