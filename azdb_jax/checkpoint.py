"""Run checkpoints with orbax: save, list, restore and keep the last k (SPEC §3).

A checkpoint is one step directory ``<directory>/<step>/`` holding three orbax items::

  state   every array of the run but the replay buffer: parameters, optimiser state,
          step, RNG key and any extra pytrees (e.g. the expected-features state);
  replay  the replay buffer, when saved (it can be large, so it is optional);
  meta    JSON: the run's resolved config, a SHA-256 checksum per array and which
          arrays were typed PRNG keys.

orbax writes the step into a temporary directory and renames it into place once all
items are written, so a crash mid-save never leaves a directory that `latest_step` or
`restore` would pick up (temporary directories are ignored).

Saves are asynchronous by default (``CheckpointConfig.async_save``): `save` returns once
the state is copied to host memory and the files are written by a background thread
while training goes on. Whatever reads the directory waits for that write first
(`all_steps`, and through it `latest_step`, `delete`, `read_meta`, `restore` and
`restore_parts`; a next `save`; `close`), so a step is listed, read or replaced only
once it is complete, and a write that failed raises `CheckpointError` there, naming the
step. A process killed during the write leaves only a temporary directory: the run
resumes from the checkpoint before.

Pytrees are stored as nested dicts keyed by their pytree paths (field names, dict keys,
list indices) and put back into the structure of the restore ``target``, which may hold
concrete arrays or ``jax.ShapeDtypeStruct`` (with a sharding, to restore sharded).
Restoring checks, before reading any data, that the target asks for the same arrays
with the same shapes and dtypes, and afterwards that every array matches its checksum,
so a truncated or garbled file, a different network or a different number of players
fails with `CheckpointError` naming the path and the reason, never with wrong values.

Multi-host (after ``jax.distributed.initialize``): `save` and `restore` are collective,
every process calls them with the same arguments. Each process writes the shards of the
global arrays that it holds and reads back the shards that the target's shardings give
it. Leaves that are not global arrays (numpy values, Python scalars, single-device
arrays) are taken to be the same on every process: process 0's value is saved, and
they are restored on every process (as a local array). An array sharded across
processes gets one checksum per shard, keyed by the shard's index (process 0 gathers
them into ``meta``); each process verifies the shards it restores.
"""

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import pathlib
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

_ITEMS = ("state", "replay", "meta")


class CheckpointError(ValueError):
    """A checkpoint is missing, corrupt or does not fit what was asked."""


@dataclasses.dataclass(frozen=True)
class CheckpointConfig:
    """How checkpoints are kept.

    Attributes:
      max_to_keep: number of most recent checkpoints kept (older ones are deleted).
      save_replay: whether `save` stores the replay buffer it is given.
      verify_checksums: store a SHA-256 per array and check it on restore.
      async_save: `save` returns once the state is in host memory and the files are
        written in the background (False: `save` returns once they are on disk).
    """

    max_to_keep: int = 3
    save_replay: bool = True
    verify_checksums: bool = True
    async_save: bool = True

    def __post_init__(self):
        if isinstance(self.max_to_keep, bool) or not isinstance(self.max_to_keep, int) or self.max_to_keep < 1:
            raise ValueError(f"CheckpointConfig.max_to_keep must be an int >= 1, got {self.max_to_keep!r}")
        for name in ("save_replay", "verify_checksums", "async_save"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"CheckpointConfig.{name} must be a bool, got {getattr(self, name)!r}")


class RunState(NamedTuple):
    """Everything a run needs to continue exactly."""

    params: Any  # network parameters
    opt_state: Any  # optimiser state
    step: Any  # [] int: learner step
    rng_key: Any  # the run's PRNG key (raw uint32 [2] or typed key)
    replay: Any = None  # replay.ReplayState, or None
    extra: Any = None  # any other pytrees, e.g. {"expected_features": ...}


