"""Figure group ``puzzle_starts`` (paper Table 1, Fig. 4, 20): self-play from puzzle positions.

Arms: ``az`` (AlphaZero) and AlphaZero starting half its self-play games from puzzle
positions: ``az_starts_random`` and ``az_starts_ood`` (a random and an out-of-distribution
split of the puzzles, rows 3 and 4), ``az_starts`` (every puzzle, row 2) and, each adding
one thing to the one before, ``az_starts_intermediate``, ``az_starts_exploration`` and
``az_starts_halfmove`` (rows 5-7; ``reproduction.scales``; a scale without them leaves
those rows out). The puzzle sets are the splits the runs trained with, read from each
run's own config through ``start_positions.load_start_positions`` (the function its
training used), so a held-out set is exactly the puzzles the run's training excluded:

- ``random_heldout``: the ``test_count`` puzzles the random split holds out (Table 1 row 3);
- ``ood_heldout``: the held-out group ``scale.heldout_group`` of the OOD split (row 4);
- ``random_train`` / ``ood_train``: puzzles the two split runs started self-play from;
- ``all_train``: every puzzle, the set ``az_starts`` (and rows 5-7) started from (rows 1,
  2, 5-7, as the paper scores them on the sets they trained from).

Each set is cut to ``eval.puzzles_per_set`` puzzles (a seeded sample, source order kept;
0: all) and every arm's network (player 0 searched alone by ``solvers.TeamSolver``,
``eval.simulations`` simulations, its most visited move) solves every set: multi-step
puzzles as on Lichess (``puzzles.run_lichess``: every solver move must be right; a mating
move always is), the paper's value puzzles by value (``puzzles.run_value_puzzles``,
tolerance ``VALUE_TOLERANCE``). Solve rates come with their standard error over puzzles
(over seeds when an arm has several), and with the share of the set's puzzles that arm
trained from (0 for a held-out set). Each Table 1 row
also carries its difference from AZ on the same puzzles (``vs_az``) and, for rows 5-7, from
the row before it (``vs_previous``): paired over puzzles with one seed, over seeds with
several (``paired_difference``).

Fig. 4, 20: for a few puzzle positions (``bar_positions``) every legal move with the
prior ``p(s, a)`` of each arm of ``BAR_ARMS``, raw value ``v`` of the position after the
move (for the side to move: minus the network's value there; the result if the move ends
the game), the search's ``Q(s, a)`` and visits (``TeamSolver.move_bars``), and whether the
move is correct (the puzzle's move, or any mate).

Rows: ``kind = "puzzle"`` (one per arm, run, set and puzzle: solved, the moves played)
and ``kind = "move"`` (one per arm of ``BAR_ARMS``, run, bar position and legal move).
"""

import dataclasses
import json
import pathlib
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from azdb_jax import data, games, runs
from azdb_jax import start_positions as start_positions_lib
from azdb_jax.evaluation import loading, puzzles, solvers
from azdb_jax.reproduction import scales
from azdb_jax.reproduction.results import Results, RunInfo, stderr

ARMS = ("az", "az_starts_random", "az_starts_ood", "az_starts", *scales.TABLE1_LOWER)
BAR_ARMS = ("az", "az_starts_random", "az_starts_ood")  # Fig. 4, 20
STARTS_ARMS = {"random": "az_starts_random", "ood": "az_starts_ood", "all": "az_starts"}  # split -> its arm
SETS = ("random_heldout", "ood_heldout", "random_train", "ood_train", "all_train")
SEED = 0
VALUE_TOLERANCE = puzzles.DEFAULT_THRESHOLDS[0]
# Rows 5-7 each add one thing to the row before: the arm a row is compared with besides AZ.
_CHAIN = ("az_starts", *scales.TABLE1_LOWER)
PREVIOUS_ROW = dict(zip(_CHAIN[1:], _CHAIN[:-1]))
# Table 1 rows: (label, arm, set)
TABLE1 = (("(1) AZ, random split's test set", "az", "random_heldout"),
          ("(1) AZ, OOD held-out group", "az", "ood_heldout"),
          ("(1) AZ, every puzzle", "az", "all_train"),
          ("(2) self-play from puzzles", "az_starts", "all_train"),
          ("(3) in distribution (random split, held out)", "az_starts_random", "random_heldout"),
          ("(4) out of distribution (held-out group)", "az_starts_ood", "ood_heldout"),
          ("(5) + intermediate positions", "az_starts_intermediate", "all_train"),
          ("(6) + exploration", "az_starts_exploration", "all_train"),
          ("(7) + half-move clock", "az_starts_halfmove", "all_train"))


