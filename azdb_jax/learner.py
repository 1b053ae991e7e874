"""The learner: AZdb's loss, chess history dropout, optimiser and one training step.

Loss (AlphaZero's loss, paper Eq. 3, plus the (z_d − v_d)² term of §3; SPEC §1.7), per
transition with weight w:

    l = CE(π, p) + c_v (z − v)² + c_d (z_d − v_d)²,   CE(π, p) = −Σ_a π_a log softmax(p)_a

averaged as Σ w·l / Σ w (0 when every weight is 0), so padded rows and transitions the
caller does not train on (the opponent's moves in exploiter games, SPEC §1.11) count
for nothing. π is the search policy, z the game result for the mover, z_d the
intrinsic return target (SPEC §1.6).

Weight decay lives in the optimiser, never in the loss, and touches only kernels (the
≥2-D parameters), not biases or LayerNorm scales::

  "sgd"   AlphaZero's SGD with momentum; adds wd·θ to the gradient, which is exactly an
          L2 term (wd/2)‖θ‖² in the loss: AlphaZero's c‖θ‖² with c = 1e-4 is wd = 2e-4;
  "adam"  the same coupled L2 gradient term, then Adam;
  "adamw" decoupled decay (optax.adamw: θ -= lr·wd·θ).

Gradients are optionally clipped by global norm before decay.

History dropout (paper §4, setup; SPEC §1.7): puzzle positions come without history, so with probability
``history_dropout`` per example a chess observation loses its history. In pgx's chess
observation [8, 8, 119] (``pgx/_src/games/chess.py``, ``observe``) planes 14k..14k+13
describe history step k (k = 0 is the current position): 12 piece planes then two
repetition planes ("seen once", "seen before"). Dropping the history sets, for
k = 1..7, the 12 piece planes to 0 and the repetition pair to (1, 0), which is exactly
what pgx writes for history steps that do not exist (a game's first move or a position
loaded from FEN). The current position (planes 0-13) and the scalar planes 112-118
(colour, ply count, castling, halfmove clock) are kept. It is applied only to pgx
chess observations, recognised by their [8, 8, 119] shape.
"""

import dataclasses
import functools
from typing import Any, Callable, Mapping, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from azdb_jax.networks import NetOutput, Network

Array = jax.Array
Params = Any
Metrics = dict

OPTIMIZERS = ("sgd", "adam", "adamw")
SCHEDULES = ("constant", "piecewise", "cosine")
CHESS_OBSERVATION_SHAPE = (8, 8, 119)
CHESS_PLANES_PER_STEP = 14
CHESS_HISTORY_PLANES = tuple(range(14, 112))  # history steps 1..7, every plane
_BATCH_FIELDS = ("observation", "player", "search_policy", "z", "z_d", "weight")
_OPTIONAL_FIELDS = ("opponent_player", "z_d_opponent")


