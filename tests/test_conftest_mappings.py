"""tests/conftest.py's guard on a test process's memory mappings: over AZDB_TEST_MAX_MAPS after
a test, JAX's caches are cleared and the compiled programs' mappings are freed (a worker of
the whole suite otherwise reaches the kernel's limit and dies in the next compile)."""

import os
import pathlib
import subprocess
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent

INNER = """
import jax, jax.numpy as jnp, pathlib
OUT = pathlib.Path(__file__).with_name("maps")
FUNCS = [jax.jit(lambda x, k=k: jnp.tanh(x * k) + jnp.sin(x)) for k in range(60)]

def _maps():
    return sum(1 for _ in open("/proc/self/maps"))

def test_compiles_sixty_programs():
    for f in FUNCS:
        f(jnp.ones(8)).block_until_ready()
    OUT.write_text(str(_maps()))

def test_after_it():
    with_programs = int(OUT.read_text())
    OUT.write_text(f"{with_programs} {_maps()}")
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")
@pytest.mark.parametrize("limit, freed", [("1000000", False), ("100", True)])
def test_a_process_over_the_limit_frees_its_programs_mappings(tmp_path, limit, freed):
    (tmp_path / "test_inner.py").write_text(INNER)
    env = {k: v for k, v in os.environ.items() if k not in ("AZDB_TEST_COMPILE_LOG", "PYTEST_XDIST_WORKER")}
    env.update(AZDB_TEST_MAX_MAPS=limit, PYTHONPATH=str(TESTS))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_inner.py")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with_programs, after = map(int, (tmp_path / "maps").read_text().split())
    if freed:  # sixty programs' code unmapped (each keeps at least one mapping)
        assert after <= with_programs - 60, (with_programs, after)
    else:
        assert after >= with_programs, (with_programs, after)
