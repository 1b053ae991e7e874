"""Strength curves on connect four against the solved game (docs/results.md, "The training levers").

The report is ``experiments/connect_four_levers.py --out``'s: a list of runs, each with its
``lever``, ``seed`` and ``curve`` of checkpoints (``iteration``, ``train_seconds``,
``positions`` where recorded, and the measures ``search_keeps``, ``prior_keeps``,
``value_sign``, ``against_perfect``, as rates over the committed positions not lost for the
mover). A lever's curve is the mean over its seeds at each checkpoint, with the 95 % t
interval over seeds where there are several.
"""

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from azdb_jax import ratings

MEASURES = ("search_keeps", "prior_keeps", "value_sign", "against_perfect")
AXES = {"iteration": "iteration", "train_seconds": "training seconds (2 cores)",
        "positions": "self-play positions stored"}
LABELS = {"search_keeps": "search keeps the solved outcome", "prior_keeps": "prior's move keeps it",
          "value_sign": "value's sign right", "against_perfect": "keeps the result against perfect"}


def lever_curves(report: Sequence[Dict[str, Any]], measure: str = "search_keeps", x: str = "iteration"
                 ) -> Dict[str, Dict[str, List[float]]]:
    """Per lever: the checkpoints' ``x`` (mean over seeds), the measure's mean over seeds and
    its 95 % half-width (NaN with one seed), at the checkpoints every seed has measured."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    if x not in AXES:
        raise ValueError(f"unknown axis {x!r}; known: {', '.join(AXES)}")
    out: Dict[str, Dict[str, List[float]]] = {}
    for lever in dict.fromkeys(entry["lever"] for entry in report):
        entries = [e for e in report if e["lever"] == lever]
        steps = sorted(set.intersection(*[{int(r["iteration"]) for r in e["curve"] if r.get(measure) is not None}
                                          for e in entries]))
        curve = {"x": [], "mean": [], "half_width": [], "iteration": steps, "seeds": [int(e["seed"]) for e in entries]}
        for step in steps:
            rows = [next(r for r in e["curve"] if int(r["iteration"]) == step) for e in entries]
            values = np.array([r[measure] for r in rows], float)
            curve["x"].append(float(np.mean([r.get(x, np.nan) for r in rows])))
            curve["mean"].append(float(values.mean()))
            curve["half_width"].append(float(ratings.t_quantile(len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))
                                       if len(values) > 1 else float("nan"))
        out[lever] = curve
    return out


def solved_curves(report: Sequence[Dict[str, Any]], *, x: str = "iteration",
                  measures: Sequence[str] = ("search_keeps", "prior_keeps", "against_perfect"),
                  targets: Dict[str, float] = None) -> Tuple[Any, Dict[str, Any]]:
    """One panel per measure: each lever's mean over seeds against ``x`` with its 95 %
    interval band; a dashed line at each measure's target (default: search keeps 0.95,
    against perfect 0.5, the acceptance of docs/results.md).

    Returns:
      (figure, numbers): ``numbers[measure][lever]`` is ``lever_curves``' entry.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    targets = {"search_keeps": 0.95, "against_perfect": 0.5} if targets is None else targets
    fig, axes = plt.subplots(1, len(measures), figsize=(4.2 * len(measures), 3.6), constrained_layout=True,
                             squeeze=False)
    numbers: Dict[str, Any] = {"x": x}
    for ax, measure in zip(axes[0], measures):
        curves = lever_curves(report, measure, x)
        numbers[measure] = curves
        for k, (lever, curve) in enumerate(curves.items()):
            xs, mean, half = (np.asarray(curve[key], float) for key in ("x", "mean", "half_width"))
            ax.plot(xs, mean, marker="o", markersize=3, color=f"C{k}", label=f"{lever} ({len(curve['seeds'])} seeds)")
            if np.isfinite(half).any():
                ax.fill_between(xs, mean - half, mean + half, color=f"C{k}", alpha=0.15, linewidth=0)
        if measure in targets:
            ax.axhline(targets[measure], color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel(AXES[x])
        ax.set_title(LABELS[measure], fontsize=9)
        ax.set_ylim(0.0, 1.0)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return fig, numbers


__all__ = ["AXES", "MEASURES", "lever_curves", "solved_curves"]
