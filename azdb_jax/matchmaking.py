"""Response diversity: interaction graphs, matchup sampling, payoff tracking.

Paper Appendix B.1 (SPEC §1.11). A matchup is drawn as

    P(i, t, j) = P_unif(i) · P_unif(t) · Σ_t[i, j]                       (paper Eq. 10)

with learner i, its colour t ∈ {White, Black} and opponent j. ``Σ_w`` (i plays White)
and ``Σ_b`` (i plays Black) are [n, n] interaction graphs whose rows are mixtures over
opponents. Only the learner's (the exploiter's) transitions train (``exploiter_mask``).

Payoff convention, used everywhere here: ``payoff[w, b]`` is the mean result, +1 / 0 / −1
from White's point of view, of games with player w as White and player b as Black.
Pairs never played count as 0 (a draw) by default; ``update_payoff`` also offers a
decayed mean and a prior for unplayed pairs (``config.PayoffConfig``). This is the zero-sum matrix game "White rows vs
Black columns" whose Nash equilibrium (``azdb_jax.nash``) gives the PSRO graphs:
White (rows) maximises, Black (columns) minimises.

Everything is a pure array function that can run inside a jitted program; graph names are
static Python strings resolved at trace time.
"""

from typing import Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp

from azdb_jax import nash

Array = jax.Array


class InteractionGraph(NamedTuple):
    """Opponent mixtures per learner and learner colour; every row sums to 1."""

    white: Array  # [n, n] Σ_w[i, j] = P(opponent j | learner i plays White)
    black: Array  # [n, n] Σ_b[i, j] = P(opponent j | learner i plays Black)


def _check_payoff(payoff: Array) -> Array:
    payoff = jnp.asarray(payoff, jnp.float32)
    chex.assert_rank(payoff, 2)
    if payoff.shape[0] != payoff.shape[1]:
        raise ValueError(f"payoff must be square [n, n] (white x black), got {payoff.shape}")
    return payoff


def _same_for_both_colours(graph: Array) -> InteractionGraph:
    return InteractionGraph(white=graph, black=graph)


def selfplay(payoff: Array) -> InteractionGraph:
    """Σ_w = Σ_b = I: every player faces itself (plain AlphaZero self-play)."""
    n = _check_payoff(payoff).shape[0]
    return _same_for_both_colours(jnp.eye(n, dtype=jnp.float32))


def uniform(payoff: Array) -> InteractionGraph:
    """Σ[i, j] = 1/n: opponents uniform over the whole team."""
    n = _check_payoff(payoff).shape[0]
    return _same_for_both_colours(jnp.full((n, n), 1.0 / n, jnp.float32))


def fictitious_play(payoff: Array) -> InteractionGraph:
    """PSRO-uniform: Σ[i, j] = 1/(i+1) for j ≤ i, else 0 (lower-triangular uniform)."""
    n = _check_payoff(payoff).shape[0]
    lower = jnp.tril(jnp.ones((n, n), jnp.float32))
    return _same_for_both_colours(lower / jnp.sum(lower, axis=1, keepdims=True))


def restricted_nash(payoff: Array, player: Array, **solver_kwargs) -> nash.NashEquilibrium:
    """Nash equilibrium of the White-vs-Black game restricted to players 0..``player``.

    Rows and columns j > ``player`` are masked out (not sliced), so ``player`` may be traced
    and the function vmapped over players. The current player is part of its own
    population (paper Appendix B.1: player 0 thereby does plain self-play).
    """
    payoff = _check_payoff(payoff)
    allowed = jnp.arange(payoff.shape[0]) <= player
    return nash.solve_zero_sum(payoff, row_mask=allowed, col_mask=allowed, **solver_kwargs)


def _restricted_nash_all(payoff: Array, **solver_kwargs) -> nash.NashEquilibrium:
    """``restricted_nash`` for every player i; fields gain a leading [n] axis."""
    players = jnp.arange(payoff.shape[0])
    return jax.vmap(lambda i: restricted_nash(payoff, i, **solver_kwargs))(players)


