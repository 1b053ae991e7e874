"""Zhou & Riis's Nim setting: the unary board, the LSTM network, sampled measures,
position studies and the claims of a results folder (azdb_jax/figures/nim.py)."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import games, networks, presets, search
from azdb_jax.envs import nim as nim_lib
from azdb_jax.evaluation import nim as nim_eval
from azdb_jax.evaluation import nim_positions
from azdb_jax.agent import Agent
from azdb_jax.figures import nim as nim_figures
from azdb_jax.reproduction import nim_claims

# ---------------------------------------------------------------- the unary board


def test_unary_board_by_hand():
    env = games.make("nim", heaps=(1, 3, 5), encoding="unary")
    state = env.state_from_heaps(jnp.int32([1, 2, 0]))
    # heap a: 1 of 1; separator; heap b: 2 of 3; separator; heap c: 0 of 5.
    expected = [1, -1, 1, 1, 0, -1, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(state.observation[:, 0, 0], expected)
    assert state.observation.shape == (11, 1, 1)
    after = env.step(state, env.action(1, 2), jax.random.PRNGKey(0))  # take 2 from heap b
    np.testing.assert_array_equal(after.observation[:, 0, 0], [1, -1, 0, 0, 0, -1, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("heaps,length", [(5, 29), (6, 41), (7, 55)])
def test_unary_board_lengths_are_the_papers(heaps, length):
    env = games.make("nim", heaps=presets.NIM_HEAPS[heaps], encoding="unary")
    assert env.init(jax.random.PRNGKey(0)).observation.shape == (length, 1, 1)
    # The paper's state spaces (the empty board included): 3,840, 46,080 and 645,120.
    assert int(np.prod(np.asarray(presets.NIM_HEAPS[heaps]) + 1)) == {5: 3840, 6: 46080, 7: 645120}[heaps]


def test_encoding_is_a_nim_option_only():
    assert config_lib.EnvConfig(name="nim", nim_encoding="unary").make().encoding == "unary"
    with pytest.raises(ValueError, match="nim_encoding must be one of"):
        config_lib.EnvConfig(name="nim", nim_encoding="binary")
    with pytest.raises(ValueError, match="not an option of 'connect_four'"):
        config_lib.EnvConfig(name="connect_four", nim_encoding="unary")
    with pytest.raises(ValueError, match="encoding must be one of"):
        nim_lib.Nim((1, 2), encoding="bits")


# ---------------------------------------------------------------- the LSTM network


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _numpy_lstm_net(params, obs, player, num_players):
    """Hand-written forward of the network: the LSTM equations (Hochreiter & Schmidhuber,
    with a forget gate), zero initial state, over the rows, then the linear heads."""
    p = jax.tree_util.tree_map(np.asarray, params["params"])
    lstm = p["lstm"]
    batch, steps = obs.shape[:2]
    x = np.asarray(obs, np.float64).reshape(batch, steps, -1)
    x = np.concatenate([x, np.repeat(np.eye(num_players)[player][:, None, :], steps, axis=1)], axis=-1)
    hidden = lstm["hi"]["kernel"].shape[0]
    h, c = np.zeros((batch, hidden)), np.zeros((batch, hidden))
    for t in range(steps):
        gate = {g: x[:, t] @ lstm[f"i{g}"]["kernel"] + h @ lstm[f"h{g}"]["kernel"] + lstm[f"h{g}"]["bias"]
                for g in "ifgo"}
        c = _sigmoid(gate["f"]) * c + _sigmoid(gate["i"]) * np.tanh(gate["g"])
        h = _sigmoid(gate["o"]) * np.tanh(c)

    def dense(name):
        return h @ p[name]["kernel"] + p[name]["bias"]

    return dense("policy_logits"), np.tanh(dense("value_out")[:, 0]), dense("value_d_out")[:, 0]


def test_lstm_network_equals_the_lstm_equations():
    env = games.make("nim", heaps=(1, 3, 5), encoding="unary")
    config = networks.NetworkConfig(torso="lstm", lstm_hidden=8)
    net = networks.make_network(config, num_actions=env.num_actions, num_players=3)
    heaps = jnp.int32([[1, 3, 5], [0, 2, 4], [1, 0, 1], [0, 0, 3]])
    obs = jax.vmap(env.state_from_heaps)(heaps).observation
    params = net.init(jax.random.PRNGKey(0), obs)
    player = np.array([0, 1, 2, 1])
    out = net.apply(params, obs, jnp.asarray(player))
    assert out.policy_logits.shape == (4, env.num_actions) and out.value.shape == (4,) and out.value_d.shape == (4,)
    logits, value, value_d = _numpy_lstm_net(params, obs, player, 3)
    np.testing.assert_allclose(out.policy_logits, logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.value, value, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.value_d, value_d, rtol=1e-5, atol=1e-5)
    # The order of the counters matters to an LSTM: reversed boards give other outputs.
    assert not np.allclose(net.apply(params, obs[:, ::-1], jnp.asarray(player)).policy_logits, out.policy_logits)


def test_lstm_network_gradient_matches_finite_differences():
    env = games.make("nim", heaps=(1, 2), encoding="unary")
    config = networks.NetworkConfig(torso="lstm", lstm_hidden=4, latent="film")
    net = networks.make_network(config, num_actions=env.num_actions, num_players=2, value_d_opponent=True)
    obs = jax.vmap(env.state_from_heaps)(jnp.int32([[1, 2], [0, 1]])).observation
    params = jax.jit(net.init)(jax.random.PRNGKey(1), obs)
    player = jnp.int32([0, 1])
    assert jax.eval_shape(net.apply, params, obs, player).value_d_opponent.shape == (2,)

    def loss(p):
        out = net.apply(p, obs, player)
        return (jnp.sum(jax.nn.log_softmax(out.policy_logits)[:, 0]) + jnp.sum(out.value ** 2)
                + jnp.sum(out.value_d) + jnp.sum(out.value_d_opponent))

    grads = jax.jit(jax.grad(loss))(params)  # jitted: op by op, the LSTM's init and gradient took seconds
    loss_at = jax.jit(loss)  # one program for the shifted parameters' losses
    leaves, treedef = jax.tree_util.tree_flatten(params)
    grad_leaves = jax.tree_util.tree_leaves(grads)
    rng = np.random.default_rng(0)
    eps = 1e-3
    for index, (leaf, grad) in enumerate(zip(leaves, grad_leaves)):
        flat = rng.integers(leaf.size)  # one coordinate per parameter array, central differences
        def shifted(delta, leaf=leaf, flat=flat, index=index):
            moved = np.array(leaf, np.float32).reshape(-1)
            moved[flat] += delta
            new_leaves = list(leaves)
            new_leaves[index] = jnp.asarray(moved.reshape(leaf.shape))
            return float(loss_at(jax.tree_util.tree_unflatten(treedef, new_leaves)))
        numeric = (shifted(eps) - shifted(-eps)) / (2 * eps)
        assert np.asarray(grad).reshape(-1)[flat] == pytest.approx(numeric, rel=2e-2, abs=2e-3)


def test_network_config_rejects_a_bad_torso():
    with pytest.raises(ValueError, match="torso must be one of"):
        networks.NetworkConfig(torso="transformer")
    with pytest.raises(ValueError, match="lstm_hidden"):
        networks.NetworkConfig(torso="lstm", lstm_hidden=0)


def test_nim_presets_are_the_papers_setting():
    for heaps, sims in ((5, 50), (6, 60), (7, 100)):
        config = presets.get_preset(f"nim{heaps}")
        assert config.env.nim_heaps == presets.NIM_HEAPS[heaps] and config.env.nim_encoding == "unary"
        assert config.network.torso == "lstm" and config.network.lstm_hidden == 128
        assert config.search.num_simulations == sims == config.run.eval_simulations
        assert (config.search.pb_c_init, config.search.dirichlet_alpha, config.search.dirichlet_fraction) == \
            (0.25, 0.35, 0.25)
        assert config.selfplay.sample_plies == 3 and config.team.num_players == 1
        resnet = presets.get_preset(f"nim{heaps}_resnet")
        assert resnet.network.torso == "resnet" and resnet.env.nim_encoding == "one_hot"
    assert presets.get_preset("nim7_team").team.num_players == 3
    # JSON round trip (a run's config.json) keeps the new fields.
    config = presets.get_preset("nim6")
    assert config_lib.from_dict(config_lib.TrainConfig, json.loads(json.dumps(dataclasses.asdict(config)))) == config


# ---------------------------------------------------------------- sampled measures


def test_sample_positions_are_distinct_uniform_draws_from_the_box():
    heaps = presets.NIM_HEAPS[7]
    drawn = nim_eval.sample_positions(heaps, 10_000, seed=3)
    assert drawn.shape == (10_000, 7)
    assert (drawn >= 0).all() and (drawn <= np.asarray(heaps)).all() and (drawn.sum(axis=1) > 0).all()
    assert len({tuple(r) for r in drawn}) == 10_000
    np.testing.assert_array_equal(drawn, nim_eval.sample_positions(heaps, 10_000, seed=3))
    assert not np.array_equal(drawn, nim_eval.sample_positions(heaps, 10_000, seed=4))
    # Uniform over the box: each heap's size is uniform on 0..h (the last heap: 14 values, ~714 each).
    counts = np.bincount(drawn[:, 6], minlength=14)
    assert counts.min() > 550 and counts.max() < 880
    # Few positions: all of them, in the box's order.
    np.testing.assert_array_equal(nim_eval.sample_positions((1, 3, 5), 1000), nim_eval.nim_positions((1, 3, 5)))
    with pytest.raises(ValueError, match="count"):
        nim_eval.sample_positions((1, 3), 0)


def _agent(env, apply_fn, num_players=1):
    """A team of ``num_players`` over ``apply_fn``, which takes no parameters."""
    return Agent(env=env, apply_fn=apply_fn, params=None, num_players=num_players, search_config=search.SearchConfig())


def _unary_heaps(observation, initial):
    """Heap sizes from unary boards [B, L, 1, 1]: the 1s of each heap's cells."""
    heap, _ = nim_lib.unary_layout(initial)
    cells = observation[:, :, 0, 0]
    return jnp.stack([jnp.sum(jnp.where(heap == k, cells, 0.0), axis=1) for k in range(len(initial))],
                     axis=1).astype(jnp.int32)


