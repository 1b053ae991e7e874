"""azdb_jax.anytime: a team search grown in chunks, read and rerooted.

The reference is the library's one-shot team search (``planning.team_search``): a tree
grown in chunks must be the tree of one search with the same total, node for node, for
PUCT and for Gumbel MuZero (whose root schedule is checked against mctx's own table).
Rerooted trees are checked against the subtree read from the old tree with numpy.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mctx._src import seq_halving

from azdb_jax import anytime, games, networks, planning, search

N = 3
LAM = jnp.float32([1.0, 0.6, 0.8])
PUCT = search.SearchConfig(num_simulations=24)
GUMBEL = search.SearchConfig(algorithm="gumbel", num_simulations=24, max_num_considered_actions=4)


@functools.lru_cache(maxsize=None)
def _setup():
    env = games.make("tic_tac_toe")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=N)
    state = env.step(env.init(jax.random.PRNGKey(3)), jnp.int32(4))
    params = net.init(jax.random.PRNGKey(0), state.observation[None])
    return env, net, params, state


@functools.lru_cache(maxsize=None)
def _programs(config, capacity):
    env, net, _, _ = _setup()
    begin = jax.jit(functools.partial(anytime.begin, env, net.apply, config=config, capacity=capacity))
    restart = jax.jit(functools.partial(anytime.restart, env, net.apply), donate_argnums=(1,))
    grow = jax.jit(functools.partial(anytime.grow, env, net.apply, config=config), donate_argnums=(1,))
    answers = jax.jit(functools.partial(anytime.answers, num_actions=env.num_actions, config=config))
    return begin, restart, grow, answers


def _grown(config, chunks, *, capacity=64, budget=None):
    _, _, params, state = _setup()
    begin, _, grow, _ = _programs(config, capacity)
    search_key = jax.random.split(jax.random.PRNGKey(1), 4)[2]  # the key run_search gives the tree
    tree = begin(params, search_key, state, players=jnp.arange(N), lam=LAM)
    for chunk in chunks:
        tree = grow(params, tree, chunk, budget=sum(chunks) if budget is None else budget)
    return tree


def _one_search(config):
    env, net, params, state = _setup()
    return jax.jit(lambda params, states: planning.team_search(
        env, net.apply, params, jax.random.PRNGKey(1), states, num_players=N, lam=LAM, config=config))(
        params, jax.tree.map(lambda x: x[None], state))


@pytest.mark.parametrize("config", [PUCT, GUMBEL], ids=["puct", "gumbel"])
@pytest.mark.slow
def test_a_tree_grown_in_chunks_is_one_search_of_the_same_total(config):
    env = _setup()[0]
    tree = _grown(config, [1, 5, 7, 11])  # 24 simulations
    reference = _one_search(config)
    stats = anytime.root_statistics(tree.tree, env.num_actions, config=config)
    np.testing.assert_array_equal(tree.num_nodes, [25] * N)
    np.testing.assert_array_equal(stats.visits, reference.stats.visits[0])
    np.testing.assert_allclose(stats.q, reference.stats.q[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.u, reference.stats.u[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.prior, reference.stats.prior[0], rtol=1e-5, atol=1e-6)
    out = _programs(config, 64)[3](tree)
    np.testing.assert_array_equal(out.player_actions, reference.most_visited_action[0])
    for r, rule in enumerate(planning.SELECTION_RULES):
        player, action = planning.team_move(reference.stats, rule)
        assert (int(out.rule_players[r]), int(out.rule_actions[r])) == (int(player[0]), int(action[0])), rule


def _schedule(m, budget, length):
    """mctx's sequential-halving generator with phase lengths from ``budget``, run for
    ``length`` simulations (mctx stops it at ``budget``)."""
    if m <= 1:
        return list(range(length))
    log2m = int(np.ceil(np.log2(m)))
    sequence, visits, considered = [], [0] * m, m
    while len(sequence) < length:
        for _ in range(max(1, int(budget / (log2m * considered)))):
            sequence.extend(visits[:considered])
            visits[:considered] = [v + 1 for v in visits[:considered]]
        considered = max(2, considered // 2)
    return sequence[:length]


def test_considered_visit_is_mctx_schedule_and_goes_on_past_its_budget():
    visit = jax.jit(functools.partial(anytime.considered_visit, max_considered=16))
    for budget in (1, 2, 5, 16, 31, 32, 100, 257):
        table = seq_halving.get_table_of_considered_visits(16, budget)
        for m in range(17):
            got = [int(visit(m, s, budget)) for s in range(budget + 40)]
            assert got[:budget] == list(table[m]), (m, budget)
            assert got == _schedule(m, budget, budget + 40), (m, budget)


def _numpy_tree(tree, j):
    return {name: np.asarray(getattr(tree.tree, name)[j]) for name in
            ("parents", "action_from_parent", "children_index", "children_visits", "node_visits", "node_values")} | {
        "slot_actions": np.asarray(tree.tree.extra_data.slot_actions[j]), "num_nodes": int(tree.num_nodes[j])}


def _check_consistent(t):
    """Parent and child links agree, visits add up, children come after their parents."""
    n = t["num_nodes"]
    assert t["parents"][0] == -1 and t["node_visits"][0] == n
    for i in range(n):
        for k, child in enumerate(t["children_index"][i]):
            if child >= 0:
                assert i < child < n and t["parents"][child] == i and t["action_from_parent"][child] == k
                assert t["children_visits"][i, k] == t["node_visits"][child]
        expanded = t["children_visits"][i].sum()
        assert t["node_visits"][i] == 1 + expanded


def test_restart_keeps_each_players_subtree_and_the_tree_grows_on():
    config = PUCT
    env, _, params, state = _setup()
    begin, restart, grow, _ = _programs(config, 64)
    tree = _grown(config, [30])
    old = [_numpy_tree(tree, j) for j in range(N)]
    # The line: player 0's most visited move, then the most visited reply below it.
    t0 = old[0]
    slot = int(np.argmax(t0["children_visits"][0]))
    node = t0["children_index"][0, slot]
    reply = int(np.argmax(t0["children_visits"][node]))
    line = [int(t0["slot_actions"][0, slot]), int(t0["slot_actions"][node, reply])]
    after = env.step(env.step(state, jnp.int32(line[0])), jnp.int32(line[1]))
    actions = jnp.zeros(4, jnp.int32).at[:2].set(jnp.int32(line))
    tree, reused = restart(params, tree, after, actions, 2)
    for j in range(N):
        t = old[j]
        at = 0
        for action in line:  # the node in player j's old tree, if it holds the line
            slots = np.flatnonzero(t["slot_actions"][at] == action)
            at = t["children_index"][at, slots[0]] if len(slots) and at >= 0 else -1
        assert bool(reused[j]) == (at >= 0)
        new = _numpy_tree(tree, j)
        if at < 0:
            assert new["num_nodes"] == 1 and new["node_visits"][0] == 1
            continue
        assert new["num_nodes"] == t["node_visits"][at]
        np.testing.assert_array_equal(new["children_visits"][0], t["children_visits"][at])
        np.testing.assert_array_equal(new["slot_actions"][0], t["slot_actions"][at])
        np.testing.assert_allclose(new["node_values"][0], t["node_values"][at])
        _check_consistent(new)
    assert bool(reused[0])
    counts = np.asarray(tree.num_nodes)
    tree = grow(params, tree, 9, budget=0)
    for j in range(N):
        t = _numpy_tree(tree, j)
        assert t["num_nodes"] == counts[j] + 9
        _check_consistent(t)
    fresh, reused = restart(params, tree, state, actions.at[0].set(99), 2)  # a line no tree holds
    assert not np.any(reused) and np.all(np.asarray(fresh.num_nodes) == 1)
    _check_consistent(_numpy_tree(grow(params, fresh, 12, budget=0), 1))


def test_growth_stops_at_capacity_and_compiles_once():
    _, _, params, _ = _setup()
    tree = _grown(PUCT, [3, 50], capacity=20)
    np.testing.assert_array_equal(tree.num_nodes, [20] * N)
    env, net, _, _ = _setup()
    traces = []

    def counted(*args, **kwargs):  # runs once per trace, i.e. once per compile
        traces.append(1)
        return anytime.grow(env, net.apply, *args, config=PUCT, **kwargs)

    grow = jax.jit(counted, donate_argnums=(1,))
    for chunk, budget in ((5, 7), (3, 0), (11, 2)):  # chunk sizes and budgets are traced
        tree = grow(params, tree, chunk, budget=budget)
        np.testing.assert_array_equal(tree.num_nodes, [20] * N)
    _check_consistent(_numpy_tree(tree, 2))
    assert len(traces) == 1


def test_answers_read_the_lines_and_depths_of_the_trees():
    tree = _grown(PUCT, [40])
    out = _programs(PUCT, 64)[3](tree)
    for j in range(N):
        t = _numpy_tree(tree, j)
        depth = np.zeros(t["num_nodes"], int)
        for i in range(1, t["num_nodes"]):
            depth[i] = depth[t["parents"][i]] + 1
        assert int(out.seldepth[j]) == depth.max()
        assert float(out.depth[j]) == pytest.approx(depth.sum() / (t["num_nodes"] - 1))
        line, at = [int(out.player_actions[j])], 0
        at = t["children_index"][0, np.flatnonzero(t["slot_actions"][0] == line[0])[0]]
        while at >= 0 and t["children_visits"][at].max() > 0 and len(line) < out.pv.shape[1]:
            slot = int(np.argmax(t["children_visits"][at]))
            line.append(int(t["slot_actions"][at, slot]))
            at = t["children_index"][at, slot]
        assert list(np.asarray(out.pv[j][:len(line)])) == line
        assert np.all(np.asarray(out.pv[j][len(line):]) == -1)
