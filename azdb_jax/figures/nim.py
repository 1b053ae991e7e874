"""Nim runs drawn as Zhou & Riis's figures (Fig. 7-10), from a results folder.

A results folder holds one folder per setting (``nim5``, ``nim7_resnet``, ``nim7_team``,
...: a population of ``azdb-train --seeds``, or runs side by side), each with a run per
seed (``seed_<s>/``) measured by ``experiments/nim_measures.py`` (its report
``reports/nim_measures.json``; the losses come from the run's ``metrics.jsonl``)::

  azdb-train --preset=nim5 --seeds=0,1,2 --workdir=RESULTS/nim5
  python experiments/nim_measures.py --workdir=RESULTS/nim5/seed_0   # and seed_1, seed_2

``load_runs`` reads them; ``curves`` gives a measure per seed over the checkpoints; the
``*_figure`` functions draw the paper's figures (``colabs/nim.ipynb``); ``save_figure``
writes a figure and its numbers under ``<results>/figures/``.
``azdb_jax.reproduction.nim_claims`` decides the paper's claims from the same runs.
"""

import json
import pathlib
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

MEASURES_REPORT = pathlib.Path("reports") / "nim_measures.json"


def load_runs(results_dir) -> List[Dict[str, Any]]:
    """Every measured run under ``results_dir``, sorted by (setting, seed).

    Each run is ``{"setting", "seed", "path", "heaps", "num_players", "torso", "encoding",
    "summary", "rows", "losses"}``: the setting is the run folder's parent relative to
    ``results_dir``; ``rows`` the measures report's rows (one per checkpoint and player);
    ``losses`` ``{"iteration", "policy_loss", "value_loss"}`` lists from ``metrics.jsonl``.
    """
    root = pathlib.Path(results_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"no results folder {root}")
    runs = []
    for report_path in sorted(root.glob(f"**/{MEASURES_REPORT}")):
        run_dir = report_path.parent.parent
        try:
            report = json.loads(report_path.read_text())
            config = json.loads((run_dir / "config.json").read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{run_dir}: unreadable Nim report or config ({e})") from e
        losses: Dict[str, List[float]] = {"iteration": [], "policy_loss": [], "value_loss": []}
        metrics_path = run_dir / "metrics.jsonl"
        if metrics_path.is_file():
            for number, line in enumerate(metrics_path.read_text().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{metrics_path}:{number}: not JSON ({e})") from e
                if record.get("kind") == "train" and "policy_loss" in record:
                    for key in losses:
                        losses[key].append(float(record[key]))
        setting = str(run_dir.parent.relative_to(root)) if run_dir.parent != root else run_dir.name
        runs.append({"setting": setting, "seed": int(config["run"]["seed"]), "path": str(run_dir),
                     "heaps": list(report["summary"]["heaps"]), "num_players": int(config["team"]["num_players"]),
                     "torso": config["network"].get("torso", "resnet"),
                     "encoding": config["env"].get("nim_encoding", "one_hot"),
                     "summary": report["summary"], "rows": report["rows"], "losses": losses})
    if not runs:
        raise FileNotFoundError(f"no Nim measures under {root} (run experiments/nim_measures.py on each run)")
    return sorted(runs, key=lambda r: (r["setting"], r["seed"]))


def settings(runs: Sequence[Dict[str, Any]]) -> List[str]:
    """The settings in order: by number of heaps, then name."""
    heaps = {r["setting"]: len(r["heaps"]) for r in runs}
    return sorted(heaps, key=lambda s: (heaps[s], s))


def curves(runs: Sequence[Dict[str, Any]], setting: str, key: str, *, player: Optional[int] = 0) -> Dict[str, Any]:
    """``key`` of ``player``'s rows (None: the max over players) per seed at the steps every seed measured.

    Returns ``{"steps": [S], "seeds": [N], "values": [N, S]}``.
    """
    chosen = [r for r in runs if r["setting"] == setting]
    if not chosen:
        raise ValueError(f"no runs of setting {setting!r}; settings: {', '.join(settings(runs))}")
    per_seed = []
    for run in chosen:
        table: Dict[int, List[float]] = {}
        for row in run["rows"]:
            if key not in row:
                raise ValueError(f"{run['path']}: the Nim report has no {key!r}")
            if player is None or row["player"] == player:
                table.setdefault(int(row["step"]), []).append(float(row[key]))
        per_seed.append({step: max(values) for step, values in table.items()})
    steps = sorted(set.intersection(*(set(t) for t in per_seed)))
    return {"steps": steps, "seeds": [r["seed"] for r in chosen],
            "values": np.array([[t[s] for s in steps] for t in per_seed], float)}


def _measured(runs, setting: str, key: str) -> bool:
    """Whether every run of ``setting`` measured ``key`` (``--nosearch`` leaves out the search's)."""
    return all(all(key in row for row in r["rows"]) for r in runs if r["setting"] == setting)


def save_figure(results_dir, fig, name: str, numbers: Any) -> pathlib.Path:
    """``<results_dir>/figures/<name>.png`` and the numbers it shows as ``<name>.json``."""
    from azdb_jax import plots  # pylint: disable=g-import-not-at-top

    folder = pathlib.Path(results_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    plots.save_figure(fig, path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(numbers, indent=1))
    tmp.replace(path.with_suffix(".json"))
    return path


def _band(ax, steps, values, label, **style):
    mean = values.mean(axis=0)
    line, = ax.plot(steps, mean, label=label, **style)
    if len(values) > 1:
        ax.fill_between(steps, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color())
    return line


def accuracy_figure(runs: Sequence[Dict[str, Any]], names: Optional[Sequence[str]] = None):
    """Fig. 8 and 9: policy top-1 accuracy (against the random policy's; after search too
    where measured) and value sign accuracy (and balanced) of player 0, one column per
    setting; mean over seeds, band min-max. Returns ``(fig, numbers)``."""
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    names = list(names or settings(runs))
    fig, axes = plt.subplots(2, len(names), figsize=(3.6 * len(names), 6), squeeze=False)
    numbers: Dict[str, Any] = {}
    for col, setting in enumerate(names):
        top, bottom = axes[0, col], axes[1, col]
        heaps = next(r["heaps"] for r in runs if r["setting"] == setting)
        policy = curves(runs, setting, "top1_accuracy")
        _band(top, policy["steps"], policy["values"], "policy top-1")
        entry = numbers[setting] = {"steps": policy["steps"], "seeds": policy["seeds"],
                                    "top1_accuracy": policy["values"].tolist()}
        if _measured(runs, setting, "search_top1_accuracy"):
            search = curves(runs, setting, "search_top1_accuracy")
            _band(top, search["steps"], search["values"], "after search", linestyle="--")
            entry["search_top1_accuracy"] = {"steps": search["steps"], "values": search["values"].tolist()}
        baseline = float(np.mean([r["summary"]["random_baseline"] for r in runs if r["setting"] == setting]))
        entry["random_baseline"] = baseline
        top.axhline(baseline, color="grey", linestyle=":", label="random policy")
        top.set_title(f"{setting}: {len(heaps)} heaps")
        top.set_ylim(0, 1)
        value = curves(runs, setting, "value_sign_accuracy")
        _band(bottom, value["steps"], value["values"], "value sign")
        balanced = curves(runs, setting, "value_sign_balanced_accuracy")
        _band(bottom, balanced["steps"], balanced["values"], "balanced", linestyle="--")
        entry["value_sign_accuracy"] = value["values"].tolist()
        entry["value_sign_balanced_accuracy"] = balanced["values"].tolist()
        bottom.axhline(0.5, color="grey", linestyle=":", label="chance (balanced)")
        bottom.set_ylim(0, 1)
        bottom.set_xlabel("iteration")
    axes[0, 0].set_ylabel("accuracy vs winning moves")
    axes[1, 0].set_ylabel("value sign accuracy")
    axes[0, 0].legend(fontsize=7)
    axes[1, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig, numbers


def elo_figure(runs: Sequence[Dict[str, Any]], names: Optional[Sequence[str]] = None):
    """Fig. 7: player 0's Elo against the run's other checkpoints (anchor: its first), per
    setting. Returns ``(fig, numbers)``."""
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    names = list(names or settings(runs))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    numbers = {}
    for setting in names:
        elo = curves(runs, setting, "elo")
        _band(ax, elo["steps"], elo["values"], setting)
        numbers[setting] = {"steps": elo["steps"], "seeds": elo["seeds"], "elo": elo["values"].tolist()}
    ax.set_xlabel("iteration")
    ax.set_ylabel("Elo (first checkpoint: 0)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, numbers


def loss_figure(runs: Sequence[Dict[str, Any]], names: Optional[Sequence[str]] = None):
    """Fig. 10: policy and value losses per training iteration (mean over seeds). Returns ``(fig, numbers)``."""
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    names = list(names or settings(runs))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    numbers: Dict[str, Any] = {}
    for setting in names:
        chosen = [r for r in runs if r["setting"] == setting]
        length = min(len(r["losses"]["iteration"]) for r in chosen)
        if length == 0:
            continue
        iterations = chosen[0]["losses"]["iteration"][:length]
        numbers[setting] = {"iteration": iterations}
        for ax, key in zip(axes, ("policy_loss", "value_loss")):
            mean = np.mean([r["losses"][key][:length] for r in chosen], axis=0)
            ax.plot(iterations, mean, label=setting)
            ax.set_title(key.replace("_", " "))
            ax.set_xlabel("iteration")
            numbers[setting][key] = mean.tolist()
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig, numbers


def team_settings(runs: Sequence[Dict[str, Any]]) -> List[str]:
    """The settings of teams (more than one player), in ``settings`` order."""
    return [s for s in settings(runs) if next(r for r in runs if r["setting"] == s)["num_players"] > 1]


def team_figure(runs: Sequence[Dict[str, Any]], names: Optional[Sequence[str]] = None):
    """Beyond the paper: does a diverse team find winning moves one player misses? Per team
    setting: each player's policy top-1 accuracy, the max over latents (any player's top-1
    wins), and the single-player setting of the same heaps and network (its top-1 and its
    top-3: as many moves as a team of 3 offers), against the random policy; mean over
    seeds, band min-max. Returns ``(fig, numbers)``."""
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    names = list(names or team_settings(runs))
    if not names:
        raise ValueError("no team settings (num_players > 1) among the runs")
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    numbers: Dict[str, Any] = {}
    for ax, setting in zip(axes[0], names):
        run = next(r for r in runs if r["setting"] == setting)
        entry = numbers[setting] = {}
        any_top1 = curves(runs, setting, "team_top1_accuracy_any")
        _band(ax, any_top1["steps"], any_top1["values"], "team: max over latents", linewidth=2)
        entry.update(steps=any_top1["steps"], seeds=any_top1["seeds"], max_over_latents=any_top1["values"].tolist())
        for player in range(run["num_players"]):
            top1 = curves(runs, setting, "top1_accuracy", player=player)
            _band(ax, top1["steps"], top1["values"], f"team: player {player} top-1", linewidth=0.8)
            entry[f"player_{player}_top1"] = top1["values"].tolist()
        twin = next((s for s in settings(runs) if s != setting and all(
            (r["num_players"], len(r["heaps"]), r["torso"], r["encoding"]) == (1, len(run["heaps"]), run["torso"],
                                                                               run["encoding"])
            for r in runs if r["setting"] == s)), None)
        if twin is not None:
            for key, label, style in (("top1_accuracy", "top-1", "--"), ("top3_accuracy", "top-3", "-.")):
                single = curves(runs, twin, key)
                _band(ax, single["steps"], single["values"], f"{twin}: {label}", linestyle=style, color="black")
                entry[f"{twin}_{key}"] = {"steps": single["steps"], "seeds": single["seeds"],
                                          "values": single["values"].tolist()}
        baseline = float(np.mean([r["summary"]["random_baseline"] for r in runs if r["setting"] == setting]))
        entry["random_baseline"] = baseline
        ax.axhline(baseline, color="grey", linestyle=":", label="random policy top-1")
        ax.set_title(f"{setting}: {len(run['heaps'])} heaps, {run['num_players']} players")
        ax.set_xlabel("iteration")
        ax.set_ylim(0, max(0.5, ax.get_ylim()[1]))
    axes[0, 0].set_ylabel("accuracy vs winning moves")
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    return fig, numbers


__all__ = ["load_runs", "settings", "team_settings", "curves", "accuracy_figure", "elo_figure", "loss_figure",
           "team_figure", "save_figure", "MEASURES_REPORT"]
