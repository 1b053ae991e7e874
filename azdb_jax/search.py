"""Latent-conditioned AlphaZero search over pgx games with mctx (negamax form).

A search is rooted at a batch of positions, each searched by one player ``i`` of the
team: the root player's latent conditions *every* network call in its tree (the player
plans against a copy of itself; no opponent identity is used — paper §3, "information
hiding"). Values are from the side to move; a transition's reward is for the player
who moved, and the discount is −1 between plies (0 after a terminal state).

The AZdb changes (paper §3 "Similarly, during MCTS…", SPEC §1.8) enter through one pure
mixing rule with the player's ``λ_i``: transitions made by the root player carry
``λ_i r_e + (1 − λ_i) r_d``, the opponent's carry ``λ_i r_e``; a leaf is worth
``λ_i v + (1 − λ_i) v_d`` when the root player is to move and ``λ_i v`` otherwise.
With ``λ_i = 1`` this is plain AlphaZero, bit for bit. ``r_d`` comes from an optional
intrinsic-reward function of the features φ of the position after the move.

Invalid actions are masked at every depth (mctx masks only the root). Root Dirichlet
noise (self-play, PUCT) is drawn over the legal moves only (``dirichlet_noised_logits``):
mctx's built-in noise spreads over all actions, and with chess's 4,672 actions almost
all of it would fall on illegal moves and vanish when they are masked.
"""

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Optional

import chex
import jax
import jax.numpy as jnp
import mctx
import pgx.core

from azdb_jax import diversity

Array = jax.Array
# (network params, observations [B, ...], players [B]) -> object with
# .policy_logits [B, A], .value [B], .value_d [B]
ApplyFn = Callable[[Any, Array, Array], Any]
# (hook params, φ [F], player []) -> r_d [] for one transition; vmapped by the search.
IntrinsicRewardFn = Callable[[Any, Array, Array], Array]

ALGORITHMS = ("puct", "gumbel")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """How a position is searched (SPEC §1.8)."""

    algorithm: str = "puct"  # "puct" (AlphaZero, mctx.muzero_policy) or "gumbel"
    num_simulations: int = 32
    pb_c_init: float = 1.25  # AlphaZero c(s) = c_init + log((1 + N + c_base) / c_base)
    pb_c_base: float = 19652.0
    dirichlet_alpha: float = 0.3  # root noise, self-play only
    dirichlet_fraction: float = 0.25
    q_min: float = -1.0  # PUCT: Q normalised from [q_min, q_max] to [0, 1]
    q_max: float = 1.0
    unvisited_q: float = -1.0  # PUCT: Q of unvisited actions (AlphaZero: a loss)
    max_num_considered_actions: int = 16  # Gumbel root width
    gumbel_scale: float = 1.0  # Gumbel noise in self-play (0 in evaluation)

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"search.algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if not (isinstance(self.num_simulations, int) and self.num_simulations >= 1):
            raise ValueError(f"search.num_simulations must be an int >= 1, got {self.num_simulations!r}")
        if self.pb_c_base <= 0 or self.pb_c_init < 0:
            raise ValueError(f"search.pb_c_base must be > 0 and pb_c_init >= 0, got {self.pb_c_base}, {self.pb_c_init}")
        if self.dirichlet_alpha <= 0 or not 0.0 <= self.dirichlet_fraction <= 1.0:
            raise ValueError("search.dirichlet_alpha must be > 0 and dirichlet_fraction in [0, 1], got "
                             f"{self.dirichlet_alpha}, {self.dirichlet_fraction}")
        if not self.q_min < self.q_max:
            raise ValueError(f"search.q_min must be < q_max, got {self.q_min}, {self.q_max}")
        if not self.q_min <= self.unvisited_q <= self.q_max:
            raise ValueError(f"search.unvisited_q must be in [q_min, q_max], got {self.unvisited_q}")
        if self.max_num_considered_actions < 1 or self.gumbel_scale < 0:
            raise ValueError("search.max_num_considered_actions must be >= 1 and gumbel_scale >= 0")


class SearchContext(NamedTuple):
    """Everything a search tree needs besides the positions; mctx passes it through."""

    network_params: Any
    player: Array  # [B] latent id of the root player i
    root_seat: Array  # [B] pgx player id (seat) of the root player in its game
    lam: Array  # [B] λ_i of the root player
    hook_params: Any  # data for the intrinsic reward (e.g. expected features), or None


class SearchOutput(NamedTuple):
    """A finished search. ``policy_output.search_tree`` holds the whole tree."""

    policy_output: mctx.PolicyOutput
    action: Array  # [B] mctx's proposed action (PUCT: sampled ∝ visits; Gumbel: sequential halving)
    policy: Array  # [B, A] search policy (visit distribution; Gumbel: improved policy)
    search_value: Array  # [B] root value after search (mixed, from the root player's side)
    prior_logits: Array  # [B, A] clean network logits at the root, invalid actions masked
    value: Array  # [B] network value at the root
    value_d: Array  # [B] network intrinsic value at the root (stored for z_d bootstraps)


