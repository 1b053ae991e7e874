"""Sub-additive planning: selection rules on hand-built statistics, the oracle bound, team searches."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import games, networks, planning, search

NEG_INF = -np.inf


def _hand_stats():
    """One position, n = 4 players, A = 4 actions, statistics written by hand.

    player  visits          q                      u                      V     max N  max(Q-U)
    0       [20, 2, 0, 0]   [0.1, 0.0, -, -]       [0.02, 0.1, 0.3, 0.2]  0.1   20     0.08
    1       [10, 1, 0, 0]   [0.3, 0.8, -, -]       [0.05, 0.3, 0.1, 0.1]  0.8   10     0.5
    2       [12, 8, 0, 0]   [0.55, 0.5, -, -]      [0.1, 0.1, 0.05, 0.05] 0.55  12     0.45
    3       [15, 5, 0, 0]   [0.6, 0.7, -, -]       [0.05, 0.02, 0.1, 0.1] 0.7   15     0.68

    visit: max N = 20 -> player 0.     value: max V = 0.8 -> player 1.
    lcb:   max(Q-U) = 0.68 -> player 3 (the unvisited actions' U is never subtracted).
    gap:   G = max U = 0.3 (player 0's unvisited action 2); candidates V >= 0.8 - 0.3 = 0.5:
           players 1 (0.8), 2 (0.55), 3 (0.7); player 0 (0.1) is outside the gap.
           Lowest candidate V -> player 2.
    """
    visits = np.array([[20, 2, 0, 0], [10, 1, 0, 0], [12, 8, 0, 0], [15, 5, 0, 0]], np.int32)
    q = np.array([[0.1, 0.0, NEG_INF, NEG_INF], [0.3, 0.8, NEG_INF, NEG_INF],
                  [0.55, 0.5, NEG_INF, NEG_INF], [0.6, 0.7, NEG_INF, NEG_INF]], np.float32)
    u = np.array([[0.02, 0.1, 0.3, 0.2], [0.05, 0.3, 0.1, 0.1],
                  [0.1, 0.1, 0.05, 0.05], [0.05, 0.02, 0.1, 0.1]], np.float32)
    prior = np.full((4, 4), 0.25, np.float32)
    return planning.TeamRootStatistics(
        visits=jnp.asarray(visits), total_visits=jnp.asarray(visits.sum(-1)), visited=jnp.asarray(visits > 0),
        q=jnp.asarray(q), prior=jnp.asarray(prior), u=jnp.asarray(u),
        value=jnp.asarray(np.array([0.1, 0.8, 0.55, 0.7], np.float32)))


HAND_EXPECTED = {"visit": 0, "value": 1, "lcb": 3, "gap": 2}


@pytest.mark.parametrize("name", sorted(HAND_EXPECTED))
def test_each_rule_picks_its_hand_computed_player(name):
    stats = _hand_stats()
    assert int(planning.select_player(name, stats)) == HAND_EXPECTED[name]
    assert int(jax.jit(planning.SELECTION_RULES[name])(stats)) == HAND_EXPECTED[name]
    assert len(set(HAND_EXPECTED.values())) == 4  # every rule disagrees with the others here


def test_gap_excludes_players_below_the_gap_until_the_gap_widens():
    stats = _hand_stats()
    assert int(planning.select_gap(stats)) == 2  # player 0 (lowest V overall) is outside the gap
    # Widen the gap: G = 0.8 -> threshold 0.0 -> player 0 (V = 0.1) becomes the lowest candidate.
    wide = stats._replace(u=stats.u.at[0, 2].set(0.8))
    assert int(planning.select_gap(wide)) == 0
    # Narrow it: G = 0.2 (player 0's action 3) after shrinking the 0.3's -> threshold 0.6 -> {1, 3} -> 3.
    narrow = stats._replace(u=stats.u.at[0, 2].set(0.1).at[1, 1].set(0.1))
    assert int(planning.select_gap(narrow)) == 3


def test_lcb_ignores_unvisited_actions():
    stats = _hand_stats()
    # A stale, large Q on player 2's unvisited action 2 with a tiny U must not count:
    # only visited actions enter max_a (Q - U).
    stale = stats._replace(q=stats.q.at[2, 2].set(5.0), u=stats.u.at[2, 2].set(0.0))
    assert int(planning.select_lcb(stale)) == 3
    assert int(planning.lcb_action(stale.q[2], stale.u[2], stale.visited[2])) == 0
    # Player 1: Q - U = [0.25, 0.5, -inf, -inf] -> action 1, although action 0 has more visits.
    assert int(planning.lcb_action(stats.q[1], stats.u[1], stats.visited[1])) == 1
    assert int(planning.most_visited_action(stats.visits[1], stats.q[1])) == 0


def test_most_visited_action_breaks_ties_by_q():
    assert int(planning.most_visited_action(jnp.int32([3, 5, 5, 0]), jnp.float32([0.9, 0.1, 0.4, NEG_INF]))) == 2


@pytest.mark.parametrize("move, expected_actions", [("visits", [0, 0, 0, 0]), ("lcb", [0, 1, 1, 0])])
def test_team_move_is_the_chosen_players_move(move, expected_actions):
    stats = _hand_stats()
    names = ["visit", "value", "lcb", "gap"]
    for name, expected_action in zip(names, expected_actions):
        batch = jax.tree.map(lambda x: jnp.stack([x, x[::-1]]), stats)  # position 2: players reversed
        player, action = planning.team_move(batch, name, move=move)
        expected_player = HAND_EXPECTED[name]
        np.testing.assert_array_equal(player, [expected_player, 3 - expected_player])
        np.testing.assert_array_equal(action, [expected_action, expected_action])


def test_unknown_rule_and_move_raise():
    with pytest.raises(ValueError, match="unknown selection rule 'majority'.*visit, value, lcb, gap"):
        planning.select_player("majority", _hand_stats())
    batch = jax.tree.map(lambda x: x[None], _hand_stats())
    with pytest.raises(ValueError, match="valid rules"):
        planning.team_move(batch, "best", move="visits")
    with pytest.raises(ValueError, match="move must be one of"):
        planning.team_move(batch, "visit", move="prior")


def _random_stats(rng, batch, n, num_actions):
    visits = rng.integers(0, 6, (batch, n, num_actions)) * (rng.random((batch, n, num_actions)) < 0.6)
    visits[..., 0] += 1  # every search visits something
    visited = visits > 0
    q = np.where(visited, rng.uniform(-1, 1, visits.shape), -np.inf).astype(np.float32)
    u = rng.uniform(0, 0.5, visits.shape).astype(np.float32)
    return planning.TeamRootStatistics(
        visits=jnp.asarray(visits, jnp.int32), total_visits=jnp.asarray(visits.sum(-1), jnp.int32),
        visited=jnp.asarray(visited), q=jnp.asarray(q), prior=jnp.full(visits.shape, 1.0 / num_actions),
        u=jnp.asarray(u), value=jnp.asarray(q.max(-1)))


def test_max_over_latents_bounds_every_rule():
    rng = np.random.default_rng(0)
    strictly_better = 0
    for _ in range(20):
        stats = _random_stats(rng, batch=64, n=int(rng.integers(2, 6)), num_actions=4)
        correct = jnp.asarray(rng.random(stats.value.shape) < rng.uniform(0.1, 0.6))
        oracle = planning.max_over_latents(correct)
        np.testing.assert_array_equal(oracle, np.asarray(correct).any(-1))
        for name in planning.SELECTION_RULES:
            player, _ = planning.team_move(stats, name, move="visits")
            solved = planning.solved_by(correct, player)
            assert not np.any(np.asarray(solved) & ~np.asarray(oracle))
            assert float(oracle.mean()) >= float(solved.mean())
            strictly_better += float(oracle.mean()) > float(solved.mean())
    assert strictly_better > 0  # the bound is not vacuous


def test_rules_match_a_numpy_reference_on_random_statistics():
    rng = np.random.default_rng(1)
    stats = _random_stats(rng, batch=200, n=4, num_actions=5)
    visits, q, u, v = (np.asarray(x) for x in (stats.visits, stats.q, stats.u, stats.value))
    lcb = np.where(np.asarray(stats.visited), q - u, -np.inf)
    for b in range(visits.shape[0]):
        gap = u[b].max()
        cands = [j for j in range(4) if v[b, j] >= v[b].max() - gap]
        expected = {"visit": visits[b].max(-1).argmax(), "value": v[b].argmax(), "lcb": lcb[b].max(-1).argmax(),
                    "gap": min(cands, key=lambda j: (v[b, j], j))}
        one = jax.tree.map(lambda x: x[b], stats)
        for name, want in expected.items():
            assert int(planning.select_player(name, one)) == want, (name, b)


# ------------------------------------------------------------------ searches on tic-tac-toe


@functools.lru_cache(maxsize=None)
def _ttt_setup():
    env = games.make("tic_tac_toe")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=3)
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), 2))
    states = jax.vmap(env.step)(states, jnp.int32([4, 0]))
    params = net.init(jax.random.PRNGKey(0), states.observation)
    return env, net, params, states


CONFIG = search.SearchConfig(num_simulations=8)
LAM = jnp.float32([1.0, 0.5, 0.7])


@functools.lru_cache(maxsize=None)
def _jitted():
    """Jitted searches (one compile each; eager mctx is slow on CPU)."""
    env, net, _, _ = _ttt_setup()
    team = jax.jit(lambda params, key, states, lam, players: planning.team_search(
        env, net.apply, params, key, states, num_players=3, lam=lam, config=CONFIG, players=players))
    single = jax.jit(lambda params, key, states, player, lam: search.root_statistics(search.run_search(
        env, net.apply, params, key, states, player, lam, config=CONFIG, add_noise=False), config=CONFIG))
    homo = jax.jit(lambda params, key, states: planning.homogeneous_search(
        env, net.apply, params, key, states, num_copies=4, config=CONFIG))
    return team, single, homo


@pytest.mark.slow
def test_team_search_matches_separate_searches_per_player():
    env, net, params, states = _ttt_setup()
    team_fn, single_fn, _ = _jitted()
    team = team_fn(params, jax.random.PRNGKey(1), states, LAM, None)
    s = team.stats
    assert s.visits.shape == s.q.shape == s.prior.shape == s.u.shape == (2, 3, 9)
    assert s.value.shape == s.total_visits.shape == team.most_visited_action.shape == team.lcb_action.shape == (2, 3)
    np.testing.assert_array_equal(s.total_visits, CONFIG.num_simulations)
    for j in range(3):
        ref = single_fn(params, jax.random.PRNGKey(1), states, jnp.full(2, j), jnp.full(2, LAM[j]))
        # The clean prior comes from the same network call: equal up to float round-off.
        np.testing.assert_allclose(s.prior[:, j], ref.prior, rtol=1e-5, atol=1e-7)
        # Without root noise the search differs only by mctx's 1e-7 tie-break noise, which
        # cannot flip a choice between distinct random-init priors: the trees agree.
        np.testing.assert_array_equal(s.visits[:, j], ref.visits)
        np.testing.assert_allclose(s.q[:, j], ref.q, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.value[:, j], ref.value, rtol=1e-5, atol=1e-6)
        net_value = net.apply(params, states.observation, jnp.full(2, j)).value
        np.testing.assert_allclose(team.network_value[:, j], net_value, rtol=1e-5, atol=1e-6)
        ref_visits, ref_q = np.asarray(ref.visits), np.asarray(ref.q)
        for b in range(2):  # most visited, ties by the higher Q
            tied = np.flatnonzero(ref_visits[b] == ref_visits[b].max())
            assert team.most_visited_action[b, j] == tied[np.argmax(ref_q[b, tied])]
    # Latents condition the network: different players, different priors.
    assert not np.allclose(s.prior[:, 0], s.prior[:, 1])
    assert not np.allclose(s.prior[:, 1], s.prior[:, 2])
    # Illegal moves get no prior and no visits.
    legal = np.asarray(states.legal_action_mask)[:, None, :]
    assert np.all(np.asarray(s.visits)[~np.broadcast_to(legal, s.visits.shape)] == 0)
    player, action = planning.team_move(s, "gap", move="lcb")
    assert np.all(legal[np.arange(2), 0, np.asarray(action)])
    assert player.shape == (2,)


@pytest.mark.slow
def test_team_search_players_subset_and_scalar_lambda():
    env, net, params, states = _ttt_setup()
    full = _jitted()[0](params, jax.random.PRNGKey(1), states, LAM, None)
    sub = planning.team_search(env, net.apply, params, jax.random.PRNGKey(1), states,
                               num_players=3, lam=1.0, config=search.SearchConfig(num_simulations=1),
                               players=jnp.int32([2, 0]))
    assert sub.stats.prior.shape == (2, 2, 9)
    np.testing.assert_array_equal(sub.players, [2, 0])
    np.testing.assert_allclose(sub.stats.prior[:, 0], full.stats.prior[:, 2], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(sub.stats.prior[:, 1], full.stats.prior[:, 0], rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_homogeneous_search_repeats_latent_zero():
    env, net, params, states = _ttt_setup()
    _, single_fn, homo_fn = _jitted()
    homo = homo_fn(params, jax.random.PRNGKey(2), states)
    assert homo.stats.visits.shape == (2, 4, 9)
    np.testing.assert_array_equal(homo.players, 0)
    prior = np.asarray(homo.stats.prior)
    np.testing.assert_array_equal(prior, np.broadcast_to(prior[:, :1], prior.shape))
    ref = single_fn(params, jax.random.PRNGKey(2), states, jnp.zeros(2, jnp.int32), jnp.ones(2))
    np.testing.assert_allclose(prior[:, 0], ref.prior, rtol=1e-5, atol=1e-7)
    # Root noise differs per copy: the copies do not all search alike.
    visits = np.asarray(homo.stats.visits)
    assert any(not np.array_equal(visits[:, 0], visits[:, k]) for k in range(1, 4))
    with pytest.raises(ValueError, match="num_copies"):
        planning.homogeneous_search(env, net.apply, params, jax.random.PRNGKey(2), states,
                                    num_copies=0, config=CONFIG)
