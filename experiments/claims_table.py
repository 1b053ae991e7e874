"""The paper's claims decided from a results folder (docs/reproduction.md's claims table).

    python experiments/claims_table.py --results=results/cpu
    python experiments/claims_table.py --results=results/cpu --matches=results/cpu_m144 --out=claims.json

Reads the figure groups' reports that ``experiments/reproduce.py --stages=eval`` wrote
(``claims.GROUPS``; a missing group's claims are left out) and prints one row per claim:
the per-seed differences, their mean with the 95 % Student-t interval over seeds and the
verdict that follows from it (``azdb_jax.reproduction.claims``), then what each run's
training did. ``--matches`` takes the matches report from another
folder over the same runs (e.g. one evaluated with more games, ``reproduce.py
--match_games``).
"""

import json
import pathlib
from typing import List

from absl import app, flags

from azdb_jax import cli  # no JAX import
from azdb_jax.cli import common_flags  # no JAX import

_RESULTS = flags.DEFINE_string("results", None, "A results folder written by experiments/reproduce.py.",
                               required=True)
_MATCHES = flags.DEFINE_string("matches", None, "A results folder whose matches report replaces the one of "
                               "--results (the same runs evaluated with more games).")
_OUT = common_flags.define_out("Also write the rows as JSON here (default: print only).")


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top
    from azdb_jax.files import write_atomic  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import claims  # pylint: disable=g-import-not-at-top

    results = reproduction.Results(_RESULTS.value)
    names = [g for g in claims.GROUPS if results.has_report(g)]
    reports = {g: results.read_report(g) for g in names}
    if _MATCHES.value:
        other = reproduction.Results(_MATCHES.value)
        reports["matches"] = other.read_report("matches")
    if not reports:
        raise ValueError(f"--results: {_RESULTS.value} holds none of the reports {', '.join(claims.GROUPS)}; "
                         f"run experiments/reproduce.py --out={_RESULTS.value} --stages=eval first")
    rows = claims.decide(reports)
    print(f"{results.scale.name}: reports {', '.join(sorted(reports))}"
          + (f" (matches from {_MATCHES.value})" if _MATCHES.value else ""))
    print(claims.markdown(rows))
    from azdb_jax.reproduction import sweep  # pylint: disable=g-import-not-at-top

    metrics = ("plies_per_game", "dropped_fraction", "reward_d_per_move", "intrinsic_share", "d_mean")
    print(f"\nWhat training did (metrics.jsonl, mean of the last {sweep.LAST_ITERATIONS} iterations):\n")
    print("| run | " + " | ".join(metrics) + " |\n" + "|---" * (len(metrics) + 1) + "|")
    for run in results.runs("az") + results.runs("azdb") + results.runs("control"):
        numbers = sweep.training_summary(run.workdir)
        print(f"| {run.name} | " + " | ".join(f"{numbers[k]:.3f}" for k in metrics) + " |")
    if _OUT.value:
        write_atomic(pathlib.Path(_OUT.value), json.dumps(rows, indent=1))
        print(f"rows: {_OUT.value}")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
