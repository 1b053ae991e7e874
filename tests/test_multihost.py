"""Multi-host runs with real processes on loopback: 2 processes x 1 CPU device (gloo).

The reference is the same run in 1 process with 2 (forced) CPU devices. Both run the
same partitioned programs on a 2-device mesh (the same games on the same mesh position,
keys split the same way by the partitionable threefry), so they may differ only in how
cross-device reductions add their terms: XLA's in-process all-reduce against gloo's.
With two devices every such reduction adds exactly two partial results, and adding two
floats gives the same bits in either order, so the tolerance is zero: every metric,
training and evaluation, must be equal (with more devices per reduction the order of
additions could change the last bits and a relative tolerance would be needed). A
2-process run resumed from its own checkpoint runs the same programs from the same
state, so it must match the uninterrupted 2-process run exactly too.

Everything goes through the training entry point (``experiments/train.py``), as a user
would start it; each process is a fresh Python with its own XLA backend.
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

REPO = pathlib.Path(__file__).resolve().parents[1]
TRAIN = str(REPO / "experiments" / "train.py")
TIMEOUT = 600

# A tiny connect-four team with diversity in search, evaluated every other iteration (so the
# evaluator's previous network is checkpointed and restored) and checkpointed every iteration.
OVERRIDES = [
    "env.name=connect_four", "team.num_players=2", "team.lam=0.5", "team.matchmaker=uniform",
    "network.channels=4", "network.num_blocks=1", "network.value_hidden=4",
    "search.num_simulations=4", "selfplay.num_games=4", "selfplay.num_plies=4", "selfplay.sample_plies=2",
    "replay.capacity=64", "run.batch_size=8", "run.learner_steps=1", "run.num_iterations=3",
    "run.eval_every=2", "run.eval_games=2", "run.eval_simulations=2", "run.checkpoint_every=1",
    "run.keep_checkpoints=5",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(devices: int) -> dict:
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags)
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def _wait(procs, what: str) -> None:
    outputs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise AssertionError(f"{what}: timed out after {TIMEOUT} s")
        outputs.append(out)
    for i, (proc, out) in enumerate(zip(procs, outputs)):
        assert proc.returncode == 0, f"{what}, process {i} failed:\n{out[-5000:]}"


def _launch(args, *, processes: int):
    """The training entry point, in 1 process with 2 devices or in 2 processes with 1 each."""
    if processes == 1:
        return [subprocess.Popen([sys.executable, TRAIN, *args], env=_env(2), cwd=REPO, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)]
    port = _free_port()
    return [subprocess.Popen([sys.executable, TRAIN, *args, f"--coordinator=127.0.0.1:{port}",
                              f"--num_processes={processes}", f"--process_id={i}"],
                             env=_env(1), cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for i in range(processes)]


def _train_args(workdir: pathlib.Path, *extra: str):
    overrides = [] if "--resume" in extra else [f"--override={o}" for o in OVERRIDES]
    return [f"--workdir={workdir}", "--preset=demo", *overrides, *extra]


def _records(workdir: pathlib.Path):
    from azdb_jax import runs  # pylint: disable=g-import-not-at-top

    return runs.read_metrics(workdir, wall_clock=False)


def _assert_same(reference, other) -> None:
    """The same records in the same order with the same values (floats bit for bit)."""
    assert [(r["kind"], r["iteration"], r.get("player"), r.get("opponent")) for r in reference] == \
        [(r["kind"], r["iteration"], r.get("player"), r.get("opponent")) for r in other]
    for a, b in zip(reference, other):
        assert a == b, {name: (value, b.get(name)) for name, value in a.items() if b.get(name) != value}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 1-process x 2-device run and a 2-process run (side by side), then a resumed copy.

    The copy is the 2-process run as a crash right after iteration 3 was logged would
    have left it: checkpoints up to iteration 2, and metrics.jsonl up to iteration 3
    (the record past the checkpoint must be dropped and recomputed on resume).
    """
    root = tmp_path_factory.mktemp("multihost")
    single, multi, resumed = root / "single", root / "multi", root / "resumed"
    _wait(_launch(_train_args(single), processes=1) + _launch(_train_args(multi), processes=2),
          "1-process and 2-process runs")
    shutil.copytree(multi, resumed, ignore=shutil.ignore_patterns("3", "*_0000003.*", "tb"))
    assert sorted(p.name for p in (resumed / "checkpoints").iterdir()) == ["1", "2"]
    _wait(_launch(_train_args(resumed, "--resume"), processes=2), "resumed 2-process run")
    return dict(single=single, multi=multi, resumed=resumed)


