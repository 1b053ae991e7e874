"""What each device of a run does on N devices: flops, collectives and memory of every program.

  python benchmarks/scaling.py                                   # demo on 1, 2, 4, 8 forced CPU devices
  python benchmarks/scaling.py --preset=gardner_cpu --devices=1,2,4,8
  python benchmarks/scaling.py --preset=azdb_full --devices=8,64 --programs=selfplay,learner  # memory at pod sizes
  python benchmarks/scaling.py --real                            # on this machine's own devices (a GPU, a TPU host)

For each device count N a fresh process (XLA reads ``--xla_force_host_platform_device_count``
when it starts) builds the run's programs (``runner.programs(config, num_devices=N)``),
lowers them on the run's abstract state (nothing is allocated: chess at batch 4096 and a
1M-position buffer compiles on a laptop) and compiles them. Reported per program:

- ``flops``: XLA's ``cost_analysis()`` of the compiled program, which for a program
  partitioned over N devices is one device's share; ``flops_ratio`` divides it by the
  same program's on the smallest N measured, times that N (ideal data parallelism: 1/N
  of one device's work, ``ideal``);
- ``collectives``: the cross-device operations in the optimised HLO (all-reduce,
  all-gather, all-to-all, reduce-scatter, collective-permute, ...), how many, and how
  many sit inside a loop body (``while``: the self-play scan over plies, the search's
  simulations), each with its shape;
- ``memory``: ``memory_analysis()``: one device's argument, output, temporary and
  aliased bytes, and ``peak`` = argument + output + temporary - aliased.

The programs are ``init`` (a run's first state), ``selfplay`` (one self-play window),
``learner`` (one learner step) and ``evaluator`` (one player's evaluation games, when the
run evaluates; every device plays all its games whatever N is). ``--repeats`` also times
self-play and the learner on the devices (meaningful on real devices; forced CPU devices
share the host's cores). ``--real`` measures the
devices the machine has (no forcing; ``--devices`` then lists counts up to theirs).
The JSON goes to stdout (and ``--out``); ``--markdown`` adds the table docs/performance.md
shows.
"""

import collections
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List

from absl import app
from absl import flags

from azdb_jax.cli import common_flags

_PRESET = flags.DEFINE_string("preset", "demo", "The run's preset (azdb_jax.presets).")
_OVERRIDES = flags.DEFINE_multi_string("override", [], "Config overrides, section.field=value.")
_DEVICES = flags.DEFINE_list("devices", ["1", "2", "4", "8"], "Device counts to measure.")
_PROGRAMS = flags.DEFINE_list("programs", ["init", "selfplay", "learner", "evaluator"],
                              "Programs to measure (init, selfplay, learner, evaluator).")
_REAL = flags.DEFINE_boolean("real", False, "Measure this machine's own devices instead of forced CPU devices.")
_MARKDOWN = flags.DEFINE_boolean("markdown", False, "Print docs/performance.md's table after the JSON.")
_OUT = common_flags.define_out("Also write the JSON here (default: print it only).")
_REPEATS = flags.DEFINE_integer("repeats", 0, "Also run self-play and the learner (its run.learner_steps steps) this "
                                "many times after a first call from a fresh state and report the median wall "
                                "seconds (0: compile only).", lower_bound=0)
_WORKER = flags.DEFINE_integer("worker", None, "(internal) measure on this many devices, print one JSON line.")

COLLECTIVES = ("all-reduce", "all-gather", "all-to-all", "reduce-scatter", "collective-permute",
               "collective-broadcast", "ragged-all-to-all")
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_OPCODE = re.compile(r"=\s*(\([^=]*?\)|[\w\[\]{},:\s.]+?)\s+([a-z][a-z0-9\-]*)\(")
_COMMENT = re.compile(r"/\*.*?\*/")
_CALLED = re.compile(r"(body|condition|to_apply|calls|true_computation|false_computation)=%?([\w.\-]+)")
_CALLED_LISTS = re.compile(r"(?:branch_computations|called_computations)=\{([^}]*)\}")


