"""How a benchmark hands over its numbers: one JSON document on stdout and, with ``--out``, in a file."""

import json
import pathlib
from typing import Any, Optional


def emit(value: Any, out: Optional[str]) -> None:
    """Prints ``value`` as indented JSON and writes the same text to ``out`` when given."""
    text = json.dumps(value, indent=1)
    print(text)
    if out:
        pathlib.Path(out).write_text(text + "\n")
