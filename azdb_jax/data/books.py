"""Opening books: one start position per line, as a full FEN or as EPD.

Match play starts games from book positions, both colours. Book files come in two
spellings, and a file may mix them:

* a full FEN with clocks: ``rnbqk1nr/p1p2ppp/... w KQkq - 0 5`` (Stockfish books);
* an EPD line: the four position fields, no clocks, optional operations
  (``... w KQkq - id "book.001";``).

Every position must be legal in standard chess and have a legal move, since a game is
played from it.
"""

from __future__ import annotations

import dataclasses

import chess

from azdb_jax.data._common import (
    LineError,
    Loaded,
    PathLike,
    collect,
    content_lines,
    parse_board,
    read_lines,
    status_names,
)
from azdb_jax.data.epd import parse_epd_line


@dataclasses.dataclass(frozen=True)
class BookPosition:
    """One book start position.

    Attributes:
      fen: full FEN (canonical); EPD lines get ``hmvc``/``fmvn`` clocks or ``"0 1"``.
      id: the EPD ``id`` operation, or None.
      ops: other EPD operations as ``(opcode, text)`` (moves as UCI); empty for FEN lines.
    """

    fen: str
    id: str | None = None
    ops: tuple[tuple[str, str], ...] = ()

    def board(self) -> chess.Board:
        """A fresh ``chess.Board`` of the position."""
        return chess.Board(self.fen)


def _is_fen_line(fields: list[str]) -> bool:
    """A FEN carries clocks after the four position fields; EPD carries operations there."""
    # EPD opcodes start with a letter, so a digit in the fifth field means a clock.
    return len(fields) > 4 and fields[4][:1].isdigit()


def parse_book_line(line: str) -> BookPosition:
    """Parses one FEN or EPD book line.

    Raises:
      ValueError: bad FEN/EPD, an illegal move in an EPD operation, a position that is not
        legal in standard chess, or one with no legal move.
    """
    fields = line.split()
    if _is_fen_line(fields):
        board = parse_board(" ".join(fields))
        position = BookPosition(board.fen())
    else:
        record = parse_epd_line(line, c0="text")
        ops = [(name, " ".join(moves)) for name, moves in (("bm", record.bm), ("am", record.am)) if moves]
        if record.c9:
            ops.append(("c9", " ".join(record.c9)))
        position = BookPosition(record.fen, record.id, tuple(ops) + record.ops)
        board = position.board()
    if not board.is_valid():
        raise LineError(f"position is not legal in standard chess ({', '.join(status_names(board))})")
    if not any(board.legal_moves):
        raise LineError("position has no legal move (checkmate or stalemate)")
    return position


def load_book(path: PathLike, *, strict: bool = True) -> Loaded[BookPosition]:
    """Loads an opening book, one FEN or EPD per line (blank and ``#`` lines skipped).

    Args:
      path: the ``.epd``/``.fen`` file.
      strict: raise :class:`~azdb_jax.data.DataFormatError` at the first bad line (default),
        or keep good lines and list bad ones in ``.skipped``.

    Returns:
      A :class:`~azdb_jax.data.Loaded` tuple of :class:`BookPosition`, in file order
      (duplicates are kept: a book may weight a line by repeating it).
    """
    return collect(path, content_lines(read_lines(path)), parse_book_line, strict=strict)
