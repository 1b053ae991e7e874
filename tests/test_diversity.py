"""Behavioural diversity: ψ statistics, nearest neighbours, Eq. 7-8 and the search hooks."""

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import diversity

# ---------------------------------------------------------------------------------------
# Expected features ψ
# ---------------------------------------------------------------------------------------


def _random_batch(rng, shape, num_players, num_features):
    phi = (rng.random(shape + (num_features,)) < 0.3).astype(np.float32)
    player = rng.integers(0, num_players, size=shape)
    own = rng.random(shape) < 0.6
    colour = rng.integers(0, 2, size=shape)
    valid = rng.random(shape) < 0.8
    return phi, player, own, colour, valid


def _numpy_means(phi, player, own, colour, valid, num_players):
    """Per-player (and per-colour) sums and counts with a plain loop."""
    phi = phi.reshape(-1, phi.shape[-1])
    player, own, colour, valid = (x.reshape(-1) for x in (player, own, colour, valid))
    sums = np.zeros((num_players, phi.shape[1]))
    counts = np.zeros(num_players)
    sums_c = np.zeros((num_players, 2, phi.shape[1]))
    counts_c = np.zeros((num_players, 2))
    for t in range(len(player)):
        if own[t] and valid[t]:
            sums[player[t]] += phi[t]
            counts[player[t]] += 1
            sums_c[player[t], colour[t]] += phi[t]
            counts_c[player[t], colour[t]] += 1
    return sums, counts, sums_c, counts_c


@pytest.mark.parametrize("shape", [(50,), (4, 13)])
def test_feature_statistics_match_numpy_loop(shape):
    rng = np.random.default_rng(0)
    batch = _random_batch(rng, shape, num_players=4, num_features=6)
    stats = diversity.feature_statistics(*map(jnp.asarray, batch), num_players=4)
    sums, counts, sums_c, counts_c = _numpy_means(*batch, num_players=4)
    np.testing.assert_allclose(stats.sum, sums, rtol=1e-6)
    np.testing.assert_array_equal(stats.count, counts)
    np.testing.assert_allclose(stats.sum_by_colour, sums_c, rtol=1e-6)
    np.testing.assert_array_equal(stats.count_by_colour, counts_c)
    # The colour split adds up to the totals.
    np.testing.assert_allclose(stats.sum_by_colour.sum(axis=1), stats.sum, rtol=1e-6)
    np.testing.assert_array_equal(stats.count_by_colour.sum(axis=1), stats.count)


def test_expected_features_ema():
    rng = np.random.default_rng(1)
    n, f, rate = 3, 5, 0.25
    state = diversity.init_expected_features(n, f)
    assert state.psi.shape == (n, f) and state.psi_by_colour.shape == (n, 2, f)
    assert not state.initialised.any()

    # Batch 1: player 2 never moves (only its opponent's moves are recorded for it).
    phi1, player1, own1, colour1, valid1 = _random_batch(rng, (40,), 2, f)
    player1[:5], own1[:5] = 2, False
    state1 = diversity.update_expected_features(
        state, phi1, player1, own1, colour1, valid1, rate=rate
    )
    sums, counts, sums_c, counts_c = _numpy_means(phi1, player1, own1, colour1, valid1, n)
    mean1 = sums[:2] / counts[:2, None]
    np.testing.assert_allclose(state1.psi[:2], mean1, rtol=1e-6)  # initialised, no EMA
    np.testing.assert_array_equal(state1.psi[2], np.zeros(f))
    np.testing.assert_array_equal(state1.initialised, [True, True, False])
    np.testing.assert_allclose(
        state1.psi_by_colour[:2], sums_c[:2] / counts_c[:2, :, None], rtol=1e-6
    )
    # After the first batch ψ is the count-weighted mix of the colour split.
    mixed = (state1.psi_by_colour * counts_c[:, :, None]).sum(1) / np.maximum(counts, 1)[:, None]
    np.testing.assert_allclose(mixed[:2], state1.psi[:2], rtol=1e-5)

    # Batch 2: player 0 absent, players 1 and 2 present.
    phi2, player2, own2, colour2, valid2 = _random_batch(rng, (40,), n, f)
    player2 = np.where(player2 == 0, 1, player2)
    state2 = diversity.update_expected_features(
        state1, phi2, player2, own2, colour2, valid2, rate=rate
    )
    sums2, counts2, _, _ = _numpy_means(phi2, player2, own2, colour2, valid2, n)
    mean2 = sums2 / np.maximum(counts2, 1)[:, None]
    np.testing.assert_array_equal(state2.psi[0], state1.psi[0])  # absent: kept
    np.testing.assert_allclose(
        state2.psi[1], (1 - rate) * np.asarray(state1.psi[1]) + rate * mean2[1], rtol=1e-6
    )
    np.testing.assert_allclose(state2.psi[2], mean2[2], rtol=1e-6)  # first batch for it
    np.testing.assert_array_equal(state2.initialised, [True, True, True])


