"""Indices of RBC's actions for policies: 36 senses and 4,241 move requests (pass included).

- **Senses**: the 36 interior squares (``rules.INTERIOR_SQUARES``, b2..g7 rank by rank);
  an edge square's 3×3 window is part of an interior one's, so the other 28 add nothing.
  ``sense_index`` maps any square to the interior square whose window is the clipped one
  (the nearest interior square).
- **Moves**: ``from * 64 + to`` for every request that is not an under-promotion (queen
  promotions included, so the 4,096 from-to pairs), then ``4096 + kind * 48 + pair`` for
  the under-promotions (kind 0/1/2 = knight/bishop/rook; ``pair`` = one of the 16 squares
  a pawn promotes from, on rank 7 for White or rank 2 for Black, times the 3 directions
  left/straight/right), and ``PASS`` = 4,240 for no move (``None``, as reconchess spells it).
"""

from typing import Optional

import chess

from azdb_jax.rbc import rules

__all__ = ["NUM_MOVES", "NUM_SENSES", "PASS", "index_move", "move_index", "sense_index", "sense_square"]

NUM_SENSES = len(rules.INTERIOR_SQUARES)
_UNDER = (chess.KNIGHT, chess.BISHOP, chess.ROOK)
_PAIRS = 48  # 16 promoting squares x 3 directions
PASS = 64 * 64 + len(_UNDER) * _PAIRS
NUM_MOVES = PASS + 1
_SENSE_OF_SQUARE = {s: i for i, s in enumerate(rules.INTERIOR_SQUARES)}


def sense_index(square: int) -> int:
    """The index of the interior square whose window covers ``square``'s clipped window."""
    f = min(max(chess.square_file(square), 1), 6)
    r = min(max(chess.square_rank(square), 1), 6)
    return _SENSE_OF_SQUARE[chess.square(f, r)]


def sense_square(index: int) -> int:
    if not 0 <= index < NUM_SENSES:
        raise ValueError(f"sense index {index} outside 0..{NUM_SENSES - 1}")
    return rules.INTERIOR_SQUARES[index]


def _pair(from_square: int, to_square: int) -> int:
    rank = chess.square_rank(from_square)
    if rank not in (1, 6) or chess.square_rank(to_square) not in (0, 7):
        raise ValueError(f"{chess.square_name(from_square)}{chess.square_name(to_square)} is not a promotion")
    direction = chess.square_file(to_square) - chess.square_file(from_square)
    if direction not in (-1, 0, 1):
        raise ValueError(f"{chess.square_name(from_square)}{chess.square_name(to_square)} is not a pawn move")
    side = 0 if rank == 6 else 1  # White promotes from rank 7 (index 6), Black from rank 2
    return (side * 8 + chess.square_file(from_square)) * 3 + direction + 1


def move_index(move: Optional[chess.Move]) -> int:
    if move is None:
        return PASS
    if move.promotion in _UNDER:
        return 64 * 64 + _UNDER.index(move.promotion) * _PAIRS + _pair(move.from_square, move.to_square)
    return move.from_square * 64 + move.to_square


def index_move(index: int, board: Optional[chess.Board] = None) -> Optional[chess.Move]:
    """The request of ``index``; a pawn reaching the last rank is a queen promotion when
    ``board`` shows a pawn on the from-square (without a board: no promotion)."""
    if not 0 <= index < NUM_MOVES:
        raise ValueError(f"move index {index} outside 0..{NUM_MOVES - 1}")
    if index == PASS:
        return None
    if index < 64 * 64:
        from_square, to_square = divmod(index, 64)
        promotion = None
        if (board is not None and board.piece_type_at(from_square) == chess.PAWN
                and chess.square_rank(to_square) in (0, 7)):
            promotion = chess.QUEEN
        return chess.Move(from_square, to_square, promotion)
    kind, pair = divmod(index - 64 * 64, _PAIRS)
    square, direction = divmod(pair, 3)
    side, file = divmod(square, 8)
    from_square = chess.square(file, 6 if side == 0 else 1)
    to_square = chess.square(file + direction - 1, 7 if side == 0 else 0)
    return chess.Move(from_square, to_square, _UNDER[kind])
