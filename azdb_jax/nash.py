"""Nash equilibria of two-player zero-sum matrix games, jittable and maskable.

PSRO-style matchmaking (paper Appendix B.1; SPEC §1.11) needs the Nash mixture of the
game between the players tracked so far. The game here is

    max_x min_y  xᵀ M y,    x ∈ Δ(rows), y ∈ Δ(columns),

with M[r, c] the payoff to the row player (the maximiser; in matchmaking: White) and
−M[r, c] the payoff to the column player (the minimiser; Black). Restricting the game to
a subset of rows/columns is done with boolean masks rather than slicing, so shapes stay
fixed and one compiled program serves every restriction.

Solver: alternating predictive regret matching+ (PRM+; Farina, Kroer & Sandholm, 2021)
with quadratically weighted averaging of the iterates. Per iteration, with regret sums
R ≥ 0 and the previous instantaneous regret m as the prediction:

    y_t   = [R_y + m_y]⁺ / Σ[R_y + m_y]⁺
    r_x   = M y_t − (x̂ᵀ M y_t)·1,           R_x ← [R_x + r_x]⁺
    x_t   = [R_x + r_x]⁺ / Σ[R_x + r_x]⁺     (x̂ is the previous prediction)
    r_y   = −(x_tᵀ M) + (x_tᵀ M y_t)·1,     R_y ← [R_y + r_y]⁺
    x̄ ∝ Σ_t t² x_t,   ȳ ∝ Σ_t t² y_t

(uniform over the allowed actions whenever [·]⁺ sums to zero). It has no step size to
tune. The averages converge to a Nash equilibrium; we stop once the duality gap

    exploitability(x̄, ȳ) = max_r (M ȳ)_r − min_c (x̄ᵀ M)_c  ≥ 0

falls to ``tolerance`` (checked every ``check_every`` iterations in a ``lax.while_loop``)
or after ``max_iterations``. The game value v* lies in [min_c (x̄ᵀM)_c, max_r (Mȳ)_r], so
x̄ᵀ M ȳ is within the exploitability of v*. Measured on random 6 x 6 games with entries in [−1, 1]:
a gap below 1e-3 after ~300 iterations and below 1e-4 after ~1000.
"""

from typing import NamedTuple, Optional

import chex
import jax
import jax.numpy as jnp
from jax import lax

Array = jax.Array


class NashEquilibrium(NamedTuple):
    """An (approximate) equilibrium of a zero-sum matrix game."""

    row_strategy: Array  # [R] maximiser's mixture; exactly 0 outside ``row_mask``
    col_strategy: Array  # [C] minimiser's mixture; exactly 0 outside ``col_mask``
    value: Array  # [] x̄ᵀ M ȳ, the row player's expected payoff
    exploitability: Array  # [] duality gap of (x̄, ȳ) in the restricted game
    num_iterations: Array  # [] int32, PRM+ iterations run


class _SolverState(NamedTuple):
    row_regret: Array  # [R] R_x ≥ 0
    col_regret: Array  # [C] R_y ≥ 0
    row_prediction: Array  # [R] last instantaneous regret r_x
    col_prediction: Array  # [C] last instantaneous regret r_y
    row_sum: Array  # [R] Σ_t t² x_t
    col_sum: Array  # [C] Σ_t t² y_t
    iteration: Array  # [] int32
    gap: Array  # [] exploitability of the current averages


def _normalise(weights: Array, mask: Array) -> Array:
    """w / Σw over the allowed actions, or uniform over them when Σw = 0."""
    weights = jnp.where(mask, weights, 0.0)
    total = jnp.sum(weights)
    uniform = mask / jnp.sum(mask)
    return jnp.where(total > 0, weights / jnp.where(total > 0, total, 1.0), uniform)


def exploitability(
    payoff: Array,
    row_strategy: Array,
    col_strategy: Array,
    *,
    row_mask: Optional[Array] = None,
    col_mask: Optional[Array] = None,
) -> Array:
    """Duality gap max_{r∈rows} (M y)_r − min_{c∈cols} (xᵀ M)_c of a strategy pair.

    Zero exactly at a Nash equilibrium of the (masked) game, positive otherwise. It is the
    sum of what each player gains by best-responding (NashConv), not half of it.
    """
    rows, cols = payoff.shape
    row_mask = jnp.ones(rows, bool) if row_mask is None else row_mask
    col_mask = jnp.ones(cols, bool) if col_mask is None else col_mask
    best_row = jnp.max(jnp.where(row_mask, payoff @ col_strategy, -jnp.inf))
    best_col = jnp.min(jnp.where(col_mask, row_strategy @ payoff, jnp.inf))
    return best_row - best_col


