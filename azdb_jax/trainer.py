"""One training iteration: a self-play phase, then learner steps.

Both phases are pure functions of a ``TrainerState``; the experiment layer jits each
once (one compiled program per phase: the self-play window with its targets and replay
writes, and the learner step) and dispatches them from a host loop without syncing. Games carry over between iterations, so a game may straddle two windows: the
previous window's transitions are kept (``pending``) and targets are computed over
both windows, so every transition whose game ends within one window after it is
trained exactly once. Transitions of games longer than that are dropped (counted in
``metrics["dropped_fraction"]``).

Data parallelism. Each phase can run as one device's share of the run (``axis_name``:
the mesh axis the phase is mapped over, ``jax.shard_map`` in ``azdb_jax.runner``). The
run's state is laid out by game slot: slot ``b`` holds a game in progress, its
transitions of the previous window and its own stream of the replay buffer
(``replay.init(streams=num_games)``), so a device holding some slots holds everything
they need. Self-play is then local: each slot's randomness comes from
``fold_in(key, b)`` (``selfplay``), and only what is global is summed over the devices,
once per window and outside the loop over plies: ψ's statistics, the payoff counts and
the metrics. The learner samples its batch in ``gcd(num_games, batch_size)`` groups of
consecutive streams, each with its own key (``replay.sample``), so a device draws its
groups' rows from its own streams, computes the gradient of its rows' part of the loss,
and the gradients are summed over the devices once per step; the optimiser update is
the same on every device. Nothing depends on the number of devices: the games, the
replay's rows and the sampled batches are those of one device, and the loss and its
gradient equal one device's up to the order of the float sums.
"""

import functools
import math
from typing import Any, Callable, Dict, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pgx.core

from azdb_jax import agent as agent_lib
from azdb_jax import diversity, games
from azdb_jax import learner as learner_lib
from azdb_jax import matchmaking, networks, replay, selfplay, targets
from azdb_jax.sharding import Shard
from azdb_jax.config import DiversityConfig, PayoffConfig
from azdb_jax import search as search_lib
from azdb_jax.envs.autoreset import InitFn

Array = jax.Array


class TrainingExample(NamedTuple):
    """What the replay buffer stores per trained transition."""

    observation: Array  # [..obs] the position, mover's view
    player: Array  # [] latent id of the mover
    search_policy: Array  # [A] visit distribution
    z: Array  # [] game result for the mover
    z_d: Array  # [] intrinsic return target (zero without diversity)
    weight: Array  # [] 1 for stored examples
    opponent_player: Array  # [] latent id of the mover's opponent in the game
    z_d_opponent: Array  # [] the opponent's intrinsic return from this position (second v_d head)


class TrainerState(NamedTuple):
    """Everything a run carries from one iteration to the next (and checkpoints)."""

    train_state: learner_lib.TrainState
    replay: replay.ReplayState
    games: selfplay.SelfPlayState  # [B] games in progress
    pending: selfplay.Transition  # [T, B] the previous window's transitions
    payoff: matchmaking.PayoffTracker  # [n, n] results by (white, black) player
    expected_features: diversity.ExpectedFeatures  # ψ [n, F] (and by colour), SPEC §1.3
    rng_key: Array
    iteration: Array  # [] int32


class ArmValues(NamedTuple):
    """What differs between arms of one shape, as arrays (``Components.with_arm``)."""

    lambdas: Array  # [n] λ_i
    l0: Array  # [] ℓ0


