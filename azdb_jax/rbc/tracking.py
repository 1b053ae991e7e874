"""Possible-state tracking: the boards one RBC player cannot rule out from what it observed.

The paper's Algorithm 4 (§5) tracks every world state consistent with the player's
information state: its own pieces are known, the opponent's only through

- the square where the opponent captured one of its pieces (or that it captured none),
- its sense results (the pieces on a 3x3 window),
- the results of its own moves (the requested move, the move taken and the square
  where it captured).

``PossibleStates`` keeps that set as python-chess boards (castling rights and en-passant
square included), one per distinct position (``rules.board_key``), and updates it with
each observation in the order reconchess delivers them: after the opponent's move every
board is replaced by its children under every move the opponent can end up playing
(``rules.taken_moves``) that agrees with the capture report; a sense keeps the boards that
show the sensed pieces; an own move keeps the boards on which the requested move is
revised to the taken move with the reported capture, and plays it.

The opponent's move multiplies the set by some 30 and the sense that always follows
divides it again, so the children are made lazily: ``opponent_moved`` only records the
move, and ``sensed`` makes the children that can show the sensed window (a move changes
only the squares ``rules.touched_squares`` names). ``boards``, ``len``, ``in`` and
``sample`` answer in between (the first two by making every child).

Without a cap the set always holds the true board. A cap (``max_boards``, the paper's
practical limit) samples the set down uniformly when it grows past it, and a larger one
(``max_boards_before_sense``, 5x by default) applies when the children are all made
before the sense; the true board may then be lost, and a later observation may leave no
board. The set is then rebuilt leniently instead of failing: the boards of the set
before that observation that disagree least with it are made to agree (sensed squares
set to what was seen, the taken move forced through, a capturing opponent piece moved
onto the capture square). Both events are counted in ``stats`` and ``exact`` turns False.
"""

import dataclasses
import time
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np

from azdb_jax.rbc import rules

__all__ = ["TrackerStats", "PossibleStates", "DEFAULT_MAX_BOARDS", "BEFORE_SENSE_FACTOR"]

DEFAULT_MAX_BOARDS = 20_000
BEFORE_SENSE_FACTOR = 5
SenseResult = Sequence[Tuple[int, Optional[chess.Piece]]]


@dataclasses.dataclass
class TrackerStats:
    """What the tracker did over a game (sizes are the set's size after each update)."""

    # (board, opponent move) pairs that agree with the capture report: distinct boards <= this
    sizes_after_opponent_move: List[int] = dataclasses.field(default_factory=list)
    sizes_after_sense: List[int] = dataclasses.field(default_factory=list)
    sizes_after_own_move: List[int] = dataclasses.field(default_factory=list)
    cap_hits: int = 0  # updates where the set was sampled down to its cap
    boards_dropped: int = 0  # boards removed by that sampling, summed
    rebuilds: Dict[str, int] = dataclasses.field(default_factory=dict)  # kind of observation -> count
    seconds: float = 0.0  # time spent updating

    def summary(self) -> Dict[str, float]:
        """Set sizes (distinct boards after each sense and own move: the set the player acts
        on; pairs before each sense), caps, rebuilds and seconds."""
        sizes = self.sizes_after_sense + self.sizes_after_own_move
        pairs = self.sizes_after_opponent_move
        return {"updates": len(sizes) + len(pairs), "mean_size": float(np.mean(sizes)) if sizes else 0.0,
                "max_size": max(sizes, default=0), "mean_size_after_sense": float(
                    np.mean(self.sizes_after_sense)) if self.sizes_after_sense else 0.0,
                "mean_pairs_before_sense": float(np.mean(pairs)) if pairs else 0.0,
                "max_pairs_before_sense": max(pairs, default=0),
                "cap_hits": self.cap_hits, "boards_dropped": self.boards_dropped,
                "rebuilds": sum(self.rebuilds.values()), "rebuilds_by_kind": dict(self.rebuilds),
                "seconds": self.seconds}


