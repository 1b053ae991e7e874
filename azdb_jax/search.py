"""Latent-conditioned AlphaZero search over pgx games (negamax form, compact trees).

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

The tree search itself is ``azdb_jax.tree_search``: mctx's tree and loop over compact
nodes (one slot per legal move, at most ``num_slots_for(env)``), with AlphaZero's PUCT or
mctx's Gumbel MuZero selection. Invalid actions are never selected, at any depth. Root
Dirichlet noise (self-play, PUCT) is drawn over the legal moves only (``dirichlet_noised_logits``):
mctx's built-in noise spreads over all actions, and with chess's 4,672 actions almost
all of it would fall on illegal moves and vanish when they are masked.
"""

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Optional, Union

import chex
import jax
import jax.numpy as jnp
import mctx
import pgx.core

from azdb_jax import diversity, games, search_state, tree_search

Array = jax.Array
# (network params, observations [B, ...], players [B]) -> object with
# .policy_logits [B, A], .value [B], .value_d [B]
ApplyFn = Callable[[Any, Array, Array], Any]
# (hook params, φ [F], player []) -> r_d [] for one transition; vmapped by the search.
IntrinsicRewardFn = Callable[[Any, Array, Array], Array]



class SearchHook(NamedTuple):
    """The intrinsic-reward arguments of ``run_search`` (all None: no intrinsic reward)."""

    feature_fn: Optional[Callable[[pgx.core.State], Array]]
    intrinsic_reward_fn: Optional[IntrinsicRewardFn]
    hook_params: Any  # [n, F] ψ


NO_HOOK = SearchHook(None, None, None)


def intrinsic_hook(feature_fn: Callable[[pgx.core.State], Array], psi: Any, *, l0: Union[float, Array]) -> SearchHook:
    """The search hook of AZdb's intrinsic reward: ``r_d^i(s, a)`` of Eq. 8 for the team's
    expected features ``psi`` [n, F] (``diversity.team_intrinsic_reward`` with ℓ0).

    The one place where self-play, the training loop's evaluation and every evaluation of
    a trained team (``agent.Agent.search_hook``) build the reward their searches add.
    ``psi`` may be traced (self-play passes the train state's ψ), and so may ``l0`` (a
    population member's, ``trainer.Components.with_arm``).
    """
    l0 = l0 if isinstance(l0, jax.Array) else float(l0)
    return SearchHook(feature_fn, functools.partial(diversity.team_intrinsic_reward, l0=l0), psi)


ALGORITHMS = ("puct", "gumbel")
OPPONENT_MODELS = ("self", "opponent")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """How a position is searched (SPEC §1.8)."""

    algorithm: str = "puct"  # "puct" (AlphaZero) or "gumbel" (Gumbel MuZero)
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
    num_slots: int = 0  # K, tree slots per node (legal moves kept); 0: the game's bound (num_slots_for)
    # Whose latent evaluates the nodes where the root player's opponent is to move: "self"
    # (the root player's: information hiding, paper §3) or "opponent" (the opponent's, when
    # the caller knows it, e.g. the matchmaker's choice in self-play; App. B).
    opponent_model: str = "self"

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
        if self.opponent_model not in OPPONENT_MODELS:
            raise ValueError(f"search.opponent_model must be one of {OPPONENT_MODELS}, got {self.opponent_model!r}")
        if not (isinstance(self.num_slots, int) and self.num_slots >= 0):
            raise ValueError(f"search.num_slots must be an int >= 0 (0: the game's bound), got {self.num_slots!r}")


def num_slots_for(env: pgx.core.Env) -> int:
    """The game's default number of tree slots K, a bound on its legal moves (``Game.num_slots``
    in ``azdb_jax.games``; every action for a game without one). A position with more legal
    moves keeps its K highest-prior moves (``azdb_jax.tree_search``)."""
    return games.num_slots(env)


