"""Figure group ``matchmaking`` (paper Fig. 9, 10): interaction graphs of the matchmakers.

From the ``azdb`` run's saved empirical payoff (``graphs/graph_<iteration>.npz``, written
with every checkpoint; ``run_summary.latest_graph`` is the newest) the interaction graph
(Σ_w, Σ_b) each of the six matchmakers of the paper's Fig. 9 would produce
(``azdb_jax.matchmaking.interaction_graphs``; no extra training), and the graphs the run
itself used over training, one per saved iteration (Fig. 10: PSRO-Nash in the ``azdb``
arm), each beside the PSRO-Nash graph recomputed from that iteration's payoff.

Rows: one per (kind, matchmaker or iteration, colour, learner i) with the opponent
mixture ``p_0..p_{n-1}`` of that row of the graph.
"""

import pathlib
import re
import time
from typing import Any, Dict, List

import numpy as np

from azdb_jax import matchmaking, runs
from azdb_jax.evaluation import run_summary
from azdb_jax.reproduction.results import Results, ResultsError

ARMS = ("azdb",)
MATCHMAKERS = matchmaking.MATCHMAKERS  # Fig. 9 (a)-(f)


def graph_files(workdir) -> List[pathlib.Path]:
    """The run's saved graphs ``graphs/graph_<iteration>.npz``, in iteration order."""
    return sorted((pathlib.Path(workdir) / "graphs").glob("graph_*.npz"))


def _iteration(path: pathlib.Path) -> int:
    return int(re.search(r"graph_(\d+)\.npz$", path.name).group(1))


def matchmaker_graphs(payoff) -> Dict[str, Dict[str, np.ndarray]]:
    """``{matchmaker: {"white": Σ_w, "black": Σ_b}}`` of every matchmaker of ``MATCHMAKERS``
    for the payoff matrix ``payoff`` [n, n] (White's mean result, white i vs black j)."""
    out = {}
    for name in MATCHMAKERS:
        graph = matchmaking.interaction_graphs(name, np.asarray(payoff, np.float32))
        out[name] = {"white": np.asarray(graph.white, np.float64), "black": np.asarray(graph.black, np.float64)}
    return out


def payoff_stderr_bound(payoff, counts) -> np.ndarray:
    """An upper bound of each payoff entry's standard error, ``sqrt((1 − M²) / C)``: a result in
    {−1, 0, +1} with mean M has variance at most 1 − M². NaN where no game was counted."""
    payoff, counts = np.asarray(payoff, float), np.asarray(counts, float)
    return np.where(counts > 0, np.sqrt(np.clip(1.0 - payoff ** 2, 0.0, None) / np.maximum(counts, 1e-12)), np.nan)


def _rows(kind: str, label: Any, graph: Dict[str, np.ndarray]) -> List[Dict[str, Any]]:
    rows = []
    for colour in ("white", "black"):
        for i, row in enumerate(np.asarray(graph[colour])):
            rows.append({"kind": kind, "graph": label, "colour": colour, "player": i,
                         **{f"p_{j}": float(p) for j, p in enumerate(row)}})
    return rows


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/matchmaking.json|csv``); returns the report."""
    start = time.perf_counter()
    run = results.first_run("azdb")
    config = runs.load_run_config(run.workdir)
    files = graph_files(run.workdir)
    latest = run_summary.latest_graph(run.workdir)
    if latest is None or not files:
        raise ResultsError(f"{run.workdir}/graphs holds no saved interaction graph: was the run trained "
                           f"with checkpoints?")
    payoff, counts = latest["payoff"], latest["counts"]
    graphs = matchmaker_graphs(payoff)
    rows: List[Dict[str, Any]] = []
    for name, graph in graphs.items():
        rows += _rows("matchmaker", name, graph)
    training = []
    for path in files:
        with np.load(path) as saved:
            item = {name: np.asarray(saved[name]) for name in saved.files}
        recomputed = matchmaker_graphs(item["payoff"])["psro_nash"]
        training.append({
            "iteration": _iteration(path), "white": item["sigma_white"], "black": item["sigma_black"],
            "payoff": item["payoff"], "counts": item["counts"],
            "psro_nash_white": recomputed["white"], "psro_nash_black": recomputed["black"],
            "max_abs_difference_to_psro_nash": float(max(np.abs(recomputed["white"] - item["sigma_white"]).max(),
                                                         np.abs(recomputed["black"] - item["sigma_black"]).max())),
        })
        rows += _rows("training", _iteration(path), {"white": item["sigma_white"], "black": item["sigma_black"]})
    summary = {
        "run": run.name, "seed": run.seed, "run_matchmaker": config.team.matchmaker,
        "num_players": int(payoff.shape[0]), "iteration": training[-1]["iteration"],
        "payoff": payoff, "payoff_games": counts, "payoff_stderr_bound": payoff_stderr_bound(payoff, counts),
        "matchmakers": list(MATCHMAKERS), "graphs": graphs,
        "training": training,
    }
    results.write_report("matchmaking", summary, rows, runs=[run.name], seconds=time.perf_counter() - start)
    return results.read_report("matchmaking")


__all__ = ["ARMS", "MATCHMAKERS", "evaluate", "graph_files", "matchmaker_graphs", "payoff_stderr_bound"]
