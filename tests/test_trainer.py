"""The training loop: targets across windows, exact resume, errors on bad runs."""

import functools
import json
import pathlib
import shutil
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import arena, checkpoint, replay, trainer  # noqa: E402
from azdb_jax import config as config_lib  # noqa: E402
from azdb_jax import runner, runs  # noqa: E402
from azdb_jax.presets import get_preset  # noqa: E402
from conftest import trained_run_config  # noqa: E402  pylint: disable=g-bad-import-order

TINY = [
    "env.name=tic_tac_toe", "team.num_players=2", "team.lam=1.0", "team.matchmaker=uniform",
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
    "search.num_simulations=6", "selfplay.num_games=8", "selfplay.num_plies=5", "selfplay.sample_plies=2",
    "replay.capacity=512", "run.batch_size=32", "run.learner_steps=2", "run.num_iterations=4",
    "run.eval_every=2", "run.eval_games=4", "run.eval_simulations=4", "run.checkpoint_every=2",
]


def tiny_config(*extra):
    return config_lib.apply_overrides(get_preset("demo"), TINY + list(extra))


def _records(workdir):
    return runs.read_metrics(workdir, wall_clock=False)


def _copy(run, workdir):
    """A copy of a shared ``trained_run`` (tests/conftest.py) to resume, continue or damage."""
    shutil.copytree(run, workdir)
    return workdir


@pytest.mark.slow
def test_every_finished_transition_is_stored_once():
    # A transition at window position t sees 2T - t - 1 later plies; tic-tac-toe games last
    # at most 9 plies <= T + 1 for T = 8, so every trainable transition gets its outcome (in
    # its own window or the next) and is stored exactly once.
    config = tiny_config("selfplay.num_plies=8")
    components = runs.build_components(config)
    state = trainer.init_trainer(components, jax.random.PRNGKey(0))
    phase = jax.jit(functools.partial(trainer.selfplay_phase, components))
    stored, trainable_finished = 0, 0
    windows = []
    for _ in range(6):
        state, metrics = phase(state)
        stored += int(metrics["examples_stored"])
        assert float(metrics["dropped_fraction"]) == 0.0
        windows.append(jax.device_get(state.pending))
    stream = jax.tree.map(lambda *w: np.concatenate(w), *windows)  # [6T, B]
    for b in range(stream.terminated.shape[1]):
        last_end = np.flatnonzero(stream.terminated[:, b])
        if last_end.size:
            trainable_finished += int(stream.train_mask[: last_end[-1] + 1, b].sum())
    assert stored == trainable_finished
    # z in the buffer are game results; +1 on a game's winning move.
    z = np.asarray(state.replay.data.z)[replay.stored_rows(state.replay)]
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0} and (z == 1.0).any()


@pytest.mark.slow
def test_resume_continues_exactly(tmp_path, trained_run):
    # The straight run is tic-tac-toe's shared run (a diverse team: ψ and the previous network's
    # ψ are resumed too); a λ = 1 run resumed past its end is tests/test_cli.py's
    # test_a_finished_run_continued_equals_a_longer_run.
    straight = trained_run("tic_tac_toe")
    config = runs.load_run_config(straight)
    assert config.run.num_iterations == 2 and config.run.eval_every == config.run.checkpoint_every == 1
    resumed = tmp_path / "resumed"
    runner.train(config, resumed, stop_after=1, progress=False)  # "interrupted" after iteration 1
    # An iteration past the last checkpoint that was logged and then lost is replayed, not duplicated.
    with (resumed / "metrics.jsonl").open("a") as f:
        f.write(json.dumps({"kind": "train", "iteration": 2, "loss": 123.0}) + "\n")
    runner.train(config, resumed, resume=True, progress=False)
    assert _records(straight) == _records(resumed)
    kinds = {(r["kind"], r["iteration"]) for r in _records(straight)}
    assert ("eval", 1) in kinds and ("eval", 2) in kinds and ("train", 2) in kinds
    opponents = {r["opponent"] for r in _records(straight) if r["kind"] == "eval" and r["iteration"] == 2}
    assert {"random", "perfect", "previous"} <= opponents


