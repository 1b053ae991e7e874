"""Figures of the ``occupancy`` group (paper Fig. 2, 18, 19) from its report.

Boards are drawn with White at the bottom: row 0 of a plane is rank 1, column 0 file a.
Values are percentages of the positions after the player's moves as that colour (the
paper scales them by its mean game length instead). Start squares of a piece are
outlined in black, as in the paper. ``source="selfplay"`` (default) draws the group's
self-play games, ``source="trained"`` the ψ per colour the run kept over its training
matchups.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

DEFAULT_PIECES = ("P", "N", "K", "p", "n", "k")
ARM_LABELS = {"azdb": "AZdb", "control": "control (λ = 1)"}


def _summary(report: Dict[str, Any]) -> Dict[str, Any]:
    return report["summary"]


def _run(report: Dict[str, Any], arm: str, run: int) -> Dict[str, Any]:
    arms = _summary(report)["arms"]
    if arm not in arms:
        raise ValueError(f"the report has no arm {arm!r}; arms: {', '.join(arms)}")
    return arms[arm]["runs"][run]


def _piece_index(report: Dict[str, Any], pieces: Sequence[str]):
    names = _summary(report)["pieces"]
    unknown = [p for p in pieces if p not in names]
    if unknown:
        raise ValueError(f"unknown pieces {unknown}; pieces: {' '.join(names)}")
    return [names.index(p) for p in pieces]


SOURCES = {"selfplay": ("occupancy", "castling"), "trained": ("trained_occupancy", "trained_castling")}


def _source_keys(source: str) -> Tuple[str, str]:
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    return SOURCES[source]


def _occupancy_percent(report: Dict[str, Any], arm: str, run: int, source: str) -> np.ndarray:
    """[n, 2, 12, size, size] occupancy in % (NaN where a player made no move of a colour):
    of the group's self-play games (``"selfplay"``) or the ψ the run kept in training (``"trained"``)."""
    key, _ = _source_keys(source)
    data = _run(report, arm, run).get(key)
    if data is None:
        raise ValueError(f"the report holds no {key!r} for {arm!r} run {run} (the run saved no ψ)")
    return 100.0 * np.array(data, dtype=float)


def _start_squares(report: Dict[str, Any], index: int):
    start = np.asarray(_summary(report)["start_planes"], float)[index]
    return [[int(r), int(f)] for r, f in zip(*np.nonzero(start > 0))]


def _draw_plane(ax, plane: np.ndarray, starts, *, cmap: str, vmin: float, vmax: float, title: str):
    size = plane.shape[0]
    image = ax.imshow(plane, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax)
    import matplotlib.patches as patches  # pylint: disable=g-import-not-at-top

    for rank, file in starts:
        ax.add_patch(patches.Rectangle((file - 0.5, rank - 0.5), 1, 1, fill=False, lw=1.2, ec="black"))
    ax.set_xticks(range(size))
    ax.set_xticklabels([chr(ord("a") + f) for f in range(size)], fontsize=6)
    ax.set_yticks(range(size))
    ax.set_yticklabels([str(r + 1) for r in range(size)], fontsize=6)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=7)
    return image


def _share_title(piece: str, share: float) -> str:
    return f"{piece}  {share:.2f}" if np.isfinite(share) else f"{piece}  (not played)"


def _grid(rows: int, cols: int, *, scale: float = 1.35):
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    fig, axes = plt.subplots(rows, cols, figsize=(scale * cols + 1.2, scale * rows + 0.8), squeeze=False,
                             constrained_layout=True)
    return fig, axes


def _player_colour_grid(report: Dict[str, Any], values: np.ndarray, index: Sequence[int], *, cmap: str,
                        vmin: float, vmax: float, titles, label: str):
    """Boards ``values`` [n, 2, k, size, size] in a grid: a row per player and colour, a column
    per piece (``index`` into the report's pieces); ``titles(i, c, k)`` names each panel.
    Returns the figure and the row labels."""
    n, k_count = values.shape[0], values.shape[2]
    colours = _summary(report)["colours"]
    labels = [f"player {i} as {c}" for i in range(n) for c in colours]
    fig, axes = _grid(2 * n, k_count)
    image = None
    for i in range(n):
        for c in range(2):
            for k in range(k_count):
                ax = axes[2 * i + c, k]
                image = _draw_plane(ax, values[i, c, k], _start_squares(report, index[k]), cmap=cmap, vmin=vmin,
                                    vmax=vmax, title=titles(i, c, k))
                if k == 0:
                    ax.set_ylabel(labels[2 * i + c], fontsize=7)
    fig.colorbar(image, ax=axes, shrink=0.6, label=label)
    return fig, labels


