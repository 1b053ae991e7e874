"""A run on 4 devices learns as on one: the same tiny run, through ``runner.train`` (its
files, checkpoints and metrics), on a 1-device and a 4-device mesh gives the same records
within float rounding (each device plays, stores and samples its own game slots:
tests/test_data_parallel.py checks each phase).

Runs in a subprocess with four forced CPU devices (XLA_FLAGS must be set before JAX
starts).
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {repo!r})
    import jax
    assert jax.device_count() == 4, jax.devices()
    from azdb_jax import config as config_lib
    from azdb_jax import runner, runs
    from azdb_jax.presets import get_preset
    sys.path.insert(0, {tests!r})
    from test_trainer import TINY
    out = {{}}
    for devices in (1, 4):
        config = config_lib.apply_overrides(get_preset("demo"), TINY + [
            "run.num_devices=%d" % devices, "run.eval_every=0", "run.num_iterations=3"])
        workdir = {tmp!r} + "/run%d" % devices
        runner.train(config, workdir, progress=False)
        out[devices] = runs.read_metrics(workdir, wall_clock=False)
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_one_and_four_devices_agree(tmp_path):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    script = SCRIPT.format(repo=str(REPO), tests=str(REPO / "tests"), tmp=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    runs = json.loads(result.stdout.strip().splitlines()[-1])
    one, two = runs["1"], runs["4"]
    assert len(one) == len(two) == 3
    for a, b in zip(one, two):
        assert a.keys() == b.keys()
        for name in a:
            if isinstance(a[name], str):
                assert a[name] == b[name]
                continue
            assert abs(a[name] - b[name]) <= 1e-4 * max(1.0, abs(a[name])), (name, a[name], b[name])
