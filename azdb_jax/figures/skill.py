"""Tables and figures of the skill-compatibility report (Hamade et al. 2024, Tables 1-2, Fig. 4).

All read the report of ``azdb_jax.skill.experiment.play_tables`` (``skill_compat.json``);
each returns what it shows as plain numbers beside the table or figure.

- ``score_table``: Table 1 — each focal senior's score against the strong player in STT,
  HB and regular play (the paper's question: above ½ in the frameworks, below in regular
  play), and the junior's own strength;
- ``delta_table``: Table 2 — ``ΔG`` of the STT matches: the strong team's agent's mean
  loss minus the focal team's (positive: the focal side loses less);
- ``score_bars``: Table 1 as a picture;
- ``delta_by_strength``: Fig. 4 — ``ΔG`` of the seniors and of the juniors by the mover's
  win probability before the move.
"""

import math
from typing import Any, Dict, List, Tuple

import numpy as np

FRAMEWORK_LABELS = {"stt": "STT", "hb": "HB", "regular": "regular"}
DELTA_LABELS = {"alter_senior-focal_senior": "seniors", "alter_junior-focal_junior": "juniors",
                "alter_team-focal_team": "teams"}


def _row_label(match: Dict[str, Any]) -> str:
    """The attuned senior of a framework is its own row (one network per framework)."""
    if match["focal"] == "attuned":
        return f"attuned_{match['framework']}"
    return match["focal"]


def _cell(item: Dict[str, Any]) -> str:
    return f"{item['score']:.3f} ± {item['score_stderr']:.3f} ({item['wins']}/{item['draws']}/{item['losses']})"


def _frameworks(report: Dict[str, Any]) -> List[str]:
    seen = [m["framework"] for m in report["matches"]]
    return [f for f in FRAMEWORK_LABELS if f in seen]


