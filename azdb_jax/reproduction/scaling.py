"""Figure group ``scaling`` (paper Fig. 7): solve rate vs simulations x number of latents tried.

Every trained ``azdb`` run answers every puzzle set of the scale's game (pooled, as the
paper pools its Lichess puzzles) with each budget of ``eval.scaling_simulations``. One
search per position and latent (``solvers.TeamSolver`` with ``trials``) gives, for each number
of trials ``k`` of ``eval.trials``:

- ``max``: max over the first ``k`` latents (solved if any of them solved it; Fig. 7 top);
- ``lcb``: sub-additive planning over the first ``k`` latents with the LCB rule (the
  paper's rule for Fig. 7 bottom);

each for two teams: ``latents`` (players 0..k-1, the diverse team, solid lines) and
``copies`` (latent 0 searched k times with different search randomness, the homogeneous
team, dashed lines in Fig. 7 (4)). With several training seeds, ``training_seeds``
adds max over the first ``k`` seeds' player 0 (the seeds as players), and ``az_seeds``
the same over the ``az`` arm's runs: ``k`` separately trained AZ networks as a team (the
paper's other control, at ``k`` times the training).

Tables are ``[trials][simulations]``. Relative gains are ``100 (rate_k / rate_1 − 1)``
(the paper's footnote: each row over the first); their standard errors come from a
paired bootstrap over puzzles (one seed) or over seeds (several).
Rows: one per (run, simulations, set, puzzle) with every column's ``<column>_solved``.
"""

import time
from typing import Any, Dict, List, Sequence

import numpy as np

from azdb_jax.evaluation import loading, solvers
from azdb_jax.reproduction import _puzzle_common as common
from azdb_jax.reproduction.results import Results

ARMS = ("azdb",)
SEED = common.SEED
RULE = "lcb"  # Fig. 7 bottom: sub-additive planning with the LCB rule
KINDS = ("max", RULE)
TEAMS = ("latents", "copies")
BOOTSTRAP = 500


def column(kind: str, k: int, team: str) -> str:
    """The solver column (or group) of ``kind`` over the first ``k`` members of ``team``."""
    copies = team == "copies"
    return solvers.max_group(k, copies=copies) if kind == "max" else solvers.rule_column(kind, k, copies=copies)


def relative_gain(rate_k: float, rate_1: float) -> float:
    """``100 (rate_k / rate_1 − 1)``; NaN when ``rate_1`` is 0."""
    return 100.0 * (rate_k / rate_1 - 1.0) if rate_1 > 0 else float("nan")


def _bootstrap_gain(flags_k: np.ndarray, flags_1: np.ndarray, rng: np.random.Generator) -> float:
    """Standard error of the relative gain, resampling puzzles (paired)."""
    if flags_k.size < 2:
        return float("nan")
    picks = rng.integers(0, flags_k.size, (BOOTSTRAP, flags_k.size))
    base = flags_1[picks].mean(axis=1)
    gains = np.where(base > 0, 100.0 * (flags_k[picks].mean(axis=1) / np.where(base > 0, base, 1.0) - 1.0), np.nan)
    finite = gains[np.isfinite(gains)]
    return float(np.std(finite, ddof=1)) if finite.size > 1 else float("nan")


def tables(rows: Sequence[Dict[str, Any]], runs: Sequence[str], simulations: Sequence[int], trials: Sequence[int],
           columns: Dict[int, str], rng: np.random.Generator) -> Dict[str, Any]:
    """Rates and relative gains ``[trials][simulations]`` of ``columns[k]`` (pooled over sets)."""
    rate = np.full((len(trials), len(simulations)), np.nan)
    se = np.full_like(rate, np.nan)
    gain = np.full_like(rate, np.nan)
    gain_se = np.full_like(rate, np.nan)
    for s, sims in enumerate(simulations):
        per_run = {k: [common.flags(rows, columns[k], run=r, simulations=sims) for r in runs]
                   for k in trials if k in columns}
        for t, k in enumerate(trials):
            if k not in per_run:
                continue
            out = common.over_seeds([common.rate(f) for f in per_run[k]])
            rate[t, s], se[t, s] = out["rate"], out["stderr"]
            first = per_run[trials[0]]
            gains = [relative_gain(f.mean(), g.mean()) for f, g in zip(per_run[k], first)]
            gain[t, s] = float(np.mean(gains))
            gain_se[t, s] = (common.stderr(gains) if len(runs) > 1
                             else _bootstrap_gain(per_run[k][0], first[0], rng))
    return {"rate": rate, "stderr": se, "relative_gain": gain, "relative_gain_stderr": gain_se,
            "trials": [k for k in trials if k in columns]}


