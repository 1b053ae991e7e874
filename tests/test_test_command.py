"""The test command itself (``scripts/test.sh``): a test process that dies in native code ends
the run with that test named as failed and the other files' tests run, instead of the
distributed run waiting for the lost worker's tests forever."""

import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_a_worker_that_crashes_ends_the_run_with_its_test_named(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_dies.py").write_text(
        "import os, signal, time\n"
        "def test_dies_in_native_code():\n    time.sleep(1.0)\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
        "def test_after_it():\n    pass\n")
    for name in "abc":
        (tests / f"test_{name}.py").write_text(
            "import time\ndef test_one():\n    time.sleep(0.3)\ndef test_two():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k not in ("AZDB_TEST_COMPILE_LOG", "PYTEST_XDIST_WORKER")}
    env["AZDB_TEST_WORKERS"] = "2"
    result = subprocess.run(["bash", "scripts/test.sh", str(tests), "-p", "no:cacheprovider", "-o", "addopts=",
                             "-q", "--rootdir", str(tmp_path), "-c", os.devnull],
                            cwd=REPO, capture_output=True, text=True, timeout=180, env=env)
    out = result.stdout
    assert result.returncode == 1, out[-3000:] + result.stderr[-3000:]
    assert "crashed while running 'tests/test_dies.py::test_dies_in_native_code'" in out, out[-3000:]
    assert "1 failed, 6 passed" in out, out[-3000:]  # every other file's tests ran, the crash was not retried
