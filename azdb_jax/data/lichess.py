"""Lichess puzzle CSV files: the full database layout and the short ``FEN,Moves,Rating`` one.

Layouts accepted (columns are found by header name, case-insensitive):

* the Lichess database: ``PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,
  Themes,GameUrl,OpeningTags``, with any extra trailing columns (kept in ``extra``);
* ``FEN,Moves,Rating``;
* either of those two without a header row, recognised by where the FEN is.

In every layout the FEN is the position BEFORE the opponent's move ``Moves[0]``; the solver
then plays ``Moves[1]``, the opponent replies ``Moves[2]``, and so on. Every move
is checked to be legal in sequence.

``game="gardner_chess"`` reads Gardner chess (5x5) puzzles in the same layouts (e.g. the
engine-labelled sets of ``azdb_jax.data.gardner``); their boards are ``GardnerBoard`` objects.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib

import chess

from azdb_jax.data._common import (
    DataFormatError,
    LineError,
    Loaded,
    PathLike,
    board_format,
    collect,
    content_lines,
    move_text,
    new_board,
    parse_board,
    parse_uci,
    read_lines,
    split_csv_line,
)

LICHESS_COLUMNS = (
    "PuzzleId", "FEN", "Moves", "Rating", "RatingDeviation",
    "Popularity", "NbPlays", "Themes", "GameUrl", "OpeningTags",
)  # fmt: skip
SHORT_COLUMNS = ("FEN", "Moves", "Rating")

# Header name (lower case) -> record field.
_FIELDS = {
    "puzzleid": "puzzle_id",
    "fen": "fen",
    "moves": "moves",
    "rating": "rating",
    "ratingdeviation": "rating_deviation",
    "popularity": "popularity",
    "nbplays": "nb_plays",
    "themes": "themes",
    "gameurl": "game_url",
    "openingtags": "opening_tags",
}
_INT_FIELDS = ("rating", "rating_deviation", "popularity", "nb_plays")

# Games whose boards are kept (``BoardFormat.keep_boards``): a loaded file is kept parsed
# per process (at most ``_LOADED_MAX`` files).
_LOADED: "collections.OrderedDict[tuple, Loaded[LichessPuzzle]]" = collections.OrderedDict()
_LOADED_MAX = 16


@dataclasses.dataclass(frozen=True)
class LichessPuzzle:
    """One puzzle; optional columns are None (or empty) when the file lacks them.

    Attributes:
      fen: position before the opponent's first move ``moves[0]`` (canonical FEN).
      moves: the whole line as UCI: opponent, solver, opponent, ..., solver.
      puzzle_id: ``PuzzleId``, or None in the short layout.
      rating, rating_deviation, popularity, nb_plays: integer columns, or None.
      themes: ``Themes`` split on spaces.
      game_url: ``GameUrl``, or None.
      opening_tags: ``OpeningTags`` split on spaces.
      extra: other columns as ``(header, text)`` pairs, e.g. ``(("SortKey", "1764192"),)``.
      game: the game's id: ``"chess"``, or ``"gardner_chess"`` for Gardner chess (boards
        are ``GardnerBoard``).
    """

    fen: str
    moves: tuple[str, ...]
    puzzle_id: str | None = None
    rating: int | None = None
    rating_deviation: int | None = None
    popularity: int | None = None
    nb_plays: int | None = None
    themes: tuple[str, ...] = ()
    game_url: str | None = None
    opening_tags: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    game: str = "chess"

    @functools.cached_property
    def start_fen(self) -> str:
        """The position the solver sees: ``fen`` after the opponent's move ``moves[0]``."""
        return self.board_at(0).fen()

    @property
    def solution(self) -> tuple[str, ...]:
        """The solver's expected moves ``moves[1], moves[3], ...``."""
        return self.moves[1::2]

    @property
    def replies(self) -> tuple[str, ...]:
        """The opponent's replies after each solver move: ``moves[2], moves[4], ...``."""
        return self.moves[2::2]

    @property
    def solver_color(self) -> chess.Color:
        """``chess.WHITE`` or ``chess.BLACK``: the side NOT to move in ``fen``."""
        return self.fen.split()[1] == "b"

    @functools.cached_property
    def _boards(self) -> tuple:
        """The board before each solver move, played once (Gardner moves are stepped by the env)."""
        board = new_board(self.fen, self.game)
        boards = []
        for index, uci in enumerate(self.moves[:-1]):
            board.push_uci(uci)
            if index % 2 == 0:
                boards.append(board.copy())
        return tuple(boards)

    def board_at(self, step: int):
        """The board where the solver must find ``solution[step]`` (0-based step), a fresh copy."""
        if not 0 <= step < len(self.solution):
            raise IndexError(f"step {step} out of range for {len(self.solution)} solver moves")
        return self._boards[step].copy()


def is_correct_solver_move(puzzle: LichessPuzzle, step: int, move: str | chess.Move) -> bool:
    """Whether ``move`` solves step ``step``: the expected move, or any mating move.

    Lichess accepts any move that mates on the spot, so a checkmate counts even
    when it differs from ``puzzle.solution[step]``.
    """
    uci = move_text(move)
    if uci == puzzle.solution[step]:
        return True
    board = puzzle.board_at(step)
    try:
        board.push(board.parse_uci(uci))
    except ValueError:
        return False
    return board.is_checkmate()


