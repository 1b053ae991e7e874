"""How well do the matchmakers' payoff estimates predict the next games? (docs/method.md)

  python experiments/payoff_estimates.py --workdir=runs/psro

Reads the payoff snapshots a run writes at every checkpoint (``graphs/graph_<it>.npz``:
the all-time mean payoff and game counts per (White, Black) pair) and replays the
estimators of ``config.PayoffConfig`` on the games between consecutive snapshots: at
each snapshot an estimator predicts every pair's mean result over the games of the next
interval. Reported per estimator: the count-weighted mean squared error of that
prediction (lower is better; the binomial noise of the next interval's own mean is a
floor no estimator can beat), the share of unplayed pairs it fills with its prior, and
how far the PSRO-Nash interaction graphs built from it are from the default's (mean
total-variation distance of the rows of Σ_w and Σ_b). Decay is applied per interval
(``decay ** iterations between snapshots``), the snapshots' resolution.
"""

import json
import pathlib
import re
from typing import Dict, List

from absl import app, flags
import jax
import numpy as np

from azdb_jax import matchmaking
from azdb_jax.cli import common_flags

_WORKDIR = common_flags.define_workdir("Run directory with graphs/graph_*.npz.", required=True)
_MATCHMAKER = flags.DEFINE_string("matchmaker", "psro_nash", "Graph to compare the estimates under.")

ESTIMATORS = {  # name -> (decay per iteration, prior, prior games)
    "all-time mean, unplayed 0 (default)": (1.0, 0.0, 0.0),
    "decay 0.98": (0.98, 0.0, 0.0),
    "decay 0.95": (0.95, 0.0, 0.0),
    "decay 0.9": (0.9, 0.0, 0.0),
    "decay 0.8": (0.8, 0.0, 0.0),
    "prior = White's mean result, 0 games": (1.0, "white", 0.0),
    "prior 0, 4 games": (1.0, 0.0, 4.0),
    "decay 0.95, prior 0, 4 games": (0.95, 0.0, 4.0),
}


def snapshots(workdir: pathlib.Path):
    """[(iteration, counts [n, n], sums [n, n])] in order."""
    out = []
    for path in sorted((workdir / "graphs").glob("graph_*.npz")):
        iteration = int(re.findall(r"\d+", path.stem)[-1])
        with np.load(path) as f:
            counts = f["counts"].astype(np.float64)
            out.append((iteration, counts, f["payoff"].astype(np.float64) * counts))
    if len(out) < 3:
        raise FileNotFoundError(f"{workdir}/graphs: need at least 3 payoff snapshots, found {len(out)}")
    return out


def evaluate(snaps, decay, prior, prior_games, graph_fn) -> Dict[str, float]:
    n = snaps[0][1].shape[0]
    counts, sums = np.zeros((n, n)), np.zeros((n, n))
    errors, weights, floors, unplayed, distances = [], [], [], [], []
    previous = (0, np.zeros((n, n)), np.zeros((n, n)))
    for (it0, c0, s0), (it1, c1, s1) in zip(snaps, snaps[1:]):
        step_c, step_s = c0 - previous[1], s0 - previous[2]
        factor = decay ** (it0 - previous[0])
        counts, sums = factor * counts + step_c, factor * sums + step_s
        previous = (it0, c0, s0)
        p = sums.sum() / max(counts.sum(), 1e-9) if prior == "white" else prior
        total = counts + prior_games
        estimate = np.where(total > 0, (sums + prior_games * p) / np.where(total > 0, total, 1), p)
        next_c, next_s = c1 - c0, s1 - s0
        played = next_c > 0
        observed = np.where(played, next_s / np.where(played, next_c, 1), 0.0)
        errors.append(np.sum(next_c * (estimate - observed) ** 2))
        weights.append(next_c.sum())
        # Binomial floor: the next interval's mean has variance var/n per pair.
        second = np.clip(1 - observed**2, 0, None)  # results in {-1, 0, 1}: E[r²] − E[r]² <= 1 − mean²
        floors.append(np.sum(np.where(played, second, 0.0)))
        unplayed.append(float(np.mean(counts == 0)))
        default = np.where(c0 > 0, s0 / np.where(c0 > 0, c0, 1), 0.0)
        graph, base = graph_fn(np.float32(estimate)), graph_fn(np.float32(default))
        distances.append(float(np.mean([0.5 * np.abs(np.asarray(a) - np.asarray(b)).sum(-1).mean()
                                        for a, b in zip(graph, base)])))
    return {"mse": float(np.sum(errors) / np.sum(weights)), "noise_floor": float(np.sum(floors) / np.sum(weights)),
            "unplayed_share": float(np.mean(unplayed)), "graph_tv_vs_default": float(np.mean(distances)),
            "intervals": len(errors), "games_predicted": int(np.sum(weights))}


def main(argv: List[str]) -> None:
    del argv
    snaps = snapshots(pathlib.Path(_WORKDIR.value))
    graph_fn = jax.jit(lambda payoff: matchmaking.interaction_graphs(_MATCHMAKER.value, payoff))
    results = {name: evaluate(snaps, *spec, graph_fn) for name, spec in ESTIMATORS.items()}
    print(f"{_WORKDIR.value}: {len(snaps)} snapshots, iterations {snaps[0][0]}..{snaps[-1][0]}")
    print("| estimator | MSE of next-interval mean | binomial floor | unplayed pairs | Σ rows TV vs default |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['mse']:.4f} | {r['noise_floor']:.4f} | {r['unplayed_share']:.2f} | "
              f"{r['graph_tv_vs_default']:.3f} |")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    app.run(main)