def config_to_json(config: Any) -> Any:
    """A dataclass (nested ok), mapping or None as plain JSON values (tuples -> lists)."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        config = dataclasses.asdict(config)
    return json.loads(json.dumps(config, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _key_name(entry: Any) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def _flatten(tree: Any) -> Dict[str, Any]:
    """{"a/b/0": leaf} over the leaves of a pytree."""
    return {"/".join(_key_name(k) for k in path): leaf for path, leaf in jax.tree_util.tree_leaves_with_path(tree)}


def _nest(flat: Dict[str, Any]) -> Dict[str, Any]:
    nested: Dict[str, Any] = {}
    for path, leaf in flat.items():
        node = nested
        *parents, last = path.split("/")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = leaf
    return nested


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _array_like(x: Any) -> Any:
    """Arrays and ShapeDtypeStructs as they are; Python scalars as numpy arrays."""
    return x if hasattr(x, "shape") and hasattr(x, "dtype") else np.asarray(x)


def _digest(data: Any) -> str:
    """SHA-256 of an array's dtype, shape and bytes, read in place (no copy of the data)."""
    data = np.ascontiguousarray(np.asarray(data))
    digest = hashlib.sha256(f"{data.dtype.str}{data.shape}".encode())
    digest.update(data.reshape(-1).view(np.uint8))  # hashlib releases the GIL on large buffers
    return digest.hexdigest()


def _checksum(x: Any) -> Optional[str]:
    """SHA-256 of the whole array, or None where this process holds only part of it."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return _digest(x.addressable_data(0)) if x.is_fully_replicated else None
    return _digest(x)


def _index_key(index: tuple, shape: tuple) -> str:
    """A shard's place in its array, e.g. ``0:4,0:3`` (the same on every host and run)."""
    return ",".join("%d:%d" % s.indices(n)[:2] for s, n in zip(index, shape))


def _shard_checksums(x: Any) -> Dict[str, str]:
    """SHA-256 per distinct shard that this process holds (replica 0 only), keyed by index."""
    return {_index_key(shard.index, x.shape): _digest(shard.data)
            for shard in x.addressable_shards if shard.replica_id == 0}


def _is_global(x: Any) -> bool:
    """An array (or abstract array) spread over the devices of several processes."""
    if isinstance(x, jax.Array):
        return not x.is_fully_addressable
    sharding = getattr(x, "sharding", None)
    return sharding is not None and not sharding.is_fully_addressable


def _all_devices_replicated() -> NamedSharding:
    return NamedSharding(Mesh(np.asarray(jax.devices()), ("all",)), PartitionSpec())


def _to_global(x: Any) -> Any:
    """Multi-host: a host-local leaf as a global array replicated over every device.

    orbax writes only global arrays across hosts; the value must be the same on every
    process (process 0's copy is the one written).
    """
    if jax.process_count() == 1 or _is_global(x):
        return x
    value = np.asarray(x)
    return jax.make_array_from_callback(value.shape, _all_devices_replicated(), lambda index: value[index])


def _allgather_json(obj: Any) -> list:
    """``obj`` of every process, in process order (a collective: every process calls it)."""
    if jax.process_count() == 1:
        return [obj]
    data = np.frombuffer(json.dumps(obj).encode(), np.uint8)
    sizes = np.asarray(multihost_utils.process_allgather(np.int32(data.size))).reshape(-1)
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[: data.size] = data
    rows = np.asarray(multihost_utils.process_allgather(padded))
    return [json.loads(bytes(row[:size])) for row, size in zip(rows, sizes)]


def _abstract(x: Any) -> jax.ShapeDtypeStruct:
    """What orbax should restore for a target leaf (typed keys are stored as their uint32 data).

    Multi-host, a target that is not a global array is restored replicated over every
    device (and handed back as a local array by ``_unpack``).
    """
    x = _array_like(x)
    sharding = getattr(x, "sharding", None)
    if jax.process_count() > 1 and not _is_global(x):
        sharding = _all_devices_replicated()
    if _is_key(x):
        data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct(x.shape, x.dtype))
        return jax.ShapeDtypeStruct(data.shape, data.dtype, sharding=sharding)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)


