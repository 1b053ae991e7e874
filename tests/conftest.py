"""Shared fixtures: where the third-party test data lives.

Also: a persistent JAX compilation cache shared by the test processes.

The data are never part of the repository; point ``AZDB_DATA_DIR`` at a folder laid
out like ``shared/data`` (sts/, puzzles/, openings/, books/, suites/). Without it the
tests that need data are skipped, unless ``AZDB_REQUIRE_DATA=1`` (CI sets it), in
which case they fail.
"""

import os
import pathlib
import tempfile

import jax
import pytest

# Many tests build the same small programs (in several xdist workers, in subprocesses and
# across repeated training runs); a shared persistent compilation cache compiles each once.
_JIT_CACHE = os.environ.setdefault("JAX_COMPILATION_CACHE_DIR",
                                   os.path.join(tempfile.gettempdir(), "azdb_jax_test_jit_cache"))
jax.config.update("jax_compilation_cache_dir", _JIT_CACHE)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)

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


def _required() -> bool:
    return os.environ.get("AZDB_REQUIRE_DATA") == "1"


def _engine_path(find, not_found):
    """``find()``'s binary; skipped with the install hint when there is none (failed when
    ``AZDB_REQUIRE_DATA=1``, as on CI, where scripts/install_system_deps.sh installs it)."""
    try:
        return find()
    except not_found as e:
        if _required():
            pytest.fail(str(e))
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def stockfish_path() -> str:
    """The Stockfish binary (see ``_engine_path``)."""
    from azdb_jax.evaluation import stockfish  # pylint: disable=g-import-not-at-top

    return _engine_path(stockfish.find_stockfish, stockfish.StockfishNotFound)


@pytest.fixture(scope="session")
def fsf_path() -> str:
    """The Fairy-Stockfish binary (see ``_engine_path``)."""
    from azdb_jax.evaluation import fairy_stockfish  # pylint: disable=g-import-not-at-top

    return _engine_path(fairy_stockfish.find_fairy_stockfish, fairy_stockfish.FairyStockfishNotFound)