@dataclasses.dataclass(frozen=True)
class LearnerConfig:
    """Loss weights, optimiser and learning-rate schedule.

    AlphaZero chess: optimizer="sgd", learning_rate=0.2, momentum=0.9,
    weight_decay=2e-4, schedule="piecewise", boundaries=(100_000, 300_000, 500_000),
    boundary_scales=(0.1, 0.1, 0.1), batch 4096.

    Attributes:
      optimizer: "sgd" (with momentum), "adam" or "adamw".
      learning_rate: peak learning rate.
      momentum: SGD momentum (ignored by adam/adamw).
      weight_decay: decay coefficient, see the module docstring; 0 disables.
      schedule: "constant", "piecewise" (multiply by ``boundary_scales[i]`` from step
        ``boundaries[i]`` on) or "cosine" (to ``final_lr_fraction`` x peak over
        ``decay_steps``).
      warmup_steps: linear warm-up multiplier min(1, (step + 1) / warmup_steps).
      max_grad_norm: clip gradients to this global norm; 0 disables.
      value_weight: c_v, weight of the value MSE.
      value_d_weight: c_d, weight of the intrinsic value MSE (SPEC §1.7).
      history_dropout: probability of dropping a chess observation's history.
      mirror_augment: each example of a batch is mirrored left to right with probability
        ½ (the game's ``Game.mirror``: connect four, tic-tac-toe); a config asking it of a
        game without a mirror is refused.
      value_q_weight: w of the value target ``(1 − w) z + w Q``, with Q the root search's
        value for the mover (its extrinsic part, ``SearchOutput.search_value`` less the
        intrinsic terms, over λ_i); 0 is AlphaZero's z. Mixed when the examples are
        stored (``trainer``).
    """

    optimizer: str = "adamw"
    learning_rate: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 1e-4
    schedule: str = "constant"
    boundaries: Tuple[int, ...] = ()
    boundary_scales: Tuple[float, ...] = ()
    decay_steps: int = 0
    final_lr_fraction: float = 0.0
    warmup_steps: int = 0
    max_grad_norm: float = 0.0
    value_weight: float = 1.0
    value_d_weight: float = 1.0
    history_dropout: float = 0.2
    mirror_augment: bool = False
    value_q_weight: float = 0.0

    def __post_init__(self):
        def check(field: str, ok: bool, allowed: str) -> None:
            if not ok:
                raise ValueError(f"LearnerConfig.{field} must be {allowed}, got {getattr(self, field)!r}")

        def is_number(x) -> bool:
            return isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)

        def is_count(x) -> bool:
            return isinstance(x, int) and not isinstance(x, bool) and x >= 0

        check("optimizer", self.optimizer in OPTIMIZERS, f"one of {OPTIMIZERS}")
        check("schedule", self.schedule in SCHEDULES, f"one of {SCHEDULES}")
        check("learning_rate", is_number(self.learning_rate) and self.learning_rate > 0, "a finite number > 0")
        for name in ("weight_decay", "max_grad_norm", "value_weight", "value_d_weight"):
            check(name, is_number(getattr(self, name)) and getattr(self, name) >= 0, "a finite number >= 0")
        check("momentum", is_number(self.momentum) and 0 <= self.momentum < 1, "in [0, 1)")
        check("mirror_augment", isinstance(self.mirror_augment, bool), "true or false")
        for name in ("history_dropout", "final_lr_fraction", "value_q_weight"):
            check(name, is_number(getattr(self, name)) and 0 <= getattr(self, name) <= 1, "in [0, 1]")
        for name in ("decay_steps", "warmup_steps"):
            check(name, is_count(getattr(self, name)), "an int >= 0")
        check(
            "boundaries",
            isinstance(self.boundaries, tuple)
            and all(is_count(b) and b > 0 for b in self.boundaries)
            and list(self.boundaries) == sorted(set(self.boundaries)),
            "a tuple of strictly increasing positive ints",
        )
        check(
            "boundary_scales",
            isinstance(self.boundary_scales, tuple)
            and len(self.boundary_scales) == len(self.boundaries)
            and all(is_number(x) and x > 0 for x in self.boundary_scales),
            f"a tuple of {len(self.boundaries)} positive numbers (one per boundary)",
        )
        check("boundaries", self.schedule != "piecewise" or bool(self.boundaries), "non-empty for 'piecewise'")
        check("decay_steps", self.schedule != "cosine" or self.decay_steps > 0, "> 0 for 'cosine'")


class Batch(NamedTuple):
    """A training batch; any mapping or object with these fields is accepted."""

    observation: Array  # [B, H, W, C] float32 (or bool)
    player: Array  # [B] int32: latent id of the player who moved
    search_policy: Array  # [B, A] float32: visit distribution π of the search
    z: Array  # [B] float32: game result for the mover, in {-1, 0, 1}
    z_d: Array  # [B] float32: intrinsic return target (SPEC §1.6)
    weight: Array  # [B] float32: 0 excludes a transition from the loss
    opponent_player: Array = None  # [B] int32: latent of the mover's opponent (default: the mover's)
    z_d_opponent: Array = None  # [B] float32: the opponent's intrinsic return from here (default 0)


class TrainState(NamedTuple):
    """Everything the learner updates."""

    params: Params  # network parameters
    opt_state: optax.OptState  # optimiser state
    step: Array  # [] int32: learner steps taken


