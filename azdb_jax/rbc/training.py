"""Training the synopsis network's headsets on recorded games, and its head accuracies (paper §5.3, Tables 1, 6-8).

Each example (``dataset.Examples``) trains two headsets: "all" and the one of its group (the
player whose decision it is, ``data.headset_of``), with one loss per head (§5.2):

- policy: cross-entropy of the taken action, over the 36 senses at a sense and over the
  move requests at a move, the requests the player could not make masked out
  (``Examples.legal``: reconchess's ``move_actions`` and the pass);
- value: squared error of the tanh value against the game's result (+1 / 0 / -1);
- SoonWin / SoonLose: binary cross-entropy of their logits;
- PieceCount: squared error of the 12 counts (``data.PIECE_COUNT_NAMES``), averaged.

The paper applies one SGD step to one headset at a time, alternating by training weights;
here every minibatch (drawn uniformly from the training examples) steps every headset its
examples reach at once with Adam, which gives each headset a weight proportional to its
examples and "all" the sum. With dev examples (games held apart from the training and the
held-out ones) the parameters of the step with the least dev loss are kept. Headsets named
in ``RbcNetConfig.stop_gradient`` do not move the tower (Table 1's "Stop Gradient" column,
set for the Random headset).

``evaluate`` measures each headset on held-out examples the way Tables 1 and 6-8 do
(top-1 action accuracy, winner accuracy) plus the auxiliary heads, each beside a chance
baseline; ``head_table`` renders it as Markdown. ``save_checkpoint`` / ``load_checkpoint``
go through the library's ``checkpoint.RunCheckpointer`` (orbax, checksums) with the
network's and the training's configs saved beside the arrays.
"""

import dataclasses
import logging
import pathlib
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from azdb_jax import checkpoint
from azdb_jax.rbc import actions, dataset, network

__all__ = ["TrainConfig", "Batch", "make_batch", "make_optimizer", "loss_fn", "train", "TrainResult", "mean_losses",
           "make_mean_losses", "predict", "evaluate", "head_table",
           "save_checkpoint", "load_checkpoint", "headset_index"]

log = logging.getLogger(__name__)
_NEG = -1e9  # logit of a masked move request


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """How the network is trained.

    Attributes:
      batch_size: examples per minibatch.
      learning_rate: Adam's step size.
      weight_decay: AdamW's decoupled weight decay (0: plain Adam).
      max_grad_norm: gradients are clipped to this global norm.
      steps: the most minibatches.
      seconds: a wall-clock budget for the steps (None: none); training stops at whichever
        of ``steps`` and ``seconds`` comes first.
      policy_weight, value_weight, soon_weight, piece_weight: the heads' loss weights
        (``soon_weight`` applies to SoonWin and to SoonLose).
      seed: seed of the initial parameters and of the minibatch draws.
    """

    batch_size: int = 128
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    steps: int = 1000
    seconds: Optional[float] = None
    policy_weight: float = 1.0
    value_weight: float = 1.0
    soon_weight: float = 0.5
    piece_weight: float = 0.1
    seed: int = 0

    def __post_init__(self):
        for name in ("batch_size", "steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TrainConfig.{name} must be an int >= 1, got {value!r}")
        for name in ("learning_rate", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"TrainConfig.{name} must be > 0, got {getattr(self, name)!r}")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"TrainConfig.seconds must be > 0 or None, got {self.seconds!r}")
        for name in ("weight_decay", "policy_weight", "value_weight", "soon_weight", "piece_weight"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"TrainConfig.{name} must be >= 0, got {getattr(self, name)!r}")


class Batch(NamedTuple):
    """A minibatch on the host, ready for ``loss_fn``."""

    planes: np.ndarray  # [B, 104, 8, 8] bool
    stage: np.ndarray  # [B] int32: 0 sense, 1 move
    action: np.ndarray  # [B] int32
    legal: np.ndarray  # [B, NUM_MOVES] bool (all True at senses: unused there)
    result: np.ndarray  # [B] float32
    soon_win: np.ndarray  # [B] float32
    soon_lose: np.ndarray  # [B] float32
    pieces: np.ndarray  # [B, 12] float32
    headset: np.ndarray  # [B] int32: the example's own headset (0, "all", when its group has none)


