"""What FEN-like start positions need of a game, and the records its sources give.

A game with start positions (``Game.start_positions``) reads its puzzle and book files
into ``PuzzleRecord``s and turns FENs into pgx states (a ``FenGame``);
``azdb_jax.start_positions`` samples a run's start positions from them.
"""

from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import jax
import pgx.core

from azdb_jax.data import _common

Array = jax.Array


class PuzzleRecord(NamedTuple):
    """One puzzle (or book position) of a positions source."""

    fen: str  # the position the solver faces
    line: Tuple[str, ...]  # its solution line from there, UCI, solver first (empty if none)
    puzzle_id: str  # unique within its source
    group: str  # puzzle family, held out together by the group split
    path: str  # the file it was read from
    line_number: int  # its line in that file (1-based)
    header_line: int = 0  # the line of that file's header row (CSV), 0 if none


class FenGame(NamedTuple):
    """What start positions need of a game with FEN-like positions.

    Attributes:
      load_records: source spec (``config.StartPositionsConfig.sources`` entry) -> records.
      line_positions: (fen, solution line) -> FENs where the solver is to move again,
        after each of its moves and the reply.
      states_from_fens: (env, FENs) -> stacked pgx State [N]; raises ``ValueError`` when
        the env cannot play a position (e.g. too many pieces for its move generator).
      set_halfmove_clock: (env, state, clock []) -> the state with that clock (and its
        observation updated), or None for games without one.
    """

    load_records: Callable[[str], List[PuzzleRecord]]
    line_positions: Callable[[str, Sequence[str]], List[str]]
    states_from_fens: Callable[[pgx.core.Env, Sequence[str]], pgx.core.State]
    set_halfmove_clock: Optional[Callable[[pgx.core.Env, pgx.core.State, Array], pgx.core.State]] = None

    @property
    def has_clock(self) -> bool:
        return self.set_halfmove_clock is not None


def record_lines(path, count: int) -> Tuple[List[int], int]:
    """(line number of each of ``count`` records, header line or 0) of a file whose strict
    loader returns one record per content line, after an optional header row."""
    lines = _common.read_lines(path)
    numbers = [n for n, _ in _common.content_lines(lines)]
    if len(numbers) == count:
        return numbers, 0
    if len(numbers) == count + 1:
        return numbers[1:], numbers[0]
    raise ValueError(f"{path}: {count} records but {len(numbers)} content lines")


__all__ = ["FenGame", "PuzzleRecord", "record_lines"]
