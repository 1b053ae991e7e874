"""Polyglot opening books for the classical player (chess): reading through python-chess, writing our own.

A polyglot book is a file of 16-byte big-endian entries ``(key u64, move u16, weight
u16, learn u32)`` sorted by key, where the key is the position's polyglot Zobrist hash
(``chess.polyglot.zobrist_hash``, which is also the classical search's table key) and the
move packs ``to | from << 6 | promotion << 12`` (castling written as the king taking its
rook). `OpeningBook` reads one with ``chess.polyglot`` after checking the file, so a
malformed book fails with a message naming the file; `write_book` writes entries and
`book_from_openings` builds a book from the ECO opening lines (``azdb_jax.data``'s
openings TSV files), every move of every line weighted by how many lines play it.

Polyglot keys are defined on the 8x8 board; Gardner chess has no book format and the
classical Gardner player starts searching at once.
"""

import collections
import pathlib
import random
import struct
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import chess
import chess.polyglot

__all__ = ["OpeningBook", "write_book", "book_from_openings", "encode_move"]

_ENTRY = struct.Struct(">QHHI")
_CASTLING_AS_ROOK_CAPTURE = {(chess.E1, chess.G1): chess.H1, (chess.E1, chess.C1): chess.A1,
                             (chess.E8, chess.G8): chess.H8, (chess.E8, chess.C8): chess.A8}


def encode_move(board: chess.Board, move: chess.Move) -> int:
    """The polyglot move code of a legal move in ``board``."""
    to = move.to_square
    if board.is_castling(move):
        to = _CASTLING_AS_ROOK_CAPTURE.get((move.from_square, move.to_square), to)
    promotion = (move.promotion - 1) if move.promotion else 0  # knight 1 .. queen 4
    return to | (move.from_square << 6) | (promotion << 12)


def write_book(path, entries: Iterable[Tuple[int, int, int]]) -> pathlib.Path:
    """Writes ``(key, move code, weight)`` entries, sorted by key then weight (highest first),
    as a polyglot book; weights are clipped to 1..65535."""
    rows = sorted(((k, m, max(1, min(int(w), 0xFFFF))) for k, m, w in entries), key=lambda e: (e[0], -e[2], e[1]))
    path = pathlib.Path(path)
    with open(path, "wb") as out:
        for key, move, weight in rows:
            out.write(_ENTRY.pack(key, move, weight, 0))
    return path


def book_from_openings(paths: Sequence, out, *, max_plies: int = 16) -> pathlib.Path:
    """A polyglot book of the first ``max_plies`` plies of every line in the opening TSV
    files ``paths`` (columns ``eco, name, pgn``); a move's weight is the number of lines
    that play it from that position."""
    from azdb_jax import data  # pylint: disable=g-import-not-at-top

    counts: Dict[Tuple[int, int], int] = collections.Counter()
    for path in paths:
        for opening in data.load_openings(path):
            board = chess.Board()
            for move in map(chess.Move.from_uci, opening.moves[:max_plies]):
                counts[(chess.polyglot.zobrist_hash(board), encode_move(board, move))] += 1
                board.push(move)
    return write_book(out, ((k, m, w) for (k, m), w in counts.items()))


class OpeningBook:
    """A polyglot book, checked on opening.

    Args:
      path: the ``.bin`` file.
      choose: ``"best"`` (the highest weight, first on ties) or ``"weighted"`` (random ∝ weight).
      seed: the random generator's seed for ``weighted``.

    Raises:
      ValueError: the file is missing, empty, not a whole number of 16-byte entries, or
        not sorted by key (the message names the file and the entry).
    """

    def __init__(self, path, *, choose: str = "best", seed: int = 0):
        self.path = pathlib.Path(path)
        if choose not in ("best", "weighted"):
            raise ValueError(f"opening book choice must be 'best' or 'weighted', got {choose!r}")
        self.choose = choose
        self._random = random.Random(seed)
        try:
            raw = self.path.read_bytes()
        except OSError as e:
            raise ValueError(f"opening book {self.path}: cannot read it ({e.strerror or e})") from None
        if not raw:
            raise ValueError(f"opening book {self.path}: the file is empty")
        if len(raw) % _ENTRY.size:
            raise ValueError(f"opening book {self.path}: {len(raw)} bytes is not a whole number of 16-byte "
                             "polyglot entries")
        keys = [_ENTRY.unpack_from(raw, i)[0] for i in range(0, len(raw), _ENTRY.size)]
        for i in range(1, len(keys)):
            if keys[i] < keys[i - 1]:
                raise ValueError(f"opening book {self.path}: entry {i} is out of key order (polyglot books are "
                                 "sorted by key)")
        self.num_entries = len(keys)
        self._reader = chess.polyglot.open_reader(self.path)

    def moves(self, board: chess.Board) -> List[Tuple[chess.Move, int]]:
        """The book's legal moves of ``board`` with their weights (highest first)."""
        return [(e.move, e.weight) for e in sorted(self._reader.find_all(board), key=lambda e: -e.weight)]

    def move(self, board: chess.Board) -> Optional[chess.Move]:
        """The book move of ``board`` (by ``choose``), or None when the position is not in the book."""
        if not isinstance(board, chess.Board):
            return None
        if self.choose == "best":
            entry = self._reader.get(board)
            return None if entry is None else entry.move
        try:
            return self._reader.weighted_choice(board, random=self._random).move
        except IndexError:
            return None

    def close(self) -> None:
        self._reader.close()
