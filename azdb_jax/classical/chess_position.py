"""A chess position for game-tree search: python-chess's board with an incremental Zobrist key.

`ChessPosition` wraps a ``chess.Board`` (python-chess generates and plays the moves) and
keeps what the search needs beside it:

- ``key``: the polyglot Zobrist hash (``chess.polyglot.zobrist_hash``, the key of
  polyglot opening books), updated move by move from the moved, captured and promoted
  pieces, the castling rights and the en-passant file (python-chess recomputes it from
  the whole board, ~15x slower);
- ``history``: the keys of the game's earlier positions, for repetitions;
- the same move interface as ``azdb_jax.classical.gardner_position.GardnerPosition``
  (moves are ``chess.Move``), so one search runs on both games.

Standard chess only (``chess960`` boards are refused: their castling moves are encoded
as king-takes-rook).
"""

from typing import List, Sequence, Tuple

import chess
import chess.polyglot

__all__ = ["ChessPosition"]

_KEYS = chess.polyglot.POLYGLOT_RANDOM_ARRAY
_TURN_KEY = _KEYS[780]
_HASHER = chess.polyglot.ZobristHasher(_KEYS)
# Polyglot's piece index: (type - 1) * 2 + (1 for White); KEY[colour][type][square].
_PIECE_KEYS = [[[_KEYS[64 * ((t - 1) * 2 + c) + s] for s in range(64)] if t else [0] * 64 for t in range(7)]
               for c in (0, 1)]
_LETTERS = " PNBRQK"
# Rook (from, to) of a castling move by the king's (from, to).
_CASTLING_ROOKS = {(chess.E1, chess.G1): (chess.H1, chess.F1), (chess.E1, chess.C1): (chess.A1, chess.D1),
                   (chess.E8, chess.G8): (chess.H8, chess.F8), (chess.E8, chess.C8): (chess.A8, chess.D8)}


def _ep_key(board: chess.Board) -> int:
    return _HASHER.hash_ep_square(board) if board.ep_square is not None else 0


