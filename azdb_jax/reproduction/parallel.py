"""Training several runs of a results folder at once, each in its own process.

``train(results, names, jobs=N)`` keeps up to N workers going, each
``python -m azdb_jax.reproduction train --out=DIR --scale=NAME --run=RUN`` (which trains or
resumes its run and records it in the manifest, as ``train_runs`` does in-process), their
console appended to ``runs/<run>/train.log``, and shows one progress bar over the
iterations of every run. A worker that fails leaves the others going; the error at the
end names its run and its log. Interrupted (Ctrl-C), the workers stop too; each run
resumes from its latest checkpoint next time.
"""

import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Dict, List, Sequence, Tuple

import tqdm

from azdb_jax import checkpoint
from azdb_jax.reproduction import scales as scales_lib
from azdb_jax.reproduction.results import Results

LOG = "train.log"
POLL_SECONDS = 2.0
_TAIL_LINES = 15


def finished_iterations(workdir) -> int:
    """The last training iteration recorded in ``workdir/metrics.jsonl`` (0 when none; a
    line still being written is skipped)."""
    try:
        text = (pathlib.Path(workdir) / "metrics.jsonl").read_text()
    except FileNotFoundError:
        return 0
    last = 0
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("kind") == "train":
            last = max(last, int(record.get("iteration", 0)))
    return last


def resumed_iterations(workdir) -> int:
    """The iterations of ``workdir`` that a resumed run keeps: its recorded iterations up to
    its last checkpoint (a resume drops the records past it and trains them again)."""
    return min(finished_iterations(workdir), checkpoint.latest_step(workdir) or 0)


def worker_command(results: Results, name: str) -> List[str]:
    return [sys.executable, "-m", "azdb_jax.reproduction", "train", f"--out={results.root}",
            f"--scale={results.scale.name}", f"--run={name}"]


def _worker_env() -> Dict[str, str]:
    """The environment with this package importable (also when it runs from a checkout)."""
    env = dict(os.environ)
    package_root = str(pathlib.Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def _tail(path: pathlib.Path) -> str:
    lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
    return "\n".join(lines[-_TAIL_LINES:])


def train(results: Results, names: Sequence[str], *, jobs: int, progress: bool = True) -> None:
    """Trains ``names`` (runs of ``results``), up to ``jobs`` at once in worker processes.

    Raises:
      ValueError: ``results`` has a modified scale (a worker can only rebuild a named one).
      RuntimeError: after every run was tried, naming each run that failed and its log.
    """
    if results.scale != scales_lib.get_scale(results.scale.name):
        raise ValueError(f"training in worker processes needs one of the named scales "
                         f"({', '.join(scales_lib.SCALES)}) unchanged; train a modified scale with jobs=1")
    infos = {name: results.run(name) for name in names}  # ResultsError for a name the scale lacks
    queue = list(names)
    running: Dict[str, Tuple[subprocess.Popen, Any, float]] = {}
    failed: List[str] = []
    env = _worker_env()

    # A run counts what its resume keeps until its worker has rewritten metrics.jsonl (the
    # records past the last checkpoint dropped); from then on, what the worker records.
    kept = {name: resumed_iterations(info.workdir) for name, info in infos.items()}
    started: Dict[str, float] = {}

    def done(name: str) -> int:
        metrics = infos[name].workdir / "metrics.jsonl"
        if name in started and metrics.is_file() and metrics.stat().st_mtime >= started[name]:
            return finished_iterations(infos[name].workdir)
        return kept[name]

    def done_iterations() -> int:
        return sum(min(done(name), info.iterations) for name, info in infos.items())

    bar = tqdm.tqdm(total=sum(info.iterations for info in infos.values()), initial=done_iterations(),
                    disable=not progress, desc=f"train ({jobs} at once)", unit="it")
    try:
        while queue or running:
            while queue and len(running) < jobs:
                name = queue.pop(0)
                workdir = infos[name].workdir
                workdir.mkdir(parents=True, exist_ok=True)
                log = open(workdir / LOG, "a")  # pylint: disable=consider-using-with
                command = worker_command(results, name)
                log.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n")
                log.flush()
                started[name] = time.time()
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
                running[name] = (process, log, time.perf_counter())
            time.sleep(POLL_SECONDS)
            for name, (process, log, start) in list(running.items()):
                if process.poll() is None:
                    continue
                log.close()
                del running[name]
                if process.returncode == 0:
                    bar.write(f"{name}: trained ({time.perf_counter() - start:.0f} s)")
                else:
                    failed.append(name)
                    path = infos[name].workdir / LOG
                    bar.write(f"{name}: failed (exit status {process.returncode}); the end of {path}:\n{_tail(path)}")
            bar.n = done_iterations()
            bar.set_postfix_str(", ".join(running))
            bar.refresh()
    except BaseException:  # Ctrl-C included: stop the workers (each resumes from its last checkpoint)
        for process, _, _ in running.values():
            process.terminate()
        for process, log, _ in running.values():
            process.wait()
            log.close()
        raise
    finally:
        bar.close()
    if failed:
        raise RuntimeError("; ".join(f"run {name} failed (its console: {infos[name].workdir / LOG})"
                                     for name in failed))


__all__ = ["LOG", "finished_iterations", "resumed_iterations", "train", "worker_command"]