def test_update_expected_features_jit_matches_eager():
    rng = np.random.default_rng(2)
    batch = tuple(map(jnp.asarray, _random_batch(rng, (64,), 3, 7)))
    state = diversity.init_expected_features(3, 7)
    eager = diversity.update_expected_features(state, *batch, rate=0.1)
    jitted = jax.jit(lambda s, *b: diversity.update_expected_features(s, *b, rate=0.1))(
        state, *batch
    )
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("rate", [0.0, 1.5, -0.1])
def test_update_expected_features_rejects_bad_rate(rate):
    state = diversity.init_expected_features(2, 3)
    zeros = jnp.zeros((4,), jnp.int32)
    with pytest.raises(ValueError, match="rate"):
        diversity.update_expected_features(
            state, jnp.zeros((4, 3)), zeros, zeros == 0, zeros, zeros == 0, rate=rate
        )


# ---------------------------------------------------------------------------------------
# Nearest neighbours and the objective (Eq. 7)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 6])
def test_nearest_neighbours_match_brute_force(n):
    rng = np.random.default_rng(n)
    psi = rng.normal(size=(n, 9)).astype(np.float32)
    out = diversity.nearest_neighbours(jnp.asarray(psi))
    for i in range(n):
        dists = {j: np.linalg.norm(psi[i] - psi[j]) for j in range(n) if j != i}
        j_star = min(dists, key=dists.get)
        assert int(out.index[i]) == j_star
        np.testing.assert_allclose(out.distance[i], dists[j_star], rtol=1e-5)


def test_single_player_has_no_neighbour():
    psi = jnp.array([[0.3, 0.7, 0.1]])
    out = diversity.nearest_neighbours(psi)
    np.testing.assert_array_equal(out.index, [0])
    np.testing.assert_array_equal(out.distance, [0.0])
    assert float(diversity.diversity_objective(psi, jnp.zeros(1), l0=1.0)) == 0.0
    reward = diversity.intrinsic_reward(jnp.ones(3), psi[0], psi[out.index[0]], l0=1.0)
    assert float(reward) == 0.0


def test_objective_three_players_by_hand():
    # Distances: |ψ0 ψ1| = 3, |ψ0 ψ2| = 5, |ψ1 ψ2| = 4, so j* = (1, 0, 1), d = (3, 3, 4).
    psi = jnp.array([[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]])
    lams = jnp.array([1.0, 0.5, 0.5])
    # ℓ0 = 4: player 0 weighs 0; player 1: 0.5 (4.5 − 0.2·243/64) = 1.8703125;
    # player 2: 0.5 (8 − 0.2·1024/64) = 2.4.
    value = diversity.diversity_objective(psi, lams, l0=4.0)
    np.testing.assert_allclose(value, 1.8703125 + 2.4, rtol=1e-6)
    np.testing.assert_array_equal(diversity.nearest_neighbours(psi).index, [1, 0, 1])


