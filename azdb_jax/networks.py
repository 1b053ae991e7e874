"""The latent-conditioned network f_θ(obs, l_i) -> (policy logits, v, v_d).

One set of weights θ plays every member of the team; player ``i`` is told who it is
through its one-hot latent ``l_i`` (paper §3 and Fig. 1; SPEC §1.1). The network is AlphaZero's: a residual convolutional torso shared by a
policy head and a value head, plus an *intrinsic value* head ``v_d`` that predicts the
diversity return ``z_d`` (SPEC §1.6). ``v`` is squashed to [-1, 1] with tanh like the
game value; ``v_d`` is linear because intrinsic returns are not bounded by ±1.

The latent enters the network in one of two ways (``NetworkConfig.latent``):
  "planes"  n constant one-hot planes appended to the observation channels, the
            paper's choice (the default). The planes are never built: the stem's
            convolution over them depends only on the player and the square, so it is
            computed once per player and gathered (`_Stem`; same parameters and the
            same function as a convolution over the concatenated input);
  "film"    feature-wise linear modulation: every residual block b scales and
            shifts its first normalised activations by ``(1 + γ_b(l_i), β_b(l_i))``,
            with (γ_b, β_b) a linear function of the one-hot latent. The paper
            tried FiLM and saw no significant gain (§3, footnote 1).

``NetworkConfig.torso = "lstm"`` replaces the residual torso with Zhou & Riis's Nim
network: one LSTM layer (``lstm_hidden`` units, 128 in the paper) reads the observation
as a sequence (its rows are the steps, each row's cells the step's inputs; Nim's unary
board is one cell a step), and its last output feeds a linear policy head, a tanh value
head and the linear ``v_d`` head(s). The latent is appended to every step's inputs as a
one-hot ("planes") or modulates the LSTM's output ("film").

Residual blocks are pre-activation (LayerNorm -> ReLU -> conv, twice, plus the skip).
LayerNorm rather than BatchNorm keeps the network a pure function of ``params``: no
running statistics to thread through self-play, search and the learner.

Every env's observation is an image-like ``[H, W, C]`` array (nim's is heaps x sizes);
boolean planes are cast to the compute dtype. ``make_network`` returns pure
``init``/``apply`` functions; jit them in the caller.
"""

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Optional

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

Array = jax.Array
Params = Any

# XLA options for a program that runs once per run (fresh parameters, a trainer's first
# state), whose compile is its whole cost: LLVM at optimisation level 1. The ci scale's
# first trainer state compiles in about half the CPU time (6.5 s -> 3.4 s) and runs as
# fast, and its draws are the default build's bit for bit (docs/performance.md, "Programs
# that run once"; level 0 compiles faster still but moves some draws by a float32 ulp).
RUN_ONCE_COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}

LATENT_MODES = ("planes", "film")
COMPUTE_DTYPES = ("float32", "bfloat16")
TORSOS = ("resnet", "lstm")


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    """Sizes of f_θ. Tiny for tests, ~32-64 channels for CPU demos, 256 x 19 for AZ chess.

    Attributes:
      channels: width of the residual torso.
      num_blocks: number of pre-activation residual blocks.
      value_hidden: hidden units of the value and intrinsic-value heads (AZ: 256).
      policy_channels: 1x1-conv channels before the policy's dense layer (AZ Go: 2).
      value_channels: 1x1-conv channels before the value heads' hidden layer (AZ: 1).
      latent: how the player latent enters: "planes" (default) or "film".
      compute_dtype: activations' dtype, "float32" or "bfloat16"; parameters and
        outputs stay float32.
      torso: "resnet" (AlphaZero's, the default) or "lstm" (one LSTM layer over the
        observation's rows, Zhou & Riis's Nim network; ``channels``, ``num_blocks``,
        ``value_hidden``, ``policy_channels`` and ``value_channels`` are then unused).
      lstm_hidden: the LSTM's units (paper: 128).
    """

    channels: int = 32
    num_blocks: int = 2
    value_hidden: int = 64
    policy_channels: int = 2
    value_channels: int = 1
    latent: str = "planes"
    compute_dtype: str = "float32"
    torso: str = "resnet"
    lstm_hidden: int = 128

    def __post_init__(self):
        for name in ("channels", "num_blocks", "value_hidden", "policy_channels", "value_channels", "lstm_hidden"):
            value = getattr(self, name)
            minimum = 0 if name == "num_blocks" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"NetworkConfig.{name} must be an int >= {minimum}, got {value!r}")
        if self.latent not in LATENT_MODES:
            raise ValueError(f"NetworkConfig.latent must be one of {LATENT_MODES}, got {self.latent!r}")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(
                f"NetworkConfig.compute_dtype must be one of {COMPUTE_DTYPES}, got {self.compute_dtype!r}"
            )
        if self.torso not in TORSOS:
            raise ValueError(f"NetworkConfig.torso must be one of {TORSOS}, got {self.torso!r}")


