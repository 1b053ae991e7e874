"""Matches in the skill-compatibility frameworks and the move-level loss statistics (paper §4).

``play_match`` plays a focal team against an alter team in one framework — ``"stt"``
(Stochastic Tag Team), ``"hb"`` (Hand and Brain) or ``"regular"`` (the plain game, one
agent a side) — through ``azdb_jax.arena`` (colour-balanced pairs, one compiled scan),
and scores it from the focal side: W/D/L, win-share ``(W + D/2)/N`` and its standard
error from the trinomial counts (``ratings.score_stderr``), as the paper reports.

``move_losses`` replays the games and charges every move its *win-probability loss*:
``100 · max(0, w_before − w_after)``, the drop of the mover's win probability
``w = (1 + v)/2`` by a strong evaluator (a value network; the game's result where a
move ends it), clipped at 0 like the paper's 0-100 loss. Each move is attributed to an
agent: the focal or alter team's senior or junior (STT, from the game's coins), or the
team (HB, regular). ``loss_table`` averages them: ``L(A, C)`` over the moves of agent
``A`` satisfying condition ``C`` (all moves, or the mover's win probability before the
move in a band — the paper's Fig. 4), with standard errors from resampling whole games;
``ΔG(A1, A2, C) = L(A1, C) − L(A2, C)``.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import arena
from azdb_jax.skill import frameworks

Array = jax.Array
ValueModel = Callable[[Any, pgx.core.State], Array]

AGENTS = ("focal_senior", "focal_junior", "alter_senior", "alter_junior", "focal_team", "alter_team")
WIN_BANDS = ((0, 20), (20, 40), (40, 60), (60, 80), (80, 100))


@dataclasses.dataclass(frozen=True)
class FrameworkMatch:
    """Every game of a framework match, from the focal team's side."""

    framework: str
    games: arena.GameResults  # A = the focal team
    start: Any  # the start positions [G/2] (TagTeamState for STT), pair order
    summary: Dict[str, Any]


def summarize(results: arena.GameResults) -> Dict[str, Any]:
    """``arena.summarize`` (its tally carries the score's standard error, ``score_stderr``)."""
    return arena.summarize(results)


def play_match(framework: str, env: pgx.core.Env, focal, focal_params, alter, alter_params, rng_key: Array, *,
               num_games: int, max_plies: int, adjudicate=None,
               initial_state: Optional[pgx.core.State] = None) -> FrameworkMatch:
    """Plays ``num_games`` games of the focal team against the alter team in ``framework``.

    ``focal``/``alter`` are team policies of the framework (``agents.tag_team`` for STT,
    ``agents.hand_and_brain`` for HB, any policy for regular play) with their params.
    ``initial_state``: optional start positions of the plain game ``[G/2]`` (default
    ``env.init``); pair ``p``'s two games share its start and, in STT, its coins.
    """
    if framework not in frameworks.FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; valid: {', '.join(frameworks.FRAMEWORKS)}")
    half = num_games // 2
    if num_games < 2 or num_games % 2:
        raise ValueError(f"num_games must be an even int >= 2, got {num_games!r}")
    start_key, play_key = jax.random.split(rng_key)
    keys = jax.vmap(lambda p: jax.random.fold_in(start_key, p))(jnp.arange(half))
    game_env = env
    start = initial_state if initial_state is not None else jax.vmap(env.init)(keys)
    if framework == "stt":
        game_env = frameworks.StochasticTagTeam(env)
        coin_keys = jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys)
        start = jax.vmap(game_env.wrap)(start, coin_keys)
    program = jax.jit(lambda fp, ap, key, s: arena.play_games(
        game_env, focal, fp, alter, ap, key, num_games=num_games, max_plies=max_plies, initial_state=s,
        adjudicate=None if adjudicate is None else (lambda st: adjudicate(getattr(st, "game", st)))))
    games = jax.device_get(program(focal_params, alter_params, play_key, start))
    summary = summarize(games)
    summary["framework"] = framework
    return FrameworkMatch(framework=framework, games=games, start=jax.device_get(start), summary=summary)


def _replay_program(env: pgx.core.Env, value: ValueModel, max_plies: int):
    def replay(params, start, actions):
        def ply(state, action):
            done = state.terminated | state.truncated
            v = value(params, state)
            nxt = jax.vmap(env.step)(state, jnp.maximum(action, 0))
            return nxt, (v, state.current_player, done, nxt.terminated, nxt.rewards, action >= 0)

        _, out = jax.lax.scan(ply, start, actions.T)
        return out

    return jax.jit(replay)


