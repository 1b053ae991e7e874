"""The *attuned* senior (paper §3.2): the strong player fine-tuned inside a framework.

The paper's attuned agents are leela fine-tuned on games of leela + maia teams played in
the framework itself, so that the network learns what its positions are worth when the
junior makes some of the moves. Here: the strong run's network plays both teams' senior
(or brain) with its self-play search, the junior plays its share exactly as in a match —
by the STT coin, or as the hand restricted to the piece type the brain named — and the
network is trained on the positions of those games:

* **value target**: the framework game's result for the side to move. The observation
  does not show the coin, so the value learns the coin-averaged worth of a position with
  the juniors in the loop — the quantity a senior must maximise;
* **policy target**: the search's policy at every position (the move the senior would
  make there, searched with the current network). In HB only the piece type of the
  search's move reaches the board ("we only take the piece of the outputted move").

The search itself stays the plain alternating-move search; the juniors' interventions
enter through the value it backs up, learned from games where they happened. This is the
paper's construction (an unchanged engine fine-tuned on framework games). The
alternative the issue names — a search whose tree holds the coin and the junior's reply
as chance nodes (mctx's ``stochastic_muzero_policy``) — would need a learned or exact
chance distribution over up to ``A + 1`` outcomes per node and a second network head for
afterstates; the expector (``agents.stt_expector``) already is the exact two-ply
chance-node computation, so the attuned agent is kept as the learned counterpart.

``framework="regular"`` runs the same fine-tuning in plain self-play (no junior): the
control that tells what the junior-aware fine-tuning adds beyond the strength any further
training adds (the strong run need not have converged).

``framework_selfplay`` plays the games (one jitted batch), ``training_batch`` flattens
them into a ``learner.Batch`` and ``fine_tune`` runs the loop; ``runs.write_run`` saves
the result as a run directory that ``evaluation.loading.load_team`` reads.
"""

import dataclasses
import functools
import time
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import learner as learner_lib
from azdb_jax import search as search_lib
from azdb_jax.evaluation import matches
from azdb_jax.skill import frameworks

Array = jax.Array
# "regular": the same fine-tuning in plain self-play (no junior) — the control that
# separates compatibility with the junior from the strength the extra training adds.
TRAINABLE_FRAMEWORKS = ("stt", "hb", "regular")


