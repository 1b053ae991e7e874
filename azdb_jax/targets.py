"""Value targets from self-play streams: the outcome z and the intrinsic value z_d.

Self-play with auto-reset (``azdb_jax.envs.step_autoreset``) records one *stream* per
game slot: several games back to back over a window of T moves. Index t of a stream
holds the transition (s_t, a_t) and what the search and the step produced there::

  mover[t]     pgx player id (seat) that moved at t
  rewards[t]   [P] rewards of the step by player id (the finishing step's rewards)
  done[t]      the move a_t ended the game (terminated or truncated); s_{t+1} is then
               the start of the next game
  r_d[t]       r_d(s_t, a_t), the mover's intrinsic reward (``diversity.intrinsic_reward``)
  v_d[t]       v_d(s_t), the search-time intrinsic value stored with s_t

Both targets are written for one stream ([T] time axis, ``rlax.multistep`` style);
``jax.vmap`` them over the batch of streams. A game still running at the end of the
window has no known outcome: its transitions come back with ``valid = False``.
"""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
from jax import lax

Array = jax.Array


class Targets(NamedTuple):
    """A target per transition of a stream and whether it is known."""

    value: Array  # [T] float32, 0 where not valid
    valid: Array  # [T] bool


def outcome_targets(rewards_t: Array, mover_t: Array, done_t: Array) -> Targets:
    """z_t: the game's result from the mover's perspective (SPEC §1.7, paper Eq. 3).

    ``z_t = Σ_{k=t}^{e} rewards_k[mover_t]``, e the first end of game at or after t.
    Board games reward only the finishing move, so z_t is the +1 / 0 / −1 result for
    the player who moved at t (a truncated game is a draw unless the env rewards it).
    A reverse ``lax.scan`` carries the per-seat return and resets it at every
    ``done``, so no game's result leaks into the game before it.

    Args:
      rewards_t: [T, P] rewards of each step by player id.
      mover_t: [T] int, player id that moved at t.
      done_t: [T] bool, the move at t ended the game.

    Returns:
      ``Targets``: z [T], and valid [T] = the game of t ended inside the window.
    """
    chex.assert_rank([rewards_t, mover_t, done_t], [2, 1, 1])
    chex.assert_equal_shape_prefix([rewards_t, mover_t, done_t], 1)
    rewards_t = jnp.asarray(rewards_t, jnp.float32)
    mover_t, done_t = jnp.asarray(mover_t, jnp.int32), jnp.asarray(done_t, jnp.bool_)

    def backward(carry, step):
        return_tp1, ended_tp1 = carry  # [P], []
        reward, done = step
        return_t = reward + jnp.where(done, 0.0, return_tp1)
        ended_t = done | ended_tp1
        return (return_t, ended_t), (return_t, ended_t)

    init = (jnp.zeros(rewards_t.shape[1:], jnp.float32), jnp.bool_(False))
    _, (return_t, ended_t) = lax.scan(backward, init, (rewards_t, done_t), reverse=True)
    z_t = jnp.take_along_axis(return_t, mover_t[:, None], axis=1)[:, 0]
    return Targets(value=jnp.where(ended_t, z_t, 0.0), valid=ended_t)


def _shift(x: Array, m: int, fill) -> Array:
    """``y[t] = x[t + m]``, ``fill`` past the end of the window; [T] -> [T]."""
    if m == 0:
        return x
    m = min(m, x.shape[0])
    return jnp.concatenate([x[m:], jnp.full((m,), fill, x.dtype)])