class ChessPosition:
    """A chess position, mutable through `push` / `pop`.

    Args:
      board: a ``chess.Board`` (copied, with its move stack: its earlier positions count
        for repetitions) or a FEN; ValueError names an invalid FEN or position.
      history: further keys of earlier positions (oldest first).
    """

    def __init__(self, board=chess.STARTING_FEN, history: Sequence[int] = ()):
        if isinstance(board, str):
            try:
                board = chess.Board(board)
            except ValueError as e:
                raise ValueError(f"chess FEN {board!r}: {e}") from None
        if board.chess960:
            raise ValueError("chess960 boards are not supported by the classical search")
        status = board.status()
        if status != chess.STATUS_VALID:
            problems = ", ".join(flag.name.lower() for flag in chess.Status if flag and flag in status)
            raise ValueError(f"chess position {board.fen()!r} is not valid ({problems})")
        keys = []
        replay = board.root()
        for move in board.move_stack:
            keys.append(chess.polyglot.zobrist_hash(replay))
            replay.push(move)
        self.board = board.copy(stack=False)
        self.history: List[int] = list(history) + keys
        self.key = chess.polyglot.zobrist_hash(self.board)
        self._castle_key = _HASHER.hash_castling(self.board)
        self._ep = _ep_key(self.board)
        self._undo: List[tuple] = []

    @classmethod
    def from_board(cls, board: chess.Board) -> "ChessPosition":
        return cls(board)

    # ------------------------------------------------------------------ the position

    @property
    def turn(self) -> bool:
        return self.board.turn

    @property
    def halfmove_clock(self) -> int:
        return self.board.halfmove_clock

    def fen(self) -> str:
        return self.board.fen()

    def in_check(self) -> bool:
        return self.board.is_check()

    # ------------------------------------------------------------------ moves

    def legal_moves(self) -> List[chess.Move]:
        return list(self.board.generate_legal_moves())

    def noisy_moves(self) -> List[chess.Move]:
        """Legal captures (en passant included) and promotions (quiescence search)."""
        board = self.board
        moves = list(board.generate_legal_captures())
        last_rank = chess.BB_RANK_8 if board.turn else chess.BB_RANK_1
        pawns = board.pawns & board.occupied_co[board.turn] & (chess.BB_RANK_7 if board.turn else chess.BB_RANK_2)
        if pawns:
            moves += [m for m in board.generate_legal_moves(pawns, last_rank & ~board.occupied)]
        return moves

    def has_legal_move(self) -> bool:
        return any(self.board.generate_legal_moves())

    def is_capture(self, move: chess.Move) -> bool:
        return self.board.is_capture(move)

    def mvv_lva(self, move: chess.Move) -> int:
        """``8 · victim + 2 · promotion + 7 − attacker`` (piece codes 1..6); 0 for a quiet move."""
        board = self.board
        victim = board.piece_type_at(move.to_square)
        if victim is None and move.to_square == board.ep_square and board.pawns & chess.BB_SQUARES[move.from_square]:
            victim = chess.PAWN
        if not victim and not move.promotion:
            return 0
        return 8 * (victim or 0) + 2 * (move.promotion or 0) + 7 - board.piece_type_at(move.from_square)

    def push(self, move: chess.Move) -> None:
        board = self.board
        white = board.turn
        colour, other = (1, 0) if white else (0, 1)
        frm, to = move.from_square, move.to_square
        kind = board.piece_type_at(frm)
        key = self.key ^ self._ep ^ _PIECE_KEYS[colour][kind][frm]
        rook = _CASTLING_ROOKS.get((frm, to)) if kind == chess.KING else None
        if rook is not None:
            key ^= _PIECE_KEYS[colour][chess.ROOK][rook[0]] ^ _PIECE_KEYS[colour][chess.ROOK][rook[1]]
        else:
            captured = board.piece_type_at(to)
            if captured:
                key ^= _PIECE_KEYS[other][captured][to]
            elif kind == chess.PAWN and to == board.ep_square:
                key ^= _PIECE_KEYS[other][chess.PAWN][to - 8 if white else to + 8]
        key ^= _PIECE_KEYS[colour][move.promotion or kind][to]
        rights = board.castling_rights
        self._undo.append((self.key, self._castle_key, self._ep))
        self.history.append(self.key)
        board.push(move)
        if board.castling_rights != rights:
            key ^= self._castle_key
            self._castle_key = _HASHER.hash_castling(board)
            key ^= self._castle_key
        self._ep = _ep_key(board)
        self.key = key ^ self._ep ^ _TURN_KEY

    def pop(self) -> chess.Move:
        self.key, self._castle_key, self._ep = self._undo.pop()
        self.history.pop()
        return self.board.pop()

    # ------------------------------------------------------------------ draws and material

    def is_insufficient_material(self) -> bool:
        board = self.board
        if chess.popcount(board.occupied) > 4:  # python-chess's test is slow; it needs few pieces
            return False
        return board.is_insufficient_material()

    def piece_count(self) -> int:
        return chess.popcount(self.board.occupied)

    def material(self) -> Tuple[str, str]:
        """(White's, Black's) pieces as letters, kings first then Q R B N P: ``("KQ", "K")``."""
        board = self.board
        sides = []
        for colour in (chess.WHITE, chess.BLACK):
            text = ""
            for kind in (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN):
                text += _LETTERS[kind] * chess.popcount(board.pieces_mask(kind, colour))
            sides.append(text)
        return sides[0], sides[1]

    # ------------------------------------------------------------------ chess.Move interop

    @staticmethod
    def to_chess(move: chess.Move) -> chess.Move:
        return move

    def from_chess(self, move: chess.Move) -> chess.Move:
        if not self.board.is_legal(move):
            raise chess.IllegalMoveError(f"illegal move {move.uci()} in {self.fen()}")
        return move

    @staticmethod
    def uci(move: chess.Move) -> str:
        return move.uci()

    def copy(self) -> "ChessPosition":
        other = ChessPosition.__new__(ChessPosition)
        other.board, other.history, other.key = self.board.copy(stack=False), list(self.history), self.key
        other._castle_key, other._ep, other._undo = self._castle_key, self._ep, []
        return other

    def __repr__(self) -> str:
        return f"ChessPosition({self.fen()!r})"
