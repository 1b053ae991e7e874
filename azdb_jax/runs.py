"""A run's files read back: its config, metrics and checkpoints, and the parts built from them.

A training run (``azdb_jax.runner.train``) writes ``config.json``, ``metrics.jsonl`` and
``checkpoints/`` into its directory. This module reads them — ``load_run_config``,
``read_metrics``, ``load_agent`` (the team a checkpoint holds, as the library's one agent
type, reading only what play needs), ``load_run`` (config, components and trainer state
at a checkpoint, for what needs the training state: resuming, payoffs) —
converts between the trainer's state and a checkpoint's ``RunState`` (``write_run``
saves a derived network as a run of its own), and builds a run's static parts from its
config (``build_components``), which training and loading share. Evaluation code reads
runs through here and never imports the training loop.
"""

import collections
import dataclasses
import functools
import json
import pathlib
from typing import Any, Dict, List, Optional, Sequence

import jax
import jax.numpy as jnp

from azdb_jax import agent as agent_lib
from azdb_jax import checkpoint, features, learner, matchmaking, selfplay, sharding, trainer
from azdb_jax import config as config_lib
from azdb_jax import start_positions, team_files
from azdb_jax.files import write_atomic

# Metric fields that hold wall-clock seconds: the only ones a resumed run does not repeat.
WALL_CLOCK_FIELDS = ("iteration_seconds", "eval_seconds")


def build_components(config: config_lib.TrainConfig, workdir=None) -> trainer.Components:
    """The static parts of a run (``trainer.Components``) from its config.

    With start positions (``config.start_positions``), ``workdir`` is where the run keeps
    them: a fresh run writes its train and held-out positions there, later calls read
    them back (``start_positions.prepare``).
    """
    env = config.env.make()
    team = config.team
    network = agent_lib.make_network(config, env)
    graph_name = team.matchmaker

    def graph_fn(payoff_mean):
        return matchmaking.interaction_graphs(graph_name, payoff_mean)

    return trainer.Components(
        env=env,
        network=network,
        optimizer=learner.make_optimizer(config.learner),
        feature_fn=features.feature_fn(env),
        lambdas=jnp.asarray(team.lambdas, jnp.float32),
        graph_fn=graph_fn,
        selfplay_config=config.selfplay,
        search_config=config.search,
        replay_config=config.replay,
        learner_config=config.learner,
        store_fraction=config.run.store_fraction,
        batch_size=config.run.batch_size,
        learner_steps=config.run.learner_steps,
        diversity_config=config.diversity,
        init_fn=start_positions.make_init_fn(env, config.start_positions, workdir),
        payoff_config=config.payoff,
    )


# ------------------------------------------------------------------ config and metrics

# Fields a resumed run may change: none of them changes what the run computes (how long
# it runs, how often and how many checkpoints it keeps, whether they are written in the
# background). Raising run.num_iterations continues a finished run exactly as if it had
# been planned longer.
RESUMABLE_FIELDS = ("run.num_iterations", "run.checkpoint_every", "run.keep_checkpoints", "run.checkpoint_async")


def config_differences(a: config_lib.TrainConfig, b: config_lib.TrainConfig, *,
                       ignore: Sequence[str] = ()) -> str:
    """The fields (``section.field``) where ``b`` differs from ``a``, other than ``ignore``,
    as ``"name: a -> b; ..."`` (the first five), or ``""`` when none does."""
    flat_a, flat_b = flatten_config(config_lib.to_dict(a)), flatten_config(config_lib.to_dict(b))
    changed = [name for name in sorted(set(flat_a) | set(flat_b))
               if flat_a.get(name) != flat_b.get(name) and name not in ignore]
    return "; ".join(f"{name}: {flat_a.get(name)!r} -> {flat_b.get(name)!r}" for name in changed[:5])


def check_resumable(saved: config_lib.TrainConfig, asked: config_lib.TrainConfig, *, source: str) -> None:
    """Raises ``ValueError`` naming every field where ``asked`` differs from ``saved``,
    other than ``RESUMABLE_FIELDS``."""
    details = config_differences(saved, asked, ignore=RESUMABLE_FIELDS)
    if details:
        raise ValueError(f"a resumed run can change only {', '.join(RESUMABLE_FIELDS)}; {source} differs in "
                         f"{details} (start a new --workdir to change these)")