def move_losses(match: FrameworkMatch, env: pgx.core.Env, value: ValueModel, value_params) -> Dict[str, np.ndarray]:
    """Every move of the match's games with its agent and win-probability loss.

    Returns flat arrays over moves: ``game`` (index), ``ply``, ``agent`` (index into
    ``AGENTS``: the senior/junior of the focal/alter team in STT; the team in HB and
    regular play), ``focal`` (the focal team moved), ``win_before`` (the mover's win
    probability before the move, 0-100) and ``loss`` (0-100).
    """
    games = match.games
    max_plies = games.actions.shape[1]
    start = match.start.game if match.framework == "stt" else match.start
    start = jax.tree.map(lambda x: np.concatenate([x, x], axis=0), start)
    values, mover, done, ended, rewards, played = (np.asarray(x) for x in _replay_program(env, value, max_plies)(
        value_params, start, jnp.asarray(games.actions)))
    # values [T, G] for the side to move before ply t; rewards [T, G, 2] after ply t.
    w_before = (1.0 + values) / 2.0
    after_value = np.concatenate([values[1:], values[-1:]], axis=0)  # the next mover's value
    mover_reward = np.take_along_axis(rewards, mover[..., None], axis=-1)[..., 0]
    w_after = np.where(ended, (1.0 + mover_reward) / 2.0, (1.0 - after_value) / 2.0)
    # A move at the last recorded ply with no position after it has no evaluation: drop it
    # unless it ended the game.
    valid = played & ~done & (ended | (np.arange(max_plies)[:, None] < max_plies - 1))
    loss = 100.0 * np.maximum(0.0, w_before - w_after)
    focal_first = np.asarray(games.a_first)  # [G]
    first_mover = np.asarray(start.current_player)  # [G]
    focal_seat = np.where(focal_first, first_mover, 1 - first_mover)
    focal_moved = mover == focal_seat[None, :]
    if match.framework == "stt":
        coin_keys = np.concatenate([match.start.coin_key] * 2, axis=0)
        senior = np.stack([frameworks.senior_moves(k, max_plies) for k in coin_keys], axis=1)  # [T, G]
        agent = np.where(focal_moved, np.where(senior, 0, 1), np.where(senior, 2, 3))
    else:
        agent = np.where(focal_moved, 4, 5)
    ply, game = np.nonzero(valid)
    return {"game": game, "ply": ply, "agent": agent[ply, game], "focal": focal_moved[ply, game],
            "win_before": 100.0 * w_before[ply, game], "loss": loss[ply, game]}


def _mean_and_se(loss: np.ndarray, game: np.ndarray, num_games: int, rng: np.random.Generator,
                 resamples: int) -> tuple:
    if loss.size == 0:
        return float("nan"), float("nan"), 0
    sums = np.bincount(game, weights=loss, minlength=num_games)
    counts = np.bincount(game, minlength=num_games).astype(np.float64)
    draws = rng.integers(0, num_games, size=(resamples, num_games))
    boot = sums[draws].sum(1) / np.maximum(counts[draws].sum(1), 1.0)
    return float(loss.mean()), float(boot.std(ddof=1)), int(loss.size)


def loss_table(moves: Dict[str, np.ndarray], *, num_games: int, bands: Sequence = WIN_BANDS, seed: int = 0,
               resamples: int = 500) -> List[Dict[str, Any]]:
    """``L(A, C)`` rows: for each agent with moves and each condition (``"*"``: all moves;
    ``"w in [lo, hi)"``: the mover's win probability before the move in that band), the
    mean loss, its standard error (games resampled with replacement) and the move count.
    Team rows (``focal_team``, ``alter_team``) pool their senior's and junior's moves."""
    rng = np.random.default_rng(seed)
    agent_ids = moves["agent"]
    team_of = np.where(moves["focal"], 4, 5)
    rows = []
    conditions = [("*", np.ones_like(moves["loss"], bool))]
    for lo, hi in bands:
        upper = moves["win_before"] <= hi if hi >= 100 else moves["win_before"] < hi
        conditions.append((f"w in [{lo}, {hi}{']' if hi >= 100 else ')'}", (moves["win_before"] >= lo) & upper))
    for index, name in enumerate(AGENTS):
        mine = (agent_ids == index) | (team_of == index)
        if not mine.any():
            continue
        for label, cond in conditions:
            take = mine & cond
            mean, se, count = _mean_and_se(moves["loss"][take], moves["game"][take], num_games, rng, resamples)
            rows.append({"agent": name, "condition": label, "loss": mean, "se": se, "moves": count})
    return rows


def delta(rows: List[Dict[str, Any]], first: str, second: str, condition: str = "*") -> Dict[str, float]:
    """``ΔG(first, second, C) = L(first, C) − L(second, C)`` with the two SEs combined in quadrature."""
    by = {(r["agent"], r["condition"]): r for r in rows}
    a, b = by[(first, condition)], by[(second, condition)]
    return {"delta": a["loss"] - b["loss"], "se": float(np.hypot(a["se"], b["se"]))}


__all__ = ["AGENTS", "FrameworkMatch", "WIN_BANDS", "delta", "loss_table", "move_losses", "play_match", "summarize"]
