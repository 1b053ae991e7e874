"""Writing files so that a reader never sees half of one.

A run's files (config, metrics, manifests) and the reports are written through a
temporary file and a rename, which is atomic on one filesystem: an interrupted writer
leaves the old file or the new one, never a truncated one. This module is at the
bottom of the package (it imports nothing of it), so every layer can write this way.
"""

import os
import pathlib


def write_atomic(path, text: str) -> pathlib.Path:
    """Writes ``text`` to ``path`` through a temporary file and a rename.

    The temporary file is named for the writing process, so processes of a multi-host
    run that write the same report never write into each other's file.
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


__all__ = ["write_atomic"]