class Components(NamedTuple):
    """The static parts of a run (functions and configs), built once from a config."""

    env: pgx.core.Env
    network: networks.Network
    optimizer: optax.GradientTransformation
    feature_fn: Callable
    lambdas: Array  # [n]
    graph_fn: Callable[[Array], matchmaking.InteractionGraph]  # payoff mean -> graph
    selfplay_config: selfplay.SelfPlayConfig
    search_config: search_lib.SearchConfig
    replay_config: replay.ReplayConfig
    learner_config: learner_lib.LearnerConfig
    store_fraction: float
    batch_size: int
    learner_steps: int
    diversity_config: DiversityConfig = DiversityConfig()
    init_fn: Optional[InitFn] = None
    payoff_config: PayoffConfig = PayoffConfig()  # how the matchmakers' payoff matrix is estimated
    arm: Optional[ArmValues] = None  # this member's λ_i and ℓ0 as arrays (``with_arm``)

    @property
    def diverse(self) -> bool:
        """Behavioural diversity is on when some player has λ_i < 1 (paper §3)."""
        return bool(np.any(np.asarray(self.lambdas) < 1.0))

    @property
    def member_lambdas(self) -> Array:
        """``[n]`` the λ_i self-play plays with: ``lambdas``, or the arm's (``with_arm``)."""
        return self.lambdas if self.arm is None else self.arm.lambdas

    @property
    def l0(self) -> Any:
        """ℓ0 of the intrinsic reward: the config's, or the arm's (``with_arm``)."""
        return self.diversity_config.l0 if self.arm is None else self.arm.l0

    def with_arm(self, arm: ArmValues) -> "Components":
        """These components (a diverse configuration's) with one arm's λ_i and ℓ0 as
        (possibly traced) arrays: arms that share every shape (AZdb and its λ = 1 control)
        as members of one program (``azdb_jax.population``). The program computes the
        intrinsic reward for every member and weighs it by the member's λ: a member with
        λ_i = 1 everywhere gets the targets of its own λ = 1 run (its r_d is zeroed, as a run
        without diversity records none), and its searches mix in nothing (λ_i = 1 drops the
        intrinsic terms exactly)."""
        if not self.diverse:
            raise ValueError("with_arm: the components' own team has no λ_i < 1, so its program computes no "
                             "intrinsic reward for the arms to weigh")
        return self._replace(arm=ArmValues(jnp.asarray(arm.lambdas, jnp.float32), jnp.asarray(arm.l0, jnp.float32)))

    def agent(self, params, psi, *, search_config: Optional[search_lib.SearchConfig] = None) -> agent_lib.Agent:
        """The run's team as an ``Agent`` with these (possibly traced) parameters and ψ:
        its λ_i, ℓ0 and ``diversity.in_search``; ``search_config`` defaults to self-play's.
        Components of an arm (``with_arm``) give the arm's ℓ0 but the configuration's λ_i
        (self-play searches with ``member_lambdas``; the agent supplies its reward hook)."""
        return agent_lib.Agent(env=self.env, apply_fn=self.network.apply, params=params,
                               num_players=int(np.shape(self.lambdas)[0]),
                               search_config=self.search_config if search_config is None else search_config,
                               lambdas=tuple(float(x) for x in np.asarray(self.lambdas)), psi=psi,
                               l0=self.l0, intrinsic_in_search=self.diversity_config.in_search)


def _slot_keys(key: Array, slots: Array) -> Array:
    """One key per game slot: ``fold_in(key, b)`` for each global slot index ``b``."""
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, slots)


def sample_groups(components: "Components") -> int:
    """Groups the learner samples its batch in: ``gcd(num_games, batch_size)`` (each a
    block of consecutive replay streams, ``replay.sample``); a device count dividing both
    divides it, so each device samples whole groups."""
    return math.gcd(components.selfplay_config.num_games, components.batch_size)


def _empty_window(transition_shape: selfplay.Transition) -> selfplay.Transition:
    return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), transition_shape)