def to_batch(transitions: Any) -> Batch:
    """Picks the `Batch` fields out of a dict, NamedTuple or dataclass of transitions."""
    get = transitions.get if isinstance(transitions, Mapping) else lambda k: getattr(transitions, k, None)
    missing = [name for name in _BATCH_FIELDS if get(name) is None]
    if missing:
        raise ValueError(f"learner: the training batch lacks field(s) {missing}; needs {list(_BATCH_FIELDS)}")
    batch = Batch(*(jnp.asarray(get(name)) for name in _BATCH_FIELDS))
    size = batch.observation.shape[0] if batch.observation.ndim == 4 else None
    if size is None or batch.search_policy.ndim != 2 or batch.search_policy.shape[0] != size:
        raise ValueError(
            "learner: the batch needs observation [B, H, W, C] and search_policy [B, A], got "
            f"{tuple(batch.observation.shape)} and {tuple(batch.search_policy.shape)}"
        )
    opponent, z_d_opponent = (get(name) for name in _OPTIONAL_FIELDS)
    batch = batch._replace(
        opponent_player=batch.player if opponent is None else jnp.asarray(opponent),
        z_d_opponent=jnp.zeros_like(batch.z_d) if z_d_opponent is None else jnp.asarray(z_d_opponent))
    for name in ("player", "z", "z_d", "weight") + _OPTIONAL_FIELDS:
        if getattr(batch, name).shape != (size,):
            raise ValueError(f"learner: batch field {name} must be [{size}], got {tuple(getattr(batch, name).shape)}")
    return batch


def make_schedule(config: LearnerConfig) -> optax.Schedule:
    """Learning rate as a function of the learner step."""
    if config.schedule == "constant":
        base = optax.constant_schedule(config.learning_rate)
    elif config.schedule == "piecewise":
        scales = dict(zip(config.boundaries, config.boundary_scales))
        base = optax.piecewise_constant_schedule(config.learning_rate, scales)
    else:
        base = optax.cosine_decay_schedule(config.learning_rate, config.decay_steps, alpha=config.final_lr_fraction)
    if config.warmup_steps == 0:
        return base

    def schedule(step):
        return base(step) * jnp.minimum(1.0, (step + 1) / config.warmup_steps)

    return schedule


def _decay_mask(params: Params) -> Params:
    return jax.tree_util.tree_map(lambda x: x.ndim >= 2, params)


def make_optimizer(config: LearnerConfig) -> optax.GradientTransformation:
    """The optax optimiser described by ``config`` (see the module docstring)."""
    schedule = make_schedule(config)
    parts = []
    if config.max_grad_norm > 0:
        parts.append(optax.clip_by_global_norm(config.max_grad_norm))
    if config.optimizer == "adamw":
        parts.append(optax.adamw(schedule, weight_decay=config.weight_decay, mask=_decay_mask))
    else:
        if config.weight_decay > 0:
            parts.append(optax.add_decayed_weights(config.weight_decay, mask=_decay_mask))
        if config.optimizer == "sgd":
            parts.append(optax.sgd(schedule, momentum=config.momentum or None))
        else:
            parts.append(optax.adam(schedule))
    return optax.chain(*parts)


def init_train_state(
    network: Network, optimizer: optax.GradientTransformation, rng_key: Array, obs_example: Any
) -> TrainState:
    """Fresh parameters and optimiser state; consumes ``rng_key``."""
    params = network.init(rng_key, obs_example)
    return TrainState(params=params, opt_state=optimizer.init(params), step=jnp.zeros((), jnp.int32))