class PossibleStates:
    """The boards consistent with one player's observations (module docstring).

    Args:
      board: the game's starting board (White to move).
      color: the tracking player's colour.
      max_boards: the cap on the set's size (sampled down past it); None for no cap.
      max_boards_before_sense: the cap between the opponent's move and the sense; None:
        ``BEFORE_SENSE_FACTOR * max_boards``.
      seed: seed of the sampling at the cap.
    """

    def __init__(self, board: chess.Board, color: bool, *, max_boards: Optional[int] = DEFAULT_MAX_BOARDS,
                 max_boards_before_sense: Optional[int] = None, seed: int = 0):
        if max_boards is not None and max_boards < 1:
            raise ValueError(f"max_boards must be >= 1 or None, got {max_boards}")
        if max_boards_before_sense is not None and max_boards_before_sense < 1:
            raise ValueError(f"max_boards_before_sense must be >= 1 or None, got {max_boards_before_sense}")
        start = board.copy(stack=False)
        self.color = color
        self.max_boards = max_boards
        self.max_boards_before_sense = max_boards_before_sense or (
            None if max_boards is None else BEFORE_SENSE_FACTOR * max_boards)
        self.stats = TrackerStats()
        self.exact = True  # False once the cap or a rebuild may have dropped the true board
        self._rng = np.random.default_rng(seed)
        self._boards: Dict[rules.BoardKey, chess.Board] = {rules.board_key(start): start}
        # (parents, capture square): the opponent has moved and its move is not yet played
        self._pending: Optional[Tuple[List[chess.Board], Optional[int]]] = None

    @classmethod
    def from_boards(cls, boards: Sequence[chess.Board], color: bool, **kwargs) -> "PossibleStates":
        """A tracker whose set is ``boards`` (all with the same side to move and the same pieces
        of ``color``), e.g. a hand-built position; ``kwargs`` as the constructor's."""
        if not boards:
            raise ValueError("from_boards needs at least one board")
        tracker = cls(boards[0], color, **kwargs)
        tracker._boards, tracker._pending = {}, None
        for board in boards:
            tracker._boards.setdefault(rules.board_key(board), board.copy(stack=False))
        return tracker

    # ------------------------------------------------------------------ the set

    @property
    def boards(self) -> List[chess.Board]:
        """The possible boards (expanding the opponent's move first if it is pending)."""
        self._materialize()
        return list(self._boards.values())

    def __len__(self) -> int:
        self._materialize()
        return len(self._boards)

    def __contains__(self, board: chess.Board) -> bool:
        if self._pending is None:
            return rules.board_key(board) in self._boards
        parents, capture = self._pending
        key = rules.board_key(board)
        for parent in parents:  # only moves from a square where the parent and the board differ
            differ = _differing(parent, board)
            if chess.popcount(differ) > 4:
                continue
            for move in _moves(parent, capture):
                if (move is None and not differ) or (move is not None and differ & chess.BB_SQUARES[move.from_square]):
                    if rules.board_key(rules.play(parent, move)) == key:
                        return True
        return False

    def sample(self, count: int, rng: np.random.Generator) -> List[chess.Board]:
        """Up to ``count`` distinct boards drawn uniformly from the set (while the opponent's
        move is pending: the children of randomly drawn parents, each parent's all or none)."""
        if self._pending is None:
            boards = list(self._boards.values())
        else:
            parents, capture = self._pending
            found: Dict[rules.BoardKey, chess.Board] = {}
            for index in rng.permutation(len(parents)):
                for move in _moves(parents[index], capture):
                    child = rules.play(parents[index], move)
                    found.setdefault(rules.board_key(child), child)
                if len(found) >= count:
                    break
            boards = list(found.values())
        if len(boards) <= count:
            return boards
        return [boards[i] for i in rng.choice(len(boards), size=count, replace=False)]

    def _replace(self, boards: Sequence[chess.Board], record: Optional[List[int]], cap: Optional[int]) -> None:
        fresh: Dict[rules.BoardKey, chess.Board] = {}
        for board in boards:
            fresh.setdefault(rules.board_key(board), board)
        if cap is not None and len(fresh) > cap:
            keys = list(fresh)
            keep = self._rng.choice(len(keys), size=cap, replace=False)
            self.stats.cap_hits += 1
            self.stats.boards_dropped += len(keys) - cap
            self.exact = False
            fresh = {keys[i]: fresh[keys[i]] for i in sorted(keep)}
        self._boards = fresh
        if record is not None:
            record.append(len(fresh))

    def _materialize(self) -> None:
        """Plays the pending opponent move on every board (capped at ``max_boards_before_sense``)."""
        if self._pending is None:
            return
        parents, capture = self._pending
        self._pending = None
        children = [rules.play(board, move) for board in parents for move in _moves(board, capture)]
        self.stats.sizes_after_opponent_move.append(len(children))
        self._replace(children, None, self.max_boards_before_sense)

    def _rebuilt(self, kind: str) -> None:
        self.stats.rebuilds[kind] = self.stats.rebuilds.get(kind, 0) + 1
        self.exact = False

    # ------------------------------------------------------------------ observations

    def opponent_moved(self, capture: Optional[int]) -> None:
        """The opponent has moved; ``capture`` is where it captured one of our pieces, or None.

        The boards after its move are not made yet: the sense that follows keeps only few
        of them, and ``sensed`` makes just those (``boards``, ``len`` and ``sample`` work
        in between). Called on White's first turn too (reconchess reports "no capture"
        before it): when the set's boards have us to move there was no opponent move."""
        start = time.perf_counter()
        parents = self.boards
        if parents and parents[0].turn == self.color:
            if capture is not None:
                self._rebuilt("capture_before_any_move")
        elif capture is not None and not any(any(True for _ in _moves(board, capture)) for board in parents):
            self._rebuilt("opponent_capture")
            self._replace([_forced_capture(board, capture) for board in parents],
                          self.stats.sizes_after_opponent_move, self.max_boards_before_sense)
        else:
            self._pending = (parents, capture)
        self.stats.seconds += time.perf_counter() - start

    def sensed(self, result: SenseResult) -> None:
        """A sense result: (square, piece or None) for each sensed square (empty: no sense)."""
        start = time.perf_counter()
        if self._pending is not None and result:
            kept = self._sensed_children(result)
        else:
            kept = [board for board in self.boards if rules.sense_matches(board, result)]
        if not kept:
            self._rebuilt("sense")
            before = self.sample(self.max_boards or 10_000, self._rng)
            self._pending = None
            mismatches = [sum(board.piece_at(s) != p for s, p in result) for board in before]
            fewest = min(mismatches)
            kept = [_forced_sense(board, result) for board, m in zip(before, mismatches) if m == fewest]
        self._replace(kept, self.stats.sizes_after_sense, self.max_boards)
        self.stats.seconds += time.perf_counter() - start

    def _sensed_children(self, result: SenseResult) -> List[chess.Board]:
        """The children of the pending opponent move that show ``result``, made only where a
        child can: a move changes at most the squares ``rules.touched_squares`` names, so a
        parent that differs from the sense elsewhere has no such child, and a move that
        touches no sensed square keeps a matching parent's window as it is."""
        parents, capture = self._pending
        window = 0
        for square, _ in result:
            window |= chess.BB_SQUARES[square]
        kept, pairs = [], 0
        for board in parents:
            wrong = 0
            for square, piece in result:
                if board.piece_at(square) != piece:
                    wrong |= chess.BB_SQUARES[square]
            for move in _moves(board, capture):
                pairs += 1
                touched = rules.touched_squares(board, move)
                if wrong & ~touched:
                    continue
                child = rules.play(board, move)
                if (not wrong and not touched & window) or rules.sense_matches(child, result):
                    kept.append(child)
        self.stats.sizes_after_opponent_move.append(pairs)
        self._pending = None
        return kept

    def moved(self, requested: Optional[chess.Move], taken: Optional[chess.Move], capture: Optional[int]) -> None:
        """The result of our own move: the requested move, the move taken (None: a pass) and
        the square where we captured (None: no capture)."""
        start = time.perf_counter()
        parents = self.boards
        children = []
        for board in parents:
            if rules.taken_move(board, requested) == taken and rules.capture_square(board, taken) == capture:
                children.append(rules.play(board, taken))
        if not children:
            self._rebuilt("own_move")
            children = [_forced_move(board, taken, capture) for board in parents]
        self._replace(children, self.stats.sizes_after_own_move, self.max_boards)
        self.stats.seconds += time.perf_counter() - start


