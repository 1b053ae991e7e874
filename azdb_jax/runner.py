"""The host loop of a training run: build, init or resume, iterate, log, evaluate, save.

The training entry point (``experiments/train.py``) and the
tests call ``train``; everything numerical lives in the pure modules (``azdb_jax.trainer``
and friends); this module only composes them and writes the files of a run. Reading a
run back (its config, metrics and checkpoints) is ``azdb_jax.runs``; its names stay
importable from here.
"""

import collections
import functools
import hashlib
import json
import os
import pathlib
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from azdb_jax import (adjudication, arena, checkpoint, distributed, games, networks, opponents, sharding,
                      start_positions, trainer)
from azdb_jax import config as config_lib
from azdb_jax.files import write_atomic
from azdb_jax.runs import (RESUMABLE_FIELDS, abstract_state, build_components, check_resumable, flatten_config,
                            from_run_state, load_run_config, restore_run_state, to_run_state)


# ------------------------------------------------------------------ files


class MetricsLog:
    """metrics.jsonl plus TensorBoard scalars; on resume, records past the checkpoint are dropped.

    Multi-host, only process 0 writes (the records are the same on every process).

    ``drop_final_eval``: also drop the evaluation records at ``keep_up_to`` itself (the
    end-of-run evaluation of a run that is now continued past its planned end, which a
    run planned longer from the start would not have played there).
    """

    def __init__(self, workdir: pathlib.Path, keep_up_to: Optional[int], *, drop_final_eval: bool = False,
                 sinks: Sequence[Any] = ()):
        self.path = workdir / "metrics.jsonl"
        self.enabled = distributed.is_main_process()
        self._tb = None
        self._sinks = tuple(sinks)  # more loggers of each record (write, close), e.g. wandb_log.WandbLog
        if not self.enabled:
            return
        lines = self.path.read_text().splitlines() if self.path.exists() and keep_up_to is not None else []
        kept = []
        for line in lines:
            record = json.loads(line)
            at_end = record["iteration"] == keep_up_to
            if record["iteration"] <= keep_up_to and not (drop_final_eval and at_end and record.get("kind") == "eval"):
                kept.append(line)
        write_atomic(self.path, "".join(line + "\n" for line in kept))
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
        for sink in self._sinks:
            sink.write(record)

    def _write_tb(self, record: Dict[str, Any]) -> None:
        step = record["iteration"]
        for name, value in record.items():
            if isinstance(value, (int, float)) and name != "iteration":
                self._tb.add_scalar(f"{record.get('kind', 'train')}/{name}", value, step)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        for sink in self._sinks:
            sink.close()


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


class EvaluationGames(NamedTuple):
    """An evaluator's games: the team player's policy against its opponents, as one program.

    ``play(params_a, params_b, keys [K]) -> arena.GameResults [K, G]`` is the jitted
    ``arena.play_each`` of ``agent`` (``params_a = (network params, ψ [n, F], player)``)
    against ``policies``, the opponents named ``opponents`` in that order (``params_b`` a
    tuple with each one's params: ``None`` for a fixed one, like ``params_a`` for
    "previous"), ``G`` games each of at most ``max_plies`` plies scored by ``adjudicate``.
    """

    opponents: Tuple[str, ...]
    agent: Callable
    policies: Tuple[Callable, ...]
    max_plies: int
    adjudicate: Optional[Callable]
    play: Callable


