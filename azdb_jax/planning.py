"""Sub-additive planning: the team picks which player's search to trust (paper §3, Eq. 9).

The same position is searched once per latent (one batched search), and a *selection
rule* reads the team's root statistics (SPEC §1.9) to choose a player; the team then
plays that player's move (SPEC §1.10). For player ``j`` with root statistics
``N_j, Q_j, U_j, V_j``:

- visit: ``argmax_j max_a N_j(s, a)``;
- value: ``argmax_j V_j``;
- lcb:   ``argmax_j max_{a visited} (Q_j(s, a) − U_j(s, a))``;
- gap:   ``G = max_{a, j} U_j(s, a)``, candidates ``{j : V_j ≥ max_k V_k − G}``, pick
  the candidate with the *lowest* ``V_j`` (values inside the uncertainty gap are
  indistinguishable; the lowest guards against over-estimation).

``max_over_latents`` is the oracle score — solved if any player solved it — an upper
bound of every rule. ``homogeneous_search`` is the control: latent 0 searched ``k`` times.

Each player searches with its own ``λ_i`` (``λ_0 = 1``) and, given the hook, the
intrinsic reward of its own ψ, as in self-play (paper §3 and Fig. 8; SPEC §2); the
extrinsic-only search (λ = 1 for all) is the paper's ablation.

Rules are written for one position (fields ``[n, A]`` / ``[n]``) and vmapped by
``team_move``. Ties go to the lowest player / action index.
"""

from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple, Union

import chex
import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import search as search_lib

Array = jax.Array

MOVES = ("visits", "lcb")


class TeamRootStatistics(NamedTuple):
    """Root statistics of every team player on a batch of positions (SPEC §1.9).

    Shapes are for a batch; the selection rules see one position (drop the ``B`` axis).
    """

    visits: Array  # [B, n, A] N_j(s, a)
    total_visits: Array  # [B, n] N_j(s) = Σ_a N_j(s, a)
    visited: Array  # [B, n, A] N_j(s, a) > 0
    q: Array  # [B, n, A] Q_j(s, a) for visited actions, -inf elsewhere
    prior: Array  # [B, n, A] clean network prior P_j(s, a)
    u: Array  # [B, n, A] exploration bonus U_j(s, a)
    value: Array  # [B, n] V_j = max over visited actions of Q_j(s, a)


class TeamSearch(NamedTuple):
    """One search per (position, player) and each player's candidate moves."""

    stats: TeamRootStatistics  # fields [B, n, A] / [B, n]
    players: Array  # [n] latent id searched in each slot of the player axis
    network_value: Array  # [B, n] the network's value v of the root for each latent
    most_visited_action: Array  # [B, n] argmax_a N_j(s, a), ties by higher Q_j
    lcb_action: Array  # [B, n] argmax over visited a of Q_j(s, a) − U_j(s, a)


# ------------------------------------------------------------------ per-player moves (one player)


def most_visited_action(visits: Array, q: Array) -> Array:
    """``argmax_a N(s, a)`` for one player's ``visits`` [A]; ties go to the higher ``Q``."""
    best = visits == visits.max()
    # Finite stand-in for -inf Q so a most-visited action always beats the others.
    return jnp.argmax(jnp.where(best, jnp.maximum(q, -1e30), -jnp.inf)).astype(jnp.int32)


def lcb_action(q: Array, u: Array, visited: Array) -> Array:
    """``argmax_{a visited} (Q(s, a) − U(s, a))`` for one player ([A] each)."""
    return jnp.argmax(_lcb(q, u, visited)).astype(jnp.int32)


def _lcb(q: Array, u: Array, visited: Array) -> Array:
    return jnp.where(visited, q - u, -jnp.inf)


# ------------------------------------------------------------------ selection rules (one position)


def select_visit(stats: TeamRootStatistics) -> Array:
    """Visit rule: ``argmax_j max_a N_j(s, a)`` (Eq. 9); ``stats`` for one position."""
    return jnp.argmax(stats.visits.max(axis=-1)).astype(jnp.int32)


def select_value(stats: TeamRootStatistics) -> Array:
    """Value rule: ``argmax_j V_j(s)`` with ``V_j = max_{a visited} Q_j(s, a)``."""
    return jnp.argmax(stats.value).astype(jnp.int32)


def select_lcb(stats: TeamRootStatistics) -> Array:
    """LCB rule: ``argmax_j max_{a visited} (Q_j(s, a) − U_j(s, a))``; unvisited actions ignored."""
    return jnp.argmax(_lcb(stats.q, stats.u, stats.visited).max(axis=-1)).astype(jnp.int32)


