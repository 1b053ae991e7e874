"""Shared fixtures: where the third-party test data lives.

The data are never part of the repository; point ``AZDB_DATA_DIR`` at a folder laid
out like ``shared/data`` (sts/, puzzles/, openings/, books/, suites/). Without it the
tests that need data are skipped, unless ``AZDB_REQUIRE_DATA=1`` (CI sets it), in
which case they fail.
"""

import os
import pathlib

import pytest

_REPO = pathlib.Path(__file__).resolve().parents[1]


def _data_dir():
    env = os.environ.get("AZDB_DATA_DIR")
    if env:
        return pathlib.Path(env)
    return _REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> pathlib.Path:
    path = _data_dir()
    if not path.is_dir():
        message = f"test data folder not found: {path} (set AZDB_DATA_DIR)"
        if os.environ.get("AZDB_REQUIRE_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path
