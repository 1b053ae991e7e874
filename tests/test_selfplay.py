"""Team self-play: records, matchups, move choice, auto-reset, start positions."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import features, games, matchmaking, networks, search, selfplay
from azdb_jax.start_positions import make_start_sampler

NUM_PLAYERS = 3
BATCH = 12


@functools.lru_cache(maxsize=None)
def _setup():
    env = games.make("tic_tac_toe")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=NUM_PLAYERS)
    params = net.init(jax.random.PRNGKey(0), env.init(jax.random.PRNGKey(0)).observation)
    return env, net, params


def _play(graph, *, sample_plies=2, num_plies=14, algorithm="puct", init_fn=None, seed=0):
    env, net, params = _setup()
    config = selfplay.SelfPlayConfig(num_games=BATCH, num_plies=num_plies, sample_plies=sample_plies)
    search_config = search.SearchConfig(num_simulations=8, algorithm=algorithm)
    games = selfplay.init_selfplay(env, jax.random.PRNGKey(seed), num_games=BATCH, graph=graph, init_fn=init_fn)
    play = jax.jit(lambda p, k, g: selfplay.selfplay_iteration(
        env, net.apply, p, k, g, lambdas=jnp.ones((NUM_PLAYERS,)), config=config,
        search_config=search_config, graph=graph, feature_fn=features.feature_fn(env), init_fn=init_fn))
    final, records = play(params, jax.random.PRNGKey(seed + 1), games)
    return games, final, jax.device_get(records)


def test_records_are_consistent_with_the_games():
    graph = matchmaking.uniform(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    _, _, r = _play(graph)
    T, B = r.action.shape
    assert r.observation.shape == (T, B, 3, 3, 2) and r.features.shape == (T, B, 18)
    assert r.terminated.any()
    # The mover's latent is the game's White or Black player.
    np.testing.assert_array_equal(r.player, np.where(r.is_white, r.white_player, r.black_player))
    # φ is the board after the move: the mover's mark stands on the played cell.
    colour = np.where(r.is_white, 0, 1)
    np.testing.assert_array_equal(r.features.reshape(T, B, 2, 9)[np.arange(T)[:, None], np.arange(B), colour, r.action],
                                  1.0)
    # Moves are legal; the search policy is a distribution over legal moves.
    assert np.take_along_axis(r.legal_action_mask, r.action[..., None], -1).all()
    np.testing.assert_allclose(r.policy.sum(-1), 1.0, rtol=1e-5)
    assert (r.policy[~r.legal_action_mask] == 0).all()
    # Rewards only on finishing moves, zero-sum there.
    assert (r.rewards[~r.terminated] == 0).all()
    np.testing.assert_array_equal(r.rewards[r.terminated].sum(-1), 0.0)


@pytest.mark.slow
def test_autoreset_starts_new_games_with_new_players():
    graph = matchmaking.uniform(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    _, _, r = _play(graph, num_plies=30)
    T, _ = r.action.shape
    t, b = np.nonzero(r.terminated[:-1])
    assert len(t) > 10
    # The position after a finished game is an empty board again, and movers alternate otherwise.
    assert (r.observation[t + 1, b] == 0).all()
    live_t, live_b = np.nonzero(~r.terminated[:-1])
    assert (r.mover[live_t + 1, live_b] != r.mover[live_t, live_b]).all()
    assert (r.white_player[live_t + 1, live_b] == r.white_player[live_t, live_b]).all()
    changed = (r.white_player[t + 1, b] != r.white_player[t, b]) | (r.black_player[t + 1, b] != r.black_player[t, b])
    assert changed.any()  # uniform matchmaking draws fresh pairs for new games


@pytest.mark.slow
def test_exploiter_mask_and_selfplay_graph():
    uniform = matchmaking.uniform(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    _, _, r = _play(uniform, num_plies=20)
    mixed = r.white_player != r.black_player
    assert mixed.any()
    # In a game between two different players only one side (the learner's) trains.
    game_index = np.cumsum(r.terminated, axis=0) - r.terminated  # games finished before t, per slot
    trained_sides = {}
    for t, b in zip(*np.nonzero(mixed)):
        key = (b, int(game_index[t, b]))
        if r.train_mask[t, b]:
            trained_sides.setdefault(key, set()).add(bool(r.is_white[t, b]))
    assert all(len(sides) == 1 for sides in trained_sides.values())
    _, _, r = _play(matchmaking.selfplay(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS))))
    np.testing.assert_array_equal(r.white_player, r.black_player)
    assert r.train_mask.all()


@pytest.mark.parametrize("sample_plies", [0, 100])
@pytest.mark.slow
def test_visit_sampling_then_most_visited(sample_plies):
    graph = matchmaking.selfplay(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    _, _, r = _play(graph, sample_plies=sample_plies, num_plies=12)
    chosen = np.take_along_axis(r.policy, r.action[..., None], -1)[..., 0]
    assert (chosen > 0).all()  # always a visited move
    greedy = chosen == r.policy.max(-1)
    if sample_plies == 0:
        assert greedy.all()
    else:
        assert not greedy.all()  # sampling proportional to visits sometimes picks another move


@pytest.mark.slow
def test_gumbel_selfplay_runs():
    graph = matchmaking.selfplay(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    _, _, r = _play(graph, algorithm="gumbel", num_plies=10)
    assert np.take_along_axis(r.legal_action_mask, r.action[..., None], -1).all()


@pytest.mark.slow
def test_start_position_sampler_feeds_new_games():
    env, _, _ = _setup()
    starts = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(5), 3))
    starts = jax.vmap(env.step)(starts, jnp.int32([0, 4, 8]))
    starts = jax.vmap(env.step)(starts, jnp.int32([1, 5, 7]))
    init_fn = make_start_sampler(env, starts, initial_prob=0.0)
    graph = matchmaking.selfplay(jnp.zeros((NUM_PLAYERS, NUM_PLAYERS)))
    first, _, r = _play(graph, init_fn=init_fn, num_plies=12)
    allowed = {np.asarray(o).tobytes() for o in starts.observation}
    assert {o.tobytes() for o in np.asarray(first.env_state.observation)} <= allowed
    t, b = np.nonzero(r.terminated[:-1])
    assert len(t) and {r.observation[ti + 1, bi].tobytes() for ti, bi in zip(t, b)} <= allowed
    with pytest.raises(ValueError, match="initial_prob"):
        make_start_sampler(env, starts, initial_prob=1.5)
    with pytest.raises(ValueError, match="only defined for chess"):
        make_start_sampler(env, starts, initial_prob=0.5, halfmove_clocks=(0, 20))
    with pytest.raises(ValueError, match="not states of env"):
        make_start_sampler(env, jax.vmap(games.make("nim").init)(jax.random.split(jax.random.PRNGKey(0), 2)),
                           initial_prob=0.5)
    with pytest.raises(ValueError, match="stacked State"):
        make_start_sampler(env, env.init(jax.random.PRNGKey(0)), initial_prob=0.5)


def test_chess_start_positions_with_halfmove_augmentation():
    from azdb_jax.envs import chess_interop  # pylint: disable=g-import-not-at-top

    env = games.make("chess")
    positions = chess_interop.states_from_fens(["8/8/8/4k3/8/8/4P3/4K3 w - - 0 40",
                                                "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 7 30"])
    init_fn = jax.jit(make_start_sampler(env, positions, initial_prob=0.0, halfmove_clocks=(20, 40)))
    clocks = {int(init_fn(k)._x.halfmove_count) for k in jax.random.split(jax.random.PRNGKey(0), 16)}
    assert clocks == {20, 40}
    state = init_fn(jax.random.PRNGKey(1))
    assert chess_interop.state_to_fen(state).split()[4] in {"20", "40"}
    np.testing.assert_allclose(state.observation[0, 0, -1], int(state._x.halfmove_count) / 100.0)


def test_gardner_start_positions_with_halfmove_augmentation():
    from azdb_jax.envs import gardner_interop  # pylint: disable=g-import-not-at-top

    env = games.make("gardner_chess")
    positions = gardner_interop.states_from_fens(["k4/5/5/5/3RK w - - 3 20", "2k2/P4/NR2P/5/4K b - - 4 19"])
    init_fn = jax.jit(make_start_sampler(env, positions, initial_prob=0.0, halfmove_clocks=(20, 98)))
    clocks = {int(init_fn(k)._halfmove_count) for k in jax.random.split(jax.random.PRNGKey(0), 16)}
    assert clocks == {20, 98}
    key = next(k for k in jax.random.split(jax.random.PRNGKey(1), 16) if int(init_fn(k)._halfmove_count) == 98)
    state = init_fn(key)
    assert gardner_interop.state_to_fen(state).split()[4] == "98"
    np.testing.assert_allclose(state.observation[0, 0, -1], 0.98)  # pgx's no-progress plane
    # From clock 98 two quiet moves end the game drawn by the 50-move rule (pgx's own rule).
    fen = gardner_interop.state_to_fen(state)
    step = jax.jit(env.step)
    for _ in range(2):
        assert not bool(state.terminated)
        quiet = [m for m in gardner_interop.legal_uci_moves(state)
                 if gardner_interop.state_to_fen(step(state, gardner_interop.uci_to_action(m, state))).split()[4]
                 != "0"]
        state = step(state, gardner_interop.uci_to_action(quiet[0], state))
    assert bool(state.terminated) and np.all(np.asarray(state.rewards) == 0), fen


@pytest.mark.parametrize("temperature", [1.0, 10.0])
def test_sampled_moves_follow_the_visit_temperature(temperature):
    visits = jnp.float32([[0, 1, 4, 16, 0, 3]])
    draws = 20_000
    out = search.SearchOutput(*([None] * 6), visits=jnp.repeat(visits, draws, 0), qvalues=None, value=None,
                                  value_d=None)
    config = selfplay.SelfPlayConfig(sample_plies=15, sample_temperature=temperature)
    keys = jax.random.PRNGKey(0)
    early = np.asarray(selfplay._choose_action(keys, out, jnp.zeros(draws, jnp.int32), config=config,  # pylint: disable=protected-access
                                                   algorithm="puct"))
    weights = np.asarray(visits[0]) ** (1.0 / temperature)
    expected = weights / weights.sum()
    freq = np.bincount(early, minlength=6) / draws
    np.testing.assert_allclose(freq, expected, atol=4 * np.sqrt(0.25 / draws))
    assert freq[0] == 0 and freq[4] == 0  # unvisited moves are never drawn
    late = np.asarray(selfplay._choose_action(keys, out, jnp.full(draws, 15, jnp.int32), config=config,  # pylint: disable=protected-access
                                                  algorithm="puct"))
    assert (late == 3).all()  # greedy after k plies
    with pytest.raises(ValueError, match="sample_temperature"):
        selfplay.SelfPlayConfig(sample_temperature=0.0)


def test_gumbel_selfplay_samples_only_when_a_temperature_asks():
    visits = jnp.float32([[0, 1, 4, 16, 0, 3]])
    draws = 20_000
    halving = jnp.full(draws, 2, jnp.int32)  # sequential halving's choice, not the most visited
    out = search.SearchOutput(None, halving, *([None] * 4), visits=jnp.repeat(visits, draws, 0), qvalues=None,
                              value=None, value_d=None)
    keys = jax.random.PRNGKey(0)
    early, late = jnp.zeros(draws, jnp.int32), jnp.full(draws, 15, jnp.int32)
    plain = selfplay.SelfPlayConfig(sample_plies=15)
    for ply in (early, late):
        assert (np.asarray(selfplay._choose_action(keys, out, ply, config=plain, algorithm="gumbel")) == 2).all()  # pylint: disable=protected-access
    hot = selfplay.SelfPlayConfig(sample_plies=15, sample_temperature=10.0)
    drawn = np.asarray(selfplay._choose_action(keys, out, early, config=hot, algorithm="gumbel"))  # pylint: disable=protected-access
    weights = np.asarray(visits[0]) ** 0.1
    np.testing.assert_allclose(np.bincount(drawn, minlength=6) / draws, weights / weights.sum(),
                               atol=4 * np.sqrt(0.25 / draws))
    assert (np.asarray(selfplay._choose_action(keys, out, late, config=hot, algorithm="gumbel")) == 2).all()  # pylint: disable=protected-access
