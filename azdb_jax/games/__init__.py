"""The game registry: one record per game (``Game``), read by the rest of the library.

A game is one module here that defines ``GAME``, a ``games.game.Game`` record (its env
factory, features φ, longest game, search slots, fixed opponents, start positions,
material, boards, UCI name, books, puzzles), and one entry in ``REGISTRY`` below. Nothing outside a game's
module branches on a game's name: the search reads its slots, the evaluation its
opponents and ply cap, the config its options, and so on (docs/contributing.md).

Every env follows pgx's contract (``pgx.core.Env``): ``env.init(key) -> State``,
``env.step(state, action) -> State`` on a single game, ``jax.vmap`` for batches;
``State`` carries ``current_player``, ``observation``, ``rewards`` (by player id),
``terminated``, ``truncated`` and ``legal_action_mask``.

>>> env = make("nim", heaps=(1, 3, 5))
>>> env.num_actions
15
"""

import functools
from typing import Any, Tuple, Union

import jax
import pgx.core

from azdb_jax.envs.board_interop import BoardGame
from azdb_jax.games import chess, connect_four, gardner_chess, nim, othello, tic_tac_toe
from azdb_jax.games.game import Game

# The registry: one line a game (and its module in the import above).
REGISTRY: Tuple[Game, ...] = (
    chess.GAME,
    gardner_chess.GAME,
    connect_four.GAME,
    tic_tac_toe.GAME,
    nim.GAME,
    othello.GAME,
)

_BY_ID = {game.id: game for game in REGISTRY}
if len(_BY_ID) != len(REGISTRY):
    raise ImportError(f"two registered games share an id: {[game.id for game in REGISTRY]}")
IDS: Tuple[str, ...] = tuple(_BY_ID)
BOARD_IDS: Tuple[str, ...] = tuple(game.id for game in REGISTRY if game.board is not None)  # games with boards
_BY_UCI_VARIANT = {game.uci_variant: game for game in REGISTRY if game.uci_variant is not None}
if len(_BY_UCI_VARIANT) != sum(game.uci_variant is not None for game in REGISTRY):
    raise ImportError(f"two registered games share a UCI variant: {[game.uci_variant for game in REGISTRY]}")
UCI_VARIANTS: Tuple[str, ...] = tuple(_BY_UCI_VARIANT)  # the UCI_Variant names of the games played over UCI

EnvOrId = Union[pgx.core.Env, str]


def get(env: EnvOrId) -> Game:
    """The record of a game, by env or env id; ValueError for an unknown game."""
    env_id = env if isinstance(env, str) else getattr(env, "id", env)
    try:
        return _BY_ID[env_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown env {env_id!r}; supported: {', '.join(IDS)}") from None


def by_uci_variant(variant: str) -> Game:
    """The record of the game a UCI ``UCI_Variant`` value names (``chess``, ``gardner``):
    the protocol's name translated to the library's; ValueError for another name."""
    try:
        return _BY_UCI_VARIANT[variant]
    except (KeyError, TypeError):
        raise ValueError(f"unknown UCI variant {variant!r}; variants: {', '.join(UCI_VARIANTS)}") from None


def make(env_id: str, **options) -> pgx.core.Env:
    """Builds the env named ``env_id`` (one of ``IDS``) with its ``options``.

    ``chess`` and ``gardner_chess`` are pgx's games with their known traps fixed (see
    ``azdb_jax.envs.chess`` and ``azdb_jax.envs.gardner``); ``chess`` takes
    ``max_pieces=16``; ``nim`` takes ``heaps=(1, 3, 5, 7, 9)``; the other games take no
    options. Envs hold no state: every call with the same game and options returns the same
    env, whose ``init`` and ``step`` are jitted (see ``_made``).
    """
    game = get(env_id)
    key = tuple(sorted(options.items()))
    try:
        try:
            hash(key)
        except TypeError:  # an unhashable option value (a list): an env of its own
            return _jitted(game.make(**options))
        return _made(game.id, key)
    except TypeError as e:
        raise ValueError(f"bad options for env '{env_id}': {e}") from None


@functools.lru_cache(maxsize=None)
def _made(env_id: str, options: Tuple[Tuple[str, Any], ...]) -> pgx.core.Env:
    """One env per game and options (envs hold no state), its ``init`` and ``step`` jitted.

    Called outside a jitted program (a notebook, a test, a host loop; alone or under
    ``jax.vmap``), pgx's ``init``/``step`` would run primitive by primitive and compile each
    of their hundreds of primitives separately, about 8x longer for Gardner's or chess's first
    batched init and steps than one program each (``benchmarks/env_dispatch.py``,
    docs/performance.md). Inside a jitted program the jitted methods trace into it as before.
    """
    return _jitted(get(env_id).make(**dict(options)))


def _jitted(env: pgx.core.Env) -> pgx.core.Env:
    env.init = jax.jit(env.init)
    env.step = jax.jit(env.step)
    return env


def make_from_config(env_config: Any) -> pgx.core.Env:
    """The env of a ``config.EnvConfig``: its game with the options the game reads."""
    game = get(env_config.name)
    return make(game.id, **game.env_options(env_config))


def max_plies(env: pgx.core.Env) -> int:
    """The longest game of ``env`` (evaluation games are capped there)."""
    plies = get(env).max_plies
    return plies if isinstance(plies, int) else int(plies(env))


def num_slots(env: pgx.core.Env) -> int:
    """K, the search tree's slots per node for ``env``: the game's bound on its legal
    moves, at most ``env.num_actions`` (every action when the game sets none)."""
    return min(get(env).num_slots or env.num_actions, env.num_actions)


def board_game(env: EnvOrId) -> BoardGame:
    """The host-side boards of a game, by env or env id; ValueError for games without them."""
    game = get(env)
    if game.board is None:
        raise ValueError(f"{game.id!r} has no board interop; games with boards: {', '.join(BOARD_IDS)}")
    return game.board


__all__ = ["BOARD_IDS", "Game", "IDS", "REGISTRY", "UCI_VARIANTS", "board_game", "by_uci_variant", "get", "make",
           "make_from_config", "max_plies", "num_slots"]