def _moves(board: chess.Board, capture: Optional[int]):
    """The opponent's possible moves on ``board`` (it is to move) that capture on ``capture`` (None: nothing)."""
    for move in rules.taken_moves(board):
        if rules.capture_square(board, move) == capture:
            yield move


def _differing(a: chess.Board, b: chess.Board) -> int:
    """The squares where ``a`` and ``b`` hold different pieces (or one holds none)."""
    return ((a.pawns ^ b.pawns) | (a.knights ^ b.knights) | (a.bishops ^ b.bishops) | (a.rooks ^ b.rooks)
            | (a.queens ^ b.queens) | (a.kings ^ b.kings) | (a.occupied_co[chess.WHITE] ^ b.occupied_co[chess.WHITE])
            | (a.occupied ^ b.occupied))


# ---------------------------------------------------------------------------- lenient rebuilds


def _settle(board: chess.Board) -> chess.Board:
    board.castling_rights = board.clean_castling_rights()
    if board.ep_square is not None and not board.has_pseudo_legal_en_passant():
        board.ep_square = None
    return board


def _forced_sense(board: chess.Board, result: SenseResult) -> chess.Board:
    """``board`` with the sensed squares set to what was seen (a second king of a side that
    was seen elsewhere removed)."""
    patched = board.copy(stack=False)
    for square, piece in result:
        if piece is not None and piece.piece_type == chess.KING:
            for other in list(patched.pieces(chess.KING, piece.color)):
                patched.remove_piece_at(other)
    for square, piece in result:
        patched.set_piece_at(square, piece)
    return _settle(patched)