def init_trainer(components: Components, rng_key: Array, window: Optional[selfplay.Transition] = None) -> TrainerState:
    """Fresh network, optimiser, replay buffer and games; consumes ``rng_key``.

    ``window``: the shapes and dtypes of a self-play window (``TrainerState.pending`` of an
    abstract state, e.g. ``runs.abstract_state``); without it they are found by tracing a
    self-play iteration, which costs seconds.
    """
    c = components
    net_key, games_key, run_key = jax.random.split(rng_key, 3)
    num_players = c.lambdas.shape[0]
    payoff = matchmaking.init_payoff(num_players, prior=c.payoff_config.prior)
    num_features = jax.eval_shape(c.feature_fn, jax.eval_shape(c.env.init, rng_key)).shape[-1]
    expected_features = diversity.init_expected_features(num_players, num_features)
    num_games = c.selfplay_config.num_games
    games = selfplay.init_selfplay(c.env, _slot_keys(games_key, jnp.arange(num_games)), num_games=num_games,
                                   graph=c.graph_fn(payoff.mean), init_fn=c.init_fn)
    obs_example = games.env_state.observation[:1]
    train_state = learner_lib.init_train_state(c.network, c.optimizer, net_key, obs_example)
    if window is None:
        window = jax.eval_shape(functools.partial(_play, c), train_state.params, run_key, games, payoff,
                                expected_features)[1]
    example = jax.eval_shape(lambda w: _examples(c, w, w).examples, _empty_window(window))
    example_row = jax.tree.map(lambda s: jnp.zeros(s.shape[2:], s.dtype), example)
    return TrainerState(
        train_state=train_state,
        replay=replay.init(c.replay_config, example_row, streams=num_games),  # one stream per game slot
        games=games,
        pending=_empty_window(window),
        payoff=payoff,
        expected_features=expected_features,
        rng_key=run_key,
        iteration=jnp.zeros((), jnp.int32),
    )


_FULL_SEARCH_STREAM = 0x7FFFFFFF  # folded into the iteration's key for the plies' full/fast draws


def _play(c: Components, params, key, games, payoff, expected_features, full_search=None):
    """One window of self-play; ``key``: one key, or one per game slot; ``full_search``: [T]
    which plies search with the full budget (``selfplay.full_search_prob``), None: all."""
    agent = c.agent(params, expected_features.psi)
    hook = agent.intrinsic_reward()  # self-play scores its moves with r_d whether or not its searches add it
    games, window = selfplay.selfplay_iteration(
        c.env, c.network.apply, params, key, games,
        lambdas=c.member_lambdas, config=c.selfplay_config, search_config=c.search_config,
        graph=c.graph_fn(payoff.mean), feature_fn=c.feature_fn, init_fn=c.init_fn,
        intrinsic_reward_fn=hook.intrinsic_reward_fn, hook_params=hook.hook_params,
        intrinsic_in_search=agent.intrinsic_in_search, full_search=full_search)
    if c.arm is not None:  # a member without diversity records no r_d, as its own run does
        window = window._replace(reward_d=jnp.where(jnp.any(c.arm.lambdas < 1.0), window.reward_d, 0.0))
    return games, window


def _stream_targets(window: selfplay.Transition) -> targets.Targets:
    """z over a [T, B] window, vmapped over the B game slots."""
    return jax.vmap(targets.outcome_targets, in_axes=(1, 1, 1), out_axes=1)(
        window.rewards, window.mover, window.terminated)


class _WindowExamples(NamedTuple):
    examples: TrainingExample  # [2T, B] both windows
    trainable: Array  # [2T, B] new (not trained before), the learner's move, outcome known
    outcome_known: Array  # [2T, B] the game of the transition ended inside the two windows


