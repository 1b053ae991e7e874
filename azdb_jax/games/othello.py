"""Othello (8x8): pgx's ``othello`` as it is, a greedy player, and its record.

pgx keeps the board from the side to move's view (+1 its discs, −1 the opponent's,
0 empty; squares 0..63 row by row from a1's corner, action 64 = pass) and ``_x.turn``
says whose view it is: 0 when Black, who moves first, is to move. φ (SPEC §1.2) is
128 = 2 x 64 squares in pgx's order: Black's discs, then White's — the board un-flipped
to a fixed colour, so the same position has the same φ whoever is to move.

A game has at most 60 placements and never two passes in a row before its end (the
second ends it), so it lasts fewer than 2·60 + 2 plies; ``MAX_PLIES`` bounds it.
"""

from typing import Dict

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import policies
from azdb_jax.games.game import Game, pgx_factory

Array = jax.Array

MAX_PLIES = 128
PASS = 64  # the pass action, legal only when no placement is


def features(state: pgx.core.State) -> Array:
    """φ for Othello: Black's discs then White's, 2 x 64."""
    board = state._x.board  # pylint: disable=protected-access
    black_to_move = state._x.turn == 0  # pylint: disable=protected-access
    black = jnp.where(black_to_move, board == 1, board == -1)
    white = jnp.where(black_to_move, board == -1, board == 1)
    return jnp.concatenate([black, white]).astype(jnp.float32)


def disc_difference_after(env: pgx.core.Env, state: pgx.core.State) -> Array:
    """[A] the mover's discs minus the opponent's after each action of one state
    (−inf for illegal actions)."""
    children = jax.vmap(env.step, in_axes=(None, 0))(state, jnp.arange(env.num_actions))
    # After the move the board is from the opponent's view: the mover's discs are the −1s.
    difference = jnp.sum(-children._x.board, axis=-1).astype(jnp.float32)  # pylint: disable=protected-access
    return jnp.where(state.legal_action_mask, difference, -jnp.inf)


def greedy_policy(env: pgx.core.Env) -> policies.Policy:
    """Plays a move that leaves the most discs of its colour on the board (ties uniformly
    at random): the classic one-ply baseline."""

    def policy(params, rng_key, state):
        del params
        scores = jax.vmap(lambda s: disc_difference_after(env, s))(state)
        best = state.legal_action_mask & (scores >= scores.max(axis=-1, keepdims=True))
        return policies.sample_uniform(rng_key, best)

    return policy


def opponents(env: pgx.core.Env) -> Dict[str, policies.Policy]:
    """"greedy": the most discs after its move (``greedy_policy``)."""
    return {"greedy": greedy_policy(env)}


GAME = Game(
    id="othello",
    make=pgx_factory("othello"),
    features=features,
    max_plies=MAX_PLIES,
    opponents=opponents,
    from_pgx=True,
)
