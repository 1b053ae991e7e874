"""Choosing where to sense: the 3x3 window whose result splits the possible boards most evenly.

A sense centred on square ``s`` shows the pieces on its window ``W_s``; the boards
showing the same pieces there form one cell of a partition of the possible set ``S``.
If the true board is uniform over ``S``, the cell that remains has expected size::

    E|S'| = Σ_k n_k² / |S|,     n_k = the number of boards in cell k,

and the best sense (in this one-step, information-only sense) minimises it: it is
``|S|`` for a window every board agrees on and 1 when every board looks different there.
Only the 36 interior squares are candidates (``rules.INTERIOR_SQUARES``): an edge
square's window is part of an interior one.

The boards are read as a ``[N, 64]`` array of piece codes (``piece_codes``), so the 36
partitions cost 36 ``np.unique`` calls.
"""

from typing import Optional, Sequence

import chess
import numpy as np

from azdb_jax.rbc import rules

__all__ = ["piece_codes", "expected_remaining", "choose_sense"]

# Piece code: 0 empty, 1..6 White P N B R Q K, 7..12 Black P..K.
_NUM_CODES = 13


def piece_codes(boards: Sequence[chess.Board]) -> np.ndarray:
    """``[N, 64]`` uint8 piece codes (0 empty, 1..6 White P..K, 7..12 Black P..K)."""
    bits = rules.unpack_bitboards(rules.piece_bitboards(boards))  # [N, 12, 64]
    return np.einsum("npq,p->nq", bits.astype(np.uint8), np.arange(1, 13, dtype=np.uint8)).astype(np.uint8)


def expected_remaining(codes: np.ndarray, square: int) -> float:
    """``Σ_k n_k² / N`` over the cells of the boards ``codes`` [N, 64] by their window at ``square``."""
    window = codes[:, rules.sense_window(square)].astype(np.int64)  # [N, <=9]
    cell = window @ (_NUM_CODES ** np.arange(window.shape[1], dtype=np.int64))
    _, counts = np.unique(cell, return_counts=True)
    return float(np.sum(counts.astype(np.float64) ** 2) / len(codes))


def choose_sense(boards: Sequence[chess.Board], rng: np.random.Generator,
                 candidates: Optional[Sequence[int]] = None) -> Optional[int]:
    """The candidate square (default: the interior ones) of least expected remaining set
    size, ties broken uniformly with ``rng``; None when there are no boards."""
    if not boards:
        return None
    candidates = list(candidates if candidates is not None else rules.INTERIOR_SQUARES)
    codes = piece_codes(boards)
    sizes = np.asarray([expected_remaining(codes, s) for s in candidates])
    best = np.flatnonzero(sizes <= sizes.min() + 1e-9)
    return candidates[int(rng.choice(best))]