def hlo_collectives(hlo_text: str) -> Dict[str, Any]:
    """The cross-device operations of an optimised HLO module's text.

    Returns ``{"total": {op: count}, "in_loops": {op: count}, "ops": [(op, shape, in_loop)]}``,
    where ``in_loop`` means the operation's computation runs inside a ``while`` (its body or
    condition, or a computation either calls, at any depth). An asynchronous pair
    (``all-reduce-start``/``-done``) counts once, as its start.
    """
    computations: Dict[str, List[str]] = {}
    current = None
    for line in hlo_text.splitlines():
        header = _HEADER.match(line.strip()) if not line.startswith(" ") else None
        if header:
            current = header.group(1)
            computations[current] = []
        elif current is not None and line.strip() and line.strip() != "}":
            computations[current].append(_COMMENT.sub("", line.strip()))  # /*index=5*/ in long tuples
    calls = collections.defaultdict(set)
    loop_roots = set()
    for name, lines in computations.items():
        for line in lines:
            for kind, callee in _CALLED.findall(line):
                calls[name].add(callee)
                if kind in ("body", "condition") and " while(" in line:
                    loop_roots.add(callee)
            for group in _CALLED_LISTS.findall(line):
                for callee in group.split(","):
                    calls[name].add(callee.strip().lstrip("%"))
    in_loop, stack = set(), list(loop_roots)
    while stack:
        name = stack.pop()
        if name not in in_loop:
            in_loop.add(name)
            stack.extend(calls.get(name, ()))
    total, loops, ops = collections.Counter(), collections.Counter(), []
    for name, lines in computations.items():
        for line in lines:
            match = _OPCODE.search(line)
            if not match:
                continue
            opcode = match.group(2)
            base = opcode[:-len("-start")] if opcode.endswith("-start") else opcode
            if base not in COLLECTIVES or opcode.endswith("-done"):
                continue
            total[base] += 1
            loops[base] += name in in_loop
            ops.append((base, match.group(1).strip(), name in in_loop))
    return dict(total=dict(total), in_loops={k: v for k, v in loops.items() if v}, ops=ops)


def program_stats(compiled: Any) -> Dict[str, Any]:
    """One device's flops, memory and the collectives of a compiled program (``jax.stages.Compiled``)."""
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    memory = compiled.memory_analysis()
    sizes = {name: int(getattr(memory, f"{name}_size_in_bytes", 0) or 0)
             for name in ("argument", "output", "temp", "alias", "generated_code")}
    sizes["peak"] = sizes["argument"] + sizes["output"] + sizes["temp"] - sizes["alias"]
    found = hlo_collectives(compiled.as_text())
    return dict(flops=float(cost.get("flops", 0.0)), bytes_accessed=float(cost.get("bytes accessed", 0.0)),
                memory=sizes, collectives=found["total"], collectives_in_loops=found["in_loops"],
                collective_ops=[dict(op=op, shape=shape, in_loop=loop) for op, shape, loop in found["ops"]])


def measure(config: Any, num_devices: int, programs: List[str], repeats: int = 0) -> Dict[str, Any]:
    """``program_stats`` of ``config``'s programs on its first ``num_devices`` devices, and with
    ``repeats`` the median wall seconds of a self-play window and of the run's learner steps."""
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    from azdb_jax import runner  # pylint: disable=g-import-not-at-top

    kept = runner.programs(config, num_devices=num_devices)
    state = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), kept.abstract,
                         kept.shardings)
    lowered = {}
    if "init" in programs:
        lowered["init"] = kept.init.lower(jax.ShapeDtypeStruct((2,), jnp.uint32))
    if "selfplay" in programs:
        lowered["selfplay"] = kept.selfplay.lower(state)
    if "learner" in programs:
        lowered["learner"] = kept.learner.lower(state)
    if "evaluator" in programs and kept.evaluator is not None:
        evaluator = kept.evaluator
        current = (kept.abstract.train_state.params, kept.abstract.expected_features.psi,
                   jax.ShapeDtypeStruct((), jnp.int32))
        params_b = tuple(current if name == "previous" else None for name in evaluator.opponents)
        keys = jax.ShapeDtypeStruct((len(evaluator.opponents), 2), jnp.uint32)
        lowered["evaluator"] = evaluator.games.play.lower(current, params_b, keys)
    out, compiled = {}, {}
    for name, low in lowered.items():
        compiled[name] = low.compile()
        out[name] = program_stats(compiled[name])
    result = dict(devices=num_devices, platform=jax.devices()[0].platform, programs=out)
    if repeats:
        run = lambda name: compiled.get(name, getattr(kept, name))  # noqa: E731  (compiled once only)
        result["seconds"] = _timed(run("init"), run("selfplay"), run("learner"), config.run.learner_steps, repeats)
    return result