def puzzle_key(record: start_positions_lib.PuzzleRecord) -> str:
    """``<file stem>:<puzzle id>``: a puzzle's name across the sets."""
    return f"{pathlib.Path(record.path).stem}:{record.puzzle_id}"


def split_of(run: RunInfo, env_id: str) -> start_positions_lib.StartPositionSet:
    """The run's train/test split, recomputed by ``start_positions.load_start_positions``
    from the run's own ``start_positions`` config."""
    config = runs.load_run_config(run.workdir)
    if not config.start_positions.sources:
        raise ValueError(f"{run.workdir}: the run trained from no start positions")
    return start_positions_lib.load_start_positions(env_id, config.start_positions)


def subset(records: Sequence[Any], count: int, *, seed: int = SEED) -> List[Any]:
    """``count`` of ``records`` drawn without replacement (numpy generator ``seed``), in their
    order; all of them when ``count`` is 0 or at least their number."""
    if not count or count >= len(records):
        return list(records)
    keep = np.sort(np.random.default_rng(seed).choice(len(records), count, replace=False))
    return [records[i] for i in keep]


def _layout(path: str) -> str:
    """``"paper"`` (value puzzles: ``id,set,...,fen``) or ``"lichess"`` for a puzzle file."""
    for line in pathlib.Path(path).read_text(encoding="utf-8-sig").splitlines():
        if line.strip() and not line.startswith("#"):
            names = {name.strip() for name in line.split(",")}
            return "paper" if {"set", "fen"} <= names else "lichess"
    return "lichess"


def load_puzzles(records: Sequence[start_positions_lib.PuzzleRecord], game: str,
                 files: Optional[Dict[str, Dict[str, Any]]] = None) -> Tuple[str, List[Any]]:
    """(layout, puzzles): the ``LichessPuzzle``s or ``PaperPosition``s of ``records`` (positions
    of ``game``, a game id), in order. ``files`` caches each file's puzzles by id across calls."""
    layouts = {_layout(r.path) for r in records}
    if len(layouts) != 1:
        raise ValueError(f"a puzzle set mixes layouts {sorted(layouts)}")
    layout = layouts.pop()
    files = {} if files is None else files
    for path in sorted({r.path for r in records} - set(files)):
        loaded = (data.load_paper_positions(path=path, game=game) if layout == "paper"
                  else data.load_lichess_puzzles(path, game=game))
        files[path] = {(p.id if layout == "paper" else p.puzzle_id): p for p in loaded}
    return layout, [files[r.path][r.puzzle_id] for r in records]


def puzzle_sets(results: Results, splits: Dict[str, start_positions_lib.StartPositionSet]
                ) -> Dict[str, Dict[str, Any]]:
    """Every set of ``SETS``: its records (cut to ``eval.puzzles_per_set``) and its size before.
    ``splits``: ``{arm: split_of(its first run)}`` of the puzzle-start arms."""
    out = {}
    for split, arm in STARTS_ARMS.items():
        positions = splits[arm]
        for kind, records in (("heldout", positions.heldout_records), ("train", positions.train_records)):
            if f"{split}_{kind}" in SETS:
                out[f"{split}_{kind}"] = {"records": subset(records, results.scale.eval.puzzles_per_set),
                                          "total": len(records), "split_arm": arm}
    return out


def trained_keys(splits: Dict[str, start_positions_lib.StartPositionSet], arm: str) -> set:
    """The puzzles ``arm`` started self-play from (empty for ``az``)."""
    if arm not in splits:
        return set()
    return {puzzle_key(r) for r in splits[arm].train_records}


def solve(solver, layout: str, items: Sequence[Any]) -> Tuple[List[float], List[str]]:
    """Player 0's solved flags (0/1) and its moves per puzzle (``solver``'s column ``player_0``)."""
    if layout == "paper":
        report = puzzles.run_value_puzzles(items, solver, thresholds=(VALUE_TOLERANCE,), progress=False)
        key = f"player_0_solved@{VALUE_TOLERANCE:g}"
        return [float(r[key]) for r in report.rows], [r["player_0_move"] for r in report.rows]
    report = puzzles.run_lichess(items, solver, progress=False, by_theme=False)
    return [float(r["player_0_solved"]) for r in report.rows], [r["player_0_moves"] for r in report.rows]