class Evaluator:
    """Plays team players against fixed opponents and the previous evaluation's network.

    Each player searches as in self-play (SPEC §2): its latent, its ``λ_i`` and, when the
    run's searches carry it, the intrinsic reward of the ψ that goes with the network
    (the current ψ for the current network; the previous network plays with its own).
    Games end by the game's rules or at ``run.eval_max_plies``, where
    ``run.eval_adjudication`` scores them (``azdb_jax.adjudication``); ``run.eval_players``
    limits the players evaluated. Each record carries the evaluation's wall time.

    All opponents are one compiled program (``EvaluationGames``, ``arena.play_each``): the
    player's search runs once per ply on every opponent's games, each opponent's policy on
    its own games; a player's evaluation is one call of it. Before the first evaluation
    there is no previous network: "previous" then plays the current network (and ψ) in
    its place and its records are dropped, so that the program is the same from the first
    evaluation on. Each opponent's games draw their keys as separate matches did: for each
    player in turn, each opponent in turn splits a key off the evaluation's key (a dropped
    "previous" splits none), and the match's pair ``p`` plays with ``fold_in(key, p)``.
    """

    def __init__(self, config: config_lib.TrainConfig, components: trainer.Components, *,
                 games_of: Optional["Evaluator"] = None):
        """``games_of``: an evaluator of the same configuration and components whose compiled
        game program this one plays (``train`` shares it between runs of one configuration)."""
        env = components.env
        self.config = config
        self.num_games = config.run.eval_games + config.run.eval_games % 2
        self.previous = None  # the previous evaluation's network parameters
        self.previous_psi = None  # [n, F] the ψ that went with them
        num_players = components.lambdas.shape[0]
        self.players = list(range(min(config.run.eval_players or num_players, num_players)))
        if games_of is not None:
            self.games: EvaluationGames = games_of.games
            return
        search_config = config_lib.dataclasses.replace(config.search, num_simulations=config.run.eval_simulations)
        cap = config.run.eval_max_plies or games.max_plies(env)
        adjudicate = adjudication.adjudicator(env, config.run.eval_adjudication)

        def agent(params, rng_key, state):  # player `player` of the network with its ψ
            net_params, psi, player = params
            team = components.agent(net_params, psi, search_config=search_config)
            return team.player_policy(player)(net_params, rng_key, state)

        available = dict(opponents.opponents_for(env.id, env), previous=agent)
        chosen = tuple(config.run.eval_opponents or tuple(available))
        try:  # specs (alphabeta:depth=2, connect four's perfect) search on the host at every ply
            available.update(opponents.spec_opponents(env, chosen))
        except ValueError as e:
            raise ValueError(f"run.eval_opponents: {e}") from None
        unknown = [name for name in chosen if name not in available]
        if unknown:
            raise ValueError(f"run.eval_opponents: no opponent {', '.join(map(repr, unknown))} for {env.id}; "
                             f"available: {', '.join(available)}")
        policies = tuple(available[name] for name in chosen)
        play = functools.partial(arena.play_each, env, agent, policies_b=policies, num_games=self.num_games,
                                 max_plies=cap, adjudicate=adjudicate)
        self.games = EvaluationGames(
            opponents=chosen, agent=agent, policies=policies, max_plies=cap, adjudicate=adjudicate,
            play=jax.jit(lambda pa, pb, keys: play(params_a=pa, params_b=pb, rng_keys=keys)))

    @property
    def opponents(self) -> Tuple[str, ...]:
        """The opponents' names, in the order of the records."""
        return self.games.opponents

    def __call__(self, params, rng_key, iteration: int, psi, *, update_previous: bool = True) -> List[Dict[str, Any]]:
        """Evaluation records of ``params`` with the team's expected features ``psi`` [n, F].

        ``update_previous=False`` (the end-of-run evaluation between scheduled ones) keeps
        the "previous" network as it was, so that continuing the run later plays exactly as
        a run planned longer would.
        """
        start = time.perf_counter()
        records = []
        stand_in = self.previous is None  # "previous" plays the current network; its records are dropped
        played = [name for name in self.opponents if not (name == "previous" and stand_in)]
        for player in self.players if played else ():
            current = (params, psi, jnp.int32(player))
            keys, params_b = [], []
            for name in self.opponents:
                if name == "previous" and stand_in:
                    keys.append(rng_key)
                    params_b.append(current)
                    continue
                rng_key, key = jax.random.split(rng_key)
                keys.append(key)
                params_b.append((self.previous, self.previous_psi, jnp.int32(player)) if name == "previous" else None)
            results = jax.device_get(self.games.play(current, tuple(params_b), jnp.stack(keys)))
            for j, name in enumerate(self.opponents):
                if name == "previous" and stand_in:
                    continue
                summary = arena.summarize(jax.tree.map(lambda x, j=j: x[j], results))
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


