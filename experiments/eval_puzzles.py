"""Puzzle evaluation of a trained team (or of Stockfish): STS, bm/am suites, Lichess, paper values.

  python experiments/eval_puzzles.py --workdir=runs/demo --suite=lichess --themes=mateIn2 --simulations=200
  python experiments/eval_puzzles.py --workdir=runs/demo --step=40 --suite=sts --limit=100
  python experiments/eval_puzzles.py --workdir=runs/demo --suite=paper --rules=visit,gap --move=lcb
  python experiments/eval_puzzles.py --engine=stockfish --engine_nodes=100000 --suite=epd --out=eval/wac_sf

The team is searched once per player for every position (paper §4.3, SPEC §2): the report
has one column per player, per selection rule (``team_<rule>``), the max-over-latents
oracle and the homogeneous control (latent 0 searched ``--homogeneous_copies`` times).
Every player searches as in self-play (its λ_i, the intrinsic reward of the checkpoint's
ψ, v_d at the leaves; SPEC §2); ``--extrinsic_only`` is the paper's ablation (λ = 1 for
every player, Fig. 8 dashed), labelled as such in the JSON summary, in a ``search``
column of the CSV and in the printed summary.
``--data`` defaults to the shared file of the suite under ``$AZDB_DATA_DIR`` (the paper
list ships with azdb_jax). The report goes to ``--out`` (``<out>.json`` + ``<out>.csv``),
by default ``<workdir>/eval/<suite>_<step>_<simulations>`` (``_extrinsic_only`` appended
for the ablation).
"""

import sys
from typing import Sequence

from absl import app, flags, logging

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import cli, planning  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import puzzle_eval, puzzles, solvers  # noqa: E402
from azdb_jax.agent import SEARCH_MODES  # noqa: E402


def main(argv: Sequence[str]) -> None:
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    if _WORKDIR.value is None and _ENGINE.value is None:
        raise app.UsageError("pass --workdir (a team) or --engine=stockfish")
    if _WORKDIR.value is not None and _ENGINE.value is not None:
        raise app.UsageError("pass either --workdir or --engine, not both")
    report, json_path, csv_path = puzzle_eval.evaluate(
        suite=_SUITE.value, data=_DATA.value, workdir=_WORKDIR.value, step=_STEP.value,
        num_players=_NUM_PLAYERS.value, simulations=_SIMULATIONS.value, rules=_RULES.value, move=_MOVE.value,
        homogeneous_copies=_HOMOGENEOUS.value, batch_size=_BATCH_SIZE.value, limit=_LIMIT.value,
        themes=_THEMES.value, engine=_ENGINE.value, engine_nodes=_ENGINE_NODES.value,
        engine_time=_ENGINE_TIME.value, stockfish=_STOCKFISH.value, out=_OUT.value, seed=_SEED.value,
        extrinsic_only=_EXTRINSIC_ONLY.value)
    summary = report.summary
    unit = "puzzles" if summary["suite"] == "lichess" else "positions"
    print(f"{summary['suite']}: {summary['num_positions']} {unit} from {summary.get('data')}")
    if "search" in summary:
        print(f"search: {SEARCH_MODES[summary['search']]}")
    print(report.table())
    if "note" in summary:
        print(summary["note"])
    print(f"report written to {json_path} and {csv_path}")


if __name__ == "__main__":
    _WORKDIR = common_flags.define_workdir("Run directory of experiments/train.py holding the team.")
    _STEP = flags.DEFINE_integer("step", None, "Checkpoint step to evaluate (default: the latest).")
    _NUM_PLAYERS = flags.DEFINE_integer("num_players", None, "If set, the checkpoint's team size must be this.")
    _SUITE = flags.DEFINE_enum("suite", "lichess", list(puzzles.SUITES), "Puzzle suite: sts, epd (bm/am), lichess, paper.")
    _DATA = flags.DEFINE_string("data", None, "Suite file (default: the shared file of the suite under $AZDB_DATA_DIR).")
    _SIMULATIONS = common_flags.define_simulations("Search simulations per position (default: the run's "
                                                   "evaluation budget).")
    _RULES = flags.DEFINE_list("rules", list(solvers.DEFAULT_RULES),
                               f"Selection rules to report ({', '.join(planning.SELECTION_RULES)}).")
    _MOVE = flags.DEFINE_enum("move", "visits", list(planning.MOVES), "A player's move: most visited or LCB.")
    _HOMOGENEOUS = flags.DEFINE_integer("homogeneous_copies", None,
                                        "Homogeneous control copies of latent 0 (default: team size; 0: off).")
    _BATCH_SIZE = flags.DEFINE_integer("batch_size", 16, "Positions per search batch.")
    _LIMIT = flags.DEFINE_integer("limit", None, "Evaluate only the first N records (after --themes).")
    _THEMES = flags.DEFINE_list("themes", [], "Lichess only: keep puzzles with any of these themes, e.g. mateIn2.")
    _ENGINE = flags.DEFINE_enum("engine", None, list(puzzle_eval.ENGINES),
                                "Evaluate a reference engine instead of a team.")
    _ENGINE_NODES = flags.DEFINE_integer("engine_nodes", None, "Engine search limit: nodes per position.")
    _ENGINE_TIME = flags.DEFINE_float("engine_time", None, "Engine search limit: seconds per position.")
    _STOCKFISH = flags.DEFINE_string("stockfish", None, "Stockfish binary (default: $AZDB_STOCKFISH, PATH, /usr/games).")
    _OUT = common_flags.define_out("Report prefix for .json and .csv (default: under the workdir, or "
                                   "eval/<suite>_<engine>_<limit> for an engine).")
    _SEED = common_flags.define_seed("Seed of the team's search randomness.")
    _EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False, "Search with λ = 1 for every player: the "
                                        "paper's ablation (Fig. 8 dashed) instead of the self-play search.")
    app.run(cli.input_errors_exit(main))