def _parse_int(name: str, text: str) -> int | None:
    if not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise LineError(f"{name} {text!r} is not an integer") from None


def _parse_row(header: tuple[str, ...], text: str, game: str = "chess") -> LichessPuzzle:
    values = split_csv_line(text)
    if len(values) != len(header):
        raise LineError(f"expected {len(header)} columns ({','.join(header)}), got {len(values)}")
    fields: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    for name, value in zip(header, values):
        field = _FIELDS.get(name.strip().lower())
        if field is None:
            extra.append((name, value))
        elif field in _INT_FIELDS:
            fields[field] = _parse_int(name, value)
        elif field in ("themes", "opening_tags"):
            fields[field] = tuple(value.split())
        elif field in ("puzzle_id", "game_url"):
            fields[field] = value.strip() or None
        else:
            fields[field] = value.strip()
    board = parse_board(str(fields["fen"]), game=game)
    tokens = str(fields["moves"]).split()
    if len(tokens) < 2 or len(tokens) % 2:
        raise LineError(f"Moves must hold an even number (>= 2) of moves, got {len(tokens)}")
    fields["fen"] = board.fen()
    moves, boards, keep = [], [], board_format(game).keep_boards
    for index, token in enumerate(tokens):
        move = parse_uci(board, token, f"Moves (move {index + 1})")
        moves.append(move.uci())
        board.push(move)
        if keep and index % 2 == 0 and index < len(tokens) - 1:
            boards.append(board.copy())  # where the solver is to move: ``_boards``, kept from this pass
    fields["moves"] = tuple(moves)
    puzzle = LichessPuzzle(extra=tuple(extra), game=game, **fields)
    if keep:
        puzzle.__dict__["_boards"] = tuple(boards)  # the cached property, filled
    return puzzle


def _looks_like_fen(text: str, game: str = "chess") -> bool:
    try:
        parse_board(text, game=game)
    except ValueError:
        return False
    return True


def _header(path: PathLike, number: int, text: str, game: str = "chess") -> tuple[tuple[str, ...], bool]:
    """Returns ``(column names, whether this line is a header)`` from the first line."""
    try:
        values = [value.strip() for value in split_csv_line(text)]
    except LineError as exc:
        raise DataFormatError(path, number, f"bad first row: {exc}", text) from None
    lowered = [value.lower() for value in values]
    if "fen" in lowered:
        missing = [name for name in ("FEN", "Moves") if name.lower() not in lowered]
        if missing:
            raise DataFormatError(path, number, f"header lacks column(s) {', '.join(missing)}", text)
        known = [name for name in lowered if name in _FIELDS]
        if len(known) != len(set(known)):
            raise DataFormatError(path, number, "header names a column twice", text)
        return tuple(values), True
    if len(values) == 3 and _looks_like_fen(values[0], game):
        return SHORT_COLUMNS, False
    if len(values) >= len(LICHESS_COLUMNS) and _looks_like_fen(values[1], game):
        extra = tuple(f"column{index + 1}" for index in range(len(LICHESS_COLUMNS), len(values)))
        return LICHESS_COLUMNS + extra, False
    raise DataFormatError(
        path,
        number,
        "no header row, and the first row is neither FEN,Moves,Rating nor the Lichess "
        "10-column layout; add a header naming at least FEN and Moves",
        text,
    )


def load_lichess_puzzles(path: PathLike, *, strict: bool = True, game: str = "chess") -> Loaded[LichessPuzzle]:
    """Loads a Lichess puzzle CSV (see the module docstring for the accepted layouts).

    Blank and ``#`` lines are skipped. Quoted fields may not span lines.

    Args:
      path: the ``.csv`` file.
      strict: raise :class:`~azdb_jax.data.DataFormatError` at the first bad row (default),
        or keep the good rows and list bad ones in ``.skipped``. A bad header always raises.
      game: the game's id: ``"chess"`` (default) or ``"gardner_chess"`` (Gardner chess FENs
        and moves).

    Returns:
      A :class:`~azdb_jax.data.Loaded` tuple of :class:`LichessPuzzle`.
    """
    board_kind = board_format(game)
    lines = read_lines(path)
    # A kept game's file read again in the same process (each puzzle-start run, each
    # evaluation of a set) is parsed once: the result is immutable, the key is the content.
    key = None
    if board_kind.keep_boards:
        key = (str(path), hashlib.sha1("\n".join(lines).encode()).hexdigest(), strict, game)
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
    rows = content_lines(lines)
    first = next(rows, None)
    if first is None:
        return Loaded()
    header, is_header = _header(path, *first, game=game)
    start = first[0] if is_header else first[0] - 1
    loaded = collect(path, content_lines(lines, start), lambda text: _parse_row(header, text, game), strict=strict)
    if key is not None:
        _LOADED[key] = loaded
        while len(_LOADED) > _LOADED_MAX:
            _LOADED.popitem(last=False)
    return loaded
