"""Board planes in absolute orientation: the building blocks of the games' features φ.

pgx stores some boards from the side to move's view (chess, Gardner chess, Othello);
φ sees every board from one fixed side (SPEC §1.2), so these helpers un-flip them and
lay pieces out as one-hot planes.
"""

import jax
import jax.numpy as jnp

Array = jax.Array


def piece_planes(board_abs: Array, size: int) -> Array:
    """12 x size one-hot planes from an absolute board in rank-major square order.

    ``board_abs`` holds +1..+6 for White P N B R Q K and -1..-6 for Black.
    """
    pieces = jnp.concatenate([jnp.arange(1, 7), -jnp.arange(1, 7)])  # [12]
    return (board_abs[None, :] == pieces[:, None]).astype(jnp.float32).reshape(12 * size)


def absolute_board(board: Array, black_to_move: Array, n: int) -> Array:
    """Mover-relative, file-major pgx board [n*n] -> absolute, rank-major board [n*n].

    pgx indexes squares ``file * n + rank`` from the mover's side (ranks mirrored and
    colours negated when Black is to move).
    """
    files_ranks = board.reshape(n, n)  # [file, rank]
    unflipped = jnp.where(black_to_move, -files_ranks[:, ::-1], files_ranks)
    return unflipped.T.reshape(n * n)  # [rank, file] -> a1, b1, ..., i.e. rank-major


def two_colour_planes(board: Array) -> Array:
    """pgx's -1 (empty) / 0 (first player) / 1 (second player) cells -> 2 planes."""
    return jnp.concatenate([board == 0, board == 1]).astype(jnp.float32)


__all__ = ["absolute_board", "piece_planes", "two_colour_planes"]
