r"""The training levers on connect four, measured against the solved game.

Trains the ``demo`` preset (or ``--preset``) with each lever of ``LEVERS`` on each seed,
then measures every kept checkpoint on the shipped solver-labelled positions
(``azdb_jax.evaluation.solved_positions``: player 0's search and prior keep the solved
outcome, value-sign accuracy) and, at the last checkpoint, player 0 playing on against
``perfect``; prints a table per lever and iteration (means over seeds with 95 % t
intervals) with the training's wall time, and writes a JSON report::

  python experiments/connect_four_levers.py --levers=base,gumbel,pcr,q_mix,mirror \
      --seeds=21 --iterations=30 --checkpoint_every=10 --root=runs/levers --out=runs/levers/report.json

A lever is a list of config overrides on top of the preset (``--override`` adds more to
every run, e.g. ``team.lam=1.0`` for the controls). Runs already finished in ``--root``
are measured, not trained again; measures are the search with ``--simulations`` (24,
the preset's evaluation budget) for every lever, so a lever that searches self-play
harder is not measured with a bigger search.
"""

import json
import pathlib
import time
from typing import Dict, List, Sequence, Tuple

from absl import app, flags, logging
import numpy as np
from scipy import stats

from azdb_jax import checkpoint, config as config_lib, data, presets, runner, runs
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import solved_positions

# Each lever: the overrides that turn it on ("{steps}": the run's learner steps in all).
LEVERS: Dict[str, List[str]] = {
    "base": [],
    # Gumbel search: completed-Q improved-policy targets (Danihelka et al. 2022).
    "gumbel": ["search.algorithm=gumbel"],
    # Playout cap randomisation (KataGo): a quarter of the plies search 48 and are trained on,
    # the rest 12 (about the base's 24 on average).
    "pcr": ["search.num_simulations=48", "selfplay.full_search_prob=0.25", "selfplay.fast_simulations=12"],
    "q_mix": ["learner.value_q_weight=0.5"],  # value target ½ z + ½ Q
    "mirror": ["learner.mirror_augment=true"],  # connect four's left-right symmetry
    "wide": ["network.channels=64", "network.num_blocks=3", "network.value_hidden=64"],
    "replay2": ["run.learner_steps=24"],  # twice the learner steps per self-play window
    # 4x the games side by side (a forward of 256 positions costs 2.4x one of 64 on 2 cores,
    # benchmarks/iteration_profile.py) and 4x the learner steps: the same replay ratio.
    "batch4": ["selfplay.num_games=256", "run.learner_steps=48"],
    # Not a lever: plain AlphaZero (one player, self-play), the reference without a team around player 0.
    "az": ["team.num_players=1", "team.lam=1.0", "team.matchmaker=selfplay"],
    "cosine": ["learner.schedule=cosine", "learner.decay_steps={steps}", "learner.final_lr_fraction=0.1"],
}

_PRESET = flags.DEFINE_string("preset", "demo", "Preset every lever starts from.")
_LEVERS = flags.DEFINE_list("levers", ["base"], f"Levers to train and measure: {', '.join(LEVERS)}; "
                            "LEVER+LEVER combines them.")
_SEEDS = flags.DEFINE_list("seeds", ["21"], "Training seeds.")
_ITERATIONS = flags.DEFINE_integer("iterations", 30, "Iterations of each run.", lower_bound=1)
_EVERY = flags.DEFINE_integer("checkpoint_every", 10, "Iterations between the measured checkpoints.", lower_bound=1)
_OVERRIDES = flags.DEFINE_multi_string("override", [], "More overrides for every run (section.field=value).")
_ROOT = flags.DEFINE_string("root", "runs/levers", "Where the runs go (ROOT/LEVER_sSEED).")
_SIMULATIONS = common_flags.define_simulations("Search simulations of the measures.", default=24)
_PLAY = flags.DEFINE_string("play", "perfect", "Opponent of the play-on games at the last checkpoint; empty: none.")
_POSITIONS = flags.DEFINE_string("positions", None, "Solver-labelled position file of the measures (default: the "
                                  "shipped one, azdb_jax/data/connect_four_positions.csv).")
_OUT = common_flags.define_out("JSON report.")
_REDRAW = flags.DEFINE_string("redraw", None, "Draw the curves of this JSON report (an earlier --out) and stop; "
                              "into --figure, default the report's path without .json.")
_FIGURE = flags.DEFINE_string("figure", None, "Also draw the curves (azdb_jax.figures.strength.solved_curves) "
                              "against iterations, training seconds and positions into FIGURE_<axis>.png, "
                              "with the numbers drawn in FIGURE_<axis>.json.")


def lever_overrides(name: str, *, iterations: int, learner_steps: int) -> List[str]:
    """The overrides of a lever name (``a+b`` for both)."""
    overrides = []
    for part in name.split("+"):
        if part not in LEVERS:
            raise app.UsageError(f"unknown lever {part!r}; known: {', '.join(LEVERS)}")
        overrides += LEVERS[part]
    steps = iterations * learner_steps
    if any(o.startswith("run.learner_steps=") for o in overrides):
        steps = iterations * int(next(o for o in overrides if o.startswith("run.learner_steps=")).split("=")[1])
    return [o.replace("{steps}", str(steps)) for o in overrides]


