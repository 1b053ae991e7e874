"""A fast host-side Gardner chess position for game-tree search (make/unmake, Zobrist keys).

`GardnerBoard` steps a jitted pgx state per move, about 1.1 ms a push on this project's
2-core machine (``docs/results.md``, "Classical search"), so a depth-5 alpha-beta search
of ~50,000 nodes would take a minute. `GardnerPosition` holds the same position as a list
of 25 squares and plays moves in place, with the undo information on a stack.

Conventions:

- squares are ``rank * 5 + file`` (a1 = 0, e1 = 4, a5 = 20); pieces are ints, White
  positive and Black negative, ``1..6 = P N B R Q K``;
- a move is an int ``from | to << 5 | promotion << 10`` (promotion 0, or 2..5 = N B R Q);
  ``to_chess`` / ``from_chess`` convert to ``chess.Move`` (Gardner squares are chess
  squares a1..e5);
- the rules are the env's (``azdb_jax.envs.gardner``): no pawn double step, no en
  passant, no castling, promotion to N/B/R/Q; the draw rules the search applies are
  `is_insufficient_material` (OpenSpiel's, as pgx), the fifty-move rule (100 plies) and
  repetition (see ``azdb_jax.classical.search``); the env's 256-ply cap is not searched;
- ``key`` is a 64-bit Zobrist hash (piece-square keys XOR a side key when Black moves),
  updated incrementally; ``history`` holds the keys of the game so far for repetitions.

The move generator is checked against `GardnerBoard` (the env's rules) and
Fairy-Stockfish's ``go perft`` in ``tests/test_classical_boards.py``.
"""

from typing import List, Sequence, Tuple

import chess
import numpy as np

__all__ = ["GardnerPosition", "SIZE", "square_of", "chess_square", "STARTING_FEN"]

SIZE = 5
STARTING_FEN = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
_LETTERS = ".PNBRQK"
_ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))


def square_of(file: int, rank: int) -> int:
    return rank * SIZE + file


