"""One interface to the board games the evaluation code handles by position: chess and Gardner chess.

Puzzle solvers and engine matches keep host-side boards (``chess.Board`` for chess,
``GardnerBoard`` for Gardner chess, which offers the same part of the API) next to
batched pgx states. `BoardGame` bundles what they need per game, so they have one code
path for both: a board from a FEN, the env exact for a set of boards, stacked states,
and action id <-> UCI conversions.

A game's record names its `BoardGame` (``Game.board``); ``azdb_jax.games.board_game``
finds it for an env:

>>> game = games.board_game("gardner_chess")   # GARDNER
>>> board = game.new_board(None)                # the start position
>>> states = game.states_from_boards([board], max_pieces=16)
"""

import dataclasses
from typing import Any, Callable, Optional, Sequence

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax.envs import chess_interop, gardner_interop
from azdb_jax.envs.chess import DEFAULT_MAX_PIECES, Chess
from azdb_jax.envs.gardner import GardnerChess
from azdb_jax.envs.gardner_board import GardnerBoard

__all__ = ["BoardGame", "CHESS", "GARDNER"]


@dataclasses.dataclass(frozen=True)
class BoardGame:
    """Host-side conversions of one board game.

    Attributes:
      env_id: the env's id (``chess`` or ``gardner_chess``).
      new_board: ``fen -> board``; None gives the start position.
      required_max_pieces: ``boards -> int``, the chess move generator the boards need
        (``chess_interop.required_max_pieces``); Gardner chess has one generator and
        answers the chess default.
      make_env: ``max_pieces -> env``.
      states_from_boards: ``(boards, max_pieces) -> State [B]`` (no history: a puzzle's view).
      action_to_uci: ``(action id, board) -> UCI`` of a legal action.
      move_to_action: ``(chess.Move, board) -> action id`` of a legal move.
      state_move_to_action: ``(chess.Move, state, fen) -> action id`` of a legal move in
        one host-side (NumPy) state whose FEN is ``fen``, without stepping a board;
        ValueError naming the FEN when the move is not among the state's legal actions.
      state_to_fen: ``state -> FEN`` of one (unbatched) state.
      board_size: squares per side (8, 5); an action is ``origin square * planes + plane``
        with ``planes = num_actions / board_size²``, and φ starts with 12 piece planes of
        ``board_size²`` squares each (``azdb_jax.games.planes``).
      colour_to_move: ``state -> 0 (White) or 1 (Black)``, one state or a batch.
      pgn: python-chess replays the game's moves, so matches are written as PGN
        (``envs.chess_pgn``); otherwise as plain records.
      reference_engine: the UCI engine that judges the game's positions and plays it at
        known strengths: ``"stockfish"`` or ``"fairy_stockfish"`` (its ``UCI_Variant`` is
        the game record's ``uci_variant``).
    """

    env_id: str
    new_board: Callable[[Optional[str]], Any]
    required_max_pieces: Callable[[Sequence[Any]], int]
    make_env: Callable[[int], pgx.core.Env]
    states_from_boards: Callable[..., pgx.core.State]
    action_to_uci: Callable[[int, Any], str]
    move_to_action: Callable[[chess.Move, Any], int]
    state_move_to_action: Callable[[chess.Move, pgx.core.State, str], int]
    state_to_fen: Callable[[pgx.core.State], str]
    board_size: int
    colour_to_move: Callable[[pgx.core.State], jax.Array]
    pgn: bool
    reference_engine: str


def _gardner_state_action(move: chess.Move, state: pgx.core.State, fen: str) -> int:
    """The action of a legal ``move`` among a host-side Gardner state's legal actions."""
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    names = gardner_interop.decode_actions(legal, state)
    if move.uci() not in names:
        raise ValueError(f"{move.uci()} is not a legal action of {fen}")
    return int(legal[names.index(move.uci())])


CHESS = BoardGame(
    env_id="chess",
    new_board=lambda fen: chess.Board() if fen is None else chess.Board(fen),
    required_max_pieces=chess_interop.required_max_pieces,
    make_env=lambda max_pieces: Chess(max_pieces=max_pieces),
    states_from_boards=lambda boards, max_pieces: chess_interop.states_from_boards(boards, max_pieces=max_pieces),
    action_to_uci=chess_interop.action_to_uci,
    move_to_action=chess_interop.move_to_action,
    state_move_to_action=lambda move, state, fen: int(chess_interop.move_to_action(move, chess.Board(fen))),
    state_to_fen=chess_interop.state_to_fen,
    board_size=8,
    colour_to_move=lambda state: state._x.color.astype(jnp.int32),  # pylint: disable=protected-access
    pgn=True,
    reference_engine="stockfish",
)

GARDNER = BoardGame(
    env_id="gardner_chess",
    new_board=GardnerBoard,
    required_max_pieces=lambda boards: DEFAULT_MAX_PIECES,
    make_env=lambda max_pieces: GardnerChess(),
    states_from_boards=lambda boards, max_pieces: gardner_interop.states_from_fens([b.fen() for b in boards]),
    action_to_uci=lambda action, board: gardner_interop.action_to_uci(action, board.state),
    move_to_action=lambda move, board: gardner_interop.uci_to_action(move.uci(), board.state),
    state_move_to_action=lambda move, state, fen: _gardner_state_action(move, state, fen),
    state_to_fen=gardner_interop.state_to_fen,
    board_size=5,
    colour_to_move=lambda state: state._turn.astype(jnp.int32),  # pylint: disable=protected-access
    pgn=False,
    reference_engine="fairy_stockfish",
)
