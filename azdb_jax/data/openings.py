"""ECO opening tables: tab-separated ``eco, name, pgn`` files (lichess chess-openings layout).

Each row names an opening and gives its moves as PGN movetext, e.g.::

  C00	French Defense	1. e4 e6

The movetext is replayed with python-chess to the opening's position. The paper's opening-diversity
measure runs over these positions without the ``A00`` irregular openings, so the
loader filters by ECO prefix and has an exclude list.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Iterable

import chess

from azdb_jax.data._common import (
    DataFormatError,
    LineError,
    Loaded,
    PathLike,
    collect,
    content_lines,
    parse_san,
    read_header,
    read_lines,
    split_csv_line,
)

REQUIRED_COLUMNS = ("eco", "name", "pgn")
_ECO = re.compile(r"^[A-E][0-9]{2}$")
_MOVE_NUMBER = re.compile(r"^[0-9]+\.(?:\.\.)?")
_RESULTS = ("*", "1-0", "0-1", "1/2-1/2")


@dataclasses.dataclass(frozen=True)
class Opening:
    """One named opening line.

    Attributes:
      eco: ECO code, e.g. ``"C00"``.
      name: opening name, e.g. ``"French Defense"``.
      pgn: the movetext as written in the file.
      moves: the moves as UCI, from the initial position.
      fen: the position after ``moves`` (canonical FEN).
    """

    eco: str
    name: str
    pgn: str
    moves: tuple[str, ...]
    fen: str

    def board(self) -> chess.Board:
        """The opening's position with its move stack (so repetitions are seen)."""
        board = chess.Board()
        for uci in self.moves:
            board.push_uci(uci)
        return board


def replay_movetext(movetext: str) -> chess.Board:
    """Plays PGN movetext such as ``"1. e4 e5 2. Nf3"`` from the initial position.

    Only moves, move numbers and a final result are allowed. This does not use
    ``chess.pgn.read_game``, because that reader logs and skips unknown tokens instead of
    failing, and a wrong move must not go unnoticed here.

    Raises:
      ValueError: an unknown, illegal or ambiguous SAN move, or an unsupported element
        (comment, variation, annotation).
    """
    board = chess.Board()
    tokens = movetext.split()
    for index, token in enumerate(tokens):
        san = _MOVE_NUMBER.sub("", token)
        if not san:
            continue
        if san in _RESULTS and index == len(tokens) - 1:
            break
        if san[0] in "{}();$%":
            raise LineError(f"unsupported PGN element {token!r} in pgn (only moves are allowed)")
        board.push(parse_san(board, san, f"pgn (ply {board.ply() + 1})"))
    return board


def _parse_row(columns: dict[str, int], width: int, text: str) -> Opening:
    values = split_csv_line(text, delimiter="\t")
    if len(values) != width:
        raise LineError(f"expected {width} tab-separated columns, got {len(values)}")
    eco, name, pgn = (values[columns[key]].strip() for key in REQUIRED_COLUMNS)
    if not _ECO.match(eco):
        raise LineError(f"bad ECO code {eco!r} (expected a letter A-E and two digits)")
    if not name:
        raise LineError("empty opening name")
    board = replay_movetext(pgn)
    if not board.move_stack:
        raise LineError("pgn has no moves")
    return Opening(eco, name, pgn, tuple(move.uci() for move in board.move_stack), board.fen())


def _load_file(path: pathlib.Path, strict: bool) -> Loaded[Opening]:
    lines = read_lines(path)
    first = read_header(path, lines, delimiter="\t")
    if first is None:
        return Loaded()
    number, text, names = first
    header = [name.lower() for name in names]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise DataFormatError(
            path, number, f"header must name the columns eco, name, pgn (missing {', '.join(missing)})", text
        )
    columns = {name: header.index(name) for name in REQUIRED_COLUMNS}
    return collect(
        path, content_lines(lines, number), lambda row: _parse_row(columns, len(header), row), strict=strict
    )


def _codes(codes: str | Iterable[str] | None) -> tuple[str, ...]:
    if codes is None:
        return ()
    if isinstance(codes, str):
        return (codes.strip().upper(),)
    return tuple(code.strip().upper() for code in codes)


def opening_files(path: PathLike) -> list[pathlib.Path]:
    """The ``.tsv`` files to load: ``path`` itself, or a folder's ``*.tsv`` in name order."""
    path = pathlib.Path(path)
    if not path.exists():
        raise FileNotFoundError(f"openings file or folder not found: {path}")
    if path.is_dir():
        files = sorted(path.glob("*.tsv"))
        if not files:
            raise FileNotFoundError(f"no .tsv files in openings folder {path}")
        return files
    return [path]


def load_openings(
    path: PathLike,
    *,
    eco: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] = (),
    strict: bool = True,
) -> Loaded[Opening]:
    """Loads ECO openings from one ``.tsv`` file or a folder of them (``a.tsv`` .. ``e.tsv``).

    Args:
      path: a TSV file with a header naming ``eco``, ``name``, ``pgn`` (extra columns are
        ignored), or a folder whose ``*.tsv`` files are read in name order.
      eco: keep only codes starting with this prefix or any of these prefixes, e.g.
        ``"B"`` or ``["C6", "C7"]``; None keeps all.
      exclude: drop codes starting with any of these, e.g. ``"A00"`` (the protocol's
        set) or ``["A00", "B00"]``.
      strict: raise :class:`~azdb_jax.data.DataFormatError` at the first bad row (default),
        or keep good rows and list bad ones in ``.skipped``. Every row is validated, also
        rows that the filters drop.

    Returns:
      A :class:`~azdb_jax.data.Loaded` tuple of :class:`Opening`, in file order.
    """
    include, excluded = _codes(eco), _codes(exclude)
    records: list[Opening] = []
    skipped = []
    for file in opening_files(path):
        loaded = _load_file(file, strict)
        skipped.extend(loaded.skipped)
        records.extend(
            opening
            for opening in loaded
            if (not include or opening.eco.startswith(include)) and not opening.eco.startswith(excluded)
        )
    return Loaded(records, skipped)
