"""The test command itself (``scripts/test.sh``, with ``scripts/pytest_resume.py``): a test
process that dies in native code ends the run with that test named, instead of the distributed
run waiting for the lost worker's tests forever; when that was the run's only failure the same
command runs once more without the tests that finished, so a crash that does not recur passes,
one that recurs fails, and a run with an ordinary failure is not repeated. The test files run
longest first (``scripts/pytest_order.py``)."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

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


def _order_plugin():
    import importlib.util  # pylint: disable=g-import-not-at-top
    spec = importlib.util.spec_from_file_location("pytest_order", REPO / "scripts" / "pytest_order.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_longest_first_by_hand(tmp_path):
    order = _order_plugin()
    files = ["t/a.py", "t/b.py", "t/new.py", "t/c.py", "t/newer.py"]
    # The unrecorded files lead in collection order, then the longest; ties keep collection order.
    assert order.longest_first(files, {"t/a.py": 5.0, "t/b.py": 30.0, "t/c.py": 5.0}) == [
        "t/new.py", "t/newer.py", "t/b.py", "t/a.py", "t/c.py"]
    assert order.read_seconds(tmp_path / "missing.json") == {}
    bad = tmp_path / "bad.json"
    for text in ("{not json", json.dumps({"seconds": {"t/a.py": "long"}}), json.dumps([1, 2])):
        bad.write_text(text)
        with pytest.raises(ValueError, match="bad.json"):
            order.read_seconds(bad)


def test_the_run_takes_the_longest_file_first_and_records_each_files_seconds(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    for name, sleep in (("a", 0.0), ("b", 0.3), ("c", 0.0)):
        (tests / f"test_{name}.py").write_text(f"import time\ndef test_{name}1():\n    time.sleep({sleep})\n"
                                                f"def test_{name}2():\n    pass\n")
    record = tmp_path / "seconds.json"
    record.write_text(json.dumps({"seconds": {"tests/test_a.py": 1.0, "tests/test_b.py": 9.0}}))
    out, timeline = tmp_path / "out.json", tmp_path / "timeline"
    timeline.mkdir()
    result = subprocess.run([sys.executable, "-m", "pytest", str(tests), "-p", "scripts.pytest_order",
                             f"--file-seconds={record}", f"--file-seconds-out={out}", f"--timeline-out={timeline}",
                             "-p", "no:xdist",
                             "-p", "no:cacheprovider", "-o", "addopts=", "-v", "--rootdir", str(tmp_path),
                             "-c", os.devnull], cwd=REPO, capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = re.findall(r"tests/test_(\w+)\.py::test_\w+ PASSED", result.stdout)
    assert ran == ["c", "c", "b", "b", "a", "a"], result.stdout[-3000:]  # unrecorded c, then b (9 s), a (1 s)
    seconds = json.loads(out.read_text())["seconds"]
    assert sorted(seconds) == ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]
    assert seconds["tests/test_b.py"] >= 0.3 > seconds["tests/test_a.py"]
    rows = [json.loads(line) for line in (timeline / "timeline_main.jsonl").read_text().splitlines()]
    assert [row["test"].split("::")[1] for row in rows] == ["test_c1", "test_c2", "test_b1", "test_b2", "test_a1",
                                                            "test_a2"]
    assert all(row["end"] >= row["start"] for row in rows) and rows[2]["end"] - rows[2]["start"] >= 0.3
