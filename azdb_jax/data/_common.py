"""Shared machinery for the data loaders: paths, errors, the result type, line reading.

Every loader in :mod:`azdb_jax.data` follows one convention so that a notebook can treat
them alike:

* It takes a path (``str`` or ``os.PathLike``) and returns a :class:`Loaded`: a tuple of
  frozen records with a ``.skipped`` attribute.
* ``strict=True`` (the default) raises :class:`DataFormatError` (a ``ValueError``) at the
  first bad line, with a message ``"<file>:<line>: <reason>"``. ``strict=False`` keeps the
  good records and lists each bad line in ``.skipped`` as a :class:`SkippedLine`.
* A missing or unreadable file raises ``FileNotFoundError``/``OSError`` naming the path.

Third-party data is never shipped with the package; it lives under the folder named by the
``AZDB_DATA_DIR`` environment variable, and :func:`data_path` resolves names inside it.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import pathlib
from typing import Any, Callable, Generic, Iterable, Iterator, NamedTuple, TypeVar

import chess

PathLike = str | os.PathLike
T = TypeVar("T")

DATA_DIR_ENV = "AZDB_DATA_DIR"


class DataFormatError(ValueError):
    """A line of a data file could not be parsed or failed validation.

    Attributes:
      path: the file, as given to the loader.
      line: 1-based line number in that file (0 when the problem is not tied to a line).
      reason: what is wrong, e.g. ``"illegal move 'Qxz9' in c0"``.
      text: the raw line (without its newline), or ``""``.
    """

    def __init__(self, path: PathLike, line: int, reason: str, text: str = ""):
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.text = text
        super().__init__(f"{self.path}:{line}: {reason}")


class SkippedLine(NamedTuple):
    """One line left out by a lenient (``strict=False``) load."""

    path: str  # the file, as given to the loader
    line: int  # 1-based line number
    reason: str  # why it was skipped (same text a strict load would raise)
    text: str  # the raw line, without its newline

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


class Loaded(tuple, Generic[T]):
    """The records of one load, in file order, plus the lines that were skipped.

    A plain tuple of records (index it, iterate it, ``len`` it); ``skipped`` is a tuple of
    :class:`SkippedLine` and is always empty after a strict load.
    """

    skipped: tuple[SkippedLine, ...]

    def __new__(cls, records: Iterable[T] = (), skipped: Iterable[SkippedLine] = ()):
        self = super().__new__(cls, records)
        self.skipped = tuple(skipped)
        return self

    def __repr__(self) -> str:
        # A suite holds thousands of records; a summary keeps notebook output readable.
        return f"Loaded({len(self)} records, {len(self.skipped)} skipped)"

    def __reduce__(self):
        return (Loaded, (tuple(self), self.skipped))


class LineError(ValueError):
    """Raised by a per-line parser; the loader adds file and line number."""


def data_path(*parts: PathLike) -> pathlib.Path:
    """Resolves ``parts`` under the ``AZDB_DATA_DIR`` folder and checks that it exists.

    Example: ``data_path("sts", "STS1-STS15_LAN_v6.epd")``.

    Raises:
      FileNotFoundError: if ``AZDB_DATA_DIR`` is unset or empty, if it is not a folder, or
        if the resolved path does not exist. The message says what to set.
    """
    root = os.environ.get(DATA_DIR_ENV, "").strip()
    if not root:
        raise FileNotFoundError(
            f"{DATA_DIR_ENV} is not set: set it to the folder holding the data files "
            f"(sts/, suites/, puzzles/, openings/, books/), e.g. "
            f"`export {DATA_DIR_ENV}=/path/to/data`"
        )
    base = pathlib.Path(root).expanduser()
    if not base.is_dir():
        raise FileNotFoundError(f"{DATA_DIR_ENV}={root} is not a folder: point it at the data folder")
    path = base.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found ({DATA_DIR_ENV}={root}); check the name or set {DATA_DIR_ENV} "
            f"to the folder that holds it"
        )
    return path


def read_lines(path: PathLike) -> list[str]:
    """Reads a UTF-8 text file into lines without newlines, with a clear error on failure."""
    path = pathlib.Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"expected a file, got a folder: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, 0, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return text.splitlines()


def is_ignorable(text: str) -> bool:
    """Blank lines and ``#`` comment lines, which every loader skips silently."""
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def split_csv_line(text: str, delimiter: str = ",") -> list[str]:
    """Splits one physical line as CSV/TSV (quotes allowed, no embedded newlines)."""
    try:
        return next(csv.reader([text], delimiter=delimiter, strict=True))
    except csv.Error as exc:
        raise LineError(f"bad quoting: {exc}") from None


def collect(
    path: PathLike,
    lines: Iterable[tuple[int, str]],
    parse: Callable[[str], T],
    *,
    strict: bool,
) -> Loaded[T]:
    """Parses numbered lines with ``parse``, applying the strict/lenient error policy.

    ``parse`` raises ``ValueError`` (python-chess errors are ``ValueError`` too) with the
    reason; this turns it into a :class:`DataFormatError` or a :class:`SkippedLine`.
    """
    records: list[T] = []
    skipped: list[SkippedLine] = []
    for number, text in lines:
        try:
            records.append(parse(text))
        except ValueError as exc:
            reason = str(exc) or type(exc).__name__
            if strict:
                raise DataFormatError(path, number, reason, text) from exc
            skipped.append(SkippedLine(str(path), number, reason, text))
    return Loaded(records, skipped)


def content_lines(lines: list[str], start: int = 0) -> Iterator[tuple[int, str]]:
    """Yields ``(1-based number, text)`` for non-blank, non-comment lines from ``start``."""
    for index in range(start, len(lines)):
        if not is_ignorable(lines[index]):
            yield index + 1, lines[index]