class SearchContext(NamedTuple):
    """Everything a search tree needs besides the positions; mctx passes it through."""

    network_params: Any
    player: Array  # [B] latent id of the root player i
    root_seat: Array  # [B] pgx player id (seat) of the root player in its game
    lam: Array  # [B] λ_i of the root player
    hook_params: Any  # data for the intrinsic reward (e.g. expected features), or None
    opponent: Array  # [B] latent id of the opponent (used with opponent_model="opponent")


class SearchOutput(NamedTuple):
    """A finished search: the tree and its root in the full action space."""

    tree: mctx.Tree  # compact tree [B, S + 1, K] (``azdb_jax.tree_search``; extra_data: SlotData)
    action: Array  # [B] proposed action (PUCT: sampled ∝ visits; Gumbel: sequential halving's choice)
    policy: Array  # [B, A] search policy (visit distribution; Gumbel: improved policy)
    search_value: Array  # [B] root value after search (mixed, from the root player's side)
    prior_logits: Array  # [B, A] clean network logits at the root, invalid actions masked
    search_prior_logits: Array  # [B, A] the root prior the search used (with root noise if any)
    visits: Array  # [B, A] N(s, a) at the root
    qvalues: Array  # [B, A] Q(s, a) at the root (0 where unvisited)
    value: Array  # [B] network value at the root
    value_d: Array  # [B] network intrinsic value at the root (stored for z_d bootstraps)
    # [B] the part of search_value that the intrinsic terms make up: (1 − λ_i) r_d of the root
    # player's moves and (1 − λ_i) v_d at its leaves, backed up as the search backs up values
    # (tree_search.root_value_part); search_value minus it is the extrinsic part. 0 at λ_i = 1.
    search_value_intrinsic: Optional[Array] = None


def _masked_logits(logits: Array, legal: Array) -> Array:
    return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def make_recurrent_fn(
    env: pgx.core.Env,
    apply_fn: ApplyFn,
    *,
    feature_fn: Optional[Callable[[pgx.core.State], Array]] = None,
    intrinsic_reward_fn: Optional[IntrinsicRewardFn] = None,
    opponent_model: str = "self",
) -> Callable:
    """The search's recurrent function: steps the real game and mixes rewards/values with λ_i.

    Tree nodes store states packed by ``search_state.codec(env)``. With
    ``opponent_model="opponent"`` the network sees the opponent's latent where the
    opponent is to move (its prior and value); the root player's intrinsic terms still
    come from the root player's latent.
    """
    if (intrinsic_reward_fn is None) != (feature_fn is None):
        raise ValueError("intrinsic_reward_fn and feature_fn go together")
    state_codec = search_state.codec(env)

    def recurrent_fn(ctx: SearchContext, rng_key, action, stored):
        del rng_key
        state = state_codec.unpack(stored)
        mover = state.current_player
        next_state = jax.vmap(env.step)(state, action)
        own_turn = next_state.current_player == ctx.root_seat
        if opponent_model == "opponent":
            out = apply_fn(ctx.network_params, next_state.observation, jnp.where(own_turn, ctx.player, ctx.opponent))
            if getattr(out, "value_d_opponent", None) is not None:  # the root player's view of the opponent's positions
                mine = apply_fn(ctx.network_params, next_state.observation, ctx.player)
                out = out._replace(value_d_opponent=mine.value_d_opponent)
        else:
            out = apply_fn(ctx.network_params, next_state.observation, ctx.player)
        reward_e = jnp.take_along_axis(next_state.rewards, mover[:, None], axis=1)[:, 0]
        if intrinsic_reward_fn is None:
            reward_d = jnp.zeros_like(reward_e)
        else:
            phi = jax.vmap(feature_fn)(next_state)
            reward_d = jax.vmap(intrinsic_reward_fn, in_axes=(None, 0, 0))(ctx.hook_params, phi, ctx.player)
        root_moved = mover == ctx.root_seat
        reward = diversity.search_transition_reward(reward_e, reward_d, ctx.lam, root_moved)
        v_d_opponent = getattr(out, "value_d_opponent", None)
        leaf_value = diversity.search_leaf_value(out.value, out.value_d, ctx.lam, own_turn, v_d_opponent)
        leaf_part = diversity.search_leaf_value_part(out.value_d, ctx.lam, own_turn, v_d_opponent)
        terminated = next_state.terminated
        output = tree_search.StepOutput(
            reward=reward,
            discount=jnp.where(terminated, 0.0, -1.0),
            prior_logits=out.policy_logits,
            value=jnp.where(terminated, 0.0, leaf_value),
            legal_action_mask=next_state.legal_action_mask & ~terminated[:, None],
            # The intrinsic terms, tracked through the tree for SearchOutput.search_value_intrinsic.
            reward_part=diversity.search_transition_reward_part(reward_d, ctx.lam, root_moved),
            value_part=jnp.where(terminated, 0.0, leaf_part),
        )
        return output, state_codec.pack(next_state)

    return recurrent_fn