def test_run_errors_are_clear(tmp_path, trained_run):
    # On a copy of tic-tac-toe's shared run (trains nothing here).
    shared = trained_run("tic_tac_toe")
    config = runs.load_run_config(shared)
    simulations = config.search.num_simulations
    with pytest.raises(FileNotFoundError, match="no config.json"):
        runner.train(config, tmp_path / "nothing", resume=True, progress=False)
    run = _copy(shared, tmp_path / "run")
    with pytest.raises(ValueError, match="already holds checkpoints"):
        runner.train(config, run, progress=False)
    with pytest.raises(ValueError, match=f"search.num_simulations: {simulations} -> {simulations + 1}"):
        runner.train(config_lib.apply_overrides(config, [f"search.num_simulations={simulations + 1}"]), run,
                     resume=True, progress=False)
    # A checkpoint whose data was damaged is refused with its path named.
    step_dir = run / "checkpoints" / str(config.run.num_iterations)  # the latest, which a resume restores
    data_files = [p for p in (step_dir / "state").rglob("*") if p.is_file() and p.stat().st_size > 64]
    assert data_files
    for path in data_files:
        path.write_bytes(b"\0" * path.stat().st_size)
    with pytest.raises(checkpoint.CheckpointError, match=str(step_dir)):
        runner.train(config_lib.dataclasses.replace(config, run=config_lib.dataclasses.replace(
            config.run, num_iterations=config.run.num_iterations)), run, resume=True, progress=False)
    shutil.rmtree(run / "checkpoints")
    with pytest.raises(FileNotFoundError, match="no checkpoint to resume from"):
        runner.train(config, run, resume=True, progress=False)


def test_evaluation_plays_the_chosen_opponents_only(tmp_path):
    with pytest.raises(ValueError, match="eval_opponents"):
        tiny_config('run.eval_opponents=["random","random"]')
    components = runs.build_components(tiny_config())
    chosen = runner.Evaluator(tiny_config('run.eval_opponents=["perfect","previous"]'), components)
    assert chosen.opponents == ("perfect", "previous")
    assert set(runner.Evaluator(tiny_config(), components).opponents) == {"random", "perfect", "minimax2", "previous"}
    with pytest.raises(ValueError, match="no opponent 'oracle' for tic_tac_toe"):
        runner.Evaluator(tiny_config('run.eval_opponents=["oracle"]'), components)
    # A run evaluates exactly the chosen ones (the previous network from its second evaluation).
    # Tic-tac-toe's shared configuration (tests/conftest.py), evaluated after each of its 2
    # iterations, with the opponents chosen: its other programs are the shared run's.
    chosen_run = config_lib.apply_overrides(trained_run_config("tic_tac_toe"),
                                            ['run.eval_opponents=["perfect","previous"]'])
    assert chosen_run.run.num_iterations == 2 and chosen_run.run.eval_every == 1
    runner.train(chosen_run, tmp_path / "run", progress=False)
    evals = [(r["iteration"], r["opponent"]) for r in _records(tmp_path / "run") if r["kind"] == "eval"]
    assert sorted(set(evals)) == [(1, "perfect"), (2, "perfect"), (2, "previous")]


