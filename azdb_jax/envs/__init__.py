"""The game layer: one way to make and step every game azdb_jax supports.

Every env follows pgx's contract (``pgx.core.Env``): ``env.init(key) -> State``,
``env.step(state, action) -> State`` on a single game, ``jax.vmap`` for batches;
``State`` carries ``current_player``, ``observation``, ``rewards`` (by player id),
``terminated``, ``truncated`` and ``legal_action_mask``.

>>> env = make("nim", heaps=(1, 3, 5))
>>> env.num_actions
15
"""

from typing import Callable, Dict, Tuple

import pgx
import pgx.core

from azdb_jax.envs.autoreset import reset_where_done, step_autoreset
from azdb_jax.envs.nim import Nim

ENV_IDS: Tuple[str, ...] = ("chess", "gardner_chess", "connect_four", "tic_tac_toe", "nim")


def _make_chess(**kwargs) -> pgx.core.Env:
    from azdb_jax.envs.chess import Chess  # pylint: disable=g-import-not-at-top

    return Chess(**kwargs)


def _make_gardner_chess(**kwargs) -> pgx.core.Env:
    from azdb_jax.envs.gardner import GardnerChess  # pylint: disable=g-import-not-at-top

    return GardnerChess(**kwargs)


def _pgx_factory(env_id: str) -> Callable[..., pgx.core.Env]:
    def factory(**kwargs) -> pgx.core.Env:
        if kwargs:
            raise ValueError(f"env '{env_id}' takes no options, got {sorted(kwargs)}")
        return pgx.make(env_id)

    return factory


_FACTORIES: Dict[str, Callable[..., pgx.core.Env]] = {
    "chess": _make_chess,
    "gardner_chess": _make_gardner_chess,
    "connect_four": _pgx_factory("connect_four"),
    "tic_tac_toe": _pgx_factory("tic_tac_toe"),
    "nim": Nim,
}


def make(env_id: str, **options) -> pgx.core.Env:
    """Builds the env named ``env_id`` (one of ``ENV_IDS``).

    ``chess`` and ``gardner_chess`` are pgx's games with their known traps fixed (see
    ``azdb_jax.envs.chess`` and ``azdb_jax.envs.gardner``);
    ``nim`` takes ``heaps=(1, 3, 5, 7, 9)``; the other games take no options.
    """
    try:
        factory = _FACTORIES[env_id]
    except KeyError:
        raise ValueError(f"unknown env '{env_id}'; supported: {', '.join(ENV_IDS)}") from None
    try:
        return factory(**options)
    except TypeError as e:
        raise ValueError(f"bad options for env '{env_id}': {e}") from None


__all__ = ["ENV_IDS", "make", "reset_where_done", "step_autoreset", "Nim"]
