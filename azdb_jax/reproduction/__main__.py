"""``python -m azdb_jax.reproduction train --out=DIR --scale=NAME --run=RUN``: trains (or
resumes) one run of a results folder and records it in the manifest. The worker that
``train_runs(..., jobs=N)`` starts for each run; ``experiments/reproduce.py`` is the
command for people."""

import argparse
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m azdb_jax.reproduction", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train (or resume) one run of a results folder")
    train.add_argument("--out", required=True, help="the results folder")
    train.add_argument("--scale", required=True, help="its scale (ci, cpu, chess_fast)")
    train.add_argument("--run", required=True, help="the run, e.g. azdb_s0")
    args = parser.parse_args(argv)

    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top

    results = reproduction.Results(args.out, args.scale)
    results.run(args.run)  # ResultsError naming the scale's runs
    reproduction.train_runs(results, [args.run], progress=False)


if __name__ == "__main__":
    main()
