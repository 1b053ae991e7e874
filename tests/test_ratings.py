"""Elo differences and maximum-likelihood ratings against closed forms and simulation."""

import numpy as np
import pytest
from scipy.optimize import minimize

from azdb_jax import ratings


def test_elo_difference_closed_form():
    # 60 W, 30 D, 10 L: p = 0.75 -> 400·log10(3) = 190.85 Elo. Per-game score variance
    # 0.6·0.25² + 0.3·0.25² + 0.1·0.75² = 0.1125, so SE = 400 / (ln10·0.1875) · sqrt(0.1125/100)
    # = 926.49 · 0.033541 = 31.08.
    result = ratings.elo_difference(60, 30, 10)
    assert result.score == pytest.approx(0.75)
    assert result.num_games == 100
    assert result.elo == pytest.approx(190.85, abs=0.01)
    assert result.stderr == pytest.approx(31.08, abs=0.01)


def test_elo_difference_symmetry_and_arrays():
    result = ratings.elo_difference([60, 10, 5], [30, 30, 90], [10, 60, 5])
    np.testing.assert_allclose(result.elo[:2], [190.8485, -190.8485], atol=1e-3)
    np.testing.assert_allclose(result.stderr[0], result.stderr[1])
    assert result.elo[2] == 0.0
    # Draws carry less variance than the same score from wins and losses.
    assert result.stderr[2] < ratings.elo_difference(50, 0, 50).stderr


def test_elo_difference_saturated_scores():
    perfect = ratings.elo_difference(10, 0, 0)
    assert perfect.elo == np.inf and perfect.stderr == np.inf
    assert ratings.elo_difference(0, 0, 10).elo == -np.inf
    clipped = ratings.elo_difference(10, 0, 0, saturated="clip")
    # p clipped to 1 - 1/20 = 0.95; binomial SE at that p.
    assert clipped.elo == pytest.approx(400 * np.log10(19))
    expected_se = 400 / (np.log(10) * 0.95 * 0.05) * np.sqrt(0.95 * 0.05 / 10)
    assert clipped.stderr == pytest.approx(expected_se)
    assert clipped.score == 1.0
    with pytest.raises(ValueError, match="saturated"):
        ratings.elo_difference(1, 1, 1, saturated="nope")


def test_two_agent_fit_matches_closed_form():
    wins = np.array([[0, 10], [35, 0]])
    draws = np.array([[0, 20], [10, 0]])
    losses = np.array([[0, 15], [10, 0]])
    # Agent 1 scores 35 + 5 + 15 + 10 = 65 (= wins, half the draws, agent 0's losses) of 100.
    fit = ratings.fit_elo(wins, draws, losses, anchor=0, anchor_rating=1500.0)
    assert fit.ratings[0] == 1500.0 and fit.stderr[0] == 0.0
    assert fit.ratings[1] - 1500.0 == pytest.approx(400 * np.log10(65 / 35), abs=1e-6)
    # Fisher information of a binomial logit: SE = 1 / (c·sqrt(N p (1 - p))).
    expected_se = 400 / (np.log(10) * np.sqrt(100 * 0.65 * 0.35))
    assert fit.stderr[1] == pytest.approx(expected_se, rel=1e-6)


def _simulate(true_ratings, num_games, seed):
    rng = np.random.default_rng(seed)
    n = len(true_ratings)
    first = rng.integers(0, n, size=num_games)
    second = (first + rng.integers(1, n, size=num_games)) % n
    p = 1 / (1 + 10 ** (-(true_ratings[first] - true_ratings[second]) / 400))
    # Draw rate 0.6·min(p, 1 - p) keeps the expected score at p.
    draw = 0.6 * np.minimum(p, 1 - p)
    u = rng.uniform(size=num_games)
    scores = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    return first, second, scores


def test_simulated_ratings_recovered_within_intervals():
    true_ratings = np.array([0.0, 120.0, -150.0, 300.0, 60.0])
    first, second, scores = _simulate(true_ratings, 4000, seed=0)
    fit = ratings.fit_elo_from_games(first, second, scores, 5, anchor=0, anchor_rating=0.0)
    assert fit.ratings[0] == 0.0 and fit.stderr[0] == 0.0
    z = np.abs(fit.ratings[1:] - true_ratings[1:]) / fit.stderr[1:]
    assert np.all(z < 3.0), (fit.ratings, fit.stderr)
    assert np.all((fit.stderr[1:] > 5) & (fit.stderr[1:] < 30))
    # Wrong truths are rejected: the intervals are not vacuous.
    assert np.any(np.abs(fit.ratings[1:] - (true_ratings[1:] + 100)) / fit.stderr[1:] > 3)


def test_fit_is_the_maximum_of_the_likelihood():
    first, second, scores = _simulate(np.array([0.0, 50.0, -80.0, 200.0]), 600, seed=1)
    table = ratings.results_table(first, second, scores, 4)
    fit = ratings.fit_elo(*table, anchor=2, anchor_rating=100.0)
    assert fit.ratings[2] == 100.0

    def negative_log_likelihood(free):
        r = np.insert(free, 2, 100.0)
        d = np.log(10) / 400 * (r[:, None] - r[None, :])
        p = 1 / (1 + np.exp(-d[first, second]))
        return -np.sum(scores * np.log(p) + (1 - scores) * np.log(1 - p))

    reference = minimize(negative_log_likelihood, np.zeros(3), method="BFGS")
    np.testing.assert_allclose(np.delete(fit.ratings, 2), reference.x, atol=0.05)
    assert -reference.fun == pytest.approx(fit.log_likelihood, abs=1e-6)


def test_fit_rejects_unidentifiable_tables():
    wins = np.array([[0, 3], [0, 0]])
    zeros = np.zeros((2, 2))
    with pytest.raises(ValueError, match="prior_draws"):
        ratings.fit_elo(wins, zeros, zeros)
    regularised = ratings.fit_elo(wins, zeros, zeros, prior_draws=1.0)
    # 3.5 of 4 games: 400·log10(7).
    assert regularised.ratings[0] - regularised.ratings[1] == pytest.approx(
        400 * np.log10(7), abs=1e-6)
    disconnected = np.zeros((4, 4))
    disconnected[0, 1] = disconnected[2, 3] = 1
    with pytest.raises(ValueError, match="connected"):
        ratings.fit_elo(disconnected, disconnected, disconnected)
    with pytest.raises(ValueError, match="1, 0.5 or 0"):
        ratings.results_table([0], [1], [0.7], 2)


def test_score_stderr_by_hand():
    # 1 win, 1 loss: p = 1/2, per-game variance 1/4, SE = sqrt(1/4 / 2)
    assert float(ratings.score_stderr(1, 0, 1)) == pytest.approx(0.5 / np.sqrt(2))
    assert float(ratings.score_stderr(0, 4, 0)) == 0.0  # all draws: no spread
    # 3 W, 1 D, 0 L: p = 7/8, σ² = (3/4)(1/8)² + (1/4)(3/8)² = 3/256 + 9/256, N = 4
    assert float(ratings.score_stderr(3, 1, 0)) == pytest.approx(np.sqrt(12 / 256 / 4))
    assert np.isnan(ratings.score_stderr(0, 0, 0))