def _as_saved_at(config: config_lib.TrainConfig, saved: Dict[str, Any]) -> config_lib.TrainConfig:
    """``config`` with the ``RESUMABLE_FIELDS`` of a checkpoint's saved config: a run continued
    with a larger ``run.num_iterations`` (or other checkpointing) still loads its earlier
    checkpoints; any other difference is still refused by the checkpoint's config check."""
    run = saved.get("run", {}) if isinstance(saved, dict) else {}
    fields = {name: run[name] for name in (f.removeprefix("run.") for f in RESUMABLE_FIELDS) if name in run}
    return dataclasses.replace(config, run=dataclasses.replace(config.run, **fields))


def flatten_config(tree: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}.{key}" if prefix else key
        out.update(flatten_config(value, name) if isinstance(value, dict) else {name: value})
    return out



predicts_opponent_leaves = agent_lib.predicts_opponent_leaves


# Fields whose default changed: a saved config without them was written by code that
# behaved as the old default.
_FORMER_DEFAULTS = {("diversity", "opponent_leaves"): "drop"}


def load_run_config(workdir: pathlib.Path) -> config_lib.TrainConfig:
    """The run's ``config.json`` as a ``TrainConfig`` (``workdir`` may be ``pretrained:NAME``)."""
    workdir = team_files.resolve(workdir)
    path = workdir / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no config.json, so {workdir} holds no run to resume")
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if isinstance(data, dict):
        for (section, field), value in _FORMER_DEFAULTS.items():
            part = data.setdefault(section, {})
            if isinstance(part, dict):
                part.setdefault(field, value)
    return config_lib.from_dict(config_lib.TrainConfig, data, where=str(path))


def read_metrics(workdir, *, wall_clock: bool = True) -> List[Dict[str, Any]]:
    """The records of ``<workdir>/metrics.jsonl`` in order; ``wall_clock=False`` drops the
    ``WALL_CLOCK_FIELDS`` (so a resumed run's records equal an uninterrupted run's)."""
    path = pathlib.Path(workdir) / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: is {workdir} a training run?")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            if line.strip():
                records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{number}: not a JSON record ({e.msg})") from None
    return records if wall_clock else [{k: v for k, v in r.items() if k not in WALL_CLOCK_FIELDS} for r in records]


# ------------------------------------------------------------------ checkpoints


def to_run_state(state: trainer.TrainerState, previous_params: Any, with_replay: bool,
                  previous_psi: Any = None) -> checkpoint.RunState:
    """A trainer state (plus the evaluator's previous network and its ψ) as a checkpoint."""
    has_previous = previous_params is not None
    extra = dict(games=state.games, pending=state.pending, payoff=state.payoff, iteration=state.iteration,
                 expected_features=state.expected_features,
                 previous_params=previous_params if has_previous else state.train_state.params,
                 previous_psi=previous_psi if has_previous and previous_psi is not None else state.expected_features.psi,
                 has_previous=jnp.asarray(has_previous))
    return checkpoint.RunState(params=state.train_state.params, opt_state=state.train_state.opt_state,
                               step=state.train_state.step, rng_key=state.rng_key,
                               replay=state.replay if with_replay else None, extra=extra)


def from_run_state(run_state: checkpoint.RunState, abstract_for_replay: Optional[trainer.TrainerState],
                    shardings: Any):
    """Inverse of ``to_run_state``: (trainer state, previous params or None, their ψ or None).

    An unsaved replay buffer comes back empty."""
    extra = run_state.extra
    replay_state = run_state.replay
    if replay_state is None:  # the run chose not to checkpoint its buffer: restart it empty
        replay_state = jax.jit(lambda: jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), abstract_for_replay.replay),
                               out_shardings=shardings.replay)()
    state = trainer.TrainerState(
        train_state=learner.TrainState(params=run_state.params, opt_state=run_state.opt_state, step=run_state.step),
        replay=replay_state, games=extra["games"], pending=extra["pending"], payoff=extra["payoff"],
        expected_features=extra["expected_features"], rng_key=run_state.rng_key, iteration=extra["iteration"])
    has_previous = bool(extra["has_previous"])
    previous = extra["previous_params"] if has_previous else None
    return state, previous, extra["previous_psi"] if has_previous else None


