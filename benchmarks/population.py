"""A population's throughput against the same members trained as plain runs one after another, as JSON.

  python benchmarks/population.py --preset=demo --sizes=1,2,4,8 --out=population.json
  python benchmarks/population.py --preset=gardner_cpu --sizes=1,8 --maps=vmap,map
  python benchmarks/population.py --preset=gardner_cpu --sizes=2,4 --arms   # AZdb and control as members

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

``--arms``: half the members are the preset's team (λ < 1) and half its λ = 1 control
(``population.train(configs=...)``: arms of one shape in one program, each member's λ an
array); the plain runs are each arm's runs through its own programs (their compiles
added), so the rows say what training both arms as one population saves.
"""

import functools
import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Sequence

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
_ARMS = flags.DEFINE_bool("arms", False, "Half the members the preset's team, half its λ = 1 control, as one "
                          "population of arms (K even).")
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


def _compiled(fn: Callable, state: Any) -> Callable:
    """The executable of a jitted phase for ``state`` (a population of arms binds its λ and
    ℓ0 to its self-play program with ``functools.partial``)."""
    if isinstance(fn, functools.partial):
        return functools.partial(fn.func.lower(*fn.args, state).compile(), *fn.args)
    return fn.lower(state).compile()


def _measure(states: List[Any], selfplay: Callable, learner: Callable, learner_steps: int, k: int,
             plain_arms: Sequence[Any] = ()) -> Dict[str, Any]:
    """``plain_arms``: (selfplay, learner, states) of further configurations' plain runs
    (the other arm), timed and compiled as these."""
    started = time.perf_counter()
    groups = [(_compiled(selfplay, states[0]), _compiled(learner, states[0]), states)]  # the timed executables
    groups += [(_compiled(s, st[0]), _compiled(lf, st[0]), st) for s, lf, st in plain_arms]
    compile_s = time.perf_counter() - started
    def iteration():
        timing = [0.0, 0.0]
        for g, (selfplay_fn, learner_fn, group_states) in enumerate(groups):
            group_states, (s, lt) = _time_phases(group_states, selfplay_fn, learner_fn, learner_steps)
            groups[g] = (selfplay_fn, learner_fn, group_states)
            timing = [timing[0] + s, timing[1] + lt]
        return tuple(timing)

    for _ in range(_WARMUP.value):
        iteration()
    timings = [iteration() for _ in range(_ITERATIONS.value)]
    selfplay_s = statistics.median(t[0] for t in timings)
    learner_s = statistics.median(t[1] for t in timings)
    return dict(selfplay_s=round(selfplay_s, 4), learner_s=round(learner_s, 4), compile_s=round(compile_s, 2),
                member_iterations_per_s=round(k / (selfplay_s + learner_s), 4))


def main(argv: List[str]) -> None:
    del argv
    config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), _OVERRIDES.value)
    if _ARMS.value and not (config.team.num_players > 1 and config.team.lam < 1.0):
        raise ValueError(f"--arms: the preset {_PRESET.value!r} has no diverse team (team.lam < 1, 2+ players)")
    control = config_lib.apply_overrides(config, ["team.lam=1.0"])
    kept = runner.programs(config)
    steps = config.run.learner_steps
    rows = []
    for k in [int(size) for size in _SIZES.value]:
        seeds = list(range(k))
        if _ARMS.value and k % 2:
            raise ValueError(f"--arms: {k} members do not split into two arms")
        arms = [config] * (k - k // 2 if _ARMS.value else k) + [control] * (k // 2 if _ARMS.value else 0)
        own = [seed for seed, c in zip(seeds, arms) if c is config]
        plain_states = [kept.init(jax.random.PRNGKey(seed)) for seed in own]
        others = []
        if _ARMS.value:
            kept_control = runner.programs(control)
            others = [(kept_control.selfplay, kept_control.learner, [kept_control.init(jax.random.PRNGKey(seed))
                                                                     for seed in seeds if seed not in own])]
        row: Dict[str, Any] = dict(members=k, plain=_measure(plain_states, kept.selfplay, kept.learner, steps, k,
                                                             plain_arms=others))
        del plain_states, others
        for member_map in _MAPS.value:
            values = population.arm_values(arms) if _ARMS.value else None
            progs = population.programs(config, member_map.replace("+", ","), arms=values)
            states = progs.init(jnp.stack([jax.random.PRNGKey(seed) for seed in seeds]))
            row[member_map] = _measure([states], progs.selfplay, progs.learner, steps, k)
            row[member_map]["speedup"] = round(row[member_map]["member_iterations_per_s"]
                                               / row["plain"]["member_iterations_per_s"], 3)
            del states
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)  # progress: a long run shows its rows as they come
    report.emit(dict(preset=_PRESET.value, overrides=_OVERRIDES.value, arms=_ARMS.value, backend=jax.default_backend(),
                     devices=[str(d) for d in jax.devices()], learner_steps=steps, rows=rows), _OUT.value)


if __name__ == "__main__":
    app.run(main)
