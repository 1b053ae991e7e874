"""The longest test files first, so that both test processes finish together (``scripts/test.sh``).

pytest-xdist's ``--dist loadfile`` hands each test file to one process, in the order of the
collection; its default order (``--loadscope-reorder``) puts the files with the most tests
first, which leaves the whole suite's longest files (a few end-to-end tests each:
``tests/test_learning.py``, ``tests/test_population.py``) to the end, where one process runs
the last of them while the other has nothing left. Longest first is the classic rule for
sharing jobs between machines (the longest-processing-time rule): the files that remain at
the end are the short ones.

As a pytest plugin (``-p scripts.pytest_order``, with ``--no-loadscope-reorder``):

- the collected tests are ordered by file, longest file first, by the seconds a whole-suite
  run spent in each file (``--file-seconds=FILE``, default ``tests/file_seconds.json``); a
  file without a record comes first (it may be a long new one). Tests keep their order
  within a file.
- ``--file-seconds-out=FILE``: the main process writes the seconds this run spent in each
  file (setup, call and teardown of its tests, over all processes) as a new record:
  ``bash scripts/test.sh --all --file-seconds-out=tests/file_seconds.json`` refreshes it.
- ``--timeline-out=DIR``: each test process appends every test's start and end (wall-clock
  seconds) to ``DIR/timeline_<process>.jsonl``, to see how the processes shared the run.
"""

import collections
import json
import os
import pathlib
import time

import pytest

_DEFAULT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "file_seconds.json"


def pytest_addoption(parser):
    group = parser.getgroup("order", "the longest test files first (scripts/test.sh)")
    group.addoption("--file-seconds", metavar="FILE", default=str(_DEFAULT),
                    help="seconds a whole-suite run spent in each test file (JSON: {file: seconds})")
    group.addoption("--file-seconds-out", metavar="FILE", default=None,
                    help="write the seconds this run spent in each test file to FILE")
    group.addoption("--timeline-out", metavar="DIR", default=None,
                    help="each test process appends its tests' start and end to DIR/timeline_<process>.jsonl")


def read_seconds(path) -> dict:
    """``{file: seconds}`` from a record; an unreadable record names the file and the reason."""
    path = pathlib.Path(path)
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{path}: not a JSON record of seconds per test file ({e})") from e
    seconds = record.get("seconds") if isinstance(record, dict) else None
    if not isinstance(seconds, dict) or not all(isinstance(v, (int, float)) for v in seconds.values()):
        raise ValueError(f"{path}: expected {{\"seconds\": {{file: seconds}}}}")
    return seconds


def longest_first(files, seconds: dict):
    """``files`` (in collection order) longest first; the files without a record lead."""
    position = {name: i for i, name in enumerate(files)}
    return sorted(files, key=lambda name: (name in seconds, -seconds.get(name, 0.0), position[name]))


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    seconds = read_seconds(config.getoption("file_seconds"))
    by_file = collections.OrderedDict()
    for item in items:
        by_file.setdefault(_file_of(item.nodeid), []).append(item)
    items[:] = [item for name in longest_first(list(by_file), seconds) for item in by_file[name]]


_SPENT: dict = collections.defaultdict(float)
_CONFIG: dict = {}


def pytest_configure(config):
    _CONFIG["config"] = config


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None or not config.getoption("file_seconds_out") or hasattr(config, "workerinput"):
        return  # the main process adds up what every process reported
    _SPENT[_file_of(report.nodeid)] += float(report.duration)


def pytest_sessionfinish(session):
    out = session.config.getoption("file_seconds_out")
    if not out or hasattr(session.config, "workerinput"):
        return
    record = dict(about="seconds a whole-suite run spent in each test file (scripts/pytest_order.py)",
                  seconds={name: round(value, 1) for name, value in sorted(_SPENT.items())})
    path = pathlib.Path(out)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    partial.replace(path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    del nextitem
    folder = item.config.getoption("timeline_out")
    start = time.time()
    yield
    if folder:
        process = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(folder, f"timeline_{process}.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(dict(test=item.nodeid, start=start, end=time.time())) + "\n")
