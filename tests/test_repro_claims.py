"""Tests of azdb_jax/reproduction/claims.py: intervals against scipy, verdicts, and the
claims of hand-built reports (paired by seed) against hand-computed values."""

import json
import math
import pathlib
import subprocess
import sys

import numpy as np
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
                         "across_seeds": {"az_player_0": {"all": {"rate": 0.35, "stderr": 0.02}},
                                          "azdb_max": {"all": {"rate": 0.45, "stderr": 0.02}},
                                          "azdb_gap": {"all": {"rate": 0.30, "stderr": 0.01}},
                                          "az_gap": {"all": {"rate": 0.30, "stderr": 0.02}}}}}
    matches = {"summary": {"pairings": [
        {"seed": 2, "agents": {"player_0": {"elo_clipped": 40.0, "finished": 48},
                               "team_gap": {"elo_clipped": 100.0, "finished": 48},
                               "lookup": {"elo_clipped": 30.0, "finished": 48}}},
        {"seed": 3, "agents": {"player_0": {"elo_clipped": -20.0, "finished": 48},
                               "team_gap": {"elo_clipped": 60.0, "finished": 48},
                               "lookup": {"elo_clipped": 10.0, "finished": 48}}}],
        "agents": {"player_0": {}, "team_gap": {}, "lookup": {}}}}
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
    assert seeds["mean"] == pytest.approx(0.29 - 0.35) and seeds["claim"].startswith("(our question, not the paper's)")
    assert seeds["hi"] == pytest.approx(-0.06 + 1.96 * math.hypot(0.01, 0.02)) and seeds["verdict"] == "disagrees"
    # Fig. 5 (right) as the paper draws it: AZdb's latents over its seeds against AZ's seeds.
    over = rows["solve rate: max over the 2 AZdb seeds' 4 latents − max over the 2 AZ seeds' players"]
    assert over["mean"] == pytest.approx(0.10) and over["lo"] == pytest.approx(0.10 - 1.96 * math.hypot(0.02, 0.02))
    assert over["verdict"] == "agrees" and over["paper"] == "Fig. 5 (right)"
    gap = rows["solve rate: GAP over the 2 AZdb seeds' latents − GAP over the 2 AZ seeds"]
    assert gap["mean"] == pytest.approx(0.0) and gap["verdict"] == "not settled"
    team = rows["Elo of the AZdb team (GAP rule over every latent's search at each move) against AZ (same seed)"]
    assert team["per_seed"] == [100.0, 60.0] and team["games_per_seed"] == [48, 48]
    assert team["lo"] == pytest.approx(80 - 12.706 * 20)
    lookup = rows["Elo of AZdb's per-opening lookup team (each opening's best player on the other match seeds, "
                  "App. C.5) against AZ (same seed)"]
    assert lookup["per_seed"] == [30.0, 10.0] and lookup["claim"] == "AZdb's sub-additive team as the paper builds it beats AZ"
    assert {r["paper"] for r in rows.values()} >= {"Fig. 2", "Fig. 5", "Table 2"}
    assert "| Table 2 | AZdb's sub-additive team as the paper builds it beats AZ |" in claims.markdown(
        list(rows.values()))
    # Only the groups present: no openings, selection or scaling claim here.
    assert not any(r["paper"] in ("Fig. 3", "Fig. 8") for r in rows.values())