def _lean(state: pgx.core.State) -> pgx.core.State:
    """Drops the observation from tree embeddings (most of a chess state's bytes, SPEC §4).

    The network reads the observation produced by ``env.step`` right away; the stored
    node only needs what the next ``step`` reads.
    """
    return state.replace(observation=jnp.zeros(state.current_player.shape, jnp.int8))  # type: ignore


def _masked_logits(logits: Array, legal: Array) -> Array:
    return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def make_recurrent_fn(
    env: pgx.core.Env,
    apply_fn: ApplyFn,
    *,
    feature_fn: Optional[Callable[[pgx.core.State], Array]] = None,
    intrinsic_reward_fn: Optional[IntrinsicRewardFn] = None,
) -> Callable:
    """mctx ``recurrent_fn`` stepping the real game and mixing rewards/values with λ_i."""
    if (intrinsic_reward_fn is None) != (feature_fn is None):
        raise ValueError("intrinsic_reward_fn and feature_fn go together")

    def recurrent_fn(ctx: SearchContext, rng_key, action, state):
        del rng_key
        mover = state.current_player
        next_state = jax.vmap(env.step)(state, action)
        out = apply_fn(ctx.network_params, next_state.observation, ctx.player)
        reward_e = jnp.take_along_axis(next_state.rewards, mover[:, None], axis=1)[:, 0]
        if intrinsic_reward_fn is None:
            reward_d = jnp.zeros_like(reward_e)
        else:
            phi = jax.vmap(feature_fn)(next_state)
            reward_d = jax.vmap(intrinsic_reward_fn, in_axes=(None, 0, 0))(ctx.hook_params, phi, ctx.player)
        reward = diversity.search_transition_reward(
            reward_e, reward_d, ctx.lam, mover == ctx.root_seat)
        leaf_value = diversity.search_leaf_value(
            out.value, out.value_d, ctx.lam, next_state.current_player == ctx.root_seat)
        terminated = next_state.terminated
        output = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(terminated, 0.0, -1.0),
            prior_logits=_masked_logits(out.policy_logits, next_state.legal_action_mask),
            value=jnp.where(terminated, 0.0, leaf_value),
        )
        return output, _lean(next_state)

    return recurrent_fn


def dirichlet_noised_logits(rng_key: Array, prior_logits: Array, legal: Array, *, alpha: float,
                            fraction: float) -> Array:
    """AlphaZero's root noise: ``(1 − ε) P + ε η`` with ``η ~ Dir(α)`` over the *legal* moves.

    ``prior_logits`` [B, A] are already masked (illegal = large negative); returns logits
    of the noised prior, illegal moves still masked. The noise is drawn over the legal
    moves only, as AlphaZero does: drawn over all ``A`` actions (mctx's built-in noise)
    nearly all of its mass would land on illegal moves of a large action space — chess
    has 4,672 actions and some 20-40 legal moves — and vanish when they are masked.
    ``η`` is sampled as normalised Gamma(α) variables; consumes the key.
    """
    gamma = jax.random.gamma(rng_key, alpha, shape=prior_logits.shape)
    gamma = jnp.where(legal, gamma, 0.0)
    eta = gamma / jnp.maximum(gamma.sum(axis=-1, keepdims=True), 1e-30)
    probs = (1.0 - fraction) * jax.nn.softmax(prior_logits, axis=-1) + fraction * eta
    return _masked_logits(jnp.log(jnp.maximum(probs, 1e-30)), legal)


