"""Board features φ(s, a): the position after a move, in absolute orientation.

AZdb measures behaviour through the expected features of a player's moves (paper §3,
"Behavioral diversity"; SPEC §1.2): φ is the board *after* the move, with no history,
side to move or clocks, seen from White's side (pgx stores chess boards from the
mover's side, so we un-flip them). φ is a pure function of the state reached by the
move, written for one state; vmap it for batches.

Layouts (all float32, values in {0, 1}):
  chess          772 = 12 piece planes (White P N B R Q K, Black p n b r q k) x 64
                 squares a1, b1, ..., h8 (python-chess order) + 4 castling rights
                 (White O-O, White O-O-O, Black O-O, Black O-O-O)
  gardner_chess  300 = 12 x 25 squares a1, b1, ..., e5
  connect_four   84 = 2 x 42 cells (row-major from the top row, pgx order): first
                 player's discs, then second player's
  tic_tac_toe    18 = 2 x 9 cells: X's marks, then O's
  nim            K x (max_heap + 1): one-hot heap sizes
"""

from typing import Callable

import jax
import jax.numpy as jnp
import pgx.core

Array = jax.Array
FeatureFn = Callable[[pgx.core.State], Array]


def _piece_planes(board_abs: Array, size: int) -> Array:
    """12 x size one-hot planes from an absolute board in rank-major square order.

    ``board_abs`` holds +1..+6 for White P N B R Q K and -1..-6 for Black.
    """
    pieces = jnp.concatenate([jnp.arange(1, 7), -jnp.arange(1, 7)])  # [12]
    return (board_abs[None, :] == pieces[:, None]).astype(jnp.float32).reshape(12 * size)


def _absolute_board(board: Array, black_to_move: Array, n: int) -> Array:
    """Mover-relative, file-major pgx board [n*n] -> absolute, rank-major board [n*n].

    pgx indexes squares ``file * n + rank`` from the mover's side (ranks mirrored and
    colours negated when Black is to move).
    """
    files_ranks = board.reshape(n, n)  # [file, rank]
    unflipped = jnp.where(black_to_move, -files_ranks[:, ::-1], files_ranks)
    return unflipped.T.reshape(n * n)  # [rank, file] -> a1, b1, ..., i.e. rank-major


def chess_features(state: pgx.core.State) -> Array:
    """φ for pgx chess states: 12 x 64 piece planes + 4 castling rights = 772."""
    x = state._x  # pylint: disable=protected-access
    black_to_move = x.color == 1
    board = _absolute_board(x.board, black_to_move, 8)
    # castling_rights: [[mover O-O-O, mover O-O], [opponent O-O-O, opponent O-O]]
    rights = jnp.where(black_to_move, x.castling_rights[::-1], x.castling_rights)
    castling = jnp.stack([rights[0, 1], rights[0, 0], rights[1, 1], rights[1, 0]])
    return jnp.concatenate([_piece_planes(board, 64), castling.astype(jnp.float32)])


def gardner_chess_features(state: pgx.core.State) -> Array:
    """φ for pgx Gardner (5x5) chess states: 12 x 25 piece planes = 300."""
    board = _absolute_board(state._board, state._turn == 1, 5)  # pylint: disable=protected-access
    return _piece_planes(board, 25)


def _two_colour_planes(board: Array) -> Array:
    """pgx's -1 (empty) / 0 (first player) / 1 (second player) cells -> 2 planes."""
    return jnp.concatenate([board == 0, board == 1]).astype(jnp.float32)


def connect_four_features(state: pgx.core.State) -> Array:
    """φ for connect four: 2 x 42."""
    return _two_colour_planes(state._x.board)  # pylint: disable=protected-access


def tic_tac_toe_features(state: pgx.core.State) -> Array:
    """φ for tic-tac-toe: 2 x 9."""
    return _two_colour_planes(state._x.board)  # pylint: disable=protected-access


def nim_features(state: pgx.core.State) -> Array:
    """φ for Nim: the one-hot heap sizes, flattened (the observation without its channel)."""
    return state.observation.reshape(-1)


_FEATURE_FNS = {
    "chess": chess_features,
    "gardner_chess": gardner_chess_features,
    "connect_four": connect_four_features,
    "tic_tac_toe": tic_tac_toe_features,
    "nim": nim_features,
}


def feature_fn(env: pgx.core.Env) -> FeatureFn:
    """The φ function for ``env`` (an env from ``azdb_jax.envs.make``)."""
    try:
        return _FEATURE_FNS[env.id]
    except KeyError:
        raise ValueError(f"no board features defined for env '{env.id}'") from None


def num_features(env: pgx.core.Env) -> int:
    """Length of φ for ``env``, from abstract evaluation (no computation)."""
    state = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    return int(jax.eval_shape(feature_fn(env), state).shape[0])