def history_dropout(observation: Array, rng_key: Array, *, rate: float, rows: Tuple[Any, int] = None) -> Array:
    """Drops the history of each chess observation [B, 8, 8, 119] with probability ``rate``.

    Consumes ``rng_key``. See the module docstring for exactly which planes change.
    ``rows = (first, total)``: the observations are rows ``first ..`` of a batch of
    ``total`` (``first`` may be traced), and each row drops as it would in the whole batch.
    """
    if tuple(observation.shape[1:]) != CHESS_OBSERVATION_SHAPE:
        raise ValueError(
            f"history_dropout expects pgx chess observations [B, 8, 8, 119], got {tuple(observation.shape)}"
        )
    keep = np.ones(CHESS_OBSERVATION_SHAPE[-1], np.float32)
    keep[list(CHESS_HISTORY_PLANES)] = 0
    fill = np.zeros_like(keep)
    fill[[CHESS_PLANES_PER_STEP * k + 12 for k in range(1, 8)]] = 1  # "seen once" plane
    no_history = (observation * keep + fill).astype(observation.dtype)
    if rows is None:
        drop = jax.random.bernoulli(rng_key, rate, observation.shape[:1])
    else:
        first, total = rows
        drop = jax.lax.dynamic_slice_in_dim(jax.random.bernoulli(rng_key, rate, (total,)), first,
                                            observation.shape[0])
    return jnp.where(drop[:, None, None, None], no_history, observation)


def mirror_rows(observation: Array, policy: Array, rng_key: Array, mirror: Callable[[Array, Array], Tuple[Array, Array]],
                *, rows: Tuple[Any, int] = None) -> Tuple[Array, Array]:
    """Each example ``[B, ...]`` mirrored (``mirror``, a game's ``Game.mirror``) with
    probability ½; consumes ``rng_key``. ``rows = (first, total)`` as in ``history_dropout``:
    each row is mirrored as it would be in the whole batch."""
    size = observation.shape[0]
    if rows is None:
        flip = jax.random.bernoulli(rng_key, 0.5, (size,))
    else:
        first, total = rows
        flip = jax.lax.dynamic_slice_in_dim(jax.random.bernoulli(rng_key, 0.5, (total,)), first, size)
    mirrored_obs, mirrored_policy = mirror(observation, policy)
    pick = lambda new, old: jnp.where(flip.reshape((size,) + (1,) * (old.ndim - 1)), new, old)  # noqa: E731
    return pick(mirrored_obs, observation), pick(mirrored_policy, policy)


def global_norm(tree: Any) -> Array:
    """sqrt of the sum of squares of every entry of a pytree."""
    return jnp.sqrt(sum(jnp.sum(jnp.square(x.astype(jnp.float32))) for x in jax.tree_util.tree_leaves(tree)))


def _weighted_mean(values: Array, weight: Array, total: Array = None) -> Array:
    total = jnp.sum(weight) if total is None else total
    return jnp.where(total > 0, jnp.sum(weight * values) / jnp.where(total > 0, total, 1.0), 0.0)


def loss_fn(
    params: Params, batch: Batch, *, apply_fn: Callable[[Params, Array, Array], NetOutput], config: LearnerConfig,
    weight_total: Array = None,
) -> Tuple[Array, Metrics]:
    """The AZdb loss of ``batch`` (module docstring) and its terms as metrics.

    ``weight_total``: the Σ w the means divide by (default: this batch's). A device holding
    part of a batch passes the whole batch's: its loss is then its rows' share of the
    batch's loss, and the devices' losses (and gradients) sum to the batch's.
    """
    out = apply_fn(params, batch.observation, batch.player)
    if out.policy_logits.shape != batch.search_policy.shape:
        raise ValueError(
            f"learner: search_policy has shape {batch.search_policy.shape} but the network gives "
            f"{out.policy_logits.shape} policy logits"
        )
    log_p = jax.nn.log_softmax(out.policy_logits, axis=-1)  # [B, A]
    policy_ce = -jnp.sum(jnp.where(batch.search_policy > 0, batch.search_policy * log_p, 0.0), axis=-1)
    value_se = jnp.square(batch.z - out.value)
    value_d_se = jnp.square(batch.z_d - out.value_d)
    weight = batch.weight.astype(jnp.float32)
    mean = functools.partial(_weighted_mean, weight=weight, total=weight_total)
    policy_loss = mean(policy_ce)
    value_loss = mean(value_se)
    value_d_loss = mean(value_d_se)
    if out.value_d_opponent is not None:
        # The second intrinsic head speaks for the opponent's latent: the same positions,
        # seen through the latent of the player who is not to move (docs/method.md).
        other = apply_fn(params, batch.observation, batch.opponent_player).value_d_opponent
        value_d_loss = value_d_loss + mean(jnp.square(batch.z_d_opponent - other))
    loss = policy_loss + config.value_weight * value_loss + config.value_d_weight * value_d_loss
    metrics = {
        "loss": loss,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "value_d_loss": value_d_loss,
        "weight_sum": jnp.sum(weight),
    }
    return loss, metrics