def _examples(c: Components, pending: selfplay.Transition, current: selfplay.Transition) -> _WindowExamples:
    """Training examples of both windows and which of them are new and trainable."""
    window = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), pending, current)
    z = _stream_targets(window)
    # z_d (SPEC §1.6): the mover's own r_d over N_TD plies plus the stored v_d; its window
    # need (N_TD plies or the game's end) is implied by z being known.
    z_d = jax.vmap(functools.partial(targets.intrinsic_value_targets, n_td=c.diversity_config.n_td),
                   in_axes=(1, 1, 1, 1), out_axes=1)(window.reward_d, window.value_d, window.mover, window.terminated)
    z_d_opponent = jax.vmap(targets.opponent_intrinsic_value_targets, in_axes=(1, 1), out_axes=1)(
        z_d, window.terminated)
    already = jnp.concatenate([_stream_targets(pending).valid, jnp.zeros_like(current.terminated)])
    trainable = window.train_mask & z.valid & ~already
    value_target = z.value
    if c.learner_config.value_q_weight > 0:
        w = c.learner_config.value_q_weight
        value_target = (1.0 - w) * z.value + w * search_q(c.member_lambdas, window)
    examples = TrainingExample(
        observation=window.observation,
        player=window.player,
        search_policy=window.policy,
        z=value_target,
        z_d=z_d.value,
        weight=jnp.ones_like(z.value),
        opponent_player=jnp.where(window.is_white, window.black_player, window.white_player),
        z_d_opponent=z_d_opponent.value,
    )
    return _WindowExamples(examples, trainable, z.valid)


def search_q(lambdas: Array, window: selfplay.Transition) -> Array:
    """The root search's extrinsic value for the mover of each transition of ``window``:
    ``(search_value − search_value_intrinsic) / λ_i`` (the search mixes the game's values by
    λ_i, ``diversity.search_leaf_value``); 0 for a player with λ_i = 0, whose search
    values no game result."""
    lam = lambdas[window.player]
    extrinsic = window.search_value - window.search_value_intrinsic
    return jnp.where(lam > 0, extrinsic / jnp.where(lam > 0, lam, 1.0), 0.0)


def _payoff_update(payoff: matchmaking.PayoffTracker, window: selfplay.Transition,
                   config: PayoffConfig = PayoffConfig(), shard: Shard = Shard()) -> matchmaking.PayoffTracker:
    """Adds the games that ended in ``window`` ([T, B]) to the payoff matrix (one decay step;
    the games of every device of ``shard``'s axis)."""
    white_seat = jnp.where(window.is_white, window.mover, 1 - window.mover)
    white_result = jnp.take_along_axis(window.rewards, white_seat[..., None], axis=-1)[..., 0]
    flat = lambda x: x.reshape(-1)  # noqa: E731
    games = matchmaking.payoff_statistics(payoff.counts.shape[0], flat(window.white_player), flat(window.black_player),
                                          flat(white_result), flat(window.terminated))
    return matchmaking.update_payoff_from_statistics(payoff, shard.sum(games), decay=config.decay, prior=config.prior,
                                                     prior_games=config.prior_games)