# ---------------------------------------------------------------------------------------
# The intrinsic reward is the gradient of the player's term (Eq. 4, 7 -> 8)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, l0", list(itertools.product([2, 3, 5], [0.5, 1.0, 3.0])))
def test_intrinsic_reward_is_gradient_of_player_term(n, l0):
    rng = np.random.default_rng(10 * n + int(4 * l0))
    psi = jnp.asarray(rng.random((n, 8)), jnp.float32)
    phi = jnp.asarray(rng.random((4, 8)) < 0.5, jnp.float32)

    def rewards_fn(i):
        psi_nn = psi[diversity.nearest_neighbour(psi, i).index]
        return jax.vmap(lambda p: diversity.intrinsic_reward(p, psi[i], psi_nn, l0=l0))(phi)

    def grad_fixed(i, lam):
        psi_nn = psi[diversity.nearest_neighbour(psi, i).index]
        return jax.grad(lambda x: diversity.player_diversity(x, psi_nn, lam, l0=l0))(psi[i])

    # j* recomputed inside the differentiated function: argmin is piecewise constant,
    # so the gradient is the one with j* held fixed.
    def grad_recomputed(i):
        def term(x):
            team = psi.at[i].set(x)
            return diversity.player_diversity(
                x, team[diversity.nearest_neighbour(team, i).index], 0.0, l0=l0
            )

        return jax.grad(term)(psi[i])

    players = jnp.arange(n)
    rewards = jax.jit(jax.vmap(rewards_fn))(players)  # [n, 4]
    for lam in (0.0, 0.3):
        grads = jax.jit(jax.vmap(grad_fixed, in_axes=(0, None)))(players, lam)  # [n, F]
        np.testing.assert_allclose(grads @ phi.T, (1 - lam) * rewards, rtol=2e-4, atol=1e-6)
    grads = jax.jit(jax.vmap(grad_recomputed))(players)
    np.testing.assert_allclose(grads @ phi.T, rewards, rtol=2e-4, atol=1e-6)


def test_reward_is_player_term_gradient_not_whole_objective():
    # Two players are each other's neighbour: ψ_0 enters both terms, so the gradient of
    # the whole objective is twice player 0's own term's gradient; Eq. 8 is the latter.
    psi = jnp.array([[0.2, 0.5, 0.1], [0.6, 0.1, 0.3]])
    phi = jnp.array([1.0, 0.0, 1.0])
    lams = jnp.zeros(2)
    whole = jax.grad(lambda p: diversity.diversity_objective(p, lams, l0=1.0))(psi)[0]
    reward = diversity.intrinsic_reward(phi, psi[0], psi[1], l0=1.0)
    np.testing.assert_allclose(phi @ whole, 2 * reward, rtol=1e-5)


def test_reward_vanishes_at_l0_and_changes_sign():
    psi_i, psi_j = jnp.array([0.0, 0.0, 0.0]), jnp.array([0.3, 0.4, 0.0])  # d = 0.5
    phi = jnp.array([-1.0, -1.0, 1.0])  # φ·(ψ_i − ψ_j) = 0.7
    at_l0 = diversity.intrinsic_reward(phi, psi_i, psi_j, l0=0.5)
    grad = jax.grad(lambda x: diversity.player_diversity(x, psi_j, 0.0, l0=0.5))(psi_i)
    np.testing.assert_allclose(at_l0, 0.0, atol=1e-6)
    np.testing.assert_allclose(grad, np.zeros(3), atol=1e-6)
    # ℓ0 = 1: (1 − 0.125)·0.7 (repulsion); ℓ0 = 0.25: (1 − 8)·0.7 (attraction).
    np.testing.assert_allclose(
        diversity.intrinsic_reward(phi, psi_i, psi_j, l0=1.0), 0.6125, rtol=1e-5
    )
    np.testing.assert_allclose(
        diversity.intrinsic_reward(phi, psi_i, psi_j, l0=0.25), -4.9, rtol=1e-5
    )


