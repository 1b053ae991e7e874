"""The training entry point as a tool: resuming past a run's planned end, and bad input.

- ``--resume`` with a raised ``run.num_iterations`` continues exactly as if the run had
  been planned longer: a 2 + 2 run equals a 4-iteration run on every metric and on the
  final parameters (checked here through ``runner.train``, which the CLI calls);
- other overrides on resume, a bad flag, a bad override, W&B logging asked of a population
  and a corrupt checkpoint end
  the script with one line naming the field or file, exit status 2, no traceback
  (``--verbosity=1`` adds it); library INFO logs stay off the console.
"""

import json
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import presets, runner, runs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_trainer import TINY  # noqa: E402  pylint: disable=g-import-not-at-top

REPO = pathlib.Path(__file__).resolve().parents[1]
# Evaluations at 3 (scheduled) and at the end; the 2-iteration run ends between them.
PLAN = TINY + ["run.eval_every=3", "run.checkpoint_every=0"]


def _config(iterations: int):
    return config_lib.apply_overrides(presets.get_preset("demo"), PLAN + [f"run.num_iterations={iterations}"])


def _records(workdir):
    return runs.read_metrics(workdir, wall_clock=False)


@pytest.mark.slow
def test_a_finished_run_continued_equals_a_longer_run(tmp_path):
    runner.train(_config(4), tmp_path / "four", progress=False)
    runner.train(_config(2), tmp_path / "two", progress=False)
    assert any(r["kind"] == "eval" and r["iteration"] == 2 for r in _records(tmp_path / "two"))  # its end
    runner.train(_config(4), tmp_path / "two", resume=True, progress=False)
    four, continued = _records(tmp_path / "four"), _records(tmp_path / "two")
    assert continued == four  # every metric, every evaluation (the old end's evaluation is gone)
    assert sorted({r["iteration"] for r in four if r["kind"] == "eval"}) == [3, 4]
    _, _, state_four = runs.load_run(tmp_path / "four")
    _, _, state_two = runs.load_run(tmp_path / "two")
    for a, b in zip(jax.tree.leaves(state_four.train_state.params), jax.tree.leaves(state_two.train_state.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert json.loads((tmp_path / "two" / "config.json").read_text())["run"]["num_iterations"] == 4

    with pytest.raises(ValueError, match=r"search.num_simulations: 6 -> 8"):
        runner.train(config_lib.apply_overrides(_config(6), ["search.num_simulations=8"]), tmp_path / "two",
                     resume=True, progress=False)
    with pytest.raises(ValueError, match="already at iteration 4"):
        runner.train(_config(3), tmp_path / "two", resume=True, progress=False)


def _cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, str(REPO / "experiments" / "train.py"), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=900)


def _one_line_error(result, *words):
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("train.py: error: "), result.stderr[-2000:]
    for word in words:
        assert word in lines[0], lines[0]


def test_bad_flags_and_overrides_are_one_line(tmp_path):
    _one_line_error(_cli("--preset=demo", "--simulations=3"), "simulations")
    _one_line_error(_cli("--preset=huge", f"--workdir={tmp_path / 'r'}"), "unknown preset 'huge'")
    _one_line_error(_cli(f"--workdir={tmp_path / 'r'}", "--override=team.lam=2"), "team.lam")
    _one_line_error(_cli(f"--workdir={tmp_path / 'r'}", "--override=search.nope=1"), "search.nope")
    _one_line_error(_cli(f"--workdir={tmp_path / 'none'}", "--resume"), "config.json")
    _one_line_error(_cli(f"--workdir={tmp_path / 'r'}", "--seeds=0,1", "--wandb_project=p"), "--wandb_project",
                    "population")
    assert not (tmp_path / "r").exists()  # nothing half-written


@pytest.mark.slow
def test_resume_overrides_and_a_corrupt_checkpoint(tmp_path):
    run = tmp_path / "run"
    overrides = [f"--override={o}" for o in PLAN + ["run.num_iterations=1", "run.eval_every=0"]]
    result = _cli(f"--workdir={run}", *overrides, "--summary_positions=8")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "I0" not in result.stderr and "orbax" not in result.stderr  # no INFO logs by default
    assert "| player | λ_i |" in result.stdout and "picture: " in result.stdout
    _one_line_error(_cli(f"--workdir={run}", "--resume", "--override=team.lam=0.5"), "team.lam", "--workdir")
    result = _cli(f"--workdir={run}", "--resume", "--override=run.num_iterations=2", "--summary=false")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 of 2 iterations" in result.stdout
    # Damage the latest checkpoint's array data: one line naming the checkpoint.
    step_dir = run / "checkpoints" / "2"
    meta = step_dir / "meta" / "metadata"
    meta.write_text(meta.read_text()[:20])
    _one_line_error(_cli(f"--workdir={run}", "--resume", "--override=run.num_iterations=3"), str(step_dir))
    result = _cli(f"--workdir={run}", "--resume", "--override=run.num_iterations=3", "--verbosity=1")
    assert result.returncode == 2 and "Traceback" in result.stderr
