"""Figure group ``openings`` (paper Fig. 3): each player's move in opening positions, and
how many different moves a team's players choose, AZdb against its homogeneous control.

- Boards: ``eval.openings`` opening positions (a game with an ECO openings table, the
  record's ``eco_openings`` — chess —: its openings, ``A00`` excluded, evenly spaced;
  another game — Gardner chess —: the start position, then distinct positions after
  1..``OPENING_PLIES`` uniformly random plies from it with a fixed seed), and
  every player's LCB move in each (``solvers.TeamSolver``, as ``evaluation.openings``:
  the paper's Fig. 3 choice), for the ``azdb`` and ``control`` teams.
- Distinct moves: every player's most-visited move on ``eval.positions`` random positions
  (``move_choices.team_move_choices``, 0..``POSITION_PLIES`` random plies from the start;
  the same positions for both arms), the number of
  distinct moves per position, its mean and standard error, and the paired difference
  AZdb − control (over seeds when the scale has several).

Rows: ``kind = "opening"`` (a board: FEN and every player's UCI move) and ``kind =
"position"`` (a random position: every player's action id and the distinct count).
"""

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import jax
import numpy as np

from azdb_jax import data, games
from azdb_jax.evaluation import loading, move_choices, puzzles, solvers
from azdb_jax.reproduction.results import Results, RunInfo, stderr

ARMS = ("azdb", "control")
SEED = 0
OPENING_PLIES = 4
POSITION_PLIES = 6
EXCLUDED_ECO = ("A00",)


def random_openings(game: str, count: int, *, seed: int = SEED,
                    max_plies: int = OPENING_PLIES) -> List[Tuple[str, str]]:
    """``count`` distinct positions ``(label, FEN)`` of ``game`` (a game with boards): the
    start, then positions after 1..``max_plies`` uniformly random legal plies from it (a
    numpy generator seeded ``seed``)."""
    new_board = games.board_game(game).new_board
    rng = np.random.default_rng(seed)
    found = {new_board(None).fen(): "start"}
    for _ in range(50 * count):
        if len(found) >= count:
            break
        board = new_board(None)
        for _ in range(int(rng.integers(1, max_plies + 1))):
            moves = list(board.legal_moves)
            if not moves or board.is_checkmate():
                break
            board.push(moves[int(rng.integers(len(moves)))])
        if board.legal_moves and not board.is_checkmate():
            found.setdefault(board.fen(), f"random, ply {board.ply()}: " + " ".join(m.uci() for m in board.move_stack))
    return [(label, fen) for fen, label in found.items()]


def eco_openings(game: str, count: int) -> List[Tuple[str, str]]:
    """``count`` ECO openings ``(ECO name, FEN)`` of ``game``'s openings table (its record's
    ``eco_openings``), evenly spaced."""
    openings = list(data.load_openings(data.data_path(*games.get(game).eco_openings), exclude=EXCLUDED_ECO))
    picks = np.unique(np.linspace(0, len(openings) - 1, min(count, len(openings))).round().astype(int))
    return [(f"{openings[i].eco} {openings[i].name}", openings[i].fen) for i in picks]


def opening_positions(game: str, count: int) -> List[Tuple[str, str]]:
    """The group's opening positions ``(label, FEN)`` for ``game``: ECO openings where the
    game has an openings table, else positions after random plies."""
    if game not in games.BOARD_IDS:
        raise ValueError(f"opening positions need {' or '.join(games.BOARD_IDS)}, got {game!r}")
    if games.get(game).eco_openings is not None:
        return eco_openings(game, count)
    return random_openings(game, count)


def _boards(game: str, fens: Sequence[str]):
    return [games.board_game(game).new_board(f) for f in fens]


def evaluate_run(results: Results, run: RunInfo, openings: Sequence[Tuple[str, str]],
                 programs: Optional[Dict[str, Dict[Any, Any]]] = None) -> Dict[str, Any]:
    """LCB moves of every player of ``run`` at ``openings`` and its move choices on random
    positions. ``programs``: compiled programs kept per configuration (``RunInfo.configuration``),
    so that the runs of one arm's seeds share them."""
    return evaluate_runs(results, [run], openings, programs, batch_members=False)[0]


def evaluate_runs(results: Results, runs: Sequence[RunInfo], openings: Sequence[Tuple[str, str]],
                  programs: Optional[Dict[str, Dict[Any, Any]]] = None, *,
                  batch_members: Optional[bool] = None) -> List[Dict[str, Any]]:
    """``evaluate_run`` of several runs of one configuration (one arm's seeds).

    ``batch_members``: search all runs' teams as members of one program (``jax.vmap`` over
    their parameters and ψ: ``TeamSolver(batch_members=)``,
    ``move_choices.members_move_choices``) instead of one run after another; the same
    moves either way. Default (None): on off a CPU, where members run side by side.
    """
    if len({run.configuration for run in runs}) > 1:
        raise ValueError(f"evaluate_runs: {[run.name for run in runs]} are not runs of one configuration")
    sizes = results.scale.eval
    teams = [loading.load_team(run.workdir, num_simulations=sizes.simulations) for run in runs]
    if batch_members is None:
        batch_members = len(runs) > 1 and jax.default_backend() != "cpu"
    kept = ({} if programs is None else programs).setdefault(runs[0].configuration, {"solver": {}, "choices": {}})
    boards = _boards(results.scale.game, [fen for _, fen in openings])
    solve = lambda group, **kw: solvers.TeamSolver(  # noqa: E731
        group, rules=(), move="lcb", homogeneous_copies=0, batch_size=min(len(boards), 16), seed=SEED,
        programs=kept["solver"], **kw)
    key = jax.random.PRNGKey(SEED)
    if batch_members:
        solver = solve(teams, batch_members=True)
        answers = puzzles.ask(solver, boards, progress=False)
        moves = [[[answers.moves[solver.columns[i]][b] for i, (s, _) in enumerate(solver.members) if s == k]
                  for b in range(len(boards))] for k in range(len(teams))]
        choices = move_choices.members_move_choices(teams, num_positions=sizes.positions, rng_key=key,
                                                    max_plies=POSITION_PLIES, programs=kept["choices"])
    else:
        moves, choices = [], []
        for team in teams:
            answers = puzzles.ask(solve(team), boards, progress=False)
            moves.append([[answers.moves[f"player_{j}"][b] for j in range(team.num_players)]
                          for b in range(len(boards))])
            choices.append(move_choices.team_move_choices(team, num_positions=sizes.positions, rng_key=key,
                                                          max_plies=POSITION_PLIES, programs=kept["choices"]))
    return [_run_report(run, team, openings, m, c) for run, team, m, c in zip(runs, teams, moves, choices)]


