"""Populations: several training runs of one configuration, trained as one compiled program.

A population of K members is K seeds of one configuration. Their trainer states are
stacked on a leading *member* axis and every phase of an iteration (self-play with its
targets and replay writes, each learner step) runs for all members in one call of one
program, compiled once for the population. Each member is the run of its seed: its own
network, replay buffer, games, payoffs, ψ and matchmaking, nothing shared.

How the member axis is run (``member_map``, per phase; ``member_maps``):

- ``"vmap"``: ``jax.vmap`` of the phase. Every operation sees all members at once; the
  per-member networks become batched (grouped) convolutions and ``lax.cond`` computes
  both branches. Made for a wide backend (a GPU runs the members side by side).
- ``"map"``: ``jax.lax.map`` of the phase: the members one after another inside the
  program (a loop), each through the plain phase's operations; compiled once whatever K.
- ``"unroll"``: the phase written out once per member in the program: the plain run's
  operations, without a loop around them; compiling grows with K.
- ``"groups"`` (learner only): the learner step written out for a group of
  ``LEARNER_GROUP`` members and called once per group from the host, the group an
  argument of the program: ``unroll``'s operations, compiled once whatever K.
- ``"auto"`` (the default): what ``benchmarks/population.py`` measured best on the
  backend.

``benchmarks/population.py`` measures each against K plain runs one after another.

On disk a population is a folder of runs: ``WORKDIR/seed_<s>/`` (or a directory the
caller names, as the reproduction's ``runs/<arm>_s<seed>``) for each member is a
complete run directory of its seed (``config.json`` with ``run.seed = s``, checkpoints,
``metrics.jsonl``, TensorBoard, ψ and graph snapshots), so every script that reads a run
reads a member (``--checkpoint=WORKDIR/seed_3@50``), and ``WORKDIR/population.json``
names the members' seeds and directories. Resuming restores every member at the newest step that all of them
saved (a population killed while saving has members one checkpoint ahead: those
checkpoints are removed) and continues exactly.

A population of one member is the plain run (``runner.train``) bit for bit.

Multi-host (``--coordinator``, ``azdb_jax.distributed``): the members are split over every
device of every process, each process training the members on its devices in the same
program (members share nothing, so the program exchanges nothing between devices). After
an iteration every process receives every member's metrics; when a member evaluates or
saves a checkpoint its owner sends its state to every process (bit for bit), each process
evaluates it with the member's plain programs on its own first device, and the checkpoint
is written collectively as a plain multi-host run's replicated arrays are. Process 0
writes the run files. The workdir must be a path all hosts share.
"""

import functools
import json
import os
import pathlib
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import tqdm
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from azdb_jax import agent as agent_lib
from azdb_jax import config as config_lib
from azdb_jax import distributed, networks, runner, sharding, trainer
from azdb_jax import runs as runs_lib
from azdb_jax.files import write_atomic

MEMBER_MAPS = ("vmap", "map", "unroll", "groups")
LEARNER_GROUP = 2  # members a "groups" learner call steps (the plain step written out for each)
MANIFEST = "population.json"


def member_dir(workdir, seed: int) -> pathlib.Path:
    """The run directory of the member of seed ``seed``."""
    return pathlib.Path(workdir) / f"seed_{seed}"


def over_members(fn: Callable, member_map: str) -> Callable:
    """``fn`` (one member's value -> result) as a function of stacked members. One member
    runs ``fn`` itself (its axis dropped and put back), so that it is the plain run's
    program."""
    def one_or_many(stacked):
        if _size(stacked) == 1:
            return jax.tree.map(lambda x: x[None], fn(member(stacked, 0)))
        return many(stacked)

    if member_map == "vmap":
        many = jax.vmap(fn)
    elif member_map == "map":
        many = functools.partial(jax.lax.map, fn)
    elif member_map == "unroll":
        many = lambda stacked: stack([fn(member(stacked, k)) for k in range(_size(stacked))])  # noqa: E731
    elif member_map == "groups":
        raise ValueError("member_map 'groups' runs only the learner (population.member_maps)")
    else:
        raise ValueError(f"member_map: {member_map!r} is not one of {', '.join(MEMBER_MAPS)}")
    return one_or_many


