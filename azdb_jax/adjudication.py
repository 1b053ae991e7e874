"""Scoring games that reach an evaluation's ply cap before the game's own rules end them.

Evaluation games are capped (``max_plies``) to bound their cost; a game still running at
the cap is by default *unfinished* and scores nothing. An adjudicator gives it a result
instead, from the side to move's point of view (+1 win, 0 draw, −1 loss)::

  "none"      no adjudication (unfinished games are reported as such);
  "draw"      a capped game is a draw;
  "material"  games with material (chess and Gardner chess: ``Game.mover_board``): the
              side ahead by at least ``margin`` pawns of material (P 1, N 3, B 3, R 5,
              Q 9) wins, otherwise a draw — the usual engine-match adjudication, which a
              capped game between a strong and a weak player settles the way playing on
              would almost always settle it.

Adjudicators are pure functions of a batched state; the arena applies them to the games
left at the cap (``azdb_jax.arena.play_games``).
"""

from typing import Callable, Optional

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import games

Array = jax.Array
Adjudicator = Callable[[pgx.core.State], Array]  # batched State [G] -> [G] float32 in {-1, 0, 1}

RULES = ("none", "draw", "material")
PIECE_VALUES = (0.0, 1.0, 3.0, 3.0, 5.0, 9.0, 0.0)  # empty, P, N, B, R, Q, K (pgx piece codes)


def material_games() -> tuple:
    """The games with material (``Game.mover_board``)."""
    return tuple(game_id for game_id in games.IDS if games.get(game_id).mover_board is not None)


def mover_board(env: pgx.core.Env, state: pgx.core.State) -> Array:
    """[G, squares] pgx piece codes from the side to move's view (positive: its pieces)."""
    board = games.get(env).mover_board
    if board is None:
        raise ValueError(f"material is only defined for {' and '.join(material_games())}, not '{env.id}'")
    return board(state)


def material_balance(env: pgx.core.Env, state: pgx.core.State) -> Array:
    """[G] the side to move's material minus its opponent's, in pawns."""
    board = mover_board(env, state)
    values = jnp.asarray(PIECE_VALUES)[jnp.abs(board)]
    return jnp.sum(jnp.sign(board) * values, axis=-1)


def adjudicator(env: pgx.core.Env, rule: str, *, margin: float = 3.0) -> Optional[Adjudicator]:
    """The adjudicator named ``rule`` (see the module docstring); None for "none"."""
    if rule not in RULES:
        raise ValueError(f"unknown adjudication rule {rule!r}; valid: {', '.join(RULES)}")
    if rule == "none":
        return None
    if rule == "draw":
        return lambda state: jnp.zeros(state.current_player.shape, jnp.float32)
    mover_board(env, env.init(jax.random.PRNGKey(0)))  # rejects games without material
    if not margin > 0:
        raise ValueError(f"material adjudication needs a margin > 0, got {margin!r}")

    def by_material(state: pgx.core.State) -> Array:
        balance = material_balance(env, state)
        return jnp.where(balance >= margin, 1.0, jnp.where(balance <= -margin, -1.0, 0.0)).astype(jnp.float32)

    return by_material


__all__ = ["RULES", "Adjudicator", "adjudicator", "material_balance", "material_games", "mover_board"]
