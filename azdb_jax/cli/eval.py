"""Summarise a trained team: its table and picture, for any run directory and checkpoint.

  azdb-eval --workdir=runs/demo                 # the latest checkpoint
  azdb-eval --workdir=runs/demo --step=40 --games=128 --out=eval/demo40
  python -m azdb_jax.cli.eval --workdir=runs/demo

Prints, per player, the score against each fixed reference opponent of the game (from
the run's last evaluation, or from ``--games`` new games per player and reference),
the nearest-neighbour distance d_i of its expected features (paper Eq. 7) and how often
it picks a move no other player picks; writes ``summary.json``, ``summary.csv`` and
``summary.png`` (d_i over training, the interaction graph, the payoffs, the players'
move disagreement, the scores) into ``--out`` (default: the run directory) and prints
their paths. This is the table the training entry point prints at the end of a run.

Puzzle suites, matches, opening diversity and Nim measures have their own scripts under
``experiments/`` (see the README's "Evaluation" section).
"""

import pathlib
from typing import List

from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    values = flags.FLAGS
    if not values.workdir:
        raise ValueError("--workdir is required (a run directory written by azdb-train)")
    workdir = pathlib.Path(values.workdir)
    if not (workdir / "config.json").is_file():
        raise FileNotFoundError(f"--workdir={workdir}: not a run directory (no config.json)")
    from azdb_jax.evaluation import run_summary  # pylint: disable=g-import-not-at-top

    summary = run_summary.summarize_run(workdir, step=values.step, num_positions=values.positions,
                                        reference_games_count=values.games, seed=values.seed)
    paths = run_summary.write_summary(summary, values.out)
    print(run_summary.format_table(summary))
    print()
    print(f"picture: {paths[-1]}")
    print(f"numbers: {paths[0]}, {paths[1]}")


def define_flags() -> None:
    common_flags.define_workdir("Run directory (written by azdb-train / experiments/train.py).")
    flags.DEFINE_integer("step", None, "Checkpoint step (default: the latest).", lower_bound=0)
    flags.DEFINE_integer("positions", 200, "Random positions for the move comparison.", lower_bound=1)
    common_flags.define_games("New games per player and reference opponent (default: the scores of the run's "
                              "last evaluation).")
    common_flags.define_seed("Seed of the positions and games.")
    common_flags.define_out("Output folder for summary.json/csv/png (default: the run directory).")


def run() -> None:
    """Console-script entry point (``azdb-eval``). Flags are defined here, not at import,
    so that tests can import several entry points in one process."""
    define_flags()
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)


if __name__ == "__main__":
    run()
