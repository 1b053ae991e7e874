"""A transposition table: search results keyed by the position's Zobrist hash.

An entry holds the full 64-bit key (to tell apart positions that share a slot), the
score, whether that score is exact or a lower/upper bound (fail-high / fail-low), the
depth of the search below the position, the best move, and the search it came from (its
*generation*). The table has a fixed number of slots, ``size`` (a power of two: slot =
``key & (size − 1)``); a new result replaces the slot's entry when the slot is empty,
holds another position from an earlier search, or was searched no deeper
(*depth-preferred* replacement): the results that cost the most to compute stay.

Mate scores are stored relative to the node (``to_table`` / ``from_table``), so a
mate found at one distance from the root is right when probed at another.
"""

from typing import Any, List, NamedTuple, Optional

__all__ = ["TranspositionTable", "Entry", "EXACT", "LOWER", "UPPER", "to_table", "from_table"]

EXACT, LOWER, UPPER = 0, 1, 2
BOUND_NAMES = ("exact", "lower", "upper")


class Entry(NamedTuple):
    key: int  # the position's 64-bit Zobrist key
    depth: int  # plies searched below the position
    bound: int  # EXACT; LOWER: the value is >= score (a fail high); UPPER: <= score (a fail low)
    score: int  # centipawns for the side to move, mates relative to this node
    move: Any  # the best (or refuting) move, None if unknown
    generation: int  # the search that stored it


def to_table(score: int, ply: int, mate_bound: int) -> int:
    """A score as stored: a mate counted from this node rather than from the root."""
    if score > mate_bound:
        return score + ply
    if score < -mate_bound:
        return score - ply
    return score


def from_table(score: int, ply: int, mate_bound: int) -> int:
    """A stored score as seen ``ply`` plies below the root (inverse of `to_table`)."""
    if score > mate_bound:
        return score - ply
    if score < -mate_bound:
        return score + ply
    return score


class TranspositionTable:
    """A fixed-size table of `Entry` (see the module docstring).

    Args:
      size: slots, a power of two >= 1 (about 150 bytes per filled slot in CPython).
    """

    def __init__(self, size: int = 1 << 18):
        if not isinstance(size, int) or size < 1 or size & (size - 1):
            raise ValueError(f"transposition table size must be a power of two >= 1, got {size!r}")
        self.size = size
        self._mask = size - 1
        self._slots: List[Optional[Entry]] = [None] * size
        self.generation = 0
        self.stores = self.replaced = self.kept = 0

    def new_search(self) -> None:
        """Marks the entries so far as older: a new search may overwrite them."""
        self.generation += 1

    def clear(self) -> None:
        self._slots = [None] * self.size
        self.generation = 0

    def probe(self, key: int) -> Optional[Entry]:
        entry = self._slots[key & self._mask]
        return entry if entry is not None and entry.key == key else None

    def store(self, key: int, depth: int, bound: int, score: int, move: Any) -> None:
        slot = key & self._mask
        old = self._slots[slot]
        if old is not None and old.key != key and old.generation == self.generation and old.depth > depth:
            self.kept += 1
            return
        if old is not None and old.key == key and old.depth > depth and old.generation == self.generation:
            if move is None or old.move == move:
                self.kept += 1
                return
            # a shallower result with a new best move keeps the deeper score but learns the move
            self._slots[slot] = old._replace(move=move)
            return
        if old is not None and old.key != key:
            self.replaced += 1
        self.stores += 1
        self._slots[slot] = Entry(key, depth, bound, score, move, self.generation)

    def filled(self) -> int:
        """Slots in use."""
        return sum(entry is not None for entry in self._slots)
