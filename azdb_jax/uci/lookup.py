"""The opening-specialisation lookup as an engine option (paper Appendix C.5).

``experiments/play_match.py --a_rule=lookup`` builds a table on training seeds: per
book opening and per turn (the team moving first or second from that position), the
team player with the best score. The engine reads that table and, in a game that passed
through one of the table's positions, plays the named player's move.

Files accepted (``setoption name Lookup value <path>``):

- a lookup file ``{"positions": [FEN, ...], "table": [[first, second], ...]}``;
- a ``match.json`` written by ``play_match.py --a_rule=lookup`` (its summary holds the
  table and the book it was built on; the first ``len(table)`` book positions are the
  openings, as in the match).
"""

import dataclasses
import json
import pathlib
from typing import Dict, Optional, Sequence, Tuple

import chess


def position_key(board: chess.Board) -> str:
    """A position without its move clocks: placement, side to move, castling, en passant."""
    return " ".join(board.fen().split()[:4])


@dataclasses.dataclass(frozen=True)
class OpeningLookup:
    """Per opening position, the team player for each turn (0: the team moves first there)."""

    table: Dict[str, Tuple[int, int]]  # position key -> (player moving first, player moving second)
    source: str = ""

    def player(self, start: chess.Board, moves: Sequence[chess.Move]) -> Optional[int]:
        """The table's player for the side to move after ``moves`` from ``start``: the last
        table position of the game decides; None when the game passed through none."""
        board = start.copy(stack=False)
        found = None
        for ply in range(len(moves) + 1):
            key = position_key(board)
            if key in self.table:
                found = (board.turn, self.table[key])
            if ply < len(moves):
                board.push(moves[ply])
        if found is None:
            return None
        turn_there, (first, second) = found
        return first if board.turn == turn_there else second

    def check_players(self, num_players: int) -> None:
        bad = sorted({p for pair in self.table.values() for p in pair if not 0 <= p < num_players})
        if bad:
            raise ValueError(f"lookup {self.source}: names player(s) {bad}, but the team has {num_players}")


def load_lookup(path) -> OpeningLookup:
    """Reads a lookup file or a lookup ``match.json`` (see the module docstring)."""
    path = pathlib.Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"lookup file {path} not found") from None
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"lookup file {path}: not readable JSON ({e})") from None
    if isinstance(data, dict) and "summary" in data:
        summary = data["summary"]
        table = (summary.get("specialisation") or {}).get("table")
        if table is None or not summary.get("book"):
            raise ValueError(f"lookup file {path}: a match.json without a lookup table (play it with --a_rule=lookup "
                             "on chess book positions)")
        fens = _book_fens(pathlib.Path(summary["book"]), len(table), path)
    elif isinstance(data, dict) and "positions" in data and "table" in data:
        fens, table = data["positions"], data["table"]
    else:
        raise ValueError(f"lookup file {path}: expected {{'positions': [...], 'table': [...]}} or a lookup match.json")
    if len(fens) != len(table):
        raise ValueError(f"lookup file {path}: {len(fens)} positions but {len(table)} table rows")
    entries = {}
    for row, (fen, pair) in enumerate(zip(fens, table)):
        try:
            board = chess.Board(fen)
        except ValueError as e:
            raise ValueError(f"lookup file {path}, position {row}: malformed FEN {fen!r} ({e})") from None
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(p, int) for p in pair)):
            raise ValueError(f"lookup file {path}, row {row}: expected [player moving first, player moving second], "
                             f"got {pair!r}")
        entries[position_key(board)] = (int(pair[0]), int(pair[1]))
    return OpeningLookup(table=entries, source=str(path))


def _book_fens(book: pathlib.Path, count: int, where: pathlib.Path):
    from azdb_jax import data  # pylint: disable=g-import-not-at-top

    if not book.exists():
        raise FileNotFoundError(f"lookup file {where}: its book {book} is not there")
    if book.is_dir() or book.suffix == ".tsv":
        fens = [opening.fen for opening in data.load_openings(book)]
    else:
        fens = [position.board().fen() for position in data.load_book(book)]
    if len(fens) < count:
        raise ValueError(f"lookup file {where}: its book {book} holds {len(fens)} positions, the table {count}")
    return fens[:count]


__all__ = ["OpeningLookup", "load_lookup", "position_key"]
