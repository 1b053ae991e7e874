"""Run configs: validation, JSON round trips, overrides, presets."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import config as config_lib  # noqa: E402
from azdb_jax.presets import PRESETS, get_preset  # noqa: E402


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_round_trip_through_json(name):
    config = get_preset(name)
    assert config_lib.from_json(config_lib.to_json(config)) == config


def test_paper_presets_follow_the_paper():
    fast, full = get_preset("azdb_fast"), get_preset("azdb_full")
    assert (fast.team.num_players, fast.run.batch_size, fast.run.store_fraction) == (5, 1024, 1.0)
    assert (full.team.num_players, full.run.batch_size, full.run.store_fraction) == (10, 4096, 0.1)
    assert full.replay.capacity == 1_000_000 and full.search.num_simulations == 400
    assert full.run.num_iterations * full.run.learner_steps == 1_600_000
    assert get_preset("az_full").team.num_players == 1 and fast.team.matchmaker == "psro_nash"


def test_overrides_apply_and_type_check():
    config = config_lib.apply_overrides(get_preset("demo"), [
        "env.name=nim", "env.nim_heaps=[1,3,5]", "search.num_simulations=8", "learner.learning_rate=1",
        "team.matchmaker=uniform"])
    assert config.env.nim_heaps == (1, 3, 5) and config.search.num_simulations == 8
    assert config.learner.learning_rate == 1.0 and isinstance(config.learner.learning_rate, float)
    assert get_preset("demo").search.num_simulations != 8  # presets are not mutated


@pytest.mark.parametrize("override,message", [
    ("search.num_simulations=0", "search.num_simulations must be an int >= 1"),
    ("search.num_sims=8", "unknown field 'search.num_sims'"),
    ("serch.num_simulations=8", "no config section 'serch'"),
    ("env.name=go", "env.name must be one of"),
    ("team.lam=1.5", "team.lam must be in"),
    ("team.matchmaker=elo", "team.matchmaker must be one of"),
    ("learner.optimizer=rmsprop", "LearnerConfig.optimizer must be one of"),
    ("run.batch_size=100000", "exceeds replay.capacity"),
    ("run.num_iterations=ten", "expected int"),
    ("network.latent=concat", "NetworkConfig.latent must be one of"),
    ("selfplay.num_plies", "expected section.field=value"),
])
def test_bad_values_are_named(override, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        config_lib.apply_overrides(get_preset("demo"), [override])


def test_bad_json_names_its_source():
    with pytest.raises(ValueError, match="runs/x/config.json: not valid JSON"):
        config_lib.from_json("{", source="runs/x/config.json")
    with pytest.raises(ValueError, match="unknown key"):
        config_lib.from_json('{"bogus": 1}')
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        get_preset("huge")


def test_team_lambdas_by_hand():
    assert config_lib.TeamConfig(num_players=4, lam=0.3).lambdas == (1.0, 0.3, 0.3, 0.3)
    assert config_lib.TeamConfig(num_players=1, lam=0.3).lambdas == (1.0,)
    with pytest.raises(ValueError, match="team.lam"):
        config_lib.TeamConfig(num_players=3, lam=1.2)
    with pytest.raises(ValueError, match="team.num_players"):
        config_lib.TeamConfig(num_players=0, lam=0.5)
