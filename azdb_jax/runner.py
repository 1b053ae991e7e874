"""The host loop of a training run: build, init or resume, iterate, log, evaluate, save.

The training entry point (``experiments/train.py``) and the
tests call ``train``; everything numerical lives in the pure modules (``azdb_jax.trainer``
and friends); this module only composes them and owns the files of a run.
"""

import dataclasses
import functools
import json
import os
import pathlib
import time
from typing import Any, Dict, List, Optional

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from azdb_jax import adjudication, arena, checkpoint, distributed, diversity, features, learner, matchmaking
from azdb_jax import networks, opponents
from azdb_jax import config as config_lib
from azdb_jax.evaluation import reports
from azdb_jax import selfplay, sharding, trainer
from azdb_jax.envs import start_positions

# Metric fields that hold wall-clock seconds: the only ones a resumed run does not repeat.
WALL_CLOCK_FIELDS = ("iteration_seconds", "eval_seconds")

# Longest game per env, for evaluation games (pgx's own caps for the chess variants).
MAX_PLIES = {"chess": 512, "gardner_chess": 256, "connect_four": 42, "tic_tac_toe": 9}


def max_plies(env) -> int:
    return sum(env.initial_heaps) if env.id == "nim" else MAX_PLIES[env.id]


def build_components(config: config_lib.TrainConfig, workdir=None) -> trainer.Components:
    """The static parts of a run (``trainer.Components``) from its config.

    With start positions (``config.start_positions``), ``workdir`` is where the run keeps
    them: a fresh run writes its train and held-out positions there, later calls read
    them back (``envs.start_positions.prepare``).
    """
    env = config.env.make()
    team = config.team
    network = networks.make_network(config.network, num_actions=env.num_actions, num_players=team.num_players,
                                    value_d_opponent=predicts_opponent_leaves(config))
    graph_name = team.matchmaker

    def graph_fn(payoff_mean):
        return matchmaking.interaction_graphs(graph_name, payoff_mean)

    return trainer.Components(
        env=env,
        network=network,
        optimizer=learner.make_optimizer(config.learner),
        feature_fn=features.feature_fn(env),
        lambdas=diversity.lambdas(team.num_players, team.lam),
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


# ------------------------------------------------------------------ files

# Fields a resumed run may change: none of them changes what the run computes (how long
# it runs, how often and how many checkpoints it keeps). Raising run.num_iterations
# continues a finished run exactly as if it had been planned longer.
RESUMABLE_FIELDS = ("run.num_iterations", "run.checkpoint_every", "run.keep_checkpoints")


def check_resumable(saved: config_lib.TrainConfig, asked: config_lib.TrainConfig, *, source: str) -> None:
    """Raises ``ValueError`` naming every field where ``asked`` differs from ``saved``,
    other than ``RESUMABLE_FIELDS``."""
    flat_saved, flat_asked = _flat(config_lib.to_dict(saved)), _flat(config_lib.to_dict(asked))
    changed = [name for name in sorted(set(flat_saved) | set(flat_asked))
               if flat_saved.get(name) != flat_asked.get(name) and name not in RESUMABLE_FIELDS]
    if changed:
        details = "; ".join(f"{name}: {flat_saved.get(name)!r} -> {flat_asked.get(name)!r}" for name in changed[:5])
        raise ValueError(f"a resumed run can change only {', '.join(RESUMABLE_FIELDS)}; {source} differs in "
                         f"{details} (start a new --workdir to change these)")


def _flat(tree: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}.{key}" if prefix else key
        out.update(_flat(value, name) if isinstance(value, dict) else {name: value})
    return out



def predicts_opponent_leaves(config: config_lib.TrainConfig) -> bool:
    """Whether the run's network has the opponent-to-move intrinsic head
    (``diversity.opponent_leaves="predict"`` in a team with λ < 1)."""
    return config.diversity.opponent_leaves == "predict" and config.team.lam < 1.0


# Fields whose default changed: a saved config without them was written by code that
# behaved as the old default.
_FORMER_DEFAULTS = {("diversity", "opponent_leaves"): "drop"}


def load_run_config(workdir: pathlib.Path) -> config_lib.TrainConfig:
    path = pathlib.Path(workdir) / "config.json"
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


class MetricsLog:
    """metrics.jsonl plus TensorBoard scalars; on resume, records past the checkpoint are dropped.

    Multi-host, only process 0 writes (the records are the same on every process).

    ``drop_final_eval``: also drop the evaluation records at ``keep_up_to`` itself (the
    end-of-run evaluation of a run that is now continued past its planned end, which a
    run planned longer from the start would not have played there).
    """

    def __init__(self, workdir: pathlib.Path, keep_up_to: Optional[int], *, drop_final_eval: bool = False):
        self.path = workdir / "metrics.jsonl"
        self.enabled = distributed.is_main_process()
        self._tb = None
        if not self.enabled:
            return
        lines = self.path.read_text().splitlines() if self.path.exists() and keep_up_to is not None else []
        kept = []
        for line in lines:
            record = json.loads(line)
            at_end = record["iteration"] == keep_up_to
            if record["iteration"] <= keep_up_to and not (drop_final_eval and at_end and record.get("kind") == "eval"):
                kept.append(line)
        reports.write_atomic(self.path, "".join(line + "\n" for line in kept))
        try:
            from tensorboardX import SummaryWriter  # pylint: disable=g-import-not-at-top

            # Purging from keep_up_to itself removes the dropped evaluation; the kept
            # records of that iteration are written again.
            purge = (keep_up_to or 0) + (0 if drop_final_eval else 1)
            self._tb = SummaryWriter(str(workdir / "tb"), purge_step=purge)
            if drop_final_eval:
                for line in kept:
                    record = json.loads(line)
                    if record["iteration"] == keep_up_to:
                        self._write_tb(record)
        except ImportError:  # TensorBoard output is optional
            pass

    def write(self, record: Dict[str, Any]) -> None:
        if not self.enabled:
            return
        with self.path.open("a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
        if self._tb is not None:
            self._write_tb(record)

    def _write_tb(self, record: Dict[str, Any]) -> None:
        step = record["iteration"]
        for name, value in record.items():
            if isinstance(value, (int, float)) and name != "iteration":
                self._tb.add_scalar(f"{record.get('kind', 'train')}/{name}", value, step)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


def _save_psi(workdir: pathlib.Path, iteration: int, expected_features) -> None:
    """ψ snapshot for occupancy heatmaps: psi [n, F], psi_by_colour [n, 2, F] (0 = White)."""
    folder = workdir / "psi"
    folder.mkdir(exist_ok=True)
    arrays = {name: np.asarray(value) for name, value in jax.device_get(expected_features._asdict()).items()}
    tmp = folder / f"psi_{iteration:07d}.tmp.npz"
    np.savez(tmp, iteration=iteration, **arrays)
    os.replace(tmp, folder / f"psi_{iteration:07d}.npz")


def _save_graph(workdir: pathlib.Path, iteration: int, graph, payoff, name: str) -> None:
    """The interaction graphs Σ_w, Σ_b and the payoff matrix as PNG heatmaps and npz."""
    from azdb_jax import plots  # pylint: disable=g-import-not-at-top  (matplotlib only when used)

    folder = workdir / "graphs"
    folder.mkdir(exist_ok=True)
    white, black = np.asarray(graph.white), np.asarray(graph.black)
    mean, counts = np.asarray(payoff.mean), np.asarray(payoff.counts)
    np.savez(folder / f"graph_{iteration:07d}.npz", sigma_white=white, sigma_black=black, payoff=mean, counts=counts)
    fig = plots.interaction_graph_figure(white, black, mean, title=f"{name}, iteration {iteration}")
    plots.save_figure(fig, folder / f"graph_{iteration:07d}.png")


# ------------------------------------------------------------------ evaluation


class Evaluator:
    """Plays team players against fixed opponents and the previous evaluation's network.

    Each player searches as in self-play (SPEC §2): its latent, its ``λ_i`` and, when the
    run's searches carry it, the intrinsic reward of the ψ that goes with the network
    (the current ψ for the current network; the previous network plays with its own).
    Games end by the game's rules or at ``run.eval_max_plies``, where
    ``run.eval_adjudication`` scores them (``azdb_jax.adjudication``); ``run.eval_players``
    limits the players evaluated. Each record carries the evaluation's wall time.
    """

    def __init__(self, config: config_lib.TrainConfig, components: trainer.Components):
        env = components.env
        self.config = config
        self.num_games = config.run.eval_games + config.run.eval_games % 2
        search_config = config_lib.dataclasses.replace(config.search, num_simulations=config.run.eval_simulations)
        cap = config.run.eval_max_plies or max_plies(env)
        adjudicate = adjudication.adjudicator(env, config.run.eval_adjudication)
        lambdas = jnp.asarray(components.lambdas)
        with_reward = components.diverse and config.diversity.in_search
        reward_fn = functools.partial(diversity.team_intrinsic_reward, l0=config.diversity.l0) if with_reward else None
        feature_fn = components.feature_fn if with_reward else None

        def agent(params, rng_key, state):
            net_params, psi, player = params
            return opponents.search_policy(
                env, components.network.apply, search_config, player=player, lam=lambdas[player],
                feature_fn=feature_fn, intrinsic_reward_fn=reward_fn, hook_params=psi if with_reward else None,
            )(net_params, rng_key, state)

        available = dict(opponents.opponents_for(env.id, env), previous=agent)
        chosen = config.run.eval_opponents or tuple(available)
        try:  # classical alpha-beta specs (alphabeta:depth=2) search on the host at every ply
            available.update(opponents.classical_opponents(env, chosen))
        except ValueError as e:
            raise ValueError(f"run.eval_opponents: {e}") from None
        unknown = [name for name in chosen if name not in available]
        if unknown:
            raise ValueError(f"run.eval_opponents: no opponent {', '.join(map(repr, unknown))} for {env.id}; "
                             f"available: {', '.join(available)}")
        self._games = {}
        for name, opponent in ((name, available[name]) for name in chosen):
            play = functools.partial(arena.play_games, env, agent, policy_b=opponent, num_games=self.num_games,
                                     max_plies=cap, adjudicate=adjudicate)
            self._games[name] = jax.jit(lambda pa, pb, key, play=play: play(params_a=pa, params_b=pb, rng_key=key))
        self.previous = None  # the previous evaluation's network parameters
        self.previous_psi = None  # [n, F] the ψ that went with them
        num_players = components.lambdas.shape[0]
        self.players = list(range(min(config.run.eval_players or num_players, num_players)))

    def __call__(self, params, rng_key, iteration: int, psi, *, update_previous: bool = True) -> List[Dict[str, Any]]:
        """Evaluation records of ``params`` with the team's expected features ``psi`` [n, F].

        ``update_previous=False`` (the end-of-run evaluation between scheduled ones) keeps
        the "previous" network as it was, so that continuing the run later plays exactly as
        a run planned longer would.
        """
        start = time.perf_counter()
        records = []
        for player in self.players:
            for name, play in self._games.items():
                if name == "previous" and self.previous is None:
                    continue
                opponent_params = ((self.previous, self.previous_psi, jnp.int32(player)) if name == "previous"
                                   else None)
                rng_key, key = jax.random.split(rng_key)
                results = jax.device_get(play((params, psi, jnp.int32(player)), opponent_params, key))
                summary = arena.summarize(results)
                records.append(dict(kind="eval", iteration=iteration, player=player, opponent=name,
                                    wins=summary["wins"], draws=summary["draws"], losses=summary["losses"],
                                    score=summary["score"], unfinished=summary["unfinished"],
                                    adjudicated=summary["adjudicated"], mean_length=summary["mean_length"]))
        if update_previous:
            self.previous = jax.tree.map(jnp.copy, params)  # the live params are donated to the next iteration
            self.previous_psi = jnp.copy(psi)
        seconds = round(time.perf_counter() - start, 2)
        for record in records:
            record["eval_seconds"] = seconds
        return records


# ------------------------------------------------------------------ checkpoints


def _with_shardings(abstract: Any, shardings: Any) -> Any:
    return jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, shardings)


def _to_run_state(state: trainer.TrainerState, previous_params: Any, with_replay: bool,
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


def _from_run_state(run_state: checkpoint.RunState, abstract_for_replay: Optional[trainer.TrainerState],
                    shardings: Any):
    """Inverse of ``_to_run_state``: (trainer state, previous params or None, their ψ or None).

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
        manager.save(int(state.iteration), _to_run_state(state, None, False), config=config)
    reports.write_atomic(workdir / "config.json", config_lib.to_json(config))
    return workdir


# Arrays of the run state added after runs were saved, and how a checkpoint without them
# is completed: the evaluator's previous ψ (then the restored ψ) and the intrinsic part of
# the search values of the pending window (then 0, what a window without diversity has).
_PREVIOUS_PSI = "extra/previous_psi"
_PENDING_INTRINSIC = "extra/pending/search_value_intrinsic"


def _restore(manager: checkpoint.RunCheckpointer, step: Optional[int], target: checkpoint.RunState,
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


def load_run(workdir, step: Optional[int] = None, *, with_replay: bool = False):
    """(config, components, trainer state) of a saved run, at ``step`` (default: latest).

    The replay buffer is read only with ``with_replay`` (evaluation needs the network, ψ
    and payoffs, not the buffer); otherwise the state's buffer is empty. So a run saved
    before the buffer gained fields (e.g. the opponent's latent for
    ``diversity.opponent_leaves="predict"``) still loads for evaluation.
    """
    workdir = pathlib.Path(workdir)
    config = load_run_config(workdir)
    components = build_components(config, workdir)
    abstract = jax.eval_shape(functools.partial(trainer.init_trainer, components), jax.random.PRNGKey(0))
    read_replay = with_replay and config.run.checkpoint_replay
    with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
        target = _to_run_state(abstract, abstract.train_state.params, read_replay)
        restored = _restore(manager, step, target, config)
    state, _, _ = _from_run_state(restored, None if read_replay else abstract,
                                  sharding.trainer_state_shardings(sharding.make_mesh(1, local=True), abstract))
    return config, components, state


# ------------------------------------------------------------------ the loop


def train(config: config_lib.TrainConfig, workdir, *, resume: bool = False,
          stop_after: Optional[int] = None, progress: bool = True) -> Dict[str, Any]:
    """Runs (or resumes) the training run of ``config`` in ``workdir``; returns a summary."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    manager = checkpoint.RunCheckpointer(
        str(workdir / "checkpoints"),
        checkpoint.CheckpointConfig(max_to_keep=config.run.keep_checkpoints, save_replay=config.run.checkpoint_replay))
    if resume:
        check_resumable(load_run_config(workdir), config, source=f"{workdir}/config.json")
    elif manager.latest_step() is not None:
        raise ValueError(f"{workdir} already holds checkpoints; pass --resume or choose a new --workdir")
    elif distributed.is_main_process():
        reports.write_atomic(workdir / "config.json", config_lib.to_json(config))

    components = build_components(config, workdir)
    mesh = sharding.make_mesh(config.run.num_devices or None)
    sharding.check_divisible(mesh, config.selfplay.num_games, config.run.batch_size)
    seed_key = jax.random.PRNGKey(config.run.seed)
    abstract = jax.eval_shape(functools.partial(trainer.init_trainer, components), seed_key)
    shardings = sharding.trainer_state_shardings(mesh, abstract)
    evaluator = Evaluator(config, components) if config.run.eval_every else None

    if resume:
        step = manager.latest_step()
        if step is None:
            raise FileNotFoundError(f"{workdir}/checkpoints: no checkpoint to resume from")
        target = _to_run_state(_with_shardings(abstract, shardings), _with_shardings(
            abstract.train_state.params, shardings.train_state.params), config.run.checkpoint_replay)
        saved_with = config_lib.from_dict(config_lib.TrainConfig, manager.read_config(step),
                                          where=f"{manager.step_path(step)} (config)")
        check_resumable(saved_with, config, source=f"checkpoint {manager.step_path(step)}")
        restored = _restore(manager, step, target, saved_with)
        state, previous, previous_psi = _from_run_state(
            restored, abstract if not config.run.checkpoint_replay else None, shardings)
        if int(state.iteration) > config.run.num_iterations:
            raise ValueError(f"run.num_iterations={config.run.num_iterations}: the run in {workdir} is already at "
                             f"iteration {int(state.iteration)}")
        if evaluator is not None:
            evaluator.previous, evaluator.previous_psi = previous, previous_psi
        if distributed.is_main_process():
            reports.write_atomic(workdir / "config.json", config_lib.to_json(config))
    else:
        state = jax.jit(functools.partial(trainer.init_trainer, components), out_shardings=shardings)(seed_key)
    start = int(state.iteration)
    # A run continued past its planned end drops that end's extra evaluation (see Evaluator).
    continued = resume and bool(config.run.eval_every) and start % config.run.eval_every != 0
    log = MetricsLog(workdir, keep_up_to=start if resume else None,
                     drop_final_eval=continued and start < config.run.num_iterations)

    graph_fn = jax.jit(components.graph_fn)
    selfplay_fn = jax.jit(functools.partial(trainer.selfplay_phase, components),
                          in_shardings=(shardings,), out_shardings=(shardings, None), donate_argnums=0)
    learner_fn = jax.jit(functools.partial(trainer.learner_phase_step, components),
                         in_shardings=(shardings,), out_shardings=(shardings, None), donate_argnums=0)
    iterate = functools.partial(trainer.train_iteration, components, selfplay_fn=selfplay_fn, learner_fn=learner_fn)
    last = config.run.num_iterations if stop_after is None else min(config.run.num_iterations, start + stop_after)
    bar = tqdm.tqdm(range(start, last), initial=start, total=config.run.num_iterations,
                    disable=not progress or not distributed.is_main_process(), desc="train", unit="it")
    metrics: Dict[str, Any] = {}
    eval_records: List[Dict[str, Any]] = []
    t0 = time.perf_counter()
    for _ in bar:
        started = time.perf_counter()
        state, metrics = iterate(state)
        metrics = {name: float(value) for name, value in jax.device_get(metrics).items()}
        metrics["iteration_seconds"] = round(time.perf_counter() - started, 3)
        iteration = int(state.iteration)
        log.write(dict(kind="train", iteration=iteration, **metrics))
        postfix = dict(loss=f"{metrics['loss']:.3f}", games=int(metrics["games_finished"]))
        if components.diverse:  # a run whose diversity reward takes over shows it here
            postfix.update(plies=f"{metrics['plies_per_game']:.0f}", intrinsic=f"{metrics['intrinsic_share']:.2f}")
        bar.set_postfix(**postfix)
        scheduled = evaluator is not None and iteration % config.run.eval_every == 0
        if evaluator is not None and (scheduled or iteration == config.run.num_iterations):
            eval_key = jax.random.fold_in(jax.random.PRNGKey(config.run.seed + 1), iteration)
            eval_records = evaluator(state.train_state.params, eval_key, iteration, state.expected_features.psi,
                                     update_previous=scheduled)
            for record in eval_records:
                log.write(record)
        if (config.run.checkpoint_every and iteration % config.run.checkpoint_every == 0) or iteration == last:
            graph = graph_fn(state.payoff.mean)  # on every process: all take part in jitted calls
            if distributed.is_main_process():
                _save_psi(workdir, iteration, state.expected_features)
                _save_graph(workdir, iteration, graph, state.payoff, config.team.matchmaker)
            previous = evaluator.previous if evaluator is not None else None
            previous_psi = evaluator.previous_psi if evaluator is not None else None
            manager.save(iteration, _to_run_state(state, previous, config.run.checkpoint_replay, previous_psi),
                         config=config)
    log.close()
    manager.close()
    return dict(iterations=int(state.iteration), seconds=round(time.perf_counter() - t0, 1),
                last_metrics=metrics, last_eval=eval_records)