def score_table(report: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """Table 1: a markdown table (rows: focal seniors; columns: frameworks; cells: score ±
    SE and W/D/L against the strong player's team) and its numbers
    ``{"scores": {senior: {framework: {...}}}, "junior": {opponent: {...}}}``."""
    frameworks = _frameworks(report)
    scores: Dict[str, Dict[str, Any]] = {}
    for match in report["matches"]:
        scores.setdefault(_row_label(match), {})[match["framework"]] = {
            k: match[k] for k in ("score", "score_stderr", "wins", "draws", "losses", "games")}
    lines = ["| focal senior | " + " | ".join(f"{FRAMEWORK_LABELS[f]} vs strong" for f in frameworks) + " |",
             "|---|" + "---|" * len(frameworks)]
    for senior, row in scores.items():
        lines.append(f"| {senior} | " + " | ".join(_cell(row[f]) if f in row else "—" for f in frameworks) + " |")
    junior = {name[3:]: {k: item[k] for k in ("score", "score_stderr", "wins", "draws", "losses", "games")}
              for name, item in report.get("juniors", {}).items()}
    if junior:
        lines += ["", "| junior (regular play) vs | score ± SE (W/D/L) |", "|---|---|"]
        lines += [f"| {name} | {_cell(item)} |" for name, item in junior.items()]
    engines = report.get("engines", {})
    if engines:
        lines += ["", "| regular play | score ± SE (W/D/L) | Elo vs the engine ± SE |", "|---|---|---|"]
        lines += [f"| {name.split('_vs_')[0]} vs {item['engine']} | {_cell(item)} | {item['elo']:+.0f} ± "
                  f"{item['elo_stderr']:.0f} |" for name, item in engines.items()]
    return "\n".join(lines), {"scores": scores, "junior": junior, "engines": engines}


def delta_table(report: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """Table 2: ``ΔG(strong team's agent, focal team's agent, *)`` of every STT match, in
    win-probability points (0-100), ± SE from resampling games."""
    deltas = {m["focal"]: m["delta"] for m in report["matches"] if m["framework"] == "stt" and "delta" in m}
    lines = ["| STT focal senior | " + " | ".join(f"ΔG {label}" for label in DELTA_LABELS.values()) + " |",
             "|---|" + "---|" * len(DELTA_LABELS)]
    for senior, delta in deltas.items():
        lines.append(f"| {senior} | " + " | ".join(f"{delta[k]['delta']:+.2f} ± {delta[k]['se']:.2f}"
                                                   for k in DELTA_LABELS) + " |")
    return "\n".join(lines), {"delta": deltas}


def score_bars(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Table 1 as bars: each senior's score against the strong player per framework (± SE);
    the dashed line is an even score."""
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    _, numbers = score_table(report)
    scores = numbers["scores"]
    frameworks = _frameworks(report)
    seniors = list(scores)
    width = 0.8 / max(len(frameworks), 1)
    fig, ax = plt.subplots(figsize=(1.3 * len(seniors) + 2.5, 3.4), constrained_layout=True)
    for i, framework in enumerate(frameworks):
        x = [s for s, senior in enumerate(seniors) if framework in scores[senior]]
        y = [scores[seniors[s]][framework]["score"] for s in x]
        err = [scores[seniors[s]][framework]["score_stderr"] for s in x]
        ax.bar(np.asarray(x) + (i - (len(frameworks) - 1) / 2) * width, y, width, yerr=err, capsize=3,
               label=FRAMEWORK_LABELS[framework])
    ax.axhline(0.5, color="grey", ls="--", lw=0.8)
    ax.set_xticks(range(len(seniors)))
    ax.set_xticklabels(seniors, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("score against the strong player")
    ax.legend(fontsize=7)
    ax.set_title(f"{report.get('game', '')}: {report['games']} games per match, junior {report['junior_kind']} "
                 f"({report['junior']})", fontsize=8)
    return fig, numbers


def delta_by_strength(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 4: ``ΔG`` of the seniors and of the juniors of each STT match by the mover's win
    probability before the move (bands of 20 points), ± SE; bands without moves are gaps.

    Returns:
      (figure, numbers): ``{focal: {"seniors"|"juniors": {"bands", "delta", "se"}}}``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    by = {(r["focal"], r["agent"], r["condition"]): r for r in report["losses"] if r["framework"] == "stt"}
    focals = list(dict.fromkeys(r["focal"] for r in report["losses"] if r["framework"] == "stt"))
    bands = list(dict.fromkeys(r["condition"] for r in report["losses"] if r["condition"] != "*"))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True, constrained_layout=True)
    numbers: Dict[str, Any] = {}
    for ax, who in zip(axes, ("senior", "junior")):
        for f, focal in enumerate(focals):
            delta, se = [], []
            for band in bands:
                a, b = by.get((focal, f"alter_{who}", band)), by.get((focal, f"focal_{who}", band))
                if a is None or b is None or not (math.isfinite(a["loss"]) and math.isfinite(b["loss"])):
                    delta.append(float("nan"))
                    se.append(float("nan"))
                    continue
                delta.append(a["loss"] - b["loss"])
                se.append(float(np.hypot(a["se"], b["se"])))
            numbers.setdefault(focal, {})[f"{who}s"] = {"bands": bands, "delta": delta, "se": se}
            x = np.arange(len(bands)) + (f - (len(focals) - 1) / 2) * 0.12
            ax.errorbar(x, delta, yerr=se, marker="o", capsize=3, label=focal)
        ax.axhline(0.0, color="grey", ls="--", lw=0.8)
        ax.set_xticks(range(len(bands)))
        ax.set_xticklabels([b.replace("w in ", "") for b in bands], fontsize=7)
        ax.set_xlabel("mover's win probability before the move (%)")
        ax.set_title(f"ΔG(strong team's {who}, focal team's {who})", fontsize=9)
    axes[0].set_ylabel("ΔG (win-probability points)")
    axes[0].legend(fontsize=7)
    return fig, numbers


__all__ = ["delta_by_strength", "delta_table", "score_bars", "score_table"]
