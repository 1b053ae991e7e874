"""The main job: train an AlphaZero team (AZ is one player) on a supported game.

  python experiments/train.py --preset=demo --workdir=runs/demo
  python experiments/train.py --preset=demo --workdir=runs/demo --resume
  python experiments/train.py --preset=demo --override=env.name=tic_tac_toe --override=team.num_players=3

Each iteration is one jitted self-play program and jitted learner steps
(``azdb_jax.trainer``). The run writes to ``--workdir``: ``config.json`` (the resolved
config), ``metrics.jsonl`` (one JSON object per iteration and per evaluation),
TensorBoard event files under ``tb/`` and orbax checkpoints under ``checkpoints/``.
``--resume`` continues from the latest checkpoint exactly (same metrics as a run that
was never interrupted).

Multi-host: every process runs the same command with ``--coordinator=auto`` on a cluster
JAX detects (a Cloud TPU pod slice, a SLURM ``srun``; ``azdb_jax.distributed``), or with
``--coordinator=HOST:PORT``, ``--num_processes`` and ``--process_id``.
``jax.distributed.initialize`` must run before anything touches the XLA backend, and
importing the game layer (pgx) already does, so this module imports the library only
inside ``main``, after the flags are read.

At the end the run is summarised (``azdb_jax.evaluation.run_summary``): a table of each
player's score against the fixed references, its nearest-neighbour distance d_i and how
often it picks a move no other player picks, and a picture (``summary.png`` in the run
directory; its path is printed). Library logs stay quiet unless ``--verbosity`` is given;
bad input (a flag, an override, a corrupt checkpoint) ends with one line naming it.

``--seeds=0,1,2,3`` trains a population (``azdb_jax.population``): one run per seed, all
in one compiled program, each member's run directory ``WORKDIR/seed_<s>/`` (every script
that reads a run reads it: ``--checkpoint=WORKDIR/seed_3@50``); ``--resume`` continues
every member. ``--member_map`` chooses how the members are run (default: the fastest
measured on the backend).

  python experiments/train.py --preset=demo --seeds=0,1,2,3 --workdir=runs/demo_pop

``--wandb_project=NAME`` also logs every record to Weights & Biases (``azdb_jax.wandb_log``;
the ``wandb`` extra), ``--wandb_mode=offline`` without a network (``wandb sync`` later):

  python experiments/train.py --preset=demo --workdir=runs/demo --wandb_project=azdb

``--resume`` may change ``run.num_iterations`` (continue a finished run as if it had been
planned longer), ``run.checkpoint_every``, ``run.keep_checkpoints`` and
``run.checkpoint_async`` through ``--override``; nothing else.
"""

import pathlib
from typing import List

from absl import app, flags, logging

from azdb_jax import cli, distributed  # import no JAX: safe before jax.distributed.initialize
from azdb_jax.cli import common_flags

_PRESET = flags.DEFINE_string("preset", "demo", "Named configuration (azdb_jax/presets.py).")
_OVERRIDE = flags.DEFINE_multi_string("override", [], "Config override section.field=value (JSON values).")
_WORKDIR = common_flags.define_workdir("Where config, metrics and checkpoints go.", default="runs/demo")
_RESUME = flags.DEFINE_bool("resume", False, "Continue the run in --workdir from its latest checkpoint.")
_STOP_AFTER = flags.DEFINE_integer("stop_after", None, "Stop after this many iterations (for interruption tests).")
_SEEDS = flags.DEFINE_list("seeds", [], "Train a population: one member per seed (replaces run.seed), in one "
                           "program; each member's run in WORKDIR/seed_<s>/.")
_MEMBER_MAP = flags.DEFINE_string("member_map", "auto", "How a population's members are run: auto, vmap, map, "
                                  "unroll, or two joined by a comma (self-play, learner; the learner also "
                                  "groups); azdb_jax.population.")
distributed.define_flags()  # --coordinator, --num_processes, --process_id
_WANDB_PROJECT = flags.DEFINE_string("wandb_project", None, "Also log every metrics.jsonl record to this Weights & "
                                     "Biases project (needs the wandb extra; azdb_jax.wandb_log).")
_WANDB_MODE = flags.DEFINE_enum("wandb_mode", "online", ["online", "offline", "disabled"],
                                "W&B mode: offline writes WORKDIR/wandb/ for a later `wandb sync`.")
_WANDB_ENTITY = flags.DEFINE_string("wandb_entity", None, "W&B entity (team or user); default: the login's.")
_SUMMARY = flags.DEFINE_bool("summary", True, "At the end, print the team's summary table and write summary.png.")
_SUMMARY_POSITIONS = flags.DEFINE_integer("summary_positions", 200, "Random positions for the summary's "
                                          "move comparison.", lower_bound=1)


