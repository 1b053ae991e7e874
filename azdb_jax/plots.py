"""Figures written during training: interaction graphs and payoffs (paper Fig. 9-10).

Host-side matplotlib (Agg backend, no display needed); each function returns the
figure so notebooks can show it and the trainer can save it.
"""

from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=g-import-not-at-top
import numpy as np  # noqa: E402


def _heatmap(ax, matrix: np.ndarray, title: str, *, vmin: float, vmax: float, cmap: str, xlabel: str, ylabel: str):
    n = matrix.shape[0]
    image = ax.imshow(matrix, vmin=vmin, vmax=vmax, cmap=cmap)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    if n <= 10:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(matrix[i, j]) > 0.6 * max(abs(vmin), abs(vmax)) else "black")
    return image


def interaction_graph_figure(sigma_white: np.ndarray, sigma_black: np.ndarray, payoff: Optional[np.ndarray] = None,
                             *, title: str = ""):
    """Σ_w and Σ_b (row i: the mixture over opponents j of player i) and, if given, the
    payoff matrix (mean result for White, white player i vs black player j)."""
    panels = 3 if payoff is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.4 * panels, 4.8), constrained_layout=True)
    _heatmap(axes[0], np.asarray(sigma_white), "Σ_w: i plays White", vmin=0, vmax=1, cmap="Blues",
             xlabel="opponent j", ylabel="player i")
    image = _heatmap(axes[1], np.asarray(sigma_black), "Σ_b: i plays Black", vmin=0, vmax=1, cmap="Blues",
                     xlabel="opponent j", ylabel="player i")
    fig.colorbar(image, ax=axes[:2], shrink=0.8)
    if payoff is not None:
        image = _heatmap(axes[2], np.asarray(payoff), "payoff for White", vmin=-1, vmax=1, cmap="RdBu",
                         xlabel="black player j", ylabel="white player i")
        fig.colorbar(image, ax=axes[2], shrink=0.8)
    if title:
        fig.suptitle(title)
    return fig


def save_figure(fig, path) -> None:
    """Writes ``fig`` as PNG and closes it."""
    fig.savefig(path, dpi=100)
    plt.close(fig)