def select_gap(stats: TeamRootStatistics) -> Array:
    """Gap rule (Eq. 9): the lowest-value player inside the uncertainty gap of the best.

    ``G = max_{a, j} U_j(s, a)``; candidates ``C = {j : V_j ≥ max_k V_k − G}``; returns
    ``argmin_{j ∈ C} V_j``. Values within ``G`` of the best cannot be told apart by the
    search, so the team trusts the most pessimistic of them (over-estimation guard, §3).
    """
    gap = stats.u.max()
    best = stats.value.max()
    candidate = stats.value >= best - gap
    return jnp.argmin(jnp.where(candidate, stats.value, jnp.inf)).astype(jnp.int32)


SelectionRule = Callable[[TeamRootStatistics], Array]

SELECTION_RULES: Dict[str, SelectionRule] = {
    "visit": select_visit,
    "value": select_value,
    "lcb": select_lcb,
    "gap": select_gap,
}


def get_rule(name: str) -> SelectionRule:
    """The selection rule called ``name``; raises ``ValueError`` listing the valid names."""
    try:
        return SELECTION_RULES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown selection rule {name!r}; valid rules: {', '.join(SELECTION_RULES)}") from None


def select_player(name: str, stats: TeamRootStatistics) -> Array:
    """Applies rule ``name`` to one position's team statistics; returns the player index []."""
    return get_rule(name)(stats)


def team_move(stats: TeamRootStatistics, rule: Union[str, SelectionRule], *, move: str = "visits"
              ) -> Tuple[Array, Array]:
    """The team's choice on a batch of positions: ``(player [B], action [B])``.

    ``player`` is the rule's pick (an index into the player axis); ``action`` is that
    player's most-visited move (``move="visits"``) or its LCB move (``move="lcb"``).
    """
    if move not in MOVES:
        raise ValueError(f"move must be one of {MOVES}, got {move!r}")
    select = get_rule(rule) if isinstance(rule, str) else rule
    chex.assert_rank([stats.visits, stats.value], [3, 2])

    def one(s: TeamRootStatistics) -> Tuple[Array, Array]:
        player = select(s)
        if move == "visits":
            action = most_visited_action(s.visits[player], s.q[player])
        else:
            action = lcb_action(s.q[player], s.u[player], s.visited[player])
        return player, action

    return jax.vmap(one)(stats)


def max_over_latents(correct: Array) -> Array:
    """Oracle score: position ``b`` is solved if *any* player solved it; ``correct`` [B, n] bool.

    Every selection rule plays one player's answer, so its solved mask is
    ``correct[b, j_rule(b)] ≤ any_j correct[b, j]``: an upper bound of every rule (§3).
    """
    chex.assert_rank(correct, 2)
    return jnp.any(correct, axis=-1)


def solved_by(correct: Array, player: Array) -> Array:
    """``correct[b, player[b]]``: whether the chosen player solved each position, [B] bool."""
    return jnp.take_along_axis(correct, player[:, None].astype(jnp.int32), axis=1)[:, 0]


# ------------------------------------------------------------------ batched searches


def _tile(tree: Any, n: int) -> Any:
    """[B, ...] -> [n * B, ...], player-major (item ``j * B + b``)."""
    return jax.tree_util.tree_map(
        lambda x: jnp.broadcast_to(x[None], (n,) + x.shape).reshape((n * x.shape[0],) + x.shape[1:]), tree)


