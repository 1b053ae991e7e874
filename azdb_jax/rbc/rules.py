"""The rules of Reconnaissance Blind Chess on python-chess boards, as ``reconchess`` plays them.

RBC is chess where a player sees only its own pieces, senses a 3x3 window before each
move and learns the result of its own move. Its move rules (reconchess's ``LocalGame``,
``reconchess.utilities``) differ from chess:

- a player may request any move its own pieces allow on a board without the opponent's
  pieces (``move_actions``: pseudo-legal moves there, plus every pawn capture, even onto
  an empty square), or pass (``None``);
- the game then plays the *taken* move ``revise_move``: a pseudo-legal move stays; a
  slide (pawn push, bishop, rook, queen) that runs into a piece stops on the last square
  it can reach (capturing an opponent piece there); a castle needs only the rights and
  empty squares between king and rook (it may start in, pass through or end in check);
  a blocked castle, a blocked single pawn push or a diagonal pawn move onto an empty
  square becomes a pass;
- there is no check, checkmate or stalemate: moving into check is allowed, and the game
  ends when a king is captured (or on the clock, or after 100 reversible plies).

The functions here reproduce that with reconchess's own helpers where they exist, so a
tracked board and the game's board take the same move. ``taken_moves`` enumerates every
move the side to move can end up playing (the opponent's possible moves, what possible-
state tracking needs) without going through every request; ``tests/test_rbc_rules.py``
checks it against the brute force over ``reconchess.utilities.move_actions``, and the
taken moves against ``LocalGame`` itself. ``piece_bitboards`` / ``unpack_bitboards`` read a
list of boards as arrays (sensing, synopses).
"""

from typing import Iterable, List, Optional, Sequence, Tuple

import chess
import numpy as np

try:
    from reconchess import utilities
except ImportError as e:  # an extra, not a core dependency
    raise ImportError(f"azdb_jax.rbc needs reconchess: pip install -e '.[rbc]' ({e})") from e

__all__ = ["BoardKey", "board_key", "taken_move", "is_castle", "capture_square", "taken_moves", "touched_squares",
           "play", "sense_window", "sense_matches", "move_actions", "INTERIOR_SQUARES", "piece_bitboards",
           "unpack_bitboards"]

# A board's identity for tracking: pieces, side to move, castling rights and the en-passant
# square only when a pawn could take there (python-chess remembers it after every double
# push; a square no pawn can use changes nothing that follows).
BoardKey = Tuple[int, int, int, int, int, int, int, bool, int, Optional[int]]

# Sensing centred on an edge square shows part of the window of the interior square next
# to it, so the 36 interior squares (b2..g7) dominate the other 28 (the paper's §5.4
# prunes dominated sense actions the same way).
INTERIOR_SQUARES = tuple(chess.square(f, r) for r in range(1, 7) for f in range(1, 7))


def board_key(board: chess.Board) -> BoardKey:
    ep = board.ep_square if board.ep_square is not None and board.has_pseudo_legal_en_passant() else None
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[chess.WHITE], board.turn, board.clean_castling_rights(), ep)


def move_actions(board: chess.Board) -> List[chess.Move]:
    """The moves the side to move may request (reconchess's ``move_actions``)."""
    return utilities.move_actions(board)


def taken_move(board: chess.Board, requested: Optional[chess.Move]) -> Optional[chess.Move]:
    """The move the game plays for ``requested`` on ``board`` (None: a pass), as ``LocalGame.move``:
    a pawn reaching the last rank without a promotion piece becomes a queen, then
    ``reconchess.utilities.revise_move``."""
    if requested is None:
        return None
    if board.piece_at(requested.from_square) is None:  # only on approximate boards (tracker rebuilds)
        return None
    return utilities.revise_move(board, utilities.add_pawn_queen_promotion(board, requested))


def capture_square(board: chess.Board, move: Optional[chess.Move]) -> Optional[int]:
    """The square of the piece ``move`` captures on ``board`` (the pawn's square for en
    passant), or None (reconchess's ``capture_square_of_move``)."""
    return utilities.capture_square_of_move(board, move)


