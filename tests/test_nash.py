"""Zero-sum Nash solver against closed forms and scipy's LP."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

from azdb_jax import nash

_solve = jax.jit(nash.solve_zero_sum)
_solve_batch = jax.jit(jax.vmap(nash.solve_zero_sum))
_solve_masked = jax.jit(
    lambda m, r, c: nash.solve_zero_sum(m, row_mask=r, col_mask=c)
)


def _lp_value(payoff: np.ndarray) -> float:
    """Value of max_x min_y xᵀMy: maximise v s.t. xᵀM ≥ v·1, x ∈ Δ."""
    rows, cols = payoff.shape
    objective = np.r_[np.zeros(rows), -1.0]
    a_ub = np.hstack([-payoff.T, np.ones((cols, 1))])
    a_eq = np.r_[np.ones(rows), 0.0][None]
    result = linprog(
        objective, A_ub=a_ub, b_ub=np.zeros(cols), A_eq=a_eq, b_eq=[1.0],
        bounds=[(0, None)] * rows + [(None, None)],
    )
    assert result.success
    return -result.fun


def test_rock_paper_scissors_is_uniform():
    rps = jnp.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    solution = _solve(rps)
    np.testing.assert_allclose(solution.row_strategy, np.full(3, 1 / 3), atol=1e-3)
    np.testing.assert_allclose(solution.col_strategy, np.full(3, 1 / 3), atol=1e-3)
    assert abs(float(solution.value)) < 1e-3
    assert float(solution.exploitability) <= 1e-5


def test_asymmetric_two_by_two_closed_form():
    # Mixed equilibrium: x* = (1/2, 1/2), y* = (1/4, 3/4), value 0.
    payoff = jnp.array([[0.6, -0.2], [-0.6, 0.2]])
    solution = _solve(payoff)
    np.testing.assert_allclose(solution.row_strategy, [0.5, 0.5], atol=1e-3)
    np.testing.assert_allclose(solution.col_strategy, [0.25, 0.75], atol=1e-3)
    assert abs(float(solution.value)) < 1e-3


def test_random_games_match_linear_programming():
    rng = np.random.default_rng(0)
    payoffs = rng.uniform(-1.0, 1.0, size=(50, 6, 6)).astype(np.float32)
    solutions = _solve_batch(payoffs)
    assert float(jnp.max(solutions.exploitability)) <= 1e-3
    lp_values = np.array([_lp_value(p.astype(np.float64)) for p in payoffs])
    np.testing.assert_allclose(solutions.value, lp_values, atol=1e-3)
    np.testing.assert_allclose(jnp.sum(solutions.row_strategy, -1), 1.0, atol=1e-5)
    assert float(jnp.min(solutions.col_strategy)) >= 0.0
    # The reported gap is the true gap of the returned strategies.
    recomputed = jax.vmap(nash.exploitability)(
        payoffs, solutions.row_strategy, solutions.col_strategy
    )
    np.testing.assert_allclose(solutions.exploitability, recomputed, atol=1e-6)


def test_masked_restriction_equals_sliced_submatrix():
    rng = np.random.default_rng(1)
    payoff = rng.uniform(-1.0, 1.0, size=(6, 6)).astype(np.float32)
    rows, cols = np.array([0, 2, 3]), np.array([1, 2, 4, 5])
    row_mask = np.isin(np.arange(6), rows)
    col_mask = np.isin(np.arange(6), cols)
    masked = _solve_masked(payoff, row_mask, col_mask)
    sliced = _solve_masked(payoff[np.ix_(rows, cols)], np.ones(3, bool), np.ones(4, bool))
    assert np.all(np.asarray(masked.row_strategy)[~row_mask] == 0.0)
    assert np.all(np.asarray(masked.col_strategy)[~col_mask] == 0.0)
    np.testing.assert_allclose(masked.value, sliced.value, atol=1e-4)
    np.testing.assert_allclose(masked.value, _lp_value(payoff[np.ix_(rows, cols)]), atol=1e-3)
    np.testing.assert_allclose(masked.row_strategy[rows], sliced.row_strategy, atol=1e-2)
    np.testing.assert_allclose(masked.col_strategy[cols], sliced.col_strategy, atol=1e-2)


def test_masked_entries_cannot_leak():
    payoff = np.array([[0.0, np.nan], [np.inf, 5.0]], np.float32)
    solution = _solve_masked(payoff, np.array([True, False]), np.array([True, False]))
    np.testing.assert_array_equal(solution.row_strategy, [1.0, 0.0])
    assert float(solution.value) == 0.0 and float(solution.exploitability) == 0.0


def test_jit_matches_eager():
    payoff = jnp.array([[0.3, -0.7, 0.1], [-0.2, 0.4, -0.5], [0.6, -0.1, -0.3]])
    eager = nash.solve_zero_sum(payoff, max_iterations=500)
    jitted = jax.jit(lambda m: nash.solve_zero_sum(m, max_iterations=500))(payoff)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("max_iterations", [50, 400])
def test_iteration_budget_is_respected(max_iterations):
    rng = np.random.default_rng(2)
    payoff = rng.uniform(-1.0, 1.0, size=(8, 8)).astype(np.float32)
    solution = nash.solve_zero_sum(payoff, max_iterations=max_iterations, tolerance=0.0)
    assert int(solution.num_iterations) == max_iterations
