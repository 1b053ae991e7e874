"""Chess: pgx's chess with its traps fixed (``azdb_jax.envs.chess``), and its record.

φ (SPEC §1.2) is 772 = 12 piece planes (White P N B R Q K, Black p n b r q k) x 64
squares a1, b1, ..., h8 (python-chess order) + 4 castling rights (White O-O, White
O-O-O, Black O-O, Black O-O-O), seen from White's side: pgx stores the board from the
mover's side, so it is un-flipped.
"""

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import data
from azdb_jax.envs import board_interop
from azdb_jax.envs.chess import Chess, DEFAULT_MAX_PIECES, MAX_TERMINATION_STEPS
from azdb_jax.games import planes
from azdb_jax.games.chess_positions import CHESS_POSITIONS
from azdb_jax.games.game import Game

Array = jax.Array

# K: slots per tree node, a bound on the legal moves. Measured over 102,400
# random-playout positions (docs/performance.md): max 70, 0.015% of positions above 64.
NUM_SLOTS = 64

# Data files under AZDB_DATA_DIR: the 4-move book matches start from, the ECO openings
# table, and the Lichess puzzles the puzzle groups solve.
OPENING_BOOK = ("books", "4mvs_+90_+99.epd")
ECO_OPENINGS = ("openings",)
LICHESS_PUZZLES = ("puzzles", "lichess_puzzles_kagi_1000_random.csv")
PUZZLE_SETS = ("lichess",)


def features(state: pgx.core.State) -> Array:
    """φ for pgx chess states: 12 x 64 piece planes + 4 castling rights = 772."""
    x = state._x  # pylint: disable=protected-access
    black_to_move = x.color == 1
    board = planes.absolute_board(x.board, black_to_move, 8)
    # castling_rights: [[mover O-O-O, mover O-O], [opponent O-O-O, opponent O-O]]
    rights = jnp.where(black_to_move, x.castling_rights[::-1], x.castling_rights)
    castling = jnp.stack([rights[0, 1], rights[0, 0], rights[1, 1], rights[1, 0]])
    return jnp.concatenate([planes.piece_planes(board, 64), castling.astype(jnp.float32)])


def mover_board(state: pgx.core.State) -> Array:
    """[G, 64] pgx piece codes from the side to move's view (positive: its pieces)."""
    return state._x.board  # pylint: disable=protected-access


def env_options(env_config) -> dict:
    """``env.max_pieces`` (0: pgx's 16): the mover's pieces chess's move generator considers."""
    max_pieces = env_config.max_pieces
    if not max_pieces:
        return {}
    if not DEFAULT_MAX_PIECES <= max_pieces <= 64:
        raise ValueError(f"env.max_pieces must be in [{DEFAULT_MAX_PIECES}, 64] (0: the default "
                         f"{DEFAULT_MAX_PIECES}); got {max_pieces!r}")
    return {"max_pieces": max_pieces}


def load_puzzles(name: str):
    """The puzzles of set ``name`` (``PUZZLE_SETS``): the Lichess puzzles of the data folder."""
    if name not in PUZZLE_SETS:
        raise ValueError(f"unknown chess puzzle set {name!r}; sets: {', '.join(PUZZLE_SETS)}")
    return data.load_lichess_puzzles(data.data_path(*LICHESS_PUZZLES), game="chess")


GAME = Game(
    id="chess",
    make=Chess,
    features=features,
    max_plies=MAX_TERMINATION_STEPS,  # pgx's cap, 512
    num_slots=NUM_SLOTS,
    env_options=env_options,
    config_fields=("max_pieces",),
    start_positions=CHESS_POSITIONS,
    mover_board=mover_board,
    board=board_interop.CHESS,
    compact_state=True,
    uci_variant="chess",
    opening_book=OPENING_BOOK,
    eco_openings=ECO_OPENINGS,
    puzzle_sets=PUZZLE_SETS,
    load_puzzles=load_puzzles,
    puzzle_start_overrides=("env.max_pieces=32",),  # some Penrose positions have more than 16 pieces a side
    from_pgx=True,
)