def psro_nash(payoff: Array, **solver_kwargs) -> InteractionGraph:
    """PSRO-Nash: row i is the *opponent-side* Nash mixture of the game on players 0..i.

    With (x*, y*) the equilibrium of max_x min_y xᵀ M[0..i, 0..i] y (White rows, Black
    columns): when i plays White its opponent plays Black, so Σ_w[i] = y* (Black's Nash
    mixture); when i plays Black, Σ_b[i] = x* (White's). i then learns a best response to
    the equilibrium of the colour it faces. Rows are 0 for j > i. ``solver_kwargs`` go to
    ``nash.solve_zero_sum``.
    """
    equilibria = _restricted_nash_all(_check_payoff(payoff), **solver_kwargs)
    return InteractionGraph(white=equilibria.col_strategy, black=equilibria.row_strategy)


def beats_or_ties(payoff: Array, *, tie_tolerance: float = 0.0) -> Array:
    """[n, n] bool: player i scores at least as well as j over both colours.

        beats_or_ties[i, j] = M[i, j] − M[j, i] ≥ −tie_tolerance

    M[i, j] − M[j, i] is twice i's mean result in a two-game mini-match against j (once as
    White, once as Black). Judging over both colours keeps White's first-move advantage
    from deciding who "beats" whom, and every player ties itself.
    """
    payoff = _check_payoff(payoff)
    return payoff - payoff.T >= -tie_tolerance


def psro_rectified(
    payoff: Array, *, tie_tolerance: float = 0.0, **solver_kwargs
) -> InteractionGraph:
    """PSRO-rectified: the PSRO-Nash rows kept only on opponents that i beats or ties.

        Σ_t[i, j] ∝ σ_t^i[j] · beats_or_ties[i, j]

    with σ_t^i the PSRO-Nash row (``psro_nash``), renormalised (Balduzzi et al., 2019, as in
    paper Appendix B.1). When i beats or ties nobody in the support of σ_t^i the row falls
    back to self-play (one-hot on i): i then has no niche to specialise in and training
    against itself is plain AlphaZero. Since i ties itself, a row whose Nash support holds
    i always keeps i.
    """
    payoff = _check_payoff(payoff)
    nash_graph = psro_nash(payoff, **solver_kwargs)
    keep = beats_or_ties(payoff, tie_tolerance=tie_tolerance).astype(jnp.float32)
    selfplay_rows = jnp.eye(payoff.shape[0], dtype=jnp.float32)

    def rectify(graph: Array) -> Array:
        filtered = graph * keep
        total = jnp.sum(filtered, axis=1, keepdims=True)
        return jnp.where(total > 0, filtered / jnp.where(total > 0, total, 1.0), selfplay_rows)

    return InteractionGraph(white=rectify(nash_graph.white), black=rectify(nash_graph.black))


def psro_cycle(payoff: Array, **solver_kwargs) -> InteractionGraph:
    """PSRO-cycle: players 0..n−2 form a cycle; the last player faces the Nash of all.

        Σ[i] = one-hot((i + 1) mod (n − 1))  for i < n − 1   (both colours)
        Σ_w[n−1] = y*, Σ_b[n−1] = x*          (opponent-side Nash over all n players)

    Paper Appendix B.1: "the first n − 1 players form a strategic cycle and the last player
    responds to the Nash equilibrium over the entire league". Each cycle member is trained
    against the next, so 0 → 1 → … → n−2 → 0 is a cycle of best responses. (The 4-player
    sketch in the paper's Fig. 9f pairs 0 with 1 and leaves 2 alone, which is not a cycle
    of n − 1; we follow the text.) n = 2 gives player 0 self-play.
    """
    payoff = _check_payoff(payoff)
    n = payoff.shape[0]
    league = nash.solve_zero_sum(payoff, **solver_kwargs)
    cycle = jnp.eye(n, dtype=jnp.float32)[(jnp.arange(n - 1) + 1) % max(n - 1, 1)]  # [n−1, n]
    return InteractionGraph(
        white=jnp.concatenate([cycle, league.col_strategy[None]]),
        black=jnp.concatenate([cycle, league.row_strategy[None]]),
    )


