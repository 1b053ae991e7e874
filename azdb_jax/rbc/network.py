"""DSMCP's synopsis network with headsets (paper §5.2, Figure 6), in flax.

The input is one synopsis: 104 bitboard planes (``synopsis.synopsis``), unpacked to
``[104, 8, 8]`` booleans and read as 104 channels of an 8x8 image. A 3x3 convolution
makes ``channels`` features and the library's pre-activation residual blocks
(``networks.ResidualBlock``, the AlphaZero network's tower) follow, then LayerNorm and
ReLU. On that shared tower sit *headsets* (§5.2: "14 headsets, designed to model specific
opponents and regularize each other as they are trained on different slices of data"),
each with the paper's five heads:

- policy: logits over the 36 senses (``actions.NUM_SENSES``) and over the 4,241 move
  requests (``actions.NUM_MOVES``, pass included); one head, two output layers (the stage
  plane tells the network which one is asked for);
- value: the game's result from the player's side, tanh, in [-1, 1];
- SoonWin and SoonLose: logits of winning / losing within the next 5 actions (sigmoid
  gives the probability);
- PieceCount: the true board's piece counts by kind (own then opponent's, linear; the
  opponent's half is the guess, ``data.PIECE_COUNT_NAMES``).

Headsets are named: "all" (every game) and one per modelled player or group present in
the training data; ``stop_gradient`` names headsets whose heads train without moving the
tower (the paper's Table 1 stops the Random headset's gradient: random actions teach the
shared features nothing). Parameters of headset ``h`` live under ``headset_<h>``.

``make_rbc_network`` returns pure ``init`` / ``apply``: ``apply(params, planes, headsets)``
takes unpacked planes ``[B, 104, 8, 8]`` (``unpack_synopses`` makes them from ``[B, 104]``
uint64 synopses) and the names of the headsets to compute (all by default), and returns
``RbcOutput`` with a leading headset axis.
"""

import dataclasses
from typing import Any, Callable, NamedTuple, Optional, Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import networks
from azdb_jax.rbc import actions, synopsis

__all__ = ["ALL", "RbcNetConfig", "RbcOutput", "RbcNetwork", "make_rbc_network", "unpack_synopses",
           "NUM_PIECE_COUNTS"]

ALL = "all"
NUM_PIECE_COUNTS = 12  # own pawns .. king, then the opponent's (data.PIECE_COUNT_NAMES)
Array = jax.Array
Params = Any
# The AlphaZero network's pre-activation residual block and its heads' LayerNorm, reused as they are.


@dataclasses.dataclass(frozen=True)
class RbcNetConfig:
    """Sizes of the synopsis network and its headsets (tiny defaults for CPU).

    Attributes:
      headsets: the headset names, "all" first (added when missing).
      channels: width of the residual tower (the paper's is larger; Table 5).
      num_blocks: residual blocks of the tower.
      policy_channels: 1x1-conv channels before a policy head's output layers.
      value_channels: 1x1-conv channels before a value-like head's hidden layer.
      value_hidden: hidden units of the value, SoonWin, SoonLose and PieceCount heads.
      stop_gradient: headsets whose heads see the tower through ``stop_gradient``.
    """

    headsets: Tuple[str, ...] = (ALL,)
    channels: int = 32
    num_blocks: int = 2
    policy_channels: int = 4
    value_channels: int = 2
    value_hidden: int = 64
    stop_gradient: Tuple[str, ...] = ()

    def __post_init__(self):
        headsets = tuple(self.headsets)
        if ALL not in headsets:
            headsets = (ALL,) + headsets
        elif headsets[0] != ALL:
            headsets = (ALL,) + tuple(h for h in headsets if h != ALL)
        object.__setattr__(self, "headsets", headsets)
        object.__setattr__(self, "stop_gradient", tuple(self.stop_gradient))
        for name in headsets:
            if not isinstance(name, str) or not name or "/" in name:
                raise ValueError(f"RbcNetConfig.headsets: a headset name must be a non-empty string without '/', "
                                 f"got {name!r}")
        if len(set(headsets)) != len(headsets):
            raise ValueError(f"RbcNetConfig.headsets has a name twice: {headsets}")
        unknown = [h for h in self.stop_gradient if h not in headsets]
        if unknown:
            raise ValueError(f"RbcNetConfig.stop_gradient names headsets that do not exist: {unknown} "
                             f"(headsets: {', '.join(headsets)})")
        for name in ("channels", "num_blocks", "policy_channels", "value_channels", "value_hidden"):
            value = getattr(self, name)
            minimum = 0 if name == "num_blocks" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"RbcNetConfig.{name} must be an int >= {minimum}, got {value!r}")

    def index(self, headset: str) -> int:
        """The position of ``headset``; ValueError names the unknown name and the known ones."""
        if headset not in self.headsets:
            raise ValueError(f"unknown headset {headset!r}; this network has {', '.join(self.headsets)}")
        return self.headsets.index(headset)


