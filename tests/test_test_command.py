"""The test command itself (``scripts/test.sh``, with ``scripts/pytest_resume.py``): a test
process that dies in native code ends the run with that test named, instead of the distributed
run waiting for the lost worker's tests forever; when that was the run's only failure the same
command runs once more without the tests that finished, so a crash that does not recur passes,
one that recurs fails, and a run with an ordinary failure is not repeated."""

import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[1]

# Dies once (or every time); with ``wait``, only after the ordinary failure in the other file ran.
DIES = ("import os, pathlib, signal, time\n"
        "HERE = pathlib.Path(__file__).parent\n"
        "def test_dies_in_native_code():\n"
        "    for _ in range(600 if {wait} else 10):\n"
        "        if (HERE / 'failure_ran').exists():\n"
        "            break\n"
        "        time.sleep(0.1)\n"
        "    if {always} or not (HERE / 'died_once').exists():\n"
        "        (HERE / 'died_once').touch()\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
        "def test_after_it():\n    pass\n")
OTHER = "import time\ndef test_one():\n    time.sleep(0.3)\ndef test_two():\n    pass\n"
FAILS = ("import pathlib\ndef test_fails():\n"
         "    (pathlib.Path(__file__).parent / 'failure_ran').touch()\n    assert 1 == 2\n")


def _run(tmp_path, always=False, failing=False):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_dies.py").write_text(DIES.format(always=always, wait=failing))
    if failing:  # two files, one a worker: the crash comes after the failure, in the same run
        (tests / "test_c.py").write_text(FAILS)
    else:
        for name in "abc":
            (tests / f"test_{name}.py").write_text(OTHER)
    env = {k: v for k, v in os.environ.items() if k not in ("AZDB_TEST_COMPILE_LOG", "PYTEST_XDIST_WORKER")}
    env["AZDB_TEST_WORKERS"] = "2"
    result = subprocess.run(["bash", "scripts/test.sh", str(tests), "-p", "no:cacheprovider", "-o", "addopts=",
                             "-q", "--rootdir", str(tmp_path), "-c", os.devnull],
                            cwd=REPO, capture_output=True, text=True, timeout=180, env=env)
    return result.returncode, result.stdout + result.stderr


def test_a_crash_that_does_not_recur_passes_and_every_test_runs(tmp_path):
    status, out = _run(tmp_path)
    assert status == 0, out[-4000:]
    assert "crashed while running 'tests/test_dies.py::test_dies_in_native_code'" in out, out[-4000:]
    first = re.search(r"\n1 failed, (\d+) passed in", out)
    second = re.search(r"\n(\d+) passed in", out[first.end():] if first else "")
    assert first and second, out[-4000:]
    assert f"without the {first.group(1)} tests that finished" in out, out[-4000:]
    # Every one of the 8 tests passed once: the first run's, then the rest (the crashed one among them).
    assert int(first.group(1)) + int(second.group(1)) == 8, out[-4000:]


def test_a_crash_that_recurs_fails(tmp_path):
    status, out = _run(tmp_path, always=True)
    assert status == 1, out[-4000:]
    assert out.count("crashed while running 'tests/test_dies.py::test_dies_in_native_code'") >= 2, out[-4000:]
    assert out.count("Running the same command once more") == 1, out[-4000:]


def test_a_run_with_an_ordinary_failure_is_not_repeated(tmp_path):
    status, out = _run(tmp_path, failing=True)
    assert status == 1, out[-4000:]
    assert "crashed while running" in out and "test_c.py::test_fails" in out, out[-4000:]
    assert "Running the same command once more" not in out, out[-4000:]
