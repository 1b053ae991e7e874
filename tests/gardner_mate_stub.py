"""A "mate-aware" stand-in for a Gardner chess network, for testing the puzzle pipeline.

The Gardner analogue of ``tests/mate_stub.py``: ``make_gardner_mate_stub(engine)`` returns
an ``apply_fn`` with the network's signature ``(params, observation [B, 5, 5, 115],
player [B]) -> NetOutput`` whose policy is uniform and whose value is short-range mate
knowledge from Fairy-Stockfish (a depth-3 search; independent of pgx):

- ``+1``   the side to move has a mate in one (score ``mate 1``);
- ``-0.9`` every move of the side to move allows a mate in one (``mate -1``);
- ``0``    otherwise (and for positions without legal moves, which the search scores by
  the game's result instead).

The board is decoded from the observation's current-position planes inside a
``jax.pure_callback``. pgx Gardner observation layout (``pgx/gardner_chess.py``,
``_observe``): ``[5, 5, 115]``; channels 0-5 the mover's P N B R Q K, 6-11 the
opponent's, 12-13 repetition counts, then seven more history positions (14 channels
each); channel 112 the colour to move (0 White, 1 Black), 113 the ply count / 256, 114
the half-move clock / 100. Board planes are ``rot90`` of the mover-side ``[file, rank]``
board: ``obs[i, j]`` is file ``j`` and mover-side rank ``4 - i``.
"""

import functools

import chess.engine
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax.envs import gardner_interop
from azdb_jax.envs.gardner import NUM_ACTIONS
from azdb_jax.networks import NetOutput

MATE_IN_ONE = 1.0
MATED_IN_TWO = -0.9
_COLOR, _HALFMOVE = 112, 114


def fen_from_observation(observation: np.ndarray) -> str:
    """The FEN (move number 1) of one pgx Gardner observation ``[5, 5, 115]``."""
    obs = np.asarray(observation, np.float32)
    if obs.shape != (5, 5, 115):
        raise ValueError(f"expected a Gardner observation [5, 5, 115], got {obs.shape}")
    white_to_move = obs[0, 0, _COLOR] < 0.5
    board = np.zeros((5, 5), np.int32)  # [file, rank] from White's side, White positive
    for channel in range(12):
        mover = channel < 6
        sign = 1 if mover == white_to_move else -1
        for i, j in zip(*np.nonzero(obs[:, :, channel] > 0.5)):
            relative_rank = 4 - int(i)
            rank = relative_rank if white_to_move else 4 - relative_rank
            board[int(j), rank] = sign * (channel % 6 + 1)
    halfmove = int(round(float(obs[0, 0, _HALFMOVE]) * 100))
    return gardner_interop.fen_of(board, bool(white_to_move), halfmove, 1)


def make_gardner_mate_stub(engine):
    """The stub ``apply_fn`` asking ``engine`` (a ``FairyStockfish``); its ``params`` are ignored."""

    @functools.lru_cache(maxsize=None)
    def mate_value(fen: str) -> float:
        result = engine.analyse(fen, limit=chess.engine.Limit(depth=3))
        if not result.lines or result.bestmove is None:
            return 0.0
        mate = result.lines[0].score.mate()
        return MATE_IN_ONE if mate == 1 else MATED_IN_TWO if mate == -1 else 0.0

    def values(observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations)
        flat = obs.reshape((-1,) + obs.shape[-3:])
        out = np.array([mate_value(fen_from_observation(o)) for o in flat], np.float32)
        return out.reshape(obs.shape[:-3])

    def apply_fn(params, observation, player):
        del params, player
        batch = observation.shape[:-3]
        value = jax.pure_callback(values, jax.ShapeDtypeStruct(batch, jnp.float32), observation,
                                  vmap_method="broadcast_all")
        zeros = jnp.zeros(batch, jnp.float32)
        return NetOutput(policy_logits=jnp.zeros(batch + (NUM_ACTIONS,), jnp.float32), value=value, value_d=zeros)

    apply_fn.mate_value = mate_value
    return apply_fn


__all__ = ["fen_from_observation", "make_gardner_mate_stub", "MATE_IN_ONE", "MATED_IN_TWO"]
