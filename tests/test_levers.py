"""The training levers (docs/results.md, "The training levers on connect four"): the games'
mirror symmetry and the learner's mirror augmentation, playout cap randomisation, and value
targets mixed from the search's Q."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import features, games, learner, matchmaking, networks, runs, search, selfplay, trainer
from azdb_jax.presets import get_preset

TINY = [
    "env.name=tic_tac_toe", "team.num_players=2", "team.lam=1.0", "team.matchmaker=uniform",
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
    "search.num_simulations=6", "selfplay.num_games=8", "selfplay.num_plies=6", "selfplay.sample_plies=2",
    "replay.capacity=512", "run.batch_size=32",
]


def _tiny(*extra):
    return config_lib.apply_overrides(get_preset("demo"), TINY + list(extra))


# ------------------------------------------------------------------ the games' mirrors

MIRRORED_MOVE = {"connect_four": lambda a: 6 - a, "tic_tac_toe": lambda a: 3 * (a // 3) + 2 - a % 3}


@pytest.mark.parametrize("game", sorted(MIRRORED_MOVE))
def test_a_mirrored_position_is_the_position_of_the_mirrored_game(game):
    # Independent of Game.mirror's array slicing: the game played with every move mirrored
    # (column c -> 6 - c; cell (r, c) -> (r, 2 - c)) reaches the mirrored position.
    env = games.make(game)
    mirror = games.get(game).mirror
    rng = np.random.default_rng(0)
    step = jax.jit(env.step)
    for _ in range(6):
        state = mirrored = env.init(jax.random.PRNGKey(0))
        for _ in range(int(rng.integers(1, 8))):
            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            action = int(rng.choice(legal))
            state, mirrored = step(state, action), step(mirrored, MIRRORED_MOVE[game](action))
            if bool(state.terminated):
                break
            obs, legal_mask = mirror(state.observation, state.legal_action_mask.astype(jnp.float32))
            np.testing.assert_array_equal(obs, mirrored.observation)
            np.testing.assert_array_equal(legal_mask, mirrored.legal_action_mask.astype(jnp.float32))
        # Batched: the mirror acts on the trailing axes.
        batch_obs = jnp.stack([state.observation, mirrored.observation])
        batch_policy = jnp.stack([state.legal_action_mask, mirrored.legal_action_mask]).astype(jnp.float32)
        obs, policy = mirror(batch_obs, batch_policy)
        np.testing.assert_array_equal(obs[0], mirror(state.observation, batch_policy[0])[0])
        np.testing.assert_array_equal(policy[1], mirror(batch_obs[1], batch_policy[1])[1])


def test_only_games_with_a_mirror_take_the_augmentation():
    assert [g for g in games.IDS if games.get(g).mirror is not None] == ["connect_four", "tic_tac_toe"]
    config_lib.apply_overrides(get_preset("demo"), ["learner.mirror_augment=true"])
    with pytest.raises(ValueError, match="gardner_chess has no mirror symmetry.*connect_four, tic_tac_toe"):
        config_lib.apply_overrides(get_preset("gardner_cpu"), ["learner.mirror_augment=true"])
    with pytest.raises(ValueError, match="needs the game's mirror"):
        net = networks.make_network(networks.NetworkConfig(channels=4, num_blocks=0, value_hidden=4), num_actions=7,
                                    num_players=1)
        obs = jnp.zeros((4, 6, 7, 2))
        cfg = learner.LearnerConfig(mirror_augment=True)
        opt = learner.make_optimizer(cfg)
        state = learner.init_train_state(net, opt, jax.random.PRNGKey(0), obs[:1])
        batch = dict(observation=obs, player=jnp.zeros(4, jnp.int32), search_policy=jnp.full((4, 7), 1 / 7),
                     z=jnp.zeros(4), z_d=jnp.zeros(4), weight=jnp.ones(4))
        learner.learner_step(net, opt, state, batch, jax.random.PRNGKey(1), config=cfg)


def test_mirror_rows_mirror_about_half_the_rows_the_same_in_any_split():
    mirror = games.get("connect_four").mirror
    key = jax.random.PRNGKey(3)
    obs = jax.random.uniform(jax.random.PRNGKey(0), (256, 6, 7, 2))
    policy = jax.nn.softmax(jax.random.normal(jax.random.PRNGKey(1), (256, 7)))
    out_obs, out_policy = learner.mirror_rows(obs, policy, key, mirror)
    flipped_obs, flipped_policy = mirror(obs, policy)
    same = np.all(np.asarray(out_obs == obs), axis=(1, 2, 3))
    flipped = np.all(np.asarray(out_obs == flipped_obs), axis=(1, 2, 3))
    assert np.all(same ^ flipped)  # each row is either kept or mirrored, whole
    np.testing.assert_array_equal(np.asarray(out_policy == flipped_policy).all(-1), flipped)
    assert 0.4 < flipped.mean() < 0.6
    # A device holding rows 64..127 of the batch mirrors them as the whole batch does.
    part = learner.mirror_rows(obs[64:128], policy[64:128], key, mirror, rows=(64, 256))
    np.testing.assert_array_equal(part[0], out_obs[64:128])
    np.testing.assert_array_equal(part[1], out_policy[64:128])


def test_the_learner_step_trains_on_the_mirrored_batch():
    # One step with the augmentation is the plain step on the batch mirror_rows makes of it.
    env = games.make("connect_four")
    net = networks.make_network(networks.NetworkConfig(channels=4, num_blocks=1, value_hidden=4),
                                num_actions=env.num_actions, num_players=1)
    obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.3, (16, 6, 7, 2)).astype(jnp.float32)
    policy = jax.nn.softmax(jax.random.normal(jax.random.PRNGKey(1), (16, 7)))
    batch = learner.Batch(obs, jnp.zeros(16, jnp.int32), policy, jnp.ones(16), jnp.zeros(16), jnp.ones(16))
    augmented, plain = learner.LearnerConfig(mirror_augment=True), learner.LearnerConfig()
    opt = learner.make_optimizer(plain)
    state = learner.init_train_state(net, opt, jax.random.PRNGKey(2), obs[:1])
    key = jax.random.PRNGKey(5)
    mirror = games.get("connect_four").mirror

    def step(config, batch, mirror=None):
        return jax.jit(lambda b: learner.learner_step(net, opt, state, b, key, config=config, mirror=mirror)[0])(batch)

    got = step(augmented, batch, mirror)
    m_obs, m_policy = learner.mirror_rows(obs, policy, jax.random.fold_in(key, 1), mirror)
    want = step(plain, batch._replace(observation=m_obs, search_policy=m_policy))
    jax.tree.map(np.testing.assert_array_equal, got.params, want.params)
    unmirrored = step(plain, batch)
    assert not all(np.allclose(a, b) for a, b in zip(jax.tree.leaves(unmirrored.params), jax.tree.leaves(got.params)))


# ------------------------------------------------------------------ playout cap randomisation

def _play(full_search, *, algorithm="puct"):
    env = games.make("tic_tac_toe")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=2)
    params = net.init(jax.random.PRNGKey(0), env.init(jax.random.PRNGKey(0)).observation)
    graph = matchmaking.selfplay(jnp.zeros((2, 2)))  # both sides of a game are its learner
    fast = 0 if full_search is None else 3
    config = selfplay.SelfPlayConfig(num_games=6, num_plies=8, sample_plies=2, fast_simulations=fast,
                                     full_search_prob=1.0 if full_search is None else 0.5)
    search_config = search.SearchConfig(num_simulations=8, algorithm=algorithm, max_num_considered_actions=4)
    start = selfplay.init_selfplay(env, jax.random.PRNGKey(1), num_games=6, graph=graph)
    play = jax.jit(lambda k, g, f: selfplay.selfplay_iteration(
        env, net.apply, params, k, g, lambdas=jnp.asarray(config_lib.TeamConfig(2, 1.0).lambdas), config=config, search_config=search_config,
        graph=graph, feature_fn=features.feature_fn(env), full_search=f))
    return jax.device_get(play(jax.random.PRNGKey(2), start, full_search)[1])


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_fast_plies_search_with_the_fast_budget_and_are_not_trained_on(algorithm):
    full = np.array([1, 0, 0, 1, 0, 1, 1, 0], bool)
    r = _play(jnp.asarray(full), algorithm=algorithm)
    if algorithm == "puct":  # a PUCT root's visits add up to the simulations
        np.testing.assert_array_equal(r.policy.shape, (8, 6, 9))
        visits = np.round(r.policy * np.where(full, 8, 3)[:, None, None]).sum(-1)
        np.testing.assert_allclose(r.policy.sum(-1), 1.0, rtol=1e-6)
        assert np.all(np.abs(r.policy * np.where(full, 8, 3)[:, None, None] - np.round(
            r.policy * np.where(full, 8, 3)[:, None, None])) < 1e-4)
        np.testing.assert_array_equal(visits, np.where(full, 8, 3)[:, None] * np.ones((1, 6)))
    assert not r.train_mask[~full].any() and r.train_mask[full].all()  # selfplay graph: every mover learns
    if algorithm == "gumbel":
        return
    # All plies full is the plain window bit for bit.
    plain, all_full = _play(None, algorithm=algorithm), _play(jnp.ones(8, bool), algorithm=algorithm)
    jax.tree.map(np.testing.assert_array_equal, plain, all_full)


def test_playout_cap_randomisation_settings_are_checked():
    with pytest.raises(ValueError, match="goes with full_search_prob < 1"):
        selfplay.SelfPlayConfig(full_search_prob=0.25)
    with pytest.raises(ValueError, match="goes with full_search_prob < 1"):
        selfplay.SelfPlayConfig(fast_simulations=4)
    with pytest.raises(ValueError, match=r"full_search_prob must be in \(0, 1\]"):
        selfplay.SelfPlayConfig(full_search_prob=0.0, fast_simulations=4)
    with pytest.raises(ValueError, match="must be below search.num_simulations"):
        _tiny("selfplay.full_search_prob=0.5", "selfplay.fast_simulations=6")


@pytest.mark.slow  # the run's draws (trainer); the mechanism is the quick test above
def test_a_window_with_playout_caps_trains_on_its_full_searches_only():
    components = runs.build_components(_tiny("selfplay.full_search_prob=0.5", "selfplay.fast_simulations=2",
                                                     "selfplay.num_plies=9", "team.matchmaker=selfplay"))
    state = trainer.init_trainer(components, jax.random.PRNGKey(0))
    phase = jax.jit(functools.partial(trainer.selfplay_phase, components))
    for _ in range(2):
        draws = jax.random.bernoulli(jax.random.fold_in(state.rng_key, trainer._FULL_SEARCH_STREAM), 0.5, (9,))  # pylint: disable=protected-access
        before = state
        state, metrics = phase(state)
        window = jax.device_get(state.pending)
        # Every mover learns in this graph: a ply's games are trained on exactly when it was full.
        np.testing.assert_array_equal(window.train_mask, np.broadcast_to(np.asarray(draws)[:, None], (9, 8)))
        assert 0 < np.asarray(draws).sum() < 9
        examples = trainer._examples(components, before.pending, state.pending)  # pylint: disable=protected-access
        assert int(metrics["examples_stored"]) == int(np.asarray(examples.trainable).sum())
        assert not np.asarray(examples.trainable)[9:][~np.asarray(draws)].any()


# ------------------------------------------------------------------ value targets from Q

def test_search_q_undoes_the_searchs_lambda_mix():
    window = selfplay.Transition(*([None] * len(selfplay.Transition._fields)))._replace(
        player=jnp.array([0, 1, 2, 1]), search_value=jnp.array([0.5, 0.3, 0.2, -0.4]),
        search_value_intrinsic=jnp.array([0.0, 0.12, 0.2, 0.05]))
    lambdas = jnp.array([1.0, 0.6, 0.0])
    np.testing.assert_allclose(trainer.search_q(lambdas, window), [0.5, 0.18 / 0.6, 0.0, -0.45 / 0.6], rtol=1e-6)


@pytest.mark.slow  # compiles a self-play window (18 s); search_q's quick test above checks the Q it mixes in
def test_value_targets_mix_z_with_the_search_q():
    # The weight changes only what is stored, so both configs play the same window.
    plain = runs.build_components(_tiny("team.lam=0.7"))
    mixed = runs.build_components(_tiny("team.lam=0.7", "learner.value_q_weight=0.5"))
    state = trainer.init_trainer(plain, jax.random.PRNGKey(0))
    state, _ = jax.jit(functools.partial(trainer.selfplay_phase, plain))(state)
    window = state.pending
    z = trainer._examples(plain, window, window)  # pylint: disable=protected-access
    z_and_q = trainer._examples(mixed, window, window)  # pylint: disable=protected-access
    both = jax.tree.map(lambda a: jnp.concatenate([a, a]), window)
    q = trainer.search_q(mixed.member_lambdas, both)
    known = np.asarray(z.outcome_known)
    assert known.any() and np.isin(np.asarray(z.examples.z)[known], [-1.0, 0.0, 1.0]).all()
    np.testing.assert_allclose(z_and_q.examples.z[known], (0.5 * z.examples.z + 0.5 * q)[known], rtol=1e-6, atol=1e-7)
    assert np.abs(np.asarray(q)[known]).max() > 0.01
    np.testing.assert_array_equal(z_and_q.trainable, z.trainable)


# ------------------------------------------------------------------ the levers' experiment

@pytest.mark.slow  # two tiny trainings and their measures on a tenth of the shipped solved positions
def test_the_levers_experiment_trains_measures_and_reuses_finished_runs(tmp_path):
    import json  # pylint: disable=g-import-not-at-top
    import pathlib  # pylint: disable=g-import-not-at-top
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top

    repo = pathlib.Path(__file__).resolve().parents[1]
    tiny = ["network.channels=4", "network.num_blocks=0", "network.value_hidden=4", "selfplay.num_games=4",
            "selfplay.num_plies=4", "run.learner_steps=2", "run.batch_size=8", "replay.capacity=256"]
    out = tmp_path / "report.json"
    # Every 10th shipped position (60, from all three phases): the measures run the same code
    # on them as on the 600.
    from azdb_jax.data import connect_four as c4_data  # pylint: disable=g-import-not-at-top
    lines = c4_data.packaged_path().read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("id,"))
    positions = tmp_path / "positions.csv"
    positions.write_text("\n".join(lines[:first + 1] + lines[first + 1::10]) + "\n")

    def run():
        command = [sys.executable, str(repo / "experiments" / "connect_four_levers.py"), "--levers=base,mirror",
                   "--seeds=3", "--iterations=2", "--checkpoint_every=1", f"--root={tmp_path / 'runs'}",
                   f"--out={out}", "--simulations=2", f"--figure={tmp_path / 'fig'}", f"--positions={positions}"]
        command += [f"--override={o}" for o in tiny]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=repo)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return proc.stdout, json.loads(out.read_text())

    stdout, report = run()
    assert [(e["lever"], e["seed"]) for e in report] == [("base", 3), ("mirror", 3)]
    assert report[1]["overrides"] == ["learner.mirror_augment=true"]
    mirror_config = json.loads((tmp_path / "runs" / "mirror_s3" / "config.json").read_text())
    assert mirror_config["learner"]["mirror_augment"] is True and mirror_config["run"]["seed"] == 3
    for entry in report:
        metrics = runs.read_metrics(tmp_path / "runs" / f"{entry['lever']}_s3")
        seconds = [r["iteration_seconds"] for r in metrics if "iteration_seconds" in r]
        assert [row["iteration"] for row in entry["curve"]] == [0, 1, 2] or \
            [row["iteration"] for row in entry["curve"]] == [1, 2], entry["curve"]
        last = entry["curve"][-1]
        assert last["train_seconds"] == pytest.approx(sum(seconds), abs=0.06) == entry["train_seconds"]
        assert last["positions"] == sum(int(r["examples_stored"]) for r in metrics if "iteration_seconds" in r)
        assert 0.0 <= last["against_perfect"] <= 1.0
        for row in entry["curve"]:
            assert all(0.0 <= row[name] <= 1.0 for name in ("search_keeps", "prior_keeps", "value_sign")), row
    assert "| mirror | 2 |" in stdout
    # The figures: one per axis, their numbers the report's (one seed: the values themselves).
    for axis in ("iteration", "train_seconds", "positions"):
        assert (tmp_path / f"fig_{axis}.png").stat().st_size > 0
        drawn = json.loads((tmp_path / f"fig_{axis}.json").read_text())
        assert drawn["search_keeps"]["mirror"]["mean"] == [row["search_keeps"] for row in report[1]["curve"]]
        assert drawn["search_keeps"]["mirror"]["x"] == [float(row[axis]) for row in report[1]["curve"]]
    # A second call finds the runs finished: measured again, not trained again.
    before = (tmp_path / "runs" / "base_s3" / "metrics.jsonl").read_text()
    _, again = run()
    assert (tmp_path / "runs" / "base_s3" / "metrics.jsonl").read_text() == before
    assert [e["curve"] for e in again] == [e["curve"] for e in report]


def test_strength_curves_average_the_seeds_with_t_intervals():
    from scipy import stats  # pylint: disable=g-import-not-at-top
    from azdb_jax.figures import strength  # pylint: disable=g-import-not-at-top

    def entry(lever, seed, keeps, perfect=None):
        curve = [{"iteration": 10 * (k + 1), "train_seconds": 5.0 * (k + 1) + seed, "positions": 100 * (k + 1),
                  "search_keeps": v, "prior_keeps": v / 2} for k, v in enumerate(keeps)]
        if perfect is not None:
            curve[-1]["against_perfect"] = perfect
        return {"lever": lever, "seed": seed, "curve": curve}

    report = [entry("az", 1, [0.7, 0.8], 0.4), entry("az", 2, [0.6, 0.9], 0.5), entry("az", 3, [0.8, 0.85], 0.6),
              entry("base", 1, [0.5, 0.6, 0.7])]
    curves = strength.lever_curves(report, "search_keeps", "train_seconds")
    az = curves["az"]
    assert az["iteration"] == [10, 20] and az["seeds"] == [1, 2, 3]
    assert az["x"] == pytest.approx([7.0, 12.0]) and az["mean"] == pytest.approx([0.7, 0.85])
    half = stats.t.ppf(0.975, 2) * stats.sem([0.8, 0.9, 0.85])
    assert az["half_width"][1] == pytest.approx(half, rel=1e-3)
    assert curves["base"]["mean"] == pytest.approx([0.5, 0.6, 0.7]) and np.isnan(curves["base"]["half_width"]).all()
    # Only the checkpoints every seed measured: against perfect is at the last one.
    assert strength.lever_curves(report, "against_perfect")["az"]["iteration"] == [20]
    fig, numbers = strength.solved_curves(report, x="positions")
    assert numbers["search_keeps"]["az"]["x"] == [100.0, 200.0] and len(fig.axes) == 3
    with pytest.raises(ValueError, match="unknown measure"):
        strength.lever_curves(report, "elo")
    with pytest.raises(ValueError, match="unknown axis"):
        strength.lever_curves(report, x="hours")
