"""Compact search trees: slots, equality with the full-width tree and with mctx, stored states."""

import functools

import chess
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from azdb_jax import games, networks, search, search_state, tree_search
from azdb_jax.envs import chess_interop


def test_legal_slots_by_hand():
    legal = jnp.array([[0, 1, 1, 0, 1, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0]], bool)
    logits = jnp.array([[0, 5, 1, 0, 2, 0], [0.1, 3, 0.2, 2, 2, 5], [0, 0, 0, 0, 0, 0]], jnp.float32)
    slots = np.asarray(tree_search.legal_slots(legal, logits, 3))
    # Fits: legal ids in increasing order. Crowded: the 3 highest priors (5, 3, 2 with a tie at
    # the cut between ids 3 and 4: the lower id wins), ordered by id. None legal: all empty.
    np.testing.assert_array_equal(slots, [[1, 2, 4], [1, 3, 5], [-1, -1, -1]])
    np.testing.assert_array_equal(tree_search.legal_slots(legal, logits, 6)[0], [1, 2, 4, -1, -1, -1])


def test_slot_logits_and_root_scatter():
    logits = jnp.array([[1.0, 2.0, 3.0, 4.0]])
    slots = jnp.array([[1, 3, -1]])
    out = np.asarray(tree_search.slot_logits(logits, slots))
    np.testing.assert_allclose(out[0, :2], [-2.0, 0.0])
    assert out[0, 2] == np.finfo(np.float32).min
    tree = type("T", (), {})()
    tree.extra_data = tree_search.SlotData(slot_actions=slots[:, None, :], root_gumbel=jnp.zeros((1, 3)),
                                           tie_seed=jnp.zeros(1, jnp.uint32))
    np.testing.assert_array_equal(tree_search.to_actions(tree, jnp.array([[7, 9, 5]]), 4), [[0, 7, 0, 9]])


@functools.lru_cache(maxsize=None)
def _setup(game, batch=4, plies=3, channels=8):
    env = games.make(game)
    net = networks.make_network(networks.NetworkConfig(channels=channels, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=2)
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), batch))
    key = jax.random.PRNGKey(4)
    for _ in range(plies):
        key, sub = jax.random.split(key)
        states = jax.vmap(env.step)(states, jax.random.categorical(sub, jnp.where(states.legal_action_mask, 0., -1e9)))
    params = net.init(jax.random.PRNGKey(0), states.observation)
    return env, net, params, states


