"""Host-side players: refereed games between two of them, and any of them as an arena policy.

A host player chooses a move on a python-chess board (``chess.Board`` or
``GardnerBoard``). Its games against an agent on the device — a network team, a fixed
opponent — are the arena's (``arena.play_games``, the library's game loop for two
agents): ``host_policy`` makes the player a policy there, answering through a host
callback on a board that replays each game's moves (``evaluation.matches.play_engine_match``).

Games between two host players are refereed here, on the boards themselves
(``play_host_game``): the classical searchers and the engines of the strength ladder
(``classical.matches.play_host_match``), two UCI engines under clocks
(``uci.gauntlet.play_game``, whose players keep the clocks and raise ``Fault``), and the
engine games that scripts learn from or mine positions from. They keep a loop of their
own because what they need is the boards': python-chess's rules and endings, move
stacks from the start, clocks and faults scored as losses, one game at a time — none of
which the arena's pgx states carry.

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
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

__all__ = ["Fault", "HostGame", "Player", "ended", "host_policy", "play_host_game", "UNFINISHED"]

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


def host_policy(env, player: Player, boards: Sequence[Any]):
    """``player`` as an arena policy (``arena.play_games``): a host callback per ply.

    The policy's ``params`` are, per game of the batch, the index into ``boards`` (the
    match's start positions, as python-chess boards) of the game's start, −1 for a row
    the player skips (padding); keys are ignored. At each ply it is handed the batch's
    states and every game's moves so far (its batched form reads the moves,
    ``arena.per_game_policy``); for each game still running, in row order, it asks the
    player for a move on a board that is the game's start with the game's moves pushed
    (kept from ply to ply: the same board object, its stack growing, as in a refereed
    game), and answers the move's action. The calls are ordered, so the player sees the
    games in the order of the plies, each row's in turn.

    A player's exception, or a move that is not legal on the board (then a ValueError
    naming the player, the move and the FEN), stops the compiled games; it is kept as
    ``policy.fault`` for the caller to raise (``evaluation.matches.play_match`` does).

    Args:
      env: the game (one with boards: ``games.board_game``).
      player: ``board -> chess.Move`` for the side to move, with a ``name`` or not.
      boards: the start positions the ``params`` index.
    """
    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    game = games.board_game(env)
    starts = [board.copy(stack=False) for board in boards]
    name = str(getattr(player, "name", type(player).__name__))
    games_so_far: Dict[int, Tuple[int, list, Any]] = {}  # row -> (start index, actions pushed, board)

    def board_of(row: int, start: int, moves: np.ndarray):
        played = [int(a) for a in moves[:int(np.sum(moves >= 0))]]
        cached = games_so_far.get(row)
        if cached is None or cached[0] != start or cached[1] != played[:len(cached[1])]:
            cached = (start, [], starts[start].copy(stack=False))
        _, pushed, board = cached
        for action in played[len(pushed):]:
            board.push(chess.Move.from_uci(game.action_to_uci(action, board)))
            pushed.append(action)
        games_so_far[row] = cached
        return board

    def host(start_index, done, moves) -> np.ndarray:
        start_index, done, moves = np.asarray(start_index), np.asarray(done), np.asarray(moves)
        actions = np.zeros(done.shape, np.int32)
        for row in np.flatnonzero(~done & (start_index >= 0)):
            board = board_of(int(row), int(start_index[row]), moves[row])
            try:
                move = player(board)
                if move is None or move not in board.legal_moves:
                    raise ValueError(f"{name} played an illegal move {move} in {board.fen()}")
            except Exception as error:  # pylint: disable=broad-except
                policy.fault = error
                raise
            actions[row] = game.move_to_action(move, board)
        return actions

    def rows(params, keys, state, moves):
        del keys
        done = state.terminated | state.truncated
        shape = jax.ShapeDtypeStruct(done.shape, jnp.int32)
        return io_callback(host, shape, jnp.asarray(params, jnp.int32), done, moves, ordered=True)

    def policy(params, rng_key, state):
        raise TypeError(f"{name} is a host player: the arena plays it in batches (host_policy's rows)")

    rows.reads_moves = True
    # what the arena and play_match read of a host player (policy.fault: its last fault)
    vars(policy).update(rows=rows, fault=None, player=player, name=name, starts_as_params=True)
    return policy
