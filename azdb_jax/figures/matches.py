"""Figures of the ``matches`` group (paper Table 2, 3, Fig. 6, 21-23) from its report.

Win rates are scores × 100 (W 1, D ½, L 0) as in the paper's Table 2; per-opening scores
are in the paper's Fig. 6 units (win 1, draw 0, loss −1).
"""

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

AGENT_LABELS = {"lookup": "sub-additive (lookup)", "lookup_gap": "sub-additive (lookup, GAP)",
                "max_over_latents": "max over latents",
                "lookup_heldout": "lookup (held-out seeds)"}


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _label(agent: str) -> str:
    if agent.startswith("player_"):
        return f"player {agent.split('_', 1)[1]}"
    if agent.startswith("team_"):
        return f"team ({agent.split('_', 1)[1]})"
    return AGENT_LABELS.get(agent, agent)


def _players(summary: Dict[str, Any]) -> list:
    return [a for a in summary["agents"] if a.startswith("player_")]


def match_summary(report: Dict[str, Any], *, agents: Optional[Sequence[str]] = None) -> Tuple[Any, Dict[str, Any]]:
    """Table 2 / Fig. 22: every AZdb agent's win rate against AZ (± SE) with its W/D/L and
    Elo ± SE written beside the bar; the dashed line is an even score.

    Returns:
      (figure, numbers): per agent ``wins``, ``draws``, ``losses``, ``winrate``,
      ``winrate_stderr``, ``elo``, ``elo_stderr``, ``by_colour``; ``stderr_over``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    names = list(agents) if agents is not None else list(summary["agents"])
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(names) + 1.4), constrained_layout=True)
    numbers: Dict[str, Any] = {"stderr_over": summary["stderr_over"], "agents": {}}
    for y, name in enumerate(names):
        item = summary["agents"][name]
        rate, err = _number(item["winrate"]), _number(item["winrate_stderr"])
        colour = "tab:green" if name.startswith("player_") else ("tab:red" if name == "max_over_latents"
                                                                else "tab:purple")
        ax.barh(y, rate, 0.6, xerr=err if np.isfinite(err) else 0.0, capsize=3, color=colour)
        elo, elo_err = _number(item["elo"]), _number(item["elo_stderr"])
        ax.text(101, y, f"+{item['wins']} ={item['draws']} -{item['losses']}   Elo {elo:+.0f} ± {elo_err:.0f}",
                va="center", fontsize=7)
        numbers["agents"][name] = {k: item.get(k) for k in ("wins", "draws", "losses", "games", "winrate",
                                                             "winrate_stderr", "score", "score_stderr", "elo",
                                                             "elo_stderr", "by_colour")}
    ax.axvline(50, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([_label(n) for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 160)
    ax.set_xticks(range(0, 101, 25))
    ax.set_xlabel("win rate against AZ (%)")
    pairings = len(summary.get("pairings", ()))
    games = f"{summary['games_per_agent']} games per agent" + (
        f" and training seed ({pairings} training seeds)" if pairings > 1 else "")
    ax.set_title(f"AZdb vs AZ: {games},\n{summary['num_simulations']} simulations (SE over {summary['stderr_over']})",
                 fontsize=9)
    return fig, numbers


def colour_winrates(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Table 3: each AZdb player's win rate against AZ as White and as Black.

    Returns:
      (figure, numbers): ``winrate`` {player: {white, black}} in %.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    players = _players(summary)
    fig, ax = plt.subplots(figsize=(1.0 * len(players) + 2.5, 3.2), constrained_layout=True)
    numbers: Dict[str, Any] = {"winrate": {}}
    for c, colour in enumerate(summary["colours"]):
        rates = [_number(summary["agents"][p]["by_colour"][colour]["winrate"]) for p in players]
        ax.bar(np.arange(len(players)) + (c - 0.5) * 0.38, rates, 0.38, label=f"as {colour}",
               color="whitesmoke" if colour == "white" else "dimgrey", edgecolor="black")
        for p, rate in zip(players, rates):
            numbers["winrate"].setdefault(p, {})[colour] = rate
    ax.axhline(50, color="grey", ls="--", lw=0.8)
    ax.set_xticks(range(len(players)))
    ax.set_xticklabels([_label(p) for p in players])
    ax.set_ylabel("win rate against AZ (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.set_title("AZdb players as White and as Black", fontsize=9)
    return fig, numbers


def lookup_curve(report: Dict[str, Any], pairing: int = 0) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 21: the lookup's win rate on held-out seeds against the number of seeds its
    table was built on, with the best single player (black) and max over latents (red).

    Returns:
      (figure, numbers): ``train_seeds``, ``winrate``, ``winrate_stderr`` (%),
      ``best_latent``, ``max_over_latents`` (%), ``heldout_seeds``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    curve = report["summary"]["pairings"][pairing]["lookup_curve"]
    k = [p["train_seeds"] for p in curve["points"]]
    rate = np.array([100.0 * _number(p["score"]) for p in curve["points"]])
    err = np.array([100.0 * _number(p["score_stderr"]) for p in curve["points"]])
    best = 100.0 * _number(curve["best_latent"]["score"])
    oracle = 100.0 * _number(curve["max_over_latents"]["score"])
    fig, ax = plt.subplots(figsize=(4.6, 3.2), constrained_layout=True)
    ax.errorbar(k, rate, yerr=np.nan_to_num(err), marker="o", capsize=3, color="tab:purple", label="lookup")
    ax.axhline(best, color="black", ls="--", lw=1, label=f"best latent (player {curve['best_latent']['player']})")
    ax.axhline(oracle, color="tab:red", ls="--", lw=1, label="max over latents")
    ax.set_xlabel("seeds the lookup table is built on")
    ax.set_ylabel("win rate on held-out seeds (%)")
    ax.set_xticks(k)
    ax.legend(fontsize=7)
    ax.set_title(f"Sub-additive lookup ({curve['heldout_seeds']} held-out seed(s))", fontsize=9)
    return fig, {"train_seeds": k, "winrate": rate, "winrate_stderr": err, "best_latent": best,
                 "best_player": curve["best_latent"]["player"], "max_over_latents": oracle,
                 "heldout_seeds": curve["heldout_seeds"]}


def opening_scores(report: Dict[str, Any], colour: str = "white", *, pairing: int = 0,
                   agents: Optional[Sequence[str]] = None) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 6 / 23: each AZdb agent's mean score (win 1, draw 0, loss −1) per opening when
    it plays ``colour``, as a heatmap (rows: agents, columns: openings), ± SE over seeds.

    Returns:
      (figure, numbers): ``scores`` and ``stderr`` [agents][openings], ``agents``,
      ``openings`` (labels), ``colour``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    if colour not in summary["colours"]:
        raise ValueError(f"colour must be one of {summary['colours']}, got {colour!r}")
    c = summary["colours"].index(colour)
    data = summary["pairings"][pairing]["agents"]
    names = list(agents) if agents is not None else [a for a in data if "opening_scores" in data[a]]
    scores = np.array([[_number(row[c]) for row in data[a]["opening_scores"]["mean"]] for a in names])
    errors = np.array([[_number(row[c]) for row in data[a]["opening_scores"]["stderr"]] for a in names])
    labels = [o["label"] for o in summary["openings"]]
    fig, ax = plt.subplots(figsize=(0.9 * len(labels) + 2.8, 0.5 * len(names) + 1.8), constrained_layout=True)
    image = ax.imshow(scores, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    for i in range(scores.shape[0]):
        for j in range(scores.shape[1]):
            ax.text(j, i, f"{scores[i, j]:+.2f}", ha="center", va="center", fontsize=6,
                    color="white" if abs(scores[i, j]) > 0.6 else "black")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([_label(a) for a in names], fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([label[:18] for label in labels], rotation=45, ha="right", fontsize=6)
    fig.colorbar(image, ax=ax, shrink=0.8, label="mean score (win 1, loss −1)")
    ax.set_title(f"AZdb as {colour} against AZ, per opening ({len(summary['seeds'])} seeds)", fontsize=9)
    return fig, {"colour": colour, "agents": names, "openings": labels, "scores": scores, "stderr": errors}


__all__ = ["match_summary", "colour_winrates", "lookup_curve", "opening_scores"]