# ------------------------------------------------------------------ the loop


class Programs(NamedTuple):
    """What a configuration's runs share in a process: the components and the jitted programs.

    ``init`` maps a seed key to a fresh trainer state; ``selfplay`` and ``learner`` are
    ``trainer.selfplay_phase`` and ``trainer.learner_phase_step`` (both donate the state);
    ``evaluator`` holds the evaluation's game program (None without ``run.eval_every``).
    """

    components: trainer.Components
    abstract: trainer.TrainerState
    shardings: Any
    init: Callable
    graph: Callable
    selfplay: Callable
    learner: Callable
    evaluator: Optional[Evaluator]


_PROGRAMS: "collections.OrderedDict[str, Programs]" = collections.OrderedDict()
_PROGRAMS_KEPT = 2  # each holds its compiled executables: in a test process 8 cost ~0.9 GB more
# Fields that change no program of a run: runs differing only in them share one ``Programs``.
_PROGRAMLESS_FIELDS = (*RESUMABLE_FIELDS, "run.seed")


def programs(config: config_lib.TrainConfig, workdir=None, *, num_devices: Optional[int] = None,
             local: bool = False) -> Programs:
    """The components and compiled programs of ``config``'s runs, kept per configuration.

    ``num_devices`` replaces ``run.num_devices`` (a population runs each member's plain
    programs on one device); ``local``: on this process's devices only (a multi-host
    population evaluates and saves each member in every process on its own).

    Training a configuration again in the same process (a resumed run, another seed, a
    test or notebook that trains twice) reuses its programs instead of tracing and
    compiling them again: the run's seed and length (``_PROGRAMLESS_FIELDS``) are not
    part of any program. With start positions the programs hold the positions themselves
    (read from ``workdir``'s manifest or the sources, files that may change between runs),
    so the positions read now are part of the key. The last ``_PROGRAMS_KEPT``
    configurations are kept (each holds its executables).
    """
    mesh = sharding.make_mesh((config.run.num_devices if num_devices is None else num_devices) or None, local=local)
    flat = {k: v for k, v in flatten_config(config_lib.to_dict(config)).items() if k not in _PROGRAMLESS_FIELDS}
    starts = None
    if config.start_positions.sources:
        prepared = start_positions.prepare(config.env.make().id, config.start_positions, workdir)
        starts = hashlib.sha256("\n".join(p.fen for p in prepared.train).encode()).hexdigest()
    key = json.dumps(dict(config=flat, devices=[d.id for d in mesh.devices.flat], starts=starts), sort_keys=True)
    if key in _PROGRAMS:
        _PROGRAMS.move_to_end(key)
        return _PROGRAMS[key]
    components = build_components(config, workdir)
    sharding.check_divisible(mesh, config.selfplay.num_games, config.run.batch_size)
    abstract = abstract_state(config, components)
    shardings = sharding.trainer_state_shardings(mesh, abstract)
    kept = Programs(
        components=components, abstract=abstract, shardings=shardings,
        init=jax.jit(functools.partial(trainer.init_trainer, components, window=abstract.pending),
                     out_shardings=shardings, compiler_options=networks.RUN_ONCE_COMPILER_OPTIONS),
        graph=jax.jit(components.graph_fn),
        selfplay=sharding.data_parallel(functools.partial(trainer.selfplay_phase, components), mesh, shardings),
        learner=sharding.data_parallel(functools.partial(trainer.learner_phase_step, components), mesh, shardings),
        evaluator=Evaluator(config, components) if config.run.eval_every else None)
    _PROGRAMS[key] = kept
    while len(_PROGRAMS) > _PROGRAMS_KEPT:
        _PROGRAMS.popitem(last=False)
    return kept