def test_two_processes_agree_with_one_process_with_two_devices(runs):
    single, multi = _records(runs["single"]), _records(runs["multi"])
    assert [r["iteration"] for r in single if r["kind"] == "train"] == [1, 2, 3]
    assert {r["opponent"] for r in single if r["kind"] == "eval"} == {"random", "minimax2", "previous"}
    _assert_same(single, multi)


def test_only_process_zero_writes_the_run_files(runs):
    multi = runs["multi"]
    assert len(_records(multi)) == len(_records(runs["single"]))  # not one copy per process
    assert len(list((multi / "tb").iterdir())) == 1  # one TensorBoard event file
    assert sorted(p.name for p in (multi / "psi").iterdir()) == [f"psi_{i:07d}.npz" for i in (1, 2, 3)]
    assert sorted(p.name for p in (multi / "graphs").glob("*.png")) == [f"graph_{i:07d}.png" for i in (1, 2, 3)]
    assert not [p for p in multi.rglob("*") if p.name.endswith(".tmp")]


def test_each_process_writes_its_part_of_the_checkpoint(runs):
    step = runs["multi"] / "checkpoints" / "3"
    for item in ("state", "replay"):
        for process in (0, 1):
            data = list((step / item / f"ocdbt.process_{process}" / "d").iterdir())
            assert data and all(p.stat().st_size > 0 for p in data), (item, process)
    meta = json.loads((step / "meta" / "metadata").read_text())
    # Game shards live on different processes: one checksum per shard, from both processes.
    games = [name for name in meta["shard_checksums"] if name.startswith("state/extra/games/")]
    assert games and all(len(meta["shard_checksums"][name]) == 2 for name in games)


def test_resumed_two_process_run_continues_it(runs):
    _assert_same(_records(runs["multi"]), _records(runs["resumed"]))
    assert (runs["resumed"] / "checkpoints" / "3").is_dir()


@pytest.fixture(scope="module")
def populations(tmp_path_factory):
    """A population of 2 members (seeds 3 and 4) as 1 process x 2 devices and as 2
    processes x 1 device (one member on each process), then the 2-process population
    resumed from a copy cut as ``runs`` cuts its run."""
    root = tmp_path_factory.mktemp("populations")
    single, multi, resumed = root / "single", root / "multi", root / "resumed"
    _wait(_launch(_train_args(single, "--seeds=3,4"), processes=1)
          + _launch(_train_args(multi, "--seeds=3,4"), processes=2), "1-process and 2-process populations")
    shutil.copytree(multi, resumed, ignore=shutil.ignore_patterns("3", "*_0000003.*", "tb"))
    _wait(_launch(_train_args(resumed, "--seeds=3,4", "--resume"), processes=2), "resumed 2-process population")
    return dict(single=single, multi=multi, resumed=resumed)


def test_a_population_over_two_processes_trains_as_over_two_devices(populations):
    """Each member (its own device in either layout) gives the same records bit for bit,
    the members differ from each other, and process 0 alone writes each member's files."""
    from azdb_jax import population  # pylint: disable=g-import-not-at-top

    single = [_records(folder) for folder in population.member_dirs(populations["single"])]
    multi = [_records(folder) for folder in population.member_dirs(populations["multi"])]
    assert len(single) == len(multi) == 2
    assert [r["iteration"] for r in single[0] if r["kind"] == "train"] == [1, 2, 3]
    assert {r["opponent"] for r in single[0] if r["kind"] == "eval"} == {"random", "minimax2", "previous"}
    for one, other in zip(single, multi):
        _assert_same(one, other)
    assert single[0] != single[1]  # two seeds, two runs
    for folder in population.member_dirs(populations["multi"]):
        assert len(list((folder / "tb").iterdir())) == 1
        assert sorted(p.name for p in (folder / "psi").iterdir()) == [f"psi_{i:07d}.npz" for i in (1, 2, 3)]
        assert json.loads((folder / "config.json").read_text())["run"]["seed"] == int(folder.name.split("_")[1])
    assert not [p for p in populations["multi"].rglob("*") if p.name.endswith(".tmp")]


