"""The opening-specialisation lookup team (paper Appendix C.5, Figs. 21-22).

Every team player plays the opponent from every start, both colours, every seed
(``matches.play_match``). Pair (seed ``s``, start ``i``) plays with the key
``fold_in(fold_in(rng_key, s), i)`` and nothing else, so a game's course does not
depend on which *player* of the team sits on A's side: the players' games line up
cell by cell (opening, colour, seed), and the lookup is exact and cheap. A table built
on the training seeds picks, per (opening, colour), the player with the best mean
score; the lookup team's game at a held-out seed *is* the game its chosen player
played there. Scored beside it: each player alone, the best of them, and the
max-over-latents oracle (per game the best result any player got).
"""

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import arena
from azdb_jax.agent import Agent
from azdb_jax.evaluation import matches
from azdb_jax.policies import Policy

Array = jax.Array


def result_grid(match: matches.MatchResult, num_starts: int, seeds: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """(result, finished) [P, 2, S] of a match: start, A's turn (0: A first), seed."""
    seeds = list(seeds)
    result = np.zeros((num_starts, 2, len(seeds)))
    finished = np.zeros((num_starts, 2, len(seeds)), bool)
    filled = np.zeros_like(finished)
    where = {s: k for k, s in enumerate(seeds)}
    for g in range(match.num_games):
        cell = (int(match.start_index[g]), 0 if match.a_first[g] else 1, where[int(match.seed[g])])
        result[cell], finished[cell], filled[cell] = match.result[g], match.finished[g], True
    if not filled.all():
        raise ValueError("the match does not cover every (start, colour, seed) once")
    return result, finished


def game_scores(result: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """Per-game score for choosing players: W 1, D ½, L 0, and ½ for an unfinished game."""
    return np.where(finished, (np.asarray(result) + 1.0) / 2.0, 0.5)


LOOKUP_RULES = ("best", "gap")


def lookup_table(result: np.ndarray, finished: np.ndarray, rule: str = "best") -> np.ndarray:
    """The player chosen per (opening, colour) from its mean score over the given seeds.

    ``result``/``finished`` [n, P, 2, S] (player, opening, team's turn, seed); returns [P, 2]
    int. ``rule``:

    - ``"best"`` (Appendix C.5 as written): the player with the best mean score; ties go
      to the lowest player index.
    - ``"gap"``: Eq. 9's GAP rule read over these scores. The gap G of a cell is the largest
      standard error of its players' mean scores over the seeds; the candidates are the
      players within G of the best mean, and the one with the *lowest* mean among them
      is chosen (ties: lowest index). As GAP does with search values, it guards against
      picking a player whose best mean is luck. With one seed G = 0 and it is ``"best"``.
    """
    if rule not in LOOKUP_RULES:
        raise ValueError(f"unknown lookup rule {rule!r}; known: {', '.join(LOOKUP_RULES)}")
    scores = game_scores(result, finished)
    means = scores.mean(axis=-1)  # [n, P, 2]
    if rule == "best":
        return np.argmax(means, axis=0)
    num_seeds = scores.shape[-1]
    spread = scores.std(axis=-1, ddof=1) / np.sqrt(num_seeds) if num_seeds > 1 else np.zeros_like(means)
    gap = spread.max(axis=0)  # [P, 2]
    candidate = means >= means.max(axis=0) - gap - 1e-12
    return np.argmin(np.where(candidate, means, np.inf), axis=0)


def leave_one_seed_out(result: np.ndarray, finished: np.ndarray, rule: str = "best"
                       ) -> Tuple[np.ndarray, np.ndarray, List[List[List[int]]]]:
    """The lookup team's games with each seed scored by the table of the other seeds
    (Appendix C.5, Fig. 22): (result, finished) [P, 2, S] and the S tables [S][P][2].

    ``result``/``finished`` [n, P, 2, S] every player's games; needs S >= 2.
    """
    num_seeds = result.shape[-1]
    if num_seeds < 2:
        raise ValueError(f"leaving a seed out needs at least 2 seeds, got {num_seeds}")
    out_r, out_f = np.zeros(result.shape[1:]), np.zeros(result.shape[1:], bool)
    tables = []
    for k in range(num_seeds):
        others = [s for s in range(num_seeds) if s != k]
        table = lookup_table(result[..., others], finished[..., others], rule)
        tables.append(table.tolist())
        r, f = chosen_games(result[..., k:k + 1], finished[..., k:k + 1], table)
        out_r[..., k], out_f[..., k] = r[..., 0], f[..., 0]
    return out_r, out_f, tables


def chosen_games(result: np.ndarray, finished: np.ndarray, table: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The games the table's player played: (result, finished) [P, 2, S] from [n, P, 2, S]."""
    index = np.broadcast_to(table[None, :, :, None], (1,) + result.shape[1:])
    return np.take_along_axis(result, index, 0)[0], np.take_along_axis(finished, index, 0)[0]


def max_over_latents_games(result: np.ndarray, finished: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per game the best result any player got: (result, finished) [...] from [n, ...].

    A game counts as unfinished only when no player finished it.
    """
    best = np.max(np.where(finished, result, -np.inf), axis=0)
    done = finished.any(axis=0)
    return np.where(done, best, 0.0), done


def specialisation_report(result: np.ndarray, finished: np.ndarray, train: Sequence[int],
                          heldout: Sequence[int]) -> Dict[str, Any]:
    """Opening-specialisation lookup (paper Appendix C.5, Figs. 21-22) from per-player games.

    Args:
      result, finished: [n, P, 2, S] every player's game per (opening, team's turn, seed).
      train, heldout: disjoint index lists into the seed axis.

    Returns a dict of tallies (``arena.tally``):
      ``lookup``: the table built on ``train`` seeds (``table`` [P, 2]) scored on ``heldout``;
      ``per_player`` [n] and ``best_latent`` (the best of them, with ``player``) and
      ``max_over_latents`` on ``heldout``: the reference lines of Fig. 21;
      ``leave_one_seed_out`` over all seeds (each seed scored with the table of the others,
      Fig. 22; None with a single seed), with ``per_player`` and ``max_over_latents`` on
      all seeds beside it;
      ``per_player_by_turn`` [n] {"first", "second"}: each player's record over all seeds
      with A moving first / second (as White / Black from White-to-move starts, Table 3);
      ``opening_scores`` [n][P][2]: each player's mean game score (W 1, D ½, L 0) per
      opening and turn over all seeds (Figs. 6 and 23).
    """
    train, heldout = list(train), list(heldout)
    if not train or not heldout or set(train) & set(heldout):
        raise ValueError(f"need disjoint, non-empty training and held-out seeds, got {train} and {heldout}")
    n = result.shape[0]
    table = lookup_table(result[..., train], finished[..., train])
    held_r, held_f = result[..., heldout], finished[..., heldout]
    per_player = [arena.tally(held_r[j], held_f[j]) for j in range(n)]
    best = int(np.argmax([p["score"] if np.isfinite(p["score"]) else -1.0 for p in per_player]))
    report = {
        "num_players": n, "train_seeds": len(train), "heldout_seeds": len(heldout),
        "table": table.tolist(),
        "lookup": arena.tally(*chosen_games(held_r, held_f, table)),
        "per_player": per_player,
        "best_latent": dict(per_player[best], player=best),
        "max_over_latents": arena.tally(*max_over_latents_games(held_r, held_f)),
    }
    num_seeds = result.shape[-1]
    if num_seeds > 1:
        loso_r, loso_f, _ = leave_one_seed_out(result, finished)
        report["leave_one_seed_out"] = {
            "lookup": arena.tally(loso_r, loso_f),
            "per_player": [arena.tally(result[j], finished[j]) for j in range(n)],
            "max_over_latents": arena.tally(*max_over_latents_games(result, finished)),
        }
    else:
        report["leave_one_seed_out"] = None
    # Over every seed: each player's record by turn (paper Table 3: as White / as Black when
    # the starts have White to move) and its mean score per opening and turn (Figs. 6, 23).
    report["per_player_by_turn"] = [{turn: arena.tally(result[j][:, k], finished[j][:, k])
                                     for k, turn in enumerate(("first", "second"))} for j in range(n)]
    report["opening_scores"] = game_scores(result, finished).mean(axis=-1).tolist()  # [n][P][2]
    return report


@dataclasses.dataclass(frozen=True)
class SpecialisationResult:
    """Every team player's match against the opponent, and the lookup built from them."""

    per_player: List[matches.MatchResult]  # [n] player j's games, all seeds
    lookup: matches.MatchResult  # the lookup team's games on the held-out seeds (a_player set)
    report: Dict[str, Any]  # ``specialisation_report``


def play_specialisation(
    env: pgx.core.Env,
    team: Agent,
    opponent: Policy,
    opponent_params: Any,
    *,
    starts: Optional[pgx.core.State] = None,
    train_seeds: Sequence[int],
    heldout_seeds: Sequence[int],
    max_plies: int,
    batch_pairs: int = 32,
    rng_key: Optional[Array] = None,
    opponent_name: str = "B",
    sample_plies: int = 0,
    progress: bool = False,
) -> SpecialisationResult:
    """The opening-specialisation lookup team against ``opponent`` (paper Appendix C.5).

    Each team player plays the opponent from every start, both colours, every seed
    (training and held-out) with the same pair keys, so the lookup team's game at a
    held-out (opening, colour, seed) is exactly its chosen player's game there.
    ``sample_plies``: the first plies sampled ∝ visits (``Agent.player_policy``).
    """
    train, heldout = list(train_seeds), list(heldout_seeds)
    seeds = matches.check_seeds(train + heldout)
    agent = team.latent_policy(sample_plies=sample_plies)
    per_player = []
    for player in range(team.num_players):
        per_player.append(matches.play_match(
            env, agent, (team.params, jnp.int32(player)), opponent, opponent_params, starts=starts, seeds=seeds,
            max_plies=max_plies, batch_pairs=batch_pairs, rng_key=rng_key,
            names=(f"{team.name}/player{player}", opponent_name), a_player=player, progress=progress))
    num_starts = 1 if starts is None else int(starts.current_player.shape[0])
    grids = [result_grid(m, num_starts, seeds) for m in per_player]
    result, finished = np.stack([g[0] for g in grids]), np.stack([g[1] for g in grids])
    train_idx, heldout_idx = list(range(len(train))), list(range(len(train), len(seeds)))
    report = specialisation_report(result, finished, train_idx, heldout_idx)
    table = np.asarray(report["table"])
    base = per_player[0]
    held = np.isin(base.seed, heldout)
    chosen = table[base.start_index, np.where(base.a_first, 0, 1)]
    pick = lambda field: np.stack([getattr(m, field) for m in per_player])[chosen, np.arange(base.num_games)]
    lookup = dataclasses.replace(
        base, names=(f"{team.name}/lookup", opponent_name), result=pick("result"), finished=pick("finished"),
        length=pick("length"), actions=pick("actions"), a_player=chosen).select(held)
    return SpecialisationResult(per_player=per_player, lookup=lookup, report=report)


__all__ = [
    "LOOKUP_RULES", "SpecialisationResult", "result_grid", "game_scores", "lookup_table", "leave_one_seed_out",
    "chosen_games", "max_over_latents_games", "specialisation_report", "play_specialisation",
]
