"""Figures written during and after training: interaction graphs and payoffs (paper
Fig. 9-10), and the end-of-run summary of a team.

Host-side matplotlib (Agg backend, no display needed); each function returns the
figure so notebooks can show it and the trainer can save it.
"""

from typing import Dict, Optional

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


def run_summary_figure(iterations: np.ndarray, distances: np.ndarray, *, l0: Optional[float] = None,
                       sigma_white: Optional[np.ndarray] = None, payoff: Optional[np.ndarray] = None,
                       disagreement: Optional[np.ndarray] = None,
                       scores: Optional[Dict[str, np.ndarray]] = None, title: str = ""):
    """How a trained team differs, in up to five panels.

    Args:
      iterations [T], distances [T, n]: each player's nearest-neighbour distance d_i over
        training (paper Eq. 7); ``l0`` (ℓ0, where the diversity reward vanishes) drawn
        dashed when given.
      sigma_white [n, n], payoff [n, n]: the final interaction graph (row i: player i's
        opponents as White) and the payoff for White.
      disagreement [n, n]: share of positions where players i and j choose different moves.
      scores: reference name -> [n] each player's score against it.
    """
    panels = ["d"] + [name for name, value in (("sigma", sigma_white), ("payoff", payoff),
                                               ("moves", disagreement), ("scores", scores)) if value is not None]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.9 * len(panels), 3.9), constrained_layout=True)
    axes = np.atleast_1d(axes)
    distances = np.asarray(distances, float)
    n = distances.shape[1] if distances.ndim == 2 else 0
    for ax, panel in zip(axes, panels):
        if panel == "d":
            styles = ("-", "--", "-.", ":")
            for i in range(n):  # nearest neighbours share a distance: vary the line style
                ax.plot(iterations, distances[:, i], label=f"player {i}", lw=1.4, ls=styles[i % len(styles)])
            top = float(np.nanmax(distances)) if distances.size else 1.0
            if l0 is not None and l0 <= 1.5 * top:
                ax.axhline(l0, color="grey", ls="--", lw=1, label="ℓ0")
            elif l0 is not None:  # far above the curves: name it instead of squashing them
                ax.plot([], [], " ", label=f"ℓ0 = {l0:g} (above)")
            ax.set_ylim(bottom=0)
            ax.set_xlabel("iteration")
            ax.set_ylabel("d_i (nearest neighbour in ψ)")
            ax.set_title("distance to the nearest player")
            ax.legend(fontsize=7)
        elif panel == "sigma":
            _heatmap(ax, np.asarray(sigma_white), "Σ_w: opponents of i as White", vmin=0, vmax=1, cmap="Blues",
                     xlabel="opponent j", ylabel="player i")
        elif panel == "payoff":
            _heatmap(ax, np.asarray(payoff), "payoff for White", vmin=-1, vmax=1, cmap="RdBu",
                     xlabel="black player j", ylabel="white player i")
        elif panel == "moves":
            _heatmap(ax, np.asarray(disagreement), "share of different moves", vmin=0, vmax=1, cmap="Purples",
                     xlabel="player j", ylabel="player i")
        else:
            names = list(scores)
            width = 0.8 / max(len(names), 1)
            for k, name in enumerate(names):
                values = np.asarray(scores[name], float)
                ax.bar(np.arange(values.size) + k * width, values, width, label=name)
            ax.axhline(0.5, color="grey", ls=":", lw=1)
            ax.set_ylim(0, 1)
            ax.set_xticks(np.arange(n) + 0.4 - width / 2)
            ax.set_xticklabels([str(i) for i in range(n)])
            ax.set_xlabel("player")
            ax.set_ylabel("score (W 1, D ½, L 0)")
            ax.set_title("against the fixed references")
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def save_figure(fig, path) -> None:
    """Writes ``fig`` as PNG and closes it."""
    fig.savefig(path, dpi=100)
    plt.close(fig)
