"""Writing evaluation reports: one JSON file (summary + rows) and one CSV file (rows).

Both files are written to a temporary name and renamed into place, so an interrupted
run never leaves a half-written report.
"""

import csv
import io
import json
import math
import pathlib
from typing import Any, Dict, Mapping, Sequence, Tuple

import numpy as np

from azdb_jax.files import write_atomic


def _plain(value: Any) -> Any:
    """JSON-safe copy: numpy scalars/arrays to Python, NaN/inf to None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_figure(path, fig, numbers: Mapping[str, Any]) -> pathlib.Path:
    """Writes a figure as PNG at ``path`` (when ``fig`` is not None; then closed) and the
    numbers it shows beside it as ``<name>.json``. Returns ``path``."""
    path = pathlib.Path(path)
    write_atomic(path.with_suffix(".json"), json.dumps(_plain(dict(numbers)), indent=1))
    if fig is not None:
        from azdb_jax import plots  # pylint: disable=g-import-not-at-top  (matplotlib only when drawing)
        plots.save_figure(fig, path)
    return path


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of ``rows`` (dicts); the header is the union of keys in first-seen order."""
    fields: Dict[str, None] = {}
    for row in rows:
        fields.update(dict.fromkeys(row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in _plain(dict(row)).items()})
    return out.getvalue()


def write_report(prefix, summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
                 ) -> Tuple[pathlib.Path, pathlib.Path]:
    """Writes ``<prefix>.json`` ({"summary": ..., "rows": [...]}) and ``<prefix>.csv`` (rows).

    Returns the two paths.
    """
    prefix = pathlib.Path(prefix)
    json_path = write_atomic(prefix.with_name(prefix.name + ".json"),
                             json.dumps({"summary": _plain(summary), "rows": _plain(list(rows))}, indent=1) + "\n")
    csv_path = write_atomic(prefix.with_name(prefix.name + ".csv"), rows_to_csv(rows))
    return json_path, csv_path


__all__ = ["write_report", "rows_to_csv"]