# --- python-chess wrappers with uniform, short reasons -------------------------------------


def _move_problem(exc: ValueError) -> str:
    if isinstance(exc, chess.AmbiguousMoveError):
        return "ambiguous move"
    if isinstance(exc, chess.IllegalMoveError):
        return "illegal move"
    return "invalid move"


@dataclasses.dataclass(frozen=True)
class BoardFormat:
    """How the data files of one game write its positions, and the boards they become.

    The loaders take a game by its id (``env.id``, the game registry's name) and read
    its positions through this entry; the registry's games with host-side boards each
    have one (``tests/test_games.py`` checks).

    Attributes:
      game: the game's id (``chess``, ``gardner_chess``).
      new_board: ``fen -> board``; ValueError for a bad FEN.
      fen_problem: ``the board's ValueError text for a bad FEN -> the reason`` alone,
        without the FEN.
      python_chess: boards are python-chess's ``chess.Board``: python-chess's status
        names an illegal position, SAN moves parse, and the packaged chess lists (the
        paper's value puzzles, the default suites) are of this game.
      keep_boards: moves are jitted env steps (~2 ms each, ``GardnerBoard``): a loaded
        puzzle file is kept parsed per process and each puzzle keeps the boards its load
        stepped (chess boards are cheap to replay, and a chess file may hold millions
        of puzzles).
    """

    game: str
    new_board: Callable[[str], Any]
    fen_problem: Callable[[str], str]
    python_chess: bool = False
    keep_boards: bool = False


def _gardner_board(fen: str):
    # Imported for Gardner positions only, so loading chess data needs no JAX.
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    return GardnerBoard(fen)


BOARD_FORMATS = (
    # python-chess: "<reason>: '<fen>'".
    BoardFormat("chess", chess.Board, lambda text: text.split(":")[0], python_chess=True),
    # ``GardnerBoard`` (``azdb_jax.envs.gardner_board``, the part of ``chess.Board``'s API
    # the loaders and puzzle runners use): "invalid Gardner FEN '<fen>': <reason>".
    BoardFormat("gardner_chess", _gardner_board,
                lambda text: text.split(": ", 1)[1] if ": " in text else text.split(":")[0], keep_boards=True),
)
_FORMATS = {board_format.game: board_format for board_format in BOARD_FORMATS}
GAMES = tuple(_FORMATS)  # the games whose positions the loaders read


def board_format(game: str) -> BoardFormat:
    """The ``BoardFormat`` of ``game`` (a game id); ValueError naming the games with one."""
    try:
        return _FORMATS[game]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {game!r}; games with data files: {', '.join(GAMES)}") from None


def new_board(fen: str, game: str = "chess"):
    """A board of ``game`` (a game id) at ``fen``: ``chess.Board(fen)`` for chess, a
    ``GardnerBoard`` for Gardner chess (its ``BoardFormat.new_board``)."""
    return board_format(game).new_board(fen)


def parse_board(fen: str, what: str = "FEN", game: str = "chess"):
    """``new_board(fen, game)`` with the reason ``"bad FEN '...': <reason>"``."""
    board_kind = board_format(game)
    try:
        return board_kind.new_board(fen)
    except ValueError as exc:
        raise LineError(f"bad {what} {fen!r}: {board_kind.fen_problem(str(exc))}") from None


def parse_uci(board: chess.Board, token: str, where: str) -> chess.Move:
    """A legal move of ``board`` from UCI text; ``where`` names the field for the error."""
    try:
        move = board.parse_uci(token)
    except ValueError as exc:
        raise LineError(f"{_move_problem(exc)} {token!r} in {where}") from None
    if not move:  # python-chess accepts the null move "0000"; no data format here allows it
        raise LineError(f"null move {token!r} in {where}")
    return move


def parse_san(board: chess.Board, token: str, where: str) -> chess.Move:
    """A legal move of ``board`` from SAN text; ``where`` names the field for the error."""
    try:
        move = board.parse_san(token)
    except ValueError as exc:
        raise LineError(f"{_move_problem(exc)} {token!r} in {where}") from None
    if not move:
        raise LineError(f"null move {token!r} in {where}")
    return move


def move_text(move: str | chess.Move) -> str:
    """UCI text of a move given as a string or a ``chess.Move``."""
    return move.uci() if isinstance(move, chess.Move) else str(move).strip()


def status_names(board: chess.Board) -> tuple[str, ...]:
    """Why python-chess calls a position illegal, e.g. ``("too_many_white_pieces",)``.

    Empty when ``board.is_valid()``. Names are python-chess's ``STATUS_*`` flags in lower
    case; the race-chess flags are left out (they concern a variant, not standard chess).
    """
    status = board.status()
    return tuple(
        name[len("STATUS_"):].lower()
        for name in sorted(dir(chess))
        if name.startswith("STATUS_")
        and not name.startswith("STATUS_RACE")
        and getattr(chess, name)
        and status & getattr(chess, name)
    )


def read_header(path: PathLike, lines: list, *, delimiter: str = ",") -> tuple[int, str, list[str]] | None:
    """The first content line of a delimited file, split into stripped column names.

    Returns ``(line number, raw text, names)``, or None for a file with no content
    line. A line that cannot be split raises :class:`DataFormatError` ("bad header").
    """
    first = next(content_lines(lines), None)
    if first is None:
        return None
    number, text = first
    try:
        return number, text, [value.strip() for value in split_csv_line(text, delimiter=delimiter)]
    except LineError as exc:
        raise DataFormatError(path, number, f"bad header: {exc}", text) from None
