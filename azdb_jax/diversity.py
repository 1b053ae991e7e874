"""Behavioural diversity (paper §3 "Behavioral diversity", Eq. 6-8; SPEC §1.3-1.5, §1.8).

Each player i of the team is summarised by its expected features
``ψ_i = E[φ(s, a)]`` over its *own* moves in self-play (φ: ``azdb_jax.features``). The
team maximises

    Diversity = Σ_i (1 − λ_i) (0.5 d_i² − 0.2 d_i⁵ / ℓ0³)                      (Eq. 7)

with ``j*_i = argmin_{j≠i} ||ψ_i − ψ_j||²`` and ``d_i = ||ψ_i − ψ_{j*_i}||₂``, by giving
player i the intrinsic reward

    r_d^i(s, a) = (1 − (d_i / ℓ0)³) · φ(s, a) · (ψ_i − ψ_{j*_i})                  (Eq. 8)

mixed with the game result as ``r = (1 − λ_i) r_d^i + λ_i r_e`` (Eq. 6), ``λ_0 = 1``.

Everything is a pure array function written for one item (one player, one transition);
batch with ``jax.vmap`` (the reward/value mixes are elementwise and also take batched
arrays as they are). Nothing here is jitted: jit the caller's step.

Conventions for the degenerate team of one player (n = 1): there is no neighbour, so
``j*_0 = 0`` (the player itself), hence ``d_0 = 0``, ``ψ_0 − ψ_{j*_0} = 0``, the
player's term of Eq. 7 is 0 and its intrinsic reward is 0.
"""

from typing import NamedTuple, Optional, Union

import chex
import jax
import jax.numpy as jnp

Array = jax.Array
Numeric = Union[Array, float]

WHITE = 0
BLACK = 1


# ---------------------------------------------------------------------------------------
# Expected features ψ (SPEC §1.3)
# ---------------------------------------------------------------------------------------


class FeatureStatistics(NamedTuple):
    """Sums and counts of φ over one batch of own transitions, per player."""

    sum: Array  # [n, F] Σ φ over player i's own valid transitions
    count: Array  # [n] number of those transitions (float32)
    sum_by_colour: Array  # [n, 2, F] the same sums split by colour (0 White, 1 Black)
    count_by_colour: Array  # [n, 2] the same counts split by colour


class ExpectedFeatures(NamedTuple):
    """Exponential moving averages of each player's expected features."""

    psi: Array  # [n, F] ψ_i, over all of player i's own moves
    psi_by_colour: Array  # [n, 2, F] ψ_i over the moves played as White (0) / Black (1)
    initialised: Array  # [n] bool: psi[i] has been set from at least one batch
    initialised_by_colour: Array  # [n, 2] bool: the same for psi_by_colour


def init_expected_features(num_players: int, num_features: int) -> ExpectedFeatures:
    """Zero ψ, with no player initialised (the first batch sets ψ, see below)."""
    if num_players < 1 or num_features < 1:
        raise ValueError(
            f"need num_players >= 1 and num_features >= 1, got {num_players}, {num_features}"
        )
    return ExpectedFeatures(
        psi=jnp.zeros((num_players, num_features), jnp.float32),
        psi_by_colour=jnp.zeros((num_players, 2, num_features), jnp.float32),
        initialised=jnp.zeros((num_players,), jnp.bool_),
        initialised_by_colour=jnp.zeros((num_players, 2), jnp.bool_),
    )


