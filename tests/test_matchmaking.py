"""Interaction graphs, matchup sampling, payoff tracking and the exploiter mask."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from azdb_jax import matchmaking as mm

# Hand-built 4-player payoff, White rows vs Black columns: M = A + 0.1 with A
# antisymmetric (a constant White advantage does not move the equilibria).
# Players 0, 1, 2 are rock-paper-scissors (1 beats 0, 2 beats 1, 0 beats 2);
# player 3 loses to everyone.
_A = np.zeros((4, 4), np.float32)
for _winner, _loser, _margin in [(1, 0, 0.5), (2, 1, 0.5), (0, 2, 0.5),
                                 (0, 3, 0.25), (1, 3, 0.25), (2, 3, 0.25)]:
    _A[_winner, _loser], _A[_loser, _winner] = _margin, -_margin
PAYOFF = _A + np.float32(0.1)
THIRD = 1.0 / 3.0
# Restricted to 0..i the Nash mixtures are e0; e1 (1 dominates 0); uniform over the
# cycle; and, over all four, still uniform over the cycle (3 is never worth playing).
NASH = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [THIRD, THIRD, THIRD, 0], [THIRD, THIRD, THIRD, 0]])
# Rectified: player 2 beats 1, ties itself, loses to 0; player 3 beats or ties nobody in
# its Nash support {0, 1, 2}, so it falls back to self-play.
RECTIFIED = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0, 1]])

_graphs = jax.jit(mm.interaction_graphs, static_argnums=0)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("selfplay", np.eye(4)),
        ("uniform", np.full((4, 4), 0.25)),
        ("fictitious_play", np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]),
        ("psro_nash", NASH),
        ("psro_rectified", RECTIFIED),
        ("psro_cycle", np.vstack([np.eye(4)[[1, 2, 0]], NASH[3:]])),
    ],
)
def test_graph_shapes_on_hand_built_payoff(name, expected):
    graph = _graphs(name, PAYOFF)
    np.testing.assert_allclose(graph.white, expected, atol=2e-3)
    np.testing.assert_allclose(graph.black, expected, atol=2e-3)
    np.testing.assert_allclose(jnp.sum(graph.white, axis=1), 1.0, atol=1e-5)


def test_psro_nash_uses_the_opponent_side():
    # Restricted to {0, 1}: White's Nash is (1/2, 1/2), Black's is (1/4, 3/4). Learner 1 as
    # White faces Black's mixture; as Black it faces White's.
    payoff = jnp.array([[0.6, -0.2], [-0.6, 0.2]])
    graph = _graphs("psro_nash", payoff)
    np.testing.assert_allclose(graph.white, [[1, 0], [0.25, 0.75]], atol=1e-3)
    np.testing.assert_allclose(graph.black, [[1, 0], [0.5, 0.5]], atol=1e-3)
    # 1 loses to 0 over both colours (−0.6 vs −0.2), so rectified keeps only itself.
    rectified = _graphs("psro_rectified", payoff)
    np.testing.assert_allclose(rectified.white, np.eye(2), atol=1e-6)
    np.testing.assert_allclose(rectified.black, np.eye(2), atol=1e-6)


def test_psro_graphs_respect_support_rules_on_random_payoffs():
    rng = np.random.default_rng(3)
    payoff = rng.uniform(-1.0, 1.0, size=(4, 4)).astype(np.float32)  # compiled already
    upper = np.triu(np.ones((4, 4), bool), k=1)
    beats = np.asarray(mm.beats_or_ties(payoff))
    nash_graph = _graphs("psro_nash", payoff)
    rectified = _graphs("psro_rectified", payoff)
    for graph in (*nash_graph, *rectified):
        assert np.all(np.asarray(graph)[upper] == 0.0)  # only players ≤ i
        np.testing.assert_allclose(np.sum(graph, axis=1), 1.0, atol=1e-5)
    for graph in rectified:
        graph = np.asarray(graph)
        assert np.all(graph[~beats] == 0.0)  # only players i beats or ties
    # Row i is the opponent side of the equilibrium of the game on 0..i.
    restricted = jax.jit(jax.vmap(mm.restricted_nash, in_axes=(None, 0)))(
        payoff, jnp.arange(4))
    np.testing.assert_allclose(nash_graph.white, restricted.col_strategy, atol=1e-6)
    np.testing.assert_allclose(nash_graph.black, restricted.row_strategy, atol=1e-6)
    assert float(jnp.max(restricted.exploitability)) <= 1e-5


def test_graphs_compile_once_per_shape():
    graphs = jax.jit(mm.psro_rectified)
    rng = np.random.default_rng(5)
    for _ in range(3):
        graphs(rng.uniform(-1.0, 1.0, size=(4, 4)).astype(np.float32))
    assert graphs._cache_size() == 1  # pylint: disable=protected-access


def test_graphs_for_tiny_teams():
    one = _graphs("psro_cycle", np.zeros((1, 1), np.float32))
    np.testing.assert_allclose(one.white, [[1.0]])
    two = _graphs("psro_cycle", np.array([[0.0, -0.5], [0.5, 0.0]], np.float32))
    np.testing.assert_allclose(two.white, [[1, 0], [0, 1]], atol=1e-3)  # 1 dominates


def test_unknown_graph_lists_valid_names():
    with pytest.raises(ValueError, match="psro_nash.*selfplay|selfplay"):
        mm.interaction_graphs("psro_bogus", PAYOFF)
    with pytest.raises(ValueError, match="square"):
        mm.interaction_graphs("uniform", np.zeros((3, 4)))


def _chi_square_p_value(matchups: mm.Matchup, graph: mm.InteractionGraph) -> float:
    """p-value of the (i, colour, j) counts against P = 1/n · 1/2 · Σ_colour[i, j]."""
    n = graph.white.shape[0]
    colour = 1 - np.asarray(matchups.learner_is_white, np.int64)  # 0 White, 1 Black
    cell = (np.asarray(matchups.learner_id) * 2 + colour) * n + np.asarray(matchups.opponent_id)
    observed = np.bincount(cell, minlength=2 * n * n).astype(np.float64)
    probs = np.stack([graph.white, graph.black], axis=1).astype(np.float64) / (2 * n)
    expected = probs.reshape(-1) * len(cell)
    expected *= len(cell) / expected.sum()
    if np.any(observed[expected == 0] > 0):
        return 0.0
    # Pool sparse cells so the chi-square approximation holds.
    sparse = expected < 5
    observed = np.r_[observed[~sparse], observed[sparse].sum()]
    expected = np.r_[expected[~sparse], expected[sparse].sum()]
    keep = expected > 0
    return stats.chisquare(observed[keep], expected[keep]).pvalue


_sample = jax.jit(functools.partial(mm.sample_matchups, batch_size=200_000))


def _random_graph(seed: int) -> mm.InteractionGraph:
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.ones(4), size=(2, 4)) * (rng.uniform(size=(2, 4, 4)) > 0.3)
    rows[:, np.arange(4), np.arange(4)] += 0.1
    rows /= rows.sum(-1, keepdims=True)
    return mm.InteractionGraph(*rows.astype(np.float32))


@pytest.mark.parametrize(
    "name", ["selfplay", "uniform", "fictitious_play", "psro_nash", "psro_rectified",
             "psro_cycle", "random"]
)
def test_sampled_matchups_follow_the_graph(name):
    graph = _random_graph(0) if name == "random" else _graphs(name, PAYOFF)
    matchups = _sample(graph, jax.random.key(7))
    assert matchups.learner_id.shape == (200_000,)
    assert _chi_square_p_value(matchups, graph) > 1e-3
    white = np.asarray(matchups.learner_is_white)
    np.testing.assert_array_equal(
        matchups.white_id, np.where(white, matchups.learner_id, matchups.opponent_id))
    np.testing.assert_array_equal(
        matchups.black_id, np.where(white, matchups.opponent_id, matchups.learner_id))


def test_chi_square_rejects_a_wrong_graph():
    graph = _random_graph(0)
    matchups = _sample(graph, jax.random.key(7))
    swapped = mm.InteractionGraph(white=graph.black, black=graph.white)
    assert _chi_square_p_value(matchups, swapped) < 1e-3
    nudged = jax.tree.map(lambda g: 0.97 * g + 0.03 / 4, graph)
    assert _chi_square_p_value(matchups, nudged) < 1e-3
    # The sampler draws from Σ_colour, not the reverse colour.
    uniform_matchups = _sample(_graphs("fictitious_play", PAYOFF), jax.random.key(8))
    assert _chi_square_p_value(uniform_matchups, _graphs("uniform", PAYOFF)) < 1e-3


def test_sampling_is_batch_independent():
    graph = _random_graph(1)
    key = jax.random.key(3)
    batched = jax.jit(functools.partial(mm.sample_matchups, batch_size=16))(graph, key)
    keys = jax.random.split(key, 16)
    single = jax.jit(mm.sample_matchup)
    for b in (0, 5, 15):
        for field_batched, field_single in zip(batched, single(graph, keys[b])):
            assert field_batched[b] == field_single


def test_update_payoff_hand_computed():
    tracker = mm.init_payoff(3)
    white = jnp.array([0, 0, 1, 2, 0, 1])
    black = jnp.array([1, 1, 0, 2, 1, 2])
    results = jnp.array([1.0, -1.0, 0.0, 1.0, 1.0, -1.0])
    finished = jnp.array([True, True, True, True, True, False])  # last game still running
    tracker = jax.jit(mm.update_payoff)(tracker, white, black, results, finished)
    counts = np.zeros((3, 3))
    counts[0, 1], counts[1, 0], counts[2, 2] = 3, 1, 1
    mean = np.zeros((3, 3))
    mean[0, 1], mean[2, 2] = 1 / 3, 1.0
    np.testing.assert_allclose(tracker.counts, counts)
    np.testing.assert_allclose(tracker.mean, mean, atol=1e-6)
    # A second batch: running mean over all finished games.
    tracker = mm.update_payoff(
        tracker, jnp.array([0, 1]), jnp.array([1, 2]), jnp.array([-1.0, -1.0]),
        jnp.array([True, True]))
    counts[0, 1], counts[1, 2] = 4, 1
    mean[0, 1], mean[1, 2] = 0.0, -1.0
    np.testing.assert_allclose(tracker.counts, counts)
    np.testing.assert_allclose(tracker.mean, mean, atol=1e-6)


def test_update_payoff_decay_and_batch_independence():
    rng = np.random.default_rng(4)
    white, black = rng.integers(0, 3, size=(2, 20))
    results = rng.choice([-1.0, 0.0, 1.0], size=20)
    finished = rng.uniform(size=20) > 0.2
    batched = mm.update_payoff(mm.init_payoff(3), white, black, results, finished)
    sequential = mm.init_payoff(3)
    update = jax.jit(mm.update_payoff)
    for b in range(20):
        sequential = update(
            sequential, white[b:b + 1], black[b:b + 1], results[b:b + 1], finished[b:b + 1])
    np.testing.assert_allclose(batched.counts, sequential.counts)
    np.testing.assert_allclose(batched.mean, sequential.mean, atol=1e-6)
    # decay: one old win (weight 0.5) and one new loss at (0, 1) -> mean (0.5 - 1) / 1.5.
    one = lambda r: (jnp.array([0]), jnp.array([1]), jnp.array([r]), jnp.array([True]))
    tracker = mm.update_payoff(mm.init_payoff(2), *one(1.0), decay=0.5)
    tracker = mm.update_payoff(tracker, *one(-1.0), decay=0.5)
    np.testing.assert_allclose(tracker.counts[0, 1], 1.5)
    np.testing.assert_allclose(tracker.mean[0, 1], -1.0 / 3.0, atol=1e-6)


def test_exploiter_mask_hand_built_batch():
    movers = jnp.array([
        [2, 0, 2, 0, 2],  # learner 2 (White) vs 0: only 2's moves train
        [1, 3, 1, 3, -1],  # learner 3 (Black) vs 1, padded after the game ended
        [4, 4, 4, 4, 4],  # self-play: both sides are the learner
    ])
    learners = jnp.array([2, 3, 4])
    mask = jax.vmap(mm.exploiter_mask)(movers, learners)
    expected = np.array([
        [1, 0, 1, 0, 1],
        [0, 1, 0, 1, 0],
        [1, 1, 1, 1, 1],
    ], bool)
    np.testing.assert_array_equal(mask, expected)
