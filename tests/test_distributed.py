"""Tests for azdb_jax/distributed.py: flag checks, and every entry point initialises first.

``jax.distributed.initialize`` is refused once the XLA backend exists, and importing the
game layer creates it. Each script of ``experiments/`` is started with the multi-host
flags (a run of one process, so it needs no partner) and ``--helpfull``: the help is printed
after the module's imports, so a script that imports the library before initialising
fails with JAX's RuntimeError instead. The training entry point initialises inside its
``main``; ``tests/test_multihost.py`` runs it with two processes.

``--coordinator=auto`` is checked in a SLURM job step as JAX reads it (the variables
``srun`` sets, on loopback): one process joins a cluster of one, two processes find each
other, and without a cluster the error names what JAX detects and the explicit flags.
"""

import os
import pathlib
import socket
import subprocess
import sys
import textwrap

import pytest

from azdb_jax import distributed

REPO = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = ("eval_puzzles", "play_match", "opening_diversity", "nim_measures", "diversity_report", "learning_check",
           "play")


@pytest.mark.parametrize("args, message", [
    (("127.0.0.1:1234", None, 0), "needs --num_processes and --process_id"),
    (("127.0.0.1:1234", 2, None), "needs --num_processes and --process_id"),
    (("127.0.0.1:1234", 2, 2), r"--process_id=2 must be in \[0, --num_processes=2\)"),
    (("127.0.0.1", 2, 0), "must be HOST:PORT"),
    ((None, 2, 0), "need --coordinator"),
    (("auto", 2, None), "--coordinator=auto takes the number of processes .* drop --num_processes,"),
    (("auto", None, 0), "drop --process_id,"),
    (("auto", 1, 0), "drop --num_processes and --process_id, or give --coordinator=HOST:PORT"),
])
def test_inconsistent_flags_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        distributed.initialize(*args)


def test_without_a_coordinator_nothing_happens():
    assert distributed.initialize(None, None, None) is False
    assert distributed.initialize_from_argv(["prog", "--workdir", "w", "--resume", "--num_processes=1"]) is False


def test_bad_values_on_the_command_line_end_the_script(tmp_path):
    with pytest.raises(SystemExit, match="process_id"):
        distributed.initialize_from_argv(["prog", "--process_id=-1"])
    with pytest.raises(SystemExit, match="needs --num_processes"):
        distributed.initialize_from_argv(["prog", "--coordinator", "127.0.0.1:1234"])
    flagfile = tmp_path / "flags.txt"  # absl's --flagfile is read too
    flagfile.write_text("--workdir=runs/x\n--coordinator=127.0.0.1:1234\n")
    with pytest.raises(SystemExit, match="needs --num_processes"):
        distributed.initialize_from_argv(["prog", f"--flagfile={flagfile}"])
    with pytest.raises(SystemExit, match="prog: error: --coordinator=auto .* drop --process_id"):
        distributed.initialize_from_argv(["prog", "--coordinator=auto", "--process_id", "0"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# One process of a cluster: ``--coordinator=auto`` read from its command line, then a
# collective across every process; prints what it joined as JSON.
AUTO_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {repo!r})
    from azdb_jax import distributed
    joined = distributed.initialize_from_argv(["prog", "--coordinator=auto"])
    import jax
    import numpy as np
    from jax.experimental import multihost_utils
    ids = np.asarray(multihost_utils.process_allgather(np.int32(jax.process_index()))).reshape(-1).tolist()
    print(json.dumps(dict(joined=joined, count=jax.process_count(), index=jax.process_index(), ids=ids)))
""")

# What JAX's cluster detection reads (jax._src.clusters): kept out of the processes' environment.
CLUSTER_VARS = ("SLURM_", "OMPI_", "KUBERNETES_SERVICE_HOST", "JAX_COORDINATOR", "TPU_WORKER_HOSTNAMES",
                "MEGASCALE_")


def _cluster_env(**variables) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLUSTER_VARS)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return dict(env, JAX_PLATFORMS="cpu", **variables)


def _slurm_env(ntasks: int, procid: int, port: int) -> dict:
    """A process of a SLURM job step on one node, as ``srun`` describes it."""
    return _cluster_env(SLURM_JOB_ID="4242", SLURM_STEP_NODELIST="localhost", SLURM_STEP_NUM_NODES="1",
                        SLURM_NTASKS=str(ntasks), SLURM_PROCID=str(procid), SLURM_LOCALID=str(procid),
                        JAX_COORDINATOR_PORT=str(port))


def _run_auto(envs) -> list:
    procs = [subprocess.Popen([sys.executable, "-c", AUTO_SCRIPT.format(repo=str(REPO))], env=env, cwd=REPO,
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for env in envs]
    outputs = []
    for proc in procs:
        try:
            outputs.append(proc.communicate(timeout=300)[0])
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise AssertionError("--coordinator=auto: timed out")
    return [(proc.returncode, out) for proc, out in zip(procs, outputs)]


def _joined(out: str) -> dict:
    import json  # pylint: disable=g-import-not-at-top

    return json.loads(out.strip().splitlines()[-1])


def test_auto_joins_the_cluster_that_jax_detects():
    (code, out), = _run_auto([_slurm_env(1, 0, _free_port())])
    assert code == 0, out[-3000:]
    assert _joined(out) == dict(joined=True, count=1, index=0, ids=[0])


def test_auto_without_a_cluster_names_the_detected_ones_and_the_explicit_flags():
    (code, out), = _run_auto([_cluster_env()])
    assert code != 0
    assert "prog: error: --coordinator=auto: JAX detected no cluster to join" in out, out[-3000:]
    assert "SLURM job steps (srun)" in out and "Cloud TPU VMs" in out
    assert "pass --coordinator=HOST:PORT --num_processes=N --process_id=I" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_auto_brings_up_two_processes_of_a_slurm_step():
    port = _free_port()
    results = _run_auto([_slurm_env(2, i, port) for i in range(2)])
    for i, (code, out) in enumerate(results):
        assert code == 0, f"process {i}:\n{out[-3000:]}"
        assert _joined(out) == dict(joined=True, count=2, index=i, ids=[0, 1])


@pytest.mark.slow
def test_every_script_initialises_before_the_library_touches_the_backend():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(REPO / "experiments" / f"{name}.py"), f"--coordinator=127.0.0.1:{_free_port()}",
             "--num_processes=1", "--process_id=0", "--helpfull"],
            env=env, cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for name in SCRIPTS
    }
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        assert "RuntimeError" not in out and "Traceback" not in out, f"{name}:\n{out[-3000:]}"
        assert "--coordinator" in out and "--process_id" in out, f"{name} lacks the multi-host flags:\n{out[-2000:]}"
