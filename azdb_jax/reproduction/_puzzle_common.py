"""Puzzle loading, solving and scoring shared by the groups ``solve_rates``, ``scaling`` and ``selection``.

The groups' solver is ``solvers.TeamSolver``: with ``trials`` it reads every number of
trials off one search (the rules and max groups over the first ``k`` latents or copies),
given several teams it searches training seeds as one team (paper Fig. 5 right).

- ``puzzle_sets``: the puzzle sets of a scale's game (its record's ``puzzle_sets``),
  ``eval.puzzles_per_set`` puzzles each (Gardner chess: the engine-labelled sets of
  ``azdb_jax.data.gardner``; chess: the Lichess puzzles of the data folder);
- ``with_search``: a team with another budget, search algorithm or search mode;
- ``solve`` runs a solver on every set (``puzzles.run_lichess``: multi-step, the line is
  fixed, any mating move solves) and returns one row per (set, puzzle) with every
  column's and group's ``<column>_solved``;
- ``rate``: a solve rate with its standard error over puzzles (binomial, ``std/sqrt(N)``)
  and ``over_seeds``: the mean of per-seed rates with its standard error over seeds.
"""

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from azdb_jax import data, games, planning
from azdb_jax.agent import Agent
from azdb_jax.evaluation import puzzles
from azdb_jax.reproduction.results import stderr

SEED = 0
RULES = tuple(planning.SELECTION_RULES)  # visit, value, lcb, gap


# ------------------------------------------------------------------ puzzles


def set_names(game: str) -> Tuple[str, ...]:
    """The names of ``game``'s puzzle sets (its record's ``puzzle_sets``); ValueError for a
    game without puzzles."""
    sets = games.get(game).puzzle_sets
    if not sets:
        with_puzzles = [record.id for record in games.REGISTRY if record.puzzle_sets]
        raise ValueError(f"puzzle sets need {' or '.join(with_puzzles)}, got {game!r}")
    return sets


def puzzle_sets(game: str, count: int, names: Optional[Sequence[str]] = None) -> Dict[str, List[data.LichessPuzzle]]:
    """``{set: the first count puzzles}`` (``count`` 0: all) of ``game``'s sets (or ``names``)."""
    sets = set_names(game)
    out = {}
    for name in names or sets:
        if name not in sets:
            raise ValueError(f"unknown {game} puzzle set {name!r}; sets: {', '.join(sets)}")
        records = list(games.get(game).load_puzzles(name))
        out[name] = records[:count] if count else records
    return out


# ------------------------------------------------------------------ the team


def with_search(team: Agent, *, num_simulations: Optional[int] = None, algorithm: Optional[str] = None,
                extrinsic_only: Optional[bool] = None) -> Agent:
    """``team`` with another budget, search algorithm (``puct``/``gumbel``) or search mode."""
    if num_simulations is not None:
        team = team.with_simulations(int(num_simulations))
    if algorithm is not None:
        team = dataclasses.replace(team, search_config=dataclasses.replace(team.search_config, algorithm=algorithm))
    if extrinsic_only is not None:
        team = team.as_extrinsic_only(extrinsic_only)
    return team


# ------------------------------------------------------------------ running and scoring


def solve(solver, sets: Mapping[str, Sequence[data.LichessPuzzle]], *, labels: Mapping[str, Any],
          batch_size: Optional[int] = None) -> List[Dict[str, Any]]:
    """Rows of ``solver`` on every set: ``labels``, ``set``, the puzzle's fields and
    ``<column>_solved`` / ``<column>_failed_step`` / ``<column>_moves`` for every column and group."""
    rows = []
    for name, records in sets.items():
        report = puzzles.run_lichess(records, solver, batch_size=batch_size, progress=False, by_theme=False)
        for record, row in zip(records, report.rows):
            rows.append({**labels, "set": name, "fen": record.fen, "line": " ".join(record.moves), **row})
    return rows


def flags(rows: Sequence[Mapping[str, Any]], column: str, **where: Any) -> np.ndarray:
    """``<column>_solved`` (0/1) of the rows matching ``where``, in row order."""
    return np.array([float(r[f"{column}_solved"]) for r in rows if all(r.get(k) == v for k, v in where.items())])


def rate(solved) -> Dict[str, Any]:
    """``{"rate", "stderr", "count"}`` of 0/1 flags; the standard error is over puzzles."""
    solved = np.asarray(solved, float)
    return {"rate": float(solved.mean()) if solved.size else float("nan"), "stderr": stderr(solved),
            "count": int(solved.size), "stderr_over": "puzzles"}


def over_seeds(per_run: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """The mean of per-run rates; its standard error over seeds when there are several runs,
    else the one run's (over puzzles)."""
    rates = [r["rate"] for r in per_run]
    if len(per_run) > 1:
        return {"rate": float(np.mean(rates)), "stderr": stderr(rates), "count": per_run[0]["count"],
                "stderr_over": "seeds", "per_run": rates}
    return {**per_run[0], "per_run": rates}


def pooled(rows: Sequence[Mapping[str, Any]], column: str, **where: Any) -> Dict[str, Any]:
    """``rate`` of ``column`` over every set of the rows matching ``where``."""
    return rate(flags(rows, column, **where))


__all__ = ["SEED", "RULES", "set_names", "puzzle_sets", "with_search", "solve", "flags", "stderr", "rate",
           "over_seeds", "pooled"]
