"""Figures of the ``openings`` group (paper Fig. 3) from its report.

``opening_moves`` draws each opening position (5x5 Gardner or 8x8 chess, from its FEN)
with every player's LCB move as an arrow in the player's colour; ``distinct_moves``
compares the number of different moves per position of the AZdb team and its control.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

GLYPHS = {"K": "♔", "Q": "♕", "R": "♖", "B": "♗", "N": "♘", "P": "♙",
          "k": "♚", "q": "♛", "r": "♜", "b": "♝", "n": "♞", "p": "♟"}
ARM_LABELS = {"azdb": "AZdb", "control": "control (λ = 1)"}
LIGHT, DARK = "#f0d9b5", "#b58863"


def parse_placement(fen: str) -> List[List[str]]:
    """The FEN's piece placement as ``board[rank][file]`` (rank 0 is rank 1; "" for empty)."""
    ranks = fen.split()[0].split("/")
    board = []
    for text in reversed(ranks):
        row: List[str] = []
        for ch in text:
            row += [""] * int(ch) if ch.isdigit() else [ch]
        board.append(row)
    if len({len(r) for r in board}) != 1:
        raise ValueError(f"ragged placement in FEN {fen!r}")
    return board


def uci_squares(uci: str) -> Optional[Tuple[Tuple[int, int], Tuple[int, int]]]:
    """((file, rank), (file, rank)) of a UCI move's from and to squares (None for no move)."""
    if len(uci) < 4:
        return None
    return ((ord(uci[0]) - ord("a"), int(uci[1]) - 1), (ord(uci[2]) - ord("a"), int(uci[3]) - 1))


def player_colours(num_players: int) -> List[str]:
    """One matplotlib colour (hex) per player, from the tab10 cycle."""
    import matplotlib  # pylint: disable=g-import-not-at-top

    cycle = matplotlib.colormaps["tab10"]
    return [matplotlib.colors.to_hex(cycle(j % 10)) for j in range(num_players)]


def draw_board(ax, fen: str, moves: Sequence[str] = (), colours: Sequence[str] = (), *, title: str = "") -> None:
    """Draws the position of ``fen`` on ``ax`` (White at the bottom) with ``moves[j]`` as an
    arrow in ``colours[j]``; arrows of different players are offset so equal moves stay visible."""
    board = parse_placement(fen)
    size = len(board)
    for rank in range(size):
        for file in range(size):
            ax.add_patch(_square(file, rank, LIGHT if (file + rank) % 2 else DARK))
            piece = board[rank][file]
            if piece:
                ax.text(file + 0.5, rank + 0.47, GLYPHS.get(piece, piece), ha="center", va="center",
                        fontsize=max(6, 100 // size), color="black")
    count = len(moves)
    for j, (uci, colour) in enumerate(zip(moves, colours)):
        squares = uci_squares(uci)
        if squares is None:
            continue
        (f0, r0), (f1, r1) = squares
        direction = np.array([f1 - f0, r1 - r0], float)
        normal = np.array([-direction[1], direction[0]]) / max(np.linalg.norm(direction), 1e-9)
        shift = normal * 0.14 * (j - (count - 1) / 2)
        start = np.array([f0 + 0.5, r0 + 0.5]) + shift
        end = np.array([f1 + 0.5, r1 + 0.5]) + shift
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=2.2, alpha=0.85, shrinkA=0, shrinkB=4))
    ax.set_xlim(0, size)
    ax.set_ylim(0, size)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(size) + 0.5)
    ax.set_xticklabels([chr(ord("a") + f) for f in range(size)], fontsize=6)
    ax.set_yticks(np.arange(size) + 0.5)
    ax.set_yticklabels([str(r + 1) for r in range(size)], fontsize=6)
    ax.tick_params(length=0)
    if title:
        ax.set_title(title, fontsize=7)


def _square(file: int, rank: int, colour: str):
    import matplotlib.patches as patches  # pylint: disable=g-import-not-at-top

    return patches.Rectangle((file, rank), 1, 1, color=colour, lw=0)


