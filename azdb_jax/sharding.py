"""Laying a run out on devices: the game/batch axis sharded, everything else replicated.

One 1-D ``jax.sharding.Mesh`` with axis ``"data"`` spans the devices (all devices of one process,
or every device of every process after ``jax.distributed.initialize``). Games in
progress, the self-play window and the replay buffer are split along their game/row
axis; network parameters, optimiser state, payoffs and keys are replicated. The jitted
iteration pins these shardings on its inputs and outputs, so XLA inserts the
collectives (gradient all-reduce, replay gathers) and the same program runs on one CPU,
a GPU or a TPU pod slice. No ``pmap``.
"""

from typing import Any, Optional

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"


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
        replay=state.replay._replace(
            data=jax.tree.map(rows(0), state.replay.data),
            position=replicated(mesh),
            size=replicated(mesh),
        ),
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