def intrinsic_value_targets(
    r_d_t: Array, v_d_t: Array, mover_t: Array, done_t: Array, *, n_td: int
) -> Targets:
    """The intrinsic value target z_d (paper §3 "Behavioral diversity"; SPEC §1.6).

    With an even ``N = n_td`` and the rewards of the opponent's moves zeroed:

        z_d(s_t) = Σ_{m=0}^{N−1} [mover_{t+m} = mover_t] r_d(s_{t+m}, a_{t+m}) + v_d(s_{t+N})
                 = Σ_{k=0}^{N/2−1} r_d(s_{t+2k}, a_{t+2k}) + v_d(s_{t+N})   (alternating moves)

    - End of game: the sum stops at the transition that ends the game and there is no
      bootstrap (a terminal state's v_d is 0); nothing of the next game in the stream
      is used.
    - End of window: when the game is still running and s_{t+N} lies past the last
      recorded transition, the target is *masked* (``valid = False``) rather than
      bootstrapped from an earlier v_d: the shortest such bootstrap would regress the
      last state onto its own search estimate, and the outcome z of these
      transitions is unknown anyway (``outcome_targets`` masks them too).

    Args:
      r_d_t: [T] r_d(s_t, a_t), the intrinsic reward of the mover at t.
      v_d_t: [T] v_d(s_t) stored by the search.
      mover_t: [T] int, player id that moved at t.
      done_t: [T] bool, the move at t ended the game.
      n_td: N_TD, an even number >= 2 (static).

    Returns:
      ``Targets``: z_d [T] and valid [T].
    """
    if not isinstance(n_td, int) or n_td < 2 or n_td % 2:
        raise ValueError(f"n_td must be an even integer >= 2, got {n_td!r}")
    chex.assert_rank([r_d_t, v_d_t, mover_t, done_t], 1)
    chex.assert_equal_shape([r_d_t, v_d_t, mover_t, done_t])
    r_d_t, v_d_t = jnp.asarray(r_d_t, jnp.float32), jnp.asarray(v_d_t, jnp.float32)
    mover_t, done_t = jnp.asarray(mover_t, jnp.int32), jnp.asarray(done_t, jnp.bool_)
    num_steps = done_t.shape[0]

    # running[t] before step m: no game end in [t, t+m) (s_{t+m} may lie past the
    # window); ended[t]: the game of t ended at one of the steps seen so far.
    running = jnp.ones_like(done_t)
    ended = jnp.zeros_like(done_t)
    z_d_t = jnp.zeros_like(r_d_t)
    for m in range(n_td):
        own = _shift(mover_t, m, -1) == mover_t  # -1 past the window: never own
        z_d_t = z_d_t + jnp.where(running & own, _shift(r_d_t, m, 0.0), 0.0)
        done_m = running & _shift(done_t, m, False)
        ended = ended | done_m
        running = running & ~done_m
    bootstrap = running & (jnp.arange(num_steps) + n_td < num_steps)
    z_d_t = z_d_t + jnp.where(bootstrap, _shift(v_d_t, n_td, 0.0), 0.0)
    valid = bootstrap | ended
    return Targets(value=jnp.where(valid, z_d_t, 0.0), valid=valid)


def opponent_intrinsic_value_targets(z_d: Targets, done_t: Array) -> Targets:
    """The intrinsic return of the player *not* to move, for the second intrinsic head.

    In the consistent reading of the paper's leaf values (docs/method.md) the network
    also predicts, for a position ``s_t`` where ``p`` moves, the intrinsic return of ``p``'s
    opponent ``q`` from ``s_t``. ``q`` earns nothing on ``p``'s move, so that return is
    ``q``'s return from ``s_{t+1}``, where ``q`` moves:

        z_d^opp(s_t) = z_d(s_{t+1})   while the game goes on after ``a_t``,
        z_d^opp(s_t) = 0              when ``a_t`` ends the game (no rewards are left),

    with ``z_d`` from ``intrinsic_value_targets`` (N_TD plies of ``q``'s own rewards, then
    its stored v_d). Valid where the shifted target is (or the game ended at t).

    Args:
      z_d: ``Targets`` [T] of ``intrinsic_value_targets`` over the same stream.
      done_t: [T] bool, the move at t ended the game.
    """
    chex.assert_rank(done_t, 1)
    chex.assert_equal_shape([z_d.value, z_d.valid, done_t])
    done_t = jnp.asarray(done_t, jnp.bool_)
    value = jnp.where(done_t, 0.0, _shift(z_d.value, 1, 0.0))
    valid = done_t | _shift(z_d.valid, 1, False)
    return Targets(value=jnp.where(valid, value, 0.0), valid=valid)