def initialize_distributed() -> None:
    """Joins the multi-process run named by the flags (nothing without ``--coordinator``).

    Runs before the library is imported: importing the game layer creates the XLA
    backend, after which ``jax.distributed.initialize`` is refused.
    """
    try:
        distributed.initialize_from_flags()
    except ValueError as e:  # a missing or inconsistent multi-host flag
        raise app.UsageError(str(e)) from None


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    initialize_distributed()
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runner, runs  # pylint: disable=g-import-not-at-top

    workdir = pathlib.Path(_WORKDIR.value)
    if _WANDB_PROJECT.value is not None and _SEEDS.value:
        raise ValueError("--wandb_project logs one run; a population (--seeds) writes each member's metrics.jsonl "
                         "under WORKDIR/seed_<s>/")
    if _SEEDS.value:
        train_population(workdir, [_seed(s) for s in _SEEDS.value])
        return
    if _RESUME.value:
        config = config_lib.apply_overrides(runs.load_run_config(workdir), _OVERRIDE.value)
    else:
        config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDE.value)
    logging.info("config:\n%s", config_lib.to_json(config))
    result = runner.train(config, workdir, resume=_RESUME.value, stop_after=_STOP_AFTER.value,
                          sinks=_wandb_sinks(workdir, config))
    import jax  # pylint: disable=g-import-not-at-top

    if jax.process_index() != 0:
        return
    print(f"{workdir}: {result['iterations']} of {config.run.num_iterations} iterations "
          f"({result['seconds']:.0f} s this session)")
    if _SUMMARY.value and result["iterations"] >= config.run.num_iterations:
        if jax.process_count() > 1:  # the summary reloads the run, a collective the other processes have left
            print(f"summary: run `azdb-train --workdir={workdir} --resume` or experiments/diversity_report.py "
                  f"on one process")
        else:
            print_summary(workdir, _SUMMARY_POSITIONS.value)


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"--seeds: {text!r} is not an integer") from None


def _wandb_sinks(workdir: pathlib.Path, config) -> List:
    """The W&B logger the flags ask for (on the main process only), or none."""
    if _WANDB_PROJECT.value is None or not distributed.is_main_process():
        return []
    import importlib.util  # pylint: disable=g-import-not-at-top
    import json  # pylint: disable=g-import-not-at-top

    from azdb_jax import config as config_lib, wandb_log  # pylint: disable=g-import-not-at-top

    if importlib.util.find_spec("wandb") is None:
        raise ValueError('--wandb_project needs the wandb package: pip install "azdb_jax[wandb]"')
    return [wandb_log.WandbLog(workdir, json.loads(config_lib.to_json(config)), project=_WANDB_PROJECT.value,
                               mode=_WANDB_MODE.value, entity=_WANDB_ENTITY.value, resume=_RESUME.value)]


def train_population(workdir: pathlib.Path, seeds: List[int]) -> None:
    """``--seeds``: the population of the preset (or of the saved run on ``--resume``), one
    member per seed; each member's summary at the end."""
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import population, presets, runs  # pylint: disable=g-import-not-at-top

    if _RESUME.value:
        first = population.member_dirs(workdir)[0]
        config = config_lib.apply_overrides(runs.load_run_config(first), _OVERRIDE.value)
    else:
        config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDE.value)
    result = population.train(config, workdir, seeds, member_map=_MEMBER_MAP.value, resume=_RESUME.value,
                              stop_after=_STOP_AFTER.value)
    import jax  # pylint: disable=g-import-not-at-top

    if jax.process_index() != 0:
        return
    print(f"{workdir}: {len(seeds)} members, {result['iterations']} of {config.run.num_iterations} iterations "
          f"({result['seconds']:.0f} s this session)")
    if _SUMMARY.value and result["iterations"] >= config.run.num_iterations:
        if jax.process_count() > 1:  # the summary reloads the runs, a collective the other processes have left
            print(f"summary: run experiments/diversity_report.py on one process, e.g. "
                  f"--runs=seed_{seeds[0]}={population.member_dir(workdir, seeds[0])}")
            return
        for seed in seeds:
            print_summary(population.member_dir(workdir, seed), _SUMMARY_POSITIONS.value)


def print_summary(workdir: pathlib.Path, num_positions: int) -> None:
    """The end-of-run table and the picture's path (``azdb_jax.evaluation.run_summary``)."""
    from azdb_jax.evaluation import run_summary  # pylint: disable=g-import-not-at-top

    # Without an evaluation of the last checkpoint in the metrics (run.eval_every = 0), the
    # summary plays 64 games per reference first: minutes on Gardner chess. Say so.
    print(f"summary: the team's scores and moves in {num_positions} positions (--nosummary skips it)", flush=True)
    summary = run_summary.summarize_run(workdir, num_positions=num_positions)
    paths = run_summary.write_summary(summary)
    print()
    print(run_summary.format_table(summary))
    print()
    print(f"picture: {paths[-1]}")
    print(f"numbers: {paths[0]}, {paths[1]}")


def run() -> None:
    """Console-script entry point (``azdb-train``)."""
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)


if __name__ == "__main__":
    run()