def feature_statistics(
    phi: Array,
    player: Array,
    is_own_move: Array,
    colour: Array,
    valid: Array,
    *,
    num_players: int,
) -> FeatureStatistics:
    """Per-player sums and counts of φ over a batch of transitions (segment sums).

    A transition counts for ``player[t]`` when ``is_own_move[t] & valid[t]``: the mover
    is the player being measured (in a game of i against j, the caller marks the moves
    of whichever player it measures) and the record is real (not padding). Player ids
    outside ``[0, num_players)`` are ignored; colours other than 0/1 are left out of the
    colour split only.

    Args:
      phi: [..., F] features φ(s, a) of the position after each move.
      player: [...] int, the team player (latent index) that made the move.
      is_own_move: [...] bool, the mover is the player being measured.
      colour: [...] int, the colour the mover played (0 White, 1 Black).
      valid: [...] bool, the transition is a real record.
      num_players: n, static.

    Returns:
      ``FeatureStatistics``; ``sum / count`` is the batch mean ψ_batch.
    """
    chex.assert_rank(phi, player.ndim + 1)
    chex.assert_equal_shape([player, is_own_move, colour, valid])
    chex.assert_equal_shape_prefix([phi, player], player.ndim)
    num_features = phi.shape[-1]
    phi = phi.reshape(-1, num_features).astype(jnp.float32)
    player, colour = player.reshape(-1), colour.reshape(-1)
    in_range = (player >= 0) & (player < num_players)
    counted = (is_own_move & valid).reshape(-1) & in_range
    weight = counted.astype(jnp.float32)
    sums = jax.ops.segment_sum(phi * weight[:, None], player, num_segments=num_players)
    counts = jax.ops.segment_sum(weight, player, num_segments=num_players)

    colour_ok = (colour == WHITE) | (colour == BLACK)
    weight_c = (counted & colour_ok).astype(jnp.float32)
    segment = jnp.where(counted & colour_ok, 2 * player + colour, 0)
    sums_c = jax.ops.segment_sum(phi * weight_c[:, None], segment, num_segments=2 * num_players)
    counts_c = jax.ops.segment_sum(weight_c, segment, num_segments=2 * num_players)
    return FeatureStatistics(
        sum=sums,
        count=counts,
        sum_by_colour=sums_c.reshape(num_players, 2, num_features),
        count_by_colour=counts_c.reshape(num_players, 2),
    )


def _ema(psi: Array, initialised: Array, total: Array, count: Array, rate: Numeric):
    """One EMA step for one ψ vector: [F], [], [F], [] -> ([F], [])."""
    seen = count > 0
    batch_mean = total / jnp.maximum(count, 1.0)
    moved = (1.0 - rate) * psi + rate * batch_mean
    new_psi = jnp.where(seen, jnp.where(initialised, moved, batch_mean), psi)
    return new_psi, initialised | seen


def update_expected_features_from_statistics(
    state: ExpectedFeatures, stats: FeatureStatistics, *, rate: Numeric
) -> ExpectedFeatures:
    """``ψ ← (1 − α) ψ + α ψ_batch`` per player (and per colour); SPEC §1.3.

    A ψ that was never set is *initialised* to ψ_batch (no bias towards the zero start);
    a player (colour) with no transitions in the batch keeps its ψ. Taking sums and
    counts lets a caller reduce them over devices or hosts before this update.
    """
    _check_rate(rate)
    n, f = state.psi.shape
    chex.assert_shape(stats.sum, (n, f))
    chex.assert_shape(stats.sum_by_colour, (n, 2, f))
    ema = jax.vmap(_ema, in_axes=(0, 0, 0, 0, None))
    psi, initialised = ema(state.psi, state.initialised, stats.sum, stats.count, rate)
    psi_c, initialised_c = ema(
        state.psi_by_colour.reshape(2 * n, f),
        state.initialised_by_colour.reshape(2 * n),
        stats.sum_by_colour.reshape(2 * n, f),
        stats.count_by_colour.reshape(2 * n),
        rate,
    )
    return ExpectedFeatures(
        psi=psi,
        psi_by_colour=psi_c.reshape(n, 2, f),
        initialised=initialised,
        initialised_by_colour=initialised_c.reshape(n, 2),
    )


def update_expected_features(
    state: ExpectedFeatures,
    phi: Array,
    player: Array,
    is_own_move: Array,
    colour: Array,
    valid: Array,
    *,
    rate: Numeric,
) -> ExpectedFeatures:
    """``feature_statistics`` of a batch, then the EMA update (see both)."""
    stats = feature_statistics(
        phi, player, is_own_move, colour, valid, num_players=state.psi.shape[0]
    )
    return update_expected_features_from_statistics(state, stats, rate=rate)


