"""Train and evaluate every run the figure notebooks need, at one scale, into one folder.

    python experiments/reproduce.py --scale=ci --out=results/ci            # minutes on 2 CPU cores
    python experiments/reproduce.py --scale=cpu --out=results/cpu --jobs=2 # Gardner chess, a laptop overnight
    python experiments/reproduce.py --scale=chess_fast --out=results/chess # chess, accelerators
    python experiments/reproduce.py --scale=cpu_sweep --out=results/cpu_sweep --jobs=2  # Gardner's λ and ℓ0
    python experiments/reproduce.py --scale=ci_sweep --out=results/ci_sweep            # the sweep in minutes

Stages: ``train`` (every run of the scale, ``azdb_jax.reproduction.scales``; finished runs
are skipped, interrupted ones resume from their latest checkpoint; ``--jobs=N`` trains N
at once, each in its own process; ``--populations=on`` trains each arm's seeds as one
population, one program for all of them, the default on an accelerator) then ``eval`` (every
figure group, ``azdb_jax.reproduction.GROUPS``; a group whose report exists is skipped
unless ``--force``). ``DIR/manifest.json`` records which run feeds which figure, the
library version and the seconds each part took. Then open a notebook of ``colabs/`` with
``RESULTS = "DIR"``.
"""

import dataclasses
import pathlib
import time
from typing import List

from absl import app, flags

from azdb_jax import cli  # no JAX import
from azdb_jax.cli import common_flags  # no JAX import

_SCALE = flags.DEFINE_enum("scale", "ci", ["ci", "cpu", "chess_fast", "cpu_sweep", "ci_sweep", "cpu16", "lease16", "ci_pack"],
                           "How large every run and evaluation is (cpu_sweep: the Gardner sweep of λ and ℓ0; "
                           "ci_sweep: the same machinery in minutes; cpu16: the accelerator pack's 16 seeds an arm, "
                           "lease16: the pack cut to one accelerator lease; ci_pack: the pack in minutes).")
_OUT = common_flags.define_out("The results folder (default: results/<scale>).")
_STAGES = flags.DEFINE_list("stages", ["train", "eval"], "Stages to run: train, eval.")
_RUNS = flags.DEFINE_list("runs", [], "Train only these runs (names like azdb_s0; default all).")
_JOBS = flags.DEFINE_integer("jobs", 1, "Runs trained at once, each in its own process (its console in "
                             "runs/<run>/train.log); more throughput from a multi-core CPU than one at a time. "
                             "On one GPU keep 1: processes share the chip by turns, and nine at once "
                             "finished 2.5x fewer iterations an hour than one after another "
                             "(docs/performance.md, GPU).",
                             lower_bound=1)
_POPULATIONS = flags.DEFINE_enum(
    "populations", "auto", ["auto", "on", "off"], "Train each arm's seeds as one population (azdb_jax.population: "
    "one program for all seeds; the runs are the same within float rounding). auto: on an accelerator; off on a "
    "CPU, where it gains 10 % (docs/performance.md, 'Populations') and the runs stay bit for bit those of the docs.")
_GROUPS = flags.DEFINE_list("groups", [], "Evaluate only these figure groups (default all).")
_FORCE = flags.DEFINE_bool("force", False, "Re-evaluate groups whose report exists.")
_MATCH_GAMES = flags.DEFINE_integer(
    "match_games", None, "Games per agent and pairing in the matches and sweep groups (default: the scale's "
    "eval.match_games); with --stages=eval only, since training does not read it. The report records the "
    "games played.", lower_bound=1)


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top

    for stage in _STAGES.value:
        if stage not in ("train", "eval"):
            raise ValueError(f"--stages: unknown stage {stage!r} (train, eval)")
    out = pathlib.Path(_OUT.value or f"results/{_SCALE.value}")
    scale = reproduction.SCALES[_SCALE.value]
    if _MATCH_GAMES.value is not None:
        if "train" in _STAGES.value:
            raise ValueError("--match_games: an evaluation size; pass it with --stages=eval")
        scale = dataclasses.replace(scale, eval=dataclasses.replace(scale.eval, match_games=_MATCH_GAMES.value))
    results = reproduction.Results(out, scale)
    allowed = reproduction.scale_groups(results.scale)
    groups = _GROUPS.value or list(allowed)
    for group in groups:
        if group not in allowed:
            raise ValueError(f"--groups: scale {_SCALE.value!r} has no figure group {group!r}; groups: "
                             f"{', '.join(allowed)}")
    names = [spec.name for spec in results.specs]
    for name in _RUNS.value:
        if name not in names:
            raise ValueError(f"--runs: scale {_SCALE.value!r} has no run {name!r}; runs: {', '.join(names)}")
    print(f"{results.scale.name}: {results.scale.description}")
    print(f"results: {out}  ({len(names)} runs: {', '.join(names)})")
    if "train" in _STAGES.value:
        import jax  # pylint: disable=g-import-not-at-top

        populations = _POPULATIONS.value == "on" or (_POPULATIONS.value == "auto" and jax.default_backend() != "cpu")
        reproduction.train_runs(results, _RUNS.value or None, jobs=_JOBS.value, populations=populations)
    if "eval" in _STAGES.value:
        for group in groups:
            if results.has_report(group) and not _FORCE.value:
                print(f"{group}: report exists ({results.report_prefix(group)}.json)")
                continue
            start = time.perf_counter()
            reproduction.evaluate_group(results, group)
            print(f"{group} ({reproduction.GROUPS[group][0]}): {time.perf_counter() - start:.0f} s")
    print(f"manifest: {out / reproduction.results.MANIFEST}")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
