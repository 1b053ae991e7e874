"""Figures of the ``scaling`` group (paper Fig. 7) from its report.

``scaling`` draws one row of Fig. 7 for a kind (``max``: max over trials, top; the rule,
e.g. ``lcb``: sub-additive planning, bottom): (1) the solve rate (%) table, trials x
simulations; (2) the relative gain (%) over one trial; (3) the solve rate against the
number of trials, one line per budget; (4) the relative gain against the number of
trials, latents (solid) against homogeneous copies of latent 0 (dashed) and, with
several training seeds, the seeds (dotted).
"""

from typing import Any, Dict, Tuple

import numpy as np


def _array(values) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in values], float)


def _table(ax, matrix: np.ndarray, trials, simulations, title: str, fmt: str, cmap: str):
    image = ax.imshow(matrix, cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(simulations)))
    ax.set_xticklabels([str(s) for s in simulations], fontsize=7)
    ax.set_yticks(range(len(trials)))
    ax.set_yticklabels([str(k) for k in trials], fontsize=7)
    ax.set_xlabel("simulations", fontsize=8)
    ax.set_ylabel("trials", fontsize=8)
    ax.set_title(title, fontsize=8)
    for t in range(matrix.shape[0]):
        for s in range(matrix.shape[1]):
            if np.isfinite(matrix[t, s]):
                ax.text(s, t, format(matrix[t, s], fmt), ha="center", va="center", fontsize=7)
    return image


def scaling(report: Dict[str, Any], kind: str = "max") -> Tuple[Any, Dict[str, Any]]:
    """One row of Fig. 7 for ``kind`` (``"max"`` or the report's rule).

    Returns:
      (figure, numbers): ``kind``, ``trials``, ``simulations``; ``rate_percent`` and
      ``stderr_percent`` [trials][simulations] of the latents; ``relative_gain`` and its
      ``relative_gain_stderr`` (%) of the latents and ``copies_relative_gain`` of the
      homogeneous copies; ``seeds_relative_gain`` with several training seeds (max only).
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    if kind not in summary["kinds"]:
        raise ValueError(f"kind must be one of {summary['kinds']}, got {kind!r}")
    simulations = summary["simulations"]
    latents = summary["tables"][f"{kind}/latents"]
    copies = summary["tables"][f"{kind}/copies"]
    trials = latents["trials"]
    rate = 100 * _array(latents["rate"])[:len(trials)]
    stderr = 100 * _array(latents["stderr"])[:len(trials)]
    gain = _array(latents["relative_gain"])[:len(trials)]
    gain_se = _array(latents["relative_gain_stderr"])[:len(trials)]
    copies_trials = copies["trials"]
    copies_gain = _array(copies["relative_gain"])[:len(copies_trials)]
    seeds = summary.get("training_seeds") if kind == "max" else None
    title = "max over trials" if kind == "max" else f"sub-additive planning ({kind})"

    fig, axes = plt.subplots(1, 4, figsize=(15.0, 3.4), constrained_layout=True)
    _table(axes[0], rate, trials, simulations, f"(1) solved (%), {title}", ".1f", "Greens")
    _table(axes[1], gain, trials, simulations, "(2) relative gain over 1 trial (%)", ".0f", "Blues")
    colours = plt.get_cmap("viridis")(np.linspace(0.1, 0.9, len(simulations)))
    for s, sims in enumerate(simulations):
        axes[2].errorbar(trials, rate[:, s], yerr=np.nan_to_num(stderr[:, s]), color=colours[s], marker="o",
                         capsize=2, label=f"{sims} sims")
        axes[3].plot(trials, gain[:, s], color=colours[s], marker="o", label=f"{sims} sims, latents")
        axes[3].plot(copies_trials, copies_gain[:, s], color=colours[s], marker="x", ls="--")
        if seeds:
            seed_trials = seeds["trials"]
            axes[3].plot(seed_trials, _array(seeds["relative_gain"])[:len(seed_trials), s], color=colours[s],
                         marker="s", ls=":")
    axes[2].set_xlabel("trials (latents)", fontsize=8)
    axes[2].set_ylabel("solved (%)", fontsize=8)
    axes[2].set_title("(3) scaling with the number of latents", fontsize=8)
    axes[2].legend(fontsize=6)
    axes[3].set_xlabel("trials", fontsize=8)
    axes[3].set_ylabel("relative gain (%)", fontsize=8)
    axes[3].set_title("(4) latents (solid) vs copies of latent 0 (dashed)"
                      + (" vs seeds (dotted)" if seeds else ""), fontsize=8)
    axes[3].legend(fontsize=6)
    for ax in axes[2:]:
        ax.set_xticks(trials)
    numbers = {"kind": kind, "trials": trials, "simulations": simulations, "rate_percent": rate,
               "stderr_percent": stderr, "relative_gain": gain, "relative_gain_stderr": gain_se,
               "copies_trials": copies_trials, "copies_relative_gain": copies_gain,
               "seeds_relative_gain": None if not seeds else _array(seeds["relative_gain"])}
    return fig, numbers


__all__ = ["scaling"]
