"""The test command itself (``scripts/test.sh``, with ``scripts/pytest_resume.py``): a test
process that dies in native code ends the run with that test named, instead of the distributed
run waiting for the lost worker's tests forever; when that was the run's only failure the same
command runs once more without the tests that finished, so a crash that does not recur passes,
one that recurs fails, and a run with an ordinary failure is not repeated."""

import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[1]

DIES = ("import os, pathlib, signal, time\n"
        "MARK = pathlib.Path(__file__).with_name('died_once')\n"
        "def test_dies_in_native_code():\n"
        "    time.sleep(1.0)\n"
        "    if {always} or not MARK.exists():\n"
        "        MARK.touch()\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
        "def test_after_it():\n    pass\n")
OTHER = "import time\ndef test_one():\n    time.sleep(0.3)\ndef test_two():\n    pass\n"


def _run(tmp_path, always=False, failing=False):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_dies.py").write_text(DIES.format(always=always))
    for name in "abc":
        (tests / f"test_{name}.py").write_text(OTHER)
    if failing:
        (tests / "test_c.py").write_text(OTHER + "def test_fails():\n    assert 1 == 2\n")
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
    assert "1 failed, 6 passed" in out, out[-4000:]  # the first run: every other file's tests
    assert "without the 6 tests that finished" in out, out[-4000:]
    assert "\n2 passed in" in out, out[-4000:]  # then the crashed file's two tests only


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
