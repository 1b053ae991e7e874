"""Tests for azdb_jax/checkpoint.py: exact round trips, keep-last-k, atomicity, clear errors,
saves written in the background."""

import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
import pytest

from azdb_jax import checkpoint
from azdb_jax import replay


@dataclasses.dataclass(frozen=True)
class _Config:
    num_players: int = 3
    channels: int = 8
    boundaries: tuple = (10, 20)


def _params(channels: int = 8) -> dict:
    rng = np.random.default_rng(0)
    return {
        "stem": {"kernel": jnp.asarray(rng.standard_normal((3, 3, 4, channels)), jnp.float32)},
        "head": {"bias": jnp.asarray(rng.standard_normal(5), jnp.bfloat16)},
    }


def _run_state(step: int = 7, with_replay: bool = True, channels: int = 8) -> checkpoint.RunState:
    params = _params(channels)
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)
    grads = jax.tree_util.tree_map(jnp.ones_like, params)
    for _ in range(2):  # a non-trivial optimiser state
        updates, opt_state = optimizer.update(grads, opt_state, params)
    buffer = None
    if with_replay:
        example = {"observation": jnp.zeros((2, 2), bool), "z": jnp.zeros(())}
        buffer = replay.init(replay.ReplayConfig(capacity=4), example)
        batch = {"observation": jnp.array([[[True, False], [False, True]]] * 3), "z": jnp.array([1.0, -1.0, 0.5])}
        buffer = replay.add(buffer, batch, jnp.array([True, False, True]))
    return checkpoint.RunState(
        params=params,
        opt_state=opt_state,
        step=jnp.int32(step),
        rng_key=jax.random.key(step),
        replay=buffer,
        extra={"expected_features": jnp.arange(6.0).reshape(3, 2), "raw_key": jax.random.PRNGKey(1)},
    )


def _assert_identical(a, b):
    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    assert tree_a == tree_b
    for x, y in zip(leaves_a, leaves_b):
        assert x.dtype == y.dtype and x.shape == y.shape
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_round_trip_is_bit_exact(tmp_path):
    state = _run_state()
    with checkpoint.RunCheckpointer(tmp_path / "run") as ckpt:
        ckpt.save(7, state, config=_Config())
        restored = ckpt.restore(target=state, config=_Config())
        assert ckpt.read_config() == {"num_players": 3, "channels": 8, "boundaries": [10, 20]}
    _assert_identical(restored, state)
    # The restored PRNG key continues the same random stream.
    np.testing.assert_array_equal(jax.random.uniform(restored.rng_key, (3,)), jax.random.uniform(state.rng_key, (3,)))


def test_restore_into_an_abstract_target(tmp_path):
    state = _run_state()
    abstract = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), state)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(1, state)
        restored = ckpt.restore(1, target=abstract)
    _assert_identical(restored, state)


def test_replay_is_optional(tmp_path):
    state = _run_state()
    with checkpoint.RunCheckpointer(tmp_path / "a") as ckpt:
        ckpt.save(1, state)
        restored = ckpt.restore(target=state._replace(replay=None))
    assert restored.replay is None
    _assert_identical(restored.params, state.params)
    config = checkpoint.CheckpointConfig(save_replay=False)
    with checkpoint.RunCheckpointer(tmp_path / "b", config) as ckpt:
        ckpt.save(1, state)
        with pytest.raises(checkpoint.CheckpointError, match="holds no replay buffer"):
            ckpt.restore(target=state)


def test_keeps_the_last_k_checkpoints(tmp_path):
    state = _run_state(with_replay=False)
    with checkpoint.RunCheckpointer(tmp_path, checkpoint.CheckpointConfig(max_to_keep=2)) as ckpt:
        assert ckpt.latest_step() is None
        for step in (1, 2, 3, 4, 5):
            ckpt.save(step, state._replace(step=jnp.int32(step)))
        assert ckpt.all_steps() == [4, 5] and ckpt.latest_step() == 5
        assert int(ckpt.restore(target=state).step) == 5
        with pytest.raises(checkpoint.CheckpointError, match=r"no checkpoint for step 2 in .*\(steps: \[4, 5\]\)"):
            ckpt.restore(2, target=state)
        with pytest.raises(checkpoint.CheckpointError, match="already exists"):
            ckpt.save(5, state)
    assert sorted(os.listdir(tmp_path)) == ["4", "5"]  # no temporary directories left