# The distinct matchmakers in Fig. 9's order (a)-(f); ``fictitious_play`` is psro_uniform's other name.
_MATCHMAKERS: dict[str, Callable[..., InteractionGraph]] = {
    "selfplay": selfplay,
    "uniform": uniform,
    "psro_nash": psro_nash,
    "psro_rectified": psro_rectified,
    "psro_uniform": fictitious_play,
    "psro_cycle": psro_cycle,
}
MATCHMAKERS = tuple(_MATCHMAKERS)
GRAPHS: dict[str, Callable[..., InteractionGraph]] = {**_MATCHMAKERS, "fictitious_play": fictitious_play}
_USES_NASH = ("psro_nash", "psro_rectified", "psro_cycle")


def interaction_graphs(name: str, payoff: Array, **kwargs) -> InteractionGraph:
    """(Σ_w, Σ_b) of the named matchmaker for the tracked payoff matrix [n, n].

    Names (``GRAPHS``): selfplay, uniform, fictitious_play (alias psro_uniform), psro_nash,
    psro_rectified, psro_cycle; anything else raises a ValueError listing them. ``kwargs``
    (``tie_tolerance`` for psro_rectified; ``max_iterations``, ``tolerance``, ``check_every``
    for the Nash solver) go to the PSRO graphs; the others use ``payoff`` only for its size.
    """
    if name not in GRAPHS:
        raise ValueError(
            f"unknown interaction graph {name!r}; valid names: {', '.join(sorted(GRAPHS))}"
        )
    if kwargs and name not in _USES_NASH:
        raise ValueError(f"interaction graph {name!r} takes no options, got {sorted(kwargs)}")
    return GRAPHS[name](payoff, **kwargs)


class Matchup(NamedTuple):
    """One sampled game (fields are [] per game, [B] after vmapping)."""

    learner_id: Array  # [B] int32, i: the exploiter whose transitions train
    learner_is_white: Array  # [B] bool, t^i
    opponent_id: Array  # [B] int32, j ~ Σ_t[i]
    white_id: Array  # [B] int32, player moving first
    black_id: Array  # [B] int32


def sample_matchup(graph: InteractionGraph, rng_key: chex.PRNGKey) -> Matchup:
    """Draw one (i, t, j) by Eq. 10: i ~ U{0..n−1}, t ~ U{White, Black}, j ~ Σ_t[i].

    Written for one game; ``sample_matchups`` vmaps it. ``rng_key`` is consumed.
    """
    white, black = jnp.asarray(graph.white), jnp.asarray(graph.black)
    n = white.shape[0]
    chex.assert_shape([white, black], (n, n))
    key_player, key_colour, key_opponent = jax.random.split(rng_key, 3)
    learner = jax.random.randint(key_player, (), 0, n, dtype=jnp.int32)
    is_white = jax.random.bernoulli(key_colour)
    row = jnp.where(is_white, white[learner], black[learner])
    opponent = jax.random.categorical(key_opponent, jnp.log(row)).astype(jnp.int32)
    return Matchup(
        learner_id=learner,
        learner_is_white=is_white,
        opponent_id=opponent,
        white_id=jnp.where(is_white, learner, opponent),
        black_id=jnp.where(is_white, opponent, learner),
    )


def sample_matchups(
    graph: InteractionGraph, rng_key: chex.PRNGKey, *, batch_size: int
) -> Matchup:
    """``batch_size`` independent matchups, fields [B]. ``rng_key`` is consumed."""
    keys = jax.random.split(rng_key, batch_size)
    return jax.vmap(sample_matchup, in_axes=(None, 0))(graph, keys)


def exploiter_mask(mover_ids: Array, learner_id: Array) -> Array:
    """[T] bool: which transitions of one game train (paper Appendix B.1).

    ``mover_ids`` [T] holds the player id that made each transition (−1 or any id that
    is not the learner's for padding). Only the exploiter i's transitions train, never
    the exploitee j's, since learning from both would cancel the diversity a matchup is
    meant to create. In a self-play game (j = i) both sides are i, so both train.
    """
    chex.assert_rank(mover_ids, 1)
    return mover_ids == learner_id


class PayoffTracker(NamedTuple):
    """Results per (white w, black b) pair; ``mean`` is the payoff fed to the PSRO graphs."""

    counts: Array  # [n, n] float32, (effective, decayed) number of finished games C
    mean: Array  # [n, n] float32, payoff estimate M from White's view in [−1, 1] (``update_payoff``)


