"""Gardner chess (5x5): pgx's ``gardner_chess`` with its hash traps fixed
(``azdb_jax.envs.gardner``), and its record.

φ (SPEC §1.2) is 300 = 12 piece planes (White P N B R Q K, Black p n b r q k) x 25
squares a1, b1, ..., e5, seen from White's side (pgx stores the board from the mover's).
"""

import jax
import pgx.core

from azdb_jax.data import gardner as gardner_data
from azdb_jax.envs import board_interop
from azdb_jax.envs.gardner import GardnerChess, MAX_TERMINATION_STEPS
from azdb_jax.games import planes
from azdb_jax.games.game import Game, minimax_opponents
from azdb_jax.games.gardner_positions import GARDNER_POSITIONS

Array = jax.Array

# K: slots per tree node, a bound on the legal moves. Measured over 102,400
# random-playout positions (docs/performance.md): max 35.
NUM_SLOTS = 48


def features(state: pgx.core.State) -> Array:
    """φ for pgx Gardner (5x5) chess states: 12 x 25 piece planes = 300."""
    board = planes.absolute_board(state._board, state._turn == 1, 5)  # pylint: disable=protected-access
    return planes.piece_planes(board, 25)


def mover_board(state: pgx.core.State) -> Array:
    """[G, 25] pgx piece codes from the side to move's view (positive: its pieces)."""
    return state._board  # pylint: disable=protected-access


GAME = Game(
    id="gardner_chess",
    make=GardnerChess,
    features=features,
    max_plies=MAX_TERMINATION_STEPS,  # pgx's cap, 256
    num_slots=NUM_SLOTS,
    opponents=minimax_opponents(NUM_SLOTS),  # "minimax2"
    start_positions=GARDNER_POSITIONS,
    mover_board=mover_board,
    board=board_interop.GARDNER,
    compact_state=True,
    uci_variant="gardner",  # Fairy-Stockfish's name
    puzzle_sets=gardner_data.PUZZLE_SETS,  # the engine-labelled sets: mate_in_1, mate_in_2, mate_in_3, only_move
    load_puzzles=gardner_data.load_gardner_puzzles,
    from_pgx=True,
)
