"""Position studies of a Nim run (Zhou & Riis, Fig. 11-15): priors, move values and the search's choice.

  python experiments/nim_positions.py --workdir=runs/nim5
  python experiments/nim_positions.py --workdir=runs/nim5 --step=100 --positions=1.2.4.4.3 --max_log2_simulations=14

For the initial position, any ``--positions`` (heaps joined by dots, several comma-
separated) and the ``--misleading`` won positions where the network's prior is surest of
a losing move: every legal move's prior, whether it wins, the network's value of the move
for the side to move; then the search (game outcome only, no root noise) at 2^k
simulations for k = 0 .. ``--max_log2_simulations``: its most-visited move, the root
value and the visit shares. The report is ``<out>.json``; default
``<workdir>/reports/nim_positions``.
"""

import json
import pathlib
from typing import List

from absl import app, flags, logging

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import loading
from azdb_jax.evaluation import nim_positions
from azdb_jax.files import write_atomic


def _parse_positions(values: List[str]) -> List[List[int]]:
    positions = []
    for value in values:
        try:
            positions.append([int(h) for h in value.split(".")])
        except ValueError:
            raise ValueError(f"--positions: {value!r} is not heaps joined by dots, e.g. 1.2.4.4.3") from None
    return positions


def main(argv: List[str]) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    workdir = pathlib.Path(_WORKDIR.value)
    team = loading.load_team(workdir, step=_STEP.value)
    report = nim_positions.position_report(team, _parse_positions(_POSITIONS.value), misleading=_MISLEADING.value,
                                      pool=_POOL.value, seed=_SEED.value, player=_PLAYER.value,
                                      simulations=tuple(2 ** k for k in range(_MAX_LOG2.value + 1)))
    for study in report["studies"]:
        print(nim_positions.format_study(study) + "\n")
    out = pathlib.Path(_OUT.value or workdir / "reports" / "nim_positions").with_suffix(".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps({"workdir": str(workdir), **report}, indent=1))
    print(f"{len(report['studies'])} position(s) of step {team.step}: report written to {out}")


if __name__ == "__main__":
    _WORKDIR = common_flags.define_workdir("Run directory of a Nim run.", required=True)
    _STEP = flags.DEFINE_integer("step", None, "Checkpoint step (default: the latest).")
    _PLAYER = flags.DEFINE_integer("player", 0, "Team player (latent id) whose prior and search are studied.",
                                   lower_bound=0)
    _POSITIONS = flags.DEFINE_list("positions", [], "More positions: heaps joined by dots, e.g. 1.2.4.4.3.")
    _MISLEADING = flags.DEFINE_integer("misleading", 1, "Also the won positions where the prior is surest of a "
                                       "losing move (how many).", lower_bound=0)
    _POOL = flags.DEFINE_integer("pool", 10_000, "Positions searched for --misleading (drawn uniformly; all when "
                                 "there are fewer).", lower_bound=1)
    _MAX_LOG2 = flags.DEFINE_integer("max_log2_simulations", 12, "Searches with 1, 2, 4, ..., 2^k simulations.",
                                     lower_bound=0, upper_bound=20)
    _SEED = common_flags.define_seed("Seed of the --misleading pool.")
    _OUT = common_flags.define_out("Report prefix (default: <workdir>/reports/nim_positions).")
    app.run(cli.input_errors_exit(main))
