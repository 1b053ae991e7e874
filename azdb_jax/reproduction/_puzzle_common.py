"""Puzzle loading, solving and scoring shared by the groups ``solve_rates``, ``scaling`` and ``selection``.

- ``puzzle_sets``: the puzzle sets of a scale's game (its record's ``puzzle_sets``),
  ``eval.puzzles_per_set`` puzzles each (Gardner chess: the engine-labelled sets of
  ``azdb_jax.data.gardner``; chess: the Lichess puzzles of the data folder);
- ``TrialsSolver``: a team as a puzzle solver that reads *every number of trials* off one
  search: each position is searched once per latent (``planning.team_search``) and once
  per homogeneous copy of latent 0 (``planning.homogeneous_search``), and the columns
  apply the selection rules to the first ``k`` latents (or copies) for each ``k`` of
  ``trials``. Its randomness is ``solvers.TeamSolver``'s (the position's key folded from
  the seed and the FEN, split into the team's and the control's), so its player and copy
  columns are the ``TeamSolver``'s at the same seed and number of copies;
- ``SeedsSolver``: several training runs as one team (each run's latents as players,
  the selection rules over all of them; paper Fig. 5 right);
- ``solve`` runs a solver on every set (``puzzles.run_lichess``: multi-step, the line is
  fixed, any mating move solves) and returns one row per (set, puzzle) with every
  column's and group's ``<column>_solved``;
- ``rate``: a solve rate with its standard error over puzzles (binomial, ``std/sqrt(N)``)
  and ``over_seeds``: the mean of per-seed rates with its standard error over seeds.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import data, games, planning
from azdb_jax.evaluation import puzzles, solvers
from azdb_jax.evaluation.team import SolverOutput, Team
from azdb_jax.reproduction.results import stderr

SEED = 0
RULES = tuple(planning.SELECTION_RULES)  # visit, value, lcb, gap
# How one player picks its move (the max-over-latents "rules" of Fig. 8): most visited,
# highest Q over visited moves, highest Q − U over visited moves.
PLAYER_MOVES = ("visits", "value", "lcb")


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


# ------------------------------------------------------------------ the solver


def player_column(j: int, move: str = "visits") -> str:
    return f"player_{j}" if move == "visits" else f"player_{j}_{move}"


def copy_column(c: int) -> str:
    return f"copy_{c}"


def rule_column(rule: str, k: int, *, copies: bool = False) -> str:
    return f"{'copies' if copies else 'latents'}_{k}_{rule}"


def max_group(k: int, *, copies: bool = False, move: str = "visits") -> str:
    return f"{'copies' if copies else 'latents'}_{k}_max" + ("" if move == "visits" else f"_{move}")


def _value_action(q):
    """``argmax_a Q(s, a)`` over visited moves (``q`` is -inf elsewhere) for one player [A]."""
    return jnp.argmax(q).astype(jnp.int32)


class TrialsSolver:
    """Every player, and every selection rule over the first ``k`` players, from one search.

    Args:
      team: a chess or Gardner chess team (searches as the team says: self-play or extrinsic-only).
      trials: the numbers of latents (and of copies) the rules and max groups take, each in
        1..n for latents (a larger ``k`` gets no latent columns).
      rules: selection rules of ``planning.SELECTION_RULES``; the rule's player plays its
        most-visited move.
      moves: per-player moves besides ``visits`` get their own player columns and max
        groups (``value``, ``lcb``).
      copies: searches of latent 0 for the homogeneous control (0: none); columns
        ``copy_<c>``, rules ``copies_<k>_<rule>``, groups ``copies_<k>_max``.
      batch_size, seed: as ``solvers.TeamSolver``.

    Columns: ``player_<j>`` (most visited), ``player_<j>_<move>``, ``latents_<k>_<rule>``,
    ``copy_<c>``, ``copies_<k>_<rule>``. Groups (solved if any member solved it):
    ``latents_<k>_max[_<move>]`` = players 0..k-1, ``copies_<k>_max`` = copies 0..k-1.
    """

    def __init__(self, team: Team, *, trials: Sequence[int], rules: Sequence[str] = RULES,
                 moves: Sequence[str] = ("visits",), copies: int = 0, batch_size: int = 16, seed: int = SEED):
        self._game = games.board_game(team.env)
        for rule in rules:
            planning.get_rule(rule)
        for move in moves:
            if move not in PLAYER_MOVES:
                raise ValueError(f"moves must be among {PLAYER_MOVES}, got {move!r}")
        if any(int(k) < 1 for k in trials):
            raise ValueError(f"trials must be >= 1, got {tuple(trials)}")
        n = team.num_players
        self.team = team
        self.rules = tuple(rules)
        self.moves = ("visits",) + tuple(m for m in moves if m != "visits")
        self.copies = int(copies)
        self.latent_trials = tuple(sorted({int(k) for k in trials if int(k) <= n}))
        self.copy_trials = tuple(sorted({int(k) for k in trials if int(k) <= self.copies}))
        self.batch_size = batch_size
        self.seed = int(seed)
        columns = [player_column(j, m) for m in self.moves for j in range(n)]
        columns += [rule_column(r, k) for k in self.latent_trials for r in self.rules]
        columns += [copy_column(c) for c in range(self.copies)]
        columns += [rule_column(r, k, copies=True) for k in self.copy_trials for r in self.rules]
        self.columns: Tuple[str, ...] = tuple(columns)
        groups = {max_group(k, move=m): tuple(player_column(j, m) for j in range(k))
                  for m in self.moves for k in self.latent_trials}
        groups.update({max_group(k, copies=True): tuple(copy_column(c) for c in range(k)) for k in self.copy_trials})
        self.groups: Dict[str, Tuple[str, ...]] = groups
        self._programs: Dict[int, Callable] = {}

    def _program(self, max_pieces: int) -> Callable:
        if max_pieces in self._programs:
            return self._programs[max_pieces]
        team = solvers.team_for_pieces(self.team, max_pieces)
        rules, copies, latent_trials, copy_trials = self.rules, self.copies, self.latent_trials, self.copy_trials

        def answers(searched: planning.TeamSearch, prefix: str, trials) -> Dict[str, Any]:
            stats = searched.stats
            out = {f"{prefix}_visits": searched.most_visited_action[0], f"{prefix}_lcb": searched.lcb_action[0],
                   f"{prefix}_value": jax.vmap(_value_action)(stats.q[0]), f"{prefix}_v": stats.value[0]}
            for k in trials:
                sub = jax.tree.map(lambda x, k=k: x[:, :k], stats)
                for rule in rules:
                    player, action = planning.team_move(sub, rule)
                    out[f"{prefix}_{k}_{rule}"] = jnp.stack([action[0].astype(jnp.float32),
                                                             planning.solved_by(sub.value, player)[0]])
            return out

        def one_position(params, key, state):
            single = jax.tree.map(lambda x: x[None], state)
            team_key, control_key = jax.random.split(key)  # as solvers.TeamSolver
            searched = team.search(params, team_key, single)
            out = answers(searched, "latents", latent_trials)
            if copies:
                control = planning.homogeneous_search(team.env, team.apply_fn, params, control_key, single,
                                                      num_copies=copies, config=team.search_config)
                out.update(answers(control, "copies", copy_trials))
            return out

        program = solvers.per_position_program(one_position)
        self._programs[max_pieces] = program
        return program

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        return solvers.solve_in_batches(self._solve_batch, self.columns, boards, self.batch_size)

    def _solve_batch(self, boards: List[chess.Board]) -> Tuple[Dict[str, List[str]], Dict[str, List[float]]]:
        batch = solvers.prepare_batch(self._game, boards, self.batch_size, self.team.env)
        out = jax.device_get(self._program(batch.max_pieces)(self.team.params, jax.random.PRNGKey(self.seed),
                                                             batch.indices, batch.states))
        columns: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}
        for j in range(self.team.num_players):
            for m in self.moves:
                columns[player_column(j, m)] = out[f"latents_{m}"][:, j], out["latents_v"][:, j]
        for k in self.latent_trials:
            for r in self.rules:
                both = out[f"latents_{k}_{r}"]
                columns[rule_column(r, k)] = both[:, 0].astype(np.int64), both[:, 1]
        for c in range(self.copies):
            columns[copy_column(c)] = out["copies_visits"][:, c], out["copies_v"][:, c]
        for k in self.copy_trials:
            for r in self.rules:
                both = out[f"copies_{k}_{r}"]
                columns[rule_column(r, k, copies=True)] = both[:, 0].astype(np.int64), both[:, 1]
        return solvers.batch_answers(self._game, batch, columns, self.columns)


class SeedsSolver:
    """Several training runs as one team (paper Fig. 5 right): every latent of every run is a player.

    Each run searches each position as ``solvers.TeamSolver`` does (same key), so column
    ``seed_<s>_player_<j>`` is that run's ``player_<j>``; the selection rules then read the
    root statistics of all runs' players together (``team_<rule>``: the chosen player's
    most-visited move), and ``max_over_seeds`` is solved if any player of any run solved it.

    Args:
      teams: the runs' teams (same game and action space).
      players: how many latents of each run take part (default each run's all).
      rules, batch_size, seed: as ``TrialsSolver``.
    """

    def __init__(self, teams: Sequence[Team], *, players: Optional[int] = None, rules: Sequence[str] = RULES,
                 batch_size: int = 16, seed: int = SEED):
        if not teams:
            raise ValueError("SeedsSolver needs at least one team")
        self._game = games.board_game(teams[0].env)
        for rule in rules:
            planning.get_rule(rule)
        self.teams = list(teams)
        self.players = [t.num_players if players is None else min(int(players), t.num_players) for t in teams]
        self.rules = tuple(rules)
        self.batch_size = batch_size
        self.seed = int(seed)
        members = tuple(f"seed_{s}_player_{j}" for s, n in enumerate(self.players) for j in range(n))
        self.columns: Tuple[str, ...] = members + tuple(f"team_{r}" for r in self.rules)
        self.groups: Dict[str, Tuple[str, ...]] = {"max_over_seeds": members}
        self._programs: Dict[Tuple[int, int], Callable] = {}
        self._choose = jax.jit(lambda stats, rule: planning.team_move(stats, rule), static_argnums=1)

    def _program(self, s: int, max_pieces: int) -> Callable:
        if (s, max_pieces) in self._programs:
            return self._programs[(s, max_pieces)]
        team = solvers.team_for_pieces(self.teams[s], max_pieces)
        players = jnp.arange(self.players[s], dtype=jnp.int32)

        def one_position(params, key, state):
            single = jax.tree.map(lambda x: x[None], state)
            team_key, _ = jax.random.split(key)  # as solvers.TeamSolver
            searched = team.search(params, team_key, single, players=players)
            return jax.tree.map(lambda x: x[0], searched.stats), searched.most_visited_action[0]

        program = solvers.per_position_program(one_position)
        self._programs[(s, max_pieces)] = program
        return program

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        return solvers.solve_in_batches(self._solve_batch, self.columns, boards, self.batch_size)

    def _solve_batch(self, boards: List[chess.Board]) -> Tuple[Dict[str, List[str]], Dict[str, List[float]]]:
        batch = solvers.prepare_batch(self._game, boards, self.batch_size, self.teams[0].env)
        parts = [self._program(s, batch.max_pieces)(t.params, jax.random.PRNGKey(self.seed), batch.indices,
                                                    batch.states)
                 for s, t in enumerate(self.teams)]
        stats = jax.tree.map(lambda *xs: jnp.concatenate(xs, axis=1), *[p[0] for p in parts])  # [B, P, ...]
        actions = np.concatenate([np.asarray(p[1]) for p in parts], axis=1)  # [B, P]
        player_values = np.asarray(stats.value)
        columns = {c: (actions[:, m], player_values[:, m]) for m, c in enumerate(self.groups["max_over_seeds"])}
        for rule in self.rules:
            chosen, action = jax.device_get(self._choose(stats, rule))
            columns[f"team_{rule}"] = action, player_values[np.arange(len(chosen)), chosen]
        return solvers.batch_answers(self._game, batch, columns, self.columns)


def with_search(team: Team, *, num_simulations: Optional[int] = None, algorithm: Optional[str] = None,
                extrinsic_only: Optional[bool] = None) -> Team:
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


__all__ = ["SEED", "RULES", "PLAYER_MOVES", "set_names", "puzzle_sets", "TrialsSolver",
           "SeedsSolver",
           "player_column", "copy_column", "rule_column", "max_group", "with_search", "solve", "flags", "stderr",
           "rate", "over_seeds", "pooled"]