def selfplay_phase(components: Components, state: TrainerState,
                   shard: Shard = Shard()) -> tuple[TrainerState, Dict[str, Array]]:
    """Plays one self-play window and stores its new trainable examples (one jit).

    ``shard``: the phase as one device's share of the game slots (module docstring); the
    metrics, ψ and payoffs are those of all slots.
    """
    c = components
    key, play_key, store_key = jax.random.split(state.rng_key, 3)
    num_slots = state.games.ply.shape[0]
    slots = shard.slots(num_slots)
    full_search = None
    if c.selfplay_config.full_search_prob < 1.0:  # playout cap randomisation: one draw per ply for every device
        full_search = jax.random.bernoulli(jax.random.fold_in(state.rng_key, _FULL_SEARCH_STREAM),
                                           c.selfplay_config.full_search_prob, (c.selfplay_config.num_plies,))
    games, current = _play(c, state.train_state.params, _slot_keys(play_key, slots), state.games, state.payoff,
                           state.expected_features, full_search)
    window = _examples(c, state.pending, current)
    stored = jax.vmap(lambda k, trainable: replay.store_mask(k, trainable, c.store_fraction), in_axes=(0, 1),
                      out_axes=1)(_slot_keys(store_key, slots), window.trainable)
    buffer = replay.add(state.replay, window.examples, stored)
    pending_trainable = state.pending.train_mask
    dropped = pending_trainable & ~window.outcome_known[: c.selfplay_config.num_plies]
    moves = c.selfplay_config.num_plies * c.selfplay_config.num_games
    totals = shard.sum(dict(
        games_finished=current.terminated.sum(), examples_stored=stored.sum(), replay_size=replay.stored(buffer),
        search_value=current.search_value.sum(), dropped=dropped.sum(), pending_trainable=pending_trainable.sum(),
        reward_d=current.reward_d.sum(),
        features=diversity.feature_statistics(current.features, current.player, jnp.ones_like(current.terminated),
                                              jnp.where(current.is_white, 0, 1), jnp.ones_like(current.terminated),
                                              num_players=c.lambdas.shape[0]),
        intrinsic=_intrinsic_sums(c.member_lambdas, current)))
    finished = totals["games_finished"]
    metrics = dict(
        games_finished=finished,
        examples_stored=totals["examples_stored"],
        replay_size=totals["replay_size"],
        mean_search_value=totals["search_value"] / moves,
        # Previous-window transitions that never got an outcome: their games ran too long.
        dropped_fraction=totals["dropped"] / jnp.maximum(totals["pending_trainable"], 1),
        plies_per_game=moves / jnp.maximum(finished, 1),
    )
    expected_features = diversity.update_expected_features_from_statistics(
        state.expected_features, totals["features"], rate=c.diversity_config.ema_rate)
    metrics.update(_diversity_metrics(c, expected_features, mean_reward_d=totals["reward_d"] / moves))
    metrics.update(_intrinsic_metrics(totals["intrinsic"], plies_per_game=metrics["plies_per_game"]))
    new_state = state._replace(
        expected_features=expected_features,
        replay=buffer,
        games=games,
        pending=current,
        payoff=_payoff_update(state.payoff, current, c.payoff_config, shard),
        rng_key=key,
        iteration=state.iteration + 1,
    )
    return new_state, metrics


def _diversity_metrics(c: Components, expected_features: diversity.ExpectedFeatures, *,
                       mean_reward_d: Array) -> Dict[str, Array]:
    """d_i per player, the objective (Eq. 7) and the mean intrinsic reward of the window."""
    neighbours = diversity.nearest_neighbours(expected_features.psi)
    metrics = {f"d_{i}": neighbours.distance[i] for i in range(c.lambdas.shape[0])}
    metrics["diversity_objective"] = diversity.diversity_objective(expected_features.psi, c.member_lambdas, l0=c.l0)
    metrics["mean_reward_d"] = mean_reward_d
    return metrics


def _intrinsic_sums(lambdas: Array, window: selfplay.Transition) -> Dict[str, Array]:
    """The sums ``intrinsic_metrics`` divides, over a window's moves of players with λ_i < 1."""
    lam = lambdas[window.player]
    diverse = lam < 1.0
    intrinsic = jnp.abs(window.search_value_intrinsic)
    extrinsic = jnp.abs(window.search_value - window.search_value_intrinsic)
    return dict(
        moves=diverse.sum(),
        intrinsic=jnp.sum(jnp.where(diverse, intrinsic, 0.0)),
        total=jnp.sum(jnp.where(diverse, intrinsic + extrinsic, 0.0)),
        reward_d=jnp.sum(jnp.where(diverse, window.reward_d, 0.0)),
        mixed_reward_d=jnp.sum(jnp.where(diverse, (1.0 - lam) * window.reward_d, 0.0)),
    )


def _intrinsic_metrics(sums: Dict[str, Array], *, plies_per_game: Array) -> Dict[str, Array]:
    count = jnp.maximum(sums["moves"], 1)
    return dict(
        intrinsic_share=sums["intrinsic"] / jnp.maximum(sums["total"], 1e-12),
        reward_d_per_move=sums["reward_d"] / count,
        intrinsic_return_per_game=sums["mixed_reward_d"] / count * plies_per_game / 2.0,
    )


