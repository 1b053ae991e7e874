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

Two further views of the same run:

- ``--marked=FILE``: the node ids of a marker's tests, one per line (``python -m pytest
  --collect-only -q -o addopts= -m slow | grep :: > FILE``); the totals are split into
  those tests and the others.
- ``--cache=DIR``: the run's ``JAX_COMPILATION_CACHE_DIR``. Every process of the run that
  compiled a program above the cache's threshold wrote an entry there (subprocesses and
  notebook kernels included), each holding its compile time in whole seconds; summed here
  per program name (``jit_<function>``). The times are truncated to whole seconds, so
  the sum lies between the printed value and that plus one second per entry.
"""

import collections
import glob
import json
import os
from typing import Dict, List

from absl import app, flags

_LOG = flags.DEFINE_string("log", None, "AZDB_TEST_COMPILE_LOG of the run (its FILE.<worker> files are read).",
                           required=True)
_TOP = flags.DEFINE_integer("top", 20, "Rows of the per-test table.", lower_bound=1)
_MARKED = flags.DEFINE_string("marked", None, "File of node ids (one per line) whose totals are shown apart.")
_CACHE = flags.DEFINE_string("cache", None, "The run's persistent compilation cache folder, summed per program.")

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


def read_marked(path: str) -> set:
    """Node ids listed in ``path``, one per line (blank lines and pytest's summary lines skipped)."""
    with open(path) as f:
        return {line.strip() for line in f if "::" in line}


def split_by_marked(records: List[Dict], marked: set) -> Dict[str, Dict[str, float]]:
    """``FIELDS`` summed over the records of ``marked`` tests and over the others, with counts."""
    parts = {name: dict.fromkeys(("tests", *FIELDS), 0.0) for name in ("marked", "others")}
    for r in records:
        part = parts["marked" if r["test"] in marked else "others"]
        part["tests"] += 1
        for k in FIELDS:
            part[k] += r.get(k, 0.0)
    return parts


def read_cache(folder: str) -> Dict[str, Dict[str, int]]:
    """Per program name (the entry's name up to its hash): entries and their compile seconds,
    each entry read with JAX's own decompression and layout (``jax._src.compilation_cache``)."""
    from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top  (JAX only for --cache)

    names = sorted(n for n in os.listdir(folder) if n.endswith("-cache"))
    if not names:
        raise FileNotFoundError(f"{folder}: no cache entries (*-cache)")
    programs: Dict[str, Dict[str, int]] = collections.defaultdict(lambda: {"entries": 0, "compile_s": 0})
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            data = f.read()
        try:
            _, seconds = compilation_cache.extract_executable_and_time(compilation_cache.decompress_executable(data))
        except Exception as e:  # pylint: disable=broad-except  (zlib, zstandard or zstd, whichever JAX uses)
            raise ValueError(f"{path}: not a JAX cache entry ({type(e).__name__}: {e})") from None
        row = programs[name[:-len("-cache")].rsplit("-", 1)[0]]
        row["entries"] += 1
        row["compile_s"] += seconds
    return dict(programs)


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
    if _MARKED.value:
        parts = split_by_marked(records, read_marked(_MARKED.value))
        print(f"\nthe tests listed in {_MARKED.value} and the others:")
        print(_table(parts, ["marked", "others"]).replace("| name |", "| part |"))
        print(" ".join(f"{name}: {parts[name]['tests']:.0f} tests, {parts[name]['wall_s'] / max(total['wall_s'], 1e-9):.0%} "
                       "of the wall seconds." for name in parts))
    if _CACHE.value:
        programs = read_cache(_CACHE.value)
        entries = sum(p["entries"] for p in programs.values())
        seconds = sum(p["compile_s"] for p in programs.values())
        print(f"\n{entries} cache entries of {len(programs)} program names: {seconds}-{seconds + entries} s of compile "
              "(whole seconds, truncated); by compile seconds:")
        print("| program | entries | compile_s |\n|---|---|---|")
        for name in sorted(programs, key=lambda n: -programs[n]["compile_s"])[:_TOP.value]:
            print(f"| {name} | {programs[name]['entries']} | {programs[name]['compile_s']} |")


if __name__ == "__main__":
    app.run(main)
