"""A training run's records to Weights & Biases, beside ``metrics.jsonl`` and TensorBoard.

``azdb-train --wandb_project=NAME`` (or ``runner.train(..., sinks=[WandbLog(...)])``)
logs every record the run writes to ``metrics.jsonl`` to one W&B run: each number as
``<kind>/<name>`` (``train/loss``, ``eval/score_vs_minimax2_p0``, ...), the same keys
TensorBoard gets, with ``iteration`` as the x-axis of every chart. The run's config is
the W&B run's config (flattened ``section.field`` keys), its name the workdir's.

W&B needs steps that only grow; a resumed run writes the iterations after its checkpoint
again, so the records carry ``iteration`` as a metric of their own (``define_metric``) and
W&B's internal step just counts. ``--resume`` continues the same W&B run: its id is kept in
``<workdir>/wandb_id``.

``mode``: ``online`` (needs ``wandb login`` or ``WANDB_API_KEY``), ``offline`` (writes
``<workdir>/wandb/offline-run-*``, upload later with ``wandb sync``) or ``disabled``.
Needs the ``wandb`` extra (``pip install "azdb_jax[wandb]"``).
"""

import pathlib
import secrets
from typing import Any, Dict, Mapping, Optional

MODES = ("online", "offline", "disabled")


def _flat_config(config: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in config.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            out.update(_flat_config(value, key + "."))
        else:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


class WandbLog:
    """One W&B run fed with a training run's records (``write``), closed with ``close``."""

    def __init__(self, workdir, config: Mapping[str, Any], *, project: str, mode: str = "online",
                 entity: Optional[str] = None, resume: bool = False):
        if not isinstance(project, str) or not project:
            raise ValueError(f"wandb project must be a non-empty name, got {project!r}")
        if mode not in MODES:
            raise ValueError(f"wandb mode must be one of {', '.join(MODES)}, got {mode!r}")
        try:
            import wandb  # pylint: disable=g-import-not-at-top
        except ImportError as e:
            raise ImportError('Weights & Biases logging needs the wandb package: pip install "azdb_jax[wandb]"') from e
        workdir = pathlib.Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        id_file = workdir / "wandb_id"
        run_id = id_file.read_text().strip() if resume and id_file.exists() else secrets.token_hex(4)
        self._run = wandb.init(project=project, entity=entity, name=workdir.name, id=run_id, resume="allow",
                               dir=str(workdir), mode=mode, config=_flat_config(config), reinit="create_new")
        id_file.write_text(run_id + "\n")
        self._run.define_metric("iteration")
        self._run.define_metric("*", step_metric="iteration")

    @property
    def run_dir(self) -> pathlib.Path:
        """The W&B run's local folder (offline: ``run-<id>.wandb`` there holds every record)."""
        return pathlib.Path(self._run.dir).parent

    def write(self, record: Mapping[str, Any]) -> None:
        kind = record.get("kind", "train")
        numbers = {f"{kind}/{name}": value for name, value in record.items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool) and name != "iteration"}
        self._run.log(dict(numbers, iteration=record["iteration"]))

    def close(self) -> None:
        self._run.finish()
