"""Laying a run out on devices: the game slots sharded, everything else replicated.

One 1-D ``jax.sharding.Mesh`` with axis ``"data"`` spans the devices (all devices of one process,
or every device of every process after ``jax.distributed.initialize``). Games in
progress, the self-play window and the replay buffer (one stream per game slot) are
split along their game-slot axis; network parameters, optimiser state, payoffs, ψ and
keys are replicated. Each phase of an iteration runs as ``data_parallel``: a
``jax.shard_map`` of the phase over the mesh, so every device runs the phase on its own
game slots and the phase names its few exchanges itself (``Shard``: ψ's
statistics, payoffs and metrics once per self-play window, the gradient once per learner
step). The same program runs on one CPU, a GPU or a TPU pod slice. No ``pmap``.
"""

import functools
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"


class Shard(NamedTuple):
    """Which share of a run's game slots a phase computes: all of them (``axis_name`` None,
    one device or one population member), or one device's share of a mesh axis the phase
    is mapped over, whose sums then run over the axis."""

    axis_name: Optional[str] = None

    def index(self) -> jax.Array:
        """This device's position on the axis (0 without one)."""
        return jnp.zeros((), jnp.int32) if self.axis_name is None else jax.lax.axis_index(self.axis_name)

    def sum(self, tree: Any) -> Any:
        """``tree`` summed over the devices of the axis (as it is without one)."""
        return tree if self.axis_name is None else jax.lax.psum(tree, self.axis_name)

    def slots(self, local: int) -> jax.Array:
        """[local] the global indices of this device's game slots (or groups, rows...)."""
        return self.index() * local + jnp.arange(local, dtype=jnp.int32)


def make_mesh(num_devices: Optional[int] = None, *, local: bool = False) -> Mesh:
    """A 1-D mesh over the first ``num_devices`` devices (default: all of them).

    ``local``: this process's devices only (multi-host: for work each process does on
    its own, e.g. evaluating a restored team); otherwise every process's devices.
    """
    devices = jax.local_devices() if local else jax.devices()
    if num_devices and not local and jax.process_count() > 1 and num_devices != len(devices):
        raise ValueError(f"a multi-process run uses every device of every process ({len(devices)}); "
                         f"asked for {num_devices} (run.num_devices=0 means all)")
    if num_devices:
        if num_devices > len(devices):
            raise ValueError(f"asked for {num_devices} devices, only {len(devices)} available: {devices}")
        devices = devices[:num_devices]
    return Mesh(np.asarray(devices), (DATA_AXIS,))


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def _split_axis(mesh: Mesh, leaf: Any, axis: int) -> NamedSharding:
    size = mesh.shape[DATA_AXIS]
    shape = getattr(leaf, "shape", ())
    if len(shape) <= axis or shape[axis] % size:
        return replicated(mesh)
    spec = [None] * axis + [DATA_AXIS]
    return NamedSharding(mesh, PartitionSpec(*spec))


def trainer_state_shardings(mesh: Mesh, state: Any) -> Any:
    """Shardings for a ``trainer.TrainerState`` (or its abstract shape)."""
    rows = lambda axis: lambda leaf: _split_axis(mesh, leaf, axis)  # noqa: E731
    everywhere = lambda leaf: replicated(mesh)  # noqa: E731
    return state._replace(
        train_state=jax.tree.map(everywhere, state.train_state),
        replay=jax.tree.map(rows(0), state.replay),  # [S * C] rows and [S] positions, sizes: by stream
        games=jax.tree.map(rows(0), state.games),  # [B, ...]
        pending=jax.tree.map(rows(1), state.pending),  # [T, B, ...]
        payoff=jax.tree.map(everywhere, state.payoff),
        expected_features=jax.tree.map(everywhere, state.expected_features),
        rng_key=replicated(mesh),
        iteration=replicated(mesh),
    )


def check_divisible(mesh: Mesh, num_games: int, batch_size: int) -> None:
    size = mesh.shape[DATA_AXIS]
    for name, value in (("selfplay.num_games", num_games), ("run.batch_size", batch_size)):
        if value % size:
            raise ValueError(f"{name} = {value} must be a multiple of the number of devices ({size})")


def data_parallel(phase: Callable, mesh: Mesh, shardings: Any) -> Callable:
    """A trainer phase (``state, shard -> (state, metrics)``, ``trainer.selfplay_phase`` or
    ``trainer.learner_phase_step`` with its components bound) as one jitted program over
    ``mesh``: ``jax.shard_map`` of it with ``shardings``' partition specs, each device
    running the phase on its part of the state (``Shard`` over ``DATA_AXIS``),
    the metrics replicated. The state is donated."""
    specs = jax.tree.map(lambda s: s.spec, shardings)
    local = jax.shard_map(functools.partial(phase, shard=Shard(DATA_AXIS)), mesh=mesh, in_specs=(specs,),
                          out_specs=(specs, PartitionSpec()), check_vma=False)
    return jax.jit(local, in_shardings=(shardings,), out_shardings=(shardings, replicated(mesh)), donate_argnums=0)
