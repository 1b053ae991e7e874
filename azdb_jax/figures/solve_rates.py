"""Figures of the ``solve_rates`` group (paper Fig. 5, 16, 17) from its report.

``solve_rates`` draws the solve rate of each bar (AZ, each AZdb player, every selection
rule, max over latents, the controls, the reference engine) per puzzle set with its
standard error; ``team_gains`` the gain of the team over AZdb player 0 in percentage
points; ``across_seeds`` the paper's Fig. 5 (right), player 0 and max over latents
taken across training seeds (only when the scale has several).
"""

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np


def _bars(summary: Dict[str, Any], keys: Optional[Sequence[str]]):
    layout = {bar["key"]: bar for bar in summary["bars"]}
    keys = [bar["key"] for bar in summary["bars"]] if keys is None else list(keys)
    unknown = [k for k in keys if k not in layout]
    if unknown:
        raise ValueError(f"the report has no bar(s) {unknown}; bars: {', '.join(layout)}")
    return [layout[k] for k in keys]


def _grouped(ax, groups: Sequence[str], series: Sequence[Tuple[str, np.ndarray, np.ndarray]], *, ylabel: str):
    import matplotlib  # pylint: disable=g-import-not-at-top

    cycle = matplotlib.colormaps["tab20"]
    width = 0.85 / max(len(series), 1)
    x = np.arange(len(groups))
    for s, (label, values, errors) in enumerate(series):
        errors = np.nan_to_num(np.asarray(errors, float))
        ax.bar(x + (s - (len(series) - 1) / 2) * width, values, width, yerr=errors, capsize=2, label=label,
               color=cycle(s % 20))
    ax.set_xticks(x)
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel(ylabel)


def solve_rates(report: Dict[str, Any], keys: Optional[Sequence[str]] = None, *, pooled: bool = True
                ) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 5 / 16 / 17: solve rate (%) of each bar per puzzle set (± standard error).

    ``keys`` picks bars of ``summary["bars"]`` (default all, the engine included);
    ``pooled`` adds the sets pooled (``all``).

    Returns:
      (figure, numbers): ``sets``, and per bar ``key``, ``label``, ``rate`` and ``stderr``
      (fractions, one per set), ``stderr_over``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    sets = list(summary["sets"]) + (["all"] if pooled else [])
    chosen = _bars(summary, keys)
    numbers: Dict[str, Any] = {"sets": sets, "bars": []}
    series = []
    for bar in chosen:
        data = summary["rates"][bar["key"]]
        rate = np.array([np.nan if data[s]["rate"] is None else data[s]["rate"] for s in sets], float)
        err = np.array([np.nan if data[s]["stderr"] is None else data[s]["stderr"] for s in sets], float)
        series.append((bar["label"], 100 * rate, 100 * err))
        numbers["bars"].append({"key": bar["key"], "label": bar["label"], "rate": rate, "stderr": err,
                                "stderr_over": data[sets[0]]["stderr_over"]})
    fig, ax = plt.subplots(figsize=(min(14.0, max(7.0, 0.2 * len(sets) * len(chosen))), 4.6),
                           constrained_layout=True)
    _grouped(ax, sets, series, ylabel="solved (%)")
    fig.legend(loc="outside lower center", ncol=min(len(chosen), 5), fontsize=6)
    ax.set_title(f"{summary['game']}: solve rate per puzzle set, {summary['num_simulations']} simulations "
                 f"(± SE over {summary['stderr_over']})", fontsize=9)
    return fig, numbers


def team_gains(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """The AZdb team over its player 0, per set, in percentage points: every selection
    rule, max over latents and the homogeneous control's max (latent 0 searched n times).

    Returns:
      (figure, numbers): ``sets`` and per bar ``key``, ``label``, ``gain_points`` (one per set).
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    sets = list(summary["sets"]) + ["all"]
    base = summary["rates"]["azdb_player_0"]
    keys = [f"azdb_{r}" for r in summary["rules"]] + ["azdb_max", "azdb_homogeneous_max"]
    keys = [k for k in keys if k in summary["rates"]]
    numbers: Dict[str, Any] = {"sets": sets, "bars": []}
    series = []
    for bar in _bars(summary, keys):
        data = summary["rates"][bar["key"]]
        gain = np.array([100 * (data[s]["rate"] - base[s]["rate"]) for s in sets], float)
        series.append((bar["label"], gain, np.zeros_like(gain)))
        numbers["bars"].append({"key": bar["key"], "label": bar["label"], "gain_points": gain})
    fig, ax = plt.subplots(figsize=(7.0, 3.6), constrained_layout=True)
    _grouped(ax, sets, series, ylabel="solved − AZdb player 0 (points)")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.legend(fontsize=6, ncol=2)
    ax.set_title("Diversity bonus: the team over its player 0", fontsize=9)
    return fig, numbers


def across_seeds(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 5 (right): AZ player 0, AZdb player 0 and AZdb max over latents, each taken
    across training seeds (solved if any seed solved it), and sub-additive planning with
    the report's default rule over the seeds' players. ``ValueError`` with one seed.

    Returns:
      (figure, numbers): ``sets`` and per series ``rate`` and ``stderr`` (one per set).
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    across = summary.get("across_seeds")
    if not across:
        raise ValueError("the report has one training seed per arm: nothing to take across seeds")
    sets = list(summary["sets"]) + ["all"]
    rule = summary.get("default_rule", "gap")
    labels = {"az_player_0": "AZ, any seed", f"az_{rule}": f"AZ seeds, sub-additive ({rule})",
              "azdb_player_0": "AZdb player 0, any seed", f"azdb_{rule}": f"AZdb seeds, sub-additive ({rule})",
              "azdb_max": "AZdb any latent of any seed"}
    labels = {k: v for k, v in labels.items() if k in across}
    numbers: Dict[str, Any] = {"sets": sets}
    series = []
    for key, label in labels.items():
        rate = np.array([across[key][s]["rate"] for s in sets], float)
        err = np.array([np.nan if across[key][s]["stderr"] is None else across[key][s]["stderr"] for s in sets])
        series.append((label, 100 * rate, 100 * err))
        numbers[key] = {"rate": rate, "stderr": err}
    fig, ax = plt.subplots(figsize=(7.0, 3.6), constrained_layout=True)
    _grouped(ax, sets, series, ylabel="solved (%)")
    ax.legend(fontsize=7)
    ax.set_title(f"Across {len(summary['runs']['azdb'])} training seeds", fontsize=9)
    return fig, numbers


__all__ = ["solve_rates", "team_gains", "across_seeds"]
