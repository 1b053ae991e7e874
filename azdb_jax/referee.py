"""One game between two host-side players on a python-chess board, refereed.

The library's single game loop for players that choose a move on a host board: the
classical searchers and the engines of the strength ladder
(``classical.matches.play_host_match``), two UCI engines under clocks
(``uci.gauntlet.play_game``, whose players keep the clocks and raise ``Fault``), and the
engine games that scripts learn from or mine positions from. Network teams play each
other batched on the device (``arena.play_games``; ``evaluation.matches`` for the match
layer above both).

A player is ``player(board) -> chess.Move`` for the side to move; ``board`` holds the
game's move stack and must not be changed. The referee asks the side to move until the
game ends by the game's rules — on ``chess.Board`` checkmate, stalemate, insufficient
material, the 75-move rule, fivefold repetition, and the fifty-move rule and threefold
repetition as automatic draws (as the project's chess env has them); on ``GardnerBoard``
the env's own rules — or ``max_plies`` plies have been played, or a player faults: it
raises ``Fault`` (a lost clock, a crashed engine) or returns a move that is not legal
(or None). A fault loses the game for the side that made it.
"""

import dataclasses
from typing import Any, Callable, Mapping, Optional, Tuple

import chess

__all__ = ["Fault", "HostGame", "Player", "ended", "play_host_game", "UNFINISHED"]

Player = Callable[[Any], Optional[chess.Move]]
UNFINISHED = "max_plies"  # the termination of a game stopped at max_plies (result "*")


class Fault(Exception):
    """Raised by a player that cannot move: ``kind`` names why ("time", "crash", "illegal", ...)."""

    def __init__(self, kind: str, message: str = ""):
        super().__init__(message or kind)
        self.kind = kind


@dataclasses.dataclass
class HostGame:
    """How a refereed game ended; the moves are ``board.move_stack``."""

    board: Any  # the final board (chess.Board or GardnerBoard), the game on its move stack
    result: str  # "1-0", "0-1", "1/2-1/2", or "*" when stopped at max_plies
    termination: str  # the rules' ending (checkmate, stalemate, ...), a fault's kind, or UNFINISHED
    faulty: Optional[bool] = None  # the colour that faulted (chess.WHITE / chess.BLACK), or None
    message: str = ""  # what the fault said

    @property
    def finished(self) -> bool:
        """The game ended by the rules or by a fault (not stopped at max_plies)."""
        return self.termination != UNFINISHED

    @property
    def white_score(self) -> float:
        """+1 White won, -1 Black won, 0 drawn or unfinished."""
        return {"1-0": 1.0, "0-1": -1.0}.get(self.result, 0.0)


def ended(board) -> Optional[Tuple[str, str]]:
    """(result, termination) when the game on ``board`` is over by the rules, else None."""
    if isinstance(board, chess.Board):
        outcome = board.outcome(claim_draw=True)
        return None if outcome is None else (outcome.result(), outcome.termination.name.lower())
    return (board.result(), board.termination()) if board.is_game_over() else None


def play_host_game(board, players: Mapping[bool, Player], *, max_plies: int,
                   on_move: Optional[Callable[[Any, chess.Move], None]] = None) -> HostGame:
    """Plays on ``board`` (changed in place) until the game ends, a player faults or
    ``max_plies`` more plies have been played.

    Args:
      board: the start, with the side to move; moves already on its stack stay.
      players: the player of each colour, ``{chess.WHITE: ..., chess.BLACK: ...}``.
      max_plies: plies this call plays at most (>= 0).
      on_move: called with the board and each legal move just before the move is pushed.

    Returns:
      ``HostGame``: a fault's result is a loss for the side that made it.
    """
    if max_plies < 0:
        raise ValueError(f"max_plies must be >= 0, got {max_plies}")
    for plies in range(max_plies + 1):
        over = ended(board)
        if over is not None:
            return HostGame(board, *over)
        if plies == max_plies:
            break
        mover = board.turn
        loss = "0-1" if mover == chess.WHITE else "1-0"
        try:
            move = players[mover](board)
        except Fault as fault:
            return HostGame(board, loss, fault.kind, mover, str(fault))
        if move is None or not board.is_legal(move):
            return HostGame(board, loss, "illegal", mover, f"{move} is not legal in {board.fen()}")
        if on_move is not None:
            on_move(board, move)
        board.push(move)
    return HostGame(board, "*", UNFINISHED)
