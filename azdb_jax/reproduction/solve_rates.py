"""Figure group ``solve_rates`` (paper Fig. 5, 16, 17): solve rate per puzzle set.

Every trained run of ``az``, ``azdb`` and ``control`` answers the puzzle sets of the
scale's game (Gardner chess: the engine-labelled ``mate_in_1``, ``mate_in_2``,
``mate_in_3`` and ``only_move`` sets, ``eval.puzzles_per_set`` each; chess: the Lichess
puzzles) with ``eval.simulations`` simulations through ``solvers.TeamSolver``: each
player searches as in self-play (its λ_i and intrinsic reward) and the columns are

- each player's most-visited move (``player_<j>``; AZ has one player);
- the team under every selection rule of ``planning`` (``team_<rule>``, sub-additive
  planning; the paper's default is ``gap``);
- ``max_over_latents``: solved if any player solved the puzzle on its own;
- for AZdb, the homogeneous control: latent 0 searched n times with root noise
  (``homogeneous_<c>``, ``homogeneous_max``);

and the reference engine (Fairy-Stockfish on Gardner chess, Stockfish on chess) at
``eval.engine_nodes`` nodes per move (Fig. 16, 17). Multi-step puzzles follow the fixed
line (``puzzles.run_lichess``): a column must find every solver move, any mating move
solves. With several training seeds, every rate is the mean over seeds with its
standard error over seeds, and ``across_seeds`` holds the paper's Fig. 5 (right):
player 0, max over latents and every selection rule taken across the seeds, as if each
seed's players were one team (``solvers.TeamSolver`` given every seed's team; rows ``arm = az_seeds``
and ``azdb_seeds``; AZ contributes each seed's one player, AZdb every latent).

Note: on multi-step puzzles a selection rule may pick different players at different
steps, so it can solve a puzzle no single player solves; max over latents bounds every
rule on one-move puzzles (``mate_in_1``, ``only_move``).

Rows: one per (run or engine, set, puzzle) with ``<column>_solved`` (0/1),
``<column>_failed_step`` and ``<column>_moves`` for every column.
"""

import itertools
import time
from typing import Any, Dict, List, Optional, Sequence

import jax
import numpy as np

from azdb_jax import games
from azdb_jax.evaluation import loading, members_solver, solvers
from azdb_jax.reproduction import _puzzle_common as common
from azdb_jax.reproduction.results import Results

ARMS = ("az", "azdb", "control")
SEED = common.SEED
ENGINE = "engine"
DEFAULT_RULE = "gap"  # the paper's rule unless stated otherwise (§4.3)
ALL = "all"  # every set pooled


def bars(num_players: int, rules: Sequence[str] = common.RULES) -> List[Dict[str, str]]:
    """The bars of Fig. 5 in order: ``key``, ``arm``, ``column`` (of that arm's rows), ``label``."""
    out = [{"key": "az", "arm": "az", "column": "player_0", "label": "AZ"}]
    out += [{"key": f"azdb_player_{j}", "arm": "azdb", "column": f"player_{j}", "label": f"AZdb player {j}"}
            for j in range(num_players)]
    out += [{"key": f"azdb_{r}", "arm": "azdb", "column": f"team_{r}", "label": f"AZdb sub-additive ({r})"}
            for r in rules]
    out += [{"key": "azdb_max", "arm": "azdb", "column": solvers.MAX_OVER_LATENTS, "label": "AZdb max over latents"},
            {"key": "azdb_homogeneous_max", "arm": "azdb", "column": solvers.HOMOGENEOUS_MAX,
             "label": f"AZdb latent 0 x {num_players} searches, max"},
            {"key": "control_player_0", "arm": "control", "column": "player_0", "label": "control player 0"},
            {"key": f"control_{DEFAULT_RULE}", "arm": "control", "column": f"team_{DEFAULT_RULE}",
             "label": f"control sub-additive ({DEFAULT_RULE})"},
            {"key": "control_max", "arm": "control", "column": solvers.MAX_OVER_LATENTS,
             "label": "control max over latents"}]
    return out


def _engine_solver(game: str, nodes: int):
    if games.board_game(game).reference_engine == "fairy_stockfish":
        from azdb_jax.evaluation import fairy_stockfish  # pylint: disable=g-import-not-at-top
        return fairy_stockfish.FairyStockfishSolver(nodes=nodes, name="fairy_stockfish")
    from azdb_jax.evaluation import stockfish  # pylint: disable=g-import-not-at-top
    return stockfish.StockfishSolver(nodes=nodes, name="stockfish")


def _rates(rows: List[Dict[str, Any]], arm: str, column: str, runs: Sequence[str], sets: Sequence[str]
           ) -> Dict[str, Any]:
    out = {}
    for name in list(sets) + [ALL]:
        where = {} if name == ALL else {"set": name}
        out[name] = common.over_seeds([common.rate(common.flags(rows, column, arm=arm, run=r, **where))
                                       for r in runs])
    return out


def _across_seeds(rows: List[Dict[str, Any]], arm: str, column: str, runs: Sequence[str], sets: Sequence[str]
                  ) -> Dict[str, Any]:
    """Solved if ``column`` solved the puzzle in any of the runs (the runs as players)."""
    out = {}
    for name in list(sets) + [ALL]:
        where = {} if name == ALL else {"set": name}
        stacked = np.stack([common.flags(rows, column, arm=arm, run=r, **where) for r in runs])
        out[name] = common.rate(stacked.max(axis=0))
    return out


