"""Trains a shipped team by its recipe and writes it into the package (``azdb_jax.pretrained``).

  python experiments/pretrained.py --name=connect_four --workdir=runs/pretrained_connect_four
  python experiments/pretrained.py --name=gardner --workdir=runs/pretrained_gardner
  python experiments/pretrained.py --name=gardner --workdir=runs/pretrained_gardner --notrain   # export only
  python experiments/pretrained.py --name=connect_four --measure_only   # record a shipped team's strength

Training is the project's own command, ``experiments/train.py`` with the recipe's preset,
overrides and seed (``azdb_jax.pretrained.RECIPES``), in a process of its own; a run
already in ``--workdir`` is continued (``--resume``) up to the recipe's iterations. The
team is then written to ``azdb_jax/pretrained/NAME/`` (or ``--root``) with a manifest: the
command, the commit the training ran at (this checkout's when it started, kept in the run
directory as ``pretrained_commit.txt``; ``+changes`` when tracked files differed from it),
the seed, the run's last evaluation records, its strength where the game has a measure
here (connect four: against the solved game, ``strength``) and every file's SHA-256.
"""

import json
import pathlib
import shlex
import subprocess
import sys
from typing import List

from absl import app, flags

from azdb_jax import cli, pretrained, runs
from azdb_jax.cli import common_flags

REPO = pathlib.Path(__file__).resolve().parents[1]

_NAME = flags.DEFINE_enum("name", None, list(pretrained.RECIPES), "The shipped team to make.", required=True)
_WORKDIR = common_flags.define_workdir("The run directory to train in (continued if it holds the run).")
_TRAIN = flags.DEFINE_bool("train", True, "Train (or continue) the run before exporting it.")
_ROOT = flags.DEFINE_string("root", None, "Where the team's folder goes (default: the package's pretrained/).")
_MEASURE_ONLY = flags.DEFINE_bool("measure_only", False, "Measure the shipped team NAME as it is and record its "
                                  "strength in its manifest (no training, no export).")
_MEASURE = flags.DEFINE_bool("measure", True, "Record the team's strength in its manifest (connect four: every "
                             "player against the solved positions and against perfect play; "
                             "azdb_jax.evaluation.solved_positions).")


def strength(workdir: pathlib.Path, commit: str):
    """The team's strength at the run's latest checkpoint, for its manifest; None for a game
    without a measure here (Gardner's is a match series: docs/results.md)."""
    config = runs.load_run_config(workdir)
    from azdb_jax.games import connect_four  # pylint: disable=g-import-not-at-top

    if config.env.name != connect_four.GAME.id:
        return None
    import jax  # pylint: disable=g-import-not-at-top
    from azdb_jax import data  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import solved_positions  # pylint: disable=g-import-not-at-top

    positions = data.load_connect_four_positions()
    agent = runs.load_agent(workdir)
    report = solved_positions.evaluate(agent, positions, jax.random.PRNGKey(0))
    players = []
    for j in range(agent.num_players):
        measures = report["players"][j]["all"]
        played = solved_positions.against_perfect(agent, positions, jax.random.PRNGKey(0), player=j)
        players.append({"player": j, **{name: round(measures[name]["rate"], 4)
                                        for name in ("search_keeps", "prior_keeps", "search_best", "value_sign")},
                        "against_perfect": round(played["keeps_result"]["rate"], 4)})
    return {"measure": "connect four against the solved game: the share of the shipped positions not lost for the "
                       "mover where the player's search (its prior's move) keeps the solved outcome, its value's "
                       "sign, and the share of those positions whose solved result it keeps playing on against "
                       "the solver's best moves (docs/results.md, \"Connect four against the solved game\")",
            "positions": report["not_lost"], "simulations": agent.search_config.num_simulations,
            "random_keeps": round(report["random_keeps"], 4), "players": players, "commit": commit,
            "command": "python experiments/connect_four_truth.py --team=pretrained:NAME"}


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    name = _NAME.value
    if _MEASURE_ONLY.value:  # the shipped team as it is: its strength into its manifest
        measured = strength(pathlib.Path(pretrained.path(name)), _commit())
        if measured is None:
            raise ValueError(f"{name}: no strength measure for its game here")
        pretrained.record(name, {"strength": measured}, root=pathlib.Path(_ROOT.value) if _ROOT.value else None)
        print(json.dumps({"team": name, "strength": measured["players"]}))
        return
    recipe = pretrained.RECIPES[name]
    workdir = pathlib.Path(_WORKDIR.value or f"runs/pretrained_{name}")
    command = ["python", "experiments/train.py", f"--preset={recipe.preset}", f"--workdir={workdir}", "--nosummary",
               *(f"--override={o}" for o in recipe.overrides)]
    resume = (workdir / "checkpoints").is_dir()
    commit_file = workdir / "pretrained_commit.txt"  # the commit the training ran at
    if _TRAIN.value:
        workdir.mkdir(parents=True, exist_ok=True)
        if not resume or not commit_file.exists():
            commit_file.write_text(_commit() + "\n")
        subprocess.run([sys.executable, *command[1:], *(["--resume"] if resume else [])], cwd=REPO, check=True)
    config = runs.load_run_config(workdir)
    evaluations = [r for r in runs.read_metrics(workdir, wall_clock=False) if r.get("kind") == "eval"]
    last = [r for r in evaluations if r["iteration"] == evaluations[-1]["iteration"]] if evaluations else []
    commit = commit_file.read_text().strip() if commit_file.exists() else _commit()
    fields = {"description": recipe.description, "command": shlex.join(command), "seed": config.run.seed,
              "commit": commit, "last_evaluation": last}
    measured = strength(workdir, _commit()) if _MEASURE.value else None
    if measured is not None:
        fields["strength"] = measured
    out = pretrained.export(workdir, name, root=pathlib.Path(_ROOT.value) if _ROOT.value else None,
                            info_fields=fields)
    manifest = json.loads((out / "MANIFEST.json").read_text())
    print(json.dumps({"team": str(out), "iteration": manifest["iteration"],
                      "bytes": sum(f["bytes"] for f in manifest["files"].values())}))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