def _run(env, net, params, states, key, **config):
    config = search.SearchConfig(**config)
    batch = states.current_player.shape[0]
    return jax.jit(lambda k: search.run_search(env, net.apply, params, k, states, jnp.int32([0, 1] * (batch // 2)),
                                               jnp.ones(batch), config=config, add_noise=True))(key)


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
@pytest.mark.parametrize("game,slots", [("connect_four", 3), ("gardner_chess", 48)])
@pytest.mark.slow
def test_compact_tree_equals_full_width_tree(game, slots, algorithm):
    # Slots ordered by action id and action-keyed tie noise: any K at least the number of
    # legal moves visits exactly what K = A visits (same keys). connect_four with K = 3
    # truncates, so it must differ there (checked below on the positions that have > 3 moves).
    env, net, params, states = _setup(game)
    full = _run(env, net, params, states, jax.random.PRNGKey(1), num_simulations=24, num_slots=env.num_actions,
                algorithm=algorithm)
    compact = _run(env, net, params, states, jax.random.PRNGKey(1), num_simulations=24, num_slots=slots,
                   algorithm=algorithm)
    fits = np.asarray(states.legal_action_mask.sum(-1) <= slots)
    if game == "gardner_chess":
        assert fits.all()
        np.testing.assert_array_equal(compact.visits, full.visits)
        np.testing.assert_array_equal(compact.action, full.action)
        np.testing.assert_allclose(compact.search_value, full.search_value, rtol=1e-6)
        np.testing.assert_allclose(compact.policy, full.policy, rtol=1e-5, atol=1e-7)
    else:
        assert not fits.any()  # 7 columns open, 3 slots: the 3 highest-prior moves are searched
        top3 = np.argsort(-np.where(states.legal_action_mask, compact.search_prior_logits, -np.inf), axis=-1, kind="stable")[:, :3]
        for b in range(states.current_player.shape[0]):
            assert set(np.flatnonzero(compact.visits[b])) <= set(top3[b])


@pytest.mark.slow
def test_compact_tree_equals_full_width_tree_on_chess():
    env = games.make("chess")
    fens = [chess.STARTING_FEN, "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"]
    states = chess_interop.states_from_fens(fens)
    net = networks.make_network(networks.NetworkConfig(channels=4, num_blocks=0, value_hidden=4),
                                num_actions=env.num_actions, num_players=2)
    params = net.init(jax.random.PRNGKey(0), states.observation)
    full = _run(env, net, params, states, jax.random.PRNGKey(2), num_simulations=16, num_slots=env.num_actions)
    compact = _run(env, net, params, states, jax.random.PRNGKey(2), num_simulations=16)  # K = 64
    assert compact.tree.children_visits.shape[-1] == 64
    np.testing.assert_array_equal(compact.visits, full.visits)
    np.testing.assert_allclose(compact.qvalues, full.qvalues, rtol=1e-6)
    for b, fen in enumerate(fens):  # every visited action is a legal move (python-chess)
        legal = {m.uci() for m in chess.Board(fen).legal_moves}
        visited = {chess_interop.action_to_uci(int(a), chess.Board(fen)) for a in np.flatnonzero(compact.visits[b])}
        assert visited and visited <= legal


@pytest.mark.slow
def test_puct_matches_mctx_muzero_policy():
    # The reference: mctx's own PUCT over the full action space with the same recurrent
    # function (legal moves masked in the logits). Only exact ties could split them (mctx
    # breaks them with fresh noise, we with action-keyed noise); a random network has none.
    env, net, params, states = _setup("tic_tac_toe", batch=8, plies=2, channels=16)
    batch = 8
    config = search.SearchConfig(num_simulations=32, unvisited_q=-1.0)
    players, lams = jnp.zeros(batch, jnp.int32), jnp.ones(batch)
    ours = jax.jit(lambda k: search.run_search(env, net.apply, params, k, states, players, lams, config=config,
                                               add_noise=False))(jax.random.PRNGKey(5))
    recurrent = search.make_recurrent_fn(env, net.apply)

    def mctx_recurrent(ctx, key, action, embedding):
        step, embedding = recurrent(ctx, key, action, embedding)
        logits = jnp.where(step.legal_action_mask, step.prior_logits, jnp.finfo(jnp.float32).min)
        return mctx.RecurrentFnOutput(reward=step.reward, discount=step.discount, prior_logits=logits,
                                      value=step.value), embedding

    ctx = search.SearchContext(params, players, states.current_player, lams, None, players)
    root = mctx.RootFnOutput(prior_logits=ours.prior_logits, value=net.apply(params, states.observation, players).value,
                             embedding=search_state.codec(env).pack(states))
    reference = jax.jit(lambda k: mctx.muzero_policy(
        ctx, k, root, mctx_recurrent, 32, invalid_actions=~states.legal_action_mask, dirichlet_fraction=0.0,
        qtransform=functools.partial(search.qtransform_alphazero, config=config)))(jax.random.PRNGKey(6))
    np.testing.assert_array_equal(ours.visits, reference.search_tree.children_visits[:, 0])
    np.testing.assert_allclose(ours.search_value, reference.search_tree.node_values[:, 0], rtol=1e-5)


@pytest.mark.parametrize("game", ["chess", "gardner_chess", "connect_four"])
@pytest.mark.slow
def test_packed_states_step_exactly_like_the_originals(game):
    # Random playouts: stepping unpack(pack(s)) gives the same next state as stepping s,
    # field for field (repetition draws and all), and a packed chess state is small.
    env = games.make(game)
    state_codec = search_state.codec(env)
    step = jax.jit(jax.vmap(env.step))
    batch = 64
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
    key = jax.random.PRNGKey(1)
    for _ in range(60 if game != "connect_four" else 20):
        key, sub = jax.random.split(key)
        # Shuffling pieces back and forth half of the time makes repetitions likely.
        action = jax.random.categorical(sub, jnp.where(states.legal_action_mask, 0.0, -1e9))
        restored = state_codec.unpack(state_codec.pack(states))
        expected, got = step(states, action), step(restored, action)
        for a, b in zip(jax.tree.leaves(expected), jax.tree.leaves(got)):
            np.testing.assert_array_equal(a, b)
        done = expected.terminated | expected.truncated
        fresh = jax.vmap(env.init)(jax.random.split(sub, batch))
        states = jax.tree.map(lambda f, e: jnp.where(done.reshape(done.shape + (1,) * (e.ndim - 1)), f, e),
                              fresh, expected)
    packed = jax.tree.leaves(state_codec.pack(jax.tree.map(lambda x: x[0], states)))
    if game == "chess":
        assert sum(x.nbytes for x in packed) < 2048


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_root_value_part_recursion_reproduces_the_backed_up_values(algorithm):
    # Tracking the whole reward and value as the "part", the linear recursion of
    # root_value_part must give back the root value that the running-mean backup computed;
    # tracking nothing gives 0.
    env, net, params, states = _setup("connect_four", batch=4, plies=2)
    batch = states.current_player.shape[0]
    codec = search_state.codec(env)
    rng = np.random.default_rng(0)
    rewards = jnp.asarray(rng.normal(size=env.num_actions), jnp.float32)

    def recurrent(params, key, action, stored):
        del key
        state = codec.unpack(stored)
        next_state = jax.vmap(env.step)(state, action)
        out = net.apply(params, next_state.observation, jnp.zeros(batch, jnp.int32))
        value = jnp.where(next_state.terminated, 0.0, out.value)
        step = tree_search.StepOutput(reward=rewards[action], discount=jnp.where(next_state.terminated, 0.0, -1.0),
                                      prior_logits=out.policy_logits, value=value,
                                      legal_action_mask=next_state.legal_action_mask,
                                      reward_part=rewards[action], value_part=value)
        return step, codec.pack(next_state)

    out = net.apply(params, states.observation, jnp.zeros(batch, jnp.int32))
    root = tree_search.RootInput(prior_logits=out.policy_logits, value=out.value, embedding=codec.pack(states),
                                 legal_action_mask=states.legal_action_mask, value_part=out.value)
    if algorithm == "puct":
        selection = functools.partial(tree_search.puct_selection, pb_c_init=1.25, pb_c_base=19652.0,
                                      qtransform=functools.partial(search.qtransform_alphazero, config=search.SearchConfig()))
    else:
        selection = functools.partial(tree_search.gumbel_selection, num_simulations=20, max_num_considered_actions=4)
    tree = jax.jit(lambda k: tree_search.search(params, k, root, recurrent, selection, num_simulations=20,
                                                num_slots=7))(jax.random.PRNGKey(1))
    np.testing.assert_allclose(tree_search.root_value_part(tree), tree.node_values[:, 0], rtol=1e-5, atol=1e-6)
    untracked = jax.jit(lambda k: tree_search.search(params, k, root._replace(value_part=None), recurrent, selection,
                                                     num_simulations=20, num_slots=7))(jax.random.PRNGKey(1))
    assert untracked.extra_data.value_part is None
    np.testing.assert_array_equal(tree_search.root_value_part(untracked), 0.0)
    np.testing.assert_array_equal(untracked.node_values, tree.node_values)  # tracking changes nothing