def headset_index(config: network.RbcNetConfig, groups: List[str]) -> np.ndarray:
    """``[len(groups)]`` int32: each group's headset in ``config.headsets`` (0, "all", if none)."""
    return np.asarray([config.headsets.index(g) if g in config.headsets else 0 for g in groups] or [0], np.int32)


def make_batch(examples: dataset.Examples, index: np.ndarray, group_headset: np.ndarray) -> Batch:
    """The examples ``index`` as a ``Batch`` (``group_headset`` from ``headset_index``)."""
    stage = examples.stage[index].astype(np.int32)
    legal = dataset.unpack_mask(examples.legal[index])
    legal[stage == 0] = True
    return Batch(planes=network.unpack_synopses(examples.synopses[index]), stage=stage,
                 action=examples.action[index].astype(np.int32), legal=legal,
                 result=examples.result[index].astype(np.float32),
                 soon_win=examples.soon_win[index].astype(np.float32),
                 soon_lose=examples.soon_lose[index].astype(np.float32),
                 pieces=examples.pieces[index].astype(np.float32),
                 headset=group_headset[examples.group[index]].astype(np.int32))


def make_optimizer(config: TrainConfig) -> optax.GradientTransformation:
    """Clipped AdamW (with ``weight_decay = 0`` exactly Adam)."""
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                       optax.adamw(config.learning_rate, weight_decay=config.weight_decay))


def _head_losses(out: network.RbcOutput, batch: Batch) -> Dict[str, jax.Array]:
    """Per-headset, per-example losses ``[H, B]`` of each head (module docstring)."""
    sense = -jnp.take_along_axis(jax.nn.log_softmax(out.sense_logits), batch.action[None, :, None] % actions.NUM_SENSES,
                                 axis=-1)[..., 0]
    masked = jnp.where(batch.legal[None], out.move_logits, _NEG)
    move = -jnp.take_along_axis(jax.nn.log_softmax(masked), batch.action[None, :, None], axis=-1)[..., 0]
    return {"policy": jnp.where(batch.stage[None] == 0, sense, move),
            "value": (out.value - batch.result[None]) ** 2,
            "soon_win": optax.sigmoid_binary_cross_entropy(out.soon_win_logit, batch.soon_win[None]),
            "soon_lose": optax.sigmoid_binary_cross_entropy(out.soon_lose_logit, batch.soon_lose[None]),
            "pieces": jnp.mean((out.piece_counts - batch.pieces[None]) ** 2, axis=-1)}


def loss_fn(net: network.RbcNetwork, config: TrainConfig, params: Any, batch: Batch
            ) -> Tuple[jax.Array, Dict[str, jax.Array]]:
    """The weighted loss of a minibatch: each example's loss in "all" and in its own headset,
    averaged over examples; and each head's loss in "all" (for the log)."""
    out = net.apply(params, jnp.asarray(batch.planes))
    heads = _head_losses(out, batch)
    weights = {"policy": config.policy_weight, "value": config.value_weight, "soon_win": config.soon_weight,
               "soon_lose": config.soon_weight, "pieces": config.piece_weight}
    per_example = sum(weights[k] * v for k, v in heads.items())  # [H, B]
    h = jnp.arange(per_example.shape[0])[:, None]
    mask = ((h == 0) | (h == batch.headset[None])).astype(jnp.float32)
    total = jnp.sum(per_example * mask) / per_example.shape[1]
    return total, {k: jnp.mean(v[0]) for k, v in heads.items()}


class TrainResult(NamedTuple):
    params: Any  # the parameters of ``step`` (the best step on the dev examples when given)
    opt_state: Any  # the optimiser state of that step
    step: int
    seconds: float
    losses: List[Dict[str, float]]  # every ``log_every`` steps: step, total and each head's "all" loss
    steps_run: int = 0  # steps taken in all
    dev_losses: Optional[List[Dict[str, float]]] = None  # every ``eval_every`` steps: step, ``mean_losses`` on dev


