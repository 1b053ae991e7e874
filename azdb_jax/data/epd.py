"""EPD test suites: bm/am suites (WAC, Hard Talkchess, fortresses) and STS with c0 scores.

An EPD line is the first four FEN fields followed by operations, e.g.::

  1kr5/.../3R2K1 w - - bm f5; id "STS(v1.0) Undermine.001"; c0 "f5=100, Bf2=46"; c9 "f4f5 d4f2";

python-chess parses the position and operations; this module turns every move into UCI,
checks that each ``bm``/``am``/``c0``/``c9`` move is legal in the position, and provides the
two scoring rules of the evaluation protocol: STS points and bm/am solved.
"""

from __future__ import annotations

import dataclasses
import math
import re

import chess

from azdb_jax.data._common import (
    LineError,
    Loaded,
    PathLike,
    collect,
    content_lines,
    move_text,
    parse_board,
    parse_san,
    parse_uci,
    read_lines,
)

# What to do with a ``c0`` operation (see load_epd).
C0_MODES = ("auto", "scores", "text")

# An STS score entry: ``move=points`` with no spaces around ``=``.
_SCORE_ENTRY = re.compile(r"^\S+=\S*$")
_SAN_ERROR = re.compile(r"san: '([^']*)'")


@dataclasses.dataclass(frozen=True)
class EpdRecord:
    """One EPD position with its test operations, every move as UCI text.

    Attributes:
      fen: full FEN (python-chess canonical form). EPD has no clocks: they come from the
        ``hmvc``/``fmvn`` operations when present, else ``"0 1"``.
      id: the ``id`` operation, or None.
      bm: best moves (``bm``), UCI, in file order; empty if absent.
      am: avoid moves (``am``), UCI; empty if absent.
      scores: STS ``c0`` scores as ``(uci, points)`` pairs in file order (best listed
        first in STS); empty unless ``c0`` is a score list.
      c9: the ``c9`` operation as UCI moves (STS lists the ``c0`` moves there); may be empty.
      ops: every other operation as ``(opcode, text)`` in file order, e.g. ``("c1",
        "diff=10")``; a ``c0`` that is free text (not scores) is kept here.
    """

    fen: str
    id: str | None = None
    bm: tuple[str, ...] = ()
    am: tuple[str, ...] = ()
    scores: tuple[tuple[str, float], ...] = ()
    c9: tuple[str, ...] = ()
    ops: tuple[tuple[str, str], ...] = ()

    def board(self) -> chess.Board:
        """A fresh ``chess.Board`` of the position."""
        return chess.Board(self.fen)

    def points(self, uci_move: str | chess.Move) -> float:
        """STS points of a move (0.0 when the move is not listed in ``c0``)."""
        return dict(self.scores).get(move_text(uci_move), 0.0)


def _op_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, chess.Move):
        return value.uci()
    if isinstance(value, list):
        return " ".join(_op_text(item) for item in value)
    return str(value)


def _parse_scores(board: chess.Board, text: str) -> tuple[tuple[str, float], ...]:
    """``"f5=100, Bf2=46"`` -> ``(("f4f5", 100.0), ("d4f2", 46.0))``, all moves legal."""
    scores: list[tuple[str, float]] = []
    for entry in (part.strip() for part in text.split(",")):
        san, sep, number = entry.partition("=")
        if not sep or not san or not number or " " in entry:
            raise LineError(f"bad c0 entry {entry!r}: expected move=points")
        try:
            points = float(number)
        except ValueError:
            raise LineError(f"bad c0 entry {entry!r}: points {number!r} is not a number") from None
        if not math.isfinite(points) or points < 0:
            raise LineError(f"bad c0 entry {entry!r}: points must be finite and >= 0")
        uci = parse_san(board, san, "c0").uci()
        if any(uci == seen for seen, _ in scores):
            raise LineError(f"bad c0 entry {entry!r}: move listed twice")
        scores.append((uci, points))
    if max(points for _, points in scores) <= 0:
        raise LineError("bad c0: no move has positive points")
    return tuple(scores)


def _is_score_list(text: str) -> bool:
    """Auto mode: a ``c0`` is a score list if any entry looks like ``move=points``."""
    return any(_SCORE_ENTRY.match(part.strip()) for part in text.split(","))


def _explain_ops_error(exc: ValueError, ops_text: str) -> str:
    """Names the operation behind a python-chess SAN error (it only reports the move)."""
    message = str(exc).split(" in ")[0]
    found = _SAN_ERROR.search(str(exc))
    if isinstance(exc, (chess.IllegalMoveError, chess.InvalidMoveError, chess.AmbiguousMoveError)) and found:
        san = found.group(1)
        where = "operations"
        for match in re.finditer(r"(?:^|;)\s*(\w+)\s+([^;\"]*)", ops_text):
            if san in match.group(2).split():
                where = match.group(1)
                break
        problem = message.split(" san:")[0]
        return f"{problem} move {san!r} in {where}"
    return f"bad EPD operations: {message}"


