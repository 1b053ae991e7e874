"""Reproducing the paper's figures and tables: runs at a chosen scale, their evaluation, a manifest.

``experiments/reproduce.py --scale=ci|cpu|chess_fast --out=DIR`` trains every run
(``scales.run_specs``) and evaluates every figure group into ``DIR``; the notebooks in
``colabs/`` draw each group's figures from there with ``azdb_jax.figures``.

A figure group is a module of this package with:

- ``ARMS``: the arms whose runs it reads;
- ``evaluate(results: Results) -> dict``: computes its numbers and writes them with
  ``results.write_report(<group>, summary, rows, runs=..., seconds=...)``.

``GROUPS`` maps each group to the paper's figures and tables it stands for.
"""

import importlib
import pathlib
import time
from typing import Dict, List, Optional, Sequence, Tuple

from azdb_jax.reproduction import parallel
from azdb_jax.reproduction.results import MANIFEST, Results, ResultsError, RunInfo
from azdb_jax.reproduction.scales import ARMS, SCALES, EvalSizes, RunSpec, Scale, arm_config, get_scale, run_specs

# group -> (the paper's figures and tables, one line)
GROUPS: Dict[str, Tuple[str, str]] = {
    "occupancy": ("Fig. 2, 18, 19", "where each player's pieces stand, per colour; ψ; castling rights"),
    "openings": ("Fig. 3", "each player's move in opening positions; distinct moves vs the control"),
    "puzzle_starts": ("Table 1, Fig. 4, 20", "self-play from puzzle positions: held-out solve rates"),
    "solve_rates": ("Fig. 5, 16, 17", "solve rate per puzzle set: players, rules, max over latents, engine"),
    "scaling": ("Fig. 7", "solve rate vs simulations x latents; latents vs seeds"),
    "selection": ("Fig. 8", "selection rules x search type x trials"),
    "matchmaking": ("Fig. 9, 10", "interaction graphs of each matchmaker; PSRO-Nash over training"),
    "matches": ("Table 2, 3, Fig. 6, 21-23", "AZdb vs AZ matches: W/D/L, Elo, team agents, openings"),
    "sweep": ("(settings)", "a sweep's arms: each player's Elo against AZ, distinct moves vs the control, "
                            "plies per game, intrinsic share"),
}
SWEEP_GROUPS = ("sweep",)  # groups of sweep scales (scales with variants) only


def scale_groups(scale: Scale) -> Tuple[str, ...]:
    """The figure groups ``scale`` evaluates: its own list, else every group but the sweep's."""
    return scale.groups or tuple(g for g in GROUPS if g not in SWEEP_GROUPS)


def group_module(group: str):
    if group not in GROUPS:
        raise ValueError(f"unknown figure group {group!r}; groups: {', '.join(GROUPS)}")
    return importlib.import_module(f"azdb_jax.reproduction.{group}")


def train_runs(results: Results, names: Optional[Sequence[str]] = None, *, progress: bool = True,
               jobs: int = 1, populations: bool = False) -> None:
    """Trains (or resumes) every run of ``results`` not finished yet (``names``: only these),
    recording each in the manifest.

    ``populations``: the unfinished seeds of each arm that stand at the same checkpoint are
    trained as one population (``azdb_jax.population``: one program for all of them, the
    members written to their usual ``runs/<arm>_s<seed>`` folders; ``runs/<arm>_population``
    holds its ``population.json``), arms of one shape together (AZdb and its λ = 1
    control in ``runs/azdb+control_population``); a run alone trains as a plain run.

    ``jobs`` > 1: up to ``jobs`` runs train at once, each in its own process
    (``python -m azdb_jax.reproduction train``, its console in ``runs/<name>/train.log``),
    with one progress bar over all of them (docs/reproduction.md, "What was run", has the
    times of one run alone and of several side by side on 2 cores). A run that fails does not stop the others;
    ``RuntimeError`` at the end names each failed run and its log.
    """
    from azdb_jax import runner  # pylint: disable=g-import-not-at-top

    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    if populations:
        _train_populations(results, names, progress=progress)
    if jobs > 1:
        pending = [spec.name for spec in results.specs
                   if (names is None or spec.name in names) and not results.run(spec.name).done]
        if pending:
            parallel.train(results, pending, jobs=jobs, progress=progress)
    for spec in results.specs:
        if names is not None and spec.name not in names:
            continue
        info = results.run(spec.name)
        step = info.latest_step
        if step != info.iterations:
            start = time.perf_counter()
            runner.train(spec.config, info.workdir, resume=step is not None, progress=progress)
            seconds = time.perf_counter() - start
            previous = results.read_manifest().get("runs", {}).get(spec.name, {})
            seconds += float(previous.get("train_seconds") or 0.0)
        else:
            seconds = results.read_manifest().get("runs", {}).get(spec.name, {}).get("train_seconds")
        _record_run(results, spec, info, seconds)