def write_run(workdir, config: config_lib.TrainConfig, state: trainer.TrainerState, *,
              params: Any = None) -> pathlib.Path:
    """Saves ``state`` (with its network replaced by ``params`` when given) as a new run in
    ``workdir``: ``config.json`` and one checkpoint at the state's iteration, without the
    replay buffer. For networks derived from a run (``azdb_jax.skill.attuned`` fine-tunes
    one): ``load_run`` and ``evaluation.loading.load_team`` read it like any run.

    Raises:
      ValueError: ``workdir`` already holds a run.
    """
    workdir = pathlib.Path(workdir)
    if (workdir / "config.json").exists() or (workdir / "checkpoints").exists():
        raise ValueError(f"{workdir} already holds a run; choose a new directory")
    workdir.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(config, run=dataclasses.replace(config.run, checkpoint_replay=False))
    if params is not None:
        state = state._replace(train_state=state.train_state._replace(params=params))
    with checkpoint.RunCheckpointer(str(workdir / "checkpoints"),
                                    checkpoint.CheckpointConfig(save_replay=False)) as manager:
        manager.save(int(state.iteration), to_run_state(state, None, False), config=config)
    write_atomic(workdir / "config.json", config_lib.to_json(config))
    return workdir


# Arrays of the run state added after runs were saved, and how a checkpoint without them
# is completed: the evaluator's previous ψ (then the restored ψ) and the intrinsic part of
# the search values of the pending window (then 0, what a window without diversity has).
_PREVIOUS_PSI = "extra/previous_psi"
_PENDING_INTRINSIC = "extra/pending/search_value_intrinsic"


def restore_run_state(manager: checkpoint.RunCheckpointer, step: Optional[int], target: checkpoint.RunState,
             config: config_lib.TrainConfig) -> checkpoint.RunState:
    """``manager.restore``, also for checkpoints written before an array was added to the run
    state (``_PREVIOUS_PSI``, ``_PENDING_INTRINSIC``): those are filled as said there."""
    try:
        return manager.restore(step, target=target, config=config)
    except checkpoint.CheckpointError as e:
        absent = [name for name in (_PREVIOUS_PSI, _PENDING_INTRINSIC) if f"'{name}'" in str(e)]
        if not absent:
            raise
    extra = dict(target.extra)
    if _PREVIOUS_PSI in absent:
        del extra["previous_psi"]
    if _PENDING_INTRINSIC in absent:
        extra["pending"] = {k: v for k, v in extra["pending"]._asdict().items() if k != "search_value_intrinsic"}
    restored = manager.restore(step, target=target._replace(extra=extra), config=config)
    extra = dict(restored.extra)
    if _PREVIOUS_PSI in absent:
        extra["previous_psi"] = extra["expected_features"].psi
    if _PENDING_INTRINSIC in absent:
        pending = extra["pending"]
        extra["pending"] = selfplay.Transition(**pending, search_value_intrinsic=jnp.zeros_like(pending["search_value"]))
    return restored._replace(extra=extra)


_ABSTRACT_STATES: "collections.OrderedDict[str, trainer.TrainerState]" = collections.OrderedDict()
_ABSTRACT_STATES_KEPT = 16
# Fields that change no shape of the trainer state: runs differing only in them share one.
_SHAPELESS_FIELDS = (*RESUMABLE_FIELDS, "run.seed")


def abstract_state(config: config_lib.TrainConfig, components: trainer.Components) -> trainer.TrainerState:
    """The shapes and dtypes of ``config``'s trainer state (``jax.ShapeDtypeStruct`` leaves).

    Finding them traces a whole self-play iteration (seconds), so they are kept per
    configuration for the process: loading several checkpoints of a run, or runs that
    differ only in their seed or length (``_SHAPELESS_FIELDS``), traces it once. The
    shapes follow from the configuration alone (``components`` must be
    ``build_components(config, ...)``).
    """
    flat = flatten_config(config_lib.to_dict(config))
    key = json.dumps({k: v for k, v in flat.items() if k not in _SHAPELESS_FIELDS}, sort_keys=True)
    if key in _ABSTRACT_STATES:
        _ABSTRACT_STATES.move_to_end(key)
    else:
        _ABSTRACT_STATES[key] = jax.eval_shape(functools.partial(trainer.init_trainer, components),
                                               jax.random.PRNGKey(0))
        while len(_ABSTRACT_STATES) > _ABSTRACT_STATES_KEPT:
            _ABSTRACT_STATES.popitem(last=False)
    return _ABSTRACT_STATES[key]


