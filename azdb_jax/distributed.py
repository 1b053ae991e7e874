"""Multi-host start-up: ``jax.distributed.initialize`` before anything touches the XLA backend.

A multi-host run starts the same command once per process (one per host, or several
on one machine) and says how the processes find each other, in one of two ways:

- ``--coordinator=auto``: ``jax.distributed.initialize()`` without arguments, which takes
  the coordinator's address, the number of processes and this process's id from the
  cluster it runs in. JAX detects Cloud TPU VMs (every host of a pod slice, and GKE's
  TPU pods), SLURM job steps (``srun``), Open MPI (``mpirun``) and Kubernetes indexed
  jobs; ``JAX_COORDINATOR_PORT`` chooses the port where the cluster does not (SLURM
  derives one from the job id). On SLURM, JAX gives each process of a node one GPU, the
  one of its ``SLURM_LOCALID`` (one task per GPU). ``--num_processes`` and
  ``--process_id`` are refused with it (the cluster says them), and where no cluster is
  detected the error names the ones JAX knows and the explicit flags below;
- ``--coordinator=HOST:PORT --num_processes=N --process_id=I``: the explicit start, for
  a cluster JAX does not detect and for processes on one machine (loopback).

``jax.distributed.initialize`` must run before the XLA backend exists, and importing
the game layer (pgx) already creates it. So every entry point initialises first and
imports the library after:

- a script whose library imports sit at the top of the file calls
  ``initialize_from_argv(sys.argv)`` *above* those imports (it reads the three flags
  itself; absl parses them again, with the script's other flags, in ``app.run``);
- a console-script module (imported before it runs) imports the library inside its
  ``main`` and calls ``initialize_from_flags()`` first thing there.

Both define the flags on absl's global ``FLAGS`` with ``define_flags()`` so that
``--help`` lists them and absl accepts them. Without ``--coordinator`` nothing happens:
the run is one process (all of its host's devices). This module imports JAX only inside
its functions.

Besides start-up, the exchanges a population of runs needs across processes
(``azdb_jax.population``): every member's values in every process (``gather_members``),
one member's state from the process that holds it (``held_member``), sent to every
process bit for bit (``broadcast_exact``).

CPU processes exchange arrays through gloo collectives (XLA:CPU has no cross-process
collectives by default; the setting leaves GPU and TPU devices alone), which is how the
multi-host path is tested on one machine (``--coordinator=auto`` in the variables of a
SLURM job step, ``tests/test_distributed.py``).
"""

from typing import Any, Optional, Sequence

from absl import flags

FLAG_NAMES = ("coordinator", "num_processes", "process_id")
AUTO = "auto"  # --coordinator=auto: the cluster's own description of the processes
# What jax.distributed.initialize() detects on its own (jax._src.clusters).
DETECTED_CLUSTERS = ("Cloud TPU VMs (the hosts of a pod slice, GKE TPU pods)", "SLURM job steps (srun)",
                     "Open MPI (mpirun)", "Kubernetes indexed jobs")


def _define(flag_values: flags.FlagValues) -> None:
    if "coordinator" in flag_values:
        return
    flags.DEFINE_string("coordinator", None, "Multi-host: 'auto' on a cluster JAX detects (Cloud TPU pod "
                        "slices, SLURM srun, Open MPI, Kubernetes indexed jobs), which says the coordinator, "
                        "the number of processes and each one's id; or the coordinator's address HOST:PORT "
                        "(process 0's host), the same on every process, with --num_processes and "
                        "--process_id. Unset: a single-process run.", flag_values=flag_values)
    flags.DEFINE_integer("num_processes", None, "Multi-host, with --coordinator=HOST:PORT: the number of "
                         "processes.", lower_bound=1, flag_values=flag_values)
    flags.DEFINE_integer("process_id", None, "Multi-host, with --coordinator=HOST:PORT: this process's id in "
                         "[0, num_processes).", lower_bound=0, flag_values=flag_values)


def define_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """Defines ``--coordinator``, ``--num_processes`` and ``--process_id`` (once)."""
    _define(flag_values)


def initialize(coordinator: Optional[str], num_processes: Optional[int], process_id: Optional[int]) -> bool:
    """Joins the multi-process run; returns whether it did (False without a coordinator).

    ``coordinator="auto"`` calls ``jax.distributed.initialize()`` without arguments (the
    cluster's detection); ``HOST:PORT`` needs ``num_processes`` and ``process_id``.

    Raises:
      ValueError: ``num_processes`` or ``process_id`` missing, out of range or given with
        ``auto``; a coordinator address without a port; ``auto`` where JAX detects no
        cluster.
      RuntimeError (from JAX): the XLA backend already exists (something touched it first).
    """
    if not coordinator:
        if num_processes not in (None, 1) or process_id not in (None, 0):
            raise ValueError("--num_processes/--process_id need --coordinator=HOST:PORT")
        return False
    if coordinator == AUTO:
        if num_processes is not None or process_id is not None:
            given = [f"--{name}" for name, value in (("num_processes", num_processes), ("process_id", process_id))
                     if value is not None]
            raise ValueError(f"--coordinator=auto takes the number of processes and each one's id from the "
                             f"cluster: drop {' and '.join(given)}, or give --coordinator=HOST:PORT with "
                             f"--num_processes and --process_id")
        return _initialize_auto()
    if num_processes is None or process_id is None:
        raise ValueError("--coordinator needs --num_processes and --process_id")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"--process_id={process_id} must be in [0, --num_processes={num_processes})")
    host, _, port = coordinator.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--coordinator must be HOST:PORT or auto, got {coordinator!r}")
    import jax  # pylint: disable=g-import-not-at-top

    if jax.distributed.is_initialized():
        return True
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator, num_processes, process_id)
    return True