class RunFiles:
    """One training run's directory while it trains: ``config.json``, checkpoints,
    ``metrics.jsonl`` (and TensorBoard), its evaluator, and the ψ and graph snapshots.

    ``train`` keeps one; a population (``azdb_jax.population``) one per member, each
    member's directory a run of its seed. ``kept``: the configuration's programs (the
    evaluator's game program is shared).
    """

    def __init__(self, config: config_lib.TrainConfig, workdir, kept: Programs, *, resume: bool):
        self.config = config
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.kept = kept
        self.resume = resume
        self.manager = checkpoint.RunCheckpointer(
            str(self.workdir / "checkpoints"),
            checkpoint.CheckpointConfig(max_to_keep=config.run.keep_checkpoints,
                                        save_replay=config.run.checkpoint_replay,
                                        async_save=config.run.checkpoint_async))
        if resume:
            check_resumable(load_run_config(self.workdir), config, source=f"{self.workdir}/config.json")
        elif self.manager.latest_step() is not None:
            raise ValueError(f"{self.workdir} already holds checkpoints; pass --resume or choose a new --workdir")
        elif distributed.is_main_process():
            write_atomic(self.workdir / "config.json", config_lib.to_json(config))
        # A fresh evaluator (its previous network is this run's) playing the kept game program.
        self.evaluator = (Evaluator(config, kept.components, games_of=kept.evaluator)
                          if kept.evaluator is not None else None)
        self.log: Optional[MetricsLog] = None

    def restore(self, step: Optional[int] = None) -> trainer.TrainerState:
        """The checkpoint at ``step`` (default: the latest) as a trainer state, the evaluator's
        previous network with it; rewrites ``config.json`` (the resumable fields may change)."""
        config, abstract, shardings = self.config, self.kept.abstract, self.kept.shardings
        step = self.manager.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"{self.workdir}/checkpoints: no checkpoint to resume from")
        target = to_run_state(_with_shardings(abstract, shardings), _with_shardings(
            abstract.train_state.params, shardings.train_state.params), config.run.checkpoint_replay)
        saved_with = config_lib.from_dict(config_lib.TrainConfig, self.manager.read_config(step),
                                          where=f"{self.manager.step_path(step)} (config)")
        check_resumable(saved_with, config, source=f"checkpoint {self.manager.step_path(step)}")
        restored = restore_run_state(self.manager, step, target, saved_with)
        state, previous, previous_psi = from_run_state(
            restored, abstract if not config.run.checkpoint_replay else None, shardings)
        if int(state.iteration) > config.run.num_iterations:
            raise ValueError(f"run.num_iterations={config.run.num_iterations}: the run in {self.workdir} is already "
                             f"at iteration {int(state.iteration)}")
        if self.evaluator is not None:
            self.evaluator.previous, self.evaluator.previous_psi = previous, previous_psi
        if distributed.is_main_process():
            write_atomic(self.workdir / "config.json", config_lib.to_json(config))
        return state

    def open_log(self, start: int, sinks: Sequence[Any] = ()) -> None:
        """Starts ``metrics.jsonl`` at iteration ``start`` (records past it are dropped on resume);
        ``sinks`` get every record too."""
        config = self.config
        # A run continued past its planned end drops that end's extra evaluation (see Evaluator).
        continued = self.resume and bool(config.run.eval_every) and start % config.run.eval_every != 0
        self.log = MetricsLog(self.workdir, keep_up_to=start if self.resume else None,
                              drop_final_eval=continued and start < config.run.num_iterations, sinks=sinks)

    def _evaluates(self, iteration: int) -> bool:
        return self.evaluator is not None and (iteration % self.config.run.eval_every == 0
                                               or iteration == self.config.run.num_iterations)

    def _saves(self, iteration: int, last: int) -> bool:
        every = self.config.run.checkpoint_every
        return bool(every and iteration % every == 0) or iteration == last

    def needs_state(self, iteration: int, last: int) -> bool:
        """Whether ``record`` after ``iteration`` reads more of the state than its iteration
        (it evaluates or saves)."""
        return self._evaluates(iteration) or self._saves(iteration, last)

    def record(self, state: trainer.TrainerState, metrics: Dict[str, Any], *, last: int) -> List[Dict[str, Any]]:
        """After an iteration: writes its metrics, evaluates when scheduled (or at the run's
        end) and saves a checkpoint when due (or at ``last``); returns the evaluation records."""
        config, evaluator = self.config, self.evaluator
        iteration = int(state.iteration)
        self.log.write(dict(kind="train", iteration=iteration, **metrics))
        eval_records: List[Dict[str, Any]] = []
        if self._evaluates(iteration):
            scheduled = iteration % config.run.eval_every == 0
            eval_key = jax.random.fold_in(jax.random.PRNGKey(config.run.seed + 1), iteration)
            eval_records = evaluator(state.train_state.params, eval_key, iteration, state.expected_features.psi,
                                     update_previous=scheduled)
            for record in eval_records:
                self.log.write(record)
        if self._saves(iteration, last):
            graph = self.kept.graph(state.payoff.mean)  # on every process: all take part in jitted calls
            if distributed.is_main_process():
                _save_psi(self.workdir, iteration, state.expected_features)
                _save_graph(self.workdir, iteration, graph, state.payoff, config.team.matchmaker)
            previous = evaluator.previous if evaluator is not None else None
            previous_psi = evaluator.previous_psi if evaluator is not None else None
            self.manager.save(iteration, to_run_state(state, previous, config.run.checkpoint_replay, previous_psi),
                              config=config)
        return eval_records

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        self.manager.close()


