"""Figures of the ``matchmaking`` group (paper Fig. 9, 10) from its report.

An interaction graph is drawn as two heatmaps, Σ_w (the learner i plays White) and Σ_b
(it plays Black): row i is the mixture over opponents j, light is high probability.
"""

from typing import Any, Dict, Optional, Tuple

import numpy as np

TITLES = {"selfplay": "(a) self-play", "uniform": "(b) uniform", "psro_nash": "(c) PSRO-Nash",
          "psro_rectified": "(d) PSRO-rectified", "psro_uniform": "(e) PSRO-uniform", "psro_cycle": "(f) PSRO-cycle"}


def _heatmap(ax, matrix: np.ndarray, title: str, *, vmin: float = 0.0, vmax: float = 1.0, cmap: str = "gray",
             annotate: bool = True):
    matrix = np.asarray(matrix, float)
    n = matrix.shape[0]
    image = ax.imshow(matrix, vmin=vmin, vmax=vmax, cmap=cmap)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.tick_params(labelsize=6, length=0)
    ax.set_title(title, fontsize=7)
    if annotate and n <= 6:
        for i in range(n):
            for j in range(n):
                if np.isfinite(matrix[i, j]):
                    red, green, blue, _ = image.cmap(image.norm(matrix[i, j]))
                    light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
                    ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=5,
                            color="black" if light else "white")
    return image


def matchmaker_graphs(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 9: the graph each matchmaker builds from the run's latest empirical payoff
    (top Σ_w, bottom Σ_b), and the payoff itself with the games behind each entry.

    Returns:
      (figure, numbers): ``graphs`` {matchmaker: {white, black}}, ``payoff``,
      ``payoff_games``, ``iteration`` and ``run``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    names = summary["matchmakers"]
    fig, axes = plt.subplots(2, len(names) + 1, figsize=(1.9 * (len(names) + 1) + 0.8, 4.3), squeeze=False,
                             constrained_layout=True)
    image = None
    for k, name in enumerate(names):
        graph = summary["graphs"][name]
        image = _heatmap(axes[0, k], graph["white"], f"{TITLES.get(name, name)}\nΣ_w (i plays White)")
        _heatmap(axes[1, k], graph["black"], "Σ_b (i plays Black)")
        axes[0, k].set_ylabel("learner i", fontsize=7)
        axes[1, k].set_ylabel("learner i", fontsize=7)
        axes[1, k].set_xlabel("opponent j", fontsize=7)
    fig.colorbar(image, ax=axes[:, :len(names)], shrink=0.7, label="P(opponent j | learner i)")
    payoff_image = _heatmap(axes[0, -1], summary["payoff"], "payoff for White", vmin=-1, vmax=1, cmap="RdBu")
    axes[0, -1].set_ylabel("white i", fontsize=7)
    axes[0, -1].set_xlabel("black j", fontsize=7)
    fig.colorbar(payoff_image, ax=axes[0, -1], shrink=0.8)
    games = np.asarray(summary["payoff_games"], float)
    _heatmap(axes[1, -1], games, "games counted", vmin=0, vmax=max(float(games.max()), 1.0), cmap="Greens")
    fig.suptitle(f"Interaction graphs from the payoff of {summary['run']} at iteration {summary['iteration']}",
                 fontsize=9)
    numbers = {"run": summary["run"], "iteration": summary["iteration"], "matchmakers": list(names),
               "graphs": {name: summary["graphs"][name] for name in names}, "payoff": summary["payoff"],
               "payoff_games": summary["payoff_games"]}
    return fig, numbers


def graphs_over_training(report: Dict[str, Any], *, max_panels: Optional[int] = None) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 10: the interaction graph the run trained with at every saved iteration (one
    column each, top Σ_w, bottom Σ_b); PSRO-Nash in the ``azdb`` arm.

    ``max_panels`` keeps that many iterations, evenly spaced, the last included.

    Returns:
      (figure, numbers): ``iterations``, ``white`` [T][n][n], ``black`` [T][n][n],
      ``matchmaker``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    training = summary["training"]
    if max_panels is not None and len(training) > max_panels:
        keep = np.unique(np.linspace(0, len(training) - 1, max_panels).round().astype(int))
        training = [training[k] for k in keep]
    count = len(training)
    fig, axes = plt.subplots(2, count, figsize=(1.9 * count + 1.2, 4.2), squeeze=False, constrained_layout=True)
    image = None
    for k, item in enumerate(training):
        image = _heatmap(axes[0, k], item["white"], f"iteration {item['iteration']}\nΣ_w")
        _heatmap(axes[1, k], item["black"], "Σ_b")
        axes[1, k].set_xlabel("opponent j", fontsize=7)
    axes[0, 0].set_ylabel("learner i", fontsize=7)
    axes[1, 0].set_ylabel("learner i", fontsize=7)
    fig.colorbar(image, ax=axes, shrink=0.7, label="P(opponent j | learner i)")
    fig.suptitle(f"{summary['run_matchmaker']} interaction graphs over training ({summary['run']})", fontsize=9)
    numbers = {"run": summary["run"], "matchmaker": summary["run_matchmaker"],
               "iterations": [item["iteration"] for item in training],
               "white": [item["white"] for item in training], "black": [item["black"] for item in training]}
    return fig, numbers


__all__ = ["matchmaker_graphs", "graphs_over_training"]
