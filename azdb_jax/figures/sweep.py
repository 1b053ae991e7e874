"""Figures of the ``sweep`` group (docs/results.md, "Choosing λ and ℓ0") from its report.

The trade-off a setting of the diversity term makes: how much more differently the team's
players choose their moves than the λ = 1 control's (distinct moves per position, paired
by seed), against how strong its diverse players stay (Elo against AlphaZero's player 0,
trained with the same budget); beside it, what each setting did in training (plies per
game and the share of the diverse players' search value that is intrinsic).
"""

from typing import Any, Dict, Tuple

import numpy as np


def _diverse_players(entry: Dict[str, Any]):
    """Players i > 0 (λ_i < 1 in a variant; the control's are λ = 1 players of the same seats)."""
    return [p for p in entry["players"] if p["player"] > 0]


def tradeoff(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Left: per arm, distinct moves vs the control (± SE over seeds) against the mean Elo of
    players i > 0 vs AZ's player 0 (± the mean of their SEs); player 0 of each arm as an open
    marker. Right: plies per game and intrinsic share in training (last iterations).

    Returns:
      (figure, numbers): per arm ``elo_diverse``, ``elo_diverse_stderr``, ``elo_player0``,
      ``distinct_vs_control``, ``distinct_vs_control_stderr``, ``plies_per_game``, ``intrinsic_share``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    arms = list(summary["arms"])
    numbers: Dict[str, Any] = {"arms": arms, "reference": summary["reference"],
                               "games_per_pairing": summary["games_per_pairing"]}
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8), constrained_layout=True)
    for k, arm in enumerate(arms):
        entry = summary["arms"][arm]
        diverse = _diverse_players(entry)
        elo = float(np.mean([p["elo"] for p in diverse]))
        elo_se = float(np.mean([np.nan if p["elo_stderr"] is None else p["elo_stderr"] for p in diverse]))
        gap = entry["distinct_vs_control"]["mean"]
        gap_se = entry["distinct_vs_control"]["stderr"]
        gap_se = float("nan") if gap_se is None else gap_se  # one seed: no SE over seeds
        player0 = entry["players"][0]["elo"]
        colour = f"C{k}"
        left.errorbar(elo, gap, xerr=elo_se if np.isfinite(elo_se) else 0.0, yerr=gap_se if np.isfinite(gap_se) else 0.0,
                      fmt="o", color=colour,
                      capsize=3, label=arm)
        left.plot(player0, gap, marker="o", mfc="none", color=colour, linestyle="none")
        training = entry["training"]
        numbers[arm] = {"elo_diverse": elo, "elo_diverse_stderr": elo_se, "elo_player0": player0,
                        "distinct_vs_control": gap, "distinct_vs_control_stderr": gap_se,
                        "plies_per_game": training["plies_per_game"]["mean"],
                        "intrinsic_share": training["intrinsic_share"]["mean"]}
    left.axhline(0.0, color="grey", linewidth=0.6)
    left.axvline(0.0, color="grey", linewidth=0.6)
    left.set_xlabel(f"Elo vs {summary['reference']} player 0 (filled: players i > 0, open: player 0)")
    left.set_ylabel("distinct moves / position − control's")
    left.legend(fontsize=7)
    x = np.arange(len(arms))
    plies = [numbers[a]["plies_per_game"] for a in arms]
    shares = [numbers[a]["intrinsic_share"] for a in arms]
    right.bar(x - 0.2, plies, width=0.4, color="C0", label="plies / game")
    right.set_ylabel("plies per self-play game")
    right.set_xticks(x, arms, rotation=30, fontsize=7)
    share_axis = right.twinx()
    share_axis.bar(x + 0.2, shares, width=0.4, color="C3", label="intrinsic share")
    share_axis.set_ylabel("intrinsic share of the search value")
    share_axis.set_ylim(0, max(0.05, 1.2 * max(shares)))
    right.set_title(f"training, last {summary['last_iterations']} iterations", fontsize=8)
    fig.suptitle(f"Settings of the diversity term: {summary['games_per_pairing']} games per pairing, "
                 f"{summary['positions']} positions", fontsize=9)
    return fig, numbers


__all__ = ["tradeoff"]
