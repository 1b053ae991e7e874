"""Tests for azdb_jax/distributed.py: flag checks, and every entry point initialises first.

``jax.distributed.initialize`` is refused once the XLA backend exists, and importing the
game layer creates it. Each script of ``experiments/`` is started with the multi-host
flags (a run of one process, so it needs no partner) and ``--helpfull``: the help is printed
after the module's imports, so a script that imports the library before initialising
fails with JAX's RuntimeError instead. The training entry point initialises inside its
``main``; ``tests/test_multihost.py`` runs it with two processes.
"""

import os
import pathlib
import socket
import subprocess
import sys

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
