"""The contract every registered game keeps: a tiny diverse team trains and the in-training
evaluation plays it against the game's fixed opponents (and, from its second evaluation, the
previous network).

The run is the game's shared one (``trained_run`` in tests/conftest.py, trained once per test
session and reused by every test of the game): as small as the pipeline allows (a 4-channel
network, 2 games of 4 plies, 2 simulations), three players with λ = 0.5 so that φ, ψ and
the intrinsic reward take part, two iterations with an evaluation after each. A game added to
the registry is trained and evaluated here without any edit to this file.
"""

import math

import numpy as np
import pytest

from azdb_jax import features, games, opponents, runs
from conftest import TRAINED_RUN_EVAL_GAMES, train_summary, trained_run_config  # pylint: disable=g-bad-import-order

# Each game's run compiles its training and evaluation programs (about a minute a game on
# two cores): the whole suite's.
pytestmark = pytest.mark.slow


@pytest.fixture(params=games.IDS)
def trained(request, trained_run):
    env_id = request.param
    workdir = trained_run(env_id)
    return env_id, trained_run_config(env_id), workdir, train_summary(workdir)


def test_one_iteration_trains(trained):
    # Every iteration of the shared run (two) trains: one record each, a finite loss.
    env_id, config, workdir, summary = trained
    assert summary["iterations"] == config.run.num_iterations
    records = runs.read_metrics(workdir)
    train = [r for r in records if r["kind"] == "train"]
    assert [r["iteration"] for r in train] == list(range(1, config.run.num_iterations + 1)), env_id
    for record in train:
        assert math.isfinite(record["loss"]) and record["plies_per_game"] > 0, env_id


def test_evaluation_plays_every_fixed_opponent(trained):
    env_id, config, workdir, _ = trained
    evals = [r for r in runs.read_metrics(workdir) if r["kind"] == "eval"]
    env = config.env.make()
    fixed = set(opponents.opponents_for(env_id, env))
    assert sorted({r["iteration"] for r in evals}) == [1, 2]
    for iteration, expected in ((1, fixed), (2, fixed | {"previous"})):  # "previous" waits for a second evaluation
        for player in range(config.team.num_players):
            mine = {r["opponent"]: r for r in evals if r["player"] == player and r["iteration"] == iteration}
            assert set(mine) == expected, (env_id, iteration, player)
            for record in mine.values():
                assert record["wins"] + record["draws"] + record["losses"] + record["unfinished"] \
                    == TRAINED_RUN_EVAL_GAMES
                assert 0 < record["mean_length"] <= config.run.eval_max_plies


def test_the_run_loads_back_with_its_features(trained):
    env_id, config, workdir, _ = trained
    loaded, components, state = runs.load_run(workdir)
    assert loaded == config and components.env.id == env_id and int(state.iteration) == config.run.num_iterations
    psi = np.asarray(state.expected_features.psi)
    assert psi.shape == (config.team.num_players, features.num_features(components.env))
    assert np.isfinite(psi).all() and psi.min() >= 0.0 and psi.max() <= 1.0