@pytest.mark.slow
def test_evaluation_is_one_program_whose_opponents_play_as_separate_matches(monkeypatch):
    """Every opponent, "previous" included (a stand-in before there is one), is one traced
    and compiled program for every player and evaluation; each opponent's games are the
    match ``arena.play_games`` plays against it alone with the same key, game for game."""
    config = tiny_config("team.lam=0.5", "diversity.l0=0.3", "run.eval_games=6")
    components = runs.build_components(config)
    assert components.diverse
    traces = []
    original = arena.play_each
    monkeypatch.setattr(arena, "play_each", lambda *a, **k: (traces.append(1), original(*a, **k))[1])
    evaluator = runner.Evaluator(config, components)
    names = ("random", "perfect", "minimax2", "previous")
    assert evaluator.opponents == names and evaluator.players == [0, 1]
    state = trainer.init_trainer(components, jax.random.PRNGKey(0))
    first_params, psi = state.train_state.params, state.expected_features.psi
    params = jax.tree.map(lambda x: x * 1.5, first_params)
    key = jax.random.PRNGKey(7)
    first = evaluator(first_params, key, 2, psi)
    second = evaluator(params, key, 4, psi)
    assert len(traces) == 1 and evaluator.games.play._cache_size() == 1  # pylint: disable=protected-access
    assert [(r["player"], r["opponent"]) for r in first] == [(p, o) for p in (0, 1) for o in names[:3]]
    assert [(r["player"], r["opponent"]) for r in second] == [(p, o) for p in (0, 1) for o in names]
    # The second evaluation's matches one by one: keys split off in turn, the previous network the first's.
    games = evaluator.games
    alone = jax.jit(lambda pa, pb, k, policy: arena.play_games(
        components.env, games.agent, pa, policy, pb, k, num_games=6, max_plies=games.max_plies,
        adjudicate=games.adjudicate), static_argnames="policy")
    keys = {}
    for player in (0, 1):
        for name in names:
            key, keys[player, name] = jax.random.split(key)
    current = (params, psi, jnp.int32(1))
    params_b = (None, None, None, (first_params, psi, jnp.int32(1)))
    together = jax.device_get(games.play(current, params_b, jnp.stack([keys[1, name] for name in names])))
    records = {r["opponent"]: r for r in second if r["player"] == 1}
    fields = ("wins", "draws", "losses", "unfinished", "adjudicated", "mean_length")
    for j, (name, policy) in enumerate(zip(names, games.policies)):
        single = jax.device_get(alone(current, params_b[j], keys[1, name], policy))
        for mine, theirs in zip(jax.tree.map(lambda x, j=j: x[j], together), single):
            np.testing.assert_array_equal(mine, theirs)
        summary = arena.summarize(single)
        assert {f: records[name][f] for f in fields} == {f: summary[f] for f in fields}, name


