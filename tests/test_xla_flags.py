"""The test processes' XLA flags (tests/conftest.py): unoptimised compiles here and in what the
tests start unless ``AZDB_TEST_XLA_UNOPTIMIZED=0`` (or the user set a level); the user's flags for
the learning checks' processes, also inside xdist workers, and for a test run again there
(``in_user_xla_process``); the persistent compilation cache's threshold (0.5 s), here and in what
the tests start."""

import json
import os
import pathlib
import subprocess
import sys

from conftest import LEVEL_0, USER_XLA_FLAGS, user_xla_env  # pylint: disable=g-bad-import-order

TESTS = pathlib.Path(__file__).resolve().parent


def _child_flags(env) -> str:
    """XLA_FLAGS as a started process sees them."""
    code = "import os; print(os.environ.get('XLA_FLAGS', ''))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def _after_conftest(env) -> dict:
    """What a fresh process that imports tests/conftest.py ends up with."""
    code = ("import json, os, sys; sys.path.insert(0, sys.argv[1]); import conftest, jax; "
            "print(json.dumps(dict(flags=os.environ.get('XLA_FLAGS', ''), "
            "user=conftest.user_xla_env().get('XLA_FLAGS', ''), "
            "min_env=os.environ.get('JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS'), "
            "min_config=jax.config.jax_persistent_cache_min_compile_time_secs)))")
    out = subprocess.run([sys.executable, "-c", code, str(TESTS)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _conftest_flags(env) -> list:
    """[XLA_FLAGS, user_xla_env()'s XLA_FLAGS] after a fresh process imports tests/conftest.py."""
    after = _after_conftest(env)
    return [after["flags"], after["user"]]


def test_the_test_processes_compile_unoptimised_unless_asked_not_to():
    if os.environ.get("AZDB_TEST_XLA_UNOPTIMIZED", "1") == "1" and "xla_backend_optimization_level" not in USER_XLA_FLAGS:
        assert os.environ["XLA_FLAGS"].split() == [*USER_XLA_FLAGS.split(), LEVEL_0]
        assert LEVEL_0 in _child_flags(dict(os.environ)).split()
    else:
        assert os.environ.get("XLA_FLAGS", "") == USER_XLA_FLAGS
        assert LEVEL_0 not in _child_flags(dict(os.environ)).split() or LEVEL_0 in USER_XLA_FLAGS


def test_unoptimised_compiles_reach_children_but_not_the_learning_checks():
    base = {k: v for k, v in os.environ.items()
            if k not in ("XLA_FLAGS", "AZDB_TEST_USER_XLA_FLAGS", "AZDB_TEST_XLA_UNOPTIMIZED", "PYTEST_XDIST_WORKER")}
    user = "--xla_cpu_enable_fast_math=false"
    assert _conftest_flags(dict(base, XLA_FLAGS=user)) == [f"{user} {LEVEL_0}", user]
    assert _conftest_flags(dict(base, XLA_FLAGS=user, AZDB_TEST_XLA_UNOPTIMIZED="1")) == [f"{user} {LEVEL_0}", user]
    assert _conftest_flags(dict(base, XLA_FLAGS=user, AZDB_TEST_XLA_UNOPTIMIZED="0")) == [user, user]
    assert _conftest_flags(dict(base)) == [LEVEL_0, ""]
    # A level the user set wins over the request.
    own = "--xla_backend_optimization_level=2"
    assert _conftest_flags(dict(base, XLA_FLAGS=own, AZDB_TEST_XLA_UNOPTIMIZED="1")) == [own, own]


def test_the_learning_checks_get_the_users_flags():
    # In an xdist worker the inherited XLA_FLAGS hold level 0 (unless AZDB_TEST_XLA_UNOPTIMIZED=0): the
    # user's flags must come from what the main process saw, not from this process's XLA_FLAGS.
    env = user_xla_env()
    assert _child_flags(env) == USER_XLA_FLAGS
    assert "PYTEST_XDIST_WORKER" not in env and env["AZDB_TEST_XLA_UNOPTIMIZED"] == "0"
    if "xla_backend_optimization_level" not in os.environ.get("AZDB_TEST_USER_XLA_FLAGS", ""):
        assert LEVEL_0 not in _child_flags(env)


def test_the_cache_threshold_reaches_the_test_processes_and_what_they_start(tmp_path):
    base = {k: v for k, v in os.environ.items() if k not in ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                                                             "PYTEST_XDIST_WORKER")}
    after = _after_conftest(dict(base, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache")))
    assert (after["min_env"], after["min_config"]) == ("0.5", 0.5)  # the env var reaches their children
    mine = _after_conftest(dict(base, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"),
                                JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="2.5"))
    assert (mine["min_env"], mine["min_config"]) == ("2.5", 2.5)  # a user's own threshold is kept
