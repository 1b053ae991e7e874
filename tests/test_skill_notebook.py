"""colabs/skill_compatible.ipynb at the ci scale, end to end: it trains the strong run, attunes
a senior to each framework, plays every match and draws Table 1, Table 2 and Fig. 4; the
saved numbers are checked against the report and recomputed from the games' counts."""

import json
import pathlib

import numpy as np
import pytest

from conftest import run_notebook  # pylint: disable=g-bad-import-order

pytestmark = pytest.mark.slow

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"

# The ci scale plays the tree and attuned seniors in every framework.
CI_ROWS = [("stt", "tree"), ("stt", "attuned"), ("hb", "tree"), ("hb", "attuned"), ("regular", "tree"),
           ("regular", "attuned_stt"), ("regular", "attuned_hb")]


def _score_and_se(wins, draws, losses):
    outcomes = np.array([1.0] * wins + [0.5] * draws + [0.0] * losses)
    return outcomes.mean(), float(np.sqrt(outcomes.var() / outcomes.size))


@pytest.fixture(scope="module")
def skill_root(tmp_path_factory):
    import os  # pylint: disable=g-import-not-at-top

    root = tmp_path_factory.mktemp("skill_ci")
    saved = {k: os.environ.get(k) for k in ("AZDB_SKILL_SCALE", "AZDB_SKILL_ROOT")}
    os.environ.update(AZDB_SKILL_SCALE="ci", AZDB_SKILL_ROOT=str(root))
    try:
        notebook = run_notebook(COLABS / "skill_compatible.ipynb", root)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root, notebook


def _figure(root, name):
    path = root / "figures" / f"{name}.json"
    assert path.is_file(), name
    return json.loads(path.read_text())


def test_notebook_plays_every_ci_match_and_table1_is_the_report(skill_root):
    from azdb_jax.skill import experiment  # pylint: disable=g-import-not-at-top

    root, notebook = skill_root
    report = experiment.read_tables(root / "tables")
    assert report["complete"] and report["game"] == "gardner_chess"
    assert [(m["framework"], m["focal"]) for m in report["matches"]] == CI_ROWS
    assert set(report["juniors"]) == {"vs_random", "vs_strong"}
    for item in [*report["matches"], *report["juniors"].values()]:
        assert item["wins"] + item["draws"] + item["losses"] == item["games"] == 2
        score, se = _score_and_se(item["wins"], item["draws"], item["losses"])
        assert item["score"] == pytest.approx(score) and item["score_stderr"] == pytest.approx(se, abs=1e-12)

    table1 = _figure(root, "table1_scores")
    assert (root / "figures" / "table1_scores.png").stat().st_size > 0
    for m in report["matches"]:
        row = "attuned_" + m["framework"] if m["focal"] == "attuned" else m["focal"]
        cell = table1["scores"][row][m["framework"]]
        assert (cell["wins"], cell["draws"], cell["losses"], cell["score"]) == (m["wins"], m["draws"], m["losses"],
                                                                               m["score"])
    assert table1["junior"]["strong"]["score"] == report["juniors"]["vs_strong"]["score"]
    # The verdict cell prints one line per senior, with its numbers.
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    for row, cells in table1["scores"].items():
        line = next(ln for ln in printed.splitlines() if ln.startswith(row + " "))
        for framework, cell in cells.items():
            assert f"{framework} {cell['score']:.3f} ± {cell['score_stderr']:.3f}" in line


def test_notebook_delta_tables_recompute_from_the_loss_rows(skill_root):
    from azdb_jax.skill import experiment  # pylint: disable=g-import-not-at-top

    root, _ = skill_root
    report = experiment.read_tables(root / "tables")
    losses = {(r["focal"], r["agent"], r["condition"]): r for r in report["losses"]}
    table2 = _figure(root, "table2_delta")["delta"]
    assert set(table2) == {"tree", "attuned"}
    for focal, deltas in table2.items():
        for key, (first, second) in experiment.DELTAS.items():
            a, b = losses[(focal, first, "*")], losses[(focal, second, "*")]
            assert deltas[key]["delta"] == pytest.approx(a["loss"] - b["loss"])
            assert deltas[key]["se"] == pytest.approx(float(np.hypot(a["se"], b["se"])))
    fig4 = _figure(root, "fig4_delta_by_strength")
    assert (root / "figures" / "fig4_delta_by_strength.png").stat().st_size > 0
    for focal, sides in fig4.items():
        for who in ("senior", "junior"):
            item = sides[who + "s"]
            assert item["bands"] == ["w in [0, 20)", "w in [20, 40)", "w in [40, 60)", "w in [60, 80)",
                                     "w in [80, 100]"]
            for band, delta in zip(item["bands"], item["delta"]):
                a, b = losses.get((focal, "alter_" + who, band)), losses.get((focal, "focal_" + who, band))
                if a is None or b is None or not (np.isfinite(a["loss"]) and np.isfinite(b["loss"])):
                    assert delta is None  # no value: JSON null
                else:
                    assert delta == pytest.approx(a["loss"] - b["loss"])


def test_notebook_runs_are_loadable_and_a_second_pass_trains_nothing(skill_root):
    import jax  # pylint: disable=g-import-not-at-top

    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.skill import reproduce  # pylint: disable=g-import-not-at-top

    root, _ = skill_root
    strong = loading.load_team(root / "strong")
    assert strong.step == 2 and loading.load_team(root / "strong", step=1).step == 1  # the junior's checkpoint
    for framework in ("stt", "hb"):
        folder = root / f"attuned_{framework}"
        assert json.loads((folder / "attuned.json").read_text())["framework"] == framework
        assert len((folder / "attuned_metrics.jsonl").read_text().splitlines()) == 1
        team = loading.load_team(folder)
        moved = jax.tree_util.tree_leaves(jax.tree.map(lambda a, b: float(np.abs(np.asarray(a) - np.asarray(b)).max()),
                                                       team.params, strong.params))
        assert max(moved) > 0  # fine-tuned away from the strong network
    tables = root / "tables" / "skill_compat.json"
    before = tables.stat().st_mtime_ns
    lines = []
    report = reproduce.reproduce("ci", root, log=lines.append, progress=False)
    assert report["complete"] and not lines and tables.stat().st_mtime_ns == before
    with pytest.raises(ValueError, match="unknown skill-compatibility scale"):
        reproduce.get_scale("laptop")
