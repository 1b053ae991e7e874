"""Elo from match results: pairwise differences and maximum-likelihood ratings.

SPEC §2 "Matches": W = 1, D = ½, L = 0; the Elo difference of a score p is
−400·log10(1/p − 1), with a standard error; ratings for many agents by maximum
likelihood. Host-side NumPy/SciPy: this runs on finished match tables, not in jit.

Model (both functions): agent a scores against b with expectation

    E[s_ab] = 1 / (1 + 10^(−(r_a − r_b)/400))

and a draw counts as half a win and half a loss (the Bradley–Terry/Elo model with draws
as half-wins, no draw or first-move parameters).
"""

from typing import Literal, NamedTuple

import numpy as np
from scipy.sparse import csgraph

_LN10_OVER_400 = np.log(10.0) / 400.0


class EloDifference(NamedTuple):
    """Elo difference of one agent over another from their W/D/L record (arrays broadcast)."""

    elo: np.ndarray  # [...] −400·log10(1/p − 1); ±inf for p = 1 / 0 unless clipped
    stderr: np.ndarray  # [...] delta-method standard error of ``elo``
    score: np.ndarray  # [...] p = (W + D/2) / N, unclipped
    num_games: np.ndarray  # [...] N = W + D + L


def elo_from_score(score):
    """−400·log10(1/p − 1) = 400·log10(p / (1 − p)); ±inf at p = 1 / 0."""
    p = np.asarray(score, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return 400.0 * (np.log10(p) - np.log10(1.0 - p))


def score_stderr(wins, draws, losses):
    """Standard error of the score ``p = (W + D/2) / N`` from trinomial W/D/L counts:
    ``sqrt(σ² / N)`` with the per-game variance ``σ² = w(1 − p)² + d(½ − p)² + l·p²``
    (w, d, l the frequencies). N = 0 gives nan. Arrays broadcast."""
    wins, draws, losses = (np.asarray(x, dtype=np.float64) for x in (wins, draws, losses))
    games = wins + draws + losses
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (wins + 0.5 * draws) / games
        w, d, l = wins / games, draws / games, losses / games
        return np.sqrt((w * (1 - score) ** 2 + d * (0.5 - score) ** 2 + l * score**2) / games)


def elo_difference(
    wins, draws, losses, *, saturated: Literal["inf", "clip"] = "inf"
) -> EloDifference:
    """Elo difference with a standard error from trinomial W/D/L counts.

    With N = W + D + L, frequencies w, d, l = W/N, D/N, L/N and p = w + d/2, the variance
    of one game's score is σ² = w(1 − p)² + d(½ − p)² + l·p², so Var(p̂) = σ²/N, and by the
    delta method (d elo / dp = 400 / (ln 10 · p(1 − p))):

        stderr = 400 / (ln 10 · p (1 − p)) · sqrt(σ² / N)

    A perfect score (p = 1) or a whitewash (p = 0) has no finite estimate:
    ``saturated="inf"`` reports elo = ±inf with stderr = inf; ``saturated="clip"`` clips p
    to [1/(2N), 1 − 1/(2N)] (half a game from the edge) and uses the binomial variance
    p(1 − p)/N at the clipped p, which is finite but should be read as a bound. N = 0
    gives nan.
    """
    if saturated not in ("inf", "clip"):
        raise ValueError(f"saturated must be 'inf' or 'clip', got {saturated!r}")
    wins, draws, losses = (np.asarray(x, dtype=np.float64) for x in (wins, draws, losses))
    if np.any(wins < 0) or np.any(draws < 0) or np.any(losses < 0):
        raise ValueError("W/D/L counts must be non-negative")
    games = wins + draws + losses
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (wins + 0.5 * draws) / games
        variance = score_stderr(wins, draws, losses) ** 2
        edge = (score <= 0) | (score >= 1)
        if saturated == "clip":
            p = np.clip(score, 0.5 / games, 1 - 0.5 / games)
            variance = np.where(edge, p * (1 - p) / games, variance)
        else:
            p = score
        slope = 1.0 / (_LN10_OVER_400 * p * (1 - p))
        stderr = np.where(edge & (saturated == "inf"), np.inf, slope * np.sqrt(variance))
        elo = elo_from_score(p)
    return EloDifference(elo=elo, stderr=stderr, score=score, num_games=games)


class EloRatings(NamedTuple):
    """Maximum-likelihood ratings of n agents."""

    ratings: np.ndarray  # [n] Elo, ``ratings[anchor] == anchor_rating``
    stderr: np.ndarray  # [n] standard errors relative to the anchor (0 for the anchor)
    covariance: np.ndarray  # [n, n] inverse Fisher information, anchor row/column 0
    log_likelihood: float  # at the optimum (draws as half-wins)
    num_iterations: int  # Newton steps taken


def results_table(first_ids, second_ids, scores, num_agents: int):
    """Games → (wins, draws, losses) [n, n] tables from the first-listed agent's view.

    ``scores`` are 1 / ½ / 0 for the first agent. ``wins[a, b]`` counts games a won as the
    first-listed agent against b, and so on; each game appears exactly once.
    """
    first = np.asarray(first_ids, dtype=np.int64)
    second = np.asarray(second_ids, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    if not first.shape == second.shape == scores.shape or first.ndim != 1:
        raise ValueError("first_ids, second_ids and scores must be 1-D of equal length")
    if first.size and (min(first.min(), second.min()) < 0
                       or max(first.max(), second.max()) >= num_agents):
        raise ValueError(f"agent ids must lie in [0, {num_agents})")
    if np.any(first == second):
        raise ValueError("an agent cannot play itself in a rating table")
    tables = []
    for outcome in (1.0, 0.5, 0.0):
        table = np.zeros((num_agents, num_agents))
        hit = scores == outcome
        np.add.at(table, (first[hit], second[hit]), 1.0)
        tables.append(table)
    if sum(t.sum() for t in tables) != scores.size:
        raise ValueError("scores must be 1, 0.5 or 0")
    return tuple(tables)


def _log_likelihood(ratings: np.ndarray, score: np.ndarray) -> float:
    """Σ_{a≠b} S_ab log E[s_ab]: each game contributes s log p + (1 − s) log(1 − p)."""
    diff = _LN10_OVER_400 * (ratings[:, None] - ratings[None, :])
    log_expected = -np.logaddexp(0.0, -diff)
    return float(np.sum(np.where(score > 0, score * log_expected, 0.0)))


def _gradient_and_fisher(ratings: np.ndarray, score: np.ndarray, games: np.ndarray):
    """Gradient [n] and Fisher information [n, n] of the log-likelihood (see ``fit_elo``)."""
    diff = _LN10_OVER_400 * (ratings[:, None] - ratings[None, :])
    expected = 1.0 / (1.0 + np.exp(-diff))
    gradient = _LN10_OVER_400 * np.sum(score - games * expected, axis=1)
    weight = _LN10_OVER_400**2 * games * expected * (1.0 - expected)
    return gradient, np.diag(weight.sum(axis=1)) - weight


def fit_elo(
    wins,
    draws,
    losses,
    *,
    anchor: int = 0,
    anchor_rating: float = 0.0,
    prior_draws: float = 0.0,
    max_iterations: int = 100,
    tolerance: float = 1e-9,
) -> EloRatings:
    """Maximum-likelihood Elo ratings from pairwise W/D/L tables [n, n].

    ``wins[a, b]``/``draws[a, b]``/``losses[a, b]`` count games of a against b from a's view
    (e.g. a as White, b as Black, as from ``results_table``); both orientations are pooled,
    so S_ab = W_ab + ½D_ab + L_ba + ½D_ba is a's score over the N_ab = N_ba games of the
    pair. The log-likelihood Σ_{a≠b} S_ab log E[s_ab] is maximised by Newton's method with
    ``ratings[anchor]`` held at ``anchor_rating``. With c = ln 10 / 400 and q = E[s_ab]:

        gradient_a = c Σ_b (S_ab − N_ab q_ab)
        Fisher_ab  = −c² N_ab q_ab (1 − q_ab),  Fisher_aa = c² Σ_b N_ab q_ab (1 − q_ab)

    Standard errors are the square roots of the diagonal of the inverse Fisher information
    with the anchor's row and column removed: uncertainty relative to the anchor.

    The maximum exists only if every agent both scores and concedes points within every
    group: formally, the graph with an edge a → b whenever S_ab > 0 is strongly connected.
    Otherwise (e.g. an agent won every game) a ValueError says so; ``prior_draws`` > 0 adds
    that many virtual draws to every pair that played, which keeps the estimate finite.
    """
    wins, draws, losses = (np.asarray(x, dtype=np.float64) for x in (wins, draws, losses))
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or not (
        wins.shape == draws.shape == losses.shape
    ):
        raise ValueError(
            f"wins, draws, losses must be square [n, n] tables of one shape, got "
            f"{wins.shape}, {draws.shape}, {losses.shape}"
        )
    n = wins.shape[0]
    if not 0 <= anchor < n:
        raise ValueError(f"anchor {anchor} is not an agent id in [0, {n})")
    if min(wins.min(), draws.min(), losses.min()) < 0:
        raise ValueError("W/D/L counts must be non-negative")
    off_diagonal = ~np.eye(n, dtype=bool)
    score = np.where(off_diagonal, wins + losses.T + 0.5 * (draws + draws.T), 0.0)
    games = score + score.T
    score = score + np.where(games > 0, 0.5 * prior_draws, 0.0)
    games = score + score.T

    if n > 1:
        num_weak, _ = csgraph.connected_components(games > 0, directed=False)
        if num_weak > 1:
            raise ValueError(
                "the agents do not form one connected comparison graph "
                f"({num_weak} groups never play each other): ratings are not comparable"
            )
        num_strong, _ = csgraph.connected_components(score > 0, connection="strong")
        if num_strong > 1:
            raise ValueError(
                "no finite maximum-likelihood ratings: some group of agents won (or lost) "
                "every game against the rest; pass prior_draws > 0 to regularise"
            )

    free = np.arange(n) != anchor
    ratings = np.full(n, float(anchor_rating))
    log_lik = _log_likelihood(ratings, score)
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        if n == 1:
            break
        gradient, fisher = _gradient_and_fisher(ratings, score, games)
        step = np.linalg.solve(fisher[np.ix_(free, free)], gradient[free])
        # Newton on a concave likelihood; halve steps that would not improve it.
        for _ in range(30):
            candidate = ratings.copy()
            candidate[free] += step
            candidate_log_lik = _log_likelihood(candidate, score)
            if candidate_log_lik >= log_lik - 1e-12 * abs(log_lik):
                break
            step = step / 2
        ratings, log_lik = candidate, candidate_log_lik
        if np.max(np.abs(step)) < tolerance:
            break
    else:
        raise RuntimeError(f"Elo fit did not converge in {max_iterations} Newton steps")

    covariance = np.zeros((n, n))
    if n > 1:
        _, fisher = _gradient_and_fisher(ratings, score, games)
        covariance[np.ix_(free, free)] = np.linalg.inv(fisher[np.ix_(free, free)])
    return EloRatings(
        ratings=ratings,
        stderr=np.sqrt(np.diag(covariance)),
        covariance=covariance,
        log_likelihood=log_lik,
        num_iterations=iterations,
    )


def fit_elo_from_games(first_ids, second_ids, scores, num_agents: int, **kwargs) -> EloRatings:
    """``fit_elo`` on a list of games (scores 1 / ½ / 0 for the first agent)."""
    return fit_elo(*results_table(first_ids, second_ids, scores, num_agents), **kwargs)


# Two-sided 95 % quantiles of Student's t, by degrees of freedom (1 to 30); the normal 1.96 beyond.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile(dof: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``dof`` degrees of freedom (1.96 past 30)."""
    if not isinstance(dof, int) or dof < 1:
        raise ValueError(f"degrees of freedom must be an int >= 1, got {dof!r}")
    return _T975[dof - 1] if dof <= len(_T975) else 1.96