def test_crossed_mean_stderr_by_hand_and_unbiased():
    from azdb_jax.reproduction.results import crossed_mean_stderr
    # 2 x 2 by hand: y = [[1, 3], [2, 6]]; mean 3; rows 2, 4; cols 1.5, 4.5.
    # MS_A = 2 * ((2-3)² + (4-3)²) / 1 = 4; MS_B = 2 * (1.5² + 1.5²) = 9;
    # residuals: 1-2-1.5+3 = 0.5, then ±0.5: MS_E = 4 * 0.25 = 1; var = (4 + 9 - 1) / 4 = 3.
    out = crossed_mean_stderr([[1, 3], [2, 6]])
    assert out["mean"] == pytest.approx(3.0) and out["stderr"] == pytest.approx(math.sqrt(3.0))
    # Satterthwaite: (12)² / (4²/1 + 9²/1 + 1²/1) = 144 / 98
    assert out["dof"] == pytest.approx(144 / 98)
    # With no row or column effect the floor (the residual's share) holds.
    floor = crossed_mean_stderr([[1, -1], [-1, 1]])
    assert floor["stderr"] == pytest.approx(math.sqrt(4.0 / 4)) and floor["dof"] == 1
    # Unbiased for the mean's variance under the model (Monte Carlo, 3 x 3 seeds).
    rng = np.random.default_rng(0)
    sa, sb, se = 1.0, 2.0, 0.5
    true = sa ** 2 / 3 + sb ** 2 / 3 + se ** 2 / 9
    draws = [crossed_mean_stderr(rng.normal(0, sa, (3, 1)) + rng.normal(0, sb, (1, 3)) + rng.normal(0, se, (3, 3)))
             for _ in range(4000)]
    assert np.mean([d["stderr"] ** 2 for d in draws]) == pytest.approx(true, rel=0.08)
    with pytest.raises(ValueError, match="a, b >= 2"):
        crossed_mean_stderr([[1.0, 2.0]])


def test_table2_over_every_pairing_uses_the_crossed_interval():
    cells = {(2, 2): 40.0, (2, 3): 0.0, (3, 2): 20.0, (3, 3): -10.0}
    pairings = [{"seed": a, "az_seed": b, "agents": {"player_0": {"elo_clipped": v, "finished": 48}}}
                for (a, b), v in cells.items()]
    from azdb_jax.reproduction import matches as matches_group
    table = matches_group.crossed(pairings, "player_0")
    assert table["table"] == [[40.0, 0.0], [20.0, -10.0]] and table["side_seeds"] == [2, 3]
    report = {"summary": {"pairings": pairings, "agents": {"player_0": {"crossed": table}}}}
    (row,) = claims.decide({"matches": report})
    expected = claims.crossed_interval([[40.0, 0.0], [20.0, -10.0]])
    assert row["mean"] == pytest.approx(12.5) and row["lo"] == pytest.approx(expected["lo"])
    assert row["measure"].endswith("(every seed against every AZ seed)") and "crossed" in row["interval_over"]
    # A grid with a hole is not crossed.
    assert matches_group.crossed(pairings[:3], "player_0") is None


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


def test_pairs_of_meets_seeds_by_number_or_every_seed():
    from types import SimpleNamespace  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import matches as matches_group  # pylint: disable=g-import-not-at-top

    sides = [SimpleNamespace(seed=s, name=f"azdb_s{s}") for s in (2, 3, 5)]
    azs = [SimpleNamespace(seed=s, name=f"az_s{s}") for s in (2, 3, 4)]
    same = matches_group.pairs_of(sides, azs, "same_seed")
    assert [(a.seed, b.seed) for a, b in same] == [(2, 2), (3, 3)]  # seed 5 has no az run
    every = matches_group.pairs_of(sides, azs, "all")
    assert [(a.seed, b.seed) for a, b in every] == [(a, b) for a in (2, 3, 5) for b in (2, 3, 4)]
    with pytest.raises(ValueError, match="unknown pairing mode"):
        matches_group.pairs_of(sides, azs, "random")


def test_match_pairing_settings_are_checked():
    from azdb_jax.reproduction import scales  # pylint: disable=g-import-not-at-top

    assert scales.SCALES["cpu"].eval.match_pairings == "all" and scales.SCALES["cpu16"].eval.match_pairings == "same_seed"
    with pytest.raises(ValueError, match="match_pairings"):
        scales.EvalSizes(match_pairings="random")
    with pytest.raises(ValueError, match="match_sides"):
        scales.EvalSizes(match_sides=("control",))
