"""Tic-tac-toe: pgx's ``tic_tac_toe`` as it is, a perfect player, and its record.

φ (SPEC §1.2) is 18 = 2 x 9 cells: X's marks, then O's (pgx's board is absolute).
The perfect player (``tic_tac_toe_perfect_policy``) is one of the game's fixed
opponents: it never loses, so a trained player's score against it is at most ½.
"""

import functools
from typing import Any, Dict

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import policies
from azdb_jax.games import planes
from azdb_jax.games.game import Game, pgx_factory

Array = jax.Array

NUM_SLOTS = 9  # one move per cell
_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_TTT_NUM_CODES = 3**9


def features(state: pgx.core.State) -> Array:
    """φ for tic-tac-toe: 2 x 9."""
    return planes.two_colour_planes(state._x.board)  # pylint: disable=protected-access


def mirror(observation: Array, policy: Array) -> tuple[Array, Array]:
    """The position mirrored left to right: pgx's observation ``[..., 3, 3, 2]`` (rows,
    columns, planes), action ``3 r + c`` marks row ``r``, column ``c``."""
    flipped = policy.reshape(policy.shape[:-1] + (3, 3))[..., ::-1]
    return observation[..., ::-1, :], flipped.reshape(policy.shape)


def tic_tac_toe_code(board) -> Any:
    """Base-3 code ``Σ_i (board[i] + 1)·3^i`` of a pgx tic-tac-toe board [..., 9].

    pgx stores cells as -1 (empty), 0 (X, who moves first) or 1 (O); the side to move
    follows from the counts, so the board alone identifies a position. Works on numpy
    and JAX arrays.
    """
    powers = 3 ** np.arange(9)
    return ((board + 1) * powers).sum(axis=-1)


def _ttt_won(board: tuple, mark: int) -> bool:
    return any(all(board[i] == mark for i in line) for line in _TTT_LINES)


@functools.lru_cache(maxsize=None)
def perfect_tic_tac_toe_table() -> np.ndarray:
    """Optimal-move masks ``[3^9, 9]`` (bool) of every reachable tic-tac-toe position.

    Negamax with memoisation over the positions reachable from the empty board. A move
    is scored from the mover's side as ``1 + e`` for a win leaving ``e`` empty cells,
    0 for a draw and the negated score of the reply otherwise, so among game-
    theoretically optimal moves the table keeps those that win soonest and lose
    latest (the sign of the score is the game value). Rows of terminal or unreachable
    positions are all False. Built once on the host (a few thousand positions).
    """
    table = np.zeros((_TTT_NUM_CODES, 9), dtype=bool)
    memo: Dict[tuple, int] = {}

    def negamax(board: tuple) -> int:
        if board in memo:
            return memo[board]
        mover = int(sum(c >= 0 for c in board) % 2)
        scores = np.full(9, -np.inf)
        for cell in range(9):
            if board[cell] != -1:
                continue
            child = board[:cell] + (mover,) + board[cell + 1:]
            empties = sum(c == -1 for c in child)
            if _ttt_won(child, mover):
                scores[cell] = 1 + empties
            elif empties == 0:
                scores[cell] = 0
            else:
                scores[cell] = -negamax(child)
        best = int(scores.max())
        table[tic_tac_toe_code(np.asarray(board))] = scores == best
        memo[board] = best
        return best

    negamax((-1,) * 9)
    table.setflags(write=False)
    return table


def tic_tac_toe_perfect_policy() -> policies.Policy:
    """A perfect tic-tac-toe player: never loses, wins soonest, uniform among ties.

    Looks up ``perfect_tic_tac_toe_table`` by the board code of pgx's ``state._x.board``;
    falls back to a random legal move where the table has no entry (never reached from
    legal play).
    """
    table = jnp.asarray(perfect_tic_tac_toe_table())

    def policy(params, rng_key, state):
        del params
        legal = state.legal_action_mask
        optimal = table[tic_tac_toe_code(state._x.board)] & legal  # pylint: disable=protected-access
        choice = jnp.where(optimal.any(axis=-1, keepdims=True), optimal, legal)
        return policies.sample_uniform(rng_key, choice)

    return policy


def opponents(env: pgx.core.Env) -> Dict[str, policies.Policy]:
    """"perfect" (``tic_tac_toe_perfect_policy``) and "minimax2" (depth-2 negamax: wins in
    one, avoids losing in one)."""
    return {"perfect": tic_tac_toe_perfect_policy(), "minimax2": policies.minimax_policy(env, 2, num_moves=NUM_SLOTS)}


GAME = Game(
    id="tic_tac_toe",
    make=pgx_factory("tic_tac_toe"),
    features=features,
    max_plies=9,  # the board's cells
    num_slots=NUM_SLOTS,
    opponents=opponents,
    from_pgx=True,
    mirror=mirror,
)