def intrinsic_metrics(lambdas: Array, window: selfplay.Transition, *, plies_per_game: Array) -> Dict[str, Array]:
    """How much the diversity reward weighs in a window's searches (paper Eq. 6; docs/method.md).

    Over the moves of players with λ_i < 1 (all 0 when no player has one):

    - ``intrinsic_share``: ``Σ|V_d| / (Σ|V_d| + Σ|V − V_d|)`` over their root searches, where
      V is the search value and V_d its intrinsic part (``SearchOutput.search_value_intrinsic``:
      (1 − λ_i) v_d at the leaves plus the (1 − λ_i) r_d of the player's moves in the tree);
    - ``reward_d_per_move``: their mean r_d^i per own move (the un-mixed reward, Eq. 8);
    - ``intrinsic_return_per_game``: ``(1 − λ_i) r_d^i`` per move times a player's moves in a
      game of the window's mean length (``plies_per_game / 2``), the intrinsic return a
      game adds beside λ_i times its result of at most 1.
    """
    return _intrinsic_metrics(_intrinsic_sums(lambdas, window), plies_per_game=plies_per_game)


def learner_phase_step(components: Components, state: TrainerState,
                       shard: Shard = Shard()) -> tuple[TrainerState, Dict[str, Array]]:
    """One learner step on a batch sampled from the replay buffer (one jit).

    No update happens until the buffer holds one batch (early windows of long games);
    ``metrics["learner_ready"]`` says whether it did. ``shard``: one device's share
    (module docstring): it samples its groups of the batch from its own streams and its
    gradient is summed with the other devices'.
    """
    c = components
    key, sample_key, step_key = jax.random.split(state.rng_key, 3)
    shards = c.selfplay_config.num_games // state.games.ply.shape[0]
    groups = sample_groups(c) // shards
    total = replay.capacity(state.replay) * shards
    ready = shard.sum(replay.stored(state.replay)) >= min(c.batch_size, total)
    batch = replay.sample(state.replay, sample_key, c.batch_size // shards, config=c.replay_config, groups=groups,
                          first_group=shard.index() * groups)
    mirror = games.get(c.env.id).mirror if c.learner_config.mirror_augment else None
    train_state, metrics = learner_lib.learner_step(c.network, c.optimizer, state.train_state, batch, step_key,
                                                    config=c.learner_config, axis_name=shard.axis_name,
                                                    mirror=mirror)
    train_state = jax.tree.map(lambda new, old: jnp.where(ready, new, old), train_state, state.train_state)
    return state._replace(train_state=train_state, rng_key=key), dict(metrics, learner_ready=ready)


def train_iteration(components: Components, state: TrainerState,
                    selfplay_fn: Optional[Callable] = None,
                    learner_fn: Optional[Callable] = None) -> tuple[TrainerState, Dict[str, Array]]:
    """A self-play phase then ``learner_steps`` learner steps; metrics averaged over the steps.

    ``selfplay_fn``/``learner_fn`` are the jitted phases (the experiment layer passes
    them); unjitted by default. The learner steps are dispatched from the host rather
    than scanned: XLA:CPU runs convolution gradients inside loops an order of magnitude
    slower than unrolled, and dispatch is asynchronous, so nothing waits on the host.
    """
    selfplay_fn = selfplay_fn or functools.partial(selfplay_phase, components)
    learner_fn = learner_fn or functools.partial(learner_phase_step, components)
    state, metrics = selfplay_fn(state)
    learn_metrics = []
    for _ in range(components.learner_steps):
        state, step_metrics = learner_fn(state)
        learn_metrics.append(step_metrics)
    for name in learn_metrics[0]:
        metrics[name] = sum(m[name] for m in learn_metrics) / len(learn_metrics)
    return state, metrics
