"""`GardnerBoard`: a Gardner position with its move stack, spoken to like a ``chess.Board``.

python-chess has no 5x5 board. The evaluation code (puzzle loaders and runners, solvers,
engine matches) talks to positions through a small part of ``chess.Board``'s API: FENs,
UCI moves as ``chess.Move`` (Gardner's squares a1..e5 are chess squares), ``push``,
``legal_moves``, ``is_checkmate`` and friends. `GardnerBoard` offers that part for
Gardner chess, so the same code scores chess and Gardner positions. It also offers what
python-chess's UCI client (``chess.engine``) reads of a board — ``uci_variant``
(``gardner``, Fairy-Stockfish's name), ``chess960``, ``root``, ``copy`` — so that client
plays Gardner games against any engine that speaks the variant.

The rules are the env's own: every position is a pgx state of
``azdb_jax.envs.gardner.GardnerChess`` (cross-checked against Fairy-Stockfish), stepped
by one jitted ``env.step`` per move (states kept on the host), so repetitions count from the root of the board's
move stack. Host-side and meant for puzzles and engine games (a few milliseconds a
move), not for training loops.

>>> board = GardnerBoard()
>>> board.push_uci("e2e3")
>>> board.fen()
'rnbqk/ppppp/4P/PPPP1/RNBQK b - - 0 1'
"""

import functools
from typing import Dict, List, Optional

import chess
import jax
import numpy as np
from pgx.gardner_chess import has_insufficient_pieces

from azdb_jax.envs import gardner_interop
from azdb_jax.envs.gardner import GardnerChess, State, in_check, position_legal_mask

__all__ = ["GardnerBoard", "STARTING_FEN"]

STARTING_FEN = gardner_interop.STARTING_FEN


def _status(state: State):
    repeats = (state._hash_history == state._zobrist_hash).all(axis=1).sum()
    return position_legal_mask(state), in_check(state), has_insufficient_pieces(state), repeats


@functools.lru_cache(maxsize=None)
def _status_fn():
    return jax.jit(_status)


@functools.lru_cache(maxsize=None)
def _advance_fn():
    """One jitted call per move: the next state and what the board needs to know about it."""
    step = GardnerChess().step

    def advance(state: State, action):
        after = step(state, action)
        return after, _status(after)

    return jax.jit(advance)


class _Status:
    """What a board needs to know about its current state, computed once (host values)."""

    def __init__(self, state: State, status):
        mask, check, insufficient, repeats = status
        self.moves = [chess.Move.from_uci(u) for u in gardner_interop.decode_actions(np.flatnonzero(mask), state)]
        self.uci = {m.uci(): m for m in self.moves}
        self.check = bool(check)
        self.insufficient = bool(insufficient)
        self.repetitions = int(repeats)  # times the position has stood on the board since the root