def _unary_apply(initial, *, misleading=False):
    """A stub network on unary boards: the oracle's winning moves as its prior (or, with
    ``misleading``, every losing move at 10 and the winning ones at 0), the oracle's value."""
    max_heap = max(initial)

    def apply_fn(params, observation, player):
        heaps = _unary_heaps(observation, initial)
        winning = jax.vmap(lambda h: nim_lib.winning_moves(h, max_heap))(heaps).astype(jnp.float32)
        value = jax.vmap(nim_lib.position_value)(heaps).astype(jnp.float32)
        logits = 10.0 * (1.0 - winning) if misleading else 10.0 * winning * (player[:, None] == 0)
        return networks.NetOutput(policy_logits=logits, value=0.9 * value, value_d=jnp.zeros_like(value))

    return apply_fn


def test_expert_measure_on_sampled_unary_positions():
    initial = (1, 3, 5, 7)
    env = games.make("nim", heaps=initial, encoding="unary")
    positions = nim_eval.sample_positions(initial, 100, seed=0)
    result = nim_eval.expert_measure(_agent(env, _unary_apply(initial), num_players=2), positions=positions,
                                     batch_size=64)
    assert result["positions"] == 100
    first, second = result["players"]
    assert first["top1_accuracy"] == 1.0 and first["value_sign_balanced_accuracy"] == 1.0
    assert first["top3_accuracy"] == 1.0 and second["top3_accuracy"] >= second["top1_accuracy"]
    # Player 1's prior is flat: its argmax is the lowest legal action, right on some won positions only.
    assert second["top1_accuracy"] < 1.0
    assert result["team"]["top1_accuracy_any"] == 1.0
    # A constant value is right on every won position and no lost one: balanced accuracy 0.5.
    constant = nim_eval.expert_measure(_agent(env, lambda p, o, pl: networks.NetOutput(
        policy_logits=jnp.zeros((o.shape[0], env.num_actions)), value=jnp.ones(o.shape[0]),
        value_d=jnp.zeros(o.shape[0]))), positions=positions)["players"][0]
    won = np.mean([nim_lib.position_value(jnp.int32(h)) > 0 for h in positions])
    assert constant["value_sign_accuracy"] == pytest.approx(won) and constant["value_sign_balanced_accuracy"] == 0.5
    with pytest.raises(ValueError, match="non-terminal"):
        nim_eval.expert_measure(_agent(env, _unary_apply(initial)), positions=np.zeros((1, 4), np.int32))