# ------------------------------------------------------------------ Fig. 4, 20: prior and values per move


def bar_positions(sets: Dict[str, Dict[str, Any]], loaded: Dict[str, Tuple[str, List[Any]]]
                  ) -> List[Dict[str, Any]]:
    """The positions of the bar figures: Fig. 4, the first two puzzles of the OOD held-out
    set; Fig. 20, the first two solver steps (``step`` 0 and 1, the position before
    ``solution[step]``) of the first random held-out puzzle with two or more (else of the
    first OOD held-out puzzle). Multi-step (Lichess-layout) puzzles only."""
    out = []
    layout, items = loaded["ood_heldout"]
    records = sets["ood_heldout"]["records"]
    if layout == "lichess":
        for k in range(min(2, len(items))):
            out.append({"figure": "fig4", "set": "ood_heldout", "puzzle": puzzle_key(records[k]), "step": 0,
                        "fen": items[k].board_at(0).fen(), "solution": items[k].solution[0]})
    for name in ("random_heldout", "ood_heldout"):
        layout, items = loaded[name]
        if layout != "lichess":
            continue
        found = [k for k, p in enumerate(items) if len(p.solution) >= 2]
        if found:
            k = found[0]
            for step in (0, 1):
                out.append({"figure": "fig20", "set": name, "puzzle": puzzle_key(sets[name]["records"][k]),
                            "step": step, "fen": items[k].board_at(step).fen(),
                            "solution": items[k].solution[step], "_puzzle": items[k], "_step": step})
            break
    for position in out:
        if "_puzzle" not in position:
            name = position["set"]
            keys = [puzzle_key(r) for r in sets[name]["records"]]
            position["_puzzle"], position["_step"] = loaded[name][1][keys.index(position["puzzle"])], 0
    return out


def paired_difference(flags: Sequence[Sequence[bool]], base_flags: Sequence[Sequence[bool]],
                      base: str) -> Dict[str, Any]:
    """An arm's solve rate minus ``base``'s on the same puzzles, each given one list of
    solve flags per run (seed). With several seeds in both arms, seed k against seed k and
    the standard error over those seed pairs; otherwise each puzzle's flag (mean over
    the arm's seeds) against its flag for ``base``, the standard error over puzzles (paired)."""
    pairs = min(len(flags), len(base_flags))
    if pairs > 1:
        gaps = [float(np.mean(flags[k]) - np.mean(base_flags[k])) for k in range(pairs)]
        over = "seeds"
    else:
        gaps = np.mean(np.asarray(flags, float), axis=0) - np.mean(np.asarray(base_flags, float), axis=0)
        over = "puzzles (paired)"
    return {"against": base, "difference": float(np.mean(gaps)) if len(gaps) else float("nan"),
            "stderr": stderr(gaps), "stderr_over": over}


