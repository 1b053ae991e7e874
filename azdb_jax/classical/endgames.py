"""Endgame databases by retrograde analysis: KQK and KRK on chess (8x8) and Gardner's 5x5 board.

For king + queen (or rook) against a lone king, every placement of the three pieces is
one entry of two tables, White (the strong side) to move (WTM) and Black to move (BTM);
for a board of n² squares that is n⁶ entries each (262,144 on 8x8, 15,625 on 5x5).
The tables are filled by dynamic programming backwards from the mates, as Thompson built
Belle's databases:

1. BTM positions where Black is in check and has no legal move are *lost in 0*.
2. Ply n = 1, 3, 5, ...: a WTM position not yet known that has a move to a BTM position
   lost in n − 1 is *won in n*; then a BTM position not yet known, with at least one
   legal move, all of whose moves lead to won WTM positions (and none captures the
   queen/rook), is *lost in n + 1*.
3. When a pass labels nothing new, the rest are draws (stalemates, positions where the
   lone king takes the undefended piece, and those that only lead there).

A position's distance to mate is in plies for the side to move; in moves, a win in n
plies is ⌈n / 2⌉ moves. All of it is NumPy over whole tables: each pass is a gather over
precomputed successor indices (white: ≤ 8 king moves + ≤ 4(n−1)·2 piece moves; black: 8).
The rules are those of both games without pawns (no castling is possible); the
fifty-move rule and Gardner's 256-ply cap are not modelled (the longest mates are far
shorter). Black being the strong side is handled by mirroring the board.

Checked in ``tests/test_classical_endgames.py``: the longest mates on 8x8 are the known
10 (KQK) and 16 (KRK) moves, and positions agree with Stockfish / Fairy-Stockfish.
"""

import functools
import logging
import os
import pathlib
import tempfile
from typing import Dict, Iterable, NamedTuple, Optional, Tuple

import numpy as np

__all__ = ["Table", "build_table", "EndgameTables", "MATERIALS", "longest_mate_moves"]

MATERIALS = ("KQK", "KRK")
_KING_STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
_DIRECTIONS = {"Q": _KING_STEPS, "R": _KING_STEPS[:4]}
UNKNOWN = -1
_FORMAT = 1  # bump when the tables' layout or meaning changes


class Table(NamedTuple):
    """One material set on one board size; entries indexed ``(wk · n² + piece) · n² + bk``
    (squares ``rank · n + file``), the strong side being White."""

    material: str  # "KQK" or "KRK"
    size: int  # board side n
    valid_wtm: np.ndarray  # [n⁶] bool a legal position with White to move
    valid_btm: np.ndarray  # [n⁶] bool a legal position with Black to move
    wtm: np.ndarray  # [n⁶] int16 plies to mate for White to move, UNKNOWN (-1): draw
    btm: np.ndarray  # [n⁶] int16 plies until Black is mated, UNKNOWN (-1): draw


def _coords(size: int):
    squares = np.arange(size * size)
    return squares % size, squares // size


@functools.lru_cache(maxsize=None)
def _geometry(size: int, piece: str):
    """Per-square attack geometry: ``between[a, b, c]`` c lies strictly between a and b on
    a line the piece moves along; ``line[a, b]`` a and b share such a line (a ≠ b)."""
    n2 = size * size
    files, ranks = _coords(size)
    line = np.zeros((n2, n2), bool)
    between = np.zeros((n2, n2, n2), bool)
    for a in range(n2):
        for df, dr in _DIRECTIONS[piece]:
            f, r, path = files[a] + df, ranks[a] + dr, []
            while 0 <= f < size and 0 <= r < size:
                b = r * size + f
                line[a, b] = True
                between[a, b, path] = True
                path.append(b)
                f, r = f + df, r + dr
    return line, between


