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

Multi-host: every process runs the same command with ``--coordinator``,
``--num_processes`` and ``--process_id``. ``jax.distributed.initialize`` must run before
anything touches the XLA backend, and importing the game layer (pgx) already does, so
this module imports the library only inside ``main``, after the flags are read.
"""

import json
import pathlib
from typing import List

from absl import app, flags, logging

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

_PRESET = flags.DEFINE_string("preset", "demo", "Named configuration (azdb_jax/presets.py).")
_OVERRIDE = flags.DEFINE_multi_string("override", [], "Config override section.field=value (JSON values).")
_WORKDIR = flags.DEFINE_string("workdir", "runs/demo", "Where config, metrics and checkpoints go.")
_RESUME = flags.DEFINE_bool("resume", False, "Continue the run in --workdir from its latest checkpoint.")
_STOP_AFTER = flags.DEFINE_integer("stop_after", None, "Stop after this many iterations (for interruption tests).")
distributed.define_flags()  # --coordinator, --num_processes, --process_id


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
    del argv
    initialize_distributed()
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import presets, runner  # pylint: disable=g-import-not-at-top

    workdir = pathlib.Path(_WORKDIR.value)
    if _RESUME.value:
        config = runner.load_run_config(workdir)
        if _OVERRIDE.value:
            raise app.UsageError("--override cannot change a resumed run; start a new --workdir")
    else:
        config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDE.value)
    logging.info("config:\n%s", config_lib.to_json(config))
    summary = runner.train(config, workdir, resume=_RESUME.value, stop_after=_STOP_AFTER.value)
    print(json.dumps(summary, indent=1, sort_keys=True))


def run() -> None:
    """Console-script entry point."""
    app.run(main)


if __name__ == "__main__":
    run()