def _untile(x: Array, n: int) -> Array:
    """[n * B, ...] -> [B, n, ...]."""
    return jnp.swapaxes(x.reshape((n, x.shape[0] // n) + x.shape[1:]), 0, 1)


def _searched_team(
    env: pgx.core.Env, apply_fn: search_lib.ApplyFn, params: Any, rng_key: Array, positions: pgx.core.State,
    players: Array, lam: Array, *, config: search_lib.SearchConfig, add_noise: bool,
    feature_fn: Optional[Callable] = None, intrinsic_reward_fn: Optional[search_lib.IntrinsicRewardFn] = None,
    hook_params: Any = None,
) -> TeamSearch:
    n = players.shape[0]
    batch = positions.current_player.shape[0]
    out = search_lib.run_search(
        env, apply_fn, params, rng_key, _tile(positions, n),
        jnp.repeat(players, batch), jnp.repeat(lam, batch), config=config, add_noise=add_noise,
        feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn, hook_params=hook_params)
    flat = search_lib.root_statistics(out, config=config)
    stats = TeamRootStatistics(*(_untile(x, n) for x in flat))
    per_player = jax.vmap(jax.vmap(most_visited_action))(stats.visits, stats.q)
    per_player_lcb = jax.vmap(jax.vmap(lcb_action))(stats.q, stats.u, stats.visited)
    return TeamSearch(stats=stats, players=players, network_value=_untile(out.value, n),
                      most_visited_action=per_player, lcb_action=per_player_lcb)


def player_lambdas(lam: Union[float, Array], players: Array, num_players: int) -> Array:
    """λ of each searched player, ``[len(players)]``.

    ``lam`` is either one λ for the players i > 0 — latent 0 is plain AlphaZero and
    searches with ``λ_0 = 1`` whatever ``lam`` is (paper §3) — or ``[num_players]``
    values indexed by latent id (e.g. ``Team.search_lambdas``).
    """
    lam = jnp.asarray(lam, jnp.float32)
    if lam.ndim == 0:
        return jnp.where(players == 0, 1.0, lam)
    chex.assert_shape(lam, (num_players,))
    return lam[players]


def team_search(
    env: pgx.core.Env,
    apply_fn: search_lib.ApplyFn,
    params: Any,
    rng_key: Array,
    positions: pgx.core.State,
    *,
    num_players: int,
    lam: Union[float, Array] = 1.0,
    config: search_lib.SearchConfig,
    players: Optional[Array] = None,
    feature_fn: Optional[Callable] = None,
    intrinsic_reward_fn: Optional[search_lib.IntrinsicRewardFn] = None,
    hook_params: Any = None,
) -> TeamSearch:
    """Searches every position once per team player, in one batched search without noise.

    Each player searches as it does in self-play (paper §3, SPEC §2) when given its
    ``λ_i`` and the intrinsic-reward hook (``Team.search_lambdas``, ``Team.search_hook``);
    with λ = 1 for all (the default) every search is plain AlphaZero's.

    Args:
      env, apply_fn, params: the game and the network, as in ``search.run_search``.
      rng_key: consumed (mctx's tie breaks).
      positions: batched pgx State [B]; none terminal.
      num_players: team size; the searched latents are ``0..num_players-1`` unless
        ``players`` [n] picks a subset/order.
      lam: λ per latent, ``[num_players]``, or one λ for latents i > 0 (latent 0 always
        searches with λ_0 = 1); see ``player_lambdas``.
      config: search settings (evaluation: no root noise, SPEC §1.8).
      feature_fn, intrinsic_reward_fn, hook_params: the intrinsic reward, as in
        ``search.run_search`` (its ``player`` argument is the latent id).

    Returns:
      ``TeamSearch`` with statistics [B, n, A] / [B, n] and each player's moves [B, n].
    """
    if players is None:
        players = jnp.arange(num_players, dtype=jnp.int32)
    players = jnp.asarray(players, jnp.int32)
    chex.assert_rank(players, 1)
    return _searched_team(env, apply_fn, params, rng_key, positions, players,
                          player_lambdas(lam, players, num_players), config=config, add_noise=False,
                          feature_fn=feature_fn, intrinsic_reward_fn=intrinsic_reward_fn, hook_params=hook_params)


def homogeneous_search(
    env: pgx.core.Env,
    apply_fn: search_lib.ApplyFn,
    params: Any,
    rng_key: Array,
    positions: pgx.core.State,
    *,
    num_copies: int,
    lam: float = 1.0,
    config: search_lib.SearchConfig,
    add_noise: bool = True,
) -> TeamSearch:
    """Control team: latent 0 searched ``num_copies`` (k) times, each copy its own randomness.

    Same batching and output as ``team_search`` with ``k`` in place of ``n`` (``players``
    is all zeros). The copies share the network call, so their clean priors and network
    values are identical; they differ only through the search's randomness, which is
    drawn per batch item from the consumed ``rng_key``. Without root noise a PUCT search
    varies only by mctx's tiny tie-breaking noise, hence the default ``add_noise=True``
    (Dirichlet for PUCT, Gumbel for Gumbel search).

    Latent 0 is plain AlphaZero (``λ_0 = 1``, the default ``lam``): its search has no
    intrinsic terms, so the control is the same whether the team searches as in
    self-play or extrinsic-only, and it takes no intrinsic-reward hook.
    """
    if not (isinstance(num_copies, int) and num_copies >= 1):
        raise ValueError(f"num_copies must be an int >= 1, got {num_copies!r}")
    players = jnp.zeros((num_copies,), jnp.int32)
    lam_arr = jnp.full((num_copies,), lam, jnp.float32)
    return _searched_team(env, apply_fn, params, rng_key, positions, players, lam_arr, config=config,
                          add_noise=add_noise)


__all__ = [
    "TeamRootStatistics", "TeamSearch", "SELECTION_RULES", "MOVES", "team_search", "homogeneous_search",
    "select_visit", "select_value", "select_lcb", "select_gap", "select_player", "get_rule", "team_move",
    "most_visited_action", "lcb_action", "max_over_latents", "solved_by", "player_lambdas",
]
