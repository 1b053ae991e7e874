"""Solver-labelled connect-four positions, shipped with the package.

The ground truth of connect four's measures (``azdb_jax.evaluation.solved_positions``):
positions from several phases of the game, each with every move's solved score, written
by ``experiments/connect_four_truth.py --make_positions`` (fixed seed; positions from
random play and from the solver's play with random moves mixed in; labelled by the
perfect solver of ``azdb_jax.games.connect_four_solver``). File
``azdb_jax/data/connect_four_positions.csv``, columns:

- ``id``: ``c4_<n>``;
- ``phase``: ``opening`` (4-10 plies played), ``middle`` (11-20) or ``late`` (21-32);
- ``source``: ``random`` (uniformly random moves) or ``noisy_solver`` (the solver's best
  move, a random one with probability 0.3);
- ``moves``: the columns played from the empty board (0-6, the first player's first), as
  digits;
- ``scores``: the solved score of each column's move for the side to move, seven values
  separated by spaces, ``x`` for a full column (the solver's scheme: > 0 the mover wins,
  sooner is larger; 0 a draw; < 0 the mover loses).

>>> positions = load_connect_four_positions()   # Loaded[SolvedPosition]
>>> positions[0].value, positions[0].keeping    # +1/0/-1 for the mover; the moves that keep it
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import pathlib

from typing import Optional, Sequence

import numpy as np

from azdb_jax.data._common import DataFormatError, Loaded, PathLike, collect, content_lines, read_header, read_lines, split_csv_line

__all__ = ["COLUMNS", "FIELDS", "PHASES", "ROWS", "cells_from_moves", "winner", "SolvedPosition", "format_position", "load_connect_four_positions", "packaged_path"]

FILE = "connect_four_positions.csv"
FIELDS = ("id", "phase", "source", "moves", "scores")
ROWS, COLUMNS = 6, 7
PHASES = {"opening": (4, 10), "middle": (11, 20), "late": (21, 32)}  # plies played, inclusive
SOURCES = ("random", "noisy_solver")
FULL = "x"


@dataclasses.dataclass(frozen=True)
class SolvedPosition:
    """One position and every move's solved score (for the side to move)."""

    id: str
    phase: str
    source: str
    moves: tuple[int, ...]  # columns from the empty board
    scores: tuple[int | None, ...]  # per column; None: the column is full

    @property
    def legal(self) -> np.ndarray:
        """``[7]`` bool: the columns that are not full."""
        return np.array([s is not None for s in self.scores])

    @property
    def value(self) -> int:
        """The position's outcome for the side to move: +1 win, 0 draw, −1 loss."""
        return int(np.sign(max(s for s in self.scores if s is not None)))

    @property
    def keeping(self) -> np.ndarray:
        """``[7]`` bool: the moves that keep the outcome (a win stays a win, a draw a draw)."""
        return np.array([s is not None and int(np.sign(s)) == self.value for s in self.scores])

    @property
    def best(self) -> np.ndarray:
        """``[7]`` bool: the best-scoring moves (the fastest win, the slowest loss)."""
        top = max(s for s in self.scores if s is not None)
        return np.array([s == top for s in self.scores])


def cells_from_moves(moves: Sequence[int]) -> np.ndarray:
    """pgx's 42 cells after ``moves`` (columns 0-6, the first player's first) from the empty board.

    Raises:
      ValueError: a column outside 0-6, a full column, or a move after the game was won
        (naming the move's index).
    """
    board = -np.ones((ROWS, COLUMNS), np.int32)
    for index, column in enumerate(moves):
        column = int(column)
        if not 0 <= column < COLUMNS:
            raise ValueError(f"move {index}: column {column} is not in 0-{COLUMNS - 1}")
        if winner(board.reshape(-1)) is not None:
            raise ValueError(f"move {index}: the game was already won")
        filled = int((board[:, column] >= 0).sum())
        if filled == ROWS:
            raise ValueError(f"move {index}: column {column} is full")
        board[ROWS - 1 - filled, column] = index % 2
    return board.reshape(-1)