def _distance(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    return np.maximum(np.abs(a % size - b % size), np.abs(a // size - b // size))


def _step(square: np.ndarray, df: int, dr: int, size: int) -> np.ndarray:
    """The square one step away, or -1 off the board."""
    f, r = square % size + df, square // size + dr
    return np.where((f >= 0) & (f < size) & (r >= 0) & (r < size), r * size + f, -1)


def build_table(material: str, size: int) -> Table:
    """Retrograde analysis of ``material`` (``KQK`` or ``KRK``) on an ``size`` x ``size`` board."""
    if material not in MATERIALS:
        raise ValueError(f"no endgame database for {material!r}; databases: {', '.join(MATERIALS)}")
    if size < 3:
        raise ValueError(f"board size must be >= 3, got {size}")
    piece = material[1]
    n2 = size * size
    line, between = _geometry(size, piece)
    wk, pc, bk = (x.reshape(-1) for x in np.indices((n2, n2, n2)))
    index = lambda w, p, b: (w * n2 + p) * n2 + b  # noqa: E731
    distinct = (wk != pc) & (wk != bk) & (pc != bk)
    apart = _distance(wk, bk, size) > 1
    black_in_check = line[pc, bk] & ~between[pc, bk, wk]
    valid_btm = distinct & apart
    valid_wtm = valid_btm & ~black_in_check

    # White's moves (from WTM positions): king steps, then the piece's moves to every square.
    white_succ = []
    for df, dr in _KING_STEPS:
        to = _step(wk, df, dr, size)
        ok = valid_wtm & (to >= 0) & (to != pc) & (_distance(np.maximum(to, 0), bk, size) > 1)
        white_succ.append(np.where(ok, index(np.maximum(to, 0), pc, bk), -1))
    for to in range(n2):
        ok = valid_wtm & line[pc, to] & ~between[pc, to, wk] & ~between[pc, to, bk] & (wk != to) & (bk != to)
        white_succ.append(np.where(ok, index(wk, to, bk), -1))
    white_succ = np.stack(white_succ, axis=1)
    white_succ = white_succ[:, (white_succ >= 0).any(axis=0)]

    # Black's moves (from BTM positions): -1 no move, -2 takes the undefended piece (a draw).
    black_succ = []
    for df, dr in _KING_STEPS:
        to = _step(bk, df, dr, size)
        t = np.maximum(to, 0)
        ok = valid_btm & (to >= 0) & (_distance(t, wk, size) > 1)
        capture = ok & (t == pc)
        quiet = ok & (t != pc) & ~(line[pc, t] & ~between[pc, t, wk])
        black_succ.append(np.where(capture, -2, np.where(quiet, index(wk, pc, t), -1)))
    black_succ = np.stack(black_succ, axis=1)
    black_moves = (black_succ != -1).sum(axis=1)
    black_draws = (black_succ == -2).any(axis=1)

    wtm = np.full(wk.shape, UNKNOWN, np.int16)
    btm = np.full(wk.shape, UNKNOWN, np.int16)
    btm[valid_btm & black_in_check & (black_moves == 0)] = 0
    plies = 1
    while True:
        lost = np.flatnonzero(btm == plies - 1)
        if lost.size == 0:
            break
        target = np.zeros(wk.shape, bool)
        target[lost] = True
        open_w = np.flatnonzero(valid_wtm & (wtm == UNKNOWN))
        succ = white_succ[open_w]
        wins = (target[np.maximum(succ, 0)] & (succ >= 0)).any(axis=1)
        wtm[open_w[wins]] = plies
        open_b = np.flatnonzero(valid_btm & (btm == UNKNOWN) & (black_moves > 0) & ~black_draws)
        succ = black_succ[open_b]
        won = np.where(succ >= 0, wtm[np.maximum(succ, 0)] != UNKNOWN, True)
        btm[open_b[won.all(axis=1)]] = plies + 1
        plies += 2
    return Table(material, size, valid_wtm, valid_btm, wtm, btm)


def cache_dir() -> pathlib.Path:
    """Where built tables are kept: ``$AZDB_CACHE_DIR/endgames`` or ``~/.cache/azdb_jax/endgames``."""
    base = os.environ.get("AZDB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "azdb_jax")
    return pathlib.Path(base) / "endgames"


@functools.lru_cache(maxsize=None)
def cached_table(material: str, size: int) -> Table:
    """`build_table`, once per process and kept on disk (`cache_dir`): building the 8x8
    tables takes about 6 s each on this project's 2-core machine, loading them a few ms.
    A cache file that does not load is rebuilt."""
    path = cache_dir() / f"{material}_{size}x{size}_v{_FORMAT}.npz"
    try:
        with np.load(path) as saved:
            table = Table(material, size, *(saved[name] for name in Table._fields[2:]))
        if table.wtm.shape == (size ** 6,):
            return table
    except (OSError, KeyError, ValueError):
        pass
    table = build_table(material, size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
        with os.fdopen(handle, "wb") as out:
            np.savez_compressed(out, **{name: getattr(table, name) for name in Table._fields[2:]})
        os.replace(tmp, path)
    except OSError as e:  # a read-only cache only costs the rebuild next time
        logging.info("endgame table cache %s not written: %s", path, e)
    return table


def longest_mate_moves(table: Table) -> int:
    """The longest forced mate of the table with the strong side to move, in moves."""
    return int((table.wtm.max() + 1) // 2)


class EndgameTables:
    """The databases of ``materials`` for one board size, probed by material.

    Args:
      size: 8 (chess) or 5 (Gardner chess).
      materials: material sets, each ``KQK`` or ``KRK`` (the strong side may be either
        colour); ValueError names one without a database.
    """

    def __init__(self, size: int, materials: Iterable[str] = MATERIALS):
        self.size = size
        self.tables: Dict[Tuple[str, str], Table] = {}
        for material in materials:
            if material not in MATERIALS:
                raise ValueError(f"no endgame database for {material!r}; databases: {', '.join(MATERIALS)}")
            table = cached_table(material, size)
            self.tables[("K" + material[1], "K")] = table
            self.tables[("K", "K" + material[1])] = table

    def _entry(self, position) -> Optional[Tuple[Table, int, bool]]:
        table = self.tables.get(position.material())
        if table is None:
            return None
        white_strong = len(position.material()[0]) == 2
        strong_king, piece, weak_king = _pieces(position, self.size)
        if not white_strong:  # mirror the ranks: the strong side becomes White
            flip = lambda s: (self.size - 1 - s // self.size) * self.size + s % self.size  # noqa: E731
            strong_king, piece, weak_king = flip(strong_king), flip(piece), flip(weak_king)
        n2 = self.size * self.size
        strong_to_move = position.turn == white_strong
        return table, (strong_king * n2 + piece) * n2 + weak_king, strong_to_move

    def probe(self, position) -> Optional[Tuple[int, int]]:
        """(outcome, plies) for the side to move: (+1, n) wins in n plies, (−1, n) is mated
        in n plies, (0, 0) a draw; None when no database holds the position's material."""
        entry = self._entry(position)
        if entry is None:
            return None
        table, index, strong_to_move = entry
        if strong_to_move:
            plies = int(table.wtm[index])
            return (1, plies) if plies >= 0 else (0, 0)
        plies = int(table.btm[index])
        return (-1, plies) if plies >= 0 else (0, 0)

    def lookup(self, position) -> Tuple[int, int]:
        """`probe`, but a position whose material has no database is a ValueError naming it."""
        result = self.probe(position)
        if result is None:
            white, black = position.material()
            raise ValueError(f"no endgame database for {white}v{black} ({position.fen()}); "
                             f"databases: {', '.join(MATERIALS)}")
        return result


def _pieces(position, size: int) -> Tuple[int, int, int]:
    """(strong king, piece, weak king) squares (``rank · size + file``) of a KQK/KRK position."""
    if size == 8:
        board = position.board
        pieces = board.piece_map()
        strong_square = next(s for s, p in pieces.items() if p.piece_type != 6)
        strong = pieces[strong_square].color
        kings = {p.color: s for s, p in pieces.items() if p.piece_type == 6}
        return kings[strong], strong_square, kings[not strong]
    piece = next(s for s, p in enumerate(position.board) if p and abs(p) != 6)
    strong = 1 if position.board[piece] > 0 else -1
    return position.kings[strong], piece, position.kings[-strong]


def index_fen(table: Table, index: int, white_to_move: bool) -> str:
    """The FEN of table entry ``index`` (the strong side White), chess or Gardner by the board size."""
    n2 = table.size * table.size
    strong_king, piece, weak_king = index // (n2 * n2), (index // n2) % n2, index % n2
    rows = [["."] * table.size for _ in range(table.size)]
    for square, letter in ((strong_king, "K"), (piece, table.material[1]), (weak_king, "k")):
        rows[table.size - 1 - square // table.size][square % table.size] = letter
    placement = "/".join("".join(row) for row in rows)
    for run in range(table.size, 0, -1):
        placement = placement.replace("." * run, str(run))
    return f"{placement} {'w' if white_to_move else 'b'} - - 0 1"


def sample_entries(table: Table, count: int, seed: int, *, white_to_move: bool) -> np.ndarray:
    """``count`` distinct legal entries of one side to move, uniformly at random."""
    valid = np.flatnonzero(table.valid_wtm if white_to_move else table.valid_btm)
    return np.random.default_rng(seed).choice(valid, size=min(count, valid.size), replace=False)


def table_verdict(tables: EndgameTables, position) -> Tuple[int, Optional[int]]:
    """(outcome for the side to move, moves to mate or None for a draw) of a position."""
    outcome, plies = tables.lookup(position)
    return outcome, (plies + 1) // 2 if outcome > 0 else plies // 2 if outcome < 0 else None


def engine_verdict(score) -> Tuple[int, Optional[int]]:
    """(outcome, moves to mate or None) of a UCI engine's score for the side to move
    (``chess.engine.Score``): a mate score, or a centipawn score beyond ±200 as a win/loss."""
    mate = score.mate()
    if mate is not None:
        return (1 if mate > 0 else -1), abs(mate)
    cp = score.score()
    return (1 if cp > 200 else -1 if cp < -200 else 0), None


def compare_with_engine(tables: EndgameTables, table: Table, make, analyse, count: int, seed: int = 7):
    """Compares ``count`` sampled positions (half each side to move) with an engine.

    ``make``: FEN -> search position; ``analyse``: FEN -> the engine's score. Positions
    without a legal move are skipped. Returns {"positions", "same_outcome", "engine_mates",
    "same_mate", "engine_longer", "engine_shorter", "disagreements": [(fen, ours, engine)]}:
    an engine's mate is a real mate, so a shorter one than the table's would refute it;
    a longer one is the engine missing the fastest mate (its search prunes)."""
    counts = dict(positions=0, same_outcome=0, engine_mates=0, same_mate=0, engine_longer=0, engine_shorter=0)
    disagreements = []
    for white in (True, False):
        for index in sample_entries(table, count // 2, seed, white_to_move=white):
            fen = index_fen(table, int(index), white)
            position = make(fen)
            if not position.legal_moves():
                continue
            ours, theirs = table_verdict(tables, position), engine_verdict(analyse(fen))
            counts["positions"] += 1
            counts["same_outcome"] += ours[0] == theirs[0]
            if theirs[1] is not None:
                counts["engine_mates"] += 1
                counts["same_mate"] += theirs[1] == ours[1]
                counts["engine_longer"] += ours[1] is not None and theirs[1] > ours[1]
                counts["engine_shorter"] += ours[1] is None or theirs[1] < ours[1]
            if ours != theirs:
                disagreements.append((fen, ours, theirs))
    return dict(counts, disagreements=disagreements)
