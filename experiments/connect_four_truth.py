r"""Connect four against the solved game: the shipped positions, a team's accuracy, its curve.

Write the shipped solver-labelled positions (``azdb_jax/data/connect_four_positions.csv``;
200 a phase, seed 0; ``azdb_jax.evaluation.solved_positions.make_positions``)::

  python experiments/connect_four_truth.py --make_positions --seed=0 --per_phase=200

Measure a team (``RUN[@STEP]`` or ``pretrained:NAME``) on them — how often each
player's search, and its network's prior alone, keeps the solved outcome of the
positions that are not lost for the mover, and the value's sign accuracy — and print a
table; ``--every_checkpoint`` measures every checkpoint (``--steps`` some) of a run (a strength curve against
iterations)::

  python experiments/connect_four_truth.py --team=pretrained:connect_four --out=c4_truth.json
  python experiments/connect_four_truth.py --team=runs/demo --every_checkpoint --out=runs/demo/eval/truth.json

``--play`` (default ``perfect``) also plays every player on from each position that is not
lost for the mover, against the solver: does it keep the solved result (win the won
positions, draw the drawn)? That needs the solver (``pip install "azdb_jax[solver]"``),
as ``--make_positions`` does; ``--play=`` measures from the file's labels alone.
"""

import json
import pathlib
import sys
import time
from typing import Sequence

from absl import app, flags, logging

from azdb_jax import checkpoint, cli, runs  # noqa: F401
from azdb_jax.cli import common_flags
from azdb_jax import data
from azdb_jax.data import connect_four as c4
from azdb_jax.evaluation import solved_positions

_MAKE = flags.DEFINE_bool("make_positions", False, "Write the solver-labelled positions (--positions) and stop.")
_SEED = common_flags.define_seed("Seed of the positions (--make_positions) or of the searches.")
_PER_PHASE = flags.DEFINE_integer("per_phase", 200, "Positions per phase (opening, middle, late).")
_POSITIONS = flags.DEFINE_string("positions", None, "Position file (default: the shipped one).")
_TEAM = flags.DEFINE_string("team", None, "RUN[@STEP] or pretrained:NAME to measure.")
_STEPS = common_flags.define_steps("Checkpoint steps of --team's run, comma-separated (default: --team's own step).")
_EVERY = flags.DEFINE_bool("every_checkpoint", False, "Measure every checkpoint of --team's run (a curve).")
_SIMULATIONS = common_flags.define_simulations()
_RULES = flags.DEFINE_list("rules", ["visit"], "Selection rules for the team's move.")
_PLAY = flags.DEFINE_string("play", "perfect", "Also play each player on from every position that is not lost for "
                            "the mover against this solver spec (perfect[:random=R][,depth=D]); empty: do not.")
_OUT = common_flags.define_out("JSON report (one report, or a list of them with several steps).")


def _make(path: pathlib.Path) -> None:
    start = time.time()
    positions = solved_positions.make_positions(_SEED.value, _PER_PHASE.value)
    tmp = path.with_suffix(".tmp")
    header = [f"# written by: python experiments/connect_four_truth.py --make_positions --seed={_SEED.value} "
              f"--per_phase={_PER_PHASE.value}", ",".join(c4.FIELDS)]
    tmp.write_text("\n".join(header + [c4.format_position(p) for p in positions]) + "\n")
    tmp.replace(path)
    loaded = data.load_connect_four_positions(path)
    counts = {name: sum(p.value == v for p in loaded) for name, v in (("won", 1), ("drawn", 0), ("lost", -1))}
    print(f"wrote {len(loaded)} positions to {path} in {time.time() - start:.1f} s; for the mover: {counts}")


def _row(label, measures) -> str:
    def cell(name):
        m = measures.get(name)
        return "-" if m is None else f"{m['rate']:.3f} ± {m['stderr']:.3f}"
    return " | ".join([label] + [cell(name) for name in ("search_keeps", "prior_keeps", "search_best", "value_sign")])


def main(argv: Sequence[str]) -> None:
    logging.set_verbosity(logging.WARNING)
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    if _MAKE.value:
        _make(pathlib.Path(_POSITIONS.value) if _POSITIONS.value else
              pathlib.Path(c4.__file__).with_name(c4.FILE))
        return
    if _TEAM.value is None:
        raise app.UsageError("pass --team (or --make_positions)")
    import jax  # pylint: disable=g-import-not-at-top

    positions = data.load_connect_four_positions(_POSITIONS.value)
    path, step = common_flags.split_checkpoint(_TEAM.value)
    if _EVERY.value:
        steps = checkpoint.all_steps(path)
        if not steps:
            raise app.UsageError(f"{path} has no checkpoints")
    else:
        steps = list(_STEPS.value) or [step]
    reports = []
    for step in steps:
        start = time.time()
        agent = runs.load_agent(path, step, num_simulations=_SIMULATIONS.value)
        report = solved_positions.evaluate(agent, positions, jax.random.PRNGKey(_SEED.value), rules=_RULES.value)
        if _PLAY.value:
            report["against_perfect"] = {
                j: solved_positions.against_perfect(agent, positions, jax.random.PRNGKey(_SEED.value), player=j,
                                                    opponent=_PLAY.value) for j in range(agent.num_players)}
        report.update(team=_TEAM.value, step=agent.step, simulations=agent.search_config.num_simulations,
                      seconds=round(time.time() - start, 1))
        reports.append(report)
        print(f"{agent.name} ({report['simulations']} simulations): {report['positions']} positions, "
              f"{report['not_lost']} not lost; a random move keeps {report['random_keeps']:.3f}")
        print("who | search keeps | prior keeps | search best | value sign")
        for j, measures in report["players"].items():
            print(_row(f"player {j}", measures["all"]))
        for rule, measures in report["rules"].items():
            print(_row(f"team/{rule}", measures["all"]))
        for j, played in report.get("against_perfect", {}).items():
            kept = played["keeps_result"]
            print(f"player {j} against {played['opponent']} from the {kept['n']} positions not lost: keeps the result "
                  f"in {kept['rate']:.3f} ± {kept['stderr']:.3f} (W/D/L {played['wins']}/{played['draws']}/"
                  f"{played['losses']})")
    if _OUT.value:
        out = pathlib.Path(_OUT.value)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(reports if len(reports) > 1 else reports[0], indent=1) + "\n")
        print(f"report: {out}")


if __name__ == "__main__":
    app.run(main)