@dataclasses.dataclass(frozen=True)
class AttunedConfig:
    """The fine-tuning: ``iterations`` rounds of ``num_games`` framework games (from
    ``opening_plies`` random plies, capped at ``max_plies`` and adjudicated), each followed
    by ``learner_steps`` updates on batches of ``batch_size`` positions drawn from the
    last ``window`` rounds' games, at ``learning_rate`` (Adam; a fine-tuning rate)."""

    framework: str = "stt"
    iterations: int = 8
    num_games: int = 64
    max_plies: int = 80
    opening_plies: int = 2
    learner_steps: int = 16
    batch_size: int = 256
    learning_rate: float = 5e-4
    window: int = 4
    seed: int = 0

    def __post_init__(self):
        if self.framework not in TRAINABLE_FRAMEWORKS:
            raise ValueError(f"AttunedConfig.framework must be one of {TRAINABLE_FRAMEWORKS}, got {self.framework!r}")
        for name in ("iterations", "num_games", "max_plies", "learner_steps", "batch_size", "window"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AttunedConfig.{name} must be an int >= 1, got {value!r}")
        if isinstance(self.opening_plies, bool) or not isinstance(self.opening_plies, int) or self.opening_plies < 0:
            raise ValueError(f"AttunedConfig.opening_plies must be an int >= 0, got {self.opening_plies!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"AttunedConfig.learning_rate must be > 0, got {self.learning_rate!r}")


class FrameworkGames(NamedTuple):
    """A batch of framework self-play games, ply-major (``[T, B]``)."""

    observation: Array  # [T, B, ...] the plain game's observation of the side to move
    search_policy: Array  # [T, B, A] the senior's search policy there
    action: Array  # [T, B] the move played (-1 once the game is over)
    senior_action: Array  # [T, B] the senior's (brain's) searched move
    mover: Array  # [T, B] the seat to move
    by_senior: Array  # [T, B] bool: STT — the senior made the move; HB — True (the brain named it); regular — True
    valid: Array  # [T, B] bool: a position of a running game
    outcome: Array  # [B, 2] each seat's result (+1/0/−1), adjudicated where the game ran to the cap
    finished: Array  # [B] bool: the game ended by the rules (not at the cap)


def framework_selfplay(env: pgx.core.Env, framework: str, apply_fn: search_lib.ApplyFn,
                       search_config: search_lib.SearchConfig, junior_model, *, max_plies: int,
                       adjudicate: Optional[Callable[[pgx.core.State], Array]] = None, player: int = 0):
    """``play(params, junior_params, rng_key, start [B]) -> FrameworkGames``: framework games
    in which both teams are the network's senior (its search with self-play noise,
    latent ``player``) and the junior (``junior_model``, sampled). ``start`` is a batch of
    plain positions; the STT coins come from ``rng_key``. Jit the result.

    These are self-play games, the fine-tuning's data, like ``selfplay``'s: one team on
    both sides, searched over the whole batch with one key per ply, and every position's
    search policy recorded. Matches between framework teams are the arena's
    (``measures.play_match``)."""
    if framework not in TRAINABLE_FRAMEWORKS:
        raise ValueError(f"framework must be one of {TRAINABLE_FRAMEWORKS}, got {framework!r}")
    if framework == "hb":
        frameworks.action_piece_types(env, jax.tree.map(lambda x: x[None], env.init(jax.random.PRNGKey(0))))
    tag_team = frameworks.StochasticTagTeam(env)

    def play(params, junior_params, rng_key, start):
        batch = start.current_player.shape[0]
        coin_key, play_key = jax.random.split(rng_key)
        state = jax.vmap(tag_team.wrap)(start, jax.random.split(coin_key, batch))
        returns = jnp.zeros((batch, 2), jnp.float32)

        def ply(carry, t):
            state, returns = carry
            game = state.game
            done = game.terminated | game.truncated
            search_key, junior_key = jax.random.split(jax.random.fold_in(play_key, t))
            out = search_lib.run_search(env, apply_fn, params, search_key, game, jnp.full((batch,), player, jnp.int32),
                                        jnp.ones((batch,), jnp.float32), config=search_config, add_noise=True)
            senior = out.action.astype(jnp.int32)
            logits = None if framework == "regular" else junior_model(junior_params, game)
            if framework == "stt":
                by_senior = state.senior_to_move
                junior = jax.random.categorical(junior_key, logits, axis=-1).astype(jnp.int32)
                action = jnp.where(by_senior, senior, junior)
            elif framework == "regular":
                by_senior = jnp.ones((batch,), bool)
                action = senior
            else:
                by_senior = jnp.ones((batch,), bool)
                piece = jnp.take_along_axis(frameworks.action_piece_types(env, game), senior[:, None], axis=1)[:, 0]
                allowed = frameworks.piece_moves(env, game, piece)
                hand = jnp.where(allowed, logits, -jnp.inf)
                hand = jnp.where(jnp.isfinite(hand).any(-1, keepdims=True), hand, jnp.where(allowed, 0.0, -jnp.inf))
                action = jax.random.categorical(junior_key, hand, axis=-1).astype(jnp.int32)
            nxt = jax.vmap(tag_team.step)(state, jnp.where(done, 0, action))
            returns = returns + jnp.where(done[:, None], 0.0, nxt.game.rewards)
            record = (game.observation, out.policy, jnp.where(done, -1, action), senior,
                      game.current_player.astype(jnp.int32), by_senior, ~done)
            return (nxt, returns), record

        (state, returns), record = jax.lax.scan(ply, (state, returns), jnp.arange(max_plies))
        game = state.game
        finished = game.terminated | game.truncated
        if adjudicate is not None:
            verdict = adjudicate(game)  # for the side to move
            mover = game.current_player.astype(jnp.int32)
            by_seat = jnp.where(jnp.arange(2)[None, :] == mover[:, None], verdict[:, None], -verdict[:, None])
            returns = jnp.where(finished[:, None], returns, by_seat)
        return FrameworkGames(*record, outcome=returns, finished=finished)

    return play


def training_batch(games: FrameworkGames, *, player: int = 0) -> Dict[str, np.ndarray]:
    """The valid positions of ``games`` as learner transitions (host arrays): the search
    policy as the policy target, the framework result for the side to move as ``z``."""
    games = jax.device_get(games)
    valid = np.asarray(games.valid)
    t_index, b_index = np.nonzero(valid)
    mover = np.asarray(games.mover)[t_index, b_index]
    z = np.asarray(games.outcome)[b_index, mover].astype(np.float32)
    size = t_index.shape[0]
    return dict(observation=np.asarray(games.observation)[t_index, b_index],
                search_policy=np.asarray(games.search_policy, np.float32)[t_index, b_index],
                player=np.full((size,), player, np.int32), z=z, z_d=np.zeros((size,), np.float32),
                weight=np.ones((size,), np.float32))


def _concat(parts: List[Dict[str, np.ndarray]]) -> Dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


class Progress(NamedTuple):
    """One fine-tuning round: its games and its learner's last metrics."""

    iteration: int
    positions: int
    mean_length: float
    senior_share: float
    decisive: float
    loss: float
    policy_loss: float
    value_loss: float
    seconds: float


def fine_tune(env: pgx.core.Env, network, params, search_config: search_lib.SearchConfig, junior_model,
              junior_params, config: AttunedConfig, *, adjudicate=None, player: int = 0,
              learner_config: Optional[learner_lib.LearnerConfig] = None) -> Iterator[Any]:
    """Fine-tunes ``params`` (of ``network``, a ``networks.Network``) in ``config.framework``
    with the junior in the loop. A generator: yields ``(params, Progress)`` after every
    round. ``learner_config`` defaults to Adam at ``config.learning_rate`` without weight
    decay; its intrinsic-value weight is set to 0 (the attuned senior is a plain player)."""
    base = learner_config or learner_lib.LearnerConfig(optimizer="adam", weight_decay=0.0, history_dropout=0.0)
    lconfig = dataclasses.replace(base, learning_rate=config.learning_rate, value_d_weight=0.0)
    optimizer = learner_lib.make_optimizer(lconfig)
    state = learner_lib.TrainState(params=params, opt_state=optimizer.init(params), step=jnp.zeros((), jnp.int32))
    play = jax.jit(framework_selfplay(env, config.framework, network.apply, search_config, junior_model,
                                      max_plies=config.max_plies, adjudicate=adjudicate, player=player))
    step = jax.jit(functools.partial(learner_lib.learner_step, network, optimizer, config=lconfig))
    key = jax.random.PRNGKey(config.seed)
    window: List[Dict[str, np.ndarray]] = []
    rng = np.random.default_rng(config.seed)
    for iteration in range(1, config.iterations + 1):
        start_time = time.perf_counter()
        key, open_key, play_key, learn_key = jax.random.split(key, 4)
        start = matches.random_openings(env, config.num_games, config.opening_plies, open_key)
        games = jax.device_get(play(state.params, junior_params, play_key, start))
        window = (window + [training_batch(games, player=player)])[-config.window:]
        data = _concat(window)
        size = data["z"].shape[0]
        metrics: Dict[str, Any] = {}
        for s in range(config.learner_steps):
            index = rng.integers(0, size, config.batch_size)
            state, metrics = step(state, {k: v[index] for k, v in data.items()}, jax.random.fold_in(learn_key, s))
        metrics = jax.device_get(metrics)
        valid = np.asarray(games.valid)
        lengths = valid.sum(0)
        progress = Progress(
            iteration=iteration, positions=int(valid.sum()), mean_length=float(lengths.mean()),
            senior_share=float(np.asarray(games.by_senior)[valid].mean()),
            decisive=float(np.mean(np.asarray(games.outcome)[:, 0] != 0)),
            loss=float(metrics["loss"]), policy_loss=float(metrics["policy_loss"]),
            value_loss=float(metrics["value_loss"]), seconds=round(time.perf_counter() - start_time, 1))
        yield state.params, progress


__all__ = ["AttunedConfig", "FrameworkGames", "Progress", "TRAINABLE_FRAMEWORKS", "fine_tune", "framework_selfplay",
           "training_batch"]