def _run_report(run: RunInfo, team, openings: Sequence[Tuple[str, str]], moves: List[List[str]],
                choices: move_choices.MoveChoices) -> Dict[str, Any]:
    """A run's rows and summary from its players' opening moves and move choices."""
    rows: List[Dict[str, Any]] = []
    for b, ((label, fen), row) in enumerate(zip(openings, moves)):
        rows.append({"kind": "opening", "arm": run.arm, "run": run.name, "index": b, "label": label, "fen": fen,
                     **{f"player_{j}": uci for j, uci in enumerate(row)}, "distinct": len(set(row))})
    for p in range(choices.moves.shape[1]):
        rows.append({"kind": "position", "arm": run.arm, "run": run.name, "index": p,
                     **{f"player_{j}": int(choices.moves[j, p]) for j in range(team.num_players)},
                     "distinct": int(choices.distinct[p])})
    counts = np.asarray(choices.distinct)
    summary = {
        "run": run.name, "seed": run.seed, "step": team.step, "num_players": team.num_players,
        "search_lambdas": [float(x) for x in team.search_lambdas],
        "opening_moves": moves, "opening_distinct": [len(set(row)) for row in moves],
        "positions": int(counts.size), "distinct_mean": float(counts.mean()), "distinct_stderr": stderr(counts),
        "histogram": {k: int(np.sum(counts == k)) for k in range(1, team.num_players + 1)},
        "share_positions_with_disagreement": float((counts > 1).mean()),
        "unique_share": choices.unique_share, "disagreement": choices.disagreement,
    }
    return {"summary": summary, "rows": rows, "distinct": counts}


def evaluate(results: Results, *, batch_members: Optional[bool] = None) -> dict:
    """Evaluates the group into ``results`` (``eval/openings.json|csv``); returns the report.
    ``batch_members``: each arm's runs of one configuration as members of one program
    (``evaluate_runs``; default: off a CPU)."""
    start = time.perf_counter()
    sizes = results.scale.eval
    openings = opening_positions(results.scale.game, sizes.openings)
    arms: Dict[str, Dict[str, Any]] = {}
    distinct: Dict[str, List[np.ndarray]] = {}
    rows, names = [], []
    programs: Dict[str, Dict[Any, Any]] = {}
    for arm in ARMS:
        found = results.runs(arm)
        if not found:
            results.first_run(arm)  # ResultsError saying how to train it
        per_run = []
        distinct[arm] = []
        configurations: Dict[str, List[RunInfo]] = {}
        for run in found:
            configurations.setdefault(run.configuration, []).append(run)
        outs = {run.name: out for group in configurations.values()
                for run, out in zip(group, evaluate_runs(results, group, openings, programs,
                                                         batch_members=batch_members))}
        for run in found:
            out = outs[run.name]
            per_run.append(out["summary"])
            distinct[arm].append(out["distinct"])
            rows += out["rows"]
            names.append(run.name)
        means = [r["distinct_mean"] for r in per_run]
        arms[arm] = {"runs": per_run, "distinct_mean": float(np.mean(means)),
                     "distinct_stderr": stderr(means) if len(per_run) > 1 else per_run[0]["distinct_stderr"],
                     "stderr_over": "seeds" if len(per_run) > 1 else "positions"}
    pairs = min(len(distinct["azdb"]), len(distinct["control"]))
    if pairs > 1:  # seed k of one arm against seed k of the other
        gaps = [float(np.mean(distinct["azdb"][k] - distinct["control"][k])) for k in range(pairs)]
        difference, difference_se, over = float(np.mean(gaps)), stderr(gaps), "seeds"
    else:  # the same positions for both arms: paired over positions
        gaps = distinct["azdb"][0] - distinct["control"][0]
        difference, difference_se, over = float(np.mean(gaps)), stderr(gaps), "positions (paired)"
    summary = {
        "game": results.scale.game, "openings": [{"label": label, "fen": fen} for label, fen in openings],
        "opening_move": "lcb", "positions_move": "visits", "positions": sizes.positions,
        "position_max_plies": POSITION_PLIES, "num_simulations": sizes.simulations, "seed": SEED,
        "arms": arms,
        "members_batched": jax.default_backend() != "cpu" if batch_members is None else bool(batch_members),
        "distinct_difference": difference, "distinct_difference_stderr": difference_se,
        "difference_stderr_over": over,
    }
    results.write_report("openings", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("openings")


__all__ = ["ARMS", "evaluate", "evaluate_run", "evaluate_runs", "opening_positions", "random_openings",
           "eco_openings", "stderr"]
