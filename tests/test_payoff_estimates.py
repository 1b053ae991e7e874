"""The matchmakers' payoff estimate: all-time mean (default), decayed mean, prior for unplayed pairs.

Hand-computed values for each option, the default equal bit for bit to the plain running
mean, and the trainer's per-window update reading ``config.PayoffConfig``.
"""

import pathlib
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import matchmaking as mm, trainer  # noqa: E402
from azdb_jax.config import PayoffConfig  # noqa: E402


def _games(*games):
    """(white, black, result for White) triples -> update_payoff's four arrays."""
    white, black, result = (np.asarray(x) for x in zip(*games))
    return jnp.int32(white), jnp.int32(black), jnp.float32(result), jnp.ones(len(games), bool)


def test_default_is_the_all_time_mean_bit_for_bit():
    rng = np.random.default_rng(0)
    tracker = mm.init_payoff(3)
    counts, sums = np.zeros((3, 3), np.float32), np.zeros((3, 3), np.float32)
    for _ in range(5):
        batch = [(int(rng.integers(3)), int(rng.integers(3)), float(rng.integers(-1, 2))) for _ in range(7)]
        tracker = mm.update_payoff(tracker, *_games(*batch))
        for w, b, r in batch:
            counts[w, b] += 1
            sums[w, b] += r
    np.testing.assert_allclose(tracker.counts, counts)
    np.testing.assert_allclose(tracker.mean, np.where(counts > 0, sums / np.maximum(counts, 1), 0.0), atol=1e-6)
    # The prior terms vanish exactly at their defaults.
    again = mm.update_payoff(tracker, *_games((0, 1, 1.0)), decay=1.0, prior=0.0, prior_games=0.0)
    np.testing.assert_array_equal(again.mean, mm.update_payoff(tracker, *_games((0, 1, 1.0))).mean)


def test_decayed_mean_by_hand():
    # Window 1: (0 vs 1) wins twice. Window 2 (decay 0.5): one loss.
    # C = 0.5·2 + 1 = 2, S = 0.5·2 + (−1) = 0, M = 0; the all-time mean would be 1/3.
    tracker = mm.update_payoff(mm.init_payoff(2), *_games((0, 1, 1.0), (0, 1, 1.0)), decay=0.5)
    tracker = mm.update_payoff(tracker, *_games((0, 1, -1.0)), decay=0.5)
    assert float(tracker.counts[0, 1]) == pytest.approx(2.0) and float(tracker.mean[0, 1]) == pytest.approx(0.0)
    plain = mm.update_payoff(mm.update_payoff(mm.init_payoff(2), *_games((0, 1, 1.0), (0, 1, 1.0))),
                             *_games((0, 1, -1.0)))
    assert float(plain.mean[0, 1]) == pytest.approx(1 / 3)


def test_prior_fills_unplayed_pairs_and_shrinks_few_games():
    # prior 0.2, no pseudo-games: unplayed pairs sit at 0.2, played pairs are their plain mean.
    tracker = mm.update_payoff(mm.init_payoff(2, prior=0.2), *_games((0, 1, -1.0)), prior=0.2)
    np.testing.assert_allclose(tracker.mean, [[0.2, -1.0], [0.2, 0.2]])
    # prior 0 worth 2 games: one win -> (1 + 2·0) / (1 + 2) = 1/3; after a window without games
    # (decay 0.5) -> (0.5·1) / (0.5 + 2) = 0.2: an unplayed pair drifts back to the prior.
    kw = dict(prior=0.0, prior_games=2.0, decay=0.5)
    tracker = mm.update_payoff(mm.init_payoff(2), *_games((1, 0, 1.0)), **kw)
    assert float(tracker.mean[1, 0]) == pytest.approx(1 / 3)
    tracker = mm.update_payoff(tracker, *_games((0, 0, 0.0)), **kw)
    assert float(tracker.mean[1, 0]) == pytest.approx(0.2)
    assert float(tracker.mean[0, 1]) == 0.0  # never played: the prior
    # prior -0.5 worth 1 game, two draws: (0 + 0 − 0.5) / (2 + 1) = −1/6.
    kw = dict(prior=-0.5, prior_games=1.0)
    tracker = mm.update_payoff(mm.init_payoff(2, prior=-0.5), *_games((0, 1, 0.0), (0, 1, 0.0)), **kw)
    assert float(tracker.mean[0, 1]) == pytest.approx(-1 / 6) and float(tracker.mean[1, 1]) == -0.5


def test_payoff_config_values_are_checked():
    for bad in (dict(decay=0.0), dict(decay=1.5), dict(prior=2.0), dict(prior_games=-1.0)):
        with pytest.raises(ValueError, match="payoff"):
            PayoffConfig(**bad)


class _Window(NamedTuple):
    is_white: jax.Array
    mover: jax.Array
    rewards: jax.Array
    white_player: jax.Array
    black_player: jax.Array
    terminated: jax.Array


def test_trainer_window_update_reads_the_config():
    # One finished game per window, player 0 (White, seat 0) beats player 1.
    window = _Window(is_white=jnp.bool_([[True]]), mover=jnp.int32([[0]]), rewards=jnp.float32([[[1.0, -1.0]]]),
                     white_player=jnp.int32([[0]]), black_player=jnp.int32([[1]]), terminated=jnp.bool_([[True]]))
    config = PayoffConfig(decay=0.5, prior=0.0, prior_games=1.0)
    tracker = trainer._payoff_update(mm.init_payoff(2), window, config)  # pylint: disable=protected-access
    assert float(tracker.mean[0, 1]) == pytest.approx(0.5)  # (1 + 0) / (1 + 1)
    tracker = trainer._payoff_update(tracker, window, config)  # pylint: disable=protected-access
    assert float(tracker.mean[0, 1]) == pytest.approx((0.5 + 1) / (1.5 + 1))
    default = trainer._payoff_update(mm.init_payoff(2), window)  # pylint: disable=protected-access
    assert float(default.mean[0, 1]) == 1.0
