"""Means and 95% confidence intervals across training seeds of diversity reports.

  python experiments/seed_summary.py reports/report_s0.txt reports/report_s1.txt ...

Each file is the output of ``experiments/diversity_report.py`` (its JSON list, printed
last). Rows are grouped by run name and search mode (as in self-play, or the
extrinsic-only ablation); for each group the table gives the mean over seeds of the
final mean d_i, the distinct moves per position and player 0's score against the
reference, each ± the half-width of a 95% t-interval across seeds (n − 1 degrees of
freedom), and the per-seed values. A second table gives, per run, the effect of the
search mode (self-play search minus the ablation, paired by seed: the same checkpoint
and positions), and per search mode the difference between the runs (Welch interval,
and paired by seed: runs with the same ``run.seed`` start from the same network and
random streams). Give the files in the same seed order for every run.
"""

import collections
import json
import pathlib
import sys
from typing import Dict, List, Sequence, Tuple

import numpy as np

# Two-sided 95% quantiles of Student's t by degrees of freedom (standard table values).
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}

METRICS = (("final_d_mean", "final d_i (mean over players)"), ("distinct_moves_mean", "distinct moves / position"),
           ("player0_score", "player 0 score vs reference"))


def read_report(path) -> List[dict]:
    """The JSON list at the end of a diversity_report.py output."""
    text = pathlib.Path(path).read_text()
    start = text.find("\n[")
    if start < 0:
        raise ValueError(f"{path}: no JSON report found")
    return json.loads(text[start + 1:])


def interval(values: Sequence[float]) -> Tuple[float, float]:
    """(mean, half-width of the 95% t-interval); half-width NaN for one value."""
    values = np.asarray(values, np.float64)
    if values.size < 2:
        return float(values.mean()), float("nan")
    half = T_975.get(values.size - 1, 1.96) * values.std(ddof=1) / np.sqrt(values.size)
    return float(values.mean()), float(half)


def summarize(rows: Sequence[dict]) -> Dict[Tuple[str, str], Dict[str, List[float]]]:
    groups: Dict[Tuple[str, str], Dict[str, List[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in rows:
        group = groups[(row["run"], row.get("search", "extrinsic_only"))]
        group["final_d_mean"].append(row["final_d_mean"])
        group["distinct_moves_mean"].append(row["distinct_moves_mean"])
        group["player0_score"].append(row["player0"]["score"])
    return groups


def welch(a: Sequence[float], b: Sequence[float]) -> Tuple[float, float]:
    """(mean(a) − mean(b), half-width of a 95% Welch interval)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1)) if va + vb > 0 else 1
    return float(a.mean() - b.mean()), float(T_975.get(int(np.floor(df)), 1.96) * np.sqrt(va + vb))


def main(paths: Sequence[str]) -> None:
    rows = [row for path in paths for row in read_report(path)]
    groups = summarize(rows)
    print("| run | search | seeds | " + " | ".join(label for _, label in METRICS) + " |")
    print("|---|---|---|" + "---|" * len(METRICS))
    for (run, search), values in sorted(groups.items()):
        cells = []
        for key, _ in METRICS:
            mean, half = interval(values[key])
            cells.append(f"{mean:.3f} ± {half:.3f} ({', '.join(f'{v:.3f}' for v in values[key])})")
        mode = "extrinsic-only (ablation)" if search == "extrinsic_only" else "as in self-play"
        print(f"| {run} | {mode} | {len(values['final_d_mean'])} | " + " | ".join(cells) + " |")
    print()
    print("| comparison | " + " | ".join(label for _, label in METRICS) + " |")
    print("|---|" + "---|" * len(METRICS))
    runs = sorted({run for run, _ in groups})
    for run in runs:
        if (run, "selfplay") in groups and (run, "extrinsic_only") in groups:
            cells = [interval(np.subtract(groups[(run, "selfplay")][k], groups[(run, "extrinsic_only")][k]))
                     for k, _ in METRICS]
            print(f"| {run}: self-play search − ablation (paired) | "
                  + " | ".join(f"{m:+.3f} ± {h:.3f}" for m, h in cells) + " |")
    for search in ("selfplay", "extrinsic_only"):
        present = [run for run in runs if (run, search) in groups]
        for other in present[:-1]:
            last = present[-1]
            cells = [welch(groups[(last, search)][k], groups[(other, search)][k]) for k, _ in METRICS]
            print(f"| {last} − {other}, {search} search (Welch) | "
                  + " | ".join(f"{m:+.3f} ± {h:.3f}" for m, h in cells) + " |")
            if len(groups[(last, search)]["final_d_mean"]) == len(groups[(other, search)]["final_d_mean"]):
                cells = [interval(np.subtract(groups[(last, search)][k], groups[(other, search)][k]))
                         for k, _ in METRICS]
                print(f"| {last} − {other}, {search} search (paired by seed) | "
                      + " | ".join(f"{m:+.3f} ± {h:.3f}" for m, h in cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: seed_summary.py REPORT.txt [REPORT.txt ...]")
    main(sys.argv[1:])