class RunCheckpointer:
    """Saves and restores `RunState`s under ``directory``, keeping the last k.

    Use as a context manager or call `close` when done.
    """

    def __init__(self, directory: str, config: CheckpointConfig = CheckpointConfig(), *, create: bool = True):
        self.directory = os.path.abspath(os.fspath(directory))
        self.config = config
        if not create and not os.path.isdir(self.directory):
            raise CheckpointError(f"checkpoint directory {self.directory} does not exist")
        # Always orbax's asynchronous checkpointer: a synchronous save (async_save=False)
        # is the same save followed by wait_until_finished.
        # preservation_policy, not max_to_keep (documented as deprecated since orbax 0.12.8).
        options = ocp.CheckpointManagerOptions(
            preservation_policy=ocp.checkpoint_managers.LatestN(n=config.max_to_keep), create=create,
            enable_async_checkpointing=True)
        handlers = {
            "state": ocp.StandardCheckpointHandler(),
            "replay": ocp.StandardCheckpointHandler(),
            "meta": ocp.JsonCheckpointHandler(),
        }
        self._manager = ocp.CheckpointManager(self.directory, options=options, item_handlers=handlers)
        self._pending: Optional[int] = None  # the step of a save still being written

    def __enter__(self) -> "RunCheckpointer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Waits for a pending save (`wait_until_finished`), then releases orbax's manager."""
        try:
            self.wait_until_finished()
        finally:
            self._manager.close()

    def wait_until_finished(self) -> None:
        """Returns once the last `save` is on disk (at once when none is pending).

        Raises:
          CheckpointError: the pending write failed (its step is not listed).
        """
        step, self._pending = self._pending, None
        if step is None:
            return
        try:
            self._manager.wait_until_finished()
        except Exception as e:  # orbax/tensorstore raise many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {self.step_path(step)} could not be written: {_reason(e)}") from e

    def all_steps(self) -> list:
        """Steps of the finished checkpoints, oldest first (after a pending save is written)."""
        self.wait_until_finished()
        self._manager.reload()  # other processes may have saved or deleted steps
        return sorted(self._manager.all_steps())

    def latest_step(self) -> Optional[int]:
        """The newest finished checkpoint's step, or None if there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def delete(self, step: int) -> None:
        """Removes the checkpoint of ``step``."""
        self._manager.delete(self.resolve_step(step))

    def step_path(self, step: int) -> str:
        return os.path.join(self.directory, str(step))

    def save(self, step: int, state: RunState, *, config: Any = None) -> None:
        """Writes ``state`` (and ``config``, a dataclass or dict, as JSON) as ``step``.

        Waits for the previous save first. With ``async_save`` it returns once ``state``
        is copied to host memory (the caller may then donate or overwrite its arrays) and
        the files are written in the background; else once the checkpoint is on disk (on
        every process). Once written, checkpoints beyond the last ``max_to_keep`` are
        deleted.
        """
        step = int(step)
        if step in self.all_steps():
            raise CheckpointError(f"checkpoint {self.step_path(step)} already exists")
        replay = state.replay if self.config.save_replay else None
        items = {"state": _flatten(state._replace(replay=None)), "replay": _flatten(replay)}
        prng_keys, checksums, shard_checksums = {}, {}, {}
        leaves = {}
        for item, flat in items.items():
            for path, leaf in flat.items():
                leaf = _array_like(leaf)
                if _is_key(leaf):
                    prng_keys[f"{item}/{path}"] = str(jax.random.key_impl(leaf))
                    leaf = jax.random.key_data(leaf)
                leaves[f"{item}/{path}"] = leaf
                flat[path] = _to_global(leaf)
        if self.config.verify_checksums:  # the loop waits for these: the arrays hashed side by side
            with concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
                checksums = dict(zip(leaves, pool.map(_checksum, leaves.values())))
            for name, leaf in leaves.items():
                if checksums[name] is None:  # sharded across processes
                    shard_checksums[name] = _shard_checksums(leaf)
        if self.config.verify_checksums:  # every process's shards, in the meta that process 0 writes
            merged = {name: {} for name in shard_checksums}
            for shards in _allgather_json(shard_checksums):
                for name, table in shards.items():
                    merged[name].update(table)
            shard_checksums = merged
        meta = {
            "config": config_to_json(config),
            "has_replay": bool(items["replay"]),
            "prng_keys": prng_keys,
            "checksums": checksums,
            "shard_checksums": shard_checksums,
        }
        args = {"state": ocp.args.StandardSave(_nest(items["state"])), "meta": ocp.args.JsonSave(meta)}
        if items["replay"]:
            args["replay"] = ocp.args.StandardSave(_nest(items["replay"]))
        # What the background write reads must not change after this returns: the caller
        # donates the state to its next jitted step. orbax 0.12.8 (StandardCheckpointHandler,
        # no device-to-host byte limit set) copies every jax.Array to host memory inside
        # save() and blocks on the copies (jax_array_handlers._serialize_arrays: all arrays
        # "prioritized", replica_slices.transfer_arrays_to_host: np.asarray of each shard),
        # and deep-copies numpy leaves (NumpyHandler(deepcopy_host_arrays=True)); the meta
        # is plain JSON built here. On CPU that host copy is a view of the device buffer,
        # and a buffer with a live view is not donated (XLA copies it instead), so the
        # write still reads the saved values. tests/test_checkpoint.py saves a state and
        # donates it to a jitted step at once.
        self._manager.save(step, args=ocp.args.Composite(**args))
        self._pending = step
        if not self.config.async_save:
            self.wait_until_finished()

    def read_meta(self, step: Optional[int] = None) -> Dict[str, Any]:
        """The JSON saved beside ``step`` (default: latest): config, checksums, ..."""
        step = self.resolve_step(step)
        try:
            return self._manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]
        except Exception as e:  # orbax raises many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {self.step_path(step)} is unreadable: {_reason(e)}") from e

    def read_config(self, step: Optional[int] = None) -> Any:
        """The config saved with ``step`` (default: latest), as plain JSON values."""
        return self.read_meta(step)["config"]

    def resolve_step(self, step: Optional[int]) -> int:
        """``step`` when the directory holds it, the latest step for None; else CheckpointError."""
        steps = self.all_steps()
        if step is None:
            if not steps:
                raise CheckpointError(f"no checkpoint in {self.directory}")
            return steps[-1]
        if int(step) not in steps:
            raise CheckpointError(f"no checkpoint for step {step} in {self.directory} (steps: {steps})")
        return int(step)

    def restore(self, step: Optional[int] = None, *, target: RunState, config: Any = None) -> RunState:
        """Reads ``step`` (default: latest) into the structure, shapes and shardings of ``target``.

        ``target`` holds arrays or ``jax.ShapeDtypeStruct``; a ``target.replay`` of None
        skips the buffer. With ``config`` given, the saved config must equal it.
        """
        step = self.resolve_step(step)
        path = self.step_path(step)
        meta = self.read_meta(step)
        if config is not None:
            _check_config(path, meta["config"], config_to_json(config))
        want_replay = target.replay is not None
        if want_replay and not meta["has_replay"]:
            raise CheckpointError(f"checkpoint {path} holds no replay buffer, but the target asks for one")
        parts = {"state": target._replace(replay=None)}
        if want_replay:
            parts["replay"] = target.replay
        try:
            stored = self._manager.item_metadata(step)
        except Exception as e:  # orbax/tensorstore raise many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {path} is corrupt or incomplete: {_reason(e)}") from e
        args = {}
        for item, tree in parts.items():
            abstract = {p: _abstract(x) for p, x in _flatten(tree).items()}
            _check_shapes(path, item, stored[item], abstract)
            args[item] = ocp.args.StandardRestore(_nest(abstract))
        try:
            restored = self._manager.restore(step, args=ocp.args.Composite(**args))
        except Exception as e:  # orbax/tensorstore raise many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {path} is corrupt or incomplete: {_reason(e)}") from e
        result = {item: self._unpack(path, item, tree, restored[item], meta) for item, tree in parts.items()}
        return result["state"]._replace(replay=result.get("replay"))

    def restore_parts(self, step: Optional[int] = None, *, parts: Sequence[str],
                      config: Any = None) -> Tuple[int, Dict[str, Any]]:
        """Reads only the arrays under ``parts`` of a step's state: ``(step, {part: tree})``.

        A part is a path into the saved ``RunState`` (``"params"``,
        ``"extra/expected_features/psi"``); a part that names a subtree comes back as
        nested dicts keyed as saved. Nothing else is read (no optimizer state, no replay),
        and no target structure is needed: shapes and dtypes come from the checkpoint.
        Checksums are verified. With ``config`` given, the saved config must equal it.

        Raises:
          CheckpointError: no such step, a part the checkpoint lacks, or a corrupt file.
        """
        step = self.resolve_step(step)
        path = self.step_path(step)
        meta = self.read_meta(step)
        if config is not None:
            _check_config(path, meta["config"], config_to_json(config))
        try:
            stored = self._manager.item_metadata(step)["state"]
        except Exception as e:  # orbax/tensorstore raise many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {path} is corrupt or incomplete: {_reason(e)}") from e
        stored_flat = _flatten(getattr(stored, "tree", stored) or {})
        device = jax.sharding.make_single_device_sharding(jax.local_devices()[0])  # the class's constructor is deprecated in JAX 0.12
        wanted: Dict[str, jax.ShapeDtypeStruct] = {}
        for part in parts:
            found = {p: v for p, v in stored_flat.items() if p == part or p.startswith(part + "/")}
            if not found:
                raise CheckpointError(f"checkpoint {path} holds no state/{part}")
            wanted.update({p: jax.ShapeDtypeStruct(tuple(v.shape), v.dtype, sharding=device) for p, v in found.items()})
        item = _nest(wanted)
        try:
            with ocp.Checkpointer(ocp.PyTreeCheckpointHandler()) as reader:
                restored = reader.restore(os.path.join(path, "state"), args=ocp.args.PyTreeRestore(
                    item=item, restore_args=ocp.checkpoint_utils.construct_restore_args(item), partial_restore=True))
        except Exception as e:  # orbax/tensorstore raise many types; name the checkpoint and the cause
            raise CheckpointError(f"checkpoint {path} is corrupt or incomplete: {_reason(e)}") from e
        values = _flatten(restored)
        for p in wanted:
            if self.config.verify_checksums and not _matches_checksums(values[p], f"state/{p}", meta):
                raise CheckpointError(f"checkpoint {path} is corrupt: array state/{p} does not match its checksum")
        out = {}
        for part in parts:
            if part in values:
                out[part] = values[part]
            else:
                out[part] = _nest({p[len(part) + 1:]: v for p, v in values.items() if p.startswith(part + "/")})
        return step, out

    def _unpack(self, path: str, item: str, target: Any, restored: Any, meta: Dict[str, Any]) -> Any:
        """Restored nested dict -> the target's structure; checksums verified, keys re-typed."""
        values = _flatten(restored)
        leaves = []
        for p, want in _flatten(target).items():
            name, value = f"{item}/{p}", values[p]
            if self.config.verify_checksums and not _matches_checksums(value, name, meta):
                raise CheckpointError(f"checkpoint {path} is corrupt: array {name} does not match its checksum"
                                      + (f" (process {jax.process_index()})" if jax.process_count() > 1 else ""))
            if jax.process_count() > 1 and not _is_global(_array_like(want)):
                value = value.addressable_data(0)  # a host-local target: hand back a local array
            if _is_key(_array_like(want)):
                impl = meta["prng_keys"].get(name)
                value = jax.random.wrap_key_data(value, impl=impl) if impl else jax.random.wrap_key_data(value)
            leaves.append(value)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(target), leaves)