def dirichlet_noised_logits(rng_key: Array, prior_logits: Array, legal: Array, *, alpha: float,
                            fraction: float, num_candidates: Optional[int] = None) -> Array:
    """AlphaZero's root noise: ``(1 − ε) P + ε η`` with ``η ~ Dir(α)`` over the *legal* moves.

    ``prior_logits`` [B, A] are already masked (illegal = large negative); returns logits
    of the noised prior, illegal moves still masked. The noise is drawn over the legal
    moves only, as AlphaZero does: drawn over all ``A`` actions (mctx's built-in noise)
    nearly all of its mass would land on illegal moves of a large action space — chess
    has 4,672 actions and some 20-40 legal moves — and vanish when they are masked.
    ``η`` is sampled as normalised Gamma(α) variables, one per legal move, each keyed by
    the move's action id (so a move's draw does not depend on which others are drawn).
    ``num_candidates = K`` draws only for the moves a K-slot search holds
    (``tree_search.legal_slots``: every legal move, or the K of highest prior when there
    are more): K Gamma draws per position instead of A (4,672 on chess). Consumes the key
    (one key, or ``[B]`` keys, one per position).
    """
    batch, num_actions = prior_logits.shape
    k = num_actions if num_candidates is None else min(num_candidates, num_actions)
    candidates = tree_search.legal_slots(legal, prior_logits, k)  # [B, K], -1 after the last

    def row(key, actions):
        return jax.vmap(lambda a: jax.random.gamma(jax.random.fold_in(key, a), alpha))(jnp.maximum(actions, 0))

    draws = jax.vmap(row)(tree_search.row_keys(rng_key, batch), candidates)
    rows = jnp.arange(batch)[:, None]
    gamma = jnp.zeros(prior_logits.shape, draws.dtype).at[rows, jnp.maximum(candidates, 0)].add(
        jnp.where(candidates >= 0, draws, 0.0))
    gamma = jnp.where(legal, gamma, 0.0)
    eta = gamma / jnp.maximum(gamma.sum(axis=-1, keepdims=True), 1e-30)
    probs = (1.0 - fraction) * jax.nn.softmax(prior_logits, axis=-1) + fraction * eta
    return _masked_logits(jnp.log(jnp.maximum(probs, 1e-30)), legal)


def evaluate_root(env: pgx.core.Env, apply_fn: ApplyFn, ctx: SearchContext, root: pgx.core.State):
    """The network at a batch of roots: (its output, the trees' ``RootInput``).

    The root input holds the clean prior (illegal moves masked, no noise), the root
    player's leaf value ``λ_i v + (1 − λ_i) v_d`` with itself to move and its intrinsic
    part, and the packed state.
    """
    out = apply_fn(ctx.network_params, root.observation, ctx.player)
    own = jnp.ones(root.current_player.shape, bool)
    return out, tree_search.RootInput(
        prior_logits=_masked_logits(out.policy_logits, root.legal_action_mask),
        value=diversity.search_leaf_value(out.value, out.value_d, ctx.lam, own),
        embedding=search_state.codec(env).pack(root), legal_action_mask=root.legal_action_mask,
        value_part=diversity.search_leaf_value_part(out.value_d, ctx.lam, own))


