"""The AZdb paper's Penrose and Challenge value puzzles, shipped with the package.

``paper_penrose_challenge.csv`` (next to this module) lists the 53 Penrose and 15 Challenge
positions of the paper's appendix (Tables 4-25) with the outcome for the side to move. The
value test scores a player by its value after search, mapped from [-1, 1] to [0, 1]
as (V + 1) / 2, against the listed value; :func:`paper_value_solved` applies that rule.

Several Penrose positions are illegal in standard chess (more than 16 pieces a side, or
more than 8 pawns) yet playable: python-chess builds them and generates their moves, and
``board.is_valid()`` is False. They load with ``legal=False`` and their python-chess
status in ``illegal_reasons``; they are not rejected.

The same CSV layout holds other value-puzzle lists: ``game="gardner_chess"`` reads Gardner
chess (5x5) positions (e.g. the engine-labelled drawn-but-tricky set of
``azdb_jax.data.gardner``), with any set names and ``legal`` always true (the Gardner FEN
parser rejects positions it cannot play).
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import math

import chess

from azdb_jax.data._common import (
    DataFormatError,
    LineError,
    Loaded,
    PathLike,
    board_format,
    collect,
    new_board,
    content_lines,
    parse_board,
    read_header,
    read_lines,
    split_csv_line,
    status_names,
)

PACKAGED_FILE = "paper_penrose_challenge.csv"
SETS = ("penrose", "challenge")
OUTCOME_VALUES = {"win": 1.0, "draw": 0.5, "loss": 0.0}
_COLUMN_ALIASES = {"outcome_for_side_to_move": "outcome"}
_REQUIRED = ("id", "set", "fen", "to_move", "outcome", "value")


@dataclasses.dataclass(frozen=True)
class PaperPosition:
    """One value puzzle of the paper.

    Attributes:
      id: e.g. ``"penrose-01"`` or ``"challenge-15"``.
      set: ``"penrose"`` or ``"challenge"``.
      paper_table: the appendix table that shows it (4-25), or None if not given.
      fen: the position (full FEN, as listed).
      to_move: ``"white"`` or ``"black"`` (agrees with the FEN).
      outcome: ``"win"``, ``"draw"`` or ``"loss"`` for the side to move.
      value: the outcome as a number for the side to move: 1.0, 0.5 or 0.0.
      legal: whether the position is legal in standard chess (``board.is_valid()``).
      illegal_reasons: python-chess status names when not legal, e.g.
        ``("too_many_white_pieces",)``; empty when legal.
      game: the game's id: ``"chess"``, or ``"gardner_chess"`` for Gardner chess (``board()``
        is a ``GardnerBoard``).
    """

    id: str
    set: str
    paper_table: int | None
    fen: str
    to_move: str
    outcome: str
    value: float
    legal: bool
    illegal_reasons: tuple[str, ...] = ()
    game: str = "chess"

    def board(self):
        """A fresh board (``chess.Board``; works for the illegal positions too; or ``GardnerBoard``)."""
        return new_board(self.fen, self.game)


def paper_value_solved(position: PaperPosition, value: float, *, tolerance: float = 0.25) -> bool:
    """Whether a value estimate solves the puzzle: ``|(V + 1) / 2 - target| <= tolerance``.

    ``value`` is V in [-1, 1] for the side to move; use ``tolerance=0.1`` for the strict
    variant of the protocol.
    """
    return abs((value + 1.0) / 2.0 - position.value) <= tolerance


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise LineError(f"legal {text!r} is not true/false")


def _parse_row(header: tuple[str, ...], text: str, game: str = "chess") -> PaperPosition:
    values = split_csv_line(text)
    if len(values) != len(header):
        raise LineError(f"expected {len(header)} columns ({','.join(header)}), got {len(values)}")
    row = {name: value.strip() for name, value in zip(header, values)}
    if not row["id"]:
        raise LineError("empty id")
    python_chess = board_format(game).python_chess
    if python_chess and row["set"] not in SETS:
        raise LineError(f"set {row['set']!r} is not one of {', '.join(SETS)}")
    if not row["set"]:
        raise LineError("empty set")
    table = row.get("paper_table", "")
    if table and not table.isdigit():
        raise LineError(f"paper_table {table!r} is not an integer")
    board = parse_board(row["fen"], game=game)
    side = "white" if board.turn == chess.WHITE else "black"
    if row["to_move"] != side:
        raise LineError(f"to_move {row['to_move']!r} disagrees with the FEN ({side} to move)")
    outcome = "loss" if row["outcome"] == "lose" else row["outcome"]
    if outcome not in OUTCOME_VALUES:
        raise LineError(f"outcome {row['outcome']!r} is not one of win, draw, loss")
    try:
        value = float(row["value"])
    except ValueError:
        raise LineError(f"value {row['value']!r} is not a number") from None
    if not math.isclose(value, OUTCOME_VALUES[outcome]):
        raise LineError(f"value {row['value']} disagrees with outcome {outcome!r}")
    reasons = status_names(board) if python_chess else ()
    legal = not reasons
    if "legal" in row and _parse_bool(row["legal"]) != legal:
        raise LineError(f"legal={row['legal']} but python-chess says {'+'.join(reasons) or 'valid'}")
    if "python_chess_status" in row and row["python_chess_status"] != ("+".join(reasons) or "valid"):
        raise LineError(f"python_chess_status {row['python_chess_status']!r} but python-chess says "
                        f"{'+'.join(reasons) or 'valid'}")  # fmt: skip
    return PaperPosition(
        id=row["id"],
        set=row["set"],
        paper_table=int(table) if table else None,
        fen=board.fen(),
        to_move=side,
        outcome=outcome,
        value=value,
        legal=legal,
        illegal_reasons=reasons,
        game=game,
    )


def _load(path: PathLike, strict: bool, game: str = "chess") -> Loaded[PaperPosition]:
    lines = read_lines(path)
    first = read_header(path, lines)
    if first is None:
        return Loaded()
    number, text, names = first
    header = tuple(_COLUMN_ALIASES.get(name, name) for name in names)
    missing = [name for name in _REQUIRED if name not in header]
    if missing or len(set(header)) != len(header):
        problem = f"missing {', '.join(missing)}" if missing else "a column is named twice"
        raise DataFormatError(path, number, f"bad header ({problem}); need {', '.join(_REQUIRED)}", text)
    seen: set[str] = set()

    def parse_unique(row: str) -> PaperPosition:
        # Ids must be unique: results are reported per id.
        position = _parse_row(header, row, game)
        if position.id in seen:
            raise LineError(f"duplicate id {position.id!r}")
        seen.add(position.id)
        return position

    return collect(path, content_lines(lines, number), parse_unique, strict=strict)


def load_paper_positions(
    set: str | None = None,  # noqa: A002 - the paper's own term for the two lists
    *,
    path: PathLike | None = None,
    strict: bool = True,
    game: str = "chess",
) -> Loaded[PaperPosition]:
    """Loads the paper's Penrose/Challenge positions (68: 53 Penrose + 15 Challenge).

    Args:
      set: ``None`` for all, ``"penrose"`` or ``"challenge"``.
      path: a CSV with the same columns to read instead of the packaged list (header
        ``id,set,paper_table,fen,to_move,outcome,value,legal``; ``outcome_for_side_to_move``
        and ``python_chess_status`` are accepted too).
      strict: raise :class:`~azdb_jax.data.DataFormatError` at the first bad row (default),
        or keep good rows and list bad ones in ``.skipped``.
      game: the game's id: ``"chess"`` (default) or ``"gardner_chess"``: Gardner chess
        positions (``path`` required; ``set`` may then name any set of the file).

    Returns:
      A :class:`~azdb_jax.data.Loaded` tuple of :class:`PaperPosition`, in file order.
    """
    python_chess = board_format(game).python_chess  # the packaged list's game
    if python_chess and set is not None and set not in SETS:
        raise ValueError(f"set must be None, 'penrose' or 'challenge', got {set!r}")
    if path is None:
        if not python_chess:
            raise ValueError(f"the packaged list holds chess positions; give the path of a {game} value-puzzle file")
        resource = importlib.resources.files("azdb_jax.data").joinpath(PACKAGED_FILE)
        with importlib.resources.as_file(resource) as packaged:
            loaded = _load(packaged, strict)
    else:
        loaded = _load(path, strict, game)
    if set is None:
        return loaded
    return Loaded((position for position in loaded if position.set == set), loaded.skipped)