def is_castle(board: chess.Board, move: chess.Move) -> bool:
    """Whether ``move`` is a castle RBC allows on ``board`` (reconchess's ``is_psuedo_legal_castle``)."""
    return utilities.is_psuedo_legal_castle(board, move)


def _castles(board: chess.Board) -> Iterable[chess.Move]:
    rank = 0 if board.turn == chess.WHITE else 7
    king = chess.square(4, rank)
    for to_file in (6, 2):
        move = chess.Move(king, chess.square(to_file, rank))
        if is_castle(board, move):
            yield move


def taken_moves(board: chess.Board) -> List[Optional[chess.Move]]:
    """Every move the side to move can end up playing, each once: the pass (None), the
    pseudo-legal moves other than castles, and the castles RBC allows (rights and empty
    squares between king and rook; attacked squares do not matter).

    This is ``{taken_move(board, m) for m in move_actions(board)} ∪ {None}``: every
    pseudo-legal move is a request that stays as it is, and a revised request is always
    pseudo-legal, an RBC castle or a pass."""
    moves: List[Optional[chess.Move]] = [None]
    for move in board.generate_pseudo_legal_moves():
        if not board.is_castling(move):
            moves.append(move)
    moves.extend(_castles(board))
    return moves


def touched_squares(board: chess.Board, move: Optional[chess.Move]) -> int:
    """A superset of the squares whose piece ``move`` changes (a bitboard; 0 for a pass):
    its from and to squares, a king's rook squares (a, d, f, h of its rank) and the squares
    beside an en-passant target."""
    if move is None:
        return 0
    touched = chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]
    if board.kings & chess.BB_SQUARES[move.from_square]:
        rank = chess.square_rank(move.from_square)
        touched |= sum(chess.BB_SQUARES[chess.square(f, rank)] for f in (0, 3, 5, 7))
    elif board.pawns & chess.BB_SQUARES[move.from_square] and move.to_square == board.ep_square:
        for square in (move.to_square - 8, move.to_square + 8):
            if 0 <= square < 64:
                touched |= chess.BB_SQUARES[square]
    return touched


def play(board: chess.Board, move: Optional[chess.Move]) -> chess.Board:
    """A copy of ``board`` after ``move`` (None: a pass, python-chess's null move, as LocalGame)."""
    child = board.copy(stack=False)
    child.push(move if move is not None else chess.Move.null())
    return child


def sense_window(square: int) -> List[int]:
    """The squares a sense centred on ``square`` shows, in reconchess's order (rank down, file up)."""
    rank, file = chess.square_rank(square), chess.square_file(square)
    return [chess.square(file + df, rank + dr) for dr in (1, 0, -1) for df in (-1, 0, 1)
            if 0 <= rank + dr <= 7 and 0 <= file + df <= 7]


def sense_matches(board: chess.Board, result: Sequence[Tuple[int, Optional[chess.Piece]]]) -> bool:
    """Whether ``board`` shows the sensed pieces (``None``: an empty square) on every sensed square."""
    return all(board.piece_at(square) == piece for square, piece in result)


def piece_bitboards(boards: Sequence[chess.Board]) -> np.ndarray:
    """``[N, 12]`` uint64: the squares of White's P N B R Q K, then Black's, of each board."""
    rows = []
    for board in boards:
        black, white = board.occupied_co  # indexed by colour: [BLACK, WHITE]
        kinds = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
        rows.append([k & white for k in kinds] + [k & black for k in kinds])
    return np.asarray(rows, dtype=np.uint64).reshape(len(boards), 12)


def unpack_bitboards(planes: np.ndarray) -> np.ndarray:
    """``[..., 64]`` bool from ``[...]`` uint64 bitboards (square index = python-chess's, a1 = 0)."""
    planes = np.ascontiguousarray(planes, dtype="<u8")
    bits = np.unpackbits(planes.view(np.uint8).reshape(*planes.shape, 8), axis=-1, bitorder="little")
    return bits.astype(bool)