def evaluate(results: Results, *, batch_members: Optional[bool] = None) -> dict:
    """Evaluates the group into ``results`` (``eval/solve_rates.json|csv``); returns the report.

    ``batch_members``: an arm's runs of one configuration (its seeds) answer as members of
    one program (``members_solver.MembersSolver``: every run's players, rules and homogeneous
    control, one call per batch for all runs) rather than one run after another; the same
    rows either way. Default (None): off a CPU, where the members run side by side."""
    start = time.perf_counter()
    batched = jax.default_backend() != "cpu" if batch_members is None else bool(batch_members)
    sizes = results.scale.eval
    game = results.scale.game
    sets = common.puzzle_sets(game, sizes.puzzles_per_set)
    rows: List[Dict[str, Any]] = []
    names: List[str] = []
    runs_of: Dict[str, List[str]] = {}
    num_players, search = 1, None
    teams: Dict[str, list] = {}
    programs: Dict[str, Dict[Any, Any]] = {}  # per configuration: its seeds share the compiled searches
    for arm in ARMS:
        found = results.runs(arm)
        if not found:
            results.first_run(arm)  # ResultsError saying how to train it
        runs_of[arm] = []
        # The arm's consecutive runs of one configuration answer together (its seeds).
        for _, group in itertools.groupby(found, key=lambda run: run.configuration):
            group = list(group)
            group_teams = [loading.load_team(run.workdir, num_simulations=sizes.simulations) for run in group]
            team = group_teams[0]
            options = dict(rules=common.RULES if team.num_players > 1 else (),
                           homogeneous_copies=team.num_players if arm == "azdb" else 0, batch_size=16, seed=SEED,
                           programs=programs.setdefault(group[0].configuration, {}))
            labels = [{"arm": arm, "run": run.name, "seed": run.seed, "step": t.step, "search": t.search_mode}
                      for run, t in zip(group, group_teams)]
            if batched and len(group) > 1:
                solver = members_solver.MembersSolver(group_teams, batch_members=True, **options)
                joint = common.solve(solver, sets, labels={})
                rows += [{**labels[k], **solver.split(row, k)} for k in range(len(group)) for row in joint]
            else:
                for t, run_labels in zip(group_teams, labels):
                    rows += common.solve(solvers.TeamSolver(t, **options), sets, labels=run_labels)
            for run, t in zip(group, group_teams):
                runs_of[arm].append(run.name)
                names.append(run.name)
                teams.setdefault(arm, []).append(t)
                if arm == "azdb":
                    num_players, search = t.num_players, t.search_description()
    several = all(len(teams.get(arm, ())) > 1 for arm in ("az", "azdb"))
    for arm, players in (("az", 1), ("azdb", None)):  # Fig. 5 right: the seeds as one team
        if several:
            solver = solvers.TeamSolver(teams[arm], players=players, rules=common.RULES, seed=SEED)
            rows += common.solve(solver, sets, labels={"arm": f"{arm}_seeds", "run": "+".join(runs_of[arm]),
                                                       "seed": None, "step": None, "search": "selfplay"})
    engine = _engine_solver(game, sizes.engine_nodes)
    try:
        engine_name = engine.engine_name
        rows += common.solve(engine, sets, labels={"arm": ENGINE, "run": engine_name, "seed": None, "step": None,
                                                   "search": f"nodes={sizes.engine_nodes}"}, batch_size=16)
    finally:
        engine.close()
    engine_column = engine.columns[0]
    layout = bars(num_players)
    layout.append({"key": ENGINE, "arm": ENGINE, "column": engine_column,
                   "label": f"{engine_name} ({sizes.engine_nodes} nodes)"})
    runs_of[ENGINE] = [engine_name]
    rates = {bar["key"]: _rates(rows, bar["arm"], bar["column"], runs_of[bar["arm"]], list(sets)) for bar in layout}
    across = None
    if several:
        across = {"az_player_0": _across_seeds(rows, "az", "player_0", runs_of["az"], list(sets)),
                  "azdb_player_0": _across_seeds(rows, "azdb", "player_0", runs_of["azdb"], list(sets)),
                  "azdb_max": _across_seeds(rows, "azdb", solvers.MAX_OVER_LATENTS, runs_of["azdb"], list(sets)),
                  "note": ("max: solved if any training seed solved it (player 0, or any latent of any seed); "
                           "rules: the seeds' players as one team")}
        for arm in ("az", "azdb"):
            team_run = ["+".join(runs_of[arm])]
            for rule in common.RULES:
                across[f"{arm}_{rule}"] = _rates(rows, f"{arm}_seeds", f"team_{rule}", team_run, list(sets))
            across[f"{arm}_max_over_seeds"] = _rates(rows, f"{arm}_seeds", "max_over_seeds", team_run, list(sets))
    summary = {
        "game": game, "sets": list(sets), "set_sizes": {k: len(v) for k, v in sets.items()},
        "num_simulations": sizes.simulations, "seed": SEED, "rules": list(common.RULES), "default_rule": DEFAULT_RULE,
        "num_players": num_players, "azdb_search": search,
        "engine": engine_name, "engine_column": engine_column, "engine_nodes": sizes.engine_nodes,
        "runs": runs_of, "bars": layout, "rates": rates, "across_seeds": across,
        "stderr_over": "seeds" if len(runs_of["azdb"]) > 1 else "puzzles", "members_batched": batched,
        "note": ("multi-step puzzles follow the fixed line; a rule may switch players between steps, so max over "
                 "latents bounds the rules on one-move sets (mate_in_1, only_move)"),
    }
    results.write_report("solve_rates", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("solve_rates")


__all__ = ["ARMS", "ALL", "DEFAULT_RULE", "ENGINE", "bars", "evaluate"]