def test_intrinsic_reward_vmap_is_batch_independent():
    rng = np.random.default_rng(3)
    phi = jnp.asarray(rng.random((6, 5)), jnp.float32)
    psi_i = jnp.asarray(rng.random((6, 5)), jnp.float32)
    psi_j = jnp.asarray(rng.random((6, 5)), jnp.float32)
    batched = jax.vmap(lambda a, b, c: diversity.intrinsic_reward(a, b, c, l0=0.7))(
        phi, psi_i, psi_j
    )
    for b in range(6):
        single = diversity.intrinsic_reward(phi[b], psi_i[b], psi_j[b], l0=0.7)
        np.testing.assert_allclose(batched[b], single, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# Reward mix (Eq. 6) and search hooks (SPEC §1.8)
# ---------------------------------------------------------------------------------------


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


def test_search_hooks_reduce_exactly_to_alphazero():
    rng = np.random.default_rng(4)
    r_e = jnp.asarray(np.concatenate([rng.choice([-1.0, 0.0, 1.0], 13), [-0.0, 0.3, -0.7]]))
    v = jnp.asarray(np.concatenate([np.tanh(rng.normal(size=13)), [-0.0, 0.99, -1.0]]))
    r_d = jnp.asarray(np.concatenate([rng.normal(size=13) * 50, [np.nan, np.inf, -np.inf]]))
    v_d = r_d[::-1]
    flag = jnp.asarray(rng.random(16) < 0.5)
    hooks = jax.vmap(
        lambda re, rd, vv, vd, f, lam: (
            diversity.search_transition_reward(re, rd, lam, f),
            diversity.search_leaf_value(vv, vd, lam, f),
            diversity.mixed_reward(re, rd, lam),
        ),
        in_axes=(0, 0, 0, 0, 0, None),
    )
    for fn in (hooks, jax.jit(hooks)):
        for lam in (1.0, jnp.float32(1.0)):
            reward, value, mixed = fn(r_e, r_d, v, v_d, flag, lam)
            np.testing.assert_array_equal(_bits(reward), _bits(r_e))
            np.testing.assert_array_equal(_bits(mixed), _bits(r_e))
            np.testing.assert_array_equal(_bits(value), _bits(v))


def test_search_hooks_mix_by_hand():
    lam = 0.5
    assert float(diversity.search_transition_reward(1.0, 0.4, lam, True)) == pytest.approx(0.7)
    assert float(diversity.search_transition_reward(1.0, 0.4, lam, False)) == pytest.approx(0.5)
    assert float(diversity.search_transition_reward(-1.0, 3.0, lam, True)) == pytest.approx(1.0)
    assert float(diversity.search_leaf_value(-0.6, 2.0, lam, True)) == pytest.approx(0.7)
    assert float(diversity.search_leaf_value(-0.6, 2.0, lam, False)) == pytest.approx(-0.3)
    assert float(diversity.mixed_reward(0.0, 0.8, 0.25)) == pytest.approx(0.6)
    assert float(diversity.search_leaf_value(0.2, 5.0, 0.0, True)) == pytest.approx(5.0)


def test_objective_gradient_is_finite_when_players_coincide():
    psi = jnp.array([[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]])
    grad = jax.grad(lambda p: diversity.diversity_objective(p, jnp.zeros(3), l0=1.0))(psi)
    assert np.isfinite(np.asarray(grad)).all()


@pytest.mark.parametrize("l0", [0.0, -1.0])
def test_rejects_non_positive_l0(l0):
    with pytest.raises(ValueError, match="l0"):
        diversity.intrinsic_reward(jnp.ones(2), jnp.zeros(2), jnp.ones(2), l0=l0)
    with pytest.raises(ValueError, match="l0"):
        diversity.diversity_objective(jnp.eye(2), jnp.zeros(2), l0=l0)


def test_team_intrinsic_reward_looks_up_the_neighbour():
    rng = np.random.default_rng(5)
    psi = jnp.asarray(rng.random((4, 6)), jnp.float32)
    phi = jnp.asarray(rng.random((4, 6)) < 0.5, jnp.float32)
    players = jnp.array([0, 3, 1, 1])
    hook = functools.partial(diversity.team_intrinsic_reward, l0=0.8)
    rewards = jax.vmap(hook, in_axes=(None, 0, 0))(psi, phi, players)
    index = diversity.nearest_neighbours(psi).index
    for b, i in enumerate(np.asarray(players)):
        expected = diversity.intrinsic_reward(phi[b], psi[i], psi[index[i]], l0=0.8)
        np.testing.assert_allclose(rewards[b], expected, rtol=1e-6)
