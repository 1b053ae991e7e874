"""How far a population's members drift from the plain runs of their seeds, as JSON.

  python benchmarks/population_drift.py --members=8 --iterations=10
  python benchmarks/population_drift.py --members=2 --iterations=5 --member_map=map

Trains, in one process, the plain run of each seed 0..K-1 (``runner.train``) and the
population of those seeds (``azdb_jax.population.train``) on a tiny configuration (the
``demo`` preset on tic-tac-toe with the smallest network and search, 3 players, an
evaluation every 2 iterations; ``--override`` changes it), then compares every record
of ``metrics.jsonl`` member by member: ``first_difference`` (the first iteration where any
value differs, null when none), the largest relative difference per metric, and the
final iteration's metrics as mean and standard deviation over the seeds for both.
"""

import json
import pathlib
import statistics
import tempfile
from typing import Any, Dict, List

from absl import app, flags

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import config as config_lib
from azdb_jax import population, presets, runner
from azdb_jax.cli import common_flags

_MEMBERS = flags.DEFINE_integer("members", 8, "Population size K (seeds 0..K-1).", lower_bound=1)
_ITERATIONS = flags.DEFINE_integer("iterations", 10, "Iterations of every run.", lower_bound=1)
_MEMBER_MAP = flags.DEFINE_string("member_map", "auto", "The population's member map (population.member_maps).")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "section.field=value on top of the tiny configuration.")
_OUT = common_flags.define_out("Write the comparison as JSON here (default: print it only).")

TINY = ["env.name=tic_tac_toe", "team.num_players=3", "team.lam=0.5", "diversity.l0=0.8", "team.matchmaker=uniform",
        "network.channels=4", "network.num_blocks=1", "network.value_hidden=4", "search.num_simulations=2",
        "selfplay.num_games=2", "selfplay.num_plies=4", "selfplay.sample_plies=2", "replay.capacity=64",
        "run.batch_size=8", "run.learner_steps=1", "run.eval_every=2", "run.eval_games=2", "run.eval_simulations=2",
        "run.eval_max_plies=9", "run.checkpoint_every=2"]
_TIMES = ("iteration_seconds", "eval_seconds")
_FINAL = ("loss", "games_finished", "d_0", "mean_search_value", "param_norm")


def _records(run: pathlib.Path) -> List[Dict[str, Any]]:
    out = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for record in out:
        for name in _TIMES:
            record.pop(name, None)
    return out


def main(argv: List[str]) -> None:
    del argv
    config = config_lib.apply_overrides(presets.get_preset("demo"),
                                        TINY + [f"run.num_iterations={_ITERATIONS.value}"] + _OVERRIDES.value)
    seeds = list(range(_MEMBERS.value))
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for seed in seeds:
            runner.train(population.member_config(config, seed), root / f"plain_{seed}", progress=False)
        population.train(config, root / "population", seeds, member_map=_MEMBER_MAP.value, progress=False)
        largest: Dict[str, float] = {}
        first = None
        final: Dict[str, Dict[str, List[float]]] = {"plain": {}, "population": {}}
        for seed in seeds:
            plain, member = _records(root / f"plain_{seed}"), _records(population.member_dir(root / "population", seed))
            if [(r["kind"], r["iteration"]) for r in plain] != [(r["kind"], r["iteration"]) for r in member]:
                raise RuntimeError(f"seed {seed}: the member's records are not the plain run's")
            for a, b in zip(plain, member):
                for name, value in a.items():
                    if isinstance(value, str) or name == "iteration":
                        continue
                    relative = abs(value - b[name]) / max(abs(value), 1e-6)
                    key = f"{a['kind']}/{name}"
                    largest[key] = max(largest.get(key, 0.0), relative)
                    if relative > 0 and (first is None or a["iteration"] < first):
                        first = a["iteration"]
            for label, records in (("plain", plain), ("population", member)):
                last = [r for r in records if r["kind"] == "train"][-1]
                for name in _FINAL:
                    final[label].setdefault(name, []).append(last[name])
    summary = {label: {name: {"mean": statistics.mean(v), "sd": statistics.stdev(v) if len(v) > 1 else 0.0}
                       for name, v in values.items()} for label, values in final.items()}
    report.emit(dict(members=len(seeds), iterations=_ITERATIONS.value,
                     member_maps=list(population.member_maps(_MEMBER_MAP.value)), first_difference=first,
                     largest_relative_difference=dict(sorted(largest.items(), key=lambda kv: -kv[1])),
                     final=summary), _OUT.value)


if __name__ == "__main__":
    app.run(main)