def root_visits(tree: mctx.Tree, num_actions: int) -> tuple[Array, Array]:
    """``N(s, a)`` and ``Q(s, a)`` (0 where unvisited) at the roots of compact trees, [B, A] each."""
    root_index = jnp.full(tree.node_visits.shape[:1], mctx.Tree.ROOT_INDEX)
    slot_visits = tree.children_visits[:, mctx.Tree.ROOT_INDEX]  # [B, K]
    qvalues = jnp.where(slot_visits > 0, tree.qvalues(root_index), 0.0)
    return (tree_search.to_actions(tree, slot_visits, num_actions),
            tree_search.to_actions(tree, qvalues, num_actions))


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
    opponent: Optional[Array] = None,
) -> SearchOutput:
    """Searches a batch of positions, each by its own team player.

    Args:
      env: the game (``azdb_jax.games.make``).
      apply_fn: the network ``(params, obs [B, ...], player [B]) -> NetOutput``.
      network_params: its parameters.
      rng_key: consumed (noise, tie breaks): one key, or ``[B]`` keys, one per position,
        which makes each position's search depend on its own key only (not on the other
        positions of the batch: a device searching part of a batch draws what a search of
        the whole batch would draw for it).
      root: the positions, a batched pgx State [B, ...]; none may be terminal.
      player: [B] int, the root player's latent id.
      lam: [B] float, the root player's λ_i (1 for plain AlphaZero).
      config: the search settings.
      add_noise: Dirichlet noise at the root (PUCT) or Gumbel noise (Gumbel): self-play
        only; evaluation searches without noise.
      feature_fn, intrinsic_reward_fn, hook_params: optional intrinsic reward
        ``r_d = intrinsic_reward_fn(hook_params, feature_fn(next_state), player)``.
      opponent: [B] int, the opponent's latent id, read with
        ``config.opponent_model="opponent"`` (default: the root player's own).

    Returns:
      A ``SearchOutput``.
    """
    batch = root.current_player.shape[0]
    chex.assert_shape([player, lam], (batch,))
    player = player.astype(jnp.int32)
    opponent = player if opponent is None else jnp.asarray(opponent, jnp.int32)
    ctx = SearchContext(network_params, player, root.current_player, lam.astype(jnp.float32), hook_params, opponent)
    out, root_input = evaluate_root(env, apply_fn, ctx, root)
    prior_logits = search_prior = root_input.prior_logits
    noise_key, gumbel_key, search_key, action_key = tree_search.split_rows(tree_search.row_keys(rng_key, batch), 4)
    num_slots = min(config.num_slots or num_slots_for(env), env.num_actions)
    if add_noise and config.algorithm == "puct" and config.dirichlet_fraction > 0:
        search_prior = dirichlet_noised_logits(noise_key, prior_logits, root.legal_action_mask,
                                               alpha=config.dirichlet_alpha, fraction=config.dirichlet_fraction,
                                               num_candidates=num_slots)
        root_input = root_input._replace(prior_logits=search_prior)
    recurrent_fn = make_recurrent_fn(env, apply_fn, feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn,
                                     opponent_model=config.opponent_model)
    root_gumbel = None
    if config.algorithm == "puct":
        selection_fn = functools.partial(tree_search.puct_selection, pb_c_init=config.pb_c_init,
                                         pb_c_base=config.pb_c_base,
                                         qtransform=functools.partial(qtransform_alphazero, config=config))
    else:
        selection_fn = functools.partial(tree_search.gumbel_selection, num_simulations=config.num_simulations,
                                         max_num_considered_actions=config.max_num_considered_actions)
        # Drawn per action and gathered onto the root's slots: the same noise for any slot count.
        scale = config.gumbel_scale if add_noise else 0.0
        gumbel = scale * jax.vmap(lambda key: jax.random.gumbel(key, (env.num_actions,)))(gumbel_key)
        root_slots = tree_search.legal_slots(root.legal_action_mask, search_prior, num_slots)
        root_gumbel = jnp.take_along_axis(gumbel, jnp.maximum(root_slots, 0), axis=-1)
    tree = tree_search.search(ctx, search_key, root_input, recurrent_fn, selection_fn,
                              num_simulations=config.num_simulations, num_slots=num_slots, root_gumbel=root_gumbel)
    num_actions = env.num_actions
    visits, qvalues = root_visits(tree, num_actions)
    if config.algorithm == "puct":
        # Sampled over the full action space, so the draw does not depend on the slot count.
        policy = visits / jnp.maximum(visits.sum(axis=-1, keepdims=True), 1)
        action = jax.vmap(jax.random.categorical)(
            action_key, jnp.where(visits > 0, jnp.log(jnp.maximum(policy, 1e-30)), -jnp.inf))
    else:
        slot, weights = _gumbel_decision(tree, root_gumbel)
        action = jnp.take_along_axis(tree.extra_data.slot_actions[:, mctx.Tree.ROOT_INDEX], slot[:, None], axis=1)[:, 0]
        policy = tree_search.to_actions(tree, weights, num_actions)
    return SearchOutput(
        tree=tree,
        action=action.astype(jnp.int32),
        policy=policy,
        search_value=tree.node_values[:, mctx.Tree.ROOT_INDEX],
        prior_logits=prior_logits,
        search_prior_logits=search_prior,
        visits=visits,
        qvalues=qvalues,
        value=out.value,
        value_d=out.value_d,
        search_value_intrinsic=tree_search.root_value_part(tree),
    )


