"""The paper's claims decided from a results folder's reports: docs/reproduction.md's table.

Every claim is a difference between two measurements of the same training seed (AZdb
against its λ = 1 control or its AZ run of the same seed, a rule against player 0 of the
same network, ...), one value per seed; the claim's estimate is their mean and its
interval the two-sided 95 % Student-t interval over the seeds (n − 1 degrees of
freedom: with 3 seeds the half-width is 4.30 standard errors). Where a claim compares
numbers that are not paired by seed (the team of k AZ seeds), the interval is the normal
one of the difference of the two reports' standard errors.

The verdict follows from the interval alone:

- a claimed *gain* (the paper: AZdb's measure is larger) **agrees** when the whole
  interval lies above 0, **disagrees** when it lies below 0, and is **not settled** when
  it contains 0;
- a claimed *no loss* (the paper: the diverse players keep their strength) **agrees**
  when the interval's lower end is above −margin (50 Elo; 2 points of solve rate),
  **disagrees** when its upper end is below 0, and is **not settled** otherwise.

``decide(reports)`` takes the reports of ``GROUPS`` (``Results.read_report``) and skips
the claims whose group is missing; ``markdown(rows)`` is the table. The command is
``experiments/claims_table.py --results=DIR``.
"""

import math
from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

from azdb_jax.ratings import t_quantile

ELO_MARGIN = 50.0  # "within 50 Elo of AZ's player 0"
RATE_MARGIN = 0.02  # about one standard error of a 400-puzzle solve rate
GROUPS = ("occupancy", "openings", "solve_rates", "selection", "matches")  # the reports the claims read


def interval(per_seed: Sequence[float]) -> Dict[str, Any]:
    """Mean of the per-seed differences with its 95 % t interval (NaN half-width for one seed)."""
    values = np.asarray(per_seed, float)
    if values.size == 0:
        raise ValueError("a claim needs at least one seed's value")
    mean = float(values.mean())
    if values.size < 2:
        return {"mean": mean, "stderr": float("nan"), "half_width": float("nan"), "lo": float("nan"),
                "hi": float("nan"), "seeds": 1}
    se = float(values.std(ddof=1) / math.sqrt(values.size))
    half = t_quantile(values.size - 1) * se
    return {"mean": mean, "stderr": se, "half_width": half, "lo": mean - half, "hi": mean + half,
            "seeds": int(values.size)}