def train(net: network.RbcNetwork, examples: dataset.Examples, config: TrainConfig, *, params: Any = None,
          dev: Optional[dataset.Examples] = None, eval_every: int = 500, dev_chunk: int = 512, log_every: int = 50,
          progress: Optional[Callable[[Dict[str, float]], None]] = None) -> TrainResult:
    """Adam on uniformly drawn minibatches of ``examples`` until ``config.steps`` or
    ``config.seconds`` (module docstring); ``params`` continues from given parameters.

    With ``dev`` examples (games apart from both the training and the held-out ones), their
    mean loss is measured every ``eval_every`` steps and at the end, and the parameters of
    the step with the least are returned (early stopping without looking at the held-out
    games)."""
    if len(examples) == 0:
        raise ValueError("no training examples")
    if dev is not None and len(dev) == 0:
        raise ValueError("no dev examples (give None to train without)")
    rng = np.random.default_rng(config.seed)
    if params is None:
        params = net.init(jax.random.PRNGKey(config.seed))
    optimizer = make_optimizer(config)
    opt_state = optimizer.init(params)
    group_headset = headset_index(net.config, examples.groups)
    dev_loss = make_mean_losses(net, config, dev_chunk) if dev is not None else None

    @jax.jit
    def step_fn(params, opt_state, batch):
        (loss, heads), grads = jax.value_and_grad(lambda p: loss_fn(net, config, p, batch), has_aux=True)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, heads

    start = time.perf_counter()
    losses: List[Dict[str, float]] = []
    dev_losses: List[Dict[str, float]] = []
    best = (np.inf, params, opt_state, 0)
    step = 0

    def check_dev():
        nonlocal best
        row = {"step": step, **dev_loss(params, dev)}
        dev_losses.append(row)
        log.info("dev at step %d: %s", step, row)
        if progress is not None:
            progress({"dev": True, **row})
        if row["loss"] < best[0]:
            best = (row["loss"], params, opt_state, step)

    while step < config.steps:
        if config.seconds is not None and time.perf_counter() - start > config.seconds:
            break
        batch = make_batch(examples, rng.integers(len(examples), size=config.batch_size), group_headset)
        params, opt_state, loss, heads = step_fn(params, opt_state, batch)
        step += 1
        if step % log_every == 0 or step == 1 or step == config.steps:
            row = {"step": step, "seconds": time.perf_counter() - start, "loss": float(loss),
                   **{k: float(v) for k, v in heads.items()}}
            losses.append(row)
            log.info("step %d: %s", step, row)
            if progress is not None:
                progress(row)
        if dev is not None and step % eval_every == 0:
            check_dev()
    if dev is None:
        return TrainResult(params, opt_state, step, time.perf_counter() - start, losses, step)
    if not dev_losses or dev_losses[-1]["step"] != step:
        check_dev()
    _, params, opt_state, best_step = best
    return TrainResult(params, opt_state, best_step, time.perf_counter() - start, losses, step, dev_losses)


# ---------------------------------------------------------------------------- evaluation


def make_mean_losses(net: network.RbcNetwork, config: TrainConfig, chunk: int = 512
                     ) -> Callable[[Any, dataset.Examples], Dict[str, float]]:
    """``mean_losses`` with one compiled function for every call."""

    @jax.jit
    def heads(params, batch):
        return _head_losses(net.apply(params, jnp.asarray(batch.planes), (network.ALL,)), batch)

    weights = {"policy": config.policy_weight, "value": config.value_weight, "soon_win": config.soon_weight,
               "soon_lose": config.soon_weight, "pieces": config.piece_weight}

    def run(params: Any, examples: dataset.Examples) -> Dict[str, float]:
        sums = {k: 0.0 for k in weights}
        for begin in range(0, len(examples), chunk):
            index = np.arange(begin, min(begin + chunk, len(examples)))
            padded = np.concatenate([index, np.full(chunk - len(index), index[-1])])  # one compiled shape
            batch = make_batch(examples, padded, np.zeros(max(len(examples.groups), 1), np.int32))
            for k, v in heads(params, batch).items():
                sums[k] += float(np.sum(np.asarray(v)[0, :len(index)]))
        means = {k: v / max(len(examples), 1) for k, v in sums.items()}
        means["loss"] = sum(weights[k] * v for k, v in means.items())
        return means

    return run


