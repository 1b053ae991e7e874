"""Nim (``azdb_jax.envs.nim``), its exact oracle as a player, and its record.

φ (SPEC §1.2) is K x (max_heap + 1): the one-hot heap sizes (the observation without its
channel; Nim is impartial, so there is no orientation). The env takes its heaps from
``env.nim_heaps``.
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
    """φ for Nim: the one-hot heap sizes, flattened (the observation without its channel)."""
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
    """``env.nim_heaps``: the heaps of the initial position."""
    return {"heaps": env_config.nim_heaps}


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
    config_fields=("nim_heaps",),
)