def _train_populations(results: Results, names: Optional[Sequence[str]], *, progress: bool) -> None:
    """The unfinished runs at one checkpoint (or none) as populations: each arm's seeds,
    and arms of one shape (AZdb and its λ = 1 control: ``population.same_shape``)
    together, as members of one program (``runs/<arm>+<arm>_population``)."""
    from azdb_jax import population  # pylint: disable=g-import-not-at-top

    groups: List[list] = []
    for spec in results.specs:
        info = results.run(spec.name)
        if (names is None or spec.name in names) and not info.done:
            step = info.latest_step
            group = next((g for g in groups if g[0][1] == step and population.same_shape(g[0][0].config, spec.config)),
                         None)
            if group is None:
                groups.append([(spec, step)])
            else:
                group.append((spec, step))
    for group in groups:
        specs = [spec for spec, _ in group]
        if len(specs) < 2:
            continue
        step = group[0][1]
        infos = [results.run(spec.name) for spec in specs]
        name = f"runs/{'+'.join(dict.fromkeys(spec.arm for spec in specs))}_population"
        start = time.perf_counter()
        population.train(specs[0].config, results.root / name, [spec.seed for spec in specs],
                         runs=[info.workdir for info in infos], configs=[spec.config for spec in specs],
                         resume=step is not None, progress=progress)
        seconds = (time.perf_counter() - start) / len(specs)  # each member's share of the population's time
        for spec, info in zip(specs, infos):
            previous = results.read_manifest().get("runs", {}).get(spec.name, {})
            _record_run(results, spec, info, seconds + float(previous.get("train_seconds") or 0.0), population=name)


def _record_run(results: Results, spec: RunSpec, info: RunInfo, seconds: Optional[float], *,
                population: Optional[str] = None) -> None:
    """The run's manifest entry (a population that trained it stays named)."""
    population = population or results.read_manifest().get("runs", {}).get(spec.name, {}).get("population")
    results.update_manifest("runs", spec.name, {
        "arm": spec.arm, "seed": spec.seed, "workdir": str(info.workdir.relative_to(results.root)),
        "iterations": info.iterations, "done": info.done, "train_seconds": seconds,
        **({"population": population} if population else {})})


def evaluate_group(results: Results, group: str) -> dict:
    """Runs one figure group's evaluation (its report lands in ``results``)."""
    return group_module(group).evaluate(results)


def open_or_train(root, scale: str = "ci", *, progress: bool = True) -> Results:
    """The results folder ``root``; one that does not exist yet (no manifest) is trained first at
    ``scale`` (every run of the scale, as ``experiments/reproduce.py --stages=train`` does).

    What a figure notebook opened in a fresh session (Colab) does with its default folder:
    the ``ci`` scale's runs train in minutes on a CPU (docs/reproduction.md, "The ci scale in a
    fresh session").
    A folder that exists is opened as it is: its unfinished runs are not trained here.
    """
    if (pathlib.Path(root) / MANIFEST).is_file():
        return Results(root)
    results = Results(root, scale)
    train_runs(results, progress=progress)
    return results


def load_or_evaluate(root, group: str) -> dict:
    """A group's report from the results folder ``root``, evaluating it first if missing."""
    results = Results(root)
    if not results.has_report(group):
        evaluate_group(results, group)
    return results.read_report(group)


__all__ = ["ARMS", "EvalSizes", "GROUPS", "Results", "ResultsError", "RunInfo", "RunSpec", "SCALES", "Scale",
           "arm_config", "evaluate_group", "get_scale", "group_module", "load_or_evaluate", "open_or_train", "run_specs",
           "scale_groups", "train_runs"]
