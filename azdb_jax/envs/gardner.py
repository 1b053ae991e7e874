"""Gardner's minichess (5x5): pgx's ``gardner_chess`` with its hash traps fixed.

`GardnerChess` is a drop-in replacement for ``pgx.make("gardner_chess")``: same `State`
type, same actions (25 squares x 49 planes from the mover's side: 9 underpromotion
planes, then 32 queen-like and 8 knight planes), same observation, same
``init``/``step`` contract. The rules were checked move by move against Fairy-Stockfish
(``UCI_Variant gardner``, ``experiments/gardner_crosscheck.py``); they are chess on a 5x5
board with no pawn double step, no en passant and no castling, promotion on the last
rank to a queen, rook, bishop or knight.

What differs from pgx 2.6, and why:

1. The Zobrist hash of the initial position. pgx seeds ``init`` with a constant hash that
   no longer matches its own (``jax.random``-generated) tables under current JAX, as for
   pgx chess (SPEC §4). pgx updates the hash incrementally, so every later hash of the
   game carries the same error and repetitions are still found; but the hashes differ
   from those of the same positions built from a FEN. `_init` stores the true hash.
2. The hash after a queen promotion. pgx's incremental update puts a *pawn* on the
   promotion square (it handles underpromotions only), so a game's hashes again carry a
   constant error after the promotion. `step_state` hashes each new position from
   scratch (25 squares), so a state's hash is always ``zobrist_hash(state)``.

Kept from pgx on purpose (each has a test in ``tests/test_gardner_interop.py``; a
UCI engine does not adjudicate these, Fairy-Stockfish plays on or scores them in search):

- threefold repetition and the fifty-move rule (100 plies without a capture or pawn
  move) end the game as a draw automatically, with no claim; a checkmate delivered on
  the 100th ply still wins;
- insufficient material ends the game as a draw (OpenSpiel's rule: K v K, K + minor v
  K, kings and bishops all on one colour), where Fairy-Stockfish plays on;
- a game is a draw after 256 plies (``MAX_TERMINATION_STEPS``) counted from ``init``
  or from the loaded position, an AlphaZero-style cap that Fairy-Stockfish does not have;
- stalemate is a draw, checkmate a win (as in Fairy-Stockfish).
"""

import jax
from pgx import gardner_chess as pgx_gardner
from pgx.gardner_chess import (  # pylint: disable=protected-access
    MAX_TERMINATION_STEPS,
    Action,
    State,
    _apply_move,
    _check_termination,
    _flip,
    _is_checking,
    _legal_action_mask,
    _update_history,
    _zobrist_hash,
)

__all__ = [
    "GardnerChess",
    "State",
    "NUM_ACTIONS",
    "MAX_TERMINATION_STEPS",
    "zobrist_hash",
    "position_legal_mask",
    "in_check",
    "step_state",
]

NUM_ACTIONS = 25 * 49  # 1225


def zobrist_hash(state: State) -> jax.Array:
    """pgx's Zobrist hash of the position (board seen from White, side to move) [2] uint32."""
    return _zobrist_hash(state)


def position_legal_mask(state: State) -> jax.Array:
    """The legal moves of the position [1225], also at terminal states.

    pgx's contract sets every action "legal" once the game is over; this recomputes the
    moves of the position itself (e.g. those of a position drawn by repetition).
    """
    return _legal_action_mask(state)


def in_check(state: State) -> jax.Array:
    """Whether the side to move is in check []."""
    return _is_checking(_flip(state))


def step_state(state: State, action: jax.Array) -> State:
    """One ply of pgx's gardner step with the new position hashed from scratch.

    Same order as ``pgx.gardner_chess._step`` (move, flip to the new mover, history,
    legal moves, terminal flags and rewards); the ply count and the 256-ply cap are the
    caller's (`GardnerChess._step`).
    """
    state = _apply_move(state, Action._from_label(action))
    state = _flip(state)
    state = state.replace(_zobrist_hash=zobrist_hash(state))  # type: ignore[attr-defined]
    state = _update_history(state)
    state = state.replace(legal_action_mask=_legal_action_mask(state))  # type: ignore[attr-defined]
    return _check_termination(state)


class GardnerChess(pgx_gardner.GardnerChess):
    """pgx Gardner chess with exact Zobrist hashes (see the module docstring)."""

    def _init(self, key: jax.Array) -> State:
        """pgx's initial state with the true hash of the start position."""
        state = super()._init(key)
        true_hash = zobrist_hash(state)
        return state.replace(  # type: ignore[attr-defined]
            _zobrist_hash=true_hash, _hash_history=state._hash_history.at[0].set(true_hash))

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        del key
        state = step_state(state, action)
        # The 256-ply cap: a draw (rewards stay zero unless the last move mated).
        return state.replace(terminated=state.terminated | (state._step_count >= MAX_TERMINATION_STEPS))  # type: ignore
