"""What a training configuration's programs cost to compile and to run, under XLA's default
options and under others, as JSON.

  python benchmarks/program_compiles.py                                  # the ci scale's azdb arm
  python benchmarks/program_compiles.py --recipe=gardner_chess           # a learning-check recipe
  python benchmarks/program_compiles.py --options=xla_backend_optimization_level=1

The configuration is a reproduction scale's arm (``--scale``, ``--arm``) or, with
``--recipe``, a learning check's recipe. Each of its programs (``runner.programs``: ``init``,
a run's first state; ``selfplay``, one self-play window; ``learner``, one learner step) is
lowered once and compiled twice with the persistent compilation cache off: with XLA's
defaults and with ``--options`` (``name=value`` pairs of XLA's compile options). Each build
then runs ``--repeats`` times from the same state. Reported per program and build: compile
CPU seconds (every thread of the process; the compile spreads over threads) and wall
seconds, run CPU seconds per call, and whether the two builds' first outputs are equal bit
for bit. The default ``--options`` are ``networks.RUN_ONCE_COMPILER_OPTIONS``, the options a
run's first state and a network's fresh parameters are compiled with.
"""

import functools
import json
import time

from absl import app
from absl import flags
import jax
import numpy as np

from azdb_jax import networks, runner, trainer
from azdb_jax.evaluation import learning_check
from azdb_jax.reproduction import scales

_SCALE = flags.DEFINE_string("scale", "ci", "Reproduction scale whose arm is measured.")
_ARM = flags.DEFINE_string("arm", "azdb", "The scale's arm.")
_RECIPE = flags.DEFINE_enum("recipe", None, list(learning_check.RECIPES),
                            "A learning check's recipe instead of a scale's arm.")
_OPTIONS = flags.DEFINE_list(
    "options", [f"{k}={v}" for k, v in networks.RUN_ONCE_COMPILER_OPTIONS.items()],
    "XLA compile options of the second build, name=value (empty: the defaults again).")
_PROGRAMS = flags.DEFINE_multi_enum("programs", ["init", "selfplay", "learner"], ["init", "selfplay", "learner"],
                                    "Programs to measure.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed calls of each build.", lower_bound=1)


def _parse_options(items):
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise app.UsageError(f"--options: expected name=value, got {item!r}")
        lowered = value.lower()
        options[name] = (lowered == "true") if lowered in ("true", "false") else (
            int(value) if value.lstrip("-").isdigit() else value)
    return options


def _copy(tree):
    return jax.tree.map(lambda x: x.copy() if isinstance(x, jax.Array) else x, tree)


def measure(program, argument, options, repeats: int):
    """Compile and run costs of ``program`` (a jitted function of one argument) built with
    XLA's defaults and with ``options``; the first outputs compared bit for bit."""
    lowered = program.lower(argument)
    builds, outputs = {}, {}
    for name, opts in (("default", None), ("options", options)):
        cpu, wall = time.process_time(), time.perf_counter()
        compiled = lowered.compile(compiler_options=opts) if opts else lowered.compile()
        row = dict(compile_cpu_s=time.process_time() - cpu, compile_wall_s=time.perf_counter() - wall)
        outputs[name] = jax.device_get(compiled(_copy(argument)))
        cpu = time.process_time()
        for _ in range(repeats):
            jax.block_until_ready(compiled(_copy(argument)))
        row["run_cpu_s"] = (time.process_time() - cpu) / repeats
        builds[name] = {k: round(v, 4) for k, v in row.items()}
    equal = all(np.array_equal(np.asarray(a), np.asarray(b))
                for a, b in zip(jax.tree.leaves(outputs["default"]), jax.tree.leaves(outputs["options"])))
    builds["bitwise_equal"] = bool(equal)
    builds["compile_cpu_ratio"] = round(builds["options"]["compile_cpu_s"] / builds["default"]["compile_cpu_s"], 3)
    builds["run_cpu_ratio"] = round(builds["options"]["run_cpu_s"] / max(builds["default"]["run_cpu_s"], 1e-9), 3)
    return builds


def main(argv):
    del argv
    jax.config.update("jax_enable_compilation_cache", False)
    options = _parse_options(_OPTIONS.value)
    if _RECIPE.value:
        config, label = learning_check.make_config(_RECIPE.value), f"recipe:{_RECIPE.value}"
    else:
        config, label = scales.arm_config(scales.get_scale(_SCALE.value), _ARM.value, 0), f"{_SCALE.value}:{_ARM.value}"
    kept = runner.programs(config)
    key = jax.random.PRNGKey(0)
    state = kept.init(key)
    report = dict(config=label, options=options, repeats=_REPEATS.value, programs={})
    for name in _PROGRAMS.value:
        if name == "init":  # the run's init program as built before its options: XLA's defaults
            plain = jax.jit(functools.partial(trainer.init_trainer, kept.components, window=kept.abstract.pending),
                            out_shardings=kept.shardings)
            report["programs"]["init"] = measure(plain, key, options, _REPEATS.value)
        else:
            program = kept.selfplay if name == "selfplay" else kept.learner
            report["programs"][name] = measure(program, state, options, _REPEATS.value)
            state = program(_copy(state))[0]
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    app.run(main)
