"""azdb_jax.agent and runs.load_agent: the one agent a run becomes.

Loading reads the run's config, parameters and ψ only (checked against ``runs.load_run``,
which restores the whole trainer state, and with the trainer's parts made to fail);
the agent's λ and intrinsic-reward hook are what self-play and the in-training
evaluator use (the same functions of the same arrays), and its three policies agree
with each other where they must.
"""

import dataclasses
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import agent as agent_lib  # noqa: E402
from azdb_jax import checkpoint, config as config_lib, diversity, games, learner, matchmaking  # noqa: E402
from azdb_jax import replay, runs, search as search_lib, start_positions, trainer  # noqa: E402
from azdb_jax.presets import get_preset  # noqa: E402

TINY = [
    "env.name=tic_tac_toe", "team.num_players=3", "team.lam=0.5", "team.matchmaker=uniform",
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
    "search.num_simulations=4", "selfplay.num_games=4", "selfplay.num_plies=3",
    "replay.capacity=64", "run.batch_size=8", "run.learner_steps=1", "run.num_iterations=1",
    "run.eval_simulations=3", "diversity.l0=0.7",
]


def _config(*extra):
    return config_lib.apply_overrides(get_preset("demo"), TINY + list(extra))


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    """A run directory holding one checkpoint of a fresh (untrained) team with a non-trivial ψ."""
    config = _config()
    components = runs.build_components(config)
    state = trainer.init_trainer(components, jax.random.PRNGKey(3))
    psi = jax.random.uniform(jax.random.PRNGKey(4), state.expected_features.psi.shape)
    state = state._replace(expected_features=state.expected_features._replace(psi=psi),
                           iteration=jnp.asarray(7, jnp.int32))
    workdir = tmp_path_factory.mktemp("agent") / "run"
    runs.write_run(workdir, config, state)
    return workdir, config, state


def _files(root: pathlib.Path):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_load_agent_reads_the_run_as_load_run_does(saved_run):
    workdir, config, state = saved_run
    agent = runs.load_agent(workdir)
    _, _, restored = runs.load_run(workdir)
    assert isinstance(agent, agent_lib.Agent)
    assert jax.tree.structure(agent.params) == jax.tree.structure(restored.train_state.params)
    for mine, theirs in zip(jax.tree.leaves(agent.params), jax.tree.leaves(restored.train_state.params)):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
    np.testing.assert_array_equal(np.asarray(agent.psi), np.asarray(state.expected_features.psi))
    assert agent.step == 7 and agent.name == "run@7"
    assert agent.num_players == 3 and agent.lambdas == (1.0, 0.5, 0.5) and agent.l0 == 0.7
    assert agent.search_config.num_simulations == 3  # run.eval_simulations
    assert agent.env.id == "tic_tac_toe"
    ablation = runs.load_agent(workdir, num_simulations=5, extrinsic_only=True)
    assert ablation.name == "run@7/extrinsic_only" and ablation.search_config.num_simulations == 5
    assert list(ablation.search_lambdas) == [1.0, 1.0, 1.0]


def test_load_agent_builds_no_trainer_and_writes_nothing(saved_run, monkeypatch):
    workdir, _, _ = saved_run
    before = _files(workdir)

    def refuse(*args, **kwargs):
        raise AssertionError("loading an agent must not build the training parts")

    for module, name in ((learner, "make_optimizer"), (trainer, "init_trainer"), (replay, "init"),
                         (matchmaking, "interaction_graphs"), (start_positions, "make_init_fn"),
                         (runs, "build_components"), (runs, "abstract_state")):
        monkeypatch.setattr(module, name, refuse)
    agent = runs.load_agent(workdir)
    assert agent.step == 7
    assert _files(workdir) == before


def test_load_agent_names_bad_runs(saved_run, tmp_path):
    workdir, _, _ = saved_run
    with pytest.raises(FileNotFoundError, match="no config.json"):
        runs.load_agent(tmp_path / "nothing")
    with pytest.raises(checkpoint.CheckpointError, match="no checkpoint for step 3"):
        runs.load_agent(workdir, step=3)
    other = tmp_path / "other"  # a config.json that does not match the checkpoint
    other.mkdir()
    (other / "checkpoints").symlink_to(workdir / "checkpoints")
    (other / "config.json").write_text(config_lib.to_json(_config("diversity.l0=0.9")))
    with pytest.raises(checkpoint.CheckpointError, match="diversity.l0"):
        runs.load_agent(other)


def test_a_corrupt_parameter_file_is_named(saved_run, tmp_path):
    workdir, _, _ = saved_run
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(workdir, copy)
    data_files = [p for p in (copy / "checkpoints").rglob("*") if p.is_file() and "state" in p.parts
                  and p.stat().st_size > 64 and "d" in p.parent.name]
    assert data_files, "no array data files found in the checkpoint"
    for path in data_files:
        path.write_bytes(b"\0" * path.stat().st_size)
    with pytest.raises(checkpoint.CheckpointError, match="corrupt"):
        runs.load_agent(copy)


# ------------------------------------------------------------------ λ and the hook in one place


