"""The skill-compatibility tables from nothing, at a scale: strong run, attuned seniors, matches.

``reproduce(scale, root)`` chains what docs/skill_compatible.md runs by hand, each stage
skipped when its output is already in ``root`` (so a notebook re-run only draws):

1. ``root/strong``: a plain AlphaZero Gardner run (``gardner_cpu`` with one player,
   λ = 1, self-play matchmaking, the scale's overrides) — the strong player; one of
   its early checkpoints is the junior's network;
2. ``root/attuned_stt``, ``root/attuned_hb``: the strong player attuned to each
   framework with the junior (``experiment.attune``);
3. ``root/tables``: ``experiment.play_tables`` — the junior's strength and every focal
   senior against the strong player in STT, HB and regular play, with the move losses.

``ci`` takes minutes on 2 CPU cores (tiny networks, a handful of games: it checks the
pipeline and the notebook, its numbers mean nothing); ``cpu`` is the setting of the
measurements in docs/skill_compatible.md (hours on 2 cores).
"""

import dataclasses
import pathlib
from typing import Any, Dict, Mapping, Sequence, Tuple

from azdb_jax import config as config_lib
from azdb_jax import checkpoint, presets, runner
from azdb_jax.evaluation import reports
from azdb_jax.skill import attuned, experiment


@dataclasses.dataclass(frozen=True)
class SkillScale:
    """``overrides``: the strong run's (on ``gardner_cpu`` with one plain player);
    ``junior_step``: its checkpoint that is the junior's network, played as
    ``junior_kind`` with ``junior_simulations`` at τ = 1; ``attune``: the
    ``AttunedConfig`` fields of both attuned seniors; the rest: ``TableSettings``."""

    name: str
    overrides: Tuple[str, ...]
    junior_step: int
    junior_kind: str
    junior_simulations: int
    attune: Dict[str, Any]
    games: int
    max_plies: int
    references: Tuple[str, ...]
    focals: Tuple[str, ...]
    description: str
    engine_limits: Tuple[str, ...] = ()


_PLAIN = ("team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay")

SCALES: Dict[str, SkillScale] = {
    "ci": SkillScale(
        name="ci",
        overrides=("network.channels=8", "network.num_blocks=1", "network.value_hidden=8",
                   "search.num_simulations=4", "search.max_num_considered_actions=4", "selfplay.num_games=8",
                   "selfplay.num_plies=12", "selfplay.sample_plies=4", "replay.capacity=2048",
                   "run.num_iterations=2", "run.learner_steps=2", "run.batch_size=8", "run.eval_every=0",
                   "run.eval_simulations=4", "run.checkpoint_every=1", "run.keep_checkpoints=2",
                   "run.checkpoint_replay=false"),
        junior_step=1, junior_kind="search", junior_simulations=2,
        attune=dict(iterations=1, num_games=2, max_plies=6, learner_steps=2, batch_size=8, window=1),
        games=2, max_plies=12, references=("random",), focals=("tree", "attuned"),
        description="tiny networks, 2 iterations, 2 games per match: checks the pipeline and the notebook in minutes"),
    "cpu": SkillScale(
        name="cpu",
        overrides=("run.num_iterations=40", "run.eval_every=0", "run.checkpoint_every=5", "run.keep_checkpoints=10"),
        junior_step=10, junior_kind="search", junior_simulations=16, attune={},
        games=64, max_plies=100, references=("random",), focals=experiment.FOCALS, engine_limits=("depth=1",),
        description="the gardner_cpu network for 40 iterations, the junior its iteration-10 network with a "
                    "16-simulation search, 64 games per match, the junior's and the strong player's Elo against "
                    "Fairy-Stockfish at depth 1 (hours on 2 CPU cores)"),
}


def get_scale(name: str) -> SkillScale:
    if name not in SCALES:
        raise ValueError(f"unknown skill-compatibility scale {name!r}; scales: {', '.join(SCALES)}")
    return SCALES[name]


def strong_config(scale: SkillScale) -> config_lib.TrainConfig:
    """The strong run's configuration at ``scale``."""
    return config_lib.apply_overrides(presets.get_preset("gardner_cpu"), (*_PLAIN, *scale.overrides))


def reproduce(scale: str, root, *, frameworks: Sequence[str] = experiment.FRAMEWORKS, log=print,
              progress: bool = True) -> Dict[str, Any]:
    """Runs every stage of ``scale`` missing from ``root`` and returns the tables' report."""
    spec = get_scale(scale)
    root = pathlib.Path(root)
    config = strong_config(spec)
    strong = root / "strong"
    step = checkpoint.latest_step(strong) if (strong / "config.json").exists() else None
    if step != config.run.num_iterations:
        resume = step is not None
        log(f"training the strong player into {strong} ({config.run.num_iterations} iterations)")
        runner.train(config, strong, resume=resume, progress=progress)
    junior = experiment.Junior(f"{strong}@{spec.junior_step}", kind=spec.junior_kind,
                               simulations=spec.junior_simulations)
    attuned_runs = {}
    for framework in ("stt", "hb"):
        if framework not in frameworks or "attuned" not in spec.focals:
            continue
        workdir = root / f"attuned_{framework}"
        if not (workdir / "config.json").exists():
            experiment.attune(str(strong), junior, workdir,
                              attuned.AttunedConfig(framework=framework, **spec.attune), log=log)
        attuned_runs[framework] = str(workdir)
    tables = root / "tables"
    focals = tuple(f for f in spec.focals if f != "attuned" or attuned_runs)
    settings = experiment.TableSettings(
        strong=str(strong), junior=junior, attuned_stt=attuned_runs.get("stt"), attuned_hb=attuned_runs.get("hb"),
        focals=focals, frameworks=tuple(frameworks), games=spec.games, max_plies=spec.max_plies,
        references=spec.references, engine_limits=spec.engine_limits)
    if (tables / "skill_compat.json").exists():
        report = experiment.read_tables(tables)
        if report.get("complete") and report.get("settings") == experiment.settings_record(settings):
            return report
    return experiment.play_tables(settings, tables, log=log)


def save_figure(root, name: str, fig, numbers: Mapping[str, Any]) -> pathlib.Path:
    """Saves ``fig`` as ``root/figures/<name>.png`` beside ``<name>.json``, the numbers it shows."""
    return reports.write_figure(pathlib.Path(root) / "figures" / f"{name}.png", fig, numbers)


__all__ = ["SCALES", "SkillScale", "get_scale", "reproduce", "save_figure", "strong_config"]
