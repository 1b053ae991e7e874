"""A reproduction's results folder: its runs, its evaluation reports and its manifest.

Layout (``experiments/reproduce.py --scale=S --out=DIR`` writes it; the notebooks read it)::

    DIR/manifest.json          scale, library version, every run (arm, seed, iterations done,
                               training seconds) and every figure group (the runs it reads,
                               its report, its figures, evaluation seconds)
    DIR/runs/<arm>_s<seed>/    training run directories (``azdb_jax.runner.train``)
    DIR/eval/<group>.json|csv  each figure group's numbers (``reports.write_report``)
    DIR/figures/<name>.png     figures drawn from those numbers, each beside
    DIR/figures/<name>.json    the numbers it shows

The manifest is rewritten atomically after every run and every group, so an interrupted
reproduction resumes where it stopped.
"""

import contextlib
import dataclasses
import fcntl
import json
import pathlib
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from azdb_jax import checkpoint
from azdb_jax.evaluation import reports
from azdb_jax.files import write_atomic
from azdb_jax.reproduction import scales as scales_lib

MANIFEST = "manifest.json"


def stderr(values) -> float:
    """Standard error of the mean of ``values``, ``std(ddof=1) / sqrt(N)`` (NaN for fewer than
    two): the error bar of every figure group (over games, positions, puzzles or seeds)."""
    values = np.asarray(values, float)
    return float(np.std(values, ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")


def crossed_mean_stderr(values) -> Dict[str, float]:
    """The mean of an a x b table of one measure over every pairing of two arms' seeds
    (AZdb seed i against AZ seed j), and its standard error with both arms' seeds random.

    The two-way crossed random-effects model without replication, ``y_ij = μ + α_i + β_j +
    ε_ij``: the mean's variance is ``σ_α²/a + σ_β²/b + σ_ε²/(ab)``, estimated from the mean
    squares of rows (``MS_A``, expectation ``σ_ε² + b σ_α²``), columns (``MS_B``,
    ``σ_ε² + a σ_β²``) and the residual (``MS_E``, ``σ_ε²``) as ``(MS_A + MS_B − MS_E) / (ab)``
    with Satterthwaite's degrees of freedom. Where that falls below the residual's own
    share ``MS_E / (ab)`` (a component estimated negative), the floor is used with the
    residual's ``(a − 1)(b − 1)`` degrees of freedom. Needs a, b >= 2.

    Returns ``{"mean", "stderr", "dof", "rows", "cols"}``.
    """
    table = np.asarray(values, float)
    if table.ndim != 2 or min(table.shape) < 2 or not np.isfinite(table).all():
        raise ValueError(f"need a finite a x b table with a, b >= 2, got shape {table.shape}")
    a, b = table.shape
    mean = float(table.mean())
    rows, cols = table.mean(axis=1), table.mean(axis=0)
    ms_a = b * float(((rows - mean) ** 2).sum()) / (a - 1)
    ms_b = a * float(((cols - mean) ** 2).sum()) / (b - 1)
    resid = table - rows[:, None] - cols[None, :] + mean
    ms_e = float((resid ** 2).sum()) / ((a - 1) * (b - 1))
    parts = [(ms_a, a - 1), (ms_b, b - 1), (-ms_e, (a - 1) * (b - 1))]
    var = sum(m for m, _ in parts) / (a * b)
    if var <= ms_e / (a * b):  # the components' estimate fell below the residual's share
        var, dof = ms_e / (a * b), float((a - 1) * (b - 1))
    else:
        dof = (var * a * b) ** 2 / sum(m * m / d for m, d in parts)
    return {"mean": mean, "stderr": float(np.sqrt(var)), "dof": float(dof), "rows": a, "cols": b}


class ResultsError(RuntimeError):
    """A results folder that cannot serve a request (no manifest, a run not trained yet)."""


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """A run of the results folder."""

    name: str
    arm: str
    seed: int
    workdir: pathlib.Path
    iterations: int  # the iterations its config asks for

    @property
    def latest_step(self) -> Optional[int]:
        return checkpoint.latest_step(self.workdir)

    @property
    def done(self) -> bool:
        return self.latest_step == self.iterations

    @property
    def configuration(self) -> str:
        """The run's configuration (``config.json``) with its seed left out, as JSON: the
        runs of one arm's seeds share it, and with it the evaluation's compiled programs."""
        from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
        from azdb_jax import runs  # pylint: disable=g-import-not-at-top

        config = runs.load_run_config(self.workdir)
        return config_lib.to_json(dataclasses.replace(config, run=dataclasses.replace(config.run, seed=0)))


class Results:
    """One results folder (see the module docstring).

    Args:
      root: the folder.
      scale: its scale (a name or a ``scales.Scale``); default the one its manifest names.
    """

    def __init__(self, root, scale=None):
        self.root = pathlib.Path(root)
        manifest = self.read_manifest()
        if scale is None:
            if not manifest:
                raise ResultsError(f"{self.root / MANIFEST} not found: run experiments/reproduce.py --out={self.root}")
            scale = manifest["scale"]
        self.scale: scales_lib.Scale = scale if isinstance(scale, scales_lib.Scale) else scales_lib.get_scale(scale)
        if manifest and manifest.get("scale") != self.scale.name:
            raise ResultsError(f"{self.root} holds scale {manifest.get('scale')!r}, not {self.scale.name!r}")
        self.specs = scales_lib.run_specs(self.scale)

    # ---------------------------------------------------------------- manifest

    def read_manifest(self) -> Dict[str, Any]:
        path = self.root / MANIFEST
        if not path.is_file():
            return {}
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ResultsError(f"{path}: not valid JSON ({e}); delete it to rebuild it from the runs") from e

    @contextlib.contextmanager
    def _manifest_lock(self):
        """Serialises read-modify-write of the manifest across processes (notebooks, reproduce.py)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".manifest.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def update_manifest(self, section: str, key: str, entry: Mapping[str, Any]) -> None:
        """Sets ``manifest[section][key] = entry`` (and the scale header) atomically."""
        with self._manifest_lock():
            self._update_manifest(section, key, entry)

    def _update_manifest(self, section: str, key: str, entry: Mapping[str, Any]) -> None:
        manifest = self.read_manifest()
        manifest.setdefault("scale", self.scale.name)
        manifest.setdefault("game", self.scale.game)
        manifest["description"] = self.scale.description
        manifest.setdefault(section, {})[key] = dict(entry)
        manifest["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_atomic(self.root / MANIFEST, json.dumps(reports._plain(manifest), indent=1))  # pylint: disable=protected-access

    # ---------------------------------------------------------------- runs

    def run(self, name: str) -> RunInfo:
        for spec in self.specs:
            if spec.name == name:
                return RunInfo(spec.name, spec.arm, spec.seed, self.root / "runs" / spec.name,
                               spec.config.run.num_iterations)
        raise ResultsError(f"scale {self.scale.name!r} has no run {name!r}; runs: {[s.name for s in self.specs]}")

    def runs(self, arm: str, *, trained: bool = True) -> List[RunInfo]:
        """The runs of ``arm`` (every seed); with ``trained``, only those whose training finished
        (a run still training is left out, so that no figure mixes training budgets)."""
        known = (*scales_lib.ARMS, *(v.name for v in self.scale.variants))
        if arm not in known:
            raise ValueError(f"unknown arm {arm!r}; arms: {', '.join(known)}")
        out = [self.run(spec.name) for spec in self.specs if spec.arm == arm]
        return [r for r in out if r.done] if trained else out

    def first_run(self, arm: str) -> RunInfo:
        """The lowest-seed finished run of ``arm``; ``ResultsError`` if none has finished."""
        found = self.runs(arm)
        if not found:
            raise ResultsError(f"{self.root}: no finished run of arm {arm!r}; run experiments/reproduce.py "
                               f"--scale={self.scale.name} --out={self.root}")
        return found[0]

    # ---------------------------------------------------------------- reports and figures

    def report_prefix(self, group: str) -> pathlib.Path:
        return self.root / "eval" / group

    def write_report(self, group: str, summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] = (), *,
                     runs: Sequence[str] = (), seconds: Optional[float] = None) -> Tuple[pathlib.Path, pathlib.Path]:
        """Writes ``eval/<group>.json`` (summary + rows) and ``.csv`` and records them in the manifest."""
        paths = reports.write_report(self.report_prefix(group), summary, list(rows))
        self.update_manifest("figures", group, {
            "report": str(paths[0].relative_to(self.root)), "runs": list(runs),
            "seconds": None if seconds is None else round(float(seconds), 1)})
        return paths

    def has_report(self, group: str) -> bool:
        return self.report_prefix(group).with_suffix(".json").is_file()

    def read_report(self, group: str) -> Dict[str, Any]:
        """``{"summary": ..., "rows": [...]}`` of a group's report."""
        path = self.report_prefix(group).with_suffix(".json")
        if not path.is_file():
            raise ResultsError(f"{path} not found: run experiments/reproduce.py --scale={self.scale.name} "
                               f"--out={self.root} --stages=eval --groups={group}")
        return json.loads(path.read_text())

    def figure_path(self, name: str) -> pathlib.Path:
        return self.root / "figures" / f"{name}.png"

    def save_figure(self, fig, name: str, numbers: Mapping[str, Any]) -> pathlib.Path:
        """Saves ``fig`` as ``figures/<name>.png`` and the numbers it shows as ``<name>.json``."""
        return reports.write_figure(self.figure_path(name), fig, numbers)