def _seeds_table(rows: Sequence[Dict[str, Any]], names: Sequence[str], simulations: Sequence[int],
                 trials: Sequence[int]) -> Dict[str, Any]:
    """Solve rate of max over the first k runs' player 0 (``[trials][simulations]``), its
    standard error over puzzles and the gain over the first run; trials past the runs are NaN."""
    table = {"rate": np.full((len(trials), len(simulations)), np.nan)}
    table["stderr"] = np.full_like(table["rate"], np.nan)
    table["relative_gain"] = np.full_like(table["rate"], np.nan)
    for s, sims in enumerate(simulations):
        stacked = np.stack([common.flags(rows, "player_0", run=r, simulations=sims) for r in names])
        for t, k in enumerate(trials):
            if k <= len(names):
                solved = common.rate(stacked[:k].max(axis=0))
                table["rate"][t, s], table["stderr"][t, s] = solved["rate"], solved["stderr"]
                table["relative_gain"][t, s] = relative_gain(solved["rate"], stacked[0].mean())
    table["trials"] = [k for k in trials if k <= len(names)]
    return table


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/scaling.json|csv``); returns the report."""
    start = time.perf_counter()
    sizes = results.scale.eval
    game = results.scale.game
    sets = common.puzzle_sets(game, sizes.puzzles_per_set)
    simulations = [int(s) for s in sizes.scaling_simulations]
    trials = sorted({int(k) for k in sizes.trials})
    found = results.runs("azdb")
    if not found:
        results.first_run("azdb")  # ResultsError saying how to train it
    rows: List[Dict[str, Any]] = []
    names, num_players, search = [], None, None
    for run in found:
        base = loading.load_team(run.workdir)
        num_players, search = base.num_players, base.search_description()
        for sims in simulations:
            team = common.with_search(base, num_simulations=sims)
            solver = solvers.TeamSolver(team, trials=trials, rules=(RULE,), homogeneous_copies=max(trials),
                                         seed=SEED)
            rows += common.solve(solver, sets, labels={"arm": "azdb", "run": run.name, "seed": run.seed,
                                                       "step": team.step, "simulations": sims,
                                                       "search": team.search_mode})
        names.append(run.name)
    rng = np.random.default_rng(SEED)
    out: Dict[str, Any] = {}
    for kind in KINDS:
        for team_kind in TEAMS:
            limit = num_players if team_kind == "latents" else max(trials)
            columns = {k: column(kind, k, team_kind) for k in trials if k <= limit}
            out[f"{kind}/{team_kind}"] = tables(rows, names, simulations, trials, columns, rng)
    # Max over the first k training seeds' player 0, as if each seed were a player: AZdb's
    # seeds, and the AZ runs' seeds (k separately trained AZ networks as a team, k times the training).
    seeds_table = _seeds_table(rows, names, simulations, trials) if len(names) > 1 else None
    az_names = []
    az_runs = results.runs("az") if "az" in results.scale.arms else []
    for run in az_runs if len(az_runs) > 1 else []:  # one AZ seed is no team
        base = loading.load_team(run.workdir)
        for sims in simulations:
            team = common.with_search(base, num_simulations=sims)
            solver = solvers.TeamSolver(team, trials=(1,), rules=(RULE,), homogeneous_copies=0, seed=SEED)
            rows += common.solve(solver, sets, labels={"arm": "az", "run": run.name, "seed": run.seed,
                                                       "step": team.step, "simulations": sims,
                                                       "search": team.search_mode})
        az_names.append(run.name)
    az_seeds_table = _seeds_table(rows, az_names, simulations, trials) if len(az_names) > 1 else None
    summary = {
        "game": game, "sets": list(sets), "set_sizes": {k: len(v) for k, v in sets.items()},
        "num_puzzles": sum(len(v) for v in sets.values()), "simulations": simulations, "trials": trials,
        "rule": RULE, "kinds": list(KINDS), "teams": list(TEAMS), "num_players": num_players, "seed": SEED,
        "search": search, "runs": names, "tables": out, "training_seeds": seeds_table,
        "az_runs": az_names, "az_seeds": az_seeds_table,
        "stderr_over": "seeds" if len(names) > 1 else "puzzles (relative gains: paired bootstrap)",
        "bootstrap": BOOTSTRAP,
    }
    results.write_report("scaling", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("scaling")


__all__ = ["ARMS", "KINDS", "RULE", "TEAMS", "column", "evaluate", "relative_gain", "tables"]
