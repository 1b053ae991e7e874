"""Board features φ(s, a): the position after a move, in absolute orientation.

AZdb measures behaviour through the expected features of a player's moves (paper §3,
"Behavioral diversity"; SPEC §1.2): φ is the board *after* the move, with no history,
side to move or clocks, seen from one fixed side (pgx stores chess boards from the
mover's side, so they are un-flipped). φ is a pure function of the state reached by the
move, written for one state; vmap it for batches.

Each game defines its φ in its own module (``Game.features``, ``azdb_jax.games``) and
gives its layout there (all float32, values in {0, 1}; e.g. chess: 12 piece planes x 64
squares + 4 castling rights = 772).
"""

import jax
import pgx.core

from azdb_jax import games
from azdb_jax.games.game import FeatureFn

Array = jax.Array


def feature_fn(env: pgx.core.Env) -> FeatureFn:
    """The φ function for ``env`` (an env from ``azdb_jax.games.make``)."""
    try:
        return games.get(env).features
    except ValueError:
        raise ValueError(f"no board features defined for env '{env.id}'") from None


def num_features(env: pgx.core.Env) -> int:
    """Length of φ for ``env``, from abstract evaluation (no computation)."""
    state = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    return int(jax.eval_shape(feature_fn(env), state).shape[0])


__all__ = ["FeatureFn", "feature_fn", "num_features"]