def solve_zero_sum(
    payoff: Array,
    *,
    row_mask: Optional[Array] = None,
    col_mask: Optional[Array] = None,
    max_iterations: int = 10_000,
    tolerance: float = 1e-5,
    check_every: int = 50,
) -> NashEquilibrium:
    """Approximate Nash equilibrium of the zero-sum game ``payoff`` [R, C] (row maximises).

    Deterministic (no random key). Rows/columns where the masks are False are removed from
    the game: they get probability exactly 0 and are ignored by the exploitability, so the
    result equals solving the sliced sub-matrix. Each mask needs at least one True entry.
    Runs PRM+ (module docstring) in blocks of ``check_every`` iterations until the
    exploitability of the averaged strategies is ≤ ``tolerance`` or ``max_iterations``
    (rounded up to a whole block) is reached. Payoffs of order 1 are assumed; the
    tolerance is absolute.
    """
    chex.assert_rank(payoff, 2)
    payoff = jnp.asarray(payoff, jnp.float32)
    rows, cols = payoff.shape
    row_mask = jnp.ones(rows, bool) if row_mask is None else jnp.asarray(row_mask, bool)
    col_mask = jnp.ones(cols, bool) if col_mask is None else jnp.asarray(col_mask, bool)
    chex.assert_shape(row_mask, (rows,))
    chex.assert_shape(col_mask, (cols,))
    # Masked-out entries never influence anything; zero them so inf/nan cannot leak in.
    payoff = jnp.where(row_mask[:, None] & col_mask[None, :], payoff, 0.0)
    num_blocks = max(1, -(-max_iterations // check_every))

    def averages(state: _SolverState) -> tuple[Array, Array]:
        return _normalise(state.row_sum, row_mask), _normalise(state.col_sum, col_mask)

    def iterate(_, state: _SolverState) -> _SolverState:
        y = _normalise(jnp.maximum(state.col_regret + state.col_prediction, 0.0), col_mask)
        x_hat = _normalise(jnp.maximum(state.row_regret + state.row_prediction, 0.0), row_mask)
        row_values = payoff @ y
        row_inst = jnp.where(row_mask, row_values - x_hat @ row_values, 0.0)
        row_regret = jnp.maximum(state.row_regret + row_inst, 0.0)
        # Alternation: the column player responds to the row player's fresh iterate.
        x = _normalise(jnp.maximum(row_regret + row_inst, 0.0), row_mask)
        col_values = -(x @ payoff)
        col_inst = jnp.where(col_mask, col_values - col_values @ y, 0.0)
        col_regret = jnp.maximum(state.col_regret + col_inst, 0.0)
        weight = jnp.square(state.iteration.astype(jnp.float32) + 1.0)
        return state._replace(
            row_regret=row_regret,
            col_regret=col_regret,
            row_prediction=row_inst,
            col_prediction=col_inst,
            row_sum=state.row_sum + weight * x,
            col_sum=state.col_sum + weight * y,
            iteration=state.iteration + 1,
        )

    def block(state: _SolverState) -> _SolverState:
        state = lax.fori_loop(0, check_every, iterate, state)
        x_bar, y_bar = averages(state)
        gap = exploitability(payoff, x_bar, y_bar, row_mask=row_mask, col_mask=col_mask)
        return state._replace(gap=gap)

    def keep_going(state: _SolverState) -> Array:
        return (state.gap > tolerance) & (state.iteration < num_blocks * check_every)

    zeros_r, zeros_c = jnp.zeros(rows), jnp.zeros(cols)
    init = _SolverState(
        row_regret=zeros_r,
        col_regret=zeros_c,
        row_prediction=zeros_r,
        col_prediction=zeros_c,
        row_sum=zeros_r,
        col_sum=zeros_c,
        iteration=jnp.zeros((), jnp.int32),
        gap=jnp.array(jnp.inf, jnp.float32),
    )
    state = lax.while_loop(keep_going, block, init)
    x_bar, y_bar = averages(state)
    return NashEquilibrium(
        row_strategy=x_bar,
        col_strategy=y_bar,
        value=x_bar @ payoff @ y_bar,
        exploitability=state.gap,
        num_iterations=state.iteration,
    )