@pytest.mark.slow
def test_diversity_terms_flow_into_records_and_targets():
    config = tiny_config("team.num_players=3", "team.lam=0.5", "diversity.l0=0.3", "diversity.n_td=2",
                         "selfplay.num_plies=8")
    components = runs.build_components(config)
    assert components.diverse and not runs.build_components(tiny_config()).diverse
    state = trainer.init_trainer(components, jax.random.PRNGKey(1))
    phase = jax.jit(functools.partial(trainer.selfplay_phase, components))
    state, metrics = phase(state)  # ψ is initialised from this first window
    psi = np.asarray(state.expected_features.psi)
    assert np.asarray(state.expected_features.initialised).all()
    # ψ_i is the mean φ of player i's own moves in the first window.
    window = jax.device_get(state.pending)
    for i in range(3):
        mine = window.player == i
        np.testing.assert_allclose(psi[i], window.features[mine].mean(0), rtol=1e-5)
    state, metrics = phase(state)
    window = jax.device_get(state.pending)
    # The recorded r_d is Eq. 8 with the ψ the search used (the one before this window).
    from azdb_jax import diversity  # pylint: disable=g-import-not-at-top
    expected = jax.vmap(lambda phi, p: diversity.team_intrinsic_reward(jnp.asarray(psi), phi, p, l0=0.3))(
        window.features.reshape(-1, window.features.shape[-1]), window.player.reshape(-1))
    np.testing.assert_allclose(window.reward_d.reshape(-1), expected, rtol=1e-5, atol=1e-6)
    assert np.abs(window.reward_d).max() > 0
    assert {"d_0", "d_1", "d_2", "diversity_objective", "mean_reward_d"} <= set(metrics)
    z_d = np.asarray(state.replay.data.z_d)[replay.stored_rows(state.replay)]
    assert np.abs(z_d).max() > 0
    # The intrinsic metrics, recomputed from the window over the moves of players 1-2 (λ = 0.5).
    diverse = window.player > 0
    v_int, v = window.search_value_intrinsic[diverse], window.search_value[diverse]
    assert np.abs(v_int).max() > 0 and np.all(window.search_value_intrinsic[~diverse] == 0)
    share = np.abs(v_int).sum() / (np.abs(v_int).sum() + np.abs(v - v_int).sum())
    np.testing.assert_allclose(metrics["intrinsic_share"], share, rtol=1e-5)
    rd = window.reward_d[diverse]
    np.testing.assert_allclose(metrics["reward_d_per_move"], rd.mean(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(metrics["intrinsic_return_per_game"],
                               0.5 * rd.mean() * float(metrics["plies_per_game"]) / 2, rtol=1e-5, atol=1e-7)
    # A team without diversity has none of it.
    plain = runs.build_components(tiny_config("team.num_players=3", "selfplay.num_plies=8"))
    _, plain_metrics = jax.jit(functools.partial(trainer.selfplay_phase, plain))(
        trainer.init_trainer(plain, jax.random.PRNGKey(1)))
    for name in ("intrinsic_share", "reward_d_per_move", "intrinsic_return_per_game"):
        assert float(plain_metrics[name]) == 0.0


def test_checkpoint_written_before_the_intrinsic_part_restores_with_zeros(tmp_path, trained_run):
    # A run saved before the self-play window recorded search_value_intrinsic: its pending
    # window has no such array. It restores, with the part 0 (what a λ = 1 window records).
    # The run is tic-tac-toe's shared one (read, not written); the old checkpoint goes to tmp_path.
    run = trained_run("tic_tac_toe")
    config = runs.load_run_config(run)
    components = runs.build_components(config)
    _, _, state = runs.load_run(run)
    old = state.pending._asdict()
    del old["search_value_intrinsic"]
    run_state = runs.to_run_state(state, None, False)
    run_state = run_state._replace(extra=dict(run_state.extra, pending=old))
    with checkpoint.RunCheckpointer(str(tmp_path / "old" / "checkpoints")) as manager:
        manager.save(int(state.iteration), run_state, config=config)
    shutil.copy(run / "config.json", tmp_path / "old" / "config.json")
    _, _, restored = runs.load_run(tmp_path / "old")
    np.testing.assert_array_equal(restored.pending.search_value_intrinsic, 0.0)
    np.testing.assert_array_equal(restored.pending.search_value, state.pending.search_value)
    # The shared team is diverse (λ = 0.5), so the zeros are the restore's fill for the missing
    # array, not values a λ = 1 window would have recorded anyway.
    assert components.diverse is True


@pytest.mark.slow
def test_psro_nash_run_writes_graph_images(tmp_path):
    config = tiny_config("team.num_players=3", "team.matchmaker=psro_nash", "run.eval_every=0",
                         "run.num_iterations=2", "run.checkpoint_every=1")
    runner.train(config, tmp_path, progress=False)
    for iteration in (1, 2):
        png = tmp_path / "graphs" / f"graph_{iteration:07d}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        graph = np.load(tmp_path / "graphs" / f"graph_{iteration:07d}.npz")
        np.testing.assert_allclose(graph["sigma_white"].sum(-1), 1.0, rtol=1e-5)
        assert np.allclose(np.triu(graph["sigma_black"], 1), 0.0)  # PSRO rows only on players <= i
        psi = np.load(tmp_path / "psi" / f"psi_{iteration:07d}.npz")
        assert psi["psi"].shape == (3, 18)
    assert graph["counts"].sum() > 0


def test_the_abstract_state_is_traced_once_per_configuration_and_matches_a_fresh_state(monkeypatch):
    from azdb_jax import runs  # pylint: disable=g-import-not-at-top

    config = tiny_config("selfplay.num_plies=3", "network.channels=4")
    components = runs.build_components(config)
    calls = []
    original = trainer.init_trainer
    monkeypatch.setattr(trainer, "init_trainer", lambda *a, **k: (calls.append(k.get("window")), original(*a, **k))[1])
    first = runs.abstract_state(config, components)
    again = runs.abstract_state(config, runs.build_components(config))
    reseeded = tiny_config("selfplay.num_plies=3", "network.channels=4", "run.seed=7", "run.num_iterations=9")
    assert runs.abstract_state(reseeded, runs.build_components(reseeded)) is first
    assert again is first and len(calls) == 1  # another run of one configuration traces nothing
    longer = tiny_config("selfplay.num_plies=4", "network.channels=4")
    wider = runs.abstract_state(longer, runs.build_components(longer))
    assert len(calls) == 2 and wider.pending.rewards.shape[0] == 4 and first.pending.rewards.shape[0] == 3
    # A state built from the kept window has the shapes and dtypes of one built by tracing self-play.
    monkeypatch.setattr(trainer, "init_trainer", original)
    fresh = jax.eval_shape(functools.partial(original, components), jax.random.PRNGKey(0))
    given = jax.eval_shape(functools.partial(original, components, window=first.pending), jax.random.PRNGKey(0))
    for tree in (first, given):
        assert jax.tree.structure(tree) == jax.tree.structure(fresh)
        assert jax.tree.leaves(jax.tree.map(lambda a, b: (a.shape, a.dtype) == (b.shape, b.dtype), tree, fresh)) \
            == [True] * len(jax.tree.leaves(fresh))


@pytest.mark.slow
def test_a_continued_run_still_loads_its_earlier_checkpoints(tmp_path, trained_run):
    # A copy of tic-tac-toe's shared run (planned for 2 iterations), continued to 4.
    shared = trained_run("tic_tac_toe")
    config = runs.load_run_config(shared)
    assert config.run.num_iterations == 2
    run = _copy(shared, tmp_path / "run")
    _, _, at_2 = runs.load_run(run)
    longer = config_lib.dataclasses.replace(config, run=config_lib.dataclasses.replace(config.run, num_iterations=4))
    runner.train(longer, run, resume=True, progress=False)
    assert runs.load_run_config(run).run.num_iterations == 4
    again_config, _, again = runs.load_run(run, step=2)  # saved when the run was planned for 2
    assert int(again.iteration) == 2 and again_config.run.num_iterations == 4
    assert all(jax.tree.leaves(jax.tree.map(np.array_equal, at_2.train_state.params, again.train_state.params)))
    assert int(runs.load_run(run)[2].iteration) == 4
    # Any other difference from what a checkpoint was saved with is still refused, naming it.
    simulations = config.search.num_simulations
    changed = json.loads((run / "config.json").read_text())
    changed["search"]["num_simulations"] = simulations + 1
    (run / "config.json").write_text(json.dumps(changed))
    with pytest.raises(checkpoint.CheckpointError,
                       match=f"search.num_simulations: checkpoint has {simulations}, asked for {simulations + 1}"):
        runs.load_run(run, step=2)


@pytest.mark.slow
def test_runs_of_one_configuration_share_its_programs_and_train_as_with_fresh_ones(tmp_path, monkeypatch):
    """A second run of a configuration (another seed and length) traces no program again,
    and trains exactly as the same run with programs built afresh; any other field, or
    start positions, gets programs of its own."""
    config = tiny_config("selfplay.num_plies=4", "run.eval_every=1", "run.num_iterations=1")
    reseeded = tiny_config("selfplay.num_plies=4", "run.eval_every=1", "run.num_iterations=2", "run.seed=5")
    monkeypatch.setattr(runner, "_PROGRAMS", type(runner._PROGRAMS)())  # pylint: disable=protected-access
    traces = []
    original = trainer.selfplay_phase
    monkeypatch.setattr(trainer, "selfplay_phase", lambda *a, **k: (traces.append(1), original(*a, **k))[1])
    runner.train(config, tmp_path / "first", progress=False)
    traced = len(traces)
    assert traced >= 1
    runner.train(reseeded, tmp_path / "shared", progress=False)
    assert len(traces) == traced  # the kept self-play program, not a new trace
    assert runner.programs(reseeded) is runner.programs(config)
    assert runner.programs(tiny_config("selfplay.num_plies=4", "run.eval_every=1", "search.num_simulations=5")) \
        is not runner.programs(config)
    runner._PROGRAMS.clear()  # pylint: disable=protected-access
    runner.train(reseeded, tmp_path / "fresh", progress=False)
    assert len(traces) > traced
    trained = runner.programs(reseeded)
    shared, fresh = _records(tmp_path / "shared"), _records(tmp_path / "fresh")
    assert [r["kind"] for r in shared].count("eval") > 0 and shared == fresh
    # Start positions: the programs hold the positions, so a changed source file gets new ones.
    source = pathlib.Path(runner.__file__).parent / "data" / "gardner_puzzles" / "mate_in_1.csv"
    lines = source.read_text().splitlines(keepends=True)
    puzzles = tmp_path / "puzzles.csv"
    puzzles.write_text("".join(lines[:12]))
    positions = tiny_config("env.name=gardner_chess", "selfplay.num_plies=2", f'start_positions.sources=["{puzzles}"]')
    kept = runner.programs(positions)
    assert runner.programs(positions) is kept
    puzzles.write_text("".join(lines[:2] + lines[3:12]))  # one puzzle fewer
    changed = runner.programs(positions)
    assert changed is not kept
    # Only the last _PROGRAMS_KEPT (2) configurations stay: the trained one, used longest ago, is gone.
    assert list(runner._PROGRAMS.values()) == [kept, changed]  # pylint: disable=protected-access
    assert runner.programs(reseeded) is not trained