def test_the_trainer_and_the_loaded_agent_assemble_the_same_search(saved_run):
    workdir, config, state = saved_run
    components = runs.build_components(config)
    inside = components.agent(state.train_state.params, state.expected_features.psi)
    loaded = runs.load_agent(workdir)
    assert inside.lambdas == loaded.lambdas and inside.l0 == loaded.l0
    assert inside.intrinsic_in_search == loaded.intrinsic_in_search
    np.testing.assert_array_equal(inside.search_lambdas, [1.0, 0.5, 0.5])
    hook = inside.search_hook()
    assert hook.feature_fn is games.get("tic_tac_toe").features
    # the hook is Eq. 8 of this ψ and ℓ0 (diversity.team_intrinsic_reward, tested there by hand)
    phi = jnp.zeros((hook.hook_params.shape[1],)).at[0].set(1.0)
    for player in range(3):
        expected = diversity.team_intrinsic_reward(state.expected_features.psi, phi, jnp.int32(player), l0=0.7)
        np.testing.assert_allclose(hook.intrinsic_reward_fn(hook.hook_params, phi, jnp.int32(player)), expected)


def test_the_hook_follows_lambda_psi_and_in_search(saved_run):
    _, config, state = saved_run
    base = runs.build_components(config).agent(state.train_state.params, state.expected_features.psi)
    assert base.search_hook().intrinsic_reward_fn is not None and base.diverse
    assert base.player_hook(0) == search_lib.NO_HOOK  # λ_0 = 1: dropped exactly
    assert base.player_hook(1).intrinsic_reward_fn is not None
    assert base.as_extrinsic_only().search_hook() == search_lib.NO_HOOK
    kept_out = dataclasses.replace(base, intrinsic_in_search=False)
    assert kept_out.search_hook() == search_lib.NO_HOOK
    assert kept_out.intrinsic_reward().intrinsic_reward_fn is not None  # self-play still scores r_d
    assert dataclasses.replace(base, psi=None).intrinsic_reward() == search_lib.NO_HOOK
    plain = runs.build_components(_config("team.lam=1.0")).agent(state.train_state.params, None)
    assert not plain.diverse and plain.intrinsic_reward() == search_lib.NO_HOOK


# ------------------------------------------------------------------ the policies


def test_a_player_plays_the_same_moves_however_it_is_chosen(saved_run):
    workdir, _, _ = saved_run
    agent = runs.load_agent(workdir)
    env = agent.env
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 6))
    key = jax.random.PRNGKey(5)
    latent = jax.jit(agent.latent_policy())  # one program for every player
    for player in (0, 1):  # λ_0 = 1 (its hook dropped), λ_1 = 0.5 (its hook on)
        fixed = jax.jit(agent.player_policy(player))(agent.params, key, states)
        chosen = latent((agent.params, jnp.int32(player)), key, states)
        assert np.asarray(states.legal_action_mask)[np.arange(6), np.asarray(fixed)].all()
        np.testing.assert_array_equal(fixed, chosen)
    # the team with a rule plays the move of the player the rule picks
    from azdb_jax import planning

    search = jax.jit(agent.search)(agent.params, jax.random.split(key)[0], states)
    player, action = planning.team_move(search.stats, "visit", move="visits")
    np.testing.assert_array_equal(jax.jit(agent.rule_policy("visit"))(agent.params, key, states), action)


def test_another_seeds_agent_plays_through_one_compiled_program(saved_run, tmp_path):
    """``psi_as_param``: the policy built from one agent, given another agent's ψ and
    parameters (another seed's run of the configuration, loaded apart), plays that agent's
    moves and searches with its ψ, through one compiled program for both."""
    workdir, config, state = saved_run
    agent = runs.load_agent(workdir)
    seed_state = trainer.init_trainer(runs.build_components(config), jax.random.PRNGKey(11))
    psi = jax.random.uniform(jax.random.PRNGKey(9), state.expected_features.psi.shape)
    runs.write_run(tmp_path / "seed", config, seed_state._replace(
        expected_features=seed_state.expected_features._replace(psi=psi)))
    other = runs.load_agent(tmp_path / "seed")
    states = jax.vmap(agent.env.init)(jax.random.split(jax.random.PRNGKey(0), 6))
    key = jax.random.PRNGKey(5)
    shared = jax.jit(agent.psi_as_param(lambda a: a.latent_policy()))
    for player in (0, 1, 2):
        own = jax.jit(other.latent_policy())((other.params, jnp.int32(player)), key, states)
        np.testing.assert_array_equal(shared((other.psi, (other.params, jnp.int32(player))), key, states), own)
        shared((agent.psi, (agent.params, jnp.int32(player))), key, states)
    assert shared._cache_size() == 1  # one program for both agents and every player

    # the team's search values with ψ as an argument are the other agent's own, and ψ
    # reaches them (players 1 and 2 search with λ < 1)
    values = jax.jit(agent.psi_as_param(lambda a: lambda params, k, s: a.search(params, k, s).stats.value))
    mine = values((other.psi, other.params), key, states)
    np.testing.assert_allclose(mine, jax.jit(other.search)(other.params, key, states).stats.value, rtol=1e-6)
    assert not np.allclose(mine[:, 1:], values((agent.psi, other.params), key, states)[:, 1:])


@pytest.mark.parametrize("bad", [-1, 3, 1.0, True, "0"])
def test_a_player_outside_the_team_is_refused(saved_run, bad):
    agent = runs.load_agent(saved_run[0])
    with pytest.raises(ValueError, match="player must be an int in"):
        agent.player_policy(bad)


def test_bad_policy_options_are_refused(saved_run):
    agent = runs.load_agent(saved_run[0])
    with pytest.raises(ValueError, match="unknown selection rule"):
        agent.rule_policy("best")
    with pytest.raises(ValueError, match="move must be one of"):
        agent.rule_policy("visit", move="most")
    with pytest.raises(ValueError, match="sample_plies"):
        agent.latent_policy(sample_plies=-1)
    with pytest.raises(ValueError, match="num_simulations"):
        agent.with_simulations(0)
