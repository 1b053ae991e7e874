"""Figures of the ``selection`` group (paper Fig. 8) from its report.

``selection`` draws one column per number of trials: on top max over latents for each
per-player move (visits, value, LCB), at the bottom sub-additive planning for each
selection rule (visit, value, LCB, gap); bars are the search types (PUCT / Gumbel,
self-play search solid, extrinsic-only hatched as the paper's dashed lines).
"""

from typing import Any, Dict, Tuple

import numpy as np

ALGORITHM_COLOURS = {"puct": "tab:blue", "gumbel": "tab:orange"}


def _panel(ax, table: Dict[str, Any], names, search_types, k: str, title: str) -> Dict[str, Any]:
    width = 0.8 / max(len(search_types), 1)
    x = np.arange(len(names))
    shown: Dict[str, Any] = {}
    for s, search_type in enumerate(search_types):
        algorithm, mode = search_type.split("/")
        rate = np.array([table[search_type][name][k]["rate"] for name in names], float)
        err = np.array([np.nan if table[search_type][name][k]["stderr"] is None
                        else table[search_type][name][k]["stderr"] for name in names], float)
        ax.bar(x + (s - (len(search_types) - 1) / 2) * width, 100 * rate, width, yerr=100 * np.nan_to_num(err),
               capsize=2, color=ALGORITHM_COLOURS.get(algorithm, f"C{s}"), hatch="//" if mode != "selfplay" else None,
               edgecolor="white" if mode != "selfplay" else None, label=search_type)
        shown[search_type] = {"rate": rate, "stderr": err}
    ax.set_xticks(x)
    ax.set_xticklabels(names, fontsize=7)
    ax.set_title(title, fontsize=8)
    return shown


def selection(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 8: selection rules x search type, one column per number of trials.

    Returns:
      (figure, numbers): ``trials``, ``search_types``, ``moves``, ``rules``;
      ``max_over_latents[k][search type]`` and ``sub_additive[k][search type]`` with
      ``rate`` and ``stderr`` (fractions, one per move / rule).
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    trials = [str(k) for k in summary["trials"]]
    search_types = summary["search_types"]
    fig, axes = plt.subplots(2, len(trials), figsize=(3.6 * len(trials) + 1.0, 6.0), squeeze=False,
                             constrained_layout=True)
    numbers: Dict[str, Any] = {"trials": summary["trials"], "search_types": search_types,
                               "moves": summary["moves"], "rules": summary["rules"],
                               "max_over_latents": {}, "sub_additive": {}}
    for c, k in enumerate(trials):
        numbers["max_over_latents"][k] = _panel(axes[0, c], summary["max_over_latents"], summary["moves"],
                                                search_types, k, f"max over {k} latent(s)")
        numbers["sub_additive"][k] = _panel(axes[1, c], summary["sub_additive"], summary["rules"], search_types, k,
                                            f"sub-additive planning, {k} latent(s)")
    axes[0, 0].set_ylabel("solved (%)\nplayer's move", fontsize=8)
    axes[1, 0].set_ylabel("solved (%)\nselection rule", fontsize=8)
    axes[0, -1].legend(fontsize=6)
    fig.suptitle(f"{summary['game']}, {summary['num_puzzles']} puzzles, {summary['num_simulations']} simulations "
                 f"(± SE over {summary['stderr_over']})", fontsize=9)
    return fig, numbers


__all__ = ["selection"]
