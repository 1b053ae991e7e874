"""Data parallelism is exact where it can be: a run's phases on 4 devices against 1 device.

Each phase runs as a ``shard_map`` over the devices (``sharding.data_parallel``): every device
plays its own game slots, writes its own replay streams and samples its own groups of the
learner's batch (``azdb_jax.trainer``). Nothing of that depends on the number of devices, so
on 4 forced CPU devices:

- ``init`` gives the one-device state;
- a self-play window plays the same games (every integer and boolean of the games, the
  window and the replay rows equal; floats within float32 rounding: the network's
  convolutions run on a quarter of the batch) and ψ, payoffs and metrics, summed over the
  devices, equal the one-device sums within float rounding;
- a learner step samples the same batch and makes the same update: on a fixed batch, the
  data-parallel SGD step moves the parameters by the one-device gradient, which is checked
  against ``jax.grad`` of the loss on the whole batch;
- two iterations in a row stay equal within float rounding;
- each device does a quarter of the work: the compiled self-play and learner programs'
  per-device flops (`benchmarks/scaling.py`) are within 1.15 / 4 of one device's, self-play
  holds no collective inside a loop (the ply scan, the search) and the learner reduces its
  gradient once per step.

One subprocess (XLA reads the device count when it starts) runs everything and reports what
it measured as JSON; the tests read it.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {repo!r})
    sys.path.insert(0, {tests!r})
    sys.path.insert(0, {benchmarks!r})
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import PartitionSpec as P
    assert jax.device_count() == 4, jax.devices()
    from azdb_jax import config as config_lib, learner, replay, runner, sharding
    from azdb_jax.presets import get_preset
    from test_trainer import TINY
    import scaling

    config = config_lib.apply_overrides(get_preset("demo"), TINY + [
        "team.lam=0.5", "team.matchmaker=psro_nash", "run.eval_every=0", "learner.optimizer=sgd",
        "learner.momentum=0.0", "learner.weight_decay=0.0", "learner.learning_rate=0.1"])
    one, four = (runner.programs(config, num_devices=n) for n in (1, 4))

    def compare(a, b):
        # (integer/bool leaves that differ, the largest float difference relative to max(1, |value|))
        differing, worst = [], 0.0
        for (path, x), y in zip(jax.tree_util.tree_leaves_with_path(a), jax.tree.leaves(b)):
            x, y = np.asarray(x), np.asarray(y)
            if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
                x, y = np.asarray(jax.random.key_data(x)), np.asarray(jax.random.key_data(y))
            if np.issubdtype(x.dtype, np.floating):
                if x.size:
                    worst = max(worst, float(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(x)))))
            elif not np.array_equal(x, y):
                differing.append(jax.tree_util.keystr(path))
        return dict(differing=differing, worst=worst)

    def parts(state):
        return dict(games=state.games, pending=state.pending, replay=state.replay, payoff=state.payoff,
                    psi=state.expected_features, params=state.train_state.params, rng=state.rng_key,
                    iteration=state.iteration)

    out = dict(sharded_rows=[str(s.spec) for s in (four.shardings.replay.data.observation,
                                                   four.shardings.replay.size, four.shardings.games.ply)])
    a, b = (p.init(jax.random.PRNGKey(3)) for p in (one, four))
    out["init"] = {{k: compare(v, parts(b)[k]) for k, v in jax.device_get(parts(a)).items()}}
    for iteration in (1, 2):
        a, ma = one.selfplay(a)
        b, mb = four.selfplay(b)
        out[f"selfplay_{{iteration}}"] = {{k: compare(v, parts(b)[k]) for k, v in jax.device_get(parts(a)).items()}}
        out[f"selfplay_{{iteration}}_metrics"] = compare(jax.device_get(ma), jax.device_get(mb))
        out[f"games_finished_{{iteration}}"] = float(ma["games_finished"])
        for step in range(config.run.learner_steps):
            a, ma = one.learner(a)
            b, mb = four.learner(b)
        out[f"learner_{{iteration}}"] = {{k: compare(v, parts(b)[k]) for k, v in jax.device_get(parts(a)).items()}}
        out[f"learner_{{iteration}}_metrics"] = compare(jax.device_get(ma), jax.device_get(mb))
        out[f"learner_ready_{{iteration}}"] = float(ma["learner_ready"])

    # A fixed batch: the one-device SGD step, the 4-device step and jax.grad of the batch's loss.
    c = one.components
    state = jax.device_get(a)
    batch = replay.sample(state.replay, jax.random.PRNGKey(8), 32, config=c.replay_config)
    batch = batch._replace(weight=jnp.where(jnp.arange(32) % 5 == 0, 0.0, batch.weight))  # some rows weigh nothing
    key = jax.random.PRNGKey(9)
    step = lambda ts, bt, axis_name=None: learner.learner_step(c.network, c.optimizer, ts, bt, key,  # noqa: E731
                                                               config=c.learner_config, axis_name=axis_name)
    single, single_metrics = jax.jit(step)(state.train_state, batch)
    mesh = sharding.make_mesh(4)
    parallel_step = jax.jit(jax.shard_map(lambda ts, bt: step(ts, bt, sharding.DATA_AXIS), mesh=mesh,
                                          in_specs=(P(), P(sharding.DATA_AXIS)), out_specs=(P(), P()),
                                          check_vma=False))
    parallel, parallel_metrics = parallel_step(state.train_state, batch)
    grads = jax.grad(lambda p: learner.loss_fn(p, learner.to_batch(batch), apply_fn=c.network.apply,
                                               config=c.learner_config)[0])(state.train_state.params)
    moved = jax.tree.map(lambda new, old: (old - new) / 0.1, parallel.params, state.train_state.params)
    out["fixed_batch"] = dict(params=compare(single.params, parallel.params),
                              metrics=compare(single_metrics, parallel_metrics),
                              gradient=compare(grads, moved),
                              grad_norm=float(single_metrics["grad_norm"]))

    # What each device computes: the compiled programs' flops and collectives on 1 and 4 devices
    # (benchmarks/scaling.py), and a program with a psum inside a loop, which the count must see.
    out["scaling"] = {{n: scaling.measure(config, n, ["selfplay", "learner"])["programs"] for n in (1, 4)}}
    looped = jax.jit(jax.shard_map(lambda x: jax.lax.fori_loop(0, 3, lambda i, y: jax.lax.psum(y, "data") * 0.5, x),
                                   mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False))
    out["planted"] = scaling.program_stats(looped.lower(jnp.ones(8)).compile())
    print("RESULT " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    script = SCRIPT.format(repo=str(REPO), tests=str(REPO / "tests"), benchmarks=str(REPO / "benchmarks"))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900,
                            cwd=tmp_path_factory.mktemp("data_parallel"))
    assert result.returncode == 0, result.stderr[-4000:]
    line = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


FLOAT = 2e-5  # float32 sums in another order (a quarter of the batch per device, then psum)


def _same(report, *, tolerance=FLOAT):
    assert report["differing"] == [], report
    assert report["worst"] <= tolerance, report


def test_the_state_is_split_by_game_slot(measured):
    assert measured["sharded_rows"] == ["P('data',)"] * 3  # replay rows, replay stream sizes, games


def test_init_on_four_devices_is_the_one_device_state(measured):
    for report in measured["init"].values():
        _same(report, tolerance=0.0)


@pytest.mark.parametrize("iteration", [1, 2])
def test_self_play_on_four_devices_plays_the_one_device_games(measured, iteration):
    window = measured[f"selfplay_{iteration}"]
    for name in ("games", "pending", "replay", "payoff", "psi", "rng", "iteration"):
        _same(window[name])
    _same(measured[f"selfplay_{iteration}_metrics"])
    assert measured[f"games_finished_{iteration}"] > 0  # games ended, so payoffs and targets were exercised


@pytest.mark.parametrize("iteration", [1, 2])
def test_learner_steps_on_four_devices_make_the_one_device_updates(measured, iteration):
    # The first window stores too few examples for a batch; from the second the steps update.
    assert measured[f"learner_ready_{iteration}"] == float(iteration == 2)
    after = measured[f"learner_{iteration}"]
    _same(after["params"])
    _same(measured[f"learner_{iteration}_metrics"])


def test_a_fixed_batch_moves_the_parameters_by_the_whole_batchs_gradient(measured):
    fixed = measured["fixed_batch"]
    assert fixed["grad_norm"] > 1e-3
    _same(fixed["params"])
    _same(fixed["metrics"])
    _same(fixed["gradient"], tolerance=1e-4)  # against jax.grad (the SGD step divided by its learning rate)


@pytest.mark.parametrize("program", ["selfplay", "learner"])
def test_each_device_does_a_quarter_of_the_work(measured, program):
    # per-device flops on 4 devices within 1.15 / 4 of one device's: nothing computes the whole batch
    one, four = (measured["scaling"][n][program]["flops"] for n in ("1", "4"))
    assert one > 0 and four <= 1.15 * one / 4, (program, four / one)


def test_self_play_talks_to_no_device_inside_its_loops(measured):
    selfplay = measured["scaling"]["4"]["selfplay"]
    assert selfplay["collectives_in_loops"] == {}, selfplay["collective_ops"]
    assert selfplay["collectives"] == {"all-reduce": 2}, selfplay["collective_ops"]  # the window's float, int sums
    # the count sees a collective inside a loop when there is one
    assert measured["planted"]["collectives_in_loops"] == {"all-reduce": 1}, measured["planted"]


def test_the_learner_reduces_its_gradient_once_per_step(measured):
    learner = measured["scaling"]["4"]["learner"]
    ops = learner["collective_ops"]
    assert learner["collectives_in_loops"] == {} and {op["op"] for op in ops} == {"all-reduce"}, ops
    # one all-reduce of arrays (the gradient, with the metrics); the others are scalars (how many
    # rows are stored, the batch's weight total), which XLA may fuse into one
    arrays = [op for op in ops if re.search(r"\[\d", op["shape"])]
    assert len(arrays) == 1 and len(ops) <= 3, ops
