"""Figure group ``occupancy`` (paper Fig. 2, 18, 19): where each player's pieces stand.

Every player of every trained ``azdb`` and ``control`` run plays ``eval.occupancy_games``
games against itself (``evaluation.occupancy``: its own search, sampled first plies),
and the piece-occupancy planes of the positions after its moves are averaged per colour
it played. The report holds, per run, the occupancy ``[n, 2, 12, size, size]`` (share of
positions; White's P N B R Q K then Black's), the castling rights on chess (Gardner chess
has none) and the ψ spread: the mean pairwise L2 distance between the players' pooled ψ,
with its standard error (bootstrap over games for one seed, over seeds for several).
The control's spread is the yardstick: finitely many games separate identical players too.

In self-play a player's positions as White and as Black come from the same games, one
half-move apart, so its two colour rows nearly agree; ``trained_occupancy`` adds the ψ the
run itself kept per colour over its training matchups (PSRO opponents), where the colours
differ as in the paper's Fig. 18.
Rows: one per game (its moves as action ids), so every number can be recomputed.
"""

import pathlib
import time
from typing import Any, Dict, List, Optional

import jax
import numpy as np

from azdb_jax import games, runs
from azdb_jax.evaluation import loading
from azdb_jax.evaluation import occupancy as occupancy_lib
from azdb_jax.reproduction.results import Results, RunInfo, stderr

ARMS = ("azdb", "control")
SEED = 0
NO_CASTLING_NOTE = "Gardner chess has no castling: there are no castling rights to show"


def _even(count: int) -> int:
    return max(2, count + count % 2)


def evaluate_run(results: Results, run: RunInfo) -> Dict[str, Any]:
    """Self-play occupancy of every player of ``run``: ``{"summary": per-run numbers, "rows": games}``."""
    sizes = results.scale.eval
    config = runs.load_run_config(run.workdir)
    team = loading.load_team(run.workdir, num_simulations=sizes.simulations)
    env_id = team.env.id
    num_games = _even(sizes.occupancy_games)
    sample_plies = int(config.selfplay.sample_plies)
    play = occupancy_lib.selfplay_program(team, num_games=num_games, max_plies=sizes.max_plies,
                                          sample_plies=sample_plies)
    key = jax.random.PRNGKey(SEED)
    per_player, rows = {}, []
    for player in range(team.num_players):
        games = play(player, jax.random.fold_in(key, player))
        per_player[player] = occupancy_lib.game_features(team.env, games.actions)
        for g in range(num_games):
            rows.append({"arm": run.arm, "run": run.name, "player": player, "game": g,
                         "plies": int(games.length[g]), "finished": bool(games.finished[g]),
                         "white_result": float(games.result[g]) if games.finished[g] else None,
                         "moves": " ".join(str(int(a)) for a in games.actions[g, :games.length[g]])})
    occupancy = np.stack([occupancy_lib.occupancy(per_player[i].sums, per_player[i].counts)
                          for i in range(team.num_players)])  # [n, 2, F]
    split = occupancy_lib.split_features(env_id, occupancy)
    spread = occupancy_lib.spread_with_stderr(per_player, np.random.default_rng(SEED))
    trained = None if team.psi is None else occupancy_lib.mean_pairwise_distance(team.psi)
    trained_split = trained_occupancy(run.workdir, team.step, env_id)
    lengths = np.array([[r["plies"] for r in rows if r["player"] == i] for i in range(team.num_players)])
    summary = {
        "run": run.name, "seed": run.seed, "step": team.step, "num_players": team.num_players,
        "search_lambdas": [float(x) for x in team.search_lambdas],
        "occupancy": split["planes"],
        "castling": split["castling"],
        "positions": np.stack([per_player[i].counts.sum(axis=0) for i in range(team.num_players)]),
        "mean_game_length": lengths.mean(axis=1),
        "psi_spread": spread["spread"], "psi_spread_stderr": spread["stderr"],
        "psi_spread_by_colour": [occupancy_lib.mean_pairwise_distance(occupancy[:, c]) for c in range(2)],
        "trained_psi_spread": trained,
        "trained_occupancy": None if trained_split is None else trained_split["planes"],
        "trained_castling": None if trained_split is None else trained_split["castling"],
    }
    return {"summary": summary, "rows": rows}


def trained_occupancy(workdir, step, env_id: str) -> Optional[Dict[str, Any]]:
    """The run's own ψ split by colour at checkpoint ``step`` (``psi/psi_<step>.npz``: the
    moving average training kept over each player's moves in its matchups), as
    ``split_features`` planes and castling; NaN for a colour a player never played; None
    when the run saved no ψ for that step."""
    path = pathlib.Path(workdir) / "psi" / f"psi_{int(step):07d}.npz"
    if step is None or not path.is_file():
        return None
    with np.load(path) as saved:
        psi = np.asarray(saved["psi_by_colour"], np.float64)  # [n, 2, F]
        played = np.asarray(saved["initialised_by_colour"], bool)  # [n, 2]
    return occupancy_lib.split_features(env_id, np.where(played[..., None], psi, np.nan))


def _arm_summary(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The arm's ψ spread: its one run's (bootstrap SE), or the mean over seeds (SE over seeds)."""
    spreads = np.array([r["psi_spread"] for r in runs], float)
    if len(runs) > 1:
        error, over = stderr(spreads), "seeds"
    else:
        error, over = float(runs[0]["psi_spread_stderr"]), "games (bootstrap)"
    return {"runs": runs, "psi_spread": float(spreads.mean()), "psi_spread_stderr": error, "stderr_over": over}


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/occupancy.json|csv``); returns the report."""
    start = time.perf_counter()
    sizes = results.scale.eval
    game = results.scale.game
    arms, rows, names = {}, [], []
    for arm in ARMS:
        found = results.runs(arm)
        if not found:
            results.first_run(arm)  # ResultsError saying how to train it
        per_run = []
        for run in found:
            out = evaluate_run(results, run)
            per_run.append(out["summary"])
            rows += out["rows"]
            names.append(run.name)
        arms[arm] = _arm_summary(per_run)
    start_split = occupancy_lib.split_features(game, occupancy_lib.start_features(games.make(game)))
    difference = arms["azdb"]["psi_spread"] - arms["control"]["psi_spread"]
    summary = {
        "game": game, "board_size": occupancy_lib.board_size(game), "pieces": list(occupancy_lib.PIECES),
        "colours": list(occupancy_lib.COLOURS),
        "castling_names": list(occupancy_lib.CASTLING) if start_split["castling"] is not None else None,
        "castling_note": None if start_split["castling"] is not None else NO_CASTLING_NOTE,
        "units": "share of the positions after the player's moves as that colour (x100: %)",
        "start_planes": start_split["planes"],
        "games_per_player": _even(sizes.occupancy_games), "max_plies": sizes.max_plies,
        "num_simulations": sizes.simulations, "seed": SEED,
        "arms": arms,
        "psi_spread_difference": difference,
        "psi_spread_difference_stderr": float(np.hypot(arms["azdb"]["psi_spread_stderr"],
                                                       arms["control"]["psi_spread_stderr"])),
    }
    results.write_report("occupancy", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("occupancy")


__all__ = ["ARMS", "evaluate", "evaluate_run", "trained_occupancy"]