def piece_occupancy(report: Dict[str, Any], arm: str = "azdb", *, pieces: Sequence[str] = DEFAULT_PIECES,
                    run: int = 0, source: str = "selfplay") -> Tuple[Any, Dict[str, Any]]:
    """Fig. 18: each player's occupancy of a few pieces (columns), as White and as Black (rows).

    A panel's title gives the piece and its occupancy summed over the board divided by
    its number at the start: how long the piece stays on the board on average.

    Returns:
      (figure, numbers): ``occupancy_percent`` [n][2][k][size][size], ``piece_share``
      [n][2][k], the pieces, the row labels and each piece's start squares (rank, file).
    """
    index = _piece_index(report, pieces)
    occupancy = _occupancy_percent(report, arm, run, source)[:, :, index]  # [n, 2, k, s, s]
    start_counts = np.asarray(_summary(report)["start_planes"], float)[index].sum(axis=(1, 2))  # [k]
    share = occupancy.sum(axis=(3, 4)) / 100.0 / np.where(start_counts > 0, start_counts, np.nan)
    vmax = float(np.nanmax(occupancy)) if np.isfinite(occupancy).any() else 1.0
    fig, labels = _player_colour_grid(report, occupancy, index, cmap="viridis", vmin=0.0, vmax=vmax,
                                      titles=lambda i, c, k: _share_title(pieces[k], share[i, c, k]),
                                      label="% of positions")
    run_name = _run(report, arm, run)["run"]
    fig.suptitle(f"Piece occupancy of {ARM_LABELS.get(arm, arm)} players ({run_name}, {source})", fontsize=9)
    numbers = {"arm": arm, "run": run_name, "source": source, "pieces": list(pieces), "rows": labels, "units": "%",
               "occupancy_percent": occupancy, "piece_share": share,
               "start_squares": {p: _start_squares(report, index[k]) for k, p in enumerate(pieces)}}
    return fig, numbers


def _pooled_castling(run: Dict[str, Any], source: str) -> Optional[np.ndarray]:
    """[n, 4] castling rights in %, both colours pooled (None without castling): weighted by
    the positions of the self-play games, or the plain mean of the two colours of trained ψ."""
    _, key = _source_keys(source)
    if run.get(key) is None:
        return None
    castling = np.array(run[key], dtype=float)  # [n, 2, 4]
    if source == "trained":
        return 100.0 * np.nanmean(castling, axis=1)
    positions = np.asarray(run["positions"], float)  # [n, 2]
    return 100.0 * (castling * positions[..., None]).sum(axis=1) / positions.sum(axis=1, keepdims=True)


def occupancy_std(report: Dict[str, Any], arm: str = "azdb", *, pieces: Sequence[str] = DEFAULT_PIECES,
                  run: int = 0, source: str = "selfplay") -> Tuple[Any, Dict[str, Any]]:
    """Fig. 2: the standard deviation across players of each square's occupancy, per colour
    played (rows) and piece (columns), and on chess each player's mean castling rights.

    Gardner chess has no castling: the castling panel is left out and ``numbers`` says so.

    Returns:
      (figure, numbers): ``std_percent`` [2][k][size][size] (population std over the n
      players), ``castling_percent`` [n][4] or None, ``castling_note``.
    """
    index = _piece_index(report, pieces)
    occupancy = _occupancy_percent(report, arm, run, source)[:, :, index]
    std = np.nanstd(occupancy, axis=0)  # [2, k, s, s]
    data = _run(report, arm, run)
    castling = _pooled_castling(data, source)
    cols = len(pieces) + (1 if castling is not None else 0)
    fig, axes = _grid(2, cols, scale=1.6)
    vmax = float(np.nanmax(std)) if np.isfinite(std).any() and np.nanmax(std) > 0 else 1.0
    image = None
    colours = _summary(report)["colours"]
    for c in range(2):
        for k, piece in enumerate(pieces):
            image = _draw_plane(axes[c, k], std[c, k], _start_squares(report, index[k]), cmap="magma", vmin=0.0,
                                vmax=vmax, title=piece)
            if k == 0:
                axes[c, k].set_ylabel(f"as {colours[c]}", fontsize=8)
    fig.colorbar(image, ax=axes[:, :len(pieces)], shrink=0.6, label="std across players (% of positions)")
    if castling is not None:
        ax = axes[0, -1]
        shown = ax.imshow(castling, cmap="Blues", vmin=0, vmax=100, aspect="auto")
        names = _summary(report)["castling_names"]
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, fontsize=6, rotation=45)
        ax.set_yticks(range(castling.shape[0]))
        ax.set_ylabel("player", fontsize=7)
        ax.set_title("castling rights (%)", fontsize=7)
        fig.colorbar(shown, ax=ax, shrink=0.8)
        axes[1, -1].axis("off")
    fig.suptitle(f"Occupancy std across {ARM_LABELS.get(arm, arm)} players ({data['run']}, {source})", fontsize=9)
    numbers = {"arm": arm, "run": data["run"], "source": source, "pieces": list(pieces), "colours": colours,
               "units": "%",
               "std_percent": std, "castling_percent": castling,
               "castling_names": _summary(report).get("castling_names"),
               "castling_note": _summary(report).get("castling_note")}
    return fig, numbers