class NetOutput(NamedTuple):
    """What f_θ says about a batch of positions, from the side to move."""

    policy_logits: Array  # [B, A] float32, unnormalised, illegal actions not masked
    value: Array  # [B] float32 in [-1, 1]: expected game result (tanh)
    value_d: Array  # [B] float32, unbounded: expected intrinsic return z_d (linear)
    # [B] float32 or None: the latent's intrinsic return from a position where its
    # opponent is to move (networks built with ``value_d_opponent=True``; docs/method.md).
    value_d_opponent: Optional[Array] = None


class Network(NamedTuple):
    """Pure functions of a built network (jit them in the caller).

    init(rng_key, obs_example) -> params: the key is consumed; ``obs_example`` is one
      observation ``[H, W, C]`` or a batch ``[B, H, W, C]`` (only its shape and dtype
      matter, so a ``jax.ShapeDtypeStruct`` works under ``jax.eval_shape``).
    apply(params, obs, player) -> NetOutput: ``obs`` [B, H, W, C] (bool or float),
      ``player`` [B] int player ids in [0, num_players).
    """

    init: Callable[[Array, Any], Params]
    apply: Callable[[Params, Array, Array], NetOutput]
    num_actions: int
    num_players: int
    config: NetworkConfig


class ResidualBlock(nn.Module):
    """x + conv(relu(norm(conv(relu(norm(x)))))), norms optionally FiLM-modulated."""

    channels: int
    dtype: Any

    @nn.compact
    def __call__(self, x: Array, film: Array | None) -> Array:
        y = x
        for i in range(2):
            y = nn.LayerNorm(dtype=self.dtype, name=f"norm_{i}")(y)
            if film is not None and i == 0:
                # film: [B, 2 * channels] -> per-channel scale and shift for the block.
                scale, shift = jnp.split(film.astype(self.dtype), 2, axis=-1)
                y = y * (1.0 + scale[:, None, None, :]) + shift[:, None, None, :]
            y = nn.relu(y)
            y = nn.Conv(self.channels, (3, 3), dtype=self.dtype, name=f"conv_{i}")(y)
        return x + y


