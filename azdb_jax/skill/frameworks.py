"""The two team-play frameworks of skill-compatible chess (Hamade et al. 2024, §3.1).

In both, a *team* of a strong agent (the senior, or brain) and a weak one (the junior, or
hand) controls one colour of a two-player game:

* **Stochastic Tag Team (STT)**: before every move a fair coin decides whether the side
  to move's senior or junior makes it; nobody consults anybody. ``StochasticTagTeam``
  wraps a game into one with the same ``State``/``step`` contract whose states carry the
  coin of the move about to be made. The coins are part of the game's randomness: the
  coin before ply ``t`` is ``bernoulli(½)`` of ``fold_in(coin_key, t)`` with the game's
  ``coin_key`` drawn at ``init``, so a game is reproducible from its key and the record
  of who made each move is recomputed from the key and the ply numbers
  (``senior_moves``).
* **Hand and Brain (HB)**: the brain names a piece type that has a legal move; the hand
  picks a move of that piece type. The game itself is the plain game — a team move is
  still one move of it — so HB needs no wrapper: ``action_piece_types`` gives the piece
  type behind every action, ``brain_options`` the types a brain may name and
  ``piece_moves`` the moves a hand may pick from (the teams are composed in
  ``azdb_jax.skill.agents``). The type the brain named is the type of the piece moved,
  so the record of a game's brain choices is its moves.

Piece types are python-chess's numbers (1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen,
6 king), which are also pgx's piece codes for chess and Gardner chess.
"""

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core
from flax import struct

from azdb_jax import adjudication, games

Array = jax.Array

PIECE_TYPES = (1, 2, 3, 4, 5, 6)
PIECE_NAMES = {1: "pawn", 2: "knight", 3: "bishop", 4: "rook", 5: "queen", 6: "king"}
NUM_PIECE_CODES = 7  # 0 (no piece) and the six types
FRAMEWORKS = ("stt", "hb", "regular")


# ------------------------------------------------------------------ Stochastic Tag Team


def coin(coin_key: Array, ply: Array) -> Array:
    """The STT coin before ply ``ply`` of a game: True if the senior moves (probability ½)."""
    return jax.random.bernoulli(jax.random.fold_in(coin_key, ply), 0.5)


@struct.dataclass
class TagTeamState:
    """A position of a Stochastic Tag Team game: the game's state and the coin of the next move.

    Exposes the game's ``State`` contract (``current_player``, ``observation``,
    ``rewards``, ``terminated``, ``truncated``, ``legal_action_mask``, ``_step_count``),
    so the arena and any code written for the plain game plays it; agents read the
    plain position from ``game``.
    """

    game: pgx.core.State
    senior_to_move: Array  # bool: the coin says the side to move's senior makes this move
    coin_key: Array  # the game's coin stream
    coin_offset: Array  # int32: the game's ply count when the stream started (a book position's)

    @property
    def current_player(self) -> Array:
        return self.game.current_player

    @property
    def observation(self) -> Array:
        return self.game.observation

    @property
    def rewards(self) -> Array:
        return self.game.rewards

    @property
    def terminated(self) -> Array:
        return self.game.terminated

    @property
    def truncated(self) -> Array:
        return self.game.truncated

    @property
    def legal_action_mask(self) -> Array:
        return self.game.legal_action_mask

    @property
    def _step_count(self) -> Array:
        return self.game._step_count  # pylint: disable=protected-access


class StochasticTagTeam:
    """A two-player game played as Stochastic Tag Team (see the module docstring).

    ``init(key)`` starts the game from ``game.init`` (or ``wrap`` starts it from given
    positions); ``step(state, action)`` plays the move and flips the coin of the next
    one. Single games; ``jax.vmap`` for batches, as for every env here.
    """

    def __init__(self, game: pgx.core.Env):
        if game.num_players != 2:
            raise ValueError(f"Stochastic Tag Team needs a two-player game, '{game.id}' has {game.num_players}")
        self.game = game
        self.id = f"stt:{game.id}"
        self.num_actions = game.num_actions
        self.num_players = game.num_players

    def wrap(self, game_state: pgx.core.State, key: Array) -> TagTeamState:
        """A single position of the game as the start of an STT game with the coin stream of ``key``."""
        offset = jnp.asarray(game_state._step_count, jnp.int32)  # pylint: disable=protected-access
        return TagTeamState(game=game_state, senior_to_move=coin(key, jnp.zeros((), jnp.int32)),
                            coin_key=key, coin_offset=offset)

    def init(self, key: Array) -> TagTeamState:
        game_key, coin_key = jax.random.split(key)
        return self.wrap(self.game.init(game_key), coin_key)

    def step(self, state: TagTeamState, action: Array, key: Optional[Array] = None) -> TagTeamState:
        del key  # the coins come from the state's own stream
        game = self.game.step(state.game, action)
        ply = game._step_count - state.coin_offset  # pylint: disable=protected-access
        return state.replace(game=game, senior_to_move=coin(state.coin_key, ply))


def senior_moves(coin_key, num_plies: int) -> np.ndarray:
    """``[num_plies]`` bool: which of an STT game's first plies the mover's senior made
    (host side; ``coin_key`` is the game's ``TagTeamState.coin_key``)."""
    plies = jnp.arange(int(num_plies), dtype=jnp.int32)
    return np.asarray(jax.vmap(lambda t: coin(jnp.asarray(coin_key), t))(plies))


# ------------------------------------------------------------------ Hand and Brain


def _planes(env: pgx.core.Env) -> int:
    """Action planes per origin square (action = origin square * planes + plane): 73 on
    chess, 49 on Gardner chess."""
    try:
        squares = games.board_game(env).board_size ** 2
    except ValueError:
        raise ValueError(f"piece types are defined for games with boards, not '{env.id}'") from None
    return env.num_actions // squares


def action_piece_types(env: pgx.core.Env, state: pgx.core.State) -> Array:
    """``[B, A]`` int32: the type of the side to move's piece on each action's origin square
    (0 where it has none); batched ``state``."""
    planes = _planes(env)
    board = adjudication.mover_board(env, state)  # [B, squares], the mover's pieces positive
    origin = jnp.arange(env.num_actions) // planes
    return jnp.maximum(board[:, origin], 0).astype(jnp.int32)


def piece_moves(env: pgx.core.Env, state: pgx.core.State, piece: Array) -> Array:
    """``[B, A]`` bool: the legal moves of piece type ``piece`` ``[B]`` — what a hand may play."""
    return state.legal_action_mask & (action_piece_types(env, state) == piece[:, None])


def brain_options(env: pgx.core.Env, state: pgx.core.State) -> Array:
    """``[B, 7]`` bool: the piece types (indexed by code; column 0 always False) with at
    least one legal move — what a brain may name."""
    types = jnp.where(state.legal_action_mask, action_piece_types(env, state), 0)
    one_hot = jax.nn.one_hot(types, NUM_PIECE_CODES, dtype=jnp.bool_)  # [B, A, 7]
    return jnp.any(one_hot, axis=1).at[:, 0].set(False)


__all__ = ["FRAMEWORKS", "PIECE_NAMES", "PIECE_TYPES", "StochasticTagTeam", "TagTeamState", "action_piece_types",
           "brain_options", "coin", "piece_moves", "senior_moves"]
