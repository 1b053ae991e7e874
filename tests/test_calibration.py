"""Calibrating ℓ0 from a λ = 1 control: constructed ψ whose right ℓ0 is known, runs on disk, errors."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import calibration, diversity
from azdb_jax import config as config_lib
from azdb_jax.presets import get_preset


def _triangle(side: float, num_features: int = 12, seed: int = 0) -> np.ndarray:
    """ψ of 3 players at the corners of an equilateral triangle of the given side, [3, F]."""
    rng = np.random.default_rng(seed)
    centre = rng.uniform(0.2, 0.4, num_features)
    basis, _ = np.linalg.qr(rng.normal(size=(num_features, 2)))  # two orthonormal directions
    radius = side / np.sqrt(3.0)
    angles = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
    return centre + radius * (np.cos(angles)[:, None] * basis[:, 0] + np.sin(angles)[:, None] * basis[:, 1])


def _records(psis):
    """metrics.jsonl-like training records with the d_i that the trainer logs for each ψ."""
    out = []
    for iteration, psi in enumerate(psis, 1):
        distances = np.asarray(diversity.nearest_neighbours(jnp.asarray(psi, jnp.float32)).distance)
        out.append(dict(kind="train", iteration=iteration, **{f"d_{i}": float(d) for i, d in enumerate(distances)}))
    return out


def test_constructed_control_gives_the_known_l0():
    # A control that starts spread out (random play) and settles with its players 0.1 apart:
    # its settled spread is 0.1, so ℓ0 = 3 × 0.1, where the reward of Eq. 8 vanishes.
    psis = [_triangle(0.6 - 0.05 * k, seed=k) for k in range(8)] + [_triangle(0.1, seed=100 + k) for k in range(10)]
    records = _records(psis)
    records.insert(5, {"kind": "eval", "iteration": 5, "score": 0.5})  # evaluation records are skipped
    spread = calibration.settled_spread(records, window=10)
    np.testing.assert_allclose(spread, 0.1, rtol=1e-5)
    result = calibration.calibrate_l0([spread])
    np.testing.assert_allclose(result.l0, 0.3, rtol=1e-5)
    # A team at that distance gets no intrinsic reward, whatever it plays; at the control's
    # distance the reward pushes at 1 − 1/27 of its strength.
    at_l0 = jnp.asarray(_triangle(result.l0, seed=7), jnp.float32)
    phi = jnp.asarray(np.random.default_rng(1).integers(0, 2, 12), jnp.float32)
    for i in range(3):
        reward = diversity.team_intrinsic_reward(at_l0, phi, i, l0=result.l0)
        assert abs(float(reward)) < 1e-5
    np.testing.assert_allclose(calibration.reward_factor(0.1, result.l0), 1 - 1 / 27, rtol=1e-6)


def test_window_median_and_several_controls():
    # The window's median ignores one outlying iteration; several controls take the median of their spreads.
    psis = [_triangle(0.2, seed=k) for k in range(9)] + [_triangle(0.9, seed=50)]
    np.testing.assert_allclose(calibration.settled_spread(_records(psis), window=10), 0.2, rtol=1e-5)
    np.testing.assert_allclose(calibration.settled_spread(_records(psis), window=1), 0.9, rtol=1e-5)
    result = calibration.calibrate_l0([0.1, 0.3, 0.2], factor=2.5)
    assert result.spread == pytest.approx(0.2) and result.l0 == pytest.approx(0.5)
    assert "ℓ0 = 2.5 × 0.200 = 0.500" in result.describe()


def _run_dir(tmp_path, name, records, *overrides):
    workdir = tmp_path / name
    workdir.mkdir()
    config = config_lib.apply_overrides(get_preset("demo"), list(overrides))
    (workdir / "config.json").write_text(config_lib.to_json(config))
    (workdir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return workdir


def test_calibrate_from_runs_reads_controls_and_refuses_other_runs(tmp_path):
    a = _run_dir(tmp_path, "a", _records([_triangle(0.15, seed=k) for k in range(12)]), "team.lam=1.0")
    b = _run_dir(tmp_path, "b", _records([_triangle(0.25, seed=k) for k in range(12)]), "team.lam=1.0")
    result = calibration.calibrate_from_runs([a, b])
    np.testing.assert_allclose(result.run_spreads, [0.15, 0.25], rtol=1e-5)
    np.testing.assert_allclose(result.l0, 3 * 0.2, rtol=1e-5)
    diverse = _run_dir(tmp_path, "diverse", _records([_triangle(0.5)]))  # the demo: λ = 0.7
    with pytest.raises(ValueError, match="diverse: a λ = 1 control of two or more players"):
        calibration.calibrate_from_runs([diverse])
    single = _run_dir(tmp_path, "single", [], "team.num_players=1", "team.lam=1.0")
    with pytest.raises(ValueError, match="1 player"):
        calibration.calibrate_from_runs([single])
    broken = _run_dir(tmp_path, "broken", [], "team.lam=1.0")
    (broken / "metrics.jsonl").write_text('{"kind": "train", "iteration": 1, "d_0": 0.1, "d_1": 0.1}\n{"kind": \n')
    with pytest.raises(ValueError, match=r"broken/metrics.jsonl:2: not a JSON record"):
        calibration.calibrate_from_runs([broken])


def test_bad_inputs_name_the_problem():
    with pytest.raises(ValueError, match="no training record with the nearest-neighbour distances"):
        calibration.settled_spread([{"kind": "train", "iteration": 1, "loss": 1.0}], source="runs/x/metrics.jsonl")
    with pytest.raises(ValueError, match="window"):
        calibration.settled_spread([], window=0)
    with pytest.raises(ValueError, match="factor must be > 1"):
        calibration.calibrate_l0([0.1], factor=1.0)
    with pytest.raises(ValueError, match="positive control spreads"):
        calibration.calibrate_l0([])