def _timed(init: Any, selfplay: Any, learner: Any, learner_steps: int, repeats: int) -> Dict[str, float]:
    """Median wall seconds of a self-play window and of ``learner_steps`` learner steps, each
    window followed by its steps, after a first round."""
    import jax  # pylint: disable=g-import-not-at-top
    state = init(jax.random.PRNGKey(0))
    times = collections.defaultdict(list)
    for _ in range(repeats + 1):
        start = time.perf_counter()
        state, _ = selfplay(state)
        jax.block_until_ready(state)
        times["selfplay"].append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(learner_steps):
            state, _ = learner(state)
        jax.block_until_ready(state)
        times["learner_steps"].append(time.perf_counter() - start)
    return {name: statistics.median(values[1:]) for name, values in times.items()}


def _config():
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax.presets import get_preset  # pylint: disable=g-import-not-at-top
    return config_lib.apply_overrides(get_preset(_PRESET.value), list(_OVERRIDES.value))


def _worker(num_devices: int) -> None:
    result = measure(_config(), num_devices, list(_PROGRAMS.value), _REPEATS.value)
    print("SCALING " + json.dumps(result))


def _run_worker(argv: List[str], num_devices: int) -> Dict[str, Any]:
    env = dict(os.environ)
    if not _REAL.value:
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={num_devices}".strip()
        env["JAX_PLATFORMS"] = "cpu"
    del argv  # absl leaves only what is not a flag there: the worker gets this process's flags anew
    command = [sys.executable, os.path.abspath(__file__), f"--preset={_PRESET.value}",
               *(f"--override={o}" for o in _OVERRIDES.value), f"--programs={','.join(_PROGRAMS.value)}",
               f"--repeats={_REPEATS.value}", f"--worker={num_devices}"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"scaling.py on {num_devices} devices failed:\n{result.stderr[-4000:]}")
    line = [line for line in result.stdout.splitlines() if line.startswith("SCALING ")][-1]
    return json.loads(line[len("SCALING "):])


def ratios(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per program and device count: flops per device ÷ (the smallest count's flops × its count)."""
    base = runs[0]
    table = {}
    for name, stats in base["programs"].items():
        rows = []
        for run in runs:
            got = run["programs"][name]
            work = stats["flops"] * base["devices"]
            rows.append(dict(devices=run["devices"], flops=got["flops"],
                             flops_ratio=got["flops"] / work if work else None, ideal=1.0 / run["devices"],
                             collectives=got["collectives"], collectives_in_loops=got["collectives_in_loops"],
                             peak_bytes=got["memory"]["peak"]))
        table[name] = rows
    return table


def markdown(preset: str, table: Dict[str, Any]) -> str:
    lines = ["| preset | program | devices | per-device flops ÷ 1 device's | ideal | collectives (in loops) "
             "| per-device peak MiB |", "|---|---|---|---|---|---|---|"]
    for name, rows in table.items():
        for row in rows:
            coll = ", ".join(f"{n} {op}" + (f" ({row['collectives_in_loops'][op]})"
                                             if row["collectives_in_loops"].get(op) else "")
                             for op, n in sorted(row["collectives"].items())) or "none"
            ratio = "—" if row["flops_ratio"] is None else f"{row['flops_ratio']:.3f}"
            lines.append(f"| `{preset}` | {name} | {row['devices']} | {ratio} | {row['ideal']:.3f} | {coll} "
                         f"| {row['peak_bytes'] / 2**20:,.1f} |")
    return "\n".join(lines)


def main(argv):
    if _WORKER.value is not None:
        return _worker(_WORKER.value)
    counts = sorted({int(n) for n in _DEVICES.value})
    if _REAL.value:  # the devices are this process's own: no forcing, so no fresh process per count
        import jax  # pylint: disable=g-import-not-at-top
        counts = [n for n in counts if n <= jax.device_count()] or [jax.device_count()]
        runs = [measure(_config(), n, list(_PROGRAMS.value), _REPEATS.value) for n in counts]
    else:
        runs = [_run_worker(argv, n) for n in counts]
    report = dict(preset=_PRESET.value, overrides=list(_OVERRIDES.value), platform=runs[0]["platform"],
                  forced_cpu_devices=not _REAL.value, runs=runs, table=ratios(runs))
    text = json.dumps(report, indent=1)
    if _OUT.value:
        with open(_OUT.value, "w") as f:
            f.write(text + "\n")
    print(text)
    if _MARKDOWN.value:
        print(markdown(_PRESET.value, report["table"]))


if __name__ == "__main__":
    app.run(main)
