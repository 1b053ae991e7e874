"""A results folder's evaluation with each arm's seeds as members of one program, against
the same evaluation one run after another, as JSON.

  python benchmarks/members_eval.py --results=DIR --scale=cpu16 --groups=openings,solve_rates,matches --repeats=2

For each figure group of ``--groups`` (``openings``: the distinct moves, ``solve_rates``:
every run's solve rates, the engine's included, ``matches``: Table 2's pairings) the group's ``evaluate(results, batch_members=...)`` runs ``--repeats``
times each way, unbatched then batched, in one process (the machines are noisy: compare
the ratios), compiling included (each call compiles its programs anew). ``speedup`` is
the median unbatched seconds over the median batched. The group's report in the results
folder is rewritten by every call (the same report either way: ``tests/test_population.py``).
"""

import statistics
import time
from typing import Any, Dict, List

from absl import app, flags, logging

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import reproduction
from azdb_jax.cli import common_flags
from azdb_jax.reproduction import matches, openings, solve_rates

GROUPS = {"openings": openings, "solve_rates": solve_rates, "matches": matches}

_RESULTS = flags.DEFINE_string("results", None, "A results folder (experiments/reproduce.py --out) whose runs are "
                               "trained.", required=True)
_SCALE = flags.DEFINE_enum("scale", "cpu16", sorted(reproduction.SCALES), "The folder's scale.")
_GROUPS = flags.DEFINE_list("groups", ["openings", "solve_rates", "matches"], f"Groups to time: {', '.join(GROUPS)}.")
_REPEATS = flags.DEFINE_integer("repeats", 2, "Calls each way.", lower_bound=1)
_OUT = common_flags.define_out("Write the timings as JSON here (default: print them only).")


def main(argv: List[str]) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    unknown = [g for g in _GROUPS.value if g not in GROUPS]
    if unknown:
        raise app.UsageError(f"--groups: unknown {unknown}; choose from {', '.join(GROUPS)}")
    results = reproduction.Results(_RESULTS.value, reproduction.get_scale(_SCALE.value))
    out: Dict[str, Any] = {"results": _RESULTS.value, "scale": _SCALE.value, "groups": {}}
    for name in _GROUPS.value:
        seconds: Dict[str, List[float]] = {"unbatched": [], "batched": []}
        for _ in range(_REPEATS.value):
            for batched in (False, True):
                started = time.perf_counter()
                summary = GROUPS[name].evaluate(results, batch_members=batched)["summary"]
                seconds["batched" if batched else "unbatched"].append(round(time.perf_counter() - started, 2))
                if bool(summary["members_batched"]) != batched:
                    raise RuntimeError(f"{name}: asked batch_members={batched}, the report says "
                                       f"{summary['members_batched']}")
        out["groups"][name] = {**seconds, "speedup": round(statistics.median(seconds["unbatched"])
                                                           / statistics.median(seconds["batched"]), 3)}
    report.emit(out, _OUT.value)


if __name__ == "__main__":
    app.run(main)