def _config(lever: str, seed: int) -> config_lib.TrainConfig:
    base = presets.get_preset(_PRESET.value)
    overrides = lever_overrides(lever, iterations=_ITERATIONS.value, learner_steps=base.run.learner_steps)
    return config_lib.apply_overrides(base, overrides + list(_OVERRIDES.value) + [
        f"run.seed={seed}", f"run.num_iterations={_ITERATIONS.value}", f"run.checkpoint_every={_EVERY.value}",
        f"run.keep_checkpoints={_ITERATIONS.value // _EVERY.value + 1}", "run.eval_every=0"])


def _train(config: config_lib.TrainConfig, workdir: pathlib.Path) -> Tuple[Dict[int, float], Dict[int, int]]:
    """Trains (or finds finished) the run; returns its training seconds up to each iteration
    (the iterations' own wall time, the first one's compilation included) and the self-play
    positions stored up to it."""
    if (workdir / "config.json").exists() and config.run.num_iterations in checkpoint.all_steps(workdir):
        logging.info("%s: finished, measuring only", workdir)
    else:
        runner.train(config, workdir, resume=(workdir / "config.json").exists())
    seconds, positions, total, stored = {}, {}, 0.0, 0
    for record in runs.read_metrics(workdir):
        if "iteration_seconds" in record:
            total += record["iteration_seconds"]
            stored += int(record.get("examples_stored", 0))
            seconds[int(record["iteration"])] = total
            positions[int(record["iteration"])] = stored
    return seconds, positions


def _measure(workdir: pathlib.Path, positions, *, last: bool) -> List[Dict]:
    import jax  # pylint: disable=g-import-not-at-top

    rows = []
    for step in checkpoint.all_steps(workdir):
        agent = runs.load_agent(workdir, step, num_simulations=_SIMULATIONS.value)
        report = solved_positions.evaluate(agent, positions, jax.random.PRNGKey(0))
        row = {name: report["players"][0]["all"][name]["rate"]
               for name in ("search_keeps", "prior_keeps", "value_sign")}
        if _PLAY.value and (not last or step == max(checkpoint.all_steps(workdir))):
            played = solved_positions.against_perfect(agent, positions, jax.random.PRNGKey(0), player=0,
                                                      opponent=_PLAY.value)
            row["against_perfect"] = played["keeps_result"]["rate"]
        rows.append(dict(row, iteration=int(step)))
    return rows


def _interval(values: Sequence[float]) -> str:
    values = np.asarray(values, float)
    if len(values) < 2:
        return f"{values.mean():.3f}"
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.3f} [{values.mean() - half:.3f}, {values.mean() + half:.3f}]"


def main(argv: Sequence[str]) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    logging.set_verbosity(logging.WARNING)
    if _REDRAW.value:
        report = json.loads(pathlib.Path(_REDRAW.value).read_text())
        for path in draw(report, _FIGURE.value or str(pathlib.Path(_REDRAW.value).with_suffix(""))):
            print(f"figure: {path}")
        return
    positions = data.load_connect_four_positions(_POSITIONS.value)
    root = pathlib.Path(_ROOT.value)
    report = []
    for lever in _LEVERS.value:
        for seed in (int(s) for s in _SEEDS.value):
            workdir = root / f"{lever}_s{seed}"
            config = _config(lever, seed)
            seconds, stored = _train(config, workdir)
            start = time.time()
            curve = [dict(row, train_seconds=round(seconds.get(row["iteration"], float("nan")), 1),
                          positions=stored.get(row["iteration"]))
                     for row in _measure(workdir, positions, last=True)]
            report.append(dict(lever=lever, seed=seed, overrides=lever_overrides(
                lever, iterations=_ITERATIONS.value, learner_steps=presets.get_preset(_PRESET.value).run.learner_steps),
                train_seconds=round(max(seconds.values(), default=0.0), 1),
                measure_seconds=round(time.time() - start, 1), curve=curve))
            print(f"{lever} seed {seed}: trained {report[-1]['train_seconds']:.0f} s; " + "; ".join(
                f"it {r['iteration']}: keeps {r['search_keeps']:.3f}" for r in curve), flush=True)
            if _OUT.value:
                out = pathlib.Path(_OUT.value)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(report, indent=1) + "\n")
    print("\n| lever | iteration | train s to it (mean) | search keeps | prior keeps | value sign | against perfect |")
    print("|---|---|---|---|---|---|---|")
    for lever in _LEVERS.value:
        entries = [e for e in report if e["lever"] == lever]
        for i, row in enumerate(entries[0]["curve"]):
            cells = []
            for name in ("search_keeps", "prior_keeps", "value_sign", "against_perfect"):
                values = [e["curve"][i].get(name) for e in entries if i < len(e["curve"])]
                cells.append("–" if any(v is None for v in values) else _interval(values))
            secs = np.mean([e["curve"][i]["train_seconds"] for e in entries if i < len(e["curve"])])
            print(f"| {lever} | {row['iteration']} | {secs:.0f} | " + " | ".join(cells) + " |")
    if _FIGURE.value:
        for path in draw(report, _FIGURE.value):
            print(f"figure: {path}")


def draw(report: List[Dict], prefix: str) -> List[pathlib.Path]:
    """The report's curves against each axis, as PNG and the JSON of the numbers drawn."""
    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
    from azdb_jax.figures import strength  # pylint: disable=g-import-not-at-top

    written = []
    for axis in strength.AXES:
        if not all(r.get(axis) is not None for e in report for r in e["curve"]):
            continue  # an older report without positions
        fig, numbers = strength.solved_curves(report, x=axis)
        path = pathlib.Path(f"{prefix}_{axis}.png")
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        path.with_suffix(".json").write_text(json.dumps(numbers, indent=1) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    app.run(main)
