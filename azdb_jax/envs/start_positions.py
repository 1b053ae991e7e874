"""Start-position sampling for self-play (paper §4.2, Appendix C.3; SPEC §1.12).

New games start from the game's initial position with probability ``initial_prob``,
otherwise from a position drawn uniformly from a given set (puzzle positions, book
positions — never their solutions). For chess the half-move clock of a drawn position
can be augmented to one of {0, 20, 40, 60, 80}, so the agent sees the same position at
different distances from the 50-move rule.
"""

from typing import Sequence

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax.envs.autoreset import InitFn

Array = jax.Array
HALFMOVE_CLOCKS = (0, 20, 40, 60, 80)


def make_start_sampler(
    env: pgx.core.Env,
    positions: pgx.core.State,
    *,
    initial_prob: float,
    halfmove_clocks: Sequence[int] = (),
) -> InitFn:
    """Returns ``init_fn(key) -> State`` drawing start positions as described above.

    Args:
      env: the env the positions belong to.
      positions: a stacked State [N, ...] (e.g. ``chess_interop.states_from_fens``),
        built once on the host; its pytree must match ``env.init``'s.
      initial_prob: probability of the game's usual initial position.
      halfmove_clocks: chess only: if non-empty, a drawn position's half-move clock is
        replaced by one of these values, uniformly (e.g. ``HALFMOVE_CLOCKS``).
    """
    if not 0.0 <= initial_prob <= 1.0:
        raise ValueError(f"initial_prob must be in [0, 1], got {initial_prob}")
    if positions.current_player.ndim != 1:
        raise ValueError("positions must be a stacked State [N, ...] (e.g. chess_interop.states_from_fens)")
    num_positions = int(positions.current_player.shape[0])
    if num_positions == 0:
        raise ValueError("the start-position set is empty")
    reference = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    if jax.tree.structure(reference) != jax.tree.structure(jax.tree.map(lambda x: x[0], positions)):
        raise ValueError(f"start positions are not states of env '{env.id}'")
    clocks = jnp.int32(list(halfmove_clocks))
    if clocks.size and env.id != "chess":
        raise ValueError("half-move clock augmentation is only defined for chess")
    if clocks.size and not bool(jnp.all((clocks >= 0) & (clocks < 100))):
        raise ValueError(f"half-move clocks must be in [0, 100), got {list(halfmove_clocks)}")

    def init_fn(key: Array) -> pgx.core.State:
        init_key, coin_key, index_key, clock_key = jax.random.split(key, 4)
        drawn = jax.tree.map(lambda x: x[jax.random.randint(index_key, (), 0, num_positions)], positions)
        if clocks.size:
            clock = clocks[jax.random.randint(clock_key, (), 0, clocks.size)]
            drawn = drawn.replace(_x=drawn._x._replace(halfmove_count=clock))  # type: ignore
            drawn = drawn.replace(observation=env.observe(drawn))  # type: ignore
        use_initial = jax.random.bernoulli(coin_key, initial_prob)
        return jax.tree.map(lambda a, b: jnp.where(use_initial, a, b), env.init(init_key), drawn)

    return init_fn
