"""colabs/tutorial.ipynb runs end to end on the shipped connect-four team, and what it
prints agrees with the rules it describes (checked here independently: legal moves, the
visit and value rules from the printed statistics, the match tally, the tiny run's records)."""

import json
import pathlib

import numpy as np
import pytest

from conftest import run_notebook  # pylint: disable=g-bad-import-order

pytestmark = pytest.mark.slow

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "colabs" / "tutorial.ipynb"

# Moves played from the empty board in the notebook's three positions (columns 0-6).
POSITIONS = ([], [3, 3, 2], [3, 2, 3, 2, 3])


def _legal(columns):
    height = [0] * 7
    for c in columns:
        height[c] += 1
    return [h < 6 for h in height]


def test_tutorial_runs_and_its_numbers_hold(tmp_path):
    notebook = run_notebook(NOTEBOOK, tmp_path)
    last = notebook.cells[-1]
    text = "".join(o.get("text", "") for o in last.outputs if o.get("output_type") == "stream")
    results = json.loads(text.strip().splitlines()[-1])
    players = results["players"]
    assert players == 3 and results["iteration"] == 120

    visits, values, moves = (np.asarray(results[k]) for k in ("visits", "values", "moves"))
    assert visits.shape == (len(POSITIONS), players, 7) and moves.shape == (len(POSITIONS), players)
    for p, columns in enumerate(POSITIONS):
        legal = _legal(columns)
        for i in range(players):
            move = moves[p, i]
            assert legal[move], (p, i, move)
            assert visits[p, i, move] == visits[p, i].max(), (p, i)  # the most-visited move
            assert not any(visits[p, i, c] for c in range(7) if not legal[c])  # illegal moves never searched
    rules = results["rules"]
    assert set(rules) == {"visit", "value", "lcb", "gap"}
    for rule, chosen in rules.items():
        for p in range(len(POSITIONS)):
            assert chosen["action"][p] == moves[p, chosen["player"][p]], (rule, p)  # the chosen player's move
    assert rules["visit"]["player"] == [int(np.argmax(visits[p].max(axis=-1))) for p in range(len(POSITIONS))]
    assert rules["value"]["player"] == [int(np.argmax(values[p])) for p in range(len(POSITIONS))]

    match = results["match"]
    assert match["games"] == 8 and match["wins"] + match["draws"] + match["losses"] + match["unfinished"] == 8

    trained = results["trained"]
    assert trained["iterations"] == [1, 2, 3, 4] and trained["step"] == 4
    distances = np.asarray(trained["distances"])
    assert distances.shape == (4, 3) and np.isfinite(distances).all() and (distances >= 0).all()
    records = [json.loads(line) for line in (pathlib.Path(trained["workdir"]) / "metrics.jsonl").read_text().splitlines()]
    assert [[r[f"d_{i}"] for i in range(3)] for r in records if r.get("kind") == "train"] == trained["distances"]