def _run(report: Dict[str, Any], arm: str, run: int) -> Dict[str, Any]:
    arms = report["summary"]["arms"]
    if arm not in arms:
        raise ValueError(f"the report has no arm {arm!r}; arms: {', '.join(arms)}")
    return arms[arm]["runs"][run]


def opening_moves(report: Dict[str, Any], arm: str = "azdb", *, run: int = 0, max_boards: Optional[int] = None,
                  columns: int = 4) -> Tuple[Any, Dict[str, Any]]:
    """Fig. 3: every opening position with each player's LCB move as an arrow in its colour.

    Returns:
      (figure, numbers): ``boards`` (label, FEN, each player's UCI move, distinct count)
      and ``player_colours``.
    """
    import matplotlib.lines as mlines  # pylint: disable=g-import-not-at-top
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    data = _run(report, arm, run)
    openings = report["summary"]["openings"]
    moves = data["opening_moves"]
    count = len(openings) if max_boards is None else min(max_boards, len(openings))
    colours = player_colours(data["num_players"])
    cols = min(columns, count)
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.75 * rows + 0.6), squeeze=False,
                             constrained_layout=True)
    boards = []
    for b in range(rows * cols):
        ax = axes[b // cols, b % cols]
        if b >= count:
            ax.axis("off")
            continue
        distinct = len({m for m in moves[b] if m})
        label = openings[b]["label"]
        draw_board(ax, openings[b]["fen"], moves[b], colours,
                   title=f"{label[:34]}{'…' if len(label) > 34 else ''}\n{distinct} distinct")
        boards.append({"label": label, "fen": openings[b]["fen"], "moves": list(moves[b]), "distinct": distinct})
    handles = [mlines.Line2D([], [], color=c, lw=2.2, label=f"player {j}") for j, c in enumerate(colours)]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(colours), 6), fontsize=7)
    fig.suptitle(f"LCB moves of the {ARM_LABELS.get(arm, arm)} players ({data['run']})", fontsize=9)
    return fig, {"arm": arm, "run": data["run"], "boards": boards, "player_colours": colours}


def distinct_moves(report: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Distinct moves per position among a team's players, AZdb against its control: the
    mean with its standard error (left) and the histogram over positions (right).

    Returns:
      (figure, numbers): per arm ``mean``, ``stderr``, ``stderr_over``, ``histogram``
      (summed over runs); the difference AZdb − control and its standard error.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    summary = report["summary"]
    arms = list(summary["arms"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
    numbers: Dict[str, Any] = {}
    width = 0.8 / max(len(arms), 1)
    for x, arm in enumerate(arms):
        data = summary["arms"][arm]
        colour = "tab:green" if arm == "azdb" else "tab:grey"
        left.bar(x, data["distinct_mean"], 0.6, yerr=data["distinct_stderr"] or 0.0, capsize=4, color=colour)
        histogram: Dict[str, int] = {}
        for r in data["runs"]:
            for k, v in r["histogram"].items():
                histogram[str(k)] = histogram.get(str(k), 0) + int(v)
        keys = sorted(histogram, key=int)
        right.bar(np.array([int(k) for k in keys]) + (x - (len(arms) - 1) / 2) * width,
                  [histogram[k] for k in keys], width, color=colour, label=ARM_LABELS.get(arm, arm))
        numbers[arm] = {"mean": data["distinct_mean"], "stderr": data["distinct_stderr"],
                        "stderr_over": data["stderr_over"], "histogram": histogram}
    left.set_xticks(range(len(arms)))
    left.set_xticklabels([ARM_LABELS.get(a, a) for a in arms])
    left.set_ylabel("distinct moves per position")
    left.set_title(f"mean over {summary['positions']} positions (± SE)", fontsize=9)
    right.set_xlabel("distinct moves among the players")
    right.set_ylabel("positions")
    right.set_title("histogram", fontsize=9)
    right.legend(fontsize=7)
    numbers["difference"] = summary["distinct_difference"]
    numbers["difference_stderr"] = summary["distinct_difference_stderr"]
    return fig, numbers


__all__ = ["parse_placement", "uci_squares", "player_colours", "draw_board", "opening_moves", "distinct_moves"]