def _size(stacked: Any) -> int:
    return jax.tree.leaves(stacked)[0].shape[0]


def member(tree: Any, k: int) -> Any:
    """Member ``k`` of a stacked tree."""
    return jax.tree.map(lambda x: x[k], tree)


def stack(trees: Sequence[Any]) -> Any:
    """Members' trees stacked on a new leading axis."""
    return agent_lib.stack_members(trees)


class PopulationPrograms(NamedTuple):
    """A configuration's programs (``runner.Programs`` on one device, shared with its plain
    runs: the components, abstract state, evaluation games) and the population's three:
    ``init`` (seed keys [K] -> states [K]), ``selfplay`` and ``learner`` (states [K] ->
    states, metrics [K]; both donate the states), with the member maps they run and the
    ``mesh`` whose devices hold the members (``placed`` puts stacked members there)."""

    kept: runner.Programs
    member_maps: Tuple[str, str]
    mesh: Mesh
    init: Callable
    selfplay: Callable
    learner: Callable

    def placed(self, stacked: Any) -> Any:
        """Stacked members (every member's value, the same in every process) on the
        population's devices, members split over them."""
        members = NamedSharding(self.mesh, PartitionSpec(sharding.DATA_AXIS))
        if jax.process_count() == 1:
            return jax.device_put(stacked, members)
        return jax.tree.map(lambda x: jax.make_array_from_callback(
            np.shape(x), members, lambda index, value=np.asarray(x): value[index]), stacked)


def member_maps(member_map: str = "auto", backend: Optional[str] = None) -> Tuple[str, str]:
    """The (self-play, learner) member maps of ``member_map``: one of ``MEMBER_MAPS`` for
    both phases (``groups`` for the learner only), two joined by a comma
    (``"map,unroll"``), or ``"auto"``: what ``benchmarks/population.py`` measured best on
    the backend (docs/performance.md). On a CPU that is ``map`` for self-play (its plies
    are a loop already) and ``groups`` for the learner (XLA:CPU runs convolution gradients
    inside a loop several times slower, and batched weights as grouped convolutions;
    ``unroll`` trains about as fast but compiles the step once per member); elsewhere
    ``vmap`` for both, which runs the members side by side."""
    if member_map == "auto":
        return ("map", "groups") if (backend or jax.default_backend()) == "cpu" else ("vmap", "vmap")
    names = [name.strip() for name in member_map.split(",")]
    if len(names) == 1:
        names = names * 2
    unknown = [name for name in names if name not in MEMBER_MAPS]
    if len(names) != 2 or unknown:
        raise ValueError(f"member_map: {member_map!r} is not 'auto', one of {', '.join(MEMBER_MAPS)}, "
                         f"or two of them joined by a comma (self-play, learner)")
    if names[0] == "groups":
        raise ValueError(f"member_map: {member_map!r}: 'groups' runs only the learner (e.g. 'map,groups')")
    return names[0], names[1]


_JITS: Dict[tuple, tuple] = {}


def _on_devices(fn: Callable, mesh: Mesh) -> Callable:
    """``fn`` of stacked members, each device running it on its own members (none shared)."""
    if mesh.size == 1:
        return fn
    members = PartitionSpec(sharding.DATA_AXIS)
    # Nothing is shared between devices, so the replication checks (which the
    # searches' loops with constant initial carries trip over) have nothing to check.
    return jax.shard_map(fn, mesh=mesh, in_specs=members, out_specs=members, check_vma=False)


