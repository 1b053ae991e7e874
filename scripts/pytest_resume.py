"""Resuming a test run whose test process died in native code (``scripts/test.sh``).

Test processes of the whole suite have died of a segmentation fault in native code: three
times, each in another test, each of which passed when it ran again (most likely a process at
the kernel's limit on memory mappings, which tests/conftest.py now keeps it from). pytest-xdist
reports the test that was running as failed and, as ``scripts/test.sh`` asks
(``--max-worker-restart=0``), ends the run; its own restart of the worker once waited for the
lost worker's tests until CI's time limit. ``scripts/test.sh`` then runs the same command once
more without the tests that finished, so a crash that recurs still fails the run, and a run
with any other failure is not repeated.

As a pytest plugin (``-p scripts.pytest_resume``):

- ``--resume-record=DIR``: the main process appends every test report's outcome to
  ``DIR/reports`` (JSON lines: test, phase, outcome, whether it is a crashed worker's);
- ``--resume-done=FILE``: the tests named in FILE (a node id a line) are deselected.

As a script, ``python scripts/pytest_resume.py DIR`` reads ``DIR/reports`` and exits 0 after
writing ``DIR/done`` (the tests that passed or skipped) when the run's only failures were
crashed workers, else exits 1.
"""

import json
import os
import pathlib
import sys

CRASHED = "crashed while running"


def pytest_addoption(parser):
    group = parser.getgroup("resume", "resuming a run after a crashed test process (scripts/test.sh)")
    group.addoption("--resume-record", metavar="DIR", default=None,
                    help="append every test report's outcome to DIR/reports")
    group.addoption("--resume-done", metavar="FILE", default=None, help="deselect the tests named in FILE")


_CONFIG: dict = {}


def pytest_configure(config):
    _CONFIG["config"] = config


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    folder = config.getoption("resume_record") if config is not None else None
    if not folder or hasattr(config, "workerinput"):  # the main process records what every worker reported
        return
    record = dict(test=report.nodeid, when=report.when, outcome=report.outcome,
                  crashed=bool(report.failed and CRASHED in str(report.longrepr)))
    with open(os.path.join(folder, "reports"), "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def pytest_collection_modifyitems(config, items):
    done_file = config.getoption("resume_done")
    if not done_file:
        return
    done = set(pathlib.Path(done_file).read_text(encoding="utf-8").splitlines())
    deselected = [item for item in items if item.nodeid in done]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.nodeid not in done]


def decide(folder: pathlib.Path) -> int:
    """0 (and ``folder/done`` written) when every failure recorded in ``folder/reports`` is a
    crashed worker's, else 1."""
    reports = folder / "reports"
    if not reports.is_file():
        print("scripts/test.sh: the run recorded no test reports; not run again", flush=True)
        return 1
    records = [json.loads(line) for line in reports.read_text(encoding="utf-8").splitlines() if line.strip()]
    crashed = sorted({r["test"] for r in records if r["crashed"]})
    failed = sorted({r["test"] for r in records if r["outcome"] == "failed" and not r["crashed"]})
    if not crashed or failed:
        return 1
    done = sorted({r["test"] for r in records} - set(crashed))
    (folder / "done").write_text("".join(test + "\n" for test in done), encoding="utf-8")
    print(f"\nscripts/test.sh: a test process died while running {', '.join(crashed)}; the run's only "
          f"failure{'s' if len(crashed) > 1 else ''}. Running the same command once more without the "
          f"{len(done)} tests that finished.\n", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/pytest_resume.py RECORD_DIR")
    sys.exit(decide(pathlib.Path(sys.argv[1])))
