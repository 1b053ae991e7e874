"""Figures of the ``puzzle_starts`` group (paper Table 1, Fig. 4, 20) from its report.

``solve_rates`` draws Table 1 as bars (one per row: solve rate ± SE of its arm on its set,
and its paired difference from AZ);
``move_values`` draws, for one puzzle position, each arm's prior, raw value and search
value per legal move (Fig. 4, 20), correct moves in blue and the others in red.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

ARM_LABELS = {"az": "AZ", "az_starts_random": "AZ + puzzle starts (random split)",
              "az_starts_ood": "AZ + puzzle starts (OOD split)", "az_starts": "AZ + puzzle starts",
              "az_starts_intermediate": "+ intermediate positions", "az_starts_exploration": "+ exploration",
              "az_starts_halfmove": "+ half-move clock"}
SET_LABELS = {"random_heldout": "random split: held out", "ood_heldout": "OOD group: held out",
              "random_train": "random split: trained from", "ood_train": "OOD split: trained from",
              "all_train": "every puzzle"}
ARM_COLOURS = {"az": "black", "az_starts_random": "tab:blue", "az_starts_ood": "tab:cyan", "az_starts": "tab:green",
               "az_starts_intermediate": "tab:olive", "az_starts_exploration": "tab:orange",
               "az_starts_halfmove": "tab:red"}
CORRECT, WRONG = "tab:blue", "tab:red"


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _percent_difference(item: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if item is None:
        return None
    return {**item, "difference": 100.0 * _number(item["difference"]), "stderr": 100.0 * _number(item["stderr"])}


def solve_rates(report: Dict[str, Any], *, sets: Optional[Sequence[str]] = None) -> Tuple[Any, Dict[str, Any]]:
    """Table 1: one bar per row, its arm's solve rate (%) on its set ± SE, coloured by arm;
    hatched where the arm trained from the set's puzzles; above each bar but AZ's, its paired
    difference from AZ on the same puzzles (points ± SE).

    Returns:
      (figure, numbers): ``rates`` {arm: {set: {solve_rate, stderr, num_puzzles,
      trained_share}}} in % for every arm and set (``sets``: default all), and ``table1``
      (the paper's rows, as drawn, each with ``vs_az`` and ``vs_previous``: the paired
      difference in points and its SE, or None).
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    names = list(sets) if sets is not None else list(next(iter(summary["arms"].values()))["sets"])
    rates: Dict[str, Dict[str, Any]] = {}
    for arm, item in summary["arms"].items():
        rates[arm] = {name: {"solve_rate": 100.0 * _number(item["sets"][name]["solve_rate"]),
                             "stderr": 100.0 * _number(item["sets"][name]["stderr"]),
                             "num_puzzles": item["sets"][name]["num_puzzles"],
                             "trained_share": _number(item["sets"][name]["trained_share"])} for name in names}
    table1 = [{"row": r["row"], "arm": r["arm"], "set": r["set"], "solve_rate": 100.0 * _number(r["solve_rate"]),
               "stderr": 100.0 * _number(r["stderr"]), "num_puzzles": r["num_puzzles"],
               "trained_share": _number(r.get("trained_share")),
               **{key: _percent_difference(r.get(key)) for key in ("vs_az", "vs_previous")}}
              for r in summary["table1"]]
    fig, ax = plt.subplots(figsize=(0.75 * len(table1) + 3.0, 4.2), constrained_layout=True)
    for k, row in enumerate(table1):
        err = row["stderr"] if np.isfinite(row["stderr"]) else 0.0
        ax.bar(k, row["solve_rate"], 0.7, yerr=err, capsize=3, color=ARM_COLOURS.get(row["arm"], f"C{k}"),
               hatch="//" if row["trained_share"] > 0 else None, edgecolor="white")
        if row["vs_az"] is not None:  # the paired difference from AZ on the same puzzles
            ax.annotate(f"{row['vs_az']['difference']:+.0f}±{_number(row['vs_az']['stderr']):.0f}",
                        (k, row["solve_rate"] + err), xytext=(0, 3), textcoords="offset points", ha="center",
                        fontsize=6)
    ax.set_xticks(range(len(table1)))
    ax.set_xticklabels([f"{r['row']}\n[{SET_LABELS.get(r['set'], r['set'])}]" for r in table1], rotation=35,
                       ha="right", fontsize=7)
    ax.set_ylabel("solve rate (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"Self-play from puzzle positions ({summary['num_simulations']} simulations; hatched: trained "
                 f"from)", fontsize=9)
    return fig, {"units": "%", "sets": names, "rates": rates, "table1": table1}


def move_values(report: Dict[str, Any], position: int = 0, *, max_moves: int = 12) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 4 / 20: one puzzle position; per legal move each arm's prior (top), raw value
    of the position after the move (middle) and search value Q (bottom; NaN: not visited),
    all for the side to move. Tick labels: blue correct moves, red the others.

    With more than ``max_moves`` legal moves, the correct ones and the highest-prior
    others (by AZ's prior) are shown.

    Returns:
      (figure, numbers): ``position`` (FEN, puzzle, step, solution), ``moves``,
      ``correct`` and per arm ``prior``, ``raw_value``, ``q``, ``visits``, ``root_value``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    info = summary["positions"][position]
    arms = [arm for arm in summary["arms"] if len(summary["arms"][arm]["bars"]) > position]
    first = summary["arms"][arms[0]]["bars"][position]
    moves, correct = list(first["moves"]), list(first["correct"])
    prior0 = np.asarray([_number(x) for x in first["prior"]])
    order = [k for k in range(len(moves)) if correct[k]]
    order += [k for k in np.argsort(-prior0, kind="stable") if not correct[k]]
    keep = sorted(order[:max_moves], key=lambda k: moves[k])
    shown = [moves[k] for k in keep]
    fig, axes = plt.subplots(3, 1, figsize=(max(4.0, 0.55 * len(keep) * len(arms) + 2.0), 6.4), sharex=True,
                             constrained_layout=True)
    width = 0.8 / max(len(arms), 1)
    numbers: Dict[str, Any] = {"position": info, "moves": shown, "correct": [correct[k] for k in keep], "arms": {}}
    for a, arm in enumerate(arms):
        bars = summary["arms"][arm]["bars"][position]
        if list(bars["moves"]) != moves:
            raise ValueError(f"arm {arm!r} lists other moves for position {position}")
        values = {name: np.asarray([_number(bars[name][k]) for k in keep]) for name in ("prior", "raw_value", "q")}
        x = np.arange(len(keep)) + (a - (len(arms) - 1) / 2) * width
        for ax, name in zip(axes, ("prior", "raw_value", "q")):
            ax.bar(x, np.nan_to_num(values[name]), width, color=ARM_COLOURS.get(arm, f"C{a}"),
                   label=ARM_LABELS.get(arm, arm))
        numbers["arms"][arm] = {"run": bars["run"], **{k: v for k, v in values.items()},
                                "visits": [int(bars["visits"][k]) for k in keep],
                                "root_value": bars["root_value"], "search_value": bars["search_value"]}
    for ax, label in zip(axes, ("prior p(s, a)", "raw value v after a", "search value Q(s, a)")):
        ax.set_ylabel(label, fontsize=8)
        ax.axhline(0.0, color="grey", lw=0.6)
    axes[1].set_ylim(-1.05, 1.05)
    axes[2].set_ylim(-1.05, 1.05)
    axes[2].set_xticks(range(len(keep)))
    axes[2].set_xticklabels(shown, rotation=45, fontsize=7)
    for tick, k in zip(axes[2].get_xticklabels(), keep):
        tick.set_color(CORRECT if correct[k] else WRONG)
    axes[0].legend(fontsize=7)
    axes[0].set_title(f"{info['puzzle']} step {info['step']} ({info['set']}): {info['fen']}\n"
                      f"solution {info['solution']} (blue: correct, red: wrong)", fontsize=8)
    return fig, numbers


__all__ = ["solve_rates", "move_values"]
