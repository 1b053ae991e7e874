"""The contract every registered game keeps: a tiny diverse team trains one iteration and
the in-training evaluation plays it against the game's fixed opponents.

One run per game (module-scoped), so each game's programs compile once; the run is as
small as the pipeline allows (a 4-channel network, 2 games of 4 plies, 2 simulations),
with two players and λ = 0.5 so that φ, ψ and the intrinsic reward take part. A game
added to the registry is trained and evaluated here without any edit to this file.
"""

import math

import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import features, games, opponents, runner, runs
from azdb_jax.presets import get_preset

# Each game's run compiles its training and evaluation programs (about a minute a game on
# two cores): the whole suite's.
pytestmark = pytest.mark.slow

EVAL_GAMES = 2
EVAL_PLIES = 12  # evaluation games are cut here (or at the game's own end, if sooner)


def tiny_config(env_id: str) -> config_lib.TrainConfig:
    env = games.make(env_id)
    return config_lib.apply_overrides(get_preset("demo"), [
        f"env.name={env_id}", "team.num_players=2", "team.lam=0.5", "team.matchmaker=uniform",
        "network.channels=4", "network.num_blocks=1", "network.value_hidden=4",
        "search.num_simulations=2", "selfplay.num_games=2", "selfplay.num_plies=4", "selfplay.sample_plies=2",
        "replay.capacity=64", "run.batch_size=8", "run.learner_steps=1", "run.num_iterations=1",
        "run.eval_every=1", f"run.eval_games={EVAL_GAMES}", "run.eval_simulations=2",
        f"run.eval_max_plies={min(EVAL_PLIES, games.max_plies(env))}", "run.checkpoint_every=1",
    ])


@pytest.fixture(scope="module", params=games.IDS)
def trained(request, tmp_path_factory):
    env_id = request.param
    workdir = tmp_path_factory.mktemp(env_id)
    config = tiny_config(env_id)
    summary = runner.train(config, workdir, progress=False)
    return env_id, config, workdir, summary


def test_one_iteration_trains(trained):
    env_id, _, workdir, summary = trained
    assert summary["iterations"] == 1
    records = runs.read_metrics(workdir)
    train = [r for r in records if r["kind"] == "train"]
    assert len(train) == 1 and math.isfinite(train[0]["loss"]), env_id
    assert train[0]["plies_per_game"] > 0


def test_evaluation_plays_every_fixed_opponent(trained):
    env_id, config, workdir, _ = trained
    evals = [r for r in runs.read_metrics(workdir) if r["kind"] == "eval"]
    env = config.env.make()
    expected = set(opponents.opponents_for(env_id, env))  # "previous" waits for a second evaluation
    for player in range(config.team.num_players):
        mine = {r["opponent"]: r for r in evals if r["player"] == player}
        assert set(mine) == expected, (env_id, player)
        for record in mine.values():
            assert record["wins"] + record["draws"] + record["losses"] + record["unfinished"] == EVAL_GAMES
            assert 0 < record["mean_length"] <= config.run.eval_max_plies


def test_the_run_loads_back_with_its_features(trained):
    env_id, config, workdir, _ = trained
    loaded, components, state = runs.load_run(workdir)
    assert loaded == config and components.env.id == env_id and int(state.iteration) == 1
    psi = np.asarray(state.expected_features.psi)
    assert psi.shape == (config.team.num_players, features.num_features(components.env))
    assert np.isfinite(psi).all() and psi.min() >= 0.0 and psi.max() <= 1.0