# ---------------------------------------------------------------------------------------
# Nearest neighbour, objective and intrinsic reward (Eq. 7-8)
# ---------------------------------------------------------------------------------------


class Neighbour(NamedTuple):
    """Player i's nearest neighbour in feature space (vmap over i for [n] fields)."""

    index: Array  # [] int32 j*_i (i itself when n = 1)
    distance: Array  # [] d_i = ||ψ_i − ψ_{j*_i}||₂ (0 when n = 1)


def nearest_neighbour(psi: Array, i: Array) -> Neighbour:
    """``j*_i = argmin_{j≠i} ||ψ_i − ψ_j||²`` and ``d_i`` for one player i (Eq. 7).

    Ties go to the lowest index. With a single player there is no j ≠ i: by convention
    ``j*_0 = 0`` and ``d_0 = 0``, which makes the player's term and reward vanish.

    Args:
      psi: [n, F] expected features of all players.
      i: [] int, the player.
    """
    chex.assert_rank(psi, 2)
    n = psi.shape[0]
    if n == 1:
        return Neighbour(index=jnp.zeros((), jnp.int32), distance=jnp.zeros((), psi.dtype))
    squared = jnp.sum(jnp.square(psi - psi[i]), axis=-1)  # [n]
    squared = jnp.where(jnp.arange(n) == i, jnp.inf, squared)
    j = jnp.argmin(squared).astype(jnp.int32)
    return Neighbour(index=j, distance=jnp.sqrt(squared[j]))


def nearest_neighbours(psi: Array) -> Neighbour:
    """``nearest_neighbour`` for every player: fields of shape [n]."""
    return jax.vmap(nearest_neighbour, in_axes=(None, 0))(psi, jnp.arange(psi.shape[0]))


def player_diversity(
    psi_i: Array, psi_neighbour: Array, lam_i: Numeric, *, l0: Numeric
) -> Array:
    """Player i's term of Eq. 7: ``(1 − λ_i) (0.5 d² − 0.2 d⁵ / ℓ0³)``, ``d = ||ψ_i − ψ_j||``.

    ``d⁵`` is computed as ``(d²)^2.5`` so the gradient is finite (zero) at d = 0.
    The neighbour ``ψ_{j*_i}`` is an argument: j* is held fixed, see ``intrinsic_reward``.

    Args:
      psi_i: [F] ψ_i.
      psi_neighbour: [F] ψ_{j*_i}.
      lam_i: [] λ_i.
      l0: ℓ0 > 0, the distance at which repulsion and attraction balance.
    """
    _check_l0(l0)
    squared = jnp.sum(jnp.square(psi_i - psi_neighbour))
    return (1.0 - lam_i) * (0.5 * squared - 0.2 * squared**2.5 / l0**3)


def diversity_objective(psi: Array, lams: Array, *, l0: Numeric) -> Array:
    """``Diversity = Σ_i (1 − λ_i) (0.5 d_i² − 0.2 d_i⁵ / ℓ0³)`` (Eq. 7); [n, F], [n] -> []."""
    chex.assert_rank(psi, 2)
    chex.assert_shape(lams, psi.shape[:1])
    neighbours = nearest_neighbours(psi)
    terms = jax.vmap(lambda p, q, lam: player_diversity(p, q, lam, l0=l0))(
        psi, psi[neighbours.index], lams
    )
    return jnp.sum(terms)