class _Stem(nn.Module):
    """The first 3x3 convolution over the observation and the player's latent planes.

    The function (and the parameters: ``kernel`` [3, 3, C + n, channels], ``bias``) of
    ``nn.Conv`` over ``concat([obs, n constant one-hot planes])`` with SAME padding. The
    planes' part of the sum depends only on the player and the square (the zero padding
    makes edge squares see fewer plane cells), so it is convolved once per player, an
    [n, H, W, channels] map, and gathered by player id: a team of n costs what a team of
    one costs instead of n more input channels per position (docs/performance.md).
    """

    features: int
    num_players: int
    dtype: Any

    @nn.compact
    def __call__(self, x: Array, player: Array) -> Array:
        c, n = x.shape[-1], self.num_players
        kernel = self.param("kernel", nn.linear.default_kernel_init, (3, 3, c + n, self.features), jnp.float32)
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,), jnp.float32)
        kernel, bias = kernel.astype(self.dtype), bias.astype(self.dtype)
        conv = functools.partial(jax.lax.conv_general_dilated, window_strides=(1, 1), padding="SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
        one_hot_planes = jnp.broadcast_to(jnp.eye(n, dtype=self.dtype)[:, None, None, :], (n,) + x.shape[1:3] + (n,))
        per_player = conv(one_hot_planes, kernel[:, :, c:])  # [n, H, W, features]
        return conv(x, kernel[:, :, :c]) + per_player[player] + bias


def head_norm(dtype: Any, name: str) -> nn.LayerNorm:
    """LayerNorm over a head's whole [H, W, C] map: heads have 1-2 channels, so
    normalising over channels alone would erase them (a 1-channel map becomes 0)."""
    return nn.LayerNorm(reduction_axes=(-3, -2, -1), feature_axes=-1, dtype=dtype, name=name)


class _Net(nn.Module):
    """What every torso is built from: its config, the game's actions, the team size, the heads."""

    config: NetworkConfig
    num_actions: int
    num_players: int
    value_d_opponent: bool = False


class _AZNet(_Net):
    """AlphaZero's residual network with a player latent and a v_d head."""

    @nn.compact
    def __call__(self, obs: Array, player: Array) -> NetOutput:
        cfg = self.config
        dtype = jnp.dtype(cfg.compute_dtype)
        x = obs.astype(dtype)  # [B, H, W, C]
        if cfg.latent == "planes":
            x = _Stem(cfg.channels, self.num_players, dtype, name="stem")(x, player)  # the latent as n planes
        else:
            x = nn.Conv(cfg.channels, (3, 3), dtype=dtype, name="stem")(x)
        for b in range(cfg.num_blocks):
            film = None
            if cfg.latent == "film":
                latent = jax.nn.one_hot(player, self.num_players, dtype=dtype)  # [B, n]
                film = nn.Dense(2 * cfg.channels, dtype=dtype, name=f"film_{b}")(latent)
            x = ResidualBlock(cfg.channels, dtype, name=f"block_{b}")(x, film)
        x = nn.relu(nn.LayerNorm(dtype=dtype, name="torso_norm")(x))

        p = nn.Conv(cfg.policy_channels, (1, 1), dtype=dtype, name="policy_conv")(x)
        p = nn.relu(head_norm(dtype, "policy_norm")(p))
        logits = nn.Dense(self.num_actions, dtype=dtype, name="policy_logits")(p.reshape(p.shape[0], -1))

        def value_head(name: str) -> Array:
            v = nn.Conv(cfg.value_channels, (1, 1), dtype=dtype, name=f"{name}_conv")(x)
            v = nn.relu(head_norm(dtype, f"{name}_norm")(v))
            v = nn.relu(nn.Dense(cfg.value_hidden, dtype=dtype, name=f"{name}_hidden")(v.reshape(v.shape[0], -1)))
            return nn.Dense(1, dtype=dtype, name=f"{name}_out")(v)[:, 0].astype(jnp.float32)

        return NetOutput(
            policy_logits=logits.astype(jnp.float32),
            value=jnp.tanh(value_head("value")),
            value_d=value_head("value_d"),
            value_d_opponent=value_head("value_d_opponent") if self.value_d_opponent else None,
        )


class _LSTMNet(_Net):
    """Zhou & Riis's Nim network: one LSTM layer over the observation's rows, linear heads."""

    @nn.compact
    def __call__(self, obs: Array, player: Array) -> NetOutput:
        cfg = self.config
        dtype = jnp.dtype(cfg.compute_dtype)
        x = obs.astype(dtype).reshape(obs.shape[0], obs.shape[1], -1)  # [B, T = H, W * C]
        latent = jax.nn.one_hot(player, self.num_players, dtype=dtype)  # [B, n]
        if cfg.latent == "planes":
            x = jnp.concatenate([x, jnp.broadcast_to(latent[:, None, :], x.shape[:2] + latent.shape[-1:])], axis=-1)
        cell = nn.OptimizedLSTMCell(cfg.lstm_hidden, dtype=dtype, param_dtype=jnp.float32, name="lstm")
        h = nn.RNN(cell, name="rnn")(x)[:, -1]  # [B, hidden]: the output after the last step
        if cfg.latent == "film":
            scale, shift = jnp.split(nn.Dense(2 * cfg.lstm_hidden, dtype=dtype, name="film")(latent), 2, axis=-1)
            h = h * (1.0 + scale) + shift

        def linear(name: str, size: int) -> Array:
            return nn.Dense(size, dtype=dtype, name=name)(h).astype(jnp.float32)

        return NetOutput(
            policy_logits=linear("policy_logits", self.num_actions),
            value=jnp.tanh(linear("value_out", 1)[:, 0]),
            value_d=linear("value_d_out", 1)[:, 0],
            value_d_opponent=linear("value_d_opponent_out", 1)[:, 0] if self.value_d_opponent else None,
        )


def _check_inputs(obs: Array, player: Array, module: nn.Module) -> None:
    """Rejects inputs the network cannot mean anything with, naming what is wrong."""
    if obs.ndim != 4:
        raise ValueError(
            f"network expects a batch of observations [B, H, W, C], got shape {tuple(obs.shape)}; "
            "add a batch axis (obs[None]) for a single position"
        )
    chex.assert_shape(player, (obs.shape[0],), custom_message="player must be [B] ids, one per observation")
    if not jnp.issubdtype(player.dtype, jnp.integer):
        raise ValueError(f"player ids must be integers in [0, {module.num_players}), got dtype {player.dtype}")


def make_network(config: NetworkConfig, *, num_actions: int, num_players: int,
                 value_d_opponent: bool = False) -> Network:
    """Builds f_θ for a game with ``num_actions`` actions and a team of ``num_players``.

    ``num_players = 1`` is plain AlphaZero (the latent is a constant). ``value_d_opponent``
    adds the second intrinsic head (``NetOutput.value_d_opponent``) that the consistent
    reading of the search's leaf values needs (``DiversityConfig.opponent_leaves``).
    """
    if not isinstance(config, NetworkConfig):
        raise TypeError(f"config must be a NetworkConfig, got {type(config).__name__}")
    for name, value in (("num_actions", num_actions), ("num_players", num_players)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"make_network: {name} must be an int >= 1, got {value!r}")
    module_class = _LSTMNet if config.torso == "lstm" else _AZNet
    module = module_class(config=config, num_actions=num_actions, num_players=num_players,
                          value_d_opponent=value_d_opponent)

    @functools.lru_cache(maxsize=None)
    def init_program(shape):
        # One program: called eagerly, flax's initialisers would compile each parameter
        # shape's random draw on its own.
        return jax.jit(lambda key: module.init(key, jnp.zeros(shape, jnp.float32), jnp.zeros(shape[:1], jnp.int32)),
                       compiler_options=RUN_ONCE_COMPILER_OPTIONS)

    def init(rng_key: Array, obs_example: Any) -> Params:
        """Initial parameters; consumes ``rng_key``. Only the shape of obs_example is read."""
        shape = tuple(obs_example.shape)
        if len(shape) == 3:
            shape = (1,) + shape
        if len(shape) != 4:
            raise ValueError(f"obs_example must be [H, W, C] or [B, H, W, C], got shape {shape}")
        if isinstance(rng_key, jax.core.Tracer):  # inside a caller's program: part of it
            return module.init(rng_key, jnp.zeros(shape, jnp.float32), jnp.zeros(shape[:1], jnp.int32))
        return init_program(shape)(rng_key)

    def apply(params: Params, obs: Array, player: Array) -> NetOutput:
        """f_θ(obs, l_player) for a batch; see `Network`."""
        obs = jnp.asarray(obs)
        player = jnp.asarray(player)
        _check_inputs(obs, player, module)
        return module.apply(params, obs, player)

    return Network(init=init, apply=apply, num_actions=num_actions, num_players=num_players, config=config)


def num_params(params: Params) -> int:
    """Total number of scalar parameters."""
    return int(sum(x.size for x in jax.tree_util.tree_leaves(params)))


__all__ = ["NetworkConfig", "NetOutput", "Network", "ResidualBlock", "head_norm", "make_network", "num_params",
           "LATENT_MODES", "TORSOS"]