def test_writes_are_atomic(tmp_path, monkeypatch):
    state = _run_state(with_replay=False)
    seen = []
    original = ocp.JsonCheckpointHandler._save_fn

    async def spy(self, x, directory):
        seen.append((str(directory), sorted(os.listdir(tmp_path))))
        return await original(self, x, directory)

    monkeypatch.setattr(ocp.JsonCheckpointHandler, "_save_fn", spy)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(3, state)
    (written, listing), = seen
    assert "tmp" in os.path.relpath(written, tmp_path) and "3" not in listing  # written aside, then renamed
    # A save that died half-way leaves only a temporary directory, which is ignored.
    os.makedirs(tmp_path / "9.orbax-checkpoint-tmp-1234" / "state")
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        assert ckpt.all_steps() == [3]
        assert int(ckpt.restore(target=state).step) == 7


def _hold_meta_writes(monkeypatch, gate: threading.Event, fail: bool = False) -> list:
    """Makes the meta item's write (part of every save) wait for ``gate`` (then fail with
    ``fail``); returns the list of writes that finished."""
    finished = []
    original = ocp.JsonCheckpointHandler._save_fn

    async def held(self, x, directory):
        assert gate.wait(120), "the test never released the write"
        if fail:
            raise OSError("No space left on device")
        result = await original(self, x, directory)
        finished.append(str(directory))
        return result

    monkeypatch.setattr(ocp.JsonCheckpointHandler, "_save_fn", held)
    return finished


def test_a_save_returns_before_its_write_and_keeps_the_state_it_was_given(tmp_path, monkeypatch):
    # The training loop donates the state to its next jitted step as soon as save returns:
    # the checkpoint must hold the values saved, not what the donated buffers hold later.
    state = _run_state()
    saved = jax.device_get(state)
    gate = threading.Event()
    finished = _hold_meta_writes(monkeypatch, gate)
    step = jax.jit(lambda s: jax.tree.map(lambda x: x if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else -x - 1, s),
                   donate_argnums=0)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(3, state, config=_Config())
        assert finished == [] and "3" not in os.listdir(tmp_path)  # save returned; the write waits
        for _ in range(3):
            state = step(state)
        jax.block_until_ready(state)
        gate.set()
        assert ckpt.latest_step() == 3 and len(finished) == 1  # listing waits for the pending write
        restored = ckpt.restore(target=state, config=_Config())
    _assert_identical(restored, saved)
    assert not np.array_equal(np.asarray(state.params["stem"]["kernel"]), saved.params["stem"]["kernel"])


def test_close_waits_for_the_pending_write(tmp_path, monkeypatch):
    gate = threading.Event()
    finished = _hold_meta_writes(monkeypatch, gate)
    ckpt = checkpoint.RunCheckpointer(tmp_path)
    ckpt.save(1, _run_state(with_replay=False))
    threading.Timer(0.5, gate.set).start()
    ckpt.close()
    assert len(finished) == 1 and os.listdir(tmp_path) == ["1"]


def test_a_synchronous_save_is_on_disk_when_it_returns(tmp_path):
    with checkpoint.RunCheckpointer(tmp_path, checkpoint.CheckpointConfig(async_save=False)) as ckpt:
        ckpt.save(1, _run_state(with_replay=False))
        assert os.listdir(tmp_path) == ["1"]


def test_a_failed_background_write_is_an_error_naming_the_step(tmp_path, monkeypatch):
    gate = threading.Event()
    _hold_meta_writes(monkeypatch, gate, fail=True)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(4, _run_state(with_replay=False))
        gate.set()
        with pytest.raises(checkpoint.CheckpointError,
                           match=f"checkpoint {tmp_path / '4'} could not be written: OSError: No space left"):
            ckpt.latest_step()
        assert ckpt.all_steps() == []  # the half-written step is not listed