# ------------------------------------------------------------------ the group


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/puzzle_starts.json|csv``); returns the report."""
    start = time.perf_counter()
    sizes = results.scale.eval
    game = games.board_game(results.scale.game).env_id
    evaluated = [arm for arm in ARMS if arm in results.scale.arms]
    splits = {arm: split_of(results.first_run(arm), results.scale.game) for arm in evaluated if arm != "az"}
    sets = puzzle_sets(results, splits)
    files: Dict[str, Dict[str, Any]] = {}
    loaded = {name: load_puzzles(item["records"], game, files) for name, item in sets.items()}
    positions = bar_positions(sets, loaded)
    rows: List[Dict[str, Any]] = []
    names: List[str] = []
    arms: Dict[str, Dict[str, Any]] = {}
    programs: Dict[Any, Any] = {}
    flags_of: Dict[Tuple[str, str], List[List[bool]]] = {}  # (arm, set) -> one list of flags per run
    batch_size = max(1, min(16, max(len(loaded[name][1]) for name in SETS)))
    for arm in evaluated:
        found = results.runs(arm)
        if not found:
            results.first_run(arm)  # ResultsError saying how to train it
        trained = trained_keys(splits, arm)
        per_set: Dict[str, Any] = {}
        bars: List[Dict[str, Any]] = []
        for run_index, run in enumerate(found):
            names.append(run.name)
            team = loading.load_team(run.workdir, num_simulations=sizes.simulations)
            # one compiled search for every network of one architecture and search settings
            # (the parameters and ψ are the search's arguments)
            signature = (json.dumps(dataclasses.asdict(runs.load_run_config(run.workdir).network), sort_keys=True),
                         repr(team.search_config), tuple(team.search_lambdas.tolist()), float(team.l0),
                         team.search_hook().intrinsic_reward_fn is not None)
            solver = solvers.TeamSolver(team, players=1, rules=(), homogeneous_copies=0, batch_size=batch_size,
                                        seed=SEED, programs=programs.setdefault(signature, {}))
            for name in SETS:
                layout, items = loaded[name]
                keys = [puzzle_key(r) for r in sets[name]["records"]]
                flags, played = solve(solver, layout, items)
                entry = per_set.setdefault(name, {"runs": [], "flags": []})
                entry["runs"].append({"run": run.name, "seed": run.seed, "step": team.step,
                                      "solve_rate": float(np.mean(flags)) if flags else float("nan"),
                                      "stderr": stderr(flags), "solved": int(sum(flags))})
                entry["flags"].append(flags)
                for key, flag, moves in zip(keys, flags, played):
                    rows.append({"kind": "puzzle", "arm": arm, "run": run.name, "set": name, "puzzle": key,
                                 "solved": int(flag), "trained_on": key in trained, "moves": moves})
            if run_index == 0 and positions and arm in BAR_ARMS:
                boards = [position["_puzzle"].board_at(position["_step"]) for position in positions]
                views = solver.move_bars(boards)
                for index, (position, out) in enumerate(zip(positions, views)):
                    correct = [bool(data.is_correct_solver_move(position["_puzzle"], position["_step"], m))
                               for m in out["moves"]]
                    bars.append({"position": index, "run": run.name, **out, "correct": correct})
                    for k, move in enumerate(out["moves"]):
                        rows.append({"kind": "move", "arm": arm, "run": run.name, "position": index,
                                     "fen": position["fen"], "move": move, "action": out["actions"][k],
                                     "prior": out["prior"][k], "raw_value": out["raw_value"][k],
                                     "q": out["q"][k], "visits": out["visits"][k], "correct": correct[k]})
        summary_sets = {}
        for name, entry in per_set.items():
            rates = [r["solve_rate"] for r in entry["runs"]]
            keys = [puzzle_key(r) for r in sets[name]["records"]]
            several = len(rates) > 1
            summary_sets[name] = {
                "solve_rate": float(np.mean(rates)),
                "stderr": stderr(rates) if several else entry["runs"][0]["stderr"],
                "stderr_over": "seeds" if several else "puzzles",
                "num_puzzles": len(keys), "runs": entry["runs"],
                "trained_share": float(np.mean([k in trained for k in keys])) if keys else float("nan"),
            }
        arms[arm] = {"sets": summary_sets, "bars": bars}
        flags_of.update({(arm, name): entry["flags"] for name, entry in per_set.items()})

    def table1_row(label: str, arm: str, name: str) -> Dict[str, Any]:
        def versus(base: Optional[str]) -> Optional[Dict[str, Any]]:
            if base is None or base == arm or base not in arms:
                return None
            return paired_difference(flags_of[(arm, name)], flags_of[(base, name)], base)

        item = arms[arm]["sets"][name]
        return {"row": label, "arm": arm, "set": name, "solve_rate": item["solve_rate"], "stderr": item["stderr"],
                "num_puzzles": item["num_puzzles"], "trained_share": item["trained_share"],
                "vs_az": versus("az"), "vs_previous": versus(PREVIOUS_ROW.get(arm))}

    table1 = [table1_row(*row) for row in TABLE1 if row[1] in arms]
    summary = {
        "game": results.scale.game, "num_simulations": sizes.simulations, "puzzles_per_set": sizes.puzzles_per_set,
        "seed": SEED, "heldout_group": results.scale.heldout_group, "test_count": results.scale.test_count,
        "sources": list(results.scale.start_sources), "value_tolerance": VALUE_TOLERANCE,
        "sets": {name: {"puzzles": [puzzle_key(r) for r in item["records"]], "total": item["total"],
                        "split_arm": item["split_arm"], "layout": loaded[name][0]} for name, item in sets.items()},
        "positions": [{k: v for k, v in p.items() if not k.startswith("_")} for p in positions],
        "arms": arms,
        "table1": table1,
    }
    results.write_report("puzzle_starts", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("puzzle_starts")


__all__ = ["ARMS", "BAR_ARMS", "SETS", "TABLE1", "PREVIOUS_ROW", "evaluate", "paired_difference", "split_of", "subset", "puzzle_sets", "load_puzzles",
           "bar_positions", "puzzle_key", "stderr"]
