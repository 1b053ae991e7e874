"""The test processes' XLA flags (tests/conftest.py): unoptimised compiles here and in what the
tests start, the user's flags for the learning checks' processes, also inside xdist workers."""

import os
import subprocess
import sys

from conftest import USER_XLA_FLAGS, user_xla_env  # pylint: disable=g-bad-import-order

LEVEL_0 = "--xla_backend_optimization_level=0"


def _child_flags(env) -> str:
    """XLA_FLAGS as a started process sees them."""
    code = "import os; print(os.environ.get('XLA_FLAGS', ''))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_the_test_processes_and_their_children_compile_unoptimised():
    if os.environ.get("AZDB_TEST_XLA_OPTIMIZE") == "1" or "xla_backend_optimization_level" in USER_XLA_FLAGS:
        assert os.environ.get("XLA_FLAGS", "") == USER_XLA_FLAGS
        return
    assert os.environ["XLA_FLAGS"].split() == [*USER_XLA_FLAGS.split(), LEVEL_0]
    assert LEVEL_0 in _child_flags(dict(os.environ)).split()


def test_the_learning_checks_get_the_users_flags():
    # In an xdist worker the inherited XLA_FLAGS already hold level 0: the user's flags must
    # come from what the main process saw, not from this process's XLA_FLAGS.
    env = user_xla_env()
    assert _child_flags(env) == USER_XLA_FLAGS
    assert "PYTEST_XDIST_WORKER" not in env
    if "xla_backend_optimization_level" not in os.environ.get("AZDB_TEST_USER_XLA_FLAGS", ""):
        assert LEVEL_0 not in _child_flags(env)
