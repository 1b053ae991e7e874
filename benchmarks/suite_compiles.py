"""Where the test suite's time goes: compiles, traces and cache hits per test and per file.

Run the suite (or part of it) with ``AZDB_TEST_COMPILE_LOG`` set, then sum the records:

    AZDB_TEST_COMPILE_LOG=/tmp/compiles JAX_COMPILATION_CACHE_DIR=$(mktemp -d) \\
        .venv/bin/python -m pytest -n 2 --dist loadfile tests/test_search.py tests/test_trainer.py
    python benchmarks/suite_compiles.py --log=/tmp/compiles --top=20

Each record is one test in its own process (setup, call and teardown, so a module
fixture's compiles count for the test that first needs it): wall and CPU seconds, and
the number and seconds of XLA compiles, jaxpr traces, lowerings and persistent-cache hits
JAX reported there. Notebook kernels and subprocesses report nothing here; their time
shows only as wall and in the pytest durations.
"""

import collections
import glob
import json
from typing import Dict, List

from absl import app, flags

_LOG = flags.DEFINE_string("log", None, "AZDB_TEST_COMPILE_LOG of the run (its FILE.<worker> files are read).",
                           required=True)
_TOP = flags.DEFINE_integer("top", 20, "Rows of the per-test table.", lower_bound=1)

FIELDS = ("wall_s", "cpu_s", "compile", "compile_s", "trace", "trace_s", "lower_s", "cache_hit")


def read(log: str) -> List[Dict]:
    paths = sorted(glob.glob(f"{log}.*"))
    if not paths:
        raise FileNotFoundError(f"{log}.*: no records (run pytest with AZDB_TEST_COMPILE_LOG={log})")
    records = []
    for path in paths:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{number}: not a JSON record ({e.msg})") from e
    return records


def by_file(records: List[Dict]) -> Dict[str, Dict[str, float]]:
    files: Dict[str, Dict[str, float]] = collections.defaultdict(lambda: dict.fromkeys(FIELDS, 0.0))
    for r in records:
        row = files[r["test"].split("::")[0]]
        for k in FIELDS:
            row[k] += r.get(k, 0.0)
    return dict(files)


def _table(rows, names) -> str:
    lines = ["| " + " | ".join(["name", *FIELDS]) + " |", "|" + "---|" * (len(FIELDS) + 1)]
    for name in names:
        lines.append("| " + " | ".join([name, *(f"{rows[name].get(k, 0):.0f}" if k in ("compile", "trace", "cache_hit")
                                                 else f"{rows[name].get(k, 0):.1f}" for k in FIELDS)]) + " |")
    return "\n".join(lines)


def main(argv):
    del argv
    records = read(_LOG.value)
    files = by_file(records)
    total = {k: sum(r.get(k, 0.0) for r in records) for k in FIELDS}
    print(f"{len(records)} tests in {len(files)} files: wall {total['wall_s']:.0f} s, CPU {total['cpu_s']:.0f} s, "
          f"{total['compile']:.0f} compiles {total['compile_s']:.0f} s, {total['trace']:.0f} traces "
          f"{total['trace_s']:.0f} s, lowering {total['lower_s']:.0f} s, {total['cache_hit']:.0f} cache hits")
    print("\nper file, by CPU seconds:")
    print(_table(files, sorted(files, key=lambda f: -files[f]["cpu_s"])))
    tests = {r["test"]: r for r in records}
    print(f"\nthe {_TOP.value} tests with the most compile + trace seconds:")
    print(_table(tests, sorted(tests, key=lambda t: -(tests[t].get("compile_s", 0) + tests[t].get("trace_s", 0)))
                 [:_TOP.value]))


if __name__ == "__main__":
    app.run(main)