def progress_postfix(metrics: Dict[str, Any], diverse: bool) -> Dict[str, str]:
    """What the progress bar shows after an iteration (a run whose diversity reward takes
    over shows it here)."""
    postfix = dict(loss=f"{metrics['loss']:.3f}", games=f"{metrics['games_finished']:.0f}")
    if diverse:
        postfix.update(plies=f"{metrics['plies_per_game']:.0f}", intrinsic=f"{metrics['intrinsic_share']:.2f}")
    return postfix


def train(config: config_lib.TrainConfig, workdir, *, resume: bool = False,
          stop_after: Optional[int] = None, progress: bool = True, sinks: Sequence[Any] = ()) -> Dict[str, Any]:
    """Runs (or resumes) the training run of ``config`` in ``workdir``; returns a summary.

    ``sinks``: more loggers that get each ``metrics.jsonl`` record (objects with ``write(record)``
    and ``close()``, e.g. ``azdb_jax.wandb_log.WandbLog``); closed with the run.
    """
    files = RunFiles(config, workdir, programs(config, workdir), resume=resume)
    kept = files.kept
    state = files.restore() if resume else kept.init(jax.random.PRNGKey(config.run.seed))
    start = int(state.iteration)
    files.open_log(start, sinks)
    iterate = functools.partial(trainer.train_iteration, kept.components, selfplay_fn=kept.selfplay,
                                learner_fn=kept.learner)
    last = config.run.num_iterations if stop_after is None else min(config.run.num_iterations, start + stop_after)
    bar = tqdm.tqdm(range(start, last), initial=start, total=config.run.num_iterations,
                    disable=not progress or not distributed.is_main_process(), desc="train", unit="it")
    metrics: Dict[str, Any] = {}
    eval_records: List[Dict[str, Any]] = []
    t0 = time.perf_counter()
    try:
        for _ in bar:
            started = time.perf_counter()
            state, metrics = iterate(state)
            metrics = {name: float(value) for name, value in jax.device_get(metrics).items()}
            metrics["iteration_seconds"] = round(time.perf_counter() - started, 3)
            bar.set_postfix(**progress_postfix(metrics, kept.components.diverse))
            eval_records = files.record(state, metrics, last=last)
    finally:  # also on an error or Ctrl-C: a checkpoint still being written is finished
        files.close()
    return dict(iterations=int(state.iteration), seconds=round(time.perf_counter() - t0, 1),
                last_metrics=metrics, last_eval=eval_records)