def _gumbel_decision(tree: mctx.Tree, root_gumbel: Array) -> tuple[Array, Array]:
    """Gumbel MuZero's final root slot and improved policy [B, K] (mctx's rule, on slots).

    The action is the considered slot with the largest ``g + logits + σ(completed Q)``
    among those with the most visits; the policy is ``softmax(logits + σ(completed Q))``.
    """
    visits = tree.children_visits[:, mctx.Tree.ROOT_INDEX]
    logits = tree.children_prior_logits[:, mctx.Tree.ROOT_INDEX]
    valid = tree.extra_data.slot_actions[:, mctx.Tree.ROOT_INDEX] >= 0
    completed_q = jax.vmap(mctx.qtransform_completed_by_mix_value, in_axes=(0, None))(tree, mctx.Tree.ROOT_INDEX)
    considered = visits == visits.max(axis=-1, keepdims=True)
    score = jnp.maximum(-1e9, root_gumbel + logits - logits.max(axis=-1, keepdims=True) + completed_q)
    slot = jnp.argmax(jnp.where(valid & considered, score, -jnp.inf), axis=-1)
    weights = jax.nn.softmax(jnp.where(valid, logits + completed_q, jnp.finfo(logits.dtype).min), axis=-1)
    return slot, jnp.where(valid, weights, 0.0)


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
    return statistics(search.tree, search.visits, search.qvalues, search.prior_logits, config=config)


def statistics(tree: mctx.Tree, visits: Array, qvalues: Array, prior_logits: Array, *,
               config: SearchConfig) -> RootStatistics:
    """``root_statistics`` from a tree's root visits and Q values [B, A] and the clean prior logits [B, A]."""
    visited = visits > 0
    q = jnp.where(visited, qvalues, -jnp.inf)
    prior = jax.nn.softmax(prior_logits, axis=-1)
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