def mean_losses(net: network.RbcNetwork, config: TrainConfig, params: Any, examples: dataset.Examples,
                chunk: int = 512) -> Dict[str, float]:
    """Each head's loss in "all" and their weighted sum (``loss``), averaged over every
    example of ``examples`` (training against held-out shows how far the network overfits)."""
    return make_mean_losses(net, config, chunk)(params, examples)


def predict(net: network.RbcNetwork, params: Any, examples: dataset.Examples, headsets: Tuple[str, ...],
            chunk: int = 512) -> Dict[str, np.ndarray]:
    """Each asked headset's predictions on every example, ``[H, N]``: the 5 most likely senses
    and legal moves (``[H, N, 5]``, best first), the value, SoonWin / SoonLose probabilities
    and the piece counts (``[H, N, 12]``)."""

    @jax.jit
    def run(params, planes, legal):
        out = net.apply(params, planes, headsets)
        moves = jnp.where(legal[None], out.move_logits, _NEG)
        return {"sense": jax.lax.top_k(out.sense_logits, 5)[1], "move": jax.lax.top_k(moves, 5)[1],
                "value": out.value, "soon_win": jax.nn.sigmoid(out.soon_win_logit),
                "soon_lose": jax.nn.sigmoid(out.soon_lose_logit), "pieces": out.piece_counts}

    parts: Dict[str, List[np.ndarray]] = {}
    for begin in range(0, len(examples), chunk):
        index = np.arange(begin, min(begin + chunk, len(examples)))
        padded = np.concatenate([index, np.full(chunk - len(index), index[-1])])  # one compiled shape
        batch = make_batch(examples, padded, np.zeros(max(len(examples.groups), 1), np.int32))
        for k, v in run(params, batch.planes, batch.legal).items():
            parts.setdefault(k, []).append(np.asarray(v)[:, :len(index)])
    return {k: np.concatenate(v, axis=1) for k, v in parts.items()}


