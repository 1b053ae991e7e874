"""Nim (``azdb_jax.envs.nim``), its exact oracle as a player, and its record.

φ (SPEC §1.2) is the observation flattened: K x (max_heap + 1) one-hot heap sizes, or
with ``env.nim_encoding="unary"`` the paper's bitstring (Nim is impartial, so there is no
orientation). The env takes its heaps from ``env.nim_heaps`` and its board encoding from
``env.nim_encoding``.
"""

from typing import Any, Dict

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import policies
from azdb_jax.envs import nim as nim_env
from azdb_jax.games.game import Game

Array = jax.Array


def features(state: pgx.core.State) -> Array:
    """φ for Nim: the observation flattened (one-hot heap sizes, or the unary bitstring)."""
    return state.observation.reshape(-1)


def nim_oracle_policy(max_heap: int) -> policies.Policy:
    """Plays a winning Nim move (one leaving a zero nim-sum), uniformly among them.

    In a lost position (zero nim-sum) no move wins and it plays a uniformly random
    legal move. ``max_heap`` is the env's ``max_heap``; states must be Nim states.
    """

    def policy(params, rng_key, state):
        del params
        legal = state.legal_action_mask
        winning = jax.vmap(lambda h: nim_env.winning_moves(h, max_heap))(state.heaps) & legal
        choice = jnp.where(winning.any(axis=-1, keepdims=True), winning, legal)
        return policies.sample_uniform(rng_key, choice)

    return policy


def opponents(env: pgx.core.Env) -> Dict[str, policies.Policy]:
    """"oracle": a winning move whenever there is one (``nim_oracle_policy``)."""
    return {"oracle": nim_oracle_policy(env.max_heap)}


def env_options(env_config: Any) -> Dict[str, Any]:
    """``env.nim_heaps``: the heaps of the initial position; ``env.nim_encoding``: the board's."""
    if env_config.nim_encoding not in nim_env.ENCODINGS:
        raise ValueError(f"env.nim_encoding must be one of {nim_env.ENCODINGS}, got {env_config.nim_encoding!r}")
    return {"heaps": env_config.nim_heaps, "encoding": env_config.nim_encoding}


def max_plies(env: pgx.core.Env) -> int:
    """Every move takes at least one counter: a game lasts at most Σ heaps plies."""
    return sum(env.initial_heaps)


GAME = Game(
    id="nim",
    make=nim_env.Nim,
    features=features,
    max_plies=max_plies,
    opponents=opponents,
    env_options=env_options,
    config_fields=("nim_heaps", "nim_encoding"),
)