# Saves step 1, then dies by SIGKILL while step 2 is being written in the background.
KILLED_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading
    sys.path.insert(0, {repo!r})
    import jax.numpy as jnp
    import orbax.checkpoint as ocp
    from azdb_jax import checkpoint
    state = checkpoint.RunState(params={{"w": jnp.arange(1000.0)}}, opt_state={{}}, step=jnp.int32(1),
                                rng_key=jnp.zeros(2, jnp.uint32))
    ckpt = checkpoint.RunCheckpointer(sys.argv[1])
    ckpt.save(1, state)
    ckpt.wait_until_finished()
    started = threading.Event()
    original = ocp.JsonCheckpointHandler._save_fn

    async def dying(self, x, directory):
        started.set()
        threading.Event().wait()  # never returns: the process is killed first

    ocp.JsonCheckpointHandler._save_fn = dying
    ckpt.save(2, state._replace(params={{"w": -jnp.arange(1000.0)}}, step=jnp.int32(2)))
    started.wait(60)
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.slow
def test_a_process_killed_during_a_background_write_resumes_from_the_checkpoint_before(tmp_path):
    repo = pathlib.Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", KILLED_SCRIPT.format(repo=str(repo)), str(tmp_path)],
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    assert "1" in os.listdir(tmp_path) and any("tmp" in name for name in os.listdir(tmp_path))
    target = checkpoint.RunState(params={"w": jnp.zeros(1000)}, opt_state={}, step=jnp.int32(0),
                                 rng_key=jnp.zeros(2, jnp.uint32))
    with checkpoint.RunCheckpointer(tmp_path, create=False) as ckpt:
        assert ckpt.all_steps() == [1]
        restored = ckpt.restore(target=target)
    np.testing.assert_array_equal(restored.params["w"], np.arange(1000.0))
    assert int(restored.step) == 1


def _garble(path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def _largest_data_file(directory):
    files = [p for p in directory.rglob("*") if p.is_file() and p.parent.name == "d"]  # OCDBT data files
    return max(files, key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("damage", ["delete_meta", "truncate_metadata", "garble_data", "swap_arrays"])
def test_corrupt_checkpoints_raise_clear_errors(tmp_path, damage):
    state = _run_state(with_replay=False)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(1, state)
        ckpt.save(2, state._replace(params=jax.tree_util.tree_map(lambda x: x + 1, state.params)))
    step_dir = tmp_path / "1"
    if damage == "delete_meta":
        (step_dir / "meta" / "metadata").unlink()
    elif damage == "truncate_metadata":
        path = step_dir / "state" / "_METADATA"
        path.write_bytes(path.read_bytes()[:40])
    elif damage == "garble_data":
        _garble(_largest_data_file(step_dir / "state"))
    else:  # well-formed arrays with the wrong values: only the checksums can tell
        shutil.rmtree(step_dir / "state")
        shutil.copytree(tmp_path / "2" / "state", step_dir / "state")
    with checkpoint.RunCheckpointer(tmp_path, create=False) as ckpt:
        with pytest.raises(checkpoint.CheckpointError, match=f"checkpoint {step_dir}") as info:
            ckpt.restore(1, target=state)
    assert any(word in str(info.value) for word in ("corrupt", "unreadable", "does not fit"))


def test_config_mismatch_is_reported_field_by_field(tmp_path):
    state = _run_state(with_replay=False)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(1, state, config=_Config())
        with pytest.raises(checkpoint.CheckpointError, match=r"num_players: checkpoint has 3, asked for 4"):
            ckpt.restore(target=state, config=_Config(num_players=4))


def test_target_with_other_shapes_is_rejected_before_reading(tmp_path):
    state = _run_state(with_replay=False)
    with checkpoint.RunCheckpointer(tmp_path) as ckpt:
        ckpt.save(1, state)
        wider = _run_state(with_replay=False, channels=16)
        with pytest.raises(checkpoint.CheckpointError, match=r"params/stem/kernel is float32\[3, 3, 4, 8\]"):
            ckpt.restore(target=wider)
        fewer = state._replace(extra={"expected_features": state.extra["expected_features"]})
        with pytest.raises(checkpoint.CheckpointError, match=r"checkpoint lacks: \[\]; .*extra/raw_key"):
            ckpt.restore(target=fewer)


def test_missing_directory_and_empty_directory(tmp_path):
    with pytest.raises(checkpoint.CheckpointError, match=f"{tmp_path / 'nope'} does not exist"):
        checkpoint.RunCheckpointer(tmp_path / "nope", create=False)
    with checkpoint.RunCheckpointer(tmp_path / "empty") as ckpt:
        with pytest.raises(checkpoint.CheckpointError, match="no checkpoint in"):
            ckpt.restore(target=_run_state())


def test_config_validation():
    with pytest.raises(ValueError, match="max_to_keep"):
        checkpoint.CheckpointConfig(max_to_keep=0)
    with pytest.raises(ValueError, match="save_replay"):
        checkpoint.CheckpointConfig(save_replay="yes")
    with pytest.raises(ValueError, match="async_save"):
        checkpoint.CheckpointConfig(async_save=1)