def run_search(
    env: pgx.core.Env,
    apply_fn: ApplyFn,
    network_params: Any,
    rng_key: Array,
    root: pgx.core.State,
    player: Array,
    lam: Array,
    *,
    config: SearchConfig,
    add_noise: bool,
    feature_fn: Optional[Callable[[pgx.core.State], Array]] = None,
    intrinsic_reward_fn: Optional[IntrinsicRewardFn] = None,
    hook_params: Any = None,
) -> SearchOutput:
    """Searches a batch of positions, each by its own team player.

    Args:
      env: the game (``azdb_jax.envs.make``).
      apply_fn: the network ``(params, obs [B, ...], player [B]) -> NetOutput``.
      network_params: its parameters.
      rng_key: consumed (noise, tie breaks).
      root: the positions, a batched pgx State [B, ...]; none may be terminal.
      player: [B] int, the root player's latent id.
      lam: [B] float, the root player's λ_i (1 for plain AlphaZero).
      config: the search settings.
      add_noise: Dirichlet noise at the root (PUCT) or Gumbel noise (Gumbel): self-play
        only; evaluation searches without noise.
      feature_fn, intrinsic_reward_fn, hook_params: optional intrinsic reward
        ``r_d = intrinsic_reward_fn(hook_params, feature_fn(next_state), player)``.

    Returns:
      A ``SearchOutput``.
    """
    batch = root.current_player.shape[0]
    chex.assert_shape([player, lam], (batch,))
    ctx = SearchContext(network_params, player.astype(jnp.int32), root.current_player, lam.astype(jnp.float32),
                        hook_params)
    out = apply_fn(network_params, root.observation, ctx.player)
    prior_logits = _masked_logits(out.policy_logits, root.legal_action_mask)
    root_value = diversity.search_leaf_value(out.value, out.value_d, ctx.lam, jnp.ones((batch,), bool))
    search_prior = prior_logits
    if add_noise and config.algorithm == "puct" and config.dirichlet_fraction > 0:
        noise_key, rng_key = jax.random.split(rng_key)
        search_prior = dirichlet_noised_logits(noise_key, prior_logits, root.legal_action_mask,
                                               alpha=config.dirichlet_alpha, fraction=config.dirichlet_fraction)
    root_output = mctx.RootFnOutput(prior_logits=search_prior, value=root_value, embedding=_lean(root))
    recurrent_fn = make_recurrent_fn(env, apply_fn, feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn)
    invalid = ~root.legal_action_mask
    if config.algorithm == "puct":
        policy_output = mctx.muzero_policy(
            ctx, rng_key, root_output, recurrent_fn, config.num_simulations,
            invalid_actions=invalid,
            qtransform=functools.partial(qtransform_alphazero, config=config),
            dirichlet_fraction=0.0,  # added above, over the legal moves only
            pb_c_init=config.pb_c_init,
            pb_c_base=config.pb_c_base,
        )
    else:
        policy_output = mctx.gumbel_muzero_policy(
            ctx, rng_key, root_output, recurrent_fn, config.num_simulations,
            invalid_actions=invalid,
            max_num_considered_actions=config.max_num_considered_actions,
            gumbel_scale=config.gumbel_scale if add_noise else 0.0,
        )
    tree = policy_output.search_tree
    return SearchOutput(
        policy_output=policy_output,
        action=policy_output.action,
        policy=policy_output.action_weights,
        search_value=tree.node_values[:, mctx.Tree.ROOT_INDEX],
        prior_logits=prior_logits,
        value=out.value,
        value_d=out.value_d,
    )


def qtransform_alphazero(tree: mctx.Tree, node_index: Array, *, config: SearchConfig) -> Array:
    """AlphaZero's Q for PUCT: ``(Q - q_min) / (q_max - q_min)``, unvisited Q = ``unvisited_q``.

    Values live on [-1, 1] (the game result); the fixed bounds keep PUCT's balance of Q
    and U the same at every node, as in AlphaZero (mctx's default rescales per node).
    """
    visits = tree.children_visits[node_index]
    q = jnp.where(visits > 0, tree.qvalues(node_index), config.unvisited_q)
    return (q - config.q_min) / (config.q_max - config.q_min)


class RootStatistics(NamedTuple):
    """Root statistics of a batch of searches (SPEC §1.9), the input of team planning."""

    visits: Array  # [B, A] N(s, a)
    total_visits: Array  # [B] N(s) = Σ_a N(s, a)
    visited: Array  # [B, A] N(s, a) > 0
    q: Array  # [B, A] Q(s, a) for visited actions, -inf elsewhere (root player's side)
    prior: Array  # [B, A] the clean network prior P(s, a) (no root noise)
    u: Array  # [B, A] exploration bonus U(s, a), as mctx's PUCT computes it
    value: Array  # [B] V = max over visited actions of Q(s, a)


def root_statistics(search: SearchOutput, *, config: SearchConfig) -> RootStatistics:
    """N, Q (visited only), clean P, U and V at the roots of a finished search.

    ``U(s, a) = c(s) P(s, a) sqrt(n) / (1 + N(s, a))`` with
    ``c(s) = c_init + log((n + c_base + 1) / c_base)`` and ``n`` mctx's root visit
    count, which is ``N(s) + 1`` (mctx counts the root's own expansion). We keep mctx's
    ``n`` so that ``argmax(qtransform(Q) + U)`` is exactly the action the search would
    select next.
    """
    tree = search.policy_output.search_tree
    root_index = jnp.full(tree.node_visits.shape[:1], mctx.Tree.ROOT_INDEX)
    visits = tree.children_visits[:, mctx.Tree.ROOT_INDEX]
    visited = visits > 0
    q = jnp.where(visited, tree.qvalues(root_index), -jnp.inf)
    prior = jax.nn.softmax(search.prior_logits, axis=-1)
    n = tree.node_visits[:, mctx.Tree.ROOT_INDEX].astype(jnp.float32)
    c = config.pb_c_init + jnp.log((n + config.pb_c_base + 1.0) / config.pb_c_base)
    u = (c * jnp.sqrt(n))[:, None] * prior / (1.0 + visits)
    return RootStatistics(
        visits=visits,
        total_visits=visits.sum(axis=-1),
        visited=visited,
        q=q,
        prior=prior,
        u=u,
        value=jnp.max(q, axis=-1),
    )