def load_run(workdir, step: Optional[int] = None, *, with_replay: bool = False):
    """(config, components, trainer state) of a saved run, at ``step`` (default: latest).

    The replay buffer is read only with ``with_replay`` (evaluation needs the network, ψ
    and payoffs, not the buffer); otherwise the state's buffer is empty. So a run saved
    before the buffer gained fields (e.g. the opponent's latent for
    ``diversity.opponent_leaves="predict"``) still loads for evaluation.
    """
    if team_files.is_pretrained(workdir) or (pathlib.Path(workdir) / team_files.MANIFEST).is_file():
        raise ValueError(f"{workdir} is a shipped team to play (parameters and ψ), not a training state to resume or "
                         "read payoffs from: load it with runs.load_agent or azdb_jax.pretrained.load")
    workdir = pathlib.Path(workdir)
    config = load_run_config(workdir)
    components = build_components(config, workdir)
    abstract = abstract_state(config, components)
    read_replay = with_replay and config.run.checkpoint_replay
    with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
        target = to_run_state(abstract, abstract.train_state.params, read_replay)
        restored = restore_run_state(manager, step, target, _as_saved_at(config, manager.read_config(step)))
    state, _, _ = from_run_state(restored, None if read_replay else abstract,
                                  sharding.trainer_state_shardings(sharding.make_mesh(1, local=True), abstract))
    return config, components, state


def load_agent(workdir, step: Optional[int] = None, *, num_simulations: Optional[int] = None,
               extrinsic_only: bool = False, name: Optional[str] = None) -> agent_lib.Agent:
    """The team a run saved, as an ``Agent`` (``azdb_jax.agent``), at ``step`` (default: latest).

    Reads what play needs and nothing else: the run's ``config.json`` and, from the
    checkpoint, the network parameters, the expected features ψ and the iteration. No
    optimizer, replay buffer, matchmaker or start positions are built, and nothing is
    written. The agent searches as its players did in self-play (SPEC §2): each player's
    ``λ_i`` (``λ_0 = 1``), the intrinsic reward of ψ with the run's ℓ0, ``v_d`` at the
    leaves, no root noise; ``extrinsic_only=True`` is the paper's ablation (λ = 1 for
    every player), and its name then ends in ``/extrinsic_only``.

    Args:
      workdir: the run directory (holds ``config.json`` and ``checkpoints/``), or
        ``pretrained:NAME`` for a team shipped in the package (``azdb_jax.pretrained``).
      step: checkpoint step (iteration); default the latest.
      num_simulations: evaluation search budget; default the run's ``run.eval_simulations``.
      extrinsic_only: search with λ = 1 for every player (the ablation).
      name: label; default ``<workdir name>@<step>`` (plus ``/extrinsic_only``).

    Raises:
      FileNotFoundError / ValueError: no run, or a config.json that does not parse.
      checkpoint.CheckpointError: a missing, corrupt or mismatched checkpoint.
    """
    spec = workdir
    workdir = team_files.resolve(workdir)
    config = load_run_config(workdir)
    with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
        step = manager.resolve_step(step)
        step, parts = manager.restore_parts(step, parts=("params", _PSI, _ITERATION),
                                            config=_as_saved_at(config, manager.read_config(step)))
    psi = parts[_PSI]
    if tuple(psi.shape)[:1] != (config.team.num_players,):
        raise checkpoint.CheckpointError(f"checkpoint {workdir}/checkpoints/{step}: ψ has shape {tuple(psi.shape)}, "
                                         f"but the run's team has {config.team.num_players} players")
    saved_step = int(parts[_ITERATION])
    search_config = dataclasses.replace(config.search, num_simulations=num_simulations or config.run.eval_simulations)
    label = spec if team_files.is_pretrained(spec) else workdir.name
    default_name = f"{label}@{saved_step}" + ("/extrinsic_only" if extrinsic_only else "")
    return agent_lib.Agent.from_config(config, parts["params"], psi, search_config=search_config,
                                       extrinsic_only=extrinsic_only, name=name or default_name, step=saved_step)


_PSI = "extra/expected_features/psi"
_ITERATION = "extra/iteration"
