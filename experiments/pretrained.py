"""Trains a shipped team by its recipe and writes it into the package (``azdb_jax.pretrained``).

  python experiments/pretrained.py --name=connect_four --workdir=runs/pretrained_connect_four
  python experiments/pretrained.py --name=gardner --workdir=runs/pretrained_gardner
  python experiments/pretrained.py --name=gardner --workdir=runs/pretrained_gardner --notrain   # export only

Training is the project's own command, ``experiments/train.py`` with the recipe's preset,
overrides and seed (``azdb_jax.pretrained.RECIPES``), in a process of its own; a run
already in ``--workdir`` is continued (``--resume``) up to the recipe's iterations. The
team is then written to ``azdb_jax/pretrained/NAME/`` (or ``--root``) with a manifest: the
command, the commit the training ran at (this checkout's when it started, kept in the run
directory as ``pretrained_commit.txt``; ``+changes`` when tracked files differed from it),
the seed, the run's last evaluation records and every file's SHA-256.
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
    out = pretrained.export(workdir, name, root=pathlib.Path(_ROOT.value) if _ROOT.value else None, info_fields={
        "description": recipe.description, "command": shlex.join(command), "seed": config.run.seed,
        "commit": commit, "last_evaluation": last})
    manifest = json.loads((out / "MANIFEST.json").read_text())
    print(json.dumps({"team": str(out), "iteration": manifest["iteration"],
                      "bytes": sum(f["bytes"] for f in manifest["files"].values())}))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
