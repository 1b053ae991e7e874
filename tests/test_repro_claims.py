"""Tests of azdb_jax/reproduction/claims.py: intervals against scipy, verdicts, and the
claims of hand-built reports (paired by seed) against hand-computed values."""

import json
import math
import pathlib
import subprocess
import sys

import pytest
from scipy import stats

from azdb_jax.reproduction import claims

_SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "experiments" / "claims_table.py"


def test_t_quantiles_and_intervals_match_scipy():
    for dof in (1, 2, 3, 5, 10, 30):
        assert claims.t_quantile(dof) == pytest.approx(stats.t.ppf(0.975, dof), abs=1e-3)
    assert claims.t_quantile(200) == 1.96
    with pytest.raises(ValueError, match="degrees of freedom"):
        claims.t_quantile(0)
    values = [0.3, -0.1, 0.5]
    out = claims.interval(values)
    lo, hi = stats.t.interval(0.95, 2, loc=sum(values) / 3, scale=stats.sem(values))
    assert out["lo"] == pytest.approx(lo, abs=1e-3) and out["hi"] == pytest.approx(hi, abs=1e-3)
    assert out["seeds"] == 3 and math.isnan(claims.interval([1.0])["half_width"])


def test_verdicts_follow_from_the_interval():
    assert claims.verdict(0.1, 0.5, "gain") == "agrees"
    assert claims.verdict(-0.5, -0.1, "gain") == "disagrees"
    assert claims.verdict(-0.1, 0.5, "gain") == "not settled"
    assert claims.verdict(-40, 80, "no_loss", 50) == "agrees"  # loses at most 40 < 50
    assert claims.verdict(-60, 80, "no_loss", 50) == "not settled"
    assert claims.verdict(-90, -10, "no_loss", 50) == "disagrees"
    assert claims.verdict(float("nan"), 1.0, "gain") == "not settled"
    with pytest.raises(ValueError, match="kind"):
        claims.verdict(0, 1, "better")


def _run(seed, **values):
    return {"seed": seed, **values}


def _reports():
    occupancy = {"summary": {"games_per_player": 32, "arms": {
        "azdb": {"runs": [_run(2, trained_psi_spread=0.30, psi_spread=0.5), _run(3, trained_psi_spread=0.20,
                                                                                 psi_spread=0.4)]},
        # listed out of seed order: the claim pairs by seed, not by position
        "control": {"runs": [_run(3, trained_psi_spread=0.15, psi_spread=0.45),
                             _run(2, trained_psi_spread=0.10, psi_spread=0.5)]}}}}

    def rate(per_run):
        return {"all": {"rate": sum(per_run) / len(per_run), "stderr": 0.01, "per_run": per_run}}

    solve = {"summary": {"num_players": 2, "default_rule": "gap",
                         "runs": {"az": ["az_s2", "az_s3"], "azdb": ["azdb_s2", "azdb_s3"]},
                         "rates": {"az": rate([0.25, 0.20]), "azdb_player_0": rate([0.24, 0.22]),
                                   "azdb_player_1": rate([0.20, 0.18]), "azdb_max": rate([0.30, 0.28]),
                                   "azdb_homogeneous_max": rate([0.29, 0.29]), "azdb_gap": rate([0.25, 0.22])},
                         "across_seeds": {"az_player_0": {"all": {"rate": 0.35, "stderr": 0.02}}}}}
    matches = {"summary": {"pairings": [
        {"seed": 2, "agents": {"player_0": {"elo_clipped": 40.0, "finished": 48},
                               "team_gap": {"elo_clipped": 100.0, "finished": 48}}},
        {"seed": 3, "agents": {"player_0": {"elo_clipped": -20.0, "finished": 48},
                               "team_gap": {"elo_clipped": 60.0, "finished": 48}}}],
        "agents": {"player_0": {}, "team_gap": {}}}}
    return {"occupancy": occupancy, "solve_rates": solve, "matches": matches}


def test_claims_of_hand_built_reports():
    rows = {r["measure"]: r for r in claims.decide(_reports())}
    psi = rows["ψ spread the run trained with (checkpoint): AZdb − λ = 1 control"]
    assert psi["per_seed"] == pytest.approx([0.20, 0.05])  # seed 2: 0.30 − 0.10, seed 3: 0.20 − 0.15
    # mean 0.125, SE = |0.20 − 0.05| / 2 = 0.075, t(1) = 12.706
    assert psi["mean"] == pytest.approx(0.125) and psi["half_width"] == pytest.approx(12.706 * 0.075)
    assert psi["verdict"] == "not settled"
    maximum = rows["solve rate: max over latents − player 0"]
    assert maximum["per_seed"] == pytest.approx([0.06, 0.06]) and maximum["verdict"] == "agrees"  # SE 0
    again = rows["solve rate: max over 2 latents − max over latent 0 searched 2 times"]
    assert again["per_seed"] == pytest.approx([0.01, -0.01]) and again["verdict"] == "not settled"
    strength = rows["solve rate: AZdb player 1 − AZ (same seed)"]
    assert strength["per_seed"] == pytest.approx([-0.05, -0.02]) and strength["kind"] == "no_loss"
    seeds = rows["solve rate: max over one AZdb network's 2 latents (mean over seeds) − max over the 2 AZ seeds' players"]
    assert seeds["mean"] == pytest.approx(0.29 - 0.35)
    assert seeds["hi"] == pytest.approx(-0.06 + 1.96 * math.hypot(0.01, 0.02)) and seeds["verdict"] == "disagrees"
    team = rows["Elo of the AZdb team (GAP rule) against AZ (same seed)"]
    assert team["per_seed"] == [100.0, 60.0] and team["games_per_seed"] == [48, 48]
    assert team["lo"] == pytest.approx(80 - 12.706 * 20)
    assert {r["paper"] for r in rows.values()} >= {"Fig. 2", "Fig. 5", "Table 2"}
    assert "| Table 2 | AZdb's team beats AZ at equal compute |" in claims.markdown(list(rows.values()))
    # Only the groups present: no openings, selection or scaling claim here.
    assert not any(r["paper"] in ("Fig. 3", "Fig. 8") for r in rows.values())


@pytest.mark.slow
def test_command_prints_the_table_and_names_a_folder_without_reports(tmp_path):
    folder = tmp_path / "results"
    (folder / "eval").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"scale": "ci", "runs": {}, "figures": {}}))
    done = subprocess.run([sys.executable, str(_SCRIPT), f"--results={folder}"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and "holds none of the reports" in done.stderr, done.stderr
    for group, report in _reports().items():
        (folder / "eval" / f"{group}.json").write_text(json.dumps(report))
    out = tmp_path / "claims.json"
    done = subprocess.run([sys.executable, str(_SCRIPT), f"--results={folder}", f"--out={out}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "| Fig. 5 | max over latents solves more puzzles than player 0 |" in done.stdout
    assert len(json.loads(out.read_text())) == len(claims.decide(_reports()))
