"""The mctx search over pgx games: mates, negamax signs, the λ = 1 reduction, root statistics."""

import functools

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import diversity, features, games, networks, search
from azdb_jax.envs import chess_interop
from azdb_jax.networks import NetOutput

# Mate-in-one positions, each checked with python-chess below.
MATE_IN_ONE = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4",  # Qxf7#
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",  # Rd8#
    "3r2k1/8/8/8/8/8/5PPP/6K1 b - - 0 1",  # ...Rd1#
    "k7/8/1K6/8/8/8/8/7R w - - 0 1",  # Rh8#
    "r1b1kbnr/pppp1ppp/2n5/4p3/2B1P2q/5N2/PPPP1PPP/RNBQK2R b KQkq - 5 4",  # ...Qxf2#? python-chess decides
]


def _uniform_net(num_actions, value_fn=None):
    """Uniform policy; value from ``value_fn(obs)`` (default 0): a stand-in network."""

    def apply(params, obs, player):
        del params, player
        batch = obs.shape[0]
        value = jnp.zeros(batch) if value_fn is None else value_fn(obs)
        return NetOutput(jnp.zeros((batch, num_actions)), value, jnp.zeros(batch))

    return apply


def _mate_positions():
    """(FEN, set of mating UCI moves) for the positions that python-chess confirms."""
    fens = []
    for fen in MATE_IN_ONE:
        board = chess.Board(fen)
        mates = {m.uci() for m in board.legal_moves if _mates(board, m)}
        if board.is_valid() and mates:
            fens.append((fen, mates))
    return fens


def _mates(board, move):
    board = board.copy(stack=False)
    board.push(move)
    return board.is_checkmate()


@pytest.mark.slow
def test_puct_finds_mate_in_one_in_chess():
    env = games.make("chess")
    positions = _mate_positions()
    assert len(positions) >= 3
    states = chess_interop.states_from_fens([fen for fen, _ in positions])
    batch = len(positions)
    # A draw for unvisited moves lets every move be tried once; the mate is then worth +1
    # through the game's terminal reward, and the search keeps returning to it.
    config = search.SearchConfig(num_simulations=160, unvisited_q=0.0)
    out = jax.jit(lambda key: search.run_search(
        env, _uniform_net(env.num_actions), None, key, states, jnp.zeros(batch, jnp.int32), jnp.ones(batch),
        config=config, add_noise=False))(jax.random.PRNGKey(0))
    visits = np.asarray(out.visits)
    for b, (fen, mates) in enumerate(positions):
        best = chess_interop.action_to_uci(int(visits[b].argmax()), chess.Board(fen))
        assert best in mates, (fen, best, mates)


def _nim_value_one_counter(obs):
    """0.25 for the side to move when exactly one counter is left, else 0."""
    sizes = jnp.argmax(obs[..., 0], axis=-1)  # [B, K]
    return jnp.where(sizes.sum(-1) == 1, 0.25, 0.0)


def test_negamax_signs_on_two_ply_tree():
    # Nim (1, 1): whatever the root player takes, the opponent takes the last counter.
    # Root child c = [1 counter left]: value 0.25 for the opponent to move (1 ply), and
    # one move to a terminal state that pays the opponent +1 (2 plies). For the root
    # player, Q(root, a) after n visits = (-0.25 + (n - 1) * (-1)) / n.
    env = games.make("nim", heaps=(1, 1))
    state = jax.vmap(lambda k: env.state_from_heaps(jnp.int32([1, 1]), 0))(jax.random.split(jax.random.PRNGKey(0), 1))
    config = search.SearchConfig(num_simulations=7, unvisited_q=0.0)
    out = search.run_search(env, _uniform_net(env.num_actions, _nim_value_one_counter), None, jax.random.PRNGKey(1),
                            state, jnp.zeros(1, jnp.int32), jnp.ones(1), config=config, add_noise=False)
    visits = np.asarray(out.visits[0])
    q = np.asarray(out.qvalues[0])
    assert visits.sum() == 7 and set(np.flatnonzero(visits)) == {0, 1}  # take from heap 0 or heap 1
    for a in (0, 1):
        n = visits[a]
        np.testing.assert_allclose(q[a], (-0.25 - (n - 1)) / n, rtol=1e-6)
    stats = search.root_statistics(out, config=config)
    np.testing.assert_allclose(stats.value[0], q.max(), rtol=1e-6)