def _initialize_auto() -> bool:
    """``jax.distributed.initialize()`` with what the cluster says; a clear error where
    JAX detects none (it then lacks the coordinator, the process count or the id)."""
    import jax  # pylint: disable=g-import-not-at-top

    if jax.distributed.is_initialized():
        return True
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize()
    except ValueError as e:  # JAX's "coordinator_address should be defined." and the like
        raise ValueError(f"--coordinator=auto: JAX detected no cluster to join ({e}); it detects "
                         f"{', '.join(DETECTED_CLUSTERS)}. Elsewhere pass --coordinator=HOST:PORT "
                         f"--num_processes=N --process_id=I on every process") from None
    return True


def initialize_from_flags(flag_values: flags.FlagValues = flags.FLAGS) -> bool:
    """``initialize`` with the parsed absl flags (inside ``main``)."""
    return initialize(*(flag_values[name].value for name in FLAG_NAMES))


def initialize_from_argv(argv: Sequence[str]) -> bool:
    """``initialize`` with the three flags read from a raw command line (before absl parses it).

    Only those flags are read (``--flag=value`` or ``--flag value``, ``--flagfile`` too);
    everything else is left for absl. A bad value fails here with absl's message.
    """
    own = flags.FlagValues()
    _define(own)
    try:
        own(list(argv), known_only=True)
    except flags.Error as e:
        raise SystemExit(f"{argv[0] if argv else 'azdb_jax'}: error: {e}") from None
    try:
        return initialize_from_flags(own)
    except ValueError as e:
        raise SystemExit(f"{argv[0] if argv else 'azdb_jax'}: error: {e}") from None


def is_main_process() -> bool:
    """Whether this process writes the run's files (process 0; always true for one process)."""
    import jax  # pylint: disable=g-import-not-at-top

    return jax.process_index() == 0


def gather_members(tree: Any) -> Any:
    """Arrays stacked on a leading member axis (sharded over every process's devices) in
    host memory, every member's values in every process (a collective across processes)."""
    import jax  # pylint: disable=g-import-not-at-top
    from jax.experimental import multihost_utils  # pylint: disable=g-import-not-at-top

    if jax.process_count() == 1:
        return jax.device_get(tree)
    return multihost_utils.process_allgather(tree, tiled=True)


def held_member(stacked: Any, k: int) -> Optional[Any]:
    """Member ``k`` of arrays stacked on a leading member axis, as host arrays, or None in
    a process whose devices do not hold it."""
    import jax  # pylint: disable=g-import-not-at-top
    import numpy as np  # pylint: disable=g-import-not-at-top

    def leaf(x):
        for shard in x.addressable_shards:
            start, stop, _ = shard.index[0].indices(x.shape[0])
            if start <= k < stop:
                return np.asarray(shard.data[k - start])
        return None

    leaves = [leaf(x) for x in jax.tree.leaves(stacked)]
    if any(x is None for x in leaves):
        return None
    return jax.tree.unflatten(jax.tree.structure(stacked), leaves)


def broadcast_exact(tree: Any, is_source: bool) -> Any:
    """``tree`` of the one source process (the others pass arrays of the same shapes and
    dtypes) in every process. The values travel as unsigned integers of their width, so
    that the sum with the others' zeros that carries them is exact (a float -0.0 stays
    -0.0); arrays wider than 4 bytes are refused (ValueError)."""
    import jax  # pylint: disable=g-import-not-at-top
    import numpy as np  # pylint: disable=g-import-not-at-top
    from jax.experimental import multihost_utils  # pylint: disable=g-import-not-at-top

    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}
    dtypes = [np.asarray(x).dtype for x in jax.tree.leaves(tree)]
    wide = sorted({str(d) for d in dtypes if d.itemsize not in bits})
    if wide:
        raise ValueError(f"a member's state holds {', '.join(wide)} arrays, which cannot be sent between processes "
                         f"bit for bit (widths of 1, 2 or 4 bytes only)")
    sent = jax.tree.map(lambda x: np.array(x, copy=True).view(bits[np.asarray(x).dtype.itemsize]), tree)
    received = multihost_utils.broadcast_one_to_all(sent, is_source=is_source)
    leaves = [np.asarray(x).view(dtype) for x, dtype in zip(jax.tree.leaves(received), dtypes)]
    return jax.tree.unflatten(jax.tree.structure(tree), leaves)


__all__ = ["AUTO", "DETECTED_CLUSTERS", "FLAG_NAMES", "define_flags", "initialize", "initialize_from_argv",
           "initialize_from_flags", "is_main_process", "gather_members", "held_member", "broadcast_exact"]