def latest_step(workdir) -> Optional[int]:
    """The last saved iteration of the run directory ``workdir`` (its ``checkpoints``
    folder), or None when it has none."""
    folder = pathlib.Path(workdir) / "checkpoints"
    if not folder.is_dir():
        return None
    with RunCheckpointer(str(folder), create=False) as manager:
        return manager.latest_step()


def all_steps(workdir) -> list:
    """Every saved iteration of the run directory ``workdir``, in order ([] when it has none)."""
    folder = pathlib.Path(workdir) / "checkpoints"
    if not folder.is_dir():
        return []
    with RunCheckpointer(str(folder), create=False) as manager:
        return manager.all_steps()


def _matches_checksums(value: Any, name: str, meta: Dict[str, Any]) -> bool:
    """Whether ``value`` agrees with the whole-array checksum or, for the shards this
    process holds, with the per-shard checksums saved for ``name``.

    A checkpoint written on another layout of devices may have neither for what this
    process holds (e.g. a sharded save restored sharded differently); that is not checked.
    """
    expected, actual = meta["checksums"].get(name), _checksum(value)
    if expected is not None and actual is not None:
        return actual == expected
    shards = meta.get("shard_checksums", {}).get(name)
    if shards and isinstance(value, jax.Array):
        for shard in value.addressable_shards:
            want = shards.get(_index_key(shard.index, value.shape))
            if want is not None and _digest(shard.data) != want:
                return False
    return True