def intrinsic_reward(phi: Array, psi_i: Array, psi_neighbour: Array, *, l0: Numeric) -> Array:
    """Player i's diversity reward for one transition (Eq. 8):

        r_d^i(s, a) = (1 − (d_i / ℓ0)³) · φ(s, a) · (ψ_i − ψ_{j*_i}),  d_i = ||ψ_i − ψ_{j*_i}||.

    It is φ dotted with the gradient of player i's *unweighted* term of Eq. 7,
    ``∇_{ψ_i}(0.5 d_i² − 0.2 d_i⁵/ℓ0³) = (1 − d_i³/ℓ0³)(ψ_i − ψ_{j*_i})`` (Eq. 4: the
    reward is the objective's gradient w.r.t. the occupancy, and ψ_i is linear in it),
    so ``(1 − λ_i) r_d^i = φ · ∇_{ψ_i} player_diversity``. Two conventions are part of
    that identity: j*_i is held fixed (it is piecewise constant in ψ, so this is the
    gradient almost everywhere), and only player i's own term is differentiated, not
    the terms of the players whose nearest neighbour is i. The reward is 0 at d_i = ℓ0:
    below ℓ0 it pushes player i away from its neighbour, above ℓ0 it pulls it back.

    Args:
      phi: [F] φ(s, a), the board after the move.
      psi_i: [F] ψ_i of the mover.
      psi_neighbour: [F] ψ_{j*_i} (``psi[nearest_neighbour(psi, i).index]``).
      l0: ℓ0 > 0.

    Returns:
      [] r_d^i(s, a).
    """
    _check_l0(l0)
    chex.assert_rank([phi, psi_i, psi_neighbour], 1)
    direction = psi_i - psi_neighbour
    distance = jnp.sqrt(jnp.sum(jnp.square(direction)))
    return (1.0 - (distance / l0) ** 3) * jnp.dot(phi.astype(direction.dtype), direction)


def team_intrinsic_reward(psi: Array, phi: Array, player: Array, *, l0: Numeric) -> Array:
    """``r_d^i(s, a)`` for one transition of team player ``i = player`` (Eq. 8).

    Looks up j*_i in the team's ψ and calls ``intrinsic_reward``; with
    ``functools.partial(team_intrinsic_reward, l0=l0)`` it is a search reward hook
    ``(psi, phi, player) -> r_d``.

    Args:
      psi: [n, F] the team's expected features (``ExpectedFeatures.psi``).
      phi: [F] φ(s, a).
      player: [] int, the team player i.
      l0: ℓ0 > 0.
    """
    neighbour = nearest_neighbour(psi, player)
    return intrinsic_reward(phi, psi[player], psi[neighbour.index], l0=l0)


# ---------------------------------------------------------------------------------------
# λ and the reward / value mixes (Eq. 6; SPEC §1.5, §1.8)
# ---------------------------------------------------------------------------------------


def _mix(extrinsic: Array, intrinsic: Array, lam_i: Numeric, use_intrinsic: Array) -> Array:
    """``λ x_e + (1 − λ) x_d`` where ``use_intrinsic``, else ``λ x_e``.

    At λ = 1 the intrinsic part is dropped rather than multiplied by 0, so the result
    is ``x_e`` bit for bit even when ``x_d`` is not finite (an untrained v_d head).
    """
    scaled = lam_i * extrinsic
    mixed = scaled + (1.0 - lam_i) * intrinsic
    return jnp.where(use_intrinsic & (lam_i != 1.0), mixed, scaled)


def mixed_reward(r_e: Array, r_d: Array, lam_i: Numeric) -> Array:
    """Eq. 6: ``r = (1 − λ_i) r_d^i + λ_i r_e``; exactly ``r_e`` when λ_i = 1."""
    return _mix(r_e, r_d, lam_i, jnp.bool_(True))


def search_transition_reward(
    r_e: Array, r_d: Array, lam_i: Numeric, root_player_moved: Array
) -> Array:
    """Reward of one tree transition in a search rooted at player P = i (SPEC §1.8).

    ``λ_i r_e + (1 − λ_i) r_d^i(s, a)`` when P made the move, ``λ_i r_e`` when the
    opponent did (the intrinsic reward is zeroed on the opponent's turn, paper §3).
    ``r_e`` is the game reward for the mover (mctx's negamax convention), and r_d^i is
    P's reward, which is the mover's exactly when it is added. With λ_i = 1 this is
    ``r_e`` bit for bit.

    Args:
      r_e: [] extrinsic reward for the mover.
      r_d: [] r_d^i(s, a) (``intrinsic_reward`` with P's ψ).
      lam_i: [] λ_i of the root player.
      root_player_moved: [] bool, the mover is P.
    """
    return _mix(r_e, r_d, lam_i, root_player_moved)