def _lines() -> np.ndarray:
    """``[69, 4]`` cell indices of every line of four (rows, columns, both diagonals)."""
    lines = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(ROWS):
            for c in range(COLUMNS):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= y < ROWS and 0 <= x < COLUMNS for y, x in cells):
                    lines.append([y * COLUMNS + x for y, x in cells])
    return np.array(lines)


_LINES = _lines()


def winner(cells: np.ndarray) -> Optional[int]:
    """0 or 1, the player with four in a row on ``cells`` (pgx layout), or None."""
    lines = np.asarray(cells).reshape(-1)[_LINES]
    won = (lines[:, 0] >= 0) & (lines == lines[:, :1]).all(axis=1)
    return int(lines[np.argmax(won), 0]) if won.any() else None


def format_position(position: SolvedPosition) -> str:
    """The position's CSV line (``FIELDS``)."""
    scores = " ".join(FULL if s is None else str(s) for s in position.scores)
    return ",".join([position.id, position.phase, position.source, "".join(map(str, position.moves)), scores])


def _parse(text: str) -> SolvedPosition:
    fields = split_csv_line(text)
    if len(fields) != len(FIELDS):
        raise ValueError(f"expected {len(FIELDS)} fields ({','.join(FIELDS)}), got {len(fields)}")
    pid, phase, source, moves_text, scores_text = (f.strip() for f in fields)
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; valid: {', '.join(PHASES)}")
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; valid: {', '.join(SOURCES)}")
    if not moves_text.isdigit():
        raise ValueError(f"moves must be column digits 0-6, got {moves_text!r}")
    moves = tuple(int(c) for c in moves_text)
    low, high = PHASES[phase]
    if not low <= len(moves) <= high:
        raise ValueError(f"{len(moves)} plies played is not in the {phase} phase ({low}-{high})")
    cells = cells_from_moves(moves)  # ValueError naming the bad move
    if winner(cells) is not None:
        raise ValueError("the game is over after these moves")
    tokens = scores_text.split()
    if len(tokens) != COLUMNS:
        raise ValueError(f"expected 7 scores, got {len(tokens)}")
    try:
        scores = tuple(None if t == FULL else int(t) for t in tokens)
    except ValueError:
        raise ValueError(f"scores must be integers or {FULL!r}, got {scores_text!r}") from None
    full = (cells.reshape(6, 7) >= 0).all(axis=0)
    for column, (score, is_full) in enumerate(zip(scores, full)):
        if (score is None) != bool(is_full):
            raise ValueError(f"column {column} is {'full' if is_full else 'open'} but its score is "
                             f"{FULL if score is None else score}")
    return SolvedPosition(pid, phase, source, moves, scores)


def packaged_path() -> pathlib.Path:
    """The shipped position file; FileNotFoundError naming the script that writes it."""
    path = pathlib.Path(str(importlib.resources.files("azdb_jax.data").joinpath(FILE)))
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; write it with "
                                "`python experiments/connect_four_truth.py --make_positions`")
    return path


def load_connect_four_positions(path: PathLike | None = None, *, strict: bool = True) -> Loaded[SolvedPosition]:
    """The shipped solver-labelled positions, or those of the file at ``path`` (same layout).

    Raises:
      DataFormatError: a bad line (``strict``), naming the file, the line and the reason.
    """
    path = packaged_path() if path is None else pathlib.Path(path)
    lines = read_lines(path)
    header = read_header(path, lines)
    if header is not None and tuple(header[2]) != FIELDS:
        raise DataFormatError(path, header[0], f"expected the header {','.join(FIELDS)}", header[1])
    start = 0 if header is None else header[0]
    return collect(path, content_lines(lines, start), _parse, strict=strict)
