"""The trained teams that ship inside the package: their names, folders and checked files.

A shipped team is a run directory cut down to what play needs (``config.json`` and one
checkpoint holding the network parameters, ψ and the iteration; no optimiser state, no
replay), in ``azdb_jax/pretrained/<name>/`` beside a ``MANIFEST.json`` that says how it
was trained (command, seed, commit) and holds a SHA-256 per file. What reads a team to
play takes ``pretrained:NAME`` in place of a run directory (``resolve``): a ``RUN[@STEP]``
flag (``--checkpoint``, a match's ``--a``/``--b``; ``cli.common_flags.split_checkpoint``),
``runs.load_agent`` and ``runs.load_run_config``. (A script whose ``--workdir`` is a folder it
writes reports into, or reads training state from, does not take it.)
Every file is checked against the manifest before a team is read, so a damaged or
missing file ends with one line that names it.

``azdb_jax.pretrained`` loads a shipped team as the library's agent and writes new ones
(``export``). This module only finds and checks files: it imports nothing of the package
but ``files``, so that the flags (layer 1) can resolve the names without JAX.
"""

import hashlib
import json
import os
import pathlib
from typing import Any, Dict, List, Mapping, Optional, Union

from azdb_jax import files

PREFIX = "pretrained:"
MANIFEST = "MANIFEST.json"
ROOT = pathlib.Path(__file__).resolve().parent / "pretrained"
UCI_TEAM = "gardner"  # the shipped team ``azdb-uci`` plays without ``--checkpoint``


class DamagedTeamError(ValueError):
    """A shipped team's file is missing, damaged, or not in its manifest."""


def _sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: pathlib.Path) -> List[pathlib.Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def names(root: Optional[pathlib.Path] = None) -> List[str]:
    """The shipped teams' names (folders of ``root`` that hold a manifest), sorted."""
    root = ROOT if root is None else pathlib.Path(root)
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file()) if root.is_dir() else []


def folder(name: str, *, root: Optional[pathlib.Path] = None, check: bool = True) -> pathlib.Path:
    """The run directory of shipped team ``name``, its files checked against its manifest.

    Raises:
      ValueError: no shipped team of that name (the message lists those there are).
      DamagedTeamError: a file missing, changed or unlisted (the message names it).
    """
    root = ROOT if root is None else pathlib.Path(root)
    path = root / name
    if not name or "/" in name or not (path / MANIFEST).is_file():
        shipped = ", ".join(names(root)) or "none"
        raise ValueError(f"no pretrained team {name!r} (shipped: {shipped})")
    if check:
        check_folder(path)
    return path


def manifest(name: str, *, root: Optional[pathlib.Path] = None) -> Dict[str, Any]:
    """Shipped team ``name``'s manifest: how it was trained, what it scored, its files."""
    path = folder(name, root=root, check=False) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DamagedTeamError(f"{path}: damaged ({e}); reinstall azdb_jax") from None


def check_folder(path: Union[str, pathlib.Path]) -> None:
    """Every file of ``path`` against its ``MANIFEST.json`` (SHA-256 and size).

    Raises:
      DamagedTeamError: the first file that is missing, differs or is not listed, by name.
    """
    path = pathlib.Path(path)
    listed = manifest_files(path)
    for relative, (size, digest) in listed.items():
        file = path / relative
        if not file.is_file():
            raise DamagedTeamError(f"{file}: missing (listed in {path / MANIFEST}); reinstall azdb_jax")
        if file.stat().st_size != size or _sha256(file) != digest:
            raise DamagedTeamError(f"{file}: damaged (its SHA-256 differs from {path / MANIFEST}); "
                                   "reinstall azdb_jax")
    for file in _files(path):
        if file.relative_to(path).as_posix() not in listed:
            raise DamagedTeamError(f"{file}: not in {path / MANIFEST} (a team's folder holds only its own files)")


def manifest_files(path: pathlib.Path) -> Dict[str, tuple]:
    """``{relative path: (size, sha256)}`` of the manifest in ``path``."""
    file = pathlib.Path(path) / MANIFEST
    try:
        listed = json.loads(file.read_text())["files"]
        return {name: (int(entry["bytes"]), str(entry["sha256"])) for name, entry in listed.items()}
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise DamagedTeamError(f"{file}: damaged ({type(e).__name__}: {e}); reinstall azdb_jax") from None


def write_manifest(path: Union[str, pathlib.Path], info: Mapping[str, Any]) -> Dict[str, Any]:
    """Writes ``path/MANIFEST.json``: ``info`` plus the size and SHA-256 of every other file."""
    path = pathlib.Path(path)
    data = dict(info)
    data["files"] = {f.relative_to(path).as_posix(): {"bytes": f.stat().st_size, "sha256": _sha256(f)}
                     for f in _files(path)}
    files.write_atomic(path / MANIFEST, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def is_pretrained(spec: Union[str, os.PathLike]) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


def resolve(spec: Union[str, os.PathLike], *, root: Optional[pathlib.Path] = None) -> pathlib.Path:
    """A run directory: ``pretrained:NAME`` is the shipped team's folder (checked), anything
    else the path it names."""
    if is_pretrained(spec):
        return folder(spec[len(PREFIX):], root=root)
    return pathlib.Path(spec)


__all__ = ["PREFIX", "MANIFEST", "ROOT", "UCI_TEAM", "DamagedTeamError", "names", "folder", "manifest", "check_folder",
           "manifest_files", "write_manifest", "is_pretrained", "resolve"]
