"""Gardner chess (5x5) start positions: the engine-labelled puzzle sets, solution lines, FENs to states.

Gardner chess's ``FenGame`` (``GARDNER_POSITIONS``, in its record
``azdb_jax.games.gardner_chess``). A source is

- ``"gardner:<set>"``: a packaged puzzle set of ``azdb_jax.data.gardner``
  (``mate_in_1``, ``mate_in_2``, ``mate_in_3``, ``only_move``). Every puzzle of a set is
  in the group named by the source (e.g. ``"gardner:mate_in_3"``), so the group split
  holds out a whole kind of puzzle: an out-of-distribution test;
- a Gardner puzzle CSV in the Lichess layout (``.csv``; the puzzle position is the one
  after ``Moves[0]``, the solution line is the rest of ``Moves``); each puzzle is its
  own group.

Errors name the file and line (the data loaders' ``DataFormatError``).
"""

import functools
import pathlib
from typing import List, Sequence, Tuple

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax.data import gardner as gardner_data
from azdb_jax.envs import gardner_interop
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.games.positions import FenGame, PuzzleRecord, record_lines

PREFIX = "gardner:"


def _records(path: str, group: str = "") -> List[PuzzleRecord]:
    puzzles = gardner_data.load_gardner_puzzles(path=path)
    numbers, header = record_lines(path, len(puzzles))
    out = []
    for puzzle, n in zip(puzzles, numbers):
        name = puzzle.puzzle_id or f"line {n}"
        out.append(PuzzleRecord(fen=puzzle.start_fen, line=tuple(puzzle.moves[1:]), puzzle_id=name,
                                   group=group or name, path=path, line_number=n, header_line=header))
    return out


def load_records(source: str) -> List[PuzzleRecord]:
    """The puzzles of one source (see the module docstring)."""
    if source.startswith(PREFIX):
        name = source[len(PREFIX):]
        if name not in gardner_data.PUZZLE_SETS:
            raise ValueError(f"start_positions.sources: {source!r}: the packaged Gardner sets are "
                             f"{', '.join(PREFIX + s for s in gardner_data.PUZZLE_SETS)}")
        return _records(str(gardner_data.packaged_path(name)), group=source)
    path = pathlib.Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"start_positions.sources: positions file not found: {source}")
    if path.suffix.lower() != ".csv":
        raise ValueError(f"start_positions.sources: {source}: Gardner positions come from Lichess-layout .csv "
                         f"files or the packaged sets ({PREFIX}<set>)")
    return _records(str(path))


def line_positions(fen: str, line: Sequence[str]) -> List[str]:
    """FENs where the solver is to move again along ``line`` (after its move and the reply)."""
    return list(_line_positions(fen, tuple(line)))


@functools.lru_cache(maxsize=4096)
def _line_positions(fen: str, line: Tuple[str, ...]) -> Tuple[str, ...]:
    # Each puzzle-start run of a process asks for the same lines: each is stepped once.
    board = GardnerBoard(fen)
    out = []
    for k, uci in enumerate(line):
        board.push_uci(uci)
        if k % 2 == 1 and not board.is_game_over():
            out.append(board.fen())
    return tuple(out)


def states_from_fens(env: pgx.core.Env, fens: Sequence[str]) -> pgx.core.State:
    """Stacked Gardner chess states of ``fens``."""
    if env.id != "gardner_chess":
        raise ValueError(f"Gardner start positions need the gardner_chess env, not {env.id!r}")
    return gardner_interop.states_from_fens(list(fens))


def set_halfmove_clock(env: pgx.core.Env, state: pgx.core.State, clock: jax.Array) -> pgx.core.State:
    """The position with half-move clock ``clock`` (its observation's no-progress plane too);
    pgx's Gardner chess draws at 100, as chess does."""
    state = state.replace(_halfmove_count=jnp.asarray(clock, jnp.int32))  # type: ignore
    return state.replace(observation=env.observe(state))  # type: ignore


GARDNER_POSITIONS = FenGame(load_records=load_records, line_positions=line_positions,
                            states_from_fens=states_from_fens, set_halfmove_clock=set_halfmove_clock)