def _forced_move(board: chess.Board, taken: Optional[chess.Move], capture: Optional[int]) -> chess.Board:
    """``board`` after our ``taken`` move, played even where ``board`` does not allow it."""
    if taken is None or board.is_pseudo_legal(taken) or rules.is_castle(board, taken):
        return rules.play(board, taken)
    patched = board.copy(stack=False)
    piece = patched.remove_piece_at(taken.from_square)
    if capture is not None:
        patched.remove_piece_at(capture)
    patched.set_piece_at(taken.to_square, chess.Piece(taken.promotion or piece.piece_type, piece.color)
                         if piece is not None else None)
    patched.turn = not patched.turn
    patched.ep_square = None
    return _settle(patched)


def _forced_capture(board: chess.Board, capture: int) -> chess.Board:
    """``board`` after an opponent move onto ``capture``: one of its pieces attacking the square
    moves there if there is one, else one that reaches it on an empty board, else any
    piece other than its king (pieces tried from the least valuable)."""
    them = board.turn
    attackers = board.attackers(them, capture)
    if not attackers:
        empty = chess.Board(None)
        for square, piece in board.piece_map().items():
            if piece.color == them:
                empty.set_piece_at(square, piece)
        attackers = empty.attackers(them, capture)
    candidates = sorted(attackers or chess.SquareSet(board.occupied_co[them]),
                        key=lambda s: (board.piece_type_at(s) == chess.KING, board.piece_type_at(s)))
    patched = board.copy(stack=False)
    if candidates:
        piece = patched.remove_piece_at(candidates[0])
        patched.set_piece_at(capture, piece)
    else:
        patched.remove_piece_at(capture)
    patched.turn = not patched.turn
    patched.ep_square = None
    return _settle(patched)