def learner_step(
    network: Network,
    optimizer: optax.GradientTransformation,
    train_state: TrainState,
    batch: Any,
    rng_key: Array,
    *,
    config: LearnerConfig,
    axis_name: Optional[str] = None,
    mirror: Optional[Callable[[Array, Array], Tuple[Array, Array]]] = None,
) -> Tuple[TrainState, Metrics]:
    """One gradient step on ``batch`` (see `Batch`); consumes ``rng_key``. Jit in the caller.

    ``mirror``: the game's ``Game.mirror``, applied to half the examples when
    ``config.mirror_augment`` (required then).

    Metrics are the loss terms before the update, ``grad_norm``, ``param_norm`` and the
    ``learning_rate`` used.

    ``axis_name``: data parallelism over a mesh axis this step is mapped over
    (``jax.shard_map``). Each device holds its rows of the batch (device ``d`` rows
    ``[d B_d, (d + 1) B_d)`` of the whole batch), computes the gradient of their share of
    the whole batch's loss, and the gradients (with the weights and the loss terms) are
    summed over the devices once; the optimiser update, made from the same sums on every
    device, keeps the parameters replicated. The step is the one-device step on the whole
    batch up to the order of its float sums; history dropout draws for the whole batch's
    rows, so it drops the same examples.
    """
    batch = to_batch(batch)
    observation = batch.observation
    rows = observation.shape[0]
    first = 0 if axis_name is None else jax.lax.axis_index(axis_name) * rows
    total_rows = rows if axis_name is None else rows * jax.lax.axis_size(axis_name)
    if config.history_dropout > 0 and tuple(observation.shape[1:]) == CHESS_OBSERVATION_SHAPE:
        batch = batch._replace(observation=history_dropout(observation, rng_key, rate=config.history_dropout,
                                                           rows=(first, total_rows)))
    if config.mirror_augment:
        if mirror is None:
            raise ValueError("learner: mirror_augment needs the game's mirror (Game.mirror)")
        observation, policy = mirror_rows(batch.observation, batch.search_policy, jax.random.fold_in(rng_key, 1),
                                          mirror, rows=(first, total_rows))
        batch = batch._replace(observation=observation, search_policy=policy)
    total = None if axis_name is None else jax.lax.psum(jnp.sum(batch.weight.astype(jnp.float32)), axis_name)
    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
    (_, metrics), grads = grad_fn(train_state.params, batch, apply_fn=network.apply, config=config,
                                  weight_total=total)
    if axis_name is not None:  # the one exchange of a step: the gradient and the loss terms
        grads, metrics = jax.lax.psum((grads, metrics), axis_name)
    updates, opt_state = optimizer.update(grads, train_state.opt_state, train_state.params)
    params = optax.apply_updates(train_state.params, updates)
    metrics = dict(
        metrics,
        grad_norm=global_norm(grads),
        param_norm=global_norm(params),
        learning_rate=jnp.asarray(make_schedule(config)(train_state.step), jnp.float32),
    )
    return TrainState(params=params, opt_state=opt_state, step=train_state.step + 1), metrics


__all__ = [
    "LearnerConfig",
    "Batch",
    "TrainState",
    "OPTIMIZERS",
    "SCHEDULES",
    "CHESS_HISTORY_PLANES",
    "to_batch",
    "make_schedule",
    "make_optimizer",
    "init_train_state",
    "history_dropout",
    "mirror_rows",
    "global_norm",
    "loss_fn",
    "learner_step",
]