def init_payoff(num_players: int, *, prior: float = 0.0) -> PayoffTracker:
    """An empty tracker: no games, every payoff at the ``prior`` (default 0, a draw)."""
    zeros = jnp.zeros((num_players, num_players), jnp.float32)
    return PayoffTracker(counts=zeros, mean=jnp.full_like(zeros, prior))


class PayoffStatistics(NamedTuple):
    """A batch of finished games per (white w, black b) pair, before it is added to a
    tracker: sums and counts, so that a caller can sum them over devices or hosts first."""

    counts: Array  # [n, n] float32 c: finished games
    sums: Array  # [n, n] float32 s: their results from White's view


def payoff_statistics(num_players: int, white_ids: Array, black_ids: Array, results: Array,
                      finished_mask: Array) -> PayoffStatistics:
    """The counts and result sums of a batch of games [B] per pair (unfinished games are
    ignored; ``results`` is +1 / 0 / −1 from White's point of view)."""
    n = num_players
    chex.assert_equal_shape([white_ids, black_ids, results, finished_mask])
    chex.assert_rank(white_ids, 1)
    weight = jnp.asarray(finished_mask, jnp.float32)
    pair = jnp.asarray(white_ids, jnp.int32) * n + jnp.asarray(black_ids, jnp.int32)
    counts = jax.ops.segment_sum(weight, pair, num_segments=n * n).reshape(n, n)
    sums = jax.ops.segment_sum(weight * jnp.asarray(results, jnp.float32), pair, num_segments=n * n).reshape(n, n)
    return PayoffStatistics(counts=counts, sums=sums)


def update_payoff(
    tracker: PayoffTracker,
    white_ids: Array,
    black_ids: Array,
    results: Array,
    finished_mask: Array,
    *,
    decay: float = 1.0,
    prior: float = 0.0,
    prior_games: float = 0.0,
) -> PayoffTracker:
    """Add a batch of games [B] to the tracker; unfinished games are ignored.

    ``results`` is +1 / 0 / −1 from White's point of view. Per pair, with ``S`` and ``C``
    the decayed sum and count of results so far, ``c`` and ``s`` the batch's count and
    sum (scatter-added over finished games), ``w = prior_games`` and ``p = prior``:

        C' = decay · C + c,   S' = decay · S + s
        M' = (S' + w p) / (C' + w)        (M kept where C' + w = 0, i.e. at p: never played)

    ``decay`` = 1 and ``w`` = 0 give the exact running mean over all games (the
    default); ``decay`` < 1 weighs a game k batches old by decay^k, so the payoff follows
    players that keep learning; ``w`` > 0 counts the prior as ``w`` games, so a pair's
    estimate moves from ``p`` towards its results as they come, and drifts back to ``p``
    once the pair stops being played (its decayed count shrinks). ``S`` is not stored:
    ``S = M (C + w) − w p`` recovers it, so ``prior`` and ``prior_games`` must be the
    values the tracker was built and updated with (``init_payoff(n, prior=p)``).
    ``payoff_statistics`` then ``update_payoff_from_statistics`` is the same in two steps.
    """
    n = tracker.counts.shape[0]
    games = payoff_statistics(n, white_ids, black_ids, results, finished_mask)
    return update_payoff_from_statistics(tracker, games, decay=decay, prior=prior, prior_games=prior_games)


def update_payoff_from_statistics(tracker: PayoffTracker, games: PayoffStatistics, *, decay: float = 1.0,
                                  prior: float = 0.0, prior_games: float = 0.0) -> PayoffTracker:
    """``update_payoff`` from a batch's ``payoff_statistics`` (e.g. summed over devices)."""
    n = tracker.counts.shape[0]
    chex.assert_shape([tracker.counts, tracker.mean, games.counts, games.sums], (n, n))
    old_counts = decay * tracker.counts
    # decay · S = decay · (M (C + w) − w p), written so that w = 0 adds exact zeros.
    old_sums = old_counts * tracker.mean + decay * prior_games * (tracker.mean - prior)
    counts = old_counts + games.counts
    total = counts + prior_games
    safe = jnp.where(total > 0, total, 1.0)
    mean = jnp.where(total > 0, (old_sums + games.sums + prior_games * prior) / safe, tracker.mean)
    return PayoffTracker(counts=counts, mean=mean)
