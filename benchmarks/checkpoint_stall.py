"""How long a training loop stands still for its checkpoints: synchronous against background saves, as JSON.

  python benchmarks/checkpoint_stall.py --preset=demo_chess --override=run.checkpoint_replay=true

Trains the preset with a checkpoint after every iteration (``run.checkpoint_every=1``),
``--iterations`` iterations a run, through ``runner.train`` as ``azdb-train`` does, in one
process: a first run compiles the programs (not timed), then ``--rounds`` rounds of a
synchronous run (``run.checkpoint_async=false``: each save returns once it is on disk) and
a background one (the default: a save returns once the state is in host memory), in turns,
each in a fresh run directory (removed after it). Per run:

  blocked_s        the loop's time inside ``RunCheckpointer.save`` (for a background save:
                   the host copy, and the wait for the previous save's write where it had
                   not finished) plus the final ``close`` (which waits for the last write);
  blocked_per_save_s  blocked_s over the saves;
  loop_s           the whole ``runner.train`` call (iterations, saves, close);
  checkpoint_mb    the size of one step directory on disk.

Each row is one run; ``summary`` holds the medians per mode. The machine's disk and its
cores (a background write shares them with training) decide how much a background save
hides.
"""

import functools
import pathlib
import shutil
import statistics
import tempfile
import time
from typing import Any, Dict, List

from absl import app, flags

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import checkpoint, cli
from azdb_jax import config as config_lib
from azdb_jax import presets, runner
from azdb_jax.cli import common_flags

_PRESET = flags.DEFINE_enum("preset", "demo_chess", sorted(presets.PRESETS), "The configuration trained.")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "section.field=value, as azdb-train takes it.")
_ITERATIONS = flags.DEFINE_integer("iterations", 4, "Iterations (and checkpoints) a timed run.", lower_bound=1)
_ROUNDS = flags.DEFINE_integer("rounds", 2, "Synchronous and background runs, in turns.", lower_bound=1)
_WORKDIR = common_flags.define_workdir("Where the runs are written (default: a temporary folder).")
_OUT = common_flags.define_out("Write the rows as JSON here (default: print them only).")


class _Timer:
    """Wraps ``RunCheckpointer.save`` and ``close`` to add up the time the loop spends in them."""

    def __init__(self):
        self.blocked, self.saves = 0.0, 0

    def wrap(self, method, counts: bool):
        @functools.wraps(method)
        def timed(manager, *args, **kwargs):
            start = time.perf_counter()
            try:
                return method(manager, *args, **kwargs)
            finally:
                self.blocked += time.perf_counter() - start
                self.saves += counts
        return timed


def _size_mb(step_dir: pathlib.Path) -> float:
    return round(sum(p.stat().st_size for p in step_dir.rglob("*") if p.is_file()) / 1e6, 1)


def _run(config: config_lib.TrainConfig, workdir: pathlib.Path, background: bool) -> Dict[str, Any]:
    config = config_lib.apply_overrides(config, [f"run.checkpoint_async={str(background).lower()}"])
    timer = _Timer()
    save, close = checkpoint.RunCheckpointer.save, checkpoint.RunCheckpointer.close
    checkpoint.RunCheckpointer.save = timer.wrap(save, True)
    checkpoint.RunCheckpointer.close = timer.wrap(close, False)
    try:
        start = time.perf_counter()
        runner.train(config, workdir, progress=False)
        loop = time.perf_counter() - start
    finally:
        checkpoint.RunCheckpointer.save, checkpoint.RunCheckpointer.close = save, close
    steps = sorted((p for p in (workdir / "checkpoints").iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    row = dict(mode="background" if background else "synchronous", saves=timer.saves,
               blocked_s=round(timer.blocked, 3), blocked_per_save_s=round(timer.blocked / max(timer.saves, 1), 3),
               loop_s=round(loop, 3), checkpoint_mb=_size_mb(steps[-1]))
    shutil.rmtree(workdir)
    return row


def main(argv):
    del argv
    config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), [
        *_OVERRIDES.value, f"run.num_iterations={_ITERATIONS.value}", "run.checkpoint_every=1", "run.eval_every=0"])
    root = pathlib.Path(_WORKDIR.value or tempfile.mkdtemp(prefix="checkpoint_stall_"))
    root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    _run(config, root / "compile", background=False)  # compiles the programs; not timed
    compile_s = round(time.perf_counter() - start, 1)
    rows: List[Dict[str, Any]] = []
    for i in range(_ROUNDS.value):
        for background in (False, True):
            rows.append(dict(round=i, **_run(config, root / f"run_{i}_{int(background)}", background)))
    summary = {mode: {key: statistics.median(r[key] for r in rows if r["mode"] == mode)
                      for key in ("blocked_s", "blocked_per_save_s", "loop_s")}
               for mode in ("synchronous", "background")}
    report.emit(dict(preset=_PRESET.value, overrides=_OVERRIDES.value, iterations=_ITERATIONS.value,
                     first_run_s=compile_s, rows=rows, summary=summary), _OUT.value)


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
