"""Trained teams that ship with the package, loaded as the library's agent.

    from azdb_jax import pretrained
    pretrained.names()                  # ['connect_four', ...]
    team = pretrained.load("connect_four")   # an azdb_jax.agent.Agent
    pretrained.info("connect_four")     # how it was trained: command, seed, commit, files
    pretrained.info("connect_four")["strength"]   # where measured: its strength

A shipped team is a run directory cut down to what play needs (``azdb_jax.team_files``):
``config.json`` and one checkpoint with the network parameters, the expected features ψ
and the iteration, beside a ``MANIFEST.json`` with the command that trained it, its seed
and commit, and the SHA-256 of every file (checked before each load: a damaged file ends
with one line naming it). What reads a team to play takes ``pretrained:NAME`` in place of a
run directory: ``runs.load_agent``, ``RUN[@STEP]`` flags (``--checkpoint``, ``--a``/``--b``),
``azdb-uci``.

Each team is made by ``RECIPES[name]`` through the project's own training command:

    python experiments/pretrained.py --name=connect_four --workdir=runs/pretrained_connect_four

trains it (``experiments/train.py`` with the recipe's preset, overrides and seed) and
writes it here with ``export``.
"""

import dataclasses
import os
import pathlib
import shutil
from typing import Any, Dict, List, Mapping, Optional, Tuple

from azdb_jax import checkpoint, runs, team_files


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How a shipped team is trained: ``experiments/train.py --preset=PRESET --override=...``."""

    preset: str
    overrides: Tuple[str, ...]
    description: str


RECIPES: Dict[str, Recipe] = {
    "connect_four": Recipe(
        preset="demo", overrides=("run.seed=0",),
        description="connect four: the demo preset's team of 3 (player 0 plain AlphaZero, players 1-2 with the "
                    "diversity reward, λ = 0.7), 120 iterations"),
    # The screen run of docs/results.md ("Plain AlphaZero at a 30-minute budget"): the
    # connect_four_levers.py lever az+batch4+cosine with the replay raised, seed 21.
    "connect_four_az": Recipe(
        preset="demo",
        overrides=("team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay", "selfplay.num_games=256",
                   "run.learner_steps=48", "learner.schedule=cosine", "learner.decay_steps=14400",
                   "learner.final_lr_fraction=0.1", "replay.capacity=160000", "run.num_iterations=300",
                   "run.eval_every=0", "run.checkpoint_every=50", "run.keep_checkpoints=7", "run.seed=21"),
        description="connect four: one plain AlphaZero player (the demo preset's network and search, 256 games a "
                    "window, cosine learning rate), 300 iterations, about 38 minutes on 2 CPU cores"),
    "gardner": Recipe(
        preset="gardner_cpu", overrides=("run.num_iterations=100", "run.seed=0"),
        description="Gardner's 5x5 chess: the gardner_cpu preset's team of 3 (λ = 0.9, PSRO-Nash, Gumbel search), "
                    "100 iterations (the strongest iteration count measured, docs/results.md)"),
}


def names() -> List[str]:
    """The teams shipped in this installation."""
    return team_files.names()


def info(name: str) -> Dict[str, Any]:
    """Shipped team ``name``'s manifest: description, command, seed, commit, iteration, files."""
    return team_files.manifest(name)


def record(name: str, fields: Mapping[str, Any], *, root: Optional[pathlib.Path] = None) -> Dict[str, Any]:
    """Adds ``fields`` (e.g. a measured ``strength``) to shipped team ``name``'s manifest, its
    files checked first and their hashes kept; the manifest is replaced in one rename."""
    reserved = {"files", "name", "game", "iteration", "players", "source"} & set(fields)
    if reserved:
        raise ValueError(f"a manifest's own fields cannot be recorded over: {', '.join(sorted(reserved))}")
    folder = team_files.folder(name, root=root)  # checks every file against the manifest
    info = {k: v for k, v in team_files.manifest(name, root=root).items() if k != "files"}
    return team_files.write_manifest(folder, {**info, **dict(fields)})


def path(name: str) -> pathlib.Path:
    """The run directory of shipped team ``name`` (its files checked against the manifest)."""
    return team_files.folder(name)


def load(name: str, *, num_simulations: Optional[int] = None, extrinsic_only: bool = False):
    """Shipped team ``name`` as an ``azdb_jax.agent.Agent`` (``runs.load_agent``).

    Args:
      name: one of ``names()``.
      num_simulations: search budget per move; default the team's evaluation budget.
      extrinsic_only: search with λ = 1 for every player (the paper's ablation).

    Raises:
      ValueError: no shipped team of that name (the message lists them).
      team_files.DamagedTeamError: a missing or damaged file (named).
    """
    return runs.load_agent(team_files.PREFIX + name, num_simulations=num_simulations, extrinsic_only=extrinsic_only)


# What a shipped checkpoint keeps of a run's state: play needs these and nothing else.
_PARTS = ("params", "step", "extra/expected_features", "extra/iteration")


def export(run, name: str, *, step: Optional[int] = None, info_fields: Optional[Mapping[str, Any]] = None,
           root: Optional[pathlib.Path] = None) -> pathlib.Path:
    """Writes run ``run``'s team at ``step`` (default: latest) as shipped team ``name``.

    The folder ``root/name`` (default the package's ``pretrained/``) gets the run's
    ``config.json``, one checkpoint holding only the parameters, ψ and the iteration, and
    ``MANIFEST.json`` (``info_fields`` — e.g. command, seed, commit — plus the game, the
    iteration and every file's size and SHA-256). It is built beside its place and renamed
    into it, so an interrupted export leaves the old team or the new one.

    Raises:
      ValueError: a name that is not a plain folder name.
      checkpoint.CheckpointError: the run's checkpoint is missing or damaged.
    """
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"a shipped team's name is letters, digits and '_', got {name!r}")
    run = pathlib.Path(run)
    root = team_files.ROOT if root is None else pathlib.Path(root)
    config = runs.load_run_config(run)
    with checkpoint.RunCheckpointer(str(run / "checkpoints"), create=False) as manager:
        step, parts = manager.restore_parts(step, parts=_PARTS)
    state = checkpoint.RunState(params=parts["params"], opt_state=None, step=parts["step"], rng_key=None,
                                extra={"expected_features": parts["extra/expected_features"],
                                       "iteration": parts["extra/iteration"]})
    root.mkdir(parents=True, exist_ok=True)
    building = root / f".{name}.{os.getpid()}.tmp"
    if building.exists():
        shutil.rmtree(building)
    try:
        building.mkdir()
        shutil.copyfile(run / "config.json", building / "config.json")
        with checkpoint.RunCheckpointer(str(building / "checkpoints"),
                                        checkpoint.CheckpointConfig(save_replay=False)) as writer:
            writer.save(step, state, config=config)
        team_files.write_manifest(building, {
            **dict(info_fields or {}), "name": name, "game": config.env.name, "iteration": int(parts["extra/iteration"]),
            "players": config.team.num_players, "source": f"{run}@{step}"})
        runs.load_agent(building)  # reads back before it replaces anything
        old = root / f".{name}.{os.getpid()}.old"
        if (root / name).exists():
            os.replace(root / name, old)
        try:
            os.replace(building, root / name)
        except OSError:
            if old.exists():  # put the previous team back
                os.replace(old, root / name)
            raise
        if old.exists():
            shutil.rmtree(old)
    finally:
        if building.exists():
            shutil.rmtree(building)
    return root / name


__all__ = ["record", "Recipe", "RECIPES", "names", "info", "path", "load", "export"]
