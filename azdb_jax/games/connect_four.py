"""Connect four: pgx's ``connect_four`` as it is, and its record.

φ (SPEC §1.2) is 84 = 2 x 42 cells (row-major from the top row, pgx order): the first
player's discs, then the second player's. pgx's board is already absolute. The game is solved: ``connect_four_solver`` is its ground
truth and its ``perfect`` opponent.
"""

import jax
import pgx.core

from azdb_jax.games import connect_four_solver, planes
from azdb_jax.games.game import Game, minimax_opponents, pgx_factory

Array = jax.Array

NUM_SLOTS = 7  # one move per column


def features(state: pgx.core.State) -> Array:
    """φ for connect four: 2 x 42."""
    return planes.two_colour_planes(state._x.board)  # pylint: disable=protected-access


def mirror(observation: Array, policy: Array) -> tuple[Array, Array]:
    """The position mirrored left to right: pgx's observation ``[..., 6, 7, 2]`` has the
    columns on its second-last axis, and action ``c`` drops a disc in column ``c``."""
    return observation[..., ::-1, :], policy[..., ::-1]


GAME = Game(
    id="connect_four",
    make=pgx_factory("connect_four"),
    features=features,
    max_plies=42,  # the board's cells
    num_slots=NUM_SLOTS,
    opponents=minimax_opponents(NUM_SLOTS),  # "minimax2"
    opponent_spec=connect_four_solver.opponent_spec,  # "perfect[:random=R][,depth=D]": the solver
    from_pgx=True,
    mirror=mirror,
)
