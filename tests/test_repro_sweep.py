"""Figure group sweep: settings of the diversity term side by side.

A ci_sweep folder is built from the trained ci folder (AZ, the control and the azdb run,
whose config is the sweep's first setting) plus one setting trained here; the notebook
runs end to end on it. Its numbers are then checked against independent computations:
W/D/L from the game rows, the pooled Elo by the hand formula, the training numbers from
metrics.jsonl, the distinct moves against a recount.
"""

import json
import math
import pathlib
import shutil

import numpy as np
import pytest

from azdb_jax import reproduction
from azdb_jax.reproduction import scales, sweep

from conftest import figure_numbers, run_notebook  # pylint: disable=g-bad-import-order

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"


def test_sweep_scales_pin_each_setting_and_keep_the_budget():
    for name, base in (("cpu_sweep", "cpu"), ("ci_sweep", "ci")):
        scale, base_scale = scales.get_scale(name), scales.get_scale(base)
        specs = scales.run_specs(scale)
        assert {s.arm for s in specs} == {"az", "control", *(v.name for v in scale.variants)}
        assert scale.groups == ("sweep",) and reproduction.scale_groups(scale) == ("sweep",)
        assert "sweep" not in reproduction.scale_groups(base_scale)
        budget = {(s.config.run.num_iterations, s.config.selfplay, s.config.search, s.config.network)
                  for s in specs}
        assert len(budget) == 1  # equal compute: only the team and the diversity term differ
        azdb = scales.arm_config(base_scale, "azdb", 0)
        for variant in scale.variants:
            lam = float(variant.overrides[0].split("=")[1])
            l0 = float(variant.overrides[1].split("=")[1])
            config = scales.arm_config(scale, variant.name, 1)
            assert (config.team.lam, config.diversity.l0, config.run.seed) == (lam, l0, 1)
            assert config.team.num_players == base_scale.num_players and config.team.matchmaker == "psro_nash"
            assert config.selfplay == azdb.selfplay and config.run.num_iterations == azdb.run.num_iterations
    cpu = scales.get_scale("cpu_sweep")
    assert scales.get_scale("cpu_sweep").eval.match_games >= 100
    assert dict((v.name, v.overrides) for v in cpu.variants)["azdb_ref"] == ("team.lam=0.9", "diversity.l0=1.5")


@pytest.fixture(scope="module")
def sweep_folder(ci_results, tmp_path_factory):
    """A ci_sweep folder: the ci folder's az, control and azdb runs (the first setting's config
    exactly) copied in, the other setting trained."""
    root = tmp_path_factory.mktemp("ci_sweep")
    results = reproduction.Results(root, "ci_sweep")
    ci = reproduction.Results(ci_results)
    for arm, source in (("az", "az"), ("control", "control"), ("azdb_lam090", "azdb")):
        assert scales.arm_config(results.scale, arm, 0) == scales.arm_config(ci.scale, source, 0)
        shutil.copytree(ci.run(f"{source}_s0").workdir, results.run(f"{arm}_s0").workdir)
    reproduction.train_runs(results, progress=False)
    return root


def test_sweep_notebook_and_its_numbers(sweep_folder, ci_results):
    run_notebook(COLABS / "sweep.ipynb", sweep_folder)
    report = json.loads((sweep_folder / "eval" / "sweep.json").read_text())
    summary, rows = report["summary"], report["rows"]
    assert set(summary["arms"]) == {"control", "azdb_lam090", "azdb_lam050"}
    games = summary["games_per_pairing"]
    assert games == 2 * len(summary["openings"]) * len(summary["match_seeds"]) >= 4
    for arm, entry in summary["arms"].items():
        (run,) = summary["runs"][arm]
        for player in run["players"]:
            mine = [r["score"] for r in rows if r["pairing"].startswith(run["run"] + " ")
                    and r["agent"] == f"player_{player['player']}"]
            assert len(mine) == games
            counts = (mine.count(1.0), mine.count(0.0), mine.count(-1.0))
            assert (player["wins"], player["draws"], player["losses"]) == counts
        for pooled in entry["players"]:  # one seed: pooled = that seed; Elo by the hand formula
            p = (pooled["wins"] + pooled["draws"] / 2) / pooled["games"]
            n = pooled["games"]
            p = min(max(p, 0.5 / n), 1 - 0.5 / n)
            assert pooled["elo"] == pytest.approx(-400 * math.log10(1 / p - 1))
        # training numbers: the last iterations of the run's own metrics.jsonl
        records = [json.loads(line) for line in
                   (sweep_folder / "runs" / run["run"] / "metrics.jsonl").read_text().splitlines()]
        last = [r for r in records if r["kind"] == "train"][-sweep.LAST_ITERATIONS:]
        assert run["training"]["plies_per_game"] == pytest.approx(np.mean([r["plies_per_game"] for r in last]))
        assert run["training"]["intrinsic_share"] == pytest.approx(np.mean([r["intrinsic_share"] for r in last]))
        diverse = arm != "control"
        assert (run["training"]["intrinsic_share"] > 0) == diverse
        assert run["search_lambdas"][0] == 1.0 and (min(run["search_lambdas"]) < 1.0) == diverse
        assert 1.0 <= run["distinct_mean"] <= 3.0
        if arm == "control":
            assert run["distinct_vs_control"] == 0.0  # the control against itself, same positions
    numbers = figure_numbers(sweep_folder, "sweep_tradeoff")
    assert numbers["arms"] == list(summary["arms"])
    entry = summary["arms"]["azdb_lam050"]
    assert numbers["azdb_lam050"]["elo_diverse"] == pytest.approx(np.mean([p["elo"] for p in entry["players"][1:]]))
    text = sweep.table(report)
    assert text.count("\n") == 2 + sum(len(e["players"]) for e in summary["arms"].values()) - 1
    with pytest.raises(ValueError, match="no variants"):
        sweep.evaluate(reproduction.Results(ci_results))
