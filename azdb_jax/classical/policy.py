"""The classical player as a jittable policy: a host callback inside the arena's compiled games.

``arena.play_games`` and the in-training evaluation (``runner.Evaluator``) play policies
``policy(params, rng_key, state [B]) -> actions [B]`` inside one jitted ``lax.scan``;
the alpha-beta search is host Python. `alphabeta_policy` bridges the two with
``jax.pure_callback``: at each ply the batch's states go to the host, where every game
still running is turned into a FEN (``board_interop``'s ``state_to_fen``), searched by
an `AlphaBetaPlayer`, and its move mapped back to the pgx action among the state's legal
actions (a move outside them is an error naming the FEN). The compiled program waits
for the host at each ply: a match against ``alphabeta:depth=3`` costs the searches'
time, run one game after another on one core.

What the host sees is the position alone: pgx states carry no move list, so the
searcher cannot see repetitions of the game before the position (it sees those inside
its own search) — a difference from `AlphaBetaPlayer` on boards with move stacks. Keys
are ignored: the player is deterministic.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax.classical import player as player_lib

__all__ = ["alphabeta_policy"]


def alphabeta_policy(env: pgx.core.Env, spec: Any) -> Any:
    """A policy playing ``spec`` (a spec string or an `AlphaBetaPlayer`) in ``env``
    (``chess`` or ``gardner_chess``); ``params`` and keys are ignored.

    Raises:
      ValueError: a bad spec, or a game without boards (connect four, Nim, ...).
    """
    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    game = games.board_game(env)
    player = player_lib.player_from_spec(spec) if isinstance(spec, str) else spec

    def host(state) -> np.ndarray:
        done = np.asarray(state.terminated) | np.asarray(state.truncated)
        actions = np.zeros(done.shape, np.int32)
        for i in np.flatnonzero(~done):
            single = jax.tree.map(lambda x, i=i: np.asarray(x)[i], state)
            if not np.asarray(single.legal_action_mask).any():
                continue
            fen = game.state_to_fen(single)
            move = player(player_lib.board_from_fen(fen, game.board_size))
            try:
                actions[i] = game.state_move_to_action(move, single, fen)
            except ValueError:
                raise ValueError(f"alphabeta played {move.uci()}, not a legal action of {fen}") from None
        return actions

    def policy(params, rng_key, state):
        del params, rng_key
        shape = jax.ShapeDtypeStruct(state.current_player.shape, jnp.int32)
        return jax.pure_callback(host, shape, state, vmap_method="sequential")

    def rows(params, keys, state):  # arena's batched form: one callback for the half batch
        del keys
        return policy(params, None, state)

    policy.rows = rows
    policy.player = player
    return policy