def test_a_resumed_two_process_population_continues_it(populations):
    from azdb_jax import population  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top
    import numpy as np  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top

    for multi, resumed in zip(population.member_dirs(populations["multi"]),
                              population.member_dirs(populations["resumed"])):
        _assert_same(_records(multi), _records(resumed))
        assert (resumed / "checkpoints" / "3").is_dir()
        # Each member's checkpoint, written by two processes, loads as a run in one, and
        # the resumed member ends with the uninterrupted member's network.
        ends = [loading.load_team(folder) for folder in (multi, resumed)]
        assert ends[0].num_players == 2
        for a, b in zip(jax.tree.leaves(ends[0].params), jax.tree.leaves(ends[1].params)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# Direct: a state with rows sharded over the two processes, a replicated array and host-local
# leaves; argv: process id, port, directory, "save" (save then restore) or "restore".
CHECKPOINT_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from azdb_jax import distributed
    process, port, directory, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    distributed.initialize("127.0.0.1:" + port, 2, process)
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from azdb_jax import checkpoint, sharding
    # Meshes: a run's spans every process's devices; a local one only this process's.
    assert sharding.make_mesh().devices.tolist() == jax.devices()
    assert sharding.make_mesh(1, local=True).devices.tolist() == jax.local_devices()
    try:
        sharding.make_mesh(1)
        raise AssertionError("a 1-device mesh of a 2-process run was accepted")
    except ValueError as e:
        assert "every device of every process" in str(e)
    mesh = Mesh(np.asarray(jax.devices()), ("data",))
    rows, everywhere = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    local = (100 * process + np.arange(2 * process, 2 * process + 2)[:, None] + np.zeros((2, 3))).astype(np.float32)
    games = jax.make_array_from_process_local_data(rows, local, (4, 3))  # process p holds rows 2p, 2p + 1
    params = jax.jit(lambda: {{"w": jnp.arange(6.0).reshape(2, 3)}}, out_shardings=everywhere)()
    state = checkpoint.RunState(params=params, opt_state={{}}, step=np.int32(5), rng_key=jax.random.PRNGKey(1),
                                extra={{"games": games, "flag": jnp.asarray(True)}})
    if mode == "save":
        with checkpoint.RunCheckpointer(directory) as ckpt:
            ckpt.save(5, state)
    target = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=getattr(x, "sharding", None)),
                          state)
    try:
        with checkpoint.RunCheckpointer(directory, create=False) as ckpt:
            restored = ckpt.restore(5, target=target)
    except checkpoint.CheckpointError as e:
        print("CheckpointError:", e)
        sys.exit(3)
    shard, = restored.extra["games"].addressable_shards
    assert restored.extra["games"].sharding == rows and shard.index[0] == slice(2 * process, 2 * process + 2)
    np.testing.assert_array_equal(np.asarray(shard.data), local)
    np.testing.assert_array_equal(np.asarray(restored.params["w"].addressable_data(0)), np.arange(6.0).reshape(2, 3))
    assert bool(restored.extra["flag"]) and int(restored.step) == 5
    print("restored its rows", process)
""")


def _run_checkpoint_script(directory, mode: str):
    script = CHECKPOINT_SCRIPT.format(repo=str(REPO))
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i), str(port), str(directory), mode], env=_env(1),
                              cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for i in range(2)]
    outputs = [proc.communicate(timeout=TIMEOUT)[0] for proc in procs]
    return [proc.returncode for proc in procs], outputs


def test_each_process_restores_its_rows_and_checks_them(tmp_path):
    codes, outputs = _run_checkpoint_script(tmp_path, "save")
    assert codes == [0, 0], "\n".join(o[-3000:] for o in outputs)
    for process in (0, 1):
        assert any((tmp_path / "5" / "state" / f"ocdbt.process_{process}" / "d").iterdir())
    # Process 1's rows no longer match their checksum: process 1 says so, process 0 restores.
    meta_path = tmp_path / "5" / "meta" / "metadata"
    meta = json.loads(meta_path.read_text())
    table = meta["shard_checksums"]["state/extra/games"]
    assert sorted(table) == ["0:2,0:3", "2:4,0:3"]
    table["2:4,0:3"] = table["0:2,0:3"]
    meta_path.write_text(json.dumps(meta))
    codes, outputs = _run_checkpoint_script(tmp_path, "restore")
    assert codes == [0, 3], "\n".join(o[-3000:] for o in outputs)
    assert "state/extra/games does not match its checksum (process 1)" in outputs[1]