def _population_jits(kept: runner.Programs, maps: Tuple[str, str], mesh: Mesh, arms: bool = False):
    key = (id(kept), maps, tuple(d.id for d in mesh.devices.flat), arms)
    if key in _JITS and _JITS[key][0] is kept:
        return _JITS[key][1]
    components = kept.components
    members = NamedSharding(mesh, PartitionSpec(sharding.DATA_AXIS))
    phase = lambda fn, how: jax.jit(_on_devices(over_members(functools.partial(fn, components), how), mesh),  # noqa: E731
                                    in_shardings=members, out_shardings=members, donate_argnums=0)
    if arms:  # self-play takes each member's λ and ℓ0 (the learner step does not read them)
        def arm_selfplay(pair):
            return trainer.selfplay_phase(components.with_arm(pair[0]), pair[1])

        body = _on_devices(over_members(arm_selfplay, maps[0]), mesh)
        selfplay = jax.jit(lambda values, states: body((values, states)), in_shardings=(members, members),
                           out_shardings=members, donate_argnums=1)
    else:
        selfplay = phase(trainer.selfplay_phase, maps[0])
    # The initial states as the plain runs' (one member's program, in turn).
    init = jax.jit(_on_devices(over_members(functools.partial(trainer.init_trainer, components,
                                                              window=kept.abstract.pending), "map"), mesh),
                   in_shardings=members, out_shardings=members, compiler_options=networks.RUN_ONCE_COMPILER_OPTIONS)
    if maps[1] == "groups":
        learner = _learner_in_groups(components, mesh)
    else:
        learner = phase(trainer.learner_phase_step, maps[1])
    _JITS[key] = (kept, (init, selfplay, learner))
    while len(_JITS) > 8:
        _JITS.pop(next(iter(_JITS)))
    return init, selfplay, learner


def _learner_in_groups(components: trainer.Components, mesh: Mesh) -> Callable:
    """The ``"groups"`` learner step of stacked members: one call of one program per
    group of ``LEARNER_GROUP`` members on each device (1 when a device's member count is
    odd), the group's index an argument. A call slices its group out of the members (the
    replay buffer only read), steps each member's network as the plain step does, and
    writes the group's networks, keys and metrics back in place (the states donated)."""
    step = functools.partial(trainer.learner_phase_step, components)
    members = PartitionSpec(sharding.DATA_AXIS)

    def group_size(local: int) -> int:
        return LEARNER_GROUP if local % LEARNER_GROUP == 0 else 1

    def one_group(states, metrics, group):
        size = group_size(_size(states))
        start = group * size
        stepped, group_metrics = over_members(step, "unroll")(
            jax.tree.map(lambda x: jax.lax.dynamic_slice_in_dim(x, start, size), states))
        put = lambda whole, part: jax.lax.dynamic_update_slice_in_dim(whole, part, start, 0)  # noqa: E731
        states = states._replace(train_state=jax.tree.map(put, states.train_state, stepped.train_state),
                                 rng_key=put(states.rng_key, stepped.rng_key))
        return states, jax.tree.map(put, metrics, group_metrics)

    if mesh.size > 1:
        one_group = jax.shard_map(one_group, mesh=mesh, in_specs=(members, members, PartitionSpec()),
                                  out_specs=(members, members), check_vma=False)
    placed = NamedSharding(mesh, members)
    call = jax.jit(one_group, in_shardings=(placed, placed, NamedSharding(mesh, PartitionSpec())),
                   out_shardings=(placed, placed), donate_argnums=(0, 1))

    return _GroupedLearner(call, step, placed, mesh.size, group_size)


