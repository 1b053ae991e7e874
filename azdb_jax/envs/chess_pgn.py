"""Games and positions for people: pgx action ids -> PGN, states -> SVG (python-chess).

A game is a start position (FEN, python-chess board, or the standard start) and the
pgx action ids played from it. The result follows the environment's rules: checkmate,
stalemate, insufficient material, the fifty-move rule (half-move clock >= 100) and
threefold repetition end the game automatically, and so does the 512-ply cap.
"""

from typing import Mapping, Sequence

import chess
import chess.pgn
import chess.svg
import numpy as np

from azdb_jax.envs.chess import MAX_TERMINATION_STEPS, State
from azdb_jax.envs.chess_interop import action_squares, action_to_move, state_to_board

__all__ = ["termination_reason", "game_result", "replay_actions", "game_to_pgn", "pgn_string", "position_svg"]


def termination_reason(board: chess.Board, *, num_plies: int | None = None) -> str | None:
    """Why the environment ends the game in this position, or None if it goes on.

    One of "checkmate", "stalemate", "insufficient_material", "fifty_moves",
    "threefold_repetition", "ply_cap" (first that applies). ``board`` needs its move
    stack for repetitions; ``num_plies`` (plies since the environment's start) applies
    the 512-ply draw cap.
    """
    if board.is_checkmate():
        return "checkmate"
    if board.is_stalemate():
        return "stalemate"
    if board.is_insufficient_material():
        return "insufficient_material"
    if board.halfmove_clock >= 100:
        return "fifty_moves"
    if board.is_repetition(3):
        return "threefold_repetition"
    if num_plies is not None and num_plies >= MAX_TERMINATION_STEPS:
        return "ply_cap"
    return None


def game_result(board: chess.Board, *, num_plies: int | None = None) -> str:
    """PGN result of the final position under the environment's rules ('*' if not over)."""
    reason = termination_reason(board, num_plies=num_plies)
    if reason == "checkmate":
        return "0-1" if board.turn == chess.WHITE else "1-0"
    return "*" if reason is None else "1/2-1/2"


def _start_board(start: str | chess.Board | None) -> chess.Board:
    if start is None:
        return chess.Board()
    if isinstance(start, chess.Board):
        return start.copy(stack=False)
    try:
        return chess.Board(start)
    except ValueError as error:
        raise ValueError(f"invalid FEN {start!r}: {error}") from None


def replay_actions(
    actions: Sequence[int] | np.ndarray, start: str | chess.Board | None = None
) -> chess.Board:
    """python-chess board after playing pgx action ids from ``start`` (move stack kept).

    ValueError names the ply, the action and the position when an action is illegal.
    """
    board = _start_board(start)
    for ply, action in enumerate(np.asarray(actions, np.int64).reshape(-1)):
        try:
            move = action_to_move(int(action), board)
        except ValueError as error:
            raise ValueError(f"ply {ply + 1}: {error}") from None
        board.push(move)
    return board


def game_to_pgn(
    actions: Sequence[int] | np.ndarray,
    *,
    start: str | chess.Board | None = None,
    white: str | None = None,
    black: str | None = None,
    event: str | None = None,
    headers: Mapping[str, str] | None = None,
    result: str | None = None,
) -> chess.pgn.Game:
    """A `chess.pgn.Game` of pgx action ids played from ``start``.

    Args:
      actions: action ids in order, White's or Black's first as the start says.
      start: FEN or board of the first position; the standard start when None.
        Non-standard starts get the FEN and SetUp headers.
      white, black, event: the White, Black and Event headers ("?" when not given).
      headers: further or overriding PGN headers (Site, Round, Date, ...).
      result: "1-0", "0-1", "1/2-1/2" or "*"; by default `game_result` of the final
        position (e.g. pass the result of a game stopped by adjudication).
    """
    if result not in (None, "1-0", "0-1", "1/2-1/2", "*"):
        raise ValueError(f"result must be 1-0, 0-1, 1/2-1/2 or *, got {result!r}")
    board = replay_actions(actions, start)
    game = chess.pgn.Game.from_board(board)  # seven-tag roster, FEN/SetUp when needed
    game.headers["Result"] = result or game_result(board, num_plies=len(board.move_stack))
    named = {"White": white, "Black": black, "Event": event}
    for name, value in {**{k: v for k, v in named.items() if v is not None}, **(headers or {})}.items():
        game.headers[name] = str(value)
    return game


def pgn_string(actions: Sequence[int] | np.ndarray, **kwargs) -> str:
    """PGN text of `game_to_pgn` (same arguments)."""
    return str(game_to_pgn(actions, **kwargs))


def position_svg(
    position: State | chess.Board,
    *,
    last_action: int | None = None,
    size: int = 360,
    orientation: bool = chess.WHITE,
) -> str:
    """SVG picture of a single state or board, e.g. for ``IPython.display.SVG``.

    ``last_action`` is the pgx action id that led to this position (played by the other
    side); its squares are highlighted. A king in check is marked.
    """
    board = position if isinstance(position, chess.Board) else state_to_board(position)
    last_move = None
    if last_action is not None:
        last_move = chess.Move(*action_squares(last_action, not board.turn))  # the other side moved
    check = board.king(board.turn) if board.is_check() else None
    return chess.svg.board(board, lastmove=last_move, check=check, size=size, orientation=orientation)
