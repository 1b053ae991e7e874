"""Figure group ``selection`` (paper Fig. 8): selection rules x search type x number of trials.

Every trained ``azdb`` run answers every puzzle set of the scale's game (pooled) with
``eval.simulations`` simulations under four *search types*: the search algorithm
(``puct``: AlphaZero's PUCT; ``gumbel``: Gumbel MuZero's, the search config's
``algorithm``) crossed with what the players search for (``selfplay``: each player its
own λ_i and intrinsic reward, the paper's solid lines; ``extrinsic_only``: λ = 1 for all,
the paper's dashed lines). For each number of trials ``k`` of ``eval.trials``
(``solvers.TeamSolver`` with ``trials``, one search per position and latent):

- ``sub_additive[search type][rule][k]``: the team over players 0..k-1 under each
  selection rule of ``planning`` (visit, value, lcb, gap; Fig. 8 bottom), the chosen
  player playing its most-visited move;
- ``max_over_latents[search type][move][k]``: solved if any of players 0..k-1 solved it
  playing its most-visited (``visits``), highest-Q (``value``) or LCB (``lcb``) move
  (Fig. 8 top: the rule decides each player's move).

With one trial every rule plays player 0. Standard errors over seeds when the scale has
several, else over puzzles. Rows: one per (run, search type, set, puzzle).
"""

import time
from typing import Any, Dict, List

from azdb_jax.evaluation import loading, solvers
from azdb_jax.reproduction import _puzzle_common as common
from azdb_jax.reproduction.results import Results

ARMS = ("azdb",)
SEED = common.SEED
ALGORITHMS = ("puct", "gumbel")
SEARCH_MODES = ("selfplay", "extrinsic_only")
RULES = common.RULES
MOVES = solvers.PLAYER_MOVES


def search_types():
    """``(name, algorithm, mode)`` of every search type, ``name = "<algorithm>/<mode>"``."""
    return [(f"{a}/{m}", a, m) for a in ALGORITHMS for m in SEARCH_MODES]


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/selection.json|csv``); returns the report."""
    start = time.perf_counter()
    sizes = results.scale.eval
    game = results.scale.game
    sets = common.puzzle_sets(game, sizes.puzzles_per_set)
    trials = sorted({int(k) for k in sizes.trials})
    found = results.runs("azdb")
    if not found:
        results.first_run("azdb")  # ResultsError saying how to train it
    rows: List[Dict[str, Any]] = []
    names, num_players, lambdas, trained_algorithm = [], None, None, None
    for run in found:
        base = loading.load_team(run.workdir, num_simulations=sizes.simulations)
        num_players, trained_algorithm = base.num_players, base.search_config.algorithm
        lambdas = [float(x) for x in base.search_lambdas]
        for name, algorithm, mode in search_types():
            team = common.with_search(base, algorithm=algorithm, extrinsic_only=mode == "extrinsic_only")
            solver = solvers.TeamSolver(team, trials=trials, rules=RULES, moves=MOVES, homogeneous_copies=0,
                                         seed=SEED)
            rows += common.solve(solver, sets, labels={"arm": "azdb", "run": run.name, "seed": run.seed,
                                                       "step": team.step, "search_type": name,
                                                       "algorithm": algorithm, "search": team.search_mode})
        names.append(run.name)
    latent_trials = [k for k in trials if k <= num_players]

    def rates(col: str, name: str) -> Dict[str, Any]:
        return common.over_seeds([common.pooled(rows, col, run=r, search_type=name) for r in names])

    sub_additive, max_over = {}, {}
    for name, _, _ in search_types():
        sub_additive[name] = {rule: {str(k): rates(solvers.rule_column(rule, k), name) for k in latent_trials}
                              for rule in RULES}
        max_over[name] = {move: {str(k): rates(solvers.max_group(k, move=move), name) for k in latent_trials}
                          for move in MOVES}
    summary = {
        "game": game, "sets": list(sets), "set_sizes": {k: len(v) for k, v in sets.items()},
        "num_puzzles": sum(len(v) for v in sets.values()), "num_simulations": sizes.simulations,
        "trials": latent_trials, "rules": list(RULES), "moves": list(MOVES),
        "search_types": [name for name, _, _ in search_types()], "algorithms": list(ALGORITHMS),
        "search_modes": list(SEARCH_MODES), "trained_algorithm": trained_algorithm,
        "selfplay_lambdas": lambdas, "num_players": num_players, "seed": SEED, "runs": names,
        "sub_additive": sub_additive, "max_over_latents": max_over,
        "stderr_over": "seeds" if len(names) > 1 else "puzzles",
    }
    results.write_report("selection", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("selection")


__all__ = ["ALGORITHMS", "ARMS", "MOVES", "RULES", "SEARCH_MODES", "evaluate", "search_types"]