class GardnerBoard:
    """A Gardner chess position and the moves that led to it from ``fen``.

    Args:
      fen: the root position (default: the start); ValueError names a bad FEN and why.
    """

    uci_variant = "gardner"  # what python-chess's engine client sends as UCI_Variant
    chess960 = False

    def __init__(self, fen: Optional[str] = STARTING_FEN):
        fen = STARTING_FEN if fen is None else fen
        self._init_from(gardner_interop.state_from_fen(fen))

    def _init_from(self, state: State) -> None:
        # States live on the host (numpy leaves): reading a field costs no device transfer.
        state = jax.device_get(state)
        self._states: List[State] = [state]
        self._status: List[_Status] = [_Status(state, jax.device_get(_status_fn()(state)))]
        self.move_stack: List[chess.Move] = []

    # ------------------------------------------------------------- the position

    @property
    def state(self) -> State:
        """The pgx state of the current position (history since the root)."""
        return self._states[-1]

    @property
    def turn(self) -> chess.Color:
        """``chess.WHITE`` (True) or ``chess.BLACK``."""
        return int(self.state._turn) == 0

    @property
    def halfmove_clock(self) -> int:
        return int(self.state._halfmove_count)

    @property
    def fullmove_number(self) -> int:
        return int(self.state._fullmove_count)

    def ply(self) -> int:
        """Plies since the game's start, from the move number (as ``chess.Board.ply``)."""
        return 2 * (self.fullmove_number - 1) + (self.turn == chess.BLACK)

    def fen(self, **_) -> str:
        """The FEN (keyword arguments of ``chess.Board.fen`` are accepted and change nothing:
        Gardner chess has no castling and no en passant)."""
        return gardner_interop.state_to_fen(self.state)

    def root(self) -> "GardnerBoard":
        """A new board at the root position, without moves."""
        board = GardnerBoard.__new__(GardnerBoard)
        board._init_from(self._states[0])
        return board

    def copy(self, *, stack: bool = True) -> "GardnerBoard":
        """A copy; ``stack=False`` keeps only the current position (no moves, no history)."""
        if not stack:
            return GardnerBoard(self.fen())
        board = GardnerBoard.__new__(GardnerBoard)
        board._states, board._status = list(self._states), list(self._status)
        board.move_stack = list(self.move_stack)
        return board

    # ------------------------------------------------------------- moves

    @property
    def legal_moves(self) -> List[chess.Move]:
        """The position's legal moves (also when a draw rule has ended the game)."""
        return list(self._status[-1].moves)

    def is_legal(self, move: chess.Move) -> bool:
        return move.uci() in self._status[-1].uci

    def parse_uci(self, uci: str) -> chess.Move:
        """The legal move of a UCI string; ``chess.InvalidMoveError`` / ``chess.IllegalMoveError`` if not."""
        try:
            move = chess.Move.from_uci(uci)
        except chess.InvalidMoveError:
            raise chess.InvalidMoveError(f"invalid uci: {uci!r}") from None
        squares = (move.from_square, move.to_square)
        if move and any(chess.square_file(s) > 4 or chess.square_rank(s) > 4 for s in squares):
            raise chess.InvalidMoveError(f"invalid uci: {uci!r} leaves the 5x5 board")
        if move.uci() not in self._status[-1].uci:
            raise chess.IllegalMoveError(f"illegal uci: {uci!r} in {self.fen()}")
        return move

    def push(self, move: chess.Move) -> None:
        """Plays a legal move; ValueError if it is illegal or the game is over."""
        if not self.is_legal(move):
            raise chess.IllegalMoveError(f"illegal move {move.uci()} in {self.fen()}")
        if self.is_game_over():
            raise ValueError(f"the game is over ({self.termination()}) in {self.fen()}: no move can be pushed")
        action = gardner_interop.uci_to_action(move.uci(), self.state)
        state, status = jax.device_get(_advance_fn()(self.state, action))
        self._states.append(state)
        self._status.append(_Status(state, status))
        self.move_stack.append(move)

    def piece_map(self) -> Dict[chess.Square, chess.Piece]:
        """The pieces by square (Gardner's squares are chess squares a1..e5)."""
        pieces = {}
        for row, text in enumerate(self.fen().split()[0].split("/")):
            file = 0
            for char in text:
                if char.isdigit():
                    file += int(char)
                else:
                    pieces[chess.square(file, 4 - row)] = chess.Piece.from_symbol(char)
                    file += 1
        return pieces

    def san(self, move: chess.Move) -> str:
        """Standard algebraic notation of a legal move (``Nc3``, ``bxc4``, ``a5=Q+``, ``Qxe5#``):
        the piece letter (none for pawns), the file/rank that tells apart two pieces of the
        same kind reaching the square, ``x`` for a capture, the promotion, ``+``/``#``."""
        if not self.is_legal(move):
            raise chess.IllegalMoveError(f"illegal move {move.uci()} in {self.fen()}")
        pieces = self.piece_map()
        kind = pieces[move.from_square].piece_type
        capture = "x" if move.to_square in pieces else ""
        target = chess.square_name(move.to_square)
        if kind == chess.PAWN:
            text = (chess.square_name(move.from_square)[0] + capture if capture else "") + target
        else:
            rivals = [m.from_square for m in self.legal_moves
                      if m.to_square == move.to_square and m.from_square != move.from_square
                      and pieces[m.from_square].piece_type == kind]
            origin = chess.square_name(move.from_square)
            if not rivals:
                which = ""
            elif all(chess.square_file(r) != chess.square_file(move.from_square) for r in rivals):
                which = origin[0]
            elif all(chess.square_rank(r) != chess.square_rank(move.from_square) for r in rivals):
                which = origin[1]
            else:
                which = origin
            text = chess.piece_symbol(kind).upper() + which + capture + target
        if move.promotion:
            text += "=" + chess.piece_symbol(move.promotion).upper()
        after = self.copy()
        after.push(move)
        return text + ("#" if after.is_checkmate() else "+" if after.is_check() else "")

    def push_uci(self, uci: str) -> chess.Move:
        move = self.parse_uci(uci)
        self.push(move)
        return move

    def pop(self) -> chess.Move:
        if not self.move_stack:
            raise IndexError("pop from a board without moves")
        self._states.pop()
        self._status.pop()
        return self.move_stack.pop()

    # ------------------------------------------------------------- game end (the env's rules)

    def is_check(self) -> bool:
        return self._status[-1].check

    def is_checkmate(self) -> bool:
        return self.is_check() and not self._status[-1].moves

    def is_stalemate(self) -> bool:
        return not self.is_check() and not self._status[-1].moves

    def is_insufficient_material(self) -> bool:
        return self._status[-1].insufficient

    def is_fifty_moves(self) -> bool:
        return self.halfmove_clock >= 100

    def is_repetition(self, count: int = 3) -> bool:
        """Whether the position has stood on the board ``count`` times since the root."""
        return self._status[-1].repetitions >= count

    def is_game_over(self) -> bool:
        """The env's verdict: mate, stalemate, insufficient material, fifty moves, threefold, 256 plies."""
        return bool(self.state.terminated)

    def termination(self) -> Optional[str]:
        """Why the game is over (``checkmate``, ``stalemate``, ``insufficient_material``,
        ``fifty_moves``, ``threefold_repetition``, ``move_cap``), or None."""
        if not self.is_game_over():
            return None
        checks = (("checkmate", self.is_checkmate()), ("stalemate", self.is_stalemate()),
                  ("insufficient_material", self.is_insufficient_material()),
                  ("fifty_moves", self.is_fifty_moves()), ("threefold_repetition", self.is_repetition()),
                  ("move_cap", True))
        return next((name for name, flag in checks if flag), None)

    def result(self) -> str:
        """``1-0``, ``0-1``, ``1/2-1/2`` or ``*`` (game not over)."""
        if not self.is_game_over():
            return "*"
        if self.is_checkmate():
            return "0-1" if self.turn == chess.WHITE else "1-0"
        return "1/2-1/2"

    def __str__(self) -> str:
        return gardner_interop.board_text(self.state)

    def __repr__(self) -> str:
        return f"GardnerBoard({self.fen()!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, GardnerBoard) and self.fen() == other.fen()

    __hash__ = None  # mutable, like chess.Board
