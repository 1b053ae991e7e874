"""Opening diversity of a trained chess team (SPEC §2, paper §4.3).

  python experiments/opening_diversity.py --workdir=runs/chess --num_players=10
  python experiments/opening_diversity.py --workdir=runs/chess --move=visits --limit=200 --out=reports/openings

Every latent of the team searches the position of every ECO opening (``A00`` excluded)
and picks a move (its LCB move by default); the report gives the mean number of
distinct moves per position, their histogram, the means per ECO letter, each player's
agreement with player 0 and one row per opening with every player's move. It is
written as ``<out>.json`` and ``<out>.csv`` (default ``<workdir>/reports/opening_diversity``).
Every player searches as in self-play (its λ_i and the intrinsic reward of the
checkpoint's ψ); ``--extrinsic_only`` is the paper's ablation (λ = 1 for every player),
labelled in the summary, the CSV's ``search`` column and the printed lines (default
report ``opening_diversity_extrinsic_only``).
"""

import json
import pathlib
import sys
from typing import List

from absl import app, flags, logging

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import cli, data  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import loading  # noqa: E402
from azdb_jax.evaluation import openings as openings_lib  # noqa: E402
from azdb_jax.agent import SEARCH_MODES  # noqa: E402


def main(argv: List[str]) -> None:
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    del argv

    team = loading.load_team(_WORKDIR.value, step=_STEP.value, num_players=_NUM_PLAYERS.value,
                              num_simulations=_SIMULATIONS.value, extrinsic_only=_EXTRINSIC_ONLY.value)
    out = _OUT.value or str(pathlib.Path(_WORKDIR.value) / "reports" / (
        "opening_diversity" + ("_extrinsic_only" if _EXTRINSIC_ONLY.value else "")))
    openings_path = _DATA.value or data.data_path("openings")
    json_path, csv_path = openings_lib.evaluate(team, openings_path, out, move=_MOVE.value, limit=_LIMIT.value,
                                                batch_size=_BATCH_SIZE.value, seed=_SEED.value)
    summary = json.loads(json_path.read_text())["summary"]
    print(f"{team.name}: {summary['mean_distinct_moves']:.3f} distinct moves across {summary['num_players']} "
          f"players per position ({summary['positions']} openings, {summary['move']} moves)")
    print(f"  search: {SEARCH_MODES[summary['search']]}")
    print("  histogram of distinct moves: " + ", ".join(f"{k}: {v}" for k, v in summary["histogram"].items()))
    print("  by ECO letter: " + ", ".join(f"{k} {v:.3f}" for k, v in summary["mean_distinct_by_eco_letter"].items()))
    print("  agreement with player 0: " + " ".join(f"{a:.3f}" for a in summary["agreement_with_player_0"]))
    print(f"report written to {json_path} and {csv_path}")


if __name__ == "__main__":
    _WORKDIR = common_flags.define_workdir("Run directory of experiments/train.py (a chess run).", required=True)
    _STEP = flags.DEFINE_integer("step", None, "Checkpoint step; default the latest.")
    _NUM_PLAYERS = flags.DEFINE_integer("num_players", None, "Expected team size (checked against the checkpoint).")
    _DATA = flags.DEFINE_string("data", None, "ECO openings: a .tsv file or a folder of them; "
                                "default $AZDB_DATA_DIR/openings.")
    _SIMULATIONS = common_flags.define_simulations("Simulations per search (default: the run's evaluation budget).")
    _MOVE = flags.DEFINE_enum("move", "lcb", ["lcb", "visits"], "Each player's move: LCB (paper) or most visited.")
    _LIMIT = flags.DEFINE_integer("limit", None, "Only the first N openings (quick looks).")
    _BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Positions per search call.", lower_bound=1)
    _SEED = common_flags.define_seed("Seed of the searches' tie breaks.")
    _OUT = common_flags.define_out("Report prefix (default: <workdir>/reports/opening_diversity).")
    _EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False, "Search with λ = 1 for every player: the "
                                        "paper's ablation (Fig. 8 dashed) instead of the self-play search.")
    app.run(cli.input_errors_exit(main))