def mean_subtracted(report: Dict[str, Any], arm: str = "azdb", *, pieces: Sequence[str] = DEFAULT_PIECES,
                    run: int = 0, source: str = "selfplay") -> Tuple[Any, Dict[str, Any]]:
    """Fig. 19: each player's occupancy minus the players' mean, ψ̃_i = ψ_i − (1/n) Σ_j ψ_j
    (blue: more than the average player, red: less).

    Returns:
      (figure, numbers): ``difference_percent`` [n][2][k][size][size] and the row labels.
    """
    index = _piece_index(report, pieces)
    occupancy = _occupancy_percent(report, arm, run, source)[:, :, index]
    difference = occupancy - np.nanmean(occupancy, axis=0, keepdims=True)
    bound = float(np.nanmax(np.abs(difference))) if np.isfinite(difference).any() else 0.0
    bound = bound if bound > 0 else 1.0
    fig, labels = _player_colour_grid(report, difference, index, cmap="RdBu", vmin=-bound, vmax=bound,
                                      titles=lambda i, c, k: pieces[k],
                                      label="occupancy − players' mean (% of positions)")
    run_name = _run(report, arm, run)["run"]
    fig.suptitle(f"Mean-subtracted occupancy of {ARM_LABELS.get(arm, arm)} players ({run_name}, {source})",
                 fontsize=9)
    numbers = {"arm": arm, "run": run_name, "source": source, "pieces": list(pieces), "rows": labels, "units": "%",
               "difference_percent": difference}
    return fig, numbers


def psi_spread(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """The ψ spread (mean pairwise L2 distance between the players' self-play ψ) of each arm,
    with its standard error, each run's value as a dot and the ψ the run trained with
    (its checkpoint's expected features) as a cross.

    Returns:
      (figure, numbers): per arm ``spread``, ``stderr``, ``stderr_over``, ``per_run``,
      ``trained``; the difference AZdb − control and its standard error.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = _summary(report)
    arms = list(summary["arms"])
    fig, ax = plt.subplots(figsize=(1.6 * len(arms) + 2.2, 3.4), constrained_layout=True)
    numbers: Dict[str, Any] = {}
    for x, arm in enumerate(arms):
        data = summary["arms"][arm]
        per_run = [r["psi_spread"] for r in data["runs"]]
        trained = [r.get("trained_psi_spread") for r in data["runs"]]
        stderr = data["psi_spread_stderr"]
        ax.bar(x, data["psi_spread"], 0.6, yerr=0.0 if stderr is None else stderr, capsize=4,
               color="tab:green" if arm == "azdb" else "tab:grey")
        ax.plot([x] * len(per_run), per_run, "o", color="black", ms=3, label="run" if x == 0 else None)
        shown = [t for t in trained if t is not None]
        ax.plot([x + 0.2] * len(shown), shown, "x", color="tab:red", label="trained ψ" if x == 0 else None)
        numbers[arm] = {"spread": data["psi_spread"], "stderr": stderr, "stderr_over": data["stderr_over"],
                        "per_run": per_run, "trained": trained}
    ax.set_xticks(range(len(arms)))
    ax.set_xticklabels([ARM_LABELS.get(a, a) for a in arms])
    ax.set_ylabel("mean pairwise ||ψ_i − ψ_j||₂")
    ax.set_title(f"ψ spread over self-play ({summary['games_per_player']} games per player)", fontsize=9)
    ax.legend(fontsize=7)
    numbers["difference"] = summary["psi_spread_difference"]
    numbers["difference_stderr"] = summary["psi_spread_difference_stderr"]
    return fig, numbers


__all__ = ["DEFAULT_PIECES", "piece_occupancy", "occupancy_std", "mean_subtracted", "psi_spread"]