def search_leaf_value(
    v: Array, v_d: Array, lam_i: Numeric, root_player_to_move: Array, v_d_opponent: Optional[Array] = None
) -> Array:
    """Leaf value in a search rooted at player P = i (SPEC §1.8, paper §3).

    ``v`` is from the side to move (negamax). Where P is to move: ``λ_i v + (1 − λ_i) v_d``.
    Where the opponent is to move the paper only says that "each value estimate" is
    mixed; two readings (docs/method.md):

    - ``v_d_opponent`` None: ``λ_i v`` — P's intrinsic return is dropped at these
      leaves, so leaves at odd and even depth are valued on different scales;
    - ``v_d_opponent`` given (P's intrinsic return from a position where its opponent is
      to move, the network's second intrinsic head): ``λ_i v − (1 − λ_i) v_d_opponent``,
      from the side to move, so that after the search's negamax sign P sees
      ``−λ_i v + (1 − λ_i) v_d_opponent``.

    With λ_i = 1 both are ``v`` bit for bit.

    Args:
      v: [] the value head.
      v_d: [] the intrinsic value head (P's latent).
      lam_i: [] λ_i of the root player.
      root_player_to_move: [] bool, P is to move at the leaf.
      v_d_opponent: [] or None, the opponent-to-move intrinsic head (P's latent).
    """
    if v_d_opponent is None:
        return _mix(v, v_d, lam_i, root_player_to_move)
    own = _mix(v, v_d, lam_i, jnp.bool_(True))
    other = _mix(v, -v_d_opponent, lam_i, jnp.bool_(True))
    return jnp.where(root_player_to_move, own, other)


def _part(intrinsic: Array, lam_i: Numeric, use_intrinsic: Array) -> Array:
    """The intrinsic part of ``_mix``: ``(1 − λ) x_d`` where it is mixed in, else 0."""
    return jnp.where(use_intrinsic & (lam_i != 1.0), (1.0 - lam_i) * intrinsic, 0.0)


def search_transition_reward_part(r_d: Array, lam_i: Numeric, root_player_moved: Array) -> Array:
    """The intrinsic part of ``search_transition_reward``: ``(1 − λ_i) r_d^i`` on P's moves, else 0."""
    return _part(r_d, lam_i, root_player_moved)


def search_leaf_value_part(
    v_d: Array, lam_i: Numeric, root_player_to_move: Array, v_d_opponent: Optional[Array] = None
) -> Array:
    """The intrinsic part of ``search_leaf_value`` (same arguments but ``v``), from the side to
    move: ``(1 − λ_i) v_d`` where P is to move; where the opponent is, 0 (``v_d_opponent``
    None) or ``−(1 − λ_i) v_d_opponent``. ``search_leaf_value − search_leaf_value_part`` is
    the extrinsic part ``λ_i v`` (or ``v`` at λ_i = 1, where the part is 0)."""
    if v_d_opponent is None:
        return _part(v_d, lam_i, root_player_to_move)
    return jnp.where(root_player_to_move, _part(v_d, lam_i, jnp.bool_(True)),
                     _part(-v_d_opponent, lam_i, jnp.bool_(True)))


# ---------------------------------------------------------------------------------------
# Argument checks (host-side values only; traced values pass through)
# ---------------------------------------------------------------------------------------


def _check_l0(l0: Numeric) -> None:
    if isinstance(l0, (int, float)) and not l0 > 0:
        raise ValueError(f"l0 must be > 0, got {l0}")


def _check_rate(rate: Numeric) -> None:
    if isinstance(rate, (int, float)) and not 0.0 < rate <= 1.0:
        raise ValueError(f"the EMA rate must be in (0, 1], got {rate}")