def chess_square(square: int) -> int:
    """The python-chess square of a Gardner square (a1..e5 keep their names)."""
    return chess.square(square % SIZE, square // SIZE)


def _on_board(file: int, rank: int) -> bool:
    return 0 <= file < SIZE and 0 <= rank < SIZE


def _steps(square: int, steps) -> Tuple[int, ...]:
    f, r = square % SIZE, square // SIZE
    return tuple(square_of(f + df, r + dr) for df, dr in steps if _on_board(f + df, r + dr))


def _ray(square: int, df: int, dr: int) -> Tuple[int, ...]:
    f, r, out = square % SIZE, square // SIZE, []
    while _on_board(f + df, r + dr):
        f, r = f + df, r + dr
        out.append(square_of(f, r))
    return tuple(out)


_N = SIZE * SIZE
KNIGHT_TARGETS = tuple(_steps(s, _KNIGHT_STEPS) for s in range(_N))
KING_TARGETS = tuple(_steps(s, _ORTHOGONAL + _DIAGONAL) for s in range(_N))
ROOK_RAYS = tuple(tuple(r for r in (_ray(s, *d) for d in _ORTHOGONAL) if r) for s in range(_N))
BISHOP_RAYS = tuple(tuple(r for r in (_ray(s, *d) for d in _DIAGONAL) if r) for s in range(_N))
QUEEN_RAYS = tuple(ROOK_RAYS[s] + BISHOP_RAYS[s] for s in range(_N))
# Squares a pawn of colour sign ``c`` on ``s`` attacks: PAWN_ATTACKS[c > 0][s].
PAWN_ATTACKS = (tuple(_steps(s, ((-1, -1), (1, -1))) for s in range(_N)),
                tuple(_steps(s, ((-1, 1), (1, 1))) for s in range(_N)))
SLIDER_RAYS = {BISHOP: BISHOP_RAYS, ROOK: ROOK_RAYS, QUEEN: QUEEN_RAYS}
LEAPER_TARGETS = {KNIGHT: KNIGHT_TARGETS, KING: KING_TARGETS}

_rng = np.random.default_rng(0x6A5D)  # fixed: keys are the same in every process
# ZOBRIST[piece + 6][square]; row 6 (empty) is zero.
ZOBRIST = [[int(x) for x in row] for row in _rng.integers(1, 2**63, size=(13, _N), dtype=np.int64)]
ZOBRIST[6] = [0] * _N
ZOBRIST_BLACK = int(_rng.integers(1, 2**63, dtype=np.int64))


def encode(frm: int, to: int, promotion: int = 0) -> int:
    return frm | (to << 5) | (promotion << 10)


class GardnerPosition:
    """A Gardner chess position, mutable through `push` / `pop`.

    Args:
      fen: the position (``azdb_jax.envs.gardner_interop.parse_fen``'s strict format);
        ValueError names a bad FEN and why.
      history: Zobrist keys of the game's earlier positions (oldest first), for repetitions.
    """

    def __init__(self, fen: str = STARTING_FEN, history: Sequence[int] = ()):
        from azdb_jax.envs import gardner_interop  # pylint: disable=g-import-not-at-top  (JAX; FEN checks)

        parsed = gardner_interop.parse_fen(fen)
        self.board: List[int] = [0] * _N
        for file in range(SIZE):
            for rank in range(SIZE):
                self.board[square_of(file, rank)] = int(parsed.board[file, rank])
        self.side = 1 if parsed.white_to_move else -1
        self.halfmove_clock = parsed.halfmove_clock
        self.fullmove_number = parsed.fullmove_number
        kings = {p: s for s, p in enumerate(self.board) if abs(p) == KING}
        if len(kings) != 2:
            raise ValueError(f"Gardner FEN {fen!r}: needs one king of each colour")
        self.kings = {1: kings[KING], -1: kings[-KING]}
        if self.attacked(self.kings[-self.side], self.side):
            raise ValueError(f"Gardner FEN {fen!r}: the side not to move is in check")
        self.key = self._full_key()
        self.count = sum(1 for p in self.board if p)  # pieces on the board
        self.history: List[int] = list(history)
        self._undo: List[tuple] = []

    @classmethod
    def from_board(cls, board) -> "GardnerPosition":
        """The current position of a `GardnerBoard` (or anything with ``root()`` and
        ``move_stack``), with its game's keys as history."""
        position = cls(board.root().fen())
        for move in board.move_stack:
            position.push(position.from_chess(move))
        position._undo = []  # the game's moves cannot be taken back; their keys stay in history
        return position

    def _full_key(self) -> int:
        key = ZOBRIST_BLACK if self.side < 0 else 0
        for square, piece in enumerate(self.board):
            key ^= ZOBRIST[piece + 6][square]
        return key

    # ------------------------------------------------------------------ the position

    @property
    def turn(self) -> bool:
        return self.side > 0

    def fen(self) -> str:
        rows = []
        for rank in range(SIZE - 1, -1, -1):
            text, empty = "", 0
            for file in range(SIZE):
                piece = self.board[square_of(file, rank)]
                if piece == 0:
                    empty += 1
                    continue
                if empty:
                    text, empty = text + str(empty), 0
                letter = _LETTERS[abs(piece)]
                text += letter if piece > 0 else letter.lower()
            rows.append(text + (str(empty) if empty else ""))
        side = "w" if self.side > 0 else "b"
        return f"{'/'.join(rows)} {side} - - {self.halfmove_clock} {self.fullmove_number}"

    def copy(self) -> "GardnerPosition":
        other = GardnerPosition.__new__(GardnerPosition)
        other.board, other.side, other.kings = list(self.board), self.side, dict(self.kings)
        other.halfmove_clock, other.fullmove_number, other.key = self.halfmove_clock, self.fullmove_number, self.key
        other.count = self.count
        other.history, other._undo = list(self.history), []
        return other

    def pieces(self) -> List[Tuple[int, int]]:
        """(square, piece) of every piece."""
        return [(s, p) for s, p in enumerate(self.board) if p]

    # ------------------------------------------------------------------ attacks

    def attacked(self, square: int, by: int) -> bool:
        """Whether side ``by`` (+1 White, -1 Black) attacks ``square``."""
        board = self.board
        for t in KNIGHT_TARGETS[square]:
            if board[t] == by * KNIGHT:
                return True
        for t in KING_TARGETS[square]:
            if board[t] == by * KING:
                return True
        # A pawn of ``by`` attacks ``square`` from the squares a pawn of the other side would attack.
        for t in PAWN_ATTACKS[by < 0][square]:
            if board[t] == by * PAWN:
                return True
        queen = by * QUEEN
        for rays, slider in ((ROOK_RAYS[square], by * ROOK), (BISHOP_RAYS[square], by * BISHOP)):
            for ray in rays:
                for t in ray:
                    p = board[t]
                    if p:
                        if p == slider or p == queen:
                            return True
                        break
        return False

    def in_check(self) -> bool:
        return self.attacked(self.kings[self.side], -self.side)

    # ------------------------------------------------------------------ moves

    def pseudo_moves(self, noisy_only: bool = False) -> List[int]:
        """Moves that obey piece movement (the king may be left in check); with
        ``noisy_only`` just captures and promotions."""
        board, side, moves = self.board, self.side, []
        last_rank = SIZE - 1 if side > 0 else 0
        for frm in range(_N):
            piece = board[frm] * side
            if piece <= 0:
                continue
            if piece == PAWN:
                to = frm + SIZE * side
                promote = to // SIZE == last_rank
                if not board[to] and (promote or not noisy_only):
                    if promote:
                        moves.extend(encode(frm, to, p) for p in (QUEEN, ROOK, BISHOP, KNIGHT))
                    else:
                        moves.append(frm | (to << 5))
                for to in PAWN_ATTACKS[side > 0][frm]:
                    if board[to] * side < 0:
                        if promote:
                            moves.extend(encode(frm, to, p) for p in (QUEEN, ROOK, BISHOP, KNIGHT))
                        else:
                            moves.append(frm | (to << 5))
            elif piece == KNIGHT or piece == KING:
                for to in LEAPER_TARGETS[piece][frm]:
                    target = board[to] * side
                    if target < 0 or (target == 0 and not noisy_only):
                        moves.append(frm | (to << 5))
            else:
                for ray in SLIDER_RAYS[piece][frm]:
                    for to in ray:
                        target = board[to] * side
                        if target == 0:
                            if not noisy_only:
                                moves.append(frm | (to << 5))
                            continue
                        if target < 0:
                            moves.append(frm | (to << 5))
                        break
        return moves

    def _legal(self, moves: List[int]) -> List[int]:
        legal, side = [], self.side
        for move in moves:
            self.push(move)
            if not self.attacked(self.kings[side], -side):
                legal.append(move)
            self.pop()
        return legal

    def legal_moves(self) -> List[int]:
        return self._legal(self.pseudo_moves())

    def noisy_moves(self) -> List[int]:
        """Legal captures and promotions (quiescence search)."""
        return self._legal(self.pseudo_moves(noisy_only=True))

    def has_legal_move(self) -> bool:
        side = self.side
        for move in self.pseudo_moves():
            self.push(move)
            safe = not self.attacked(self.kings[side], -side)
            self.pop()
            if safe:
                return True
        return False

    def is_capture(self, move: int) -> bool:
        return self.board[(move >> 5) & 31] != 0

    def mvv_lva(self, move: int) -> int:
        """Most-valuable-victim / least-valuable-attacker order of a noisy move (0 for a
        quiet one): ``8 · victim + promotion − attacker`` with piece codes 1..6."""
        victim = abs(self.board[(move >> 5) & 31])
        promotion = move >> 10
        if not victim and not promotion:
            return 0
        return 8 * victim + 2 * promotion + 7 - abs(self.board[move & 31])

    def push(self, move: int) -> None:
        board, side = self.board, self.side
        frm, to, promotion = move & 31, (move >> 5) & 31, move >> 10
        piece, captured = board[frm], board[to]
        placed = promotion * side if promotion else piece
        self._undo.append((move, captured, self.halfmove_clock, self.key))
        self.history.append(self.key)
        key = self.key ^ ZOBRIST[piece + 6][frm] ^ ZOBRIST[captured + 6][to] ^ ZOBRIST[placed + 6][to] ^ ZOBRIST_BLACK
        board[frm], board[to] = 0, placed
        if piece == KING * side:
            self.kings[side] = to
        if captured:
            self.count -= 1
        self.halfmove_clock = 0 if (captured or piece == PAWN * side) else self.halfmove_clock + 1
        if side < 0:
            self.fullmove_number += 1
        self.side, self.key = -side, key

    def pop(self) -> int:
        move, captured, halfmove, key = self._undo.pop()
        self.history.pop()
        side = -self.side
        board = self.board
        frm, to, promotion = move & 31, (move >> 5) & 31, move >> 10
        piece = PAWN * side if promotion else board[to]
        board[frm], board[to] = piece, captured
        if piece == KING * side:
            self.kings[side] = frm
        if captured:
            self.count += 1
        if side < 0:
            self.fullmove_number -= 1
        self.side, self.halfmove_clock, self.key = side, halfmove, key
        return move

    # ------------------------------------------------------------------ draws and material

    def is_insufficient_material(self) -> bool:
        """OpenSpiel's rule, as the env: K v K; K + one knight or bishop v K; only kings
        and bishops, the bishops all on squares of one colour."""
        others = [(s, abs(p)) for s, p in enumerate(self.board) if p and abs(p) != KING]
        if len(others) <= 1 and all(kind in (KNIGHT, BISHOP) for _, kind in others):
            return True
        if all(kind == BISHOP for _, kind in others):
            colours = {(s % SIZE + s // SIZE) % 2 for s, _ in others}
            return len(colours) == 1
        return False

    def piece_count(self) -> int:
        return self.count

    def material(self) -> Tuple[str, str]:
        """(White's, Black's) pieces as letters, kings first then Q R B N P: ``("KQ", "K")``."""
        sides = []
        for sign in (1, -1):
            kinds = sorted((abs(p) for p in self.board if p * sign > 0), reverse=True)
            sides.append("".join(_LETTERS[k] for k in kinds))
        return sides[0], sides[1]

    # ------------------------------------------------------------------ chess.Move interop

    @staticmethod
    def to_chess(move: int) -> chess.Move:
        promotion = move >> 10
        return chess.Move(chess_square(move & 31), chess_square((move >> 5) & 31), promotion or None)

    def from_chess(self, move: chess.Move) -> int:
        """The legal move of a ``chess.Move``; ``chess.IllegalMoveError`` names it if illegal."""
        files = (chess.square_file(move.from_square), chess.square_file(move.to_square))
        ranks = (chess.square_rank(move.from_square), chess.square_rank(move.to_square))
        if max(files + ranks) < SIZE:
            code = encode(square_of(files[0], ranks[0]), square_of(files[1], ranks[1]), move.promotion or 0)
            if code in self.legal_moves():
                return code
        raise chess.IllegalMoveError(f"illegal move {move.uci()} in {self.fen()}")

    def uci(self, move: int) -> str:
        return self.to_chess(move).uci()

    def __repr__(self) -> str:
        return f"GardnerPosition({self.fen()!r})"