class _GroupedLearner:
    """The ``"groups"`` learner step: ``(states) -> (states, metrics)`` as a jitted phase
    is called, and ``lower(states).compile()`` as one is compiled ahead of time."""

    def __init__(self, call: Callable, step: Callable, placed: NamedSharding, devices: int,
                 group_size: Callable[[int], int]):
        self._call, self._step, self._placed, self._devices, self._group_size = call, step, placed, devices, group_size
        self._zeros: Dict[int, Callable] = {}  # per member count: the metrics' initial zeros

    def _metrics(self, states):
        count = _size(states)
        if count not in self._zeros:
            shapes = jax.eval_shape(lambda s: over_members(self._step, "map")(s)[1], states)
            self._zeros[count] = jax.jit(lambda: jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), shapes),
                                         out_shardings=self._placed)
        return self._zeros[count]()

    def _run(self, call: Callable, states):
        metrics = self._metrics(states)
        local = _size(states) // self._devices
        for group in range(local // self._group_size(local)):
            states, metrics = call(states, metrics, np.int32(group))
        return states, metrics

    def __call__(self, states):
        return self._run(self._call, states)

    def lower(self, states) -> "_GroupedLearner._Lowered":
        return self._Lowered(self, self._call.lower(states, self._metrics(states), np.int32(0)))

    class _Lowered(NamedTuple):
        learner: Any
        lowered: Any

        def compile(self) -> Callable:
            executable = self.lowered.compile()
            return functools.partial(self.learner._run, executable)  # pylint: disable=protected-access


def programs(config: config_lib.TrainConfig, member_map: str = "auto", workdir=None, *,
             arms: Optional[trainer.ArmValues] = None) -> PopulationPrograms:
    """The population programs of ``config``'s runs (kept per configuration, maps and
    devices). The members are split over ``run.num_devices`` devices (0: all; every
    process's in a multi-host run), each member's games on one device; K must be a
    multiple of the device count.

    ``arms``: each member's λ_i [K, n] and ℓ0 [K] when the members are arms of one shape
    (``arm_values``); ``config`` is then a diverse member's, and ``selfplay`` feeds each
    member its own values (``trainer.Components.with_arm``)."""
    maps = member_maps(member_map)
    kept = runner.programs(config, workdir, num_devices=1, local=True)
    mesh = sharding.make_mesh(config.run.num_devices or None)
    init, selfplay, learner = _population_jits(kept, maps, mesh, arms=arms is not None)
    progs = PopulationPrograms(kept, maps, mesh, init, selfplay, learner)
    if arms is None:
        return progs
    placed = progs.placed(trainer.ArmValues(jnp.asarray(arms.lambdas, jnp.float32), jnp.asarray(arms.l0, jnp.float32)))
    return progs._replace(selfplay=functools.partial(selfplay, placed))


# What arms of one shape may differ in: members of one population with different values
# of these (AZdb and its λ = 1 control; a sweep's λ and ℓ0) share every program.
ARM_FIELDS = ("team.lam", "diversity.l0")
_ARM_OR_SEED = (*ARM_FIELDS, "run.seed")


def arm_values(configs: Sequence[config_lib.TrainConfig]) -> trainer.ArmValues:
    """The members' λ_i [K, n] and ℓ0 [K] of their configurations."""
    return trainer.ArmValues(
        lambdas=np.asarray([c.team.lambdas for c in configs], np.float32),
        l0=np.asarray([c.diversity.l0 for c in configs], np.float32))


def same_shape(a: config_lib.TrainConfig, b: config_lib.TrainConfig) -> bool:
    """Whether two configurations differ only in ``ARM_FIELDS`` and their seeds, so that
    their runs can be members of one population."""
    return not runs_lib.config_differences(a, b, ignore=_ARM_OR_SEED)


def _check_arm_shapes(template: trainer.TrainerState, other: trainer.TrainerState,
                      config: config_lib.TrainConfig) -> None:
    """Raises ``ValueError`` when an arm's trainer state is not the template's shape (e.g.
    ``diversity.opponent_leaves="predict"`` gives only a team with λ < 1 a second head)."""
    shapes = lambda state: jax.tree.map(lambda x: (tuple(x.shape), str(x.dtype)), state)  # noqa: E731
    if jax.tree.structure(template) != jax.tree.structure(other) or shapes(template) != shapes(other):
        raise ValueError(f"team.lam={config.team.lam}, diversity.l0={config.diversity.l0}: this arm's runs do not "
                         f"have the population's shapes (its network or state differs), so it cannot be a member")


def _arm_template(config: config_lib.TrainConfig, configs: Sequence[config_lib.TrainConfig]) -> config_lib.TrainConfig:
    """The configuration whose programs the arms share (a diverse one: its program computes
    the diversity terms), after checking that every member's differs only in ``ARM_FIELDS``."""
    for k, c in enumerate(configs):
        details = runs_lib.config_differences(config, c, ignore=_ARM_OR_SEED)
        if details:
            raise ValueError(f"member {k}'s configuration differs from the population's in {details}: members may "
                             f"differ only in {', '.join(ARM_FIELDS)} (arms of one shape) and their seeds")
    return next((c for c in configs if _diverse(c)), config)


def _diverse(config: config_lib.TrainConfig) -> bool:
    return bool(np.any(arm_values([config]).lambdas < 1.0))


def member_config(config: config_lib.TrainConfig, seed: int) -> config_lib.TrainConfig:
    """The configuration of the member of seed ``seed`` (its run's ``config.json``)."""
    return config_lib.apply_overrides(config, [f"run.seed={seed}"])


def _check_seeds(seeds: Sequence[int], unique: bool = True) -> List[int]:
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("a population needs at least one seed")
    if unique and len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds: {seeds} repeats a seed (each member is the run of its seed)")
    return seeds


def read_manifest(workdir) -> Dict[str, Any]:
    """``population.json`` of a population folder."""
    path = pathlib.Path(workdir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no population here (written by azdb_jax.population.train)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("seeds"), list):
        raise ValueError(f"{path}: no list of seeds")
    return manifest


def member_dirs(workdir) -> List[pathlib.Path]:
    """The members' run directories of a population folder, in member order."""
    manifest = read_manifest(workdir)
    return [(pathlib.Path(workdir) / m).resolve() for m in manifest.get("members", [])] or [
        member_dir(workdir, seed) for seed in manifest["seeds"]]


def train(config: config_lib.TrainConfig, workdir, seeds: Sequence[int], *, member_map: str = "auto",
          resume: bool = False, stop_after: Optional[int] = None, progress: bool = True,
          runs: Optional[Sequence[Any]] = None,
          configs: Optional[Sequence[config_lib.TrainConfig]] = None) -> Dict[str, Any]:
    """Trains (or resumes) the population of ``config`` with one member per seed in ``workdir``.

    ``config.run.seed`` is replaced by each member's seed. Each member's run directory is
    ``workdir/seed_<s>``, or ``runs[k]`` when given (e.g. a results folder's
    ``runs/<arm>_s<seed>``); ``workdir`` then holds only ``population.json``, written anew
    each time, so that runs trained or resumed apart can resume as one population. Returns a
    summary with each member's last metrics and evaluation records (``members``, in seed
    order).

    ``configs``: each member's configuration, when the members are arms of one shape
    (e.g. AZdb and its λ = 1 control): they may differ from ``config`` only in
    ``ARM_FIELDS`` (λ, ℓ0) and are trained by one program that takes each member's λ_i and
    ℓ0 as arrays; each member's run is that of its own configuration (its ``config.json``,
    its evaluations). Members of different arms may share a seed when ``runs`` names
    their directories.
    """
    seeds = _check_seeds(seeds, unique=runs is None)
    configs = [config] * len(seeds) if configs is None else list(configs)
    if len(configs) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds but {len(configs)} configurations")
    template = _arm_template(config, configs)
    # One program with each member's λ and ℓ0 as arrays, when they differ (λ = 1 teams alone
    # compute no intrinsic reward, so their ℓ0 changes nothing).
    mixed = len({(c.team.lam, c.diversity.l0) for c in configs}) > 1 and _diverse(template)
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    manifest_path = workdir / MANIFEST
    if resume and runs is None:  # named run folders (a results folder's) may resume as any population
        saved = read_manifest(workdir)
        if [int(s) for s in saved["seeds"]] != seeds:
            raise ValueError(f"{manifest_path}: the population has seeds {saved['seeds']}, not {seeds}")
    folders = [member_dir(workdir, seed) for seed in seeds] if runs is None else [pathlib.Path(r) for r in runs]
    if len(folders) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds but {len(folders)} run directories")
    if len({folder.resolve() for folder in folders}) != len(folders):
        raise ValueError(f"run directories {[str(f) for f in folders]} repeat a directory (one per member)")
    configs = [member_config(c, seed) for c, seed in zip(configs, seeds)]
    progs = programs(template if mixed else config, member_map, workdir, arms=arm_values(configs) if mixed else None)
    if len(seeds) % progs.mesh.size:
        raise ValueError(f"{len(seeds)} members cannot be split evenly over {progs.mesh.size} devices "
                         f"(run.num_devices={config.run.num_devices}; 0 means all)")
    # Each arm's runs evaluate (and restore) through its own configuration's programs.
    arm = lambda c: (c.team.lam, c.diversity.l0)  # noqa: E731
    kept = {arm(template): progs.kept}
    for c in configs:
        if arm(c) not in kept:
            kept[arm(c)] = runner.programs(c, workdir, num_devices=1, local=True)
            _check_arm_shapes(progs.kept.abstract, kept[arm(c)].abstract, c)
    files = [runner.RunFiles(c, folder, kept[arm(c)], resume=resume) for c, folder in zip(configs, folders)]
    if (not resume or runs is not None) and distributed.is_main_process():
        members = [os.path.relpath(folder.resolve(), workdir.resolve()) for folder in folders]
        arms = dict(arms=[{"team.lam": c.team.lam, "diversity.l0": c.diversity.l0} for c in configs]) if mixed else {}
        write_atomic(manifest_path, json.dumps(dict(seeds=seeds, member_maps=list(progs.member_maps),
                                                    members=members, **arms), indent=1) + "\n")
    if resume:
        step = _common_step(files)
        states = progs.placed(stack([f.restore(step) for f in files]))
    else:
        states = progs.init(progs.placed(jnp.stack([jax.random.PRNGKey(seed) for seed in seeds])))
    start = iteration = int(distributed.gather_members(states.iteration)[0])
    for f in files:
        f.open_log(start)
    iterate = functools.partial(trainer.train_iteration, progs.kept.components, selfplay_fn=progs.selfplay,
                                learner_fn=progs.learner)
    last = config.run.num_iterations if stop_after is None else min(config.run.num_iterations, start + stop_after)
    bar = tqdm.tqdm(range(start, last), initial=start, total=config.run.num_iterations,
                    disable=not progress or not distributed.is_main_process(),
                    desc=f"train {len(seeds)} members", unit="it")
    per_member: List[Dict[str, Any]] = [{} for _ in seeds]
    eval_records: List[List[Dict[str, Any]]] = [[] for _ in seeds]
    t0 = time.perf_counter()
    try:
        for _ in bar:
            started = time.perf_counter()
            states, metrics = iterate(states)
            metrics = {name: np.asarray(value) for name, value in distributed.gather_members(metrics).items()}
            seconds = round(time.perf_counter() - started, 3)
            iteration += 1  # every member's (they step together)
            for k, f in enumerate(files):
                per_member[k] = {name: float(value[k]) for name, value in metrics.items()}
                per_member[k]["iteration_seconds"] = seconds
                # Only evaluations and checkpoints need the member's state apart.
                state_k = (_member_state(states, k, progs.kept.abstract) if f.needs_state(iteration, last)
                           else _MetricsOnly(iteration))
                eval_records[k] = f.record(state_k, per_member[k], last=last)
            mean = {name: float(np.mean(value)) for name, value in metrics.items()}
            bar.set_postfix(**runner.progress_postfix(mean, progs.kept.components.diverse))
    finally:  # also on an error or Ctrl-C: checkpoints still being written are finished
        for f in files:
            f.close()
    return dict(iterations=iteration, seconds=round(time.perf_counter() - t0, 1),
                members=[dict(seed=s, last_metrics=m, last_eval=e) for s, m, e in zip(seeds, per_member, eval_records)])


def _member_state(states: trainer.TrainerState, k: int, abstract: trainer.TrainerState) -> trainer.TrainerState:
    """Member ``k``'s state apart, in every process (multi-host: its owner sends it to
    every process, bit for bit, and each holds it on its first device)."""
    if jax.process_count() == 1:
        return member(states, k)
    owned = distributed.held_member(states, k)
    local = owned if owned is not None else jax.tree.map(lambda a: np.zeros(a.shape, a.dtype), abstract)
    return jax.device_put(distributed.broadcast_exact(local, owned is not None), jax.local_devices()[0])


class _MetricsOnly(NamedTuple):
    """What ``RunFiles.record`` reads of a state in an iteration without evaluation or checkpoint."""

    iteration: Any


def _common_step(files: Sequence[runner.RunFiles]) -> int:
    """The newest checkpoint step every member holds; members' later checkpoints (a
    population stopped while saving) are removed."""
    steps = [set(f.manager.all_steps()) for f in files]
    common = set.intersection(*steps)
    if not common:
        missing = [str(f.workdir) for f, s in zip(files, steps) if not s]
        raise FileNotFoundError("no checkpoint that every member holds"
                                + (f" ({', '.join(missing)} hold none)" if missing else ""))
    step = max(common)
    for f, held in zip(files, steps):
        for later in sorted(s for s in held if s > step):
            f.manager.delete(later)
    return step
