"""Zhou & Riis's Nim study in one command: train, measure every checkpoint, study positions, decide the claims.

  python experiments/nim_study.py --out=results/nim --settings=nim5,nim6,nim7 --seeds=0,1,2 --iterations=60
  python experiments/nim_study.py --out=results/nim --settings=nim6,nim6_team --seeds=3,4,5 --iterations=60
  python experiments/nim_study.py --out=results/nim --notrain --nostudy --claims_step=30   # claims at iteration 30

Each setting (a preset of ``azdb_jax.presets``: ``nim5``-``nim7`` are the paper's LSTM on
the unary board, ``*_resnet`` the library's network, ``*_team`` a diverse team of 3)
trains its seeds as one population in ``OUT/<setting>/seed_<s>`` (continued where a
previous call stopped: a larger ``--iterations`` extends the runs). Then, per run, the
measures of every checkpoint (``experiments/nim_measures.py``: the expert measure of the
network over ``--max_positions`` positions, the champion measure's round robin; the
search's accuracy with ``--search_measure``), a report that is reused while the run's
checkpoints are unchanged; the position studies of the first seed's last checkpoint
(``experiments/nim_positions.py``); finally the claims table and each setting's wall time.
``colabs/nim.ipynb`` draws the figures from ``OUT``.
"""

import json
import pathlib
import time
from typing import List

from absl import app, flags, logging

from azdb_jax import cli
from azdb_jax.cli import common_flags


def _checkpoint_steps(run: pathlib.Path) -> List[int]:
    from azdb_jax import checkpoint  # pylint: disable=g-import-not-at-top

    with checkpoint.RunCheckpointer(str(run / "checkpoints"), create=False) as manager:
        return sorted(manager.all_steps())


def _train(setting: str, workdir: pathlib.Path) -> float:
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import population, presets  # pylint: disable=g-import-not-at-top

    config = presets.get_preset(setting)
    overrides = [f"run.checkpoint_every={_CHECKPOINT_EVERY.value}"]
    if _ITERATIONS.value:
        overrides.append(f"run.num_iterations={_ITERATIONS.value}")
    config = config_lib.apply_overrides(config, overrides + list(_OVERRIDE.value))
    resume = (workdir / population.MANIFEST).is_file()
    started = time.perf_counter()
    population.train(config, workdir, [int(s) for s in _SEEDS.value], member_map=_MEMBER_MAP.value, resume=resume)
    return time.perf_counter() - started


def _measure(run: pathlib.Path) -> None:
    from azdb_jax.evaluation import loading, reports  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import nim as nim_eval  # pylint: disable=g-import-not-at-top

    steps = _checkpoint_steps(run)
    report = run / "reports" / "nim_measures.json"
    if report.is_file() and json.loads(report.read_text())["summary"]["steps"] == steps:
        return  # measured already, and no checkpoint since
    teams = [(step, loading.load_team(run, step=step)) for step in steps]
    summary, rows = nim_eval.measure_checkpoints(teams, num_games=_GAMES.value, num_seeds=_MATCH_SEEDS.value,
                                                 max_positions=_MAX_POSITIONS.value or None,
                                                 search=_SEARCH_MEASURE.value, progress=True)
    summary["workdir"] = str(run)
    reports.write_report(run / "reports" / "nim_measures", summary, rows)


def _study(run: pathlib.Path) -> None:
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import nim_positions  # pylint: disable=g-import-not-at-top
    from azdb_jax.files import write_atomic  # pylint: disable=g-import-not-at-top

    team = loading.load_team(run)
    report = nim_positions.position_report(team, simulations=tuple(2 ** k for k in range(_MAX_LOG2.value + 1)))
    write_atomic(run / "reports" / "nim_positions.json", json.dumps({"workdir": str(run), **report}, indent=1))
    for study in report["studies"]:
        print(nim_positions.format_study(study) + "\n")


def main(argv: List[str]) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    from azdb_jax import population  # pylint: disable=g-import-not-at-top
    from azdb_jax.figures import nim as figures_nim  # pylint: disable=g-import-not-at-top
    from azdb_jax.reproduction import nim_claims  # pylint: disable=g-import-not-at-top

    out = pathlib.Path(_OUT.value)
    timing = {}
    for setting in _SETTINGS.value:
        workdir = out / setting
        seconds = _train(setting, workdir) if _TRAIN.value else None
        runs = population.member_dirs(workdir)
        for run in runs:
            _measure(run)
        if _STUDY.value:
            _study(runs[0])
        iterations = [json.loads(line)["iteration_seconds"] for line in (runs[0] / "metrics.jsonl").read_text()
                      .splitlines() if line.strip() and json.loads(line).get("kind") == "train"]
        timing[setting] = {"members": len(runs), "iterations": len(iterations),
                           "training_seconds": round(sum(iterations), 1),
                           "this_call_seconds": None if seconds is None else round(seconds, 1)}
        print(f"{setting}: {len(runs)} member(s), {len(iterations)} iterations in {sum(iterations) / 60:.1f} min "
              f"({sum(iterations) / max(len(iterations), 1):.1f} s an iteration for all members)")
    rows = nim_claims.claims(figures_nim.load_runs(out), step=_CLAIMS_STEP.value or None)
    print(nim_claims.format_claims(rows))
    (out / "nim_study.json").write_text(json.dumps({"timing": timing, "claims": rows}, indent=1))


if __name__ == "__main__":
    _OUT = common_flags.define_out("Results folder (one folder per setting).", required=True)
    _SETTINGS = flags.DEFINE_list("settings", ["nim5", "nim6", "nim7"], "Presets to train and measure.")
    _SEEDS = flags.DEFINE_list("seeds", ["0", "1", "2"], "Training seeds: one population member each.")
    _ITERATIONS = flags.DEFINE_integer("iterations", 0, "Training iterations (0: the preset's).", lower_bound=0)
    _CHECKPOINT_EVERY = flags.DEFINE_integer("checkpoint_every", 10, "Iterations between checkpoints (each is "
                                             "measured).", lower_bound=1)
    _OVERRIDE = flags.DEFINE_multi_string("override", [], "Extra config override section.field=value.")
    _MEMBER_MAP = flags.DEFINE_string("member_map", "auto", "How the population's members are run.")
    _TRAIN = flags.DEFINE_bool("train", True, "Train (or continue) the settings; --notrain measures what is there.")
    _MAX_POSITIONS = flags.DEFINE_integer("max_positions", 10_000, "Positions of the expert measure (0: all).",
                                          lower_bound=0)
    _SEARCH_MEASURE = flags.DEFINE_bool("search_measure", False, "Also the expert measure after search (slow on "
                                        "6 and 7 heaps: a search per position and checkpoint).")
    _GAMES = common_flags.define_games("Games per pair of checkpoints and round (champion measure).", default=16,
                                       lower_bound=2)
    _MATCH_SEEDS = flags.DEFINE_integer("match_seeds", 2, "Rounds of --games games per pair.", lower_bound=1)
    _CLAIMS_STEP = flags.DEFINE_integer("claims_step", 0, "Decide the claims at this checkpoint of every setting "
                                        "(0: each setting's last one every seed measured).", lower_bound=0)
    _STUDY = flags.DEFINE_bool("study", True, "Position studies of the first seed's last checkpoint.")
    _MAX_LOG2 = flags.DEFINE_integer("max_log2_simulations", 10, "Position studies search 1, 2, ..., 2^k "
                                     "simulations.", lower_bound=0, upper_bound=20)
    app.run(cli.input_errors_exit(main))