def verdict(lo: float, hi: float, kind: str, margin: float = 0.0) -> str:
    """``agrees`` / ``disagrees`` / ``not settled`` for a ``gain`` or ``no_loss`` claim (module docstring)."""
    if kind not in ("gain", "no_loss"):
        raise ValueError(f"kind must be 'gain' or 'no_loss', got {kind!r}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not settled"
    if kind == "gain":
        return "agrees" if lo > 0 else "disagrees" if hi < 0 else "not settled"
    return "disagrees" if hi < 0 else "agrees" if lo > -margin else "not settled"


def _row(claim: str, paper: str, measure: str, units: str, per_seed: Sequence[float], kind: str,
         margin: float = 0.0, **extra) -> Dict[str, Any]:
    """One claim decided from its per-seed values: labels, ``interval`` and ``verdict``."""
    out = {"claim": claim, "paper": paper, "measure": measure, "units": units, "kind": kind, "margin": margin,
           "per_seed": [float(v) for v in per_seed], **interval(per_seed)}
    out["verdict"] = verdict(out["lo"], out["hi"], kind, margin)
    out.update(extra)
    return out


claim_row = _row  # for the claims of other studies (azdb_jax.figures.nim)


def _by_seed(runs: Sequence[Mapping[str, Any]], key: str) -> Dict[int, float]:
    return {int(r["seed"]): float(r[key]) for r in runs}


def _paired(a: Mapping[int, float], b: Mapping[int, float]) -> List[float]:
    """``a[s] − b[s]`` over the seeds both have, in seed order."""
    return [a[s] - b[s] for s in sorted(set(a) & set(b))]


def _per_run(rates: Mapping[str, Any], column: str, runs: Sequence[str]) -> Dict[str, float]:
    return dict(zip(runs, rates[column]["all"]["per_run"]))


def _seed_of(run: str) -> int:
    return int(run.rsplit("_s", 1)[1])


def _solve_rows(report: Mapping[str, Any]) -> List[Dict[str, Any]]:
    s = report["summary"]
    rates, runs = s["rates"], s["runs"]
    azdb = {col: {_seed_of(r): v for r, v in _per_run(rates, col, runs["azdb"]).items()}
            for col in rates if col.startswith("azdb_")}
    az = {_seed_of(r): v for r, v in _per_run(rates, "az", runs["az"]).items()}
    n, rule = s["num_players"], s["default_rule"]
    rows = [
        _row("max over latents solves more puzzles than player 0", "Fig. 5", "solve rate: max over latents − player 0",
             "rate", _paired(azdb["azdb_max"], azdb["azdb_player_0"]), "gain"),
        _row("the latents add more than searching latent 0 again", "Fig. 5, 7",
             f"solve rate: max over {n} latents − max over latent 0 searched {n} times", "rate",
             _paired(azdb["azdb_max"], azdb["azdb_homogeneous_max"]), "gain"),
        _row(f"sub-additive planning ({rule.upper()} rule) solves more than player 0", "Fig. 5",
             f"solve rate: team under the {rule.upper()} rule − player 0", "rate",
             _paired(azdb[f"azdb_{rule}"], azdb["azdb_player_0"]), "gain"),
    ]
    for j in range(n):
        rows.append(_row(f"AZdb player {j} solves as many puzzles as AZ", "Fig. 5, 16",
                         f"solve rate: AZdb player {j} − AZ (same seed)", "rate",
                         _paired(azdb[f"azdb_player_{j}"], az), "no_loss", RATE_MARGIN))
    across = s.get("across_seeds") or {}
    k = len(runs["az"])

    def unpaired(claim, paper, measure, a, b, kind, margin=0.0):
        """A difference of two rates of the same puzzles, not paired by seed: normal interval
        from the two rates' standard errors."""
        diff, se = a["rate"] - b["rate"], math.hypot(a["stderr"], b["stderr"])
        row = _row(claim, paper, measure, "rate", [diff], kind, margin)
        row.update(stderr=se, half_width=1.96 * se, lo=diff - 1.96 * se, hi=diff + 1.96 * se,
                   interval_over="normal, the two rates' standard errors (not paired by seed)")
        row["verdict"] = verdict(row["lo"], row["hi"], kind, margin)
        return row

    # Fig. 5 (right) as the paper draws it: AZdb's latents of all its training seeds as one
    # team against AZ's training seeds as one team, by max over latents and by the rule.
    if "azdb_max" in across and "az_player_0" in across:
        rows.append(unpaired(
            f"AZdb's latents over {k} seeds solve more than AZ's {k} seeds, max over latents", "Fig. 5 (right)",
            f"solve rate: max over the {k} AZdb seeds' {k * n} latents − max over the {k} AZ seeds' players",
            across["azdb_max"]["all"], across["az_player_0"]["all"], "gain"))
    if f"azdb_{rule}" in across and f"az_{rule}" in across:
        rows.append(unpaired(
            f"AZdb's latents over {k} seeds solve more than AZ's {k} seeds, sub-additive ({rule.upper()})",
            "Fig. 5 (right)",
            f"solve rate: {rule.upper()} over the {k} AZdb seeds' latents − {rule.upper()} over the {k} AZ seeds",
            across[f"azdb_{rule}"]["all"], across[f"az_{rule}"]["all"], "gain"))
    # Our own question beside it (not the paper's comparison): one network's latents against
    # k AZ seeds, which costs k times the training.
    if "az_player_0" in across and "azdb_max" in rates:
        rows.append(unpaired(
            f"(our question, not the paper's) {n} latents of one network match {k} AZ training seeds as a team",
            "Fig. 5 (right), 7",
            f"solve rate: max over one AZdb network's {n} latents (mean over seeds) − max over the {k} AZ seeds' "
            "players", rates["azdb_max"]["all"], across["az_player_0"]["all"], "no_loss", RATE_MARGIN))
    return rows


def crossed_interval(values: Sequence[Sequence[float]]) -> Dict[str, Any]:
    """Mean of an a x b table over two arms' seeds (every seed of one against every seed of
    the other) with its 95 % t interval, both arms' seeds random
    (``results.crossed_mean_stderr``; Satterthwaite's degrees of freedom rounded down)."""
    from azdb_jax.reproduction.results import crossed_mean_stderr  # pylint: disable=g-import-not-at-top

    out = crossed_mean_stderr(values)
    half = t_quantile(max(1, int(math.floor(out["dof"])))) * out["stderr"]
    return {"mean": out["mean"], "stderr": out["stderr"], "half_width": half, "lo": out["mean"] - half,
            "hi": out["mean"] + half, "seeds": out["rows"], "dof": out["dof"],
            "interval_over": f"{out['rows']} x {out['cols']} seed pairings, both arms' seeds random "
                             "(two-way crossed random effects)"}


# Table 2's agents on the AZdb side: (agent, claim, measure label, kind).
_TABLE2_AGENTS = {
    "team_gap": ("AZdb's team (per-move GAP search, our reading) beats AZ at equal compute",
                 "the AZdb team (GAP rule over every latent's search at each move)", "gain"),
    "lookup": ("AZdb's sub-additive team as the paper builds it beats AZ",
               "AZdb's per-opening lookup team (each opening's best player on the other match seeds, "
               "App. C.5)", "gain"),
    "lookup_gap": ("AZdb's per-opening team, GAP rule over the held-out scores, beats AZ",
                   "AZdb's per-opening lookup team, the player chosen by the GAP rule over the other "
                   "match seeds' scores", "gain"),
}


def _side_rows(side: Mapping[str, Any], label: str) -> List[Dict[str, Any]]:
    """Table 2's rows of one side (AZdb or its λ = 1 control) against AZ: per agent, paired by
    seed, or over the crossed table of every pairing where the pairings cross the seeds."""
    pairings = side["pairings"]
    same = [p for p in pairings if int(p.get("az_seed", p["seed"])) == int(p["seed"])] or pairings
    seeds = [int(p["seed"]) for p in same]
    rows = []
    for agent, entry in side["agents"].items():
        if agent.startswith("player_"):
            name = agent.replace("_", " ")
            claim, measure, kind, margin = (f"{label} {name} is as strong as AZ", f"{label} {name}", "no_loss",
                                            ELO_MARGIN)
        elif agent in _TABLE2_AGENTS:
            claim, measure, kind = _TABLE2_AGENTS[agent]
            claim, measure, margin = claim.replace("AZdb", label), measure.replace("AZdb", label), 0.0
        else:
            continue
        table = entry.get("crossed")
        if table is None:
            per_seed = [p["agents"][agent]["elo_clipped"] for p in same]
            rows.append(_row(claim, "Table 2", f"Elo of {measure} against AZ (same seed)", "Elo", per_seed, kind,
                             margin, games_per_seed=[p["agents"][agent]["finished"] for p in same], seed_ids=seeds))
            continue
        cells = [v for line in table["table"] for v in line]
        row = _row(claim, "Table 2", f"Elo of {measure} against AZ (every seed against every AZ seed)", "Elo",
                   cells, kind, margin, side_seeds=table["side_seeds"], az_seeds=table["az_seeds"])
        row.update(crossed_interval(table["table"]))
        row["per_seed"] = [float(v) for v in cells]
        row["verdict"] = verdict(row["lo"], row["hi"], kind, margin)
        rows.append(row)
    return rows


def _match_rows(report: Mapping[str, Any]) -> List[Dict[str, Any]]:
    s = report["summary"]
    rows = _side_rows(s, "AZdb")
    if "control" in s:
        rows += _side_rows(s["control"], "the λ = 1 control's")
    return rows


def decide(reports: Mapping[str, Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """The claims' rows from the reports present (``{group: report}``, groups of ``GROUPS``)."""
    rows: List[Dict[str, Any]] = []
    if "occupancy" in reports:
        arms = reports["occupancy"]["summary"]["arms"]
        azdb, control = arms["azdb"]["runs"], arms["control"]["runs"]
        rows.append(_row("the players of one network play differently", "Fig. 2",
                         "ψ spread the run trained with (checkpoint): AZdb − λ = 1 control", "ψ distance",
                         _paired(_by_seed(azdb, "trained_psi_spread"), _by_seed(control, "trained_psi_spread")),
                         "gain"))
        games = reports["occupancy"]["summary"].get("games_per_player")
        rows.append(_row("the players of one network play differently", "Fig. 2, 18",
                         f"ψ spread of {games} self-play games per player: AZdb − λ = 1 control", "ψ distance",
                         _paired(_by_seed(azdb, "psi_spread"), _by_seed(control, "psi_spread")), "gain"))
    if "openings" in reports:
        arms = reports["openings"]["summary"]["arms"]
        rows.append(_row("the players of one network choose different moves", "Fig. 3",
                         "distinct moves per position among the players: AZdb − λ = 1 control", "moves",
                         _paired(_by_seed(arms["azdb"]["runs"], "distinct_mean"),
                                 _by_seed(arms["control"]["runs"], "distinct_mean")), "gain"))
    if "solve_rates" in reports:
        rows += _solve_rows(reports["solve_rates"])
    if "selection" in reports:
        s = reports["selection"]["summary"]
        algorithm, k = s["trained_algorithm"], str(max(s["trials"]))
        own = s["sub_additive"][f"{algorithm}/selfplay"]["gap"][k]["per_run"]
        ablation = s["sub_additive"][f"{algorithm}/extrinsic_only"]["gap"][k]["per_run"]
        rows.append(_row("the intrinsic terms help the team's search", "Fig. 8",
                         f"solve rate, GAP rule over {k} trials: searched as in self-play − extrinsic only",
                         "rate", [a - b for a, b in zip(own, ablation)], "gain"))
    if "matches" in reports:
        rows += _match_rows(reports["matches"])
    return rows


def _fmt(value: float, units: str, sign: bool = True) -> str:
    if not np.isfinite(value):
        return "n/a"
    if units == "rate":
        return f"{100 * value:+.1f}" if sign else f"{100 * value:.1f}"
    if units == "Elo":
        return f"{value:+.0f}" if sign else f"{value:.0f}"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The claims as a markdown table (solve rates in points, i.e. percent of the puzzles)."""
    lines = ["| paper | claim | measure (per seed, difference) | per seed | mean [95 % interval] | verdict |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        units = "points" if r["units"] == "rate" else r["units"]
        per_seed = ", ".join(_fmt(v, r["units"]) for v in r["per_seed"])
        span = (f"{_fmt(r['mean'], r['units'])} [{_fmt(r['lo'], r['units'])}, {_fmt(r['hi'], r['units'])}] {units}")
        lines.append(f"| {r['paper']} | {r['claim']} | {r['measure']} | {per_seed} | {span} | {r['verdict']} |")
    return "\n".join(lines)


__all__ = ["ELO_MARGIN", "GROUPS", "RATE_MARGIN", "claim_row", "crossed_interval", "decide", "interval", "markdown",
           "t_quantile", "verdict"]