def parse_epd_line(line: str, *, c0: str = "auto") -> EpdRecord:
    """Parses one EPD line into an :class:`EpdRecord` (see :func:`load_epd` for ``c0``).

    Raises:
      ValueError: bad position, bad operation syntax, an illegal move in ``bm``/``am``/
        ``c0``/``c9``, or a malformed ``c0`` score list.
    """
    if c0 not in C0_MODES:
        raise ValueError(f"c0 must be one of {C0_MODES}, got {c0!r}")
    fields = line.strip().split(None, 4)
    if len(fields) < 4:
        raise LineError(f"expected 4 EPD fields (placement, side, castling, en passant), got {len(fields)}")
    parse_board(" ".join(fields[:4]), "EPD position")
    ops_text = fields[4] if len(fields) > 4 else ""
    if len(fields) > 4 and fields[4][:1].isdigit():
        raise LineError("EPD lines have no clocks: found a number after the en passant field")
    try:
        board, ops = chess.Board.from_epd(line.strip())
    except ValueError as exc:
        raise LineError(_explain_ops_error(exc, ops_text)) from None

    scores: tuple[tuple[str, float], ...] = ()
    c9: tuple[str, ...] = ()
    other: list[tuple[str, str]] = []
    for opcode, value in ops.items():
        if opcode in ("bm", "am", "id", "hmvc", "fmvn"):
            continue
        if opcode == "c0" and c0 != "text" and (c0 == "scores" or _is_score_list(_op_text(value))):
            scores = _parse_scores(board, _op_text(value))
        elif opcode == "c9":
            c9 = tuple(parse_uci(board, token, "c9").uci() for token in _op_text(value).split())
        else:
            other.append((opcode, _op_text(value)))
    if c0 == "scores" and not scores:
        raise LineError("missing c0 scores")
    record_id = ops.get("id")
    return EpdRecord(
        fen=board.fen(),
        id=None if record_id is None else _op_text(record_id),
        bm=tuple(move.uci() for move in ops.get("bm", [])),
        am=tuple(move.uci() for move in ops.get("am", [])),
        scores=scores,
        c9=c9,
        ops=tuple(other),
    )


def load_epd(path: PathLike, *, strict: bool = True, c0: str = "auto") -> Loaded[EpdRecord]:
    """Loads an EPD suite, one position per line (blank and ``#`` lines are skipped).

    Args:
      path: the ``.epd`` file.
      strict: raise :class:`~azdb_jax.data.DataFormatError` at the first bad line (default),
        or keep the good records and list bad lines in ``.skipped``.
      c0: ``"auto"`` (default) reads ``c0`` as STS scores when it looks like
        ``move=points`` entries and keeps free-text ``c0`` comments (e.g. the fortress
        suite's) in ``ops``; ``"scores"`` requires every line to have a valid score list
        (use it for STS); ``"text"`` never parses ``c0``.

    Returns:
      A :class:`~azdb_jax.data.Loaded` tuple of :class:`EpdRecord`.
    """
    lines = read_lines(path)
    return collect(path, content_lines(lines), lambda text: parse_epd_line(text, c0=c0), strict=strict)


def sts_score(record: EpdRecord, uci_move: str | chess.Move) -> float:
    """STS score of a move in [0, 1]: ``points(move) / points(best)``, 0 if unlisted.

    This is the per-position STS rule of the evaluation protocol; the suite
    score is the mean over positions.
    """
    if not record.scores:
        raise ValueError(f"record {record.id or record.fen!r} has no c0 scores")
    best = max(points for _, points in record.scores)
    return record.points(uci_move) / best


def bm_am_solved(record: EpdRecord, uci_move: str | chess.Move) -> bool:
    """Whether a move solves a bm/am position: in ``bm`` (if given) and not in ``am``."""
    if not record.bm and not record.am:
        raise ValueError(f"record {record.id or record.fen!r} has neither bm nor am")
    move = move_text(uci_move)
    return (not record.bm or move in record.bm) and move not in record.am


_STS_ID = re.compile(r"^STS\(v(\d+)(?:\.\d+)?\)\s*(.+?)\.\d+$")


def sts_suite(record: EpdRecord) -> int | None:
    """The STS sub-suite number (1..15) from an id like ``"STS(v3.0) Knight Outposts.001"``.

    Group STS results by this number rather than by theme name: the names are not
    spelled identically on every line of a sub-suite.
    """
    found = _STS_ID.match((record.id or "").strip())
    return int(found.group(1)) if found else None


def sts_theme(record: EpdRecord) -> str | None:
    """The STS theme name from the id, e.g. ``"Undermine"``; None if not an STS id."""
    found = _STS_ID.match((record.id or "").strip())
    return found.group(2) if found else None
