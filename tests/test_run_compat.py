"""Runs written before a config field or a checkpoint array was added still load.

New config fields default to the behaviour of the code that wrote the checkpoint, so a
checkpoint without them restores; a field it has with another value is still an error. A
checkpoint without the evaluator's previous ψ restores with the current ψ in its place.
"""

import json
import pathlib
import sys

import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import checkpoint, diversity, runs  # noqa: E402


def _state(extra):
    return checkpoint.RunState(params={"w": jnp.arange(3.0)}, opt_state={"m": jnp.zeros(3)},
                               step=jnp.int32(4), rng_key=jnp.zeros(2, jnp.uint32), extra=extra)


def test_config_fields_added_after_a_checkpoint_default_to_its_behaviour(tmp_path):
    features = diversity.init_expected_features(2, 3)
    with checkpoint.RunCheckpointer(str(tmp_path / "ckpt")) as manager:
        manager.save(1, _state({"expected_features": features}), config={"team": {"lam": 0.9}})
        target = _state({"expected_features": features})
        manager.restore(1, target=target, config={"team": {"lam": 0.9}, "payoff": {"decay": 1.0}})
        with pytest.raises(checkpoint.CheckpointError, match="team.lam: checkpoint has 0.9, asked for 1.0"):
            manager.restore(1, target=target, config={"team": {"lam": 1.0}, "payoff": {"decay": 1.0}})
        with pytest.raises(checkpoint.CheckpointError, match="team.lam: checkpoint has 0.9, asked for '<absent>'"):
            manager.restore(1, target=target, config={"team": {}})


def test_checkpoint_without_the_previous_psi_restores_with_the_current_psi(tmp_path):
    features = diversity.init_expected_features(2, 3)._replace(psi=jnp.float32([[1, 2, 3], [4, 5, 6]]))
    with checkpoint.RunCheckpointer(str(tmp_path / "ckpt")) as manager:
        manager.save(1, _state({"expected_features": features}), config={"a": 1})
        target = _state({"expected_features": features, "previous_psi": jnp.zeros((2, 3))})
        restored = runs.restore_run_state(manager, 1, target, {"a": 1})
        np.testing.assert_array_equal(restored.extra["previous_psi"], features.psi)
        manager.save(2, _state({"expected_features": features, "previous_psi": features.psi * 2}), config={"a": 1})
        restored = runs.restore_run_state(manager, 2, target, {"a": 1})
        np.testing.assert_array_equal(restored.extra["previous_psi"], features.psi * 2)


def test_runs_saved_before_opponent_leaves_load_with_the_drop_rule(tmp_path):
    from azdb_jax import config as config_lib, presets  # pylint: disable=g-import-not-at-top

    config = config_lib.apply_overrides(presets.get_preset("gardner_cpu"), ["diversity.opponent_leaves=predict"])
    assert config.team.lam < 1 and runs.predicts_opponent_leaves(config)
    assert not runs.predicts_opponent_leaves(presets.get_preset("gardner_cpu"))  # the default reading: drop
    # A plain-AlphaZero team has no intrinsic terms: no second head, whatever the reading.
    assert not runs.predicts_opponent_leaves(config_lib.apply_overrides(config, ["team.lam=1.0"]))
    data = config_lib.to_dict(config)
    del data["diversity"]["opponent_leaves"]  # as written before the option existed
    (tmp_path / "config.json").write_text(json.dumps(data))
    old = runs.load_run_config(tmp_path)
    assert old.diversity.opponent_leaves == "drop" and not runs.predicts_opponent_leaves(old)
    assert old.team == config.team
    data["diversity"]["opponent_leaves"] = "predict"
    (tmp_path / "config.json").write_text(json.dumps(data))
    assert runs.load_run_config(tmp_path).diversity.opponent_leaves == "predict"
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json: not valid JSON"):
        runs.load_run_config(tmp_path)