def _reason(e: BaseException) -> str:
    """A one-line cause: the innermost error of the chain, without TensorStore's spec dump."""
    chain = [e]
    while (chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    inner = chain[-1]
    text = str(inner).split("See full TensorStore details")[0].strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}"[:400]


def _check_config(path: str, saved: Any, asked: Any) -> None:
    if saved == asked:
        return
    diffs = []

    def walk(prefix: str, a: Any, b: Any) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            # Fields the checkpoint lacks were added to the config after it was written;
            # they default to the behaviour it was written with.
            for k in sorted(set(a) | set(b)):
                if k in a:
                    walk(f"{prefix}.{k}" if prefix else k, a[k], b.get(k, "<absent>"))
        elif a != b:
            diffs.append(f"{prefix or 'config'}: checkpoint has {a!r}, asked for {b!r}")

    walk("", saved, asked)
    if not diffs:
        return
    raise CheckpointError(f"checkpoint {path} was saved with a different config: " + "; ".join(diffs[:10]))


def _check_shapes(path: str, item: str, stored: Any, abstract: Dict[str, jax.ShapeDtypeStruct]) -> None:
    """The target must ask for exactly the stored arrays, with their shapes and dtypes."""
    stored_flat = _flatten(getattr(stored, "tree", stored) or {})
    missing = sorted(set(abstract) - set(stored_flat))
    extra = sorted(set(stored_flat) - set(abstract))
    if missing or extra:
        raise CheckpointError(
            f"checkpoint {path} does not fit the target ({item}): "
            f"arrays the target asks for but the checkpoint lacks: {missing[:5]}; "
            f"arrays the checkpoint holds but the target lacks: {extra[:5]}"
        )
    for p, want in abstract.items():
        have = stored_flat[p]
        if tuple(have.shape) != tuple(want.shape) or jnp.dtype(have.dtype) != jnp.dtype(want.dtype):
            raise CheckpointError(
                f"checkpoint {path} does not fit the target: {item}/{p} is "
                f"{jnp.dtype(have.dtype).name}{list(have.shape)} in the checkpoint, "
                f"the target asks for {jnp.dtype(want.dtype).name}{list(want.shape)}"
            )


__all__ = ["CheckpointConfig", "CheckpointError", "RunCheckpointer", "RunState", "all_steps", "config_to_json", "latest_step"]