@functools.lru_cache(maxsize=None)
def _ttt_setup(num_players=3):
    env = games.make("tic_tac_toe")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=num_players)
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), 4))
    states = jax.vmap(env.step)(states, jnp.int32([4, 0, 8, 2]))
    params = net.init(jax.random.PRNGKey(0), states.observation)
    return env, net, params, states


@pytest.mark.slow
def test_lambda_one_is_bit_identical_to_plain_alphazero():
    env, net, params, states = _ttt_setup()
    phi_fn = features.feature_fn(env)
    psi = jax.random.uniform(jax.random.PRNGKey(5), (3, features.num_features(env)))
    reward_fn = functools.partial(diversity.team_intrinsic_reward, l0=0.5)
    player = jnp.int32([0, 1, 2, 1])
    config = search.SearchConfig(num_simulations=24)
    key = jax.random.PRNGKey(7)
    plain = search.run_search(env, net.apply, params, key, states, player, jnp.ones(4), config=config, add_noise=True)
    hooked = search.run_search(env, net.apply, params, key, states, player, jnp.ones(4), config=config,
                               add_noise=True, feature_fn=phi_fn, intrinsic_reward_fn=reward_fn, hook_params=psi)
    for a, b in zip(jax.tree.leaves(plain.tree), jax.tree.leaves(hooked.tree)):
        if a.dtype != jnp.int8:  # embeddings' dropped observation placeholder
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(hooked.search_value_intrinsic, 0.0)  # no intrinsic part at λ = 1
    # ... while λ < 1 does change the search (the hook is live).
    mixed = search.run_search(env, net.apply, params, key, states, player, jnp.full(4, 0.5), config=config,
                              add_noise=True, feature_fn=phi_fn, intrinsic_reward_fn=reward_fn, hook_params=psi)
    assert not np.array_equal(plain.tree.node_values, mixed.tree.node_values)
    assert np.all(np.abs(np.asarray(mixed.search_value_intrinsic)) > 0)
    # λ = 0: every reward and value is intrinsic (tic-tac-toe's results are scaled by λ = 0).
    intrinsic_only = search.run_search(env, net.apply, params, key, states, player, jnp.zeros(4), config=config,
                                       add_noise=True, feature_fn=phi_fn, intrinsic_reward_fn=reward_fn,
                                       hook_params=psi)
    np.testing.assert_allclose(intrinsic_only.search_value_intrinsic, intrinsic_only.search_value, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("num_simulations", [5, 17])
@pytest.mark.slow
def test_root_u_reproduces_the_next_root_selection(num_simulations):
    env, net, params, states = _ttt_setup()
    config = search.SearchConfig(num_simulations=num_simulations, pb_c_init=1.25, pb_c_base=19652.0)
    player = jnp.int32([0, 1, 2, 0])
    run = lambda n: search.run_search(  # noqa: E731
        env, net.apply, params, jax.random.PRNGKey(11), states, player, jnp.ones(4),
        config=search.SearchConfig(num_simulations=n), add_noise=False)
    before, after = run(num_simulations), run(num_simulations + 1)
    stats = search.root_statistics(before, config=config)
    np.testing.assert_array_equal(stats.total_visits, num_simulations)
    q_norm = jnp.where(stats.visited, (stats.q + 1.0) / 2.0, 0.0)  # unvisited count as a loss
    score = jnp.where(states.legal_action_mask, q_norm + stats.u, -jnp.inf)
    chosen = np.asarray(after.visits - stats.visits).argmax(-1)
    np.testing.assert_array_equal(np.asarray(score).argmax(-1), chosen)


def test_root_statistics_prior_is_clean_and_invalid_actions_never_visited():
    env, net, params, states = _ttt_setup()
    config = search.SearchConfig(num_simulations=32)
    out = search.run_search(env, net.apply, params, jax.random.PRNGKey(2), states, jnp.zeros(4, jnp.int32),
                            jnp.ones(4), config=config, add_noise=True)
    stats = search.root_statistics(out, config=config)
    clean = jax.nn.softmax(jnp.where(states.legal_action_mask,
                                     net.apply(params, states.observation, jnp.zeros(4, jnp.int32)).policy_logits,
                                     -jnp.inf))
    np.testing.assert_allclose(stats.prior, clean, rtol=1e-5, atol=1e-7)
    noisy = jax.nn.softmax(out.search_prior_logits)
    assert not np.allclose(noisy, clean)  # the tree's copy carries the Dirichlet noise
    assert not np.asarray(stats.visited & ~states.legal_action_mask).any()


@pytest.mark.slow
def test_root_noise_is_dirichlet_over_the_legal_moves_only():
    from scipy import stats as scipy_stats

    env = games.make("chess")
    states = chess_interop.states_from_fens([chess.STARTING_FEN] * 2)  # 20 legal moves of 4,672 actions
    legal = np.asarray(states.legal_action_mask)
    config = search.SearchConfig(num_simulations=4)
    out = search.run_search(env, _uniform_net(env.num_actions), None, jax.random.PRNGKey(0), states,
                            jnp.zeros(2, jnp.int32), jnp.ones(2), config=config, add_noise=True)
    noisy = np.asarray(jax.nn.softmax(out.search_prior_logits), np.float64)
    eps, clean = config.dirichlet_fraction, legal / legal.sum(-1, keepdims=True)
    eta = (noisy - (1 - eps) * clean) / eps  # the noise itself: a distribution over the legal moves
    np.testing.assert_allclose(eta[~legal], 0.0, atol=1e-6)
    assert (eta[legal] > -1e-6).all()
    np.testing.assert_allclose(eta.sum(-1), 1.0, atol=1e-5)
    assert 0.5 * np.abs(noisy - clean).sum(-1).min() > 0.05  # the noise moves the prior visibly
    assert not np.allclose(noisy[0], noisy[1])  # each game draws its own
    # Many draws: mean and variance of Dir(α) on K = 20 legal moves (scipy). Drawn on 32 slots,
    # which hold every legal move here, so each draw is bit for bit the full-width one
    # (checked on one key), at 32 instead of 4,672 Gamma draws per sample.
    logits = jnp.where(states.legal_action_mask[:1], 0.0, jnp.finfo(jnp.float32).min)
    draw = lambda k, slots: search.dirichlet_noised_logits(  # noqa: E731
        k, logits, states.legal_action_mask[:1], alpha=0.3, fraction=1.0, num_candidates=slots)
    np.testing.assert_array_equal(np.asarray(draw(jax.random.PRNGKey(1), 32)),
                                  np.asarray(draw(jax.random.PRNGKey(1), None)))
    draws = jax.jit(jax.vmap(lambda k: draw(k, 32)))(jax.random.split(jax.random.PRNGKey(1), 4000))
    samples = np.asarray(jax.nn.softmax(draws, axis=-1))[:, 0][:, legal[0]]
    reference = scipy_stats.dirichlet(np.full(20, 0.3))
    np.testing.assert_allclose(samples.mean(0), reference.mean(), atol=0.01)
    np.testing.assert_allclose(samples.var(0).mean(), reference.var().mean(), rtol=0.1)


@pytest.mark.slow
def test_root_noise_on_the_slots_equals_the_full_draw():
    # Each legal move's Gamma draw is keyed by its action id, so drawing only for the K
    # slots a search holds gives the full-width draw bit for bit when every legal move fits
    # (20 on the chess start, K = 64), and a crowded node keeps its K highest-prior moves.
    states = chess_interop.states_from_fens([chess.STARTING_FEN] * 3)
    legal = states.legal_action_mask
    logits = jnp.where(legal, jax.random.normal(jax.random.PRNGKey(2), legal.shape), jnp.finfo(jnp.float32).min)
    draw = lambda k: search.dirichlet_noised_logits(  # noqa: E731
        jax.random.PRNGKey(5), logits, legal, alpha=0.3, fraction=0.25, num_candidates=k)
    np.testing.assert_array_equal(np.asarray(draw(64)), np.asarray(draw(None)))
    crowded = np.asarray(jax.nn.softmax(draw(5)))  # only 5 of the 20 legal moves get noise
    clean = np.asarray(jax.nn.softmax(logits))
    noised = np.abs(crowded - 0.75 * clean) > 1e-6
    top5 = np.argsort(-np.where(np.asarray(legal), np.asarray(logits), -np.inf), axis=-1)[:, :5]
    for row in range(3):  # (a Gamma(0.3) draw can be too small to see, so: a non-empty subset)
        assert set(np.flatnonzero(noised[row])) <= set(top5[row]) and noised[row].any()


def test_bad_search_config_values():
    with pytest.raises(ValueError, match="algorithm"):
        search.SearchConfig(algorithm="alphabeta")
    with pytest.raises(ValueError, match="num_simulations"):
        search.SearchConfig(num_simulations=0)
    with pytest.raises(ValueError, match="unvisited_q"):
        search.SearchConfig(unvisited_q=2.0)


def test_intrinsic_mix_on_two_ply_tree():
    # Nim (1, 1), root player P to move with λ = 0.5. P's move earns r_e = 0 and an
    # intrinsic r_d = w·φ(after the move): +0.4 for taking heap 0, -0.2 for heap 1. The
    # opponent then must take the last counter: r_e = +1 for the opponent, with no
    # intrinsic term on its turn (SPEC §1.8). Leaves: the child (opponent to move) is
    # worth λ·v = 0.5 * 0.25; the root (P to move) λ·v + (1 − λ)·v_d = 0.5 * 0 + 0.5 * 0.6.
    # So after n visits Q(root, a) = (1 − λ) r_d(a) − (λ v_c + (n − 1) λ) / n.
    env = games.make("nim", heaps=(1, 1))
    state = jax.vmap(lambda k: env.state_from_heaps(jnp.int32([1, 1]), 0))(jax.random.split(jax.random.PRNGKey(0), 1))
    weights = jnp.float32([0.4, -0.2, 0.0, 0.0])  # φ = one-hot heaps [heap0 = 0, 1, heap1 = 0, 1]

    def apply(params, obs, player):
        del params, player
        batch = obs.shape[0]
        return NetOutput(jnp.zeros((batch, env.num_actions)), _nim_value_one_counter(obs), jnp.full(batch, 0.6))

    lam, config = 0.5, search.SearchConfig(num_simulations=9, unvisited_q=0.0)
    out = search.run_search(env, apply, None, jax.random.PRNGKey(3), state, jnp.zeros(1, jnp.int32),
                            jnp.full(1, lam), config=config, add_noise=False, feature_fn=games.get("nim").features,
                            intrinsic_reward_fn=lambda w, phi, player: jnp.dot(w, phi), hook_params=weights)
    visits = np.asarray(out.visits[0])
    q = np.asarray(out.qvalues[0])
    r_d = {0: 0.4, 1: -0.2}
    expected = {a: (1 - lam) * r_d[a] - (lam * 0.25 + (visits[a] - 1) * lam) / visits[a] for a in (0, 1)}
    assert visits[0] > 0 and visits[1] > 0
    for a in (0, 1):
        np.testing.assert_allclose(q[a], expected[a], rtol=1e-5)
    root_value = ((1 - lam) * 0.6 + sum(visits[a] * expected[a] for a in (0, 1))) / (visits.sum() + 1)
    np.testing.assert_allclose(out.search_value[0], root_value, rtol=1e-5)
    # Its intrinsic part: (1 − λ) v_d at the root and (1 − λ) r_d(a) on P's moves; the child
    # leaves (opponent to move, "drop") and the opponent's winning move add none.
    intrinsic = ((1 - lam) * 0.6 + sum(visits[a] * (1 - lam) * r_d[a] for a in (0, 1))) / (visits.sum() + 1)
    np.testing.assert_allclose(out.search_value_intrinsic[0], intrinsic, rtol=1e-5)


def _nim_two_ply(apply, lam, *, opponent_model="self", opponent=None, num_simulations=9, reward_weights=None):
    env = games.make("nim", heaps=(1, 1))
    state = jax.vmap(lambda k: env.state_from_heaps(jnp.int32([1, 1]), 0))(jax.random.split(jax.random.PRNGKey(0), 1))
    config = search.SearchConfig(num_simulations=num_simulations, unvisited_q=0.0, opponent_model=opponent_model)
    hooks = {}
    if reward_weights is not None:
        hooks = dict(feature_fn=games.get("nim").features, intrinsic_reward_fn=lambda w, phi, player: jnp.dot(w, phi),
                     hook_params=reward_weights)
    return search.run_search(env, apply, None, jax.random.PRNGKey(3), state, jnp.zeros(1, jnp.int32),
                             jnp.full(1, lam), config=config, add_noise=False, opponent=opponent, **hooks)


@pytest.mark.slow
def test_opponent_leaves_predicted_by_the_second_intrinsic_head():
    # As test_intrinsic_mix_on_two_ply_tree, with the consistent reading: the child (the
    # opponent to move) is worth λ·v − (1 − λ)·v_d_opp from the opponent's side, so
    # Q(root, a) = (1 − λ) r_d(a) − (λ v_c − (1 − λ) v_d_opp + (n − 1) λ) / n.
    lam, v_d_opp = 0.5, 0.3
    weights = jnp.float32([0.4, -0.2, 0.0, 0.0])

    def apply(params, obs, player):
        del params, player
        batch = obs.shape[0]
        return NetOutput(jnp.zeros((batch, 2)), _nim_value_one_counter(obs), jnp.full(batch, 0.6),
                         jnp.full(batch, v_d_opp))

    out = _nim_two_ply(apply, lam, reward_weights=weights)
    visits, q = np.asarray(out.visits[0]), np.asarray(out.qvalues[0])
    leaf = lam * 0.25 - (1 - lam) * v_d_opp
    for a, r_d in ((0, 0.4), (1, -0.2)):
        n = visits[a]
        assert n > 0
        np.testing.assert_allclose(q[a], (1 - lam) * r_d - (leaf + (n - 1) * lam) / n, rtol=1e-5)
    # The intrinsic part: each child's leaf adds −(1 − λ) v_d_opp once (its expansion) among
    # its n visits, seen with the negamax sign from the root.
    intrinsic = ((1 - lam) * 0.6 + sum(visits[a] * (1 - lam) * r_d + (1 - lam) * v_d_opp
                                       for a, r_d in ((0, 0.4), (1, -0.2)))) / (visits.sum() + 1)
    np.testing.assert_allclose(out.search_value_intrinsic[0], intrinsic, rtol=1e-5)
    # λ = 1: the head is ignored bit for bit.
    plain = _nim_two_ply(lambda p, o, pl: apply(p, o, pl)._replace(value_d_opponent=None), 1.0)
    with_head = _nim_two_ply(apply, 1.0)
    np.testing.assert_array_equal(plain.tree.node_values, with_head.tree.node_values)


@pytest.mark.slow
def test_opponent_model_evaluates_the_opponents_positions_with_its_latent():
    # Nim (1, 1), λ = 1. The child (one counter, opponent to move) is worth 0.25 to latent 0
    # and -0.5 to latent 1. Root player latent 0, opponent latent 1: with information
    # hiding the child is valued by latent 0, with the opponent model by latent 1.
    def apply(params, obs, player):
        del params
        batch = obs.shape[0]
        one_left = _nim_value_one_counter(obs) > 0
        return NetOutput(jnp.zeros((batch, 2)), jnp.where(one_left, jnp.where(player == 0, 0.25, -0.5), 0.0),
                         jnp.zeros(batch))

    for model, child_value in (("self", 0.25), ("opponent", -0.5)):
        out = _nim_two_ply(apply, 1.0, opponent_model=model, opponent=jnp.ones(1, jnp.int32))
        visits, q = np.asarray(out.visits[0]), np.asarray(out.qvalues[0])
        for a in (0, 1):
            n = visits[a]
            np.testing.assert_allclose(q[a], -(child_value + (n - 1)) / n, rtol=1e-5)


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
@pytest.mark.slow
def test_search_alone_finds_gardner_mates_for_both_colours(algorithm):
    # With no knowledge at all (uniform prior, value 0) the search must find a mate in one
    # for White and for Black and value the root as a win for the side to move: the value
    # and reward signs and the side-to-move convention on Gardner chess.
    from pgx import gardner_chess  # pylint: disable=g-import-not-at-top

    env = games.make("gardner_chess")
    fens = ["k4/4Q/1K3/5/5 w - - 0 1",  # Qa4#
            "5/5/1k3/4q/K4 b - - 0 1"]  # ...Qa2#
    states = jax.tree.map(lambda *x: jnp.stack(x),
                          *[gardner_chess.State._from_fen(f) for f in fens])  # pylint: disable=protected-access
    config = search.SearchConfig(num_simulations=48, unvisited_q=0.0, algorithm=algorithm)
    out = jax.jit(lambda key: search.run_search(
        env, _uniform_net(env.num_actions), None, key, states, jnp.zeros(2, jnp.int32), jnp.ones(2),
        config=config, add_noise=False))(jax.random.PRNGKey(0))
    step = jax.jit(jax.vmap(env.step))
    best = jnp.argmax(out.visits, axis=-1) if algorithm == "puct" else out.action
    after = step(states, best)
    assert bool(after.terminated.all())
    np.testing.assert_array_equal(np.take_along_axis(np.asarray(after.rewards), np.asarray(states.current_player)[:, None], 1)[:, 0], [1.0, 1.0])
    assert (np.asarray(out.qvalues)[np.arange(2), np.asarray(best)] == 1.0).all()
