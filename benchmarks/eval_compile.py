"""What the in-training evaluator costs to trace, lower and compile, and then to run, as JSON.

  python benchmarks/eval_compile.py                        # the gardner_cpu preset
  python benchmarks/eval_compile.py --preset=demo --override='run.eval_opponents=["random","previous"]'

The configuration's programs are built as a run builds them (``runner.programs``), its
first state is made, and the evaluator (``runner.Evaluator``) is called as the run calls
it: the first evaluation (no previous network yet), the second (the first's network as
"previous": every opponent now plays) and ``--repeats`` more, each timed. JAX's own
timers (``jax.monitoring``) give the wall seconds each call spent tracing, lowering and
compiling (``compile_cpu_s``: the process's CPU seconds, every thread, from the end of each
lowering to the end of its compile), and how many programs it compiled (and how many of
them took at least ``--large`` seconds: the game programs; the rest are eager operations'
small programs). The totals are those of the first two calls.
The persistent compilation cache is off, so every program compiles here.
"""

import json
import time

from absl import app
from absl import flags
import jax

from azdb_jax import config as config_lib
from azdb_jax import presets, runner

_PRESET = flags.DEFINE_string("preset", "gardner_cpu", "Training preset whose evaluator is measured.")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "Config overrides, name=value (as experiments/train.py).")
_REPEATS = flags.DEFINE_integer("repeats", 1, "Evaluations timed after the two that compile.", lower_bound=0)
_LARGE = flags.DEFINE_float("large", 1.0, "Compile seconds from which a program counts as large.")

_EVENTS = {"/jax/core/compile/backend_compile_duration": "compile",
           "/jax/core/compile/jaxpr_trace_duration": "trace",
           "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower"}


def main(argv):
    del argv
    jax.config.update("jax_enable_compilation_cache", False)
    config = config_lib.apply_overrides(presets.get_preset(_PRESET.value), list(_OVERRIDES.value))
    if not config.run.eval_every:
        raise app.UsageError(f"{_PRESET.value} has no evaluation (run.eval_every=0)")
    kept = runner.programs(config)
    state = jax.block_until_ready(kept.init(jax.random.PRNGKey(config.run.seed)))
    params, psi = state.train_state.params, state.expected_features.psi
    evaluator = runner.Evaluator(config, kept.components, games_of=kept.evaluator)

    events = []
    lowered_at = [time.process_time()]

    def listen(event, seconds, **_):
        name = _EVENTS.get(event)
        if name == "compile":  # CPU seconds (all threads) since its lowering ended: the compile's own
            events.append(("compile_cpu", time.process_time() - lowered_at[0]))
        elif name == "lower":
            lowered_at[0] = time.process_time()
        if name is not None:
            events.append((name, seconds))

    jax.monitoring.register_event_duration_secs_listener(listen)
    calls = []
    for call in range(2 + _REPEATS.value):
        events.clear()
        iteration = (call + 1) * config.run.eval_every
        key = jax.random.fold_in(jax.random.PRNGKey(config.run.seed + 1), iteration)
        wall, cpu = time.perf_counter(), time.process_time()
        records = evaluator(params, key, iteration, psi)
        row = dict(call=call + 1, wall_s=time.perf_counter() - wall, cpu_s=time.process_time() - cpu,
                   records=len(records))
        for name in ("trace", "lower", "compile", "compile_cpu"):
            row[f"{name}_s"] = sum(seconds for event, seconds in events if event == name)
        compiles = [seconds for event, seconds in events if event == "compile"]
        row["programs"] = len(compiles)
        row["large_programs"] = [round(s, 2) for s in sorted(compiles, reverse=True) if s >= _LARGE.value]
        calls.append({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()})
    first_two = calls[:2]
    print(json.dumps(dict(
        preset=_PRESET.value, overrides=list(_OVERRIDES.value), opponents=list(config.run.eval_opponents),
        players=evaluator.players, games_per_opponent=evaluator.num_games, backend=jax.default_backend(),
        compile_s=round(sum(c["compile_s"] for c in first_two), 2),
        compile_cpu_s=round(sum(c["compile_cpu_s"] for c in first_two), 2),
        trace_lower_compile_s=round(sum(c["trace_s"] + c["lower_s"] + c["compile_s"] for c in first_two), 2),
        large_programs=sum(len(c["large_programs"]) for c in first_two),
        calls=calls)))


if __name__ == "__main__":
    app.run(main)