def test_topk_hits_by_hand():
    logits = jnp.array([[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [5.0, 0.0, 0.0, 9.0]])
    legal = jnp.array([[True, True, True, True], [True, True, True, False], [True, False, False, False]])
    winning = jnp.array([[False, False, True, False], [True, False, False, False], [False, False, False, True]])
    np.testing.assert_array_equal(nim_eval.topk_hits(logits, legal, winning, 1), [False, False, False])
    np.testing.assert_array_equal(nim_eval.topk_hits(logits, legal, winning, 2), [False, False, False])
    # Row 1's third-best legal move (action 0) wins; row 2's only legal move loses and its
    # illegal action 3, winning in the table, never counts.
    np.testing.assert_array_equal(nim_eval.topk_hits(logits, legal, winning, 3), [True, True, False])


# ---------------------------------------------------------------- position studies


def test_position_study_priors_values_and_search():
    initial = (1, 3, 5)
    env = games.make("nim", heaps=initial, encoding="unary")
    team = Agent(env=env, apply_fn=_unary_apply(initial, misleading=True), params=None, num_players=1,
                search_config=search.SearchConfig(num_simulations=8, unvisited_q=0.0))
    # (0, 0, 2): taking both counters wins at once ("c2"); the stub's prior is sure of "c1".
    study = nim_positions.position_study(team, (0, 0, 2), simulations=(1, 64))
    assert study["value"] == 1 and study["winning_moves"] == ["c2"]
    assert [m["move"] for m in study["moves"]] == ["c1", "c2"]
    assert study["moves"][0]["prior"] == pytest.approx(1 / (1 + np.exp(-10.0)), rel=1e-5)
    assert sum(m["prior"] for m in study["moves"]) == pytest.approx(1.0)
    # c1 leaves (0, 0, 1), won for the opponent (value 0.9): -0.9 for the mover; c2 ends the game: +1.
    assert {m["move"]: m["move_value"] for m in study["moves"]} == pytest.approx({"c1": -0.9, "c2": 1.0})
    one, many = study["searches"]
    assert one["move"] == "c1" and not one["winning"]  # one simulation follows the prior
    assert many["move"] == "c2" and many["winning"] and many["root_value"] == pytest.approx(1.0)
    assert sum(many["visits"].values()) == pytest.approx(1.0)
    assert nim_positions.move_name(env.action(2, 2), env.max_heap) == "c2"
    text = nim_positions.format_study(study)
    assert "winning moves c2" in text and "c1" in text
    # The stub misleads on every won position with a losing move; the prior on it is the same everywhere
    # it has the same number of losing moves, so the most misleading have the most losing moves.
    pool = nim_eval.nim_positions(initial)
    worst = nim_positions.misleading_positions(team, pool, count=3)
    assert worst.shape == (3, 3)
    assert all(nim_lib.position_value(jnp.int32(h)) > 0 for h in worst)
    for bad in ((0, 0, 0), (2, 0, 0), (0, 0, 6)):
        with pytest.raises(ValueError, match="not a non-terminal position"):
            nim_positions.position_study(team, bad)


# ---------------------------------------------------------------- claims of a results folder


def _write_run(root, setting, seed, *, heaps, num_players, top1, value_balanced, baseline, any_top1=None,
               network="lstm"):
    run = root / setting / f"seed_{seed}"
    (run / "reports").mkdir(parents=True)
    config = dataclasses.asdict(presets.nim(len(heaps), num_players=num_players, network=network))
    config["run"]["seed"] = seed
    (run / "config.json").write_text(json.dumps(config))
    rows = []
    for step, (t, v) in enumerate(zip(top1, value_balanced), 1):
        for player in range(num_players):
            rows.append({"step": step * 10, "player": player, "top1_accuracy": t - 0.1 * player,
                         "top3_accuracy": t + 0.1,
                         "value_sign_accuracy": 0.9, "value_sign_balanced_accuracy": v, "elo": 10.0 * step,
                         "team_top1_accuracy_any": t if any_top1 is None else any_top1[step - 1]})
    report = {"summary": {"heaps": list(heaps), "random_baseline": baseline}, "rows": rows}
    (run / "reports" / "nim_measures.json").write_text(json.dumps(report))
    (run / "metrics.jsonl").write_text("\n".join(json.dumps({"kind": "train", "iteration": i, "policy_loss": 3.0 - i,
                                                             "value_loss": 1.0}) for i in (1, 2)) + "\n")


def test_claims_of_a_results_folder_by_hand(tmp_path):
    five, seven = presets.NIM_HEAPS[5], presets.NIM_HEAPS[7]
    for seed, (a, b) in enumerate(((0.8, 0.3), (0.7, 0.2), (0.9, 0.4))):
        _write_run(tmp_path, "nim5", seed, heaps=five, num_players=1, top1=(0.5, a), value_balanced=(0.5, 0.7),
                   baseline=0.1)
        _write_run(tmp_path, "nim7", seed, heaps=seven, num_players=1, top1=(0.1, b), value_balanced=(0.5, 0.5),
                   baseline=0.1)
        _write_run(tmp_path, "nim7_team", seed + 3, heaps=seven, num_players=3, top1=(0.1, b),
                   value_balanced=(0.5, 0.5), baseline=0.1, any_top1=(0.1, b + 0.2 + 0.01 * seed))
        _write_run(tmp_path, "nim5_resnet", seed, heaps=five, num_players=1, top1=(0.5, a + 0.05 * seed),
                   value_balanced=(0.5, 0.6), baseline=0.1, network="resnet")
    runs = nim_figures.load_runs(tmp_path)
    assert nim_figures.settings(runs) == ["nim5", "nim5_resnet", "nim7", "nim7_team"]
    curve = nim_figures.curves(runs, "nim5", "top1_accuracy")
    assert curve["steps"] == [10, 20] and curve["values"].shape == (3, 2)
    rows = {row["claim"]: row for row in nim_claims.claims(runs)}
    # nim5's top-1 margins at its last step: 0.7, 0.6, 0.8; mean 0.7, t(2) = 4.303, SE = 0.1 / sqrt(3).
    top1 = rows["nim5: policy top-1 above the random policy's"]
    assert top1["mean"] == pytest.approx(0.7) and top1["half_width"] == pytest.approx(4.303 * 0.1 / np.sqrt(3),
                                                                                      rel=1e-3)
    assert top1["verdict"] == "agrees"
    assert rows["nim7: value sign better than chance"]["verdict"] == "not settled"  # all exactly 0: no spread
    falls = rows["lstm: the top-1 margin falls from 5 to 7 heaps"]
    assert falls["per_seed"] == pytest.approx([0.5, 0.5, 0.5]) and falls["mean"] == pytest.approx(0.5)
    assert falls["step"] == 20
    team = rows["nim7_team: the team's max over latents finds more winning moves than its player 0"]
    assert team["per_seed"] == pytest.approx([0.2, 0.21, 0.22]) and team["verdict"] == "agrees"
    assert rows["nim7_team against nim7: the team's max over latents finds more winning moves than one AlphaZero"][
        "mean"] == pytest.approx(0.21)
    assert rows["nim7_team against nim7's 3 best moves: the team's max over latents finds more winning moves"][
        "per_seed"] == pytest.approx([0.1, 0.11, 0.12])
    assert rows["nim7_team: the team's max over latents finds more winning moves than its player 0's 3 best moves"][
        "per_seed"] == pytest.approx([0.1, 0.11, 0.12])  # any_top1 − (player 0's top-1 + 0.1)
    same = rows["nim7_team against nim7: the team's player 0 (λ = 1) finds more winning moves than one AlphaZero"]
    assert same["per_seed"] == pytest.approx([0.0, 0.0, 0.0]) and same["verdict"] == "not settled"
    # the networks on 5 heaps, seed against seed: the resnet's margins less the LSTM's
    network = rows["5 heaps: the top-1 margin of resnet above lstm's"]
    assert network["per_seed"] == pytest.approx([0.0, 0.05, 0.1]) and network["step"] == 20
    assert network["verdict"] == "not settled"  # mean 0.05, half width 4.303 x 0.05 / sqrt(3)
    value = rows["5 heaps: the balanced value margin of resnet above lstm's"]
    assert value["per_seed"] == pytest.approx([-0.1, -0.1, -0.1]) and value["verdict"] != "agrees"
    assert not any("7 heaps: the" in claim for claim in rows)  # no resnet on 7 heaps here
    assert "agrees" in nim_claims.format_claims(list(rows.values()))
    with pytest.raises(FileNotFoundError, match="no Nim measures"):
        nim_figures.load_runs(tmp_path / "nim5" / "seed_0" / "reports")
    early = {row["claim"]: row for row in nim_claims.claims(runs, step=10)}
    assert early["nim5: policy top-1 above the random policy's"]["per_seed"] == pytest.approx([0.4, 0.4, 0.4])
    with pytest.raises(ValueError, match="checkpoint 15 was not measured"):
        nim_claims.claims(runs, step=15)
    with pytest.raises(ValueError, match="no runs of setting"):
        nim_figures.curves(runs, "nim6", "elo")


# ---------------------------------------------------------------- end to end: runs, reports, notebook


def _tiny(num_heaps_preset: int, heaps, num_players: int = 1):
    config = presets.nim(num_heaps_preset, num_players=num_players)
    return config_lib.apply_overrides(config, [
        f"env.nim_heaps={json.dumps(list(heaps))}", "network.lstm_hidden=8", "search.num_simulations=4",
        "selfplay.num_games=8", "selfplay.num_plies=6", "replay.capacity=512", "run.num_iterations=2",
        "run.learner_steps=1", "run.batch_size=16", "run.checkpoint_every=1", "run.eval_simulations=4"])


@pytest.mark.slow
def test_tiny_results_folder_through_the_scripts_and_the_notebook(tmp_path):
    """Populations of tiny Nim runs (the LSTM on the unary board), the measures and the
    position study through their scripts, a team through experiments/nim_study.py, then
    colabs/nim.ipynb executed end to end: its saved numbers are the reports' numbers."""
    import pathlib  # pylint: disable=g-import-not-at-top
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top

    from conftest import run_notebook  # pylint: disable=g-import-not-at-top,g-bad-import-order

    from azdb_jax import population  # pylint: disable=g-import-not-at-top

    repo = pathlib.Path(__file__).resolve().parents[1]
    root = tmp_path / "nim"
    population.train(_tiny(5, (1, 2, 3)), root / "small", [0, 1], progress=False)
    population.train(_tiny(6, (1, 2, 3, 4)), root / "large", [0, 1], progress=False)
    for run in sorted(root.glob("*/seed_*")):
        subprocess.run([sys.executable, str(repo / "experiments" / "nim_measures.py"), f"--workdir={run}",
                        "--max_positions=50", "--games=4", "--seeds=1"], check=True, capture_output=True, cwd=repo)
    # The team through the one-command study: train, measure, study, claims.
    overrides = [f"--override={o}" for o in ("env.nim_heaps=[1,2,3,4]", "network.lstm_hidden=8",
                                             "search.num_simulations=4", "selfplay.num_games=8", "selfplay.num_plies=6",
                                             "replay.capacity=512", "run.learner_steps=1", "run.batch_size=16",
                                             "run.eval_simulations=4")]
    study = subprocess.run([sys.executable, str(repo / "experiments" / "nim_study.py"), f"--out={root}",
                            "--settings=nim6_team", "--seeds=2,3", "--iterations=2", "--checkpoint_every=1",
                            "--max_positions=50", "--games=4", "--match_seeds=1", "--max_log2_simulations=2",
                            *overrides], check=True, capture_output=True, text=True, cwd=repo)
    assert "nim6_team against large's 3 best moves" in study.stdout
    assert json.loads((root / "nim_study.json").read_text())["timing"]["nim6_team"]["iterations"] == 2
    done = subprocess.run([sys.executable, str(repo / "experiments" / "nim_positions.py"),
                           f"--workdir={root / 'large' / 'seed_0'}", "--max_log2_simulations=3", "--positions=0.0.1.4",
                           "--pool=100"], check=True, capture_output=True, text=True, cwd=repo)
    assert "heaps [0, 0, 1, 4]" in done.stdout and "report written" in done.stdout
    study = json.loads((root / "large" / "seed_0" / "reports" / "nim_positions.json").read_text())
    assert [s["simulations"] for s in study["studies"][0]["searches"]] == [1, 2, 4, 8]
    assert study["studies"][0]["heaps"] == [1, 2, 3, 4] and study["studies"][1]["heaps"] == [0, 0, 1, 4]
    assert study["studies"][1]["winning_moves"] == ["d3"]  # 1 XOR 4 = 5: leave 1 in heap d

    notebook = run_notebook(repo / "colabs" / "nim.ipynb", root)
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "small" in printed and "nim6_team" in printed and "heaps [0, 0, 1, 4]" in printed
    accuracy = json.loads((root / "figures" / "nim_accuracy.json").read_text())
    for setting, seeds in (("small", (0, 1)), ("large", (0, 1)), ("nim6_team", (2, 3))):
        for k, seed in enumerate(seeds):
            report = json.loads((root / setting / f"seed_{seed}" / "reports" / "nim_measures.json").read_text())
            assert report["summary"]["positions"] == (2 * 3 * 4 - 1 if setting == "small" else 50)
            player0 = sorted((r for r in report["rows"] if r["player"] == 0), key=lambda r: r["step"])
            assert [r["step"] for r in player0] == [1, 2] == accuracy[setting]["steps"]
            assert accuracy[setting]["top1_accuracy"][k] == pytest.approx([r["top1_accuracy"] for r in player0])
            assert accuracy[setting]["value_sign_balanced_accuracy"][k] == pytest.approx(
                [r["value_sign_balanced_accuracy"] for r in player0])
    claims = json.loads((root / "figures" / "nim_claims.json").read_text())
    assert any(c["claim"].startswith("lstm: the top-1 margin falls from 3 to 4 heaps") for c in claims)
    assert any(c["claim"].startswith("nim6_team against large") for c in claims)
    team = json.loads((root / "figures" / "nim_team.json").read_text())  # beyond the paper: the team's figure
    assert list(team) == ["nim6_team"] and team["nim6_team"]["large_top3_accuracy"]["seeds"] == [0, 1]
    for k, seed in enumerate((2, 3)):
        rows = json.loads((root / "nim6_team" / f"seed_{seed}" / "reports" / "nim_measures.json").read_text())["rows"]
        for player in range(3):
            mine = sorted((r for r in rows if r["player"] == player), key=lambda r: r["step"])
            assert team["nim6_team"][f"player_{player}_top1"][k] == pytest.approx([r["top1_accuracy"] for r in mine])
        assert team["nim6_team"]["max_over_latents"][k] == pytest.approx(
            [r["team_top1_accuracy_any"] for r in rows if r["player"] == 0])
    for name in ("nim_elo", "nim_accuracy", "nim_losses", "nim_team"):
        assert (root / "figures" / f"{name}.png").stat().st_size > 0


@pytest.mark.slow
def test_initial_network_is_the_runs_network_before_its_first_update(tmp_path):
    """``nim_measures.py --initial``: step 0 is the network the run started from. A run
    whose learner never updates (its batch larger than the games of its one iteration)
    saves that same network at step 1, so both rows must hold the same measures."""
    import pathlib  # pylint: disable=g-import-not-at-top
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top

    from azdb_jax import runner  # pylint: disable=g-import-not-at-top

    repo = pathlib.Path(__file__).resolve().parents[1]
    config = config_lib.apply_overrides(_tiny(5, (1, 2, 3)), ["run.num_iterations=1", "run.batch_size=500",
                                                               "run.eval_every=0"])
    runner.train(config, tmp_path / "run", progress=False)
    assert json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[0])["learner_ready"] == 0.0
    done = subprocess.run([sys.executable, str(repo / "experiments" / "nim_measures.py"), f"--workdir={tmp_path / 'run'}",
                           "--max_positions=0", "--nochampion", "--initial"], capture_output=True, text=True, cwd=repo)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Nim measures of 2 checkpoint(s)" in done.stdout
    rows = json.loads((tmp_path / "run" / "reports" / "nim_measures.json").read_text())["rows"]
    assert [row["step"] for row in rows] == [0, 1]
    measured = [{k: v for k, v in row.items() if k not in ("step", "name")} for row in rows]
    assert measured[0] == measured[1] and measured[0]["search_top1_accuracy"] is not None
    bad = subprocess.run([sys.executable, str(repo / "experiments" / "nim_measures.py"),
                          f"--workdir={tmp_path / 'run'}", "--steps=0,1", "--nochampion", "--initial"],
                         capture_output=True, text=True, cwd=repo)
    assert bad.returncode != 0 and "--initial measures the untrained network as step 0" in bad.stderr