def _most_frequent(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` most frequent values, most frequent first (ties: the smaller value); [-1] if none."""
    if values.size == 0:
        return np.asarray([-1])
    kinds, counts = np.unique(values, return_counts=True)
    return kinds[np.argsort(-counts, kind="stable")[:k]]


def _metrics(pred: Dict[str, np.ndarray], h: int, held: dataset.Examples, rows: np.ndarray,
             train: dataset.Examples, train_rows: np.ndarray) -> Dict[str, Any]:
    """One headset's accuracies on the held-out ``rows`` with their chance baselines, the
    baselines' constants taken from the training ``train_rows`` of the same group."""
    out: Dict[str, Any] = {"examples": int(rows.size), "games": int(np.unique(held.game[rows]).size)}
    opp = slice(6, 12)
    for stage, name, count in ((0, "sense", actions.NUM_SENSES), (1, "move", None)):
        sel = rows[held.stage[rows] == stage]
        train_sel = train_rows[train.stage[train_rows] == stage]
        out[f"{name}_n"] = int(sel.size)
        if not sel.size:
            continue
        target = held.action[sel]
        top = pred[name][h, sel]  # [n, 5]
        out[f"{name}_top1"] = float(np.mean(top[:, 0] == target))
        out[f"{name}_top5"] = float(np.mean(np.any(top == target[:, None], axis=1)))
        frequent = _most_frequent(train.action[train_sel], 5)
        out[f"{name}_top1_most_frequent"] = float(np.mean(target == frequent[0]))
        out[f"{name}_top5_most_frequent"] = float(np.mean(np.isin(target, frequent)))
        legal = np.full(sel.size, count) if count is not None else dataset.unpack_mask(held.legal[sel]).sum(axis=1)
        out[f"{name}_top1_uniform"] = float(np.mean(1.0 / legal))
        out[f"{name}_top5_uniform"] = float(np.mean(np.minimum(5.0 / legal, 1.0)))
    result = held.result[rows].astype(np.float64)
    value = pred["value"][h, rows]
    decisive = result != 0
    out["decisive_n"] = int(decisive.sum())
    train_result = train.result[train_rows].astype(np.float64)
    if decisive.any():
        out["winner_acc"] = float(np.mean(np.sign(value[decisive]) == result[decisive]))
        majority = 1.0 if np.sum(train_result > 0) >= np.sum(train_result < 0) else -1.0
        out["winner_acc_majority"] = float(np.mean(result[decisive] == majority))
    out["value_mse"] = float(np.mean((value - result) ** 2))
    out["value_mse_mean"] = float(np.mean((result - (train_result.mean() if train_result.size else 0.0)) ** 2))
    for name in ("soon_win", "soon_lose"):
        target = getattr(held, name)[rows]
        out[f"{name}_rate"] = float(target.mean())
        out[f"{name}_acc"] = float(np.mean((pred[name][h, rows] > 0.5) == target))
        train_rate = getattr(train, name)[train_rows].mean() if train_rows.size else 0.0
        out[f"{name}_acc_majority"] = float(np.mean(target == (train_rate > 0.5)))
        positive = target.astype(bool)
        if positive.any():
            out[f"{name}_recall"] = float(np.mean(pred[name][h, rows][positive] > 0.5))
    pieces = held.pieces[rows].astype(np.float64)
    out["opponent_pieces_mae"] = float(np.mean(np.abs(pred["pieces"][h, rows][:, opp] - pieces[:, opp])))
    mean = train.pieces[train_rows].astype(np.float64).mean(axis=0) if train_rows.size else np.zeros(12)
    out["opponent_pieces_mae_mean"] = float(np.mean(np.abs(mean[opp] - pieces[:, opp])))
    return out


def evaluate(net: network.RbcNetwork, params: Any, held: dataset.Examples, train: dataset.Examples, *,
             chunk: int = 512) -> List[Dict[str, Any]]:
    """Head accuracies on the held-out examples: for each group of the held-out data, its
    own headset (if the network has one) and "all" on that group's examples, then "all" on
    every example (the diagonal and the "All" row of the paper's Tables 6-8). Baselines:
    the most frequent action of the group's training examples, a uniform choice (1/36 for
    senses, the mean of 1 / legal requests for moves), the majority winner, the training
    mean value and piece counts, the majority SoonWin / SoonLose class."""
    headsets = net.config.headsets
    pred = predict(net, params, held, headsets, chunk)
    rows_out = []
    groups = list(held.groups)
    for gi, group in enumerate(groups):
        rows = np.flatnonzero(held.group == gi)
        if not rows.size:
            continue
        train_gi = train.groups.index(group) if group in train.groups else -1
        train_rows = np.flatnonzero(train.group == train_gi) if train_gi >= 0 else np.zeros(0, np.int64)
        for headset in ([group] if group in headsets else []) + [network.ALL]:
            rows_out.append({"headset": headset, "data": group,
                             **_metrics(pred, headsets.index(headset), held, rows, train, train_rows)})
    rows = np.arange(len(held))
    rows_out.append({"headset": network.ALL, "data": "all",
                     **_metrics(pred, 0, held, rows, train, np.arange(len(train)))})
    return rows_out


def _pct(row: Dict[str, Any], key: str) -> str:
    return f"{100 * row[key]:.1f}" if key in row else "–"


def _num(row: Dict[str, Any], key: str, digits: int = 3) -> str:
    return f"{row[key]:.{digits}f}" if key in row else "–"


def head_table(rows: List[Dict[str, Any]]) -> str:
    """Markdown: one line per (headset, held-out data), each measure with its baseline in brackets."""
    header = ("| headset | data | games: senses / moves | sense top-1 % [most frequent, uniform] | move top-1 % "
              "[most frequent, uniform legal] | top-5 % senses, moves [most frequent] | winner % [majority] "
              "(decisive) | value MSE [mean] | SoonWin % "
              "[majority] (rate, recall) | SoonLose % [majority] (rate, recall) | opp. pieces MAE [mean] |")
    lines = [header, "|" + "---|" * 11]
    for r in rows:
        lines.append(
            f"| {r['headset']} | {r['data']} | {r['games']}: {r['sense_n']} / {r['move_n']} "
            f"| {_pct(r, 'sense_top1')} [{_pct(r, 'sense_top1_most_frequent')}, {_pct(r, 'sense_top1_uniform')}] "
            f"| {_pct(r, 'move_top1')} [{_pct(r, 'move_top1_most_frequent')}, {_pct(r, 'move_top1_uniform')}] "
            f"| {_pct(r, 'sense_top5')}, {_pct(r, 'move_top5')} [{_pct(r, 'sense_top5_most_frequent')}, "
            f"{_pct(r, 'move_top5_most_frequent')}] "
            f"| {_pct(r, 'winner_acc')} [{_pct(r, 'winner_acc_majority')}] ({r['decisive_n']}) "
            f"| {_num(r, 'value_mse')} [{_num(r, 'value_mse_mean')}] "
            f"| {_pct(r, 'soon_win_acc')} [{_pct(r, 'soon_win_acc_majority')}] ({_pct(r, 'soon_win_rate')}, "
            f"{_pct(r, 'soon_win_recall')}) "
            f"| {_pct(r, 'soon_lose_acc')} [{_pct(r, 'soon_lose_acc_majority')}] ({_pct(r, 'soon_lose_rate')}, "
            f"{_pct(r, 'soon_lose_recall')}) "
            f"| {_num(r, 'opponent_pieces_mae', 2)} [{_num(r, 'opponent_pieces_mae_mean', 2)}] |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- checkpoints


def save_checkpoint(directory, net: network.RbcNetwork, config: TrainConfig, params: Any, opt_state: Any,
                    step: int, *, extra: Optional[Dict[str, Any]] = None) -> pathlib.Path:
    """Writes ``directory/<step>`` through ``checkpoint.RunCheckpointer``: parameters,
    optimiser state and step, with ``{"network": ..., "train": ..., **extra}`` as its config."""
    directory = pathlib.Path(directory)
    state = checkpoint.RunState(params=params, opt_state=opt_state, step=np.asarray(step, np.int32),
                                rng_key=np.asarray([0, config.seed], np.uint32))
    meta = {"network": dataclasses.asdict(net.config), "train": dataclasses.asdict(config), **(extra or {})}
    with checkpoint.RunCheckpointer(str(directory), checkpoint.CheckpointConfig(save_replay=False)) as manager:
        manager.save(step, state, config=meta)
    return directory / str(step)


def _tuple_fields(cfg: Dict[str, Any]) -> Dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in cfg.items()}


def load_checkpoint(directory, step: Optional[int] = None) -> Tuple[network.RbcNetwork, Any, Dict[str, Any]]:
    """(network, parameters, saved config) of ``directory`` at ``step`` (default: the latest);
    ``checkpoint.CheckpointError`` (a ValueError) names a missing, corrupt or foreign one."""
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        raise checkpoint.CheckpointError(f"checkpoint directory {directory} does not exist")
    with checkpoint.RunCheckpointer(str(directory), checkpoint.CheckpointConfig(save_replay=False),
                                    create=False) as manager:
        saved = manager.read_config(step)
        if not isinstance(saved, dict) or "network" not in saved or "train" not in saved:
            raise checkpoint.CheckpointError(f"checkpoint {directory} is not a synopsis-network checkpoint "
                                             "(its config has no network and train sections)")
        try:
            net_config = network.RbcNetConfig(**_tuple_fields(saved["network"]))
            train_config = TrainConfig(**saved["train"])
        except TypeError as e:
            raise checkpoint.CheckpointError(f"checkpoint {directory}: its config does not fit this code: {e}") from e
        net = network.make_rbc_network(net_config)
        params = jax.eval_shape(net.init, jax.random.PRNGKey(0))
        opt_state = jax.eval_shape(make_optimizer(train_config).init, params)
        target = checkpoint.RunState(params=params, opt_state=opt_state,
                                     step=jax.ShapeDtypeStruct((), np.int32),
                                     rng_key=jax.ShapeDtypeStruct((2,), np.uint32))
        state = manager.restore(step, target=target)
    return net, state.params, saved
