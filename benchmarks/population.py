"""A population's throughput against the same members trained as plain runs one after another, as JSON.

  python benchmarks/population.py --preset=demo --sizes=1,2,4,8 --out=population.json
  python benchmarks/population.py --preset=gardner_cpu --sizes=1,8 --maps=vmap,map

For each population size K and each way of running the member axis (``--maps``,
``azdb_jax.population.MEMBER_MAPS``), in one process and one run (the machines are
noisy; compare the ratios):

  plain            K plain runs (``runner.programs``: the programs ``azdb-train`` runs),
                   one iteration of each after the other;
  <map>            the population of K (``azdb_jax.population.programs``; "map+unroll":
                   self-play by one map, the learner by the other), one call of
                   each phase for all members.

Each is timed per phase, after ``--warmup`` iterations, as the median of ``--iterations``
iterations: ``selfplay_s`` (the self-play window with its targets and replay writes) and
``learner_s`` (the iteration's ``run.learner_steps`` learner steps), each waited for on its
own; ``member_iterations_per_s`` = K / (selfplay_s + learner_s); ``speedup`` = that over the
plain runs' (above 1: the population trains its members faster than K runs one after
another). ``compile_s`` is the lowering and compiling of the self-play and learner programs
(the population's for all K members; the plain runs' once, shared by all seeds).
"""

import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

from absl import app, flags
import jax
import jax.numpy as jnp

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import config as config_lib
from azdb_jax import population, presets, runner
from azdb_jax.cli import common_flags

_PRESET = flags.DEFINE_enum("preset", "demo", sorted(presets.PRESETS), "The configuration of every member.")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "section.field=value, as azdb-train takes it.")
_SIZES = flags.DEFINE_list("sizes", ["1", "2", "4", "8"], "Population sizes K.")
_MAPS = flags.DEFINE_list("maps", ["vmap", "map", "unroll", "map+unroll"], "How the member axis is run (population.member_maps; + joins the self-play and learner maps).")
_WARMUP = flags.DEFINE_integer("warmup", 0, "Iterations run before timing (after compiling).", lower_bound=0)
_ITERATIONS = flags.DEFINE_integer("iterations", 3, "Timed iterations (median).", lower_bound=1)
_OUT = common_flags.define_out("Write the table as JSON here (default: print it only).")


def _time_phases(states: List[Any], selfplay: Callable, learner: Callable, learner_steps: int):
    """One iteration of each state in turn, the phases timed apart; returns (states, (selfplay_s, learner_s))."""
    selfplay_s = learner_s = 0.0
    out = []
    for state in states:
        started = time.perf_counter()
        state, metrics = selfplay(state)
        jax.block_until_ready((state, metrics))
        selfplay_s += time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(learner_steps):
            state, metrics = learner(state)
        jax.block_until_ready((state, metrics))
        learner_s += time.perf_counter() - started
        out.append(state)
    return out, (selfplay_s, learner_s)


def _measure(states: List[Any], selfplay: Callable, learner: Callable, learner_steps: int, k: int) -> Dict[str, Any]:
    started = time.perf_counter()
    selfplay = selfplay.lower(states[0]).compile()  # the timed calls run these executables
    learner = learner.lower(states[0]).compile()
    compile_s = time.perf_counter() - started
    for _ in range(_WARMUP.value):
        states, _ = _time_phases(states, selfplay, learner, learner_steps)
    timings = []
    for _ in range(_ITERATIONS.value):
        states, timing = _time_phases(states, selfplay, learner, learner_steps)
        timings.append(timing)
    selfplay_s = statistics.median(t[0] for t in timings)
    learner_s = statistics.median(t[1] for t in timings)
    return dict(selfplay_s=round(selfplay_s, 4), learner_s=round(learner_s, 4), compile_s=round(compile_s, 2),
                member_iterations_per_s=round(k / (selfplay_s + learner_s), 4))


def main(argv: List[str]) -> None:
    del argv
    config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDES.value)
    kept = runner.programs(config)
    steps = config.run.learner_steps
    rows = []
    for k in [int(size) for size in _SIZES.value]:
        seeds = list(range(k))
        plain_states = [kept.init(jax.random.PRNGKey(seed)) for seed in seeds]
        row: Dict[str, Any] = dict(members=k, plain=_measure(plain_states, kept.selfplay, kept.learner, steps, k))
        del plain_states
        for member_map in _MAPS.value:
            progs = population.programs(config, member_map.replace("+", ","))
            states = progs.init(jnp.stack([jax.random.PRNGKey(seed) for seed in seeds]))
            row[member_map] = _measure([states], progs.selfplay, progs.learner, steps, k)
            row[member_map]["speedup"] = round(row[member_map]["member_iterations_per_s"]
                                               / row["plain"]["member_iterations_per_s"], 3)
            del states
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)  # progress: a long run shows its rows as they come
    report.emit(dict(preset=_PRESET.value, overrides=_OVERRIDES.value, backend=jax.default_backend(),
                     devices=[str(d) for d in jax.devices()], learner_steps=steps, rows=rows), _OUT.value)


if __name__ == "__main__":
    app.run(main)
