"""The main job: train an AlphaZero team (AZ is one player) on a supported game.

  python experiments/train.py --preset=demo --workdir=runs/demo
  python experiments/train.py --preset=demo --workdir=runs/demo --resume
  python experiments/train.py --preset=demo --override=env.name=tic_tac_toe --override=team.num_players=3

Each iteration is one jitted program (self-play window, targets, replay, learner
steps; ``azdb_jax.trainer``). The run writes to ``--workdir``: ``config.json`` (the
resolved config), ``metrics.jsonl`` (one JSON object per iteration and per evaluation),
TensorBoard event files under ``tb/`` and orbax checkpoints under ``checkpoints/``.
``--resume`` continues from the latest checkpoint exactly (same metrics as a run that
was never interrupted).
"""

import json
import pathlib
import sys
from typing import List

from absl import app, flags, logging

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from experiments import run_lib  # noqa: E402  pylint: disable=g-import-not-at-top
from experiments.configs import PRESETS, get_preset  # noqa: E402

_PRESET = flags.DEFINE_enum("preset", "demo", sorted(PRESETS), "Named configuration (experiments/configs).")
_OVERRIDE = flags.DEFINE_multi_string("override", [], "Config override section.field=value (JSON values).")
_WORKDIR = flags.DEFINE_string("workdir", "runs/demo", "Where config, metrics and checkpoints go.")
_RESUME = flags.DEFINE_bool("resume", False, "Continue the run in --workdir from its latest checkpoint.")
_STOP_AFTER = flags.DEFINE_integer("stop_after", None, "Stop after this many iterations (for interruption tests).")
_COORDINATOR = flags.DEFINE_string("coordinator", None, "Multi-host: coordinator address host:port.")
_NUM_PROCESSES = flags.DEFINE_integer("num_processes", None, "Multi-host: number of processes.")
_PROCESS_ID = flags.DEFINE_integer("process_id", None, "Multi-host: this process's id.")


def main(argv: List[str]) -> None:
    del argv
    if _COORDINATOR.value:
        import jax  # pylint: disable=g-import-not-at-top

        jax.distributed.initialize(_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
    workdir = pathlib.Path(_WORKDIR.value)
    if _RESUME.value:
        config = run_lib.load_run_config(workdir)
        if _OVERRIDE.value:
            raise app.UsageError("--override cannot change a resumed run; start a new --workdir")
    else:
        config = run_lib.config_lib.apply_overrides(get_preset(_PRESET.value), _OVERRIDE.value)
    logging.info("config:\n%s", run_lib.config_lib.to_json(config))
    summary = run_lib.train(config, workdir, resume=_RESUME.value, stop_after=_STOP_AFTER.value)
    print(json.dumps(summary, indent=1, sort_keys=True))


if __name__ == "__main__":
    app.run(main)