class RbcOutput(NamedTuple):
    """The heads of the asked headsets, stacked on a leading axis ``[H, B, ...]`` (float32)."""

    sense_logits: Array  # [H, B, NUM_SENSES]
    move_logits: Array  # [H, B, NUM_MOVES]
    value: Array  # [H, B] in [-1, 1]
    soon_win_logit: Array  # [H, B]
    soon_lose_logit: Array  # [H, B]
    piece_counts: Array  # [H, B, NUM_PIECE_COUNTS]


class _Headset(nn.Module):
    """One headset: policy (senses and moves), value, SoonWin, SoonLose and PieceCount heads."""

    config: RbcNetConfig

    @nn.compact
    def __call__(self, x: Array) -> RbcOutput:
        cfg = self.config
        batch = x.shape[0]
        p = nn.Conv(cfg.policy_channels, (1, 1), name="policy_conv")(x)
        p = nn.relu(networks.head_norm(jnp.float32, "policy_norm")(p)).reshape(batch, -1)
        sense_logits = nn.Dense(actions.NUM_SENSES, name="sense_logits")(p)
        move_logits = nn.Dense(actions.NUM_MOVES, name="move_logits")(p)

        def head(name: str, outputs: int) -> Array:
            v = nn.Conv(cfg.value_channels, (1, 1), name=f"{name}_conv")(x)
            v = nn.relu(networks.head_norm(jnp.float32, f"{name}_norm")(v)).reshape(batch, -1)
            v = nn.relu(nn.Dense(cfg.value_hidden, name=f"{name}_hidden")(v))
            return nn.Dense(outputs, name=f"{name}_out")(v)

        return RbcOutput(sense_logits=sense_logits, move_logits=move_logits, value=jnp.tanh(head("value", 1)[:, 0]),
                         soon_win_logit=head("soon_win", 1)[:, 0], soon_lose_logit=head("soon_lose", 1)[:, 0],
                         piece_counts=head("piece_count", NUM_PIECE_COUNTS))


class _RbcNet(nn.Module):
    """The residual tower (the library's blocks) and the headsets (module docstring)."""

    config: RbcNetConfig

    @nn.compact
    def __call__(self, planes: Array, headsets: Tuple[str, ...]) -> RbcOutput:
        cfg = self.config
        x = jnp.transpose(planes.astype(jnp.float32), (0, 2, 3, 1))  # [B, 104, 8, 8] -> [B, 8, 8, 104]
        x = nn.Conv(cfg.channels, (3, 3), name="stem")(x)
        for b in range(cfg.num_blocks):
            x = networks.ResidualBlock(cfg.channels, jnp.float32, name=f"block_{b}")(x, None)
        x = nn.relu(nn.LayerNorm(name="tower_norm")(x))
        # Every headset's parameters are made at init (``headsets`` there is all of them).
        modules = {name: _Headset(cfg, name=f"headset_{name}") for name in cfg.headsets}
        outs = [modules[name](jax.lax.stop_gradient(x) if name in cfg.stop_gradient else x) for name in headsets]
        return RbcOutput(*(jnp.stack(field) for field in zip(*outs)))


class RbcNetwork(NamedTuple):
    """Pure functions of a built synopsis network (jit them in the caller).

    - ``init(rng_key) -> params``, every headset's included.
    - ``apply(params, planes, headsets=None) -> RbcOutput``: ``planes`` [B, 104, 8, 8] (bool or
      float), ``headsets`` a tuple of names (None: all, in ``config.headsets`` order).
    """

    init: Callable[[Array], Params]
    apply: Callable[..., RbcOutput]
    config: RbcNetConfig


def make_rbc_network(config: RbcNetConfig = RbcNetConfig()) -> RbcNetwork:
    """Builds the network of ``config`` (module docstring)."""
    if not isinstance(config, RbcNetConfig):
        raise TypeError(f"config must be an RbcNetConfig, got {type(config).__name__}")
    module = _RbcNet(config)

    def init(rng_key: Array) -> Params:
        planes = jnp.zeros((1, synopsis.NUM_PLANES, 8, 8), jnp.float32)
        return module.init(rng_key, planes, config.headsets)

    def apply(params: Params, planes: Array, headsets: Optional[Sequence[str]] = None) -> RbcOutput:
        names = config.headsets if headsets is None else tuple(headsets)
        for name in names:
            config.index(name)
        if planes.ndim != 4 or tuple(planes.shape[1:]) != (synopsis.NUM_PLANES, 8, 8):
            raise ValueError(f"the synopsis network expects planes [B, {synopsis.NUM_PLANES}, 8, 8], got shape "
                             f"{tuple(planes.shape)} (unpack_synopses makes them from [B, 104] uint64)")
        return module.apply(params, planes, names)

    return RbcNetwork(init=init, apply=apply, config=config)


def unpack_synopses(synopses: np.ndarray) -> np.ndarray:
    """``[B, 104, 8, 8]`` bool from ``[B, 104]`` uint64 synopses (``synopsis.unpack``)."""
    synopses = np.asarray(synopses)
    if synopses.ndim != 2 or synopses.shape[1] != synopsis.NUM_PLANES or synopses.dtype != np.uint64:
        raise ValueError(f"synopses must be uint64 [B, {synopsis.NUM_PLANES}], got {synopses.dtype} "
                         f"{list(synopses.shape)}")
    return synopsis.unpack(synopses)
