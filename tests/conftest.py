"""Shared fixtures: where the third-party test data lives.

Also: a persistent JAX compilation cache shared by the test processes, and the XLA flags
they compile with (below).

The data are never part of the repository; point ``AZDB_DATA_DIR`` at a folder laid
out like ``shared/data`` (sts/, puzzles/, openings/, books/, suites/). Without it the
tests that need data are skipped, unless ``AZDB_REQUIRE_DATA=1`` (CI sets it), in
which case they fail.
"""

import contextlib
import json
import os
import pathlib
import tempfile

# The test processes compile with LLVM's optimisations off (``--xla_backend_optimization_level=0``),
# and so do the notebooks, scripts and engines they start (they inherit the environment): the
# suite is mostly compiling, and these programs compile 20-50 % faster while running up to ~3x
# slower. Over the whole suite that is 36 min against 49 (BUILD.md, "How long it takes").
# ``AZDB_TEST_XLA_UNOPTIMIZED=0`` keeps XLA's defaults. The user's flags stay in
# AZDB_TEST_USER_XLA_FLAGS (xdist workers inherit a changed XLA_FLAGS) for what must run as the
# user's programs do: the learning checks, which train for minutes in a process of their own, and
# the tests whose subject is the default compile itself (``in_user_xla_process``).
LEVEL_0 = "--xla_backend_optimization_level=0"
USER_XLA_FLAGS = os.environ.setdefault("AZDB_TEST_USER_XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
if os.environ.get("AZDB_TEST_XLA_UNOPTIMIZED", "1") == "1" and "xla_backend_optimization_level" not in USER_XLA_FLAGS:
    os.environ["XLA_FLAGS"] = f"{USER_XLA_FLAGS} {LEVEL_0}".strip()


def user_xla_env() -> dict:
    """This process's environment for a subprocess that compiles with the user's XLA flags."""
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTEST_XDIST_WORKER")}
    env["AZDB_TEST_XLA_UNOPTIMIZED"] = "0"  # a test process started there keeps the user's flags too
    if USER_XLA_FLAGS:
        env["XLA_FLAGS"] = USER_XLA_FLAGS
    return env


def in_user_xla_process(request) -> bool:
    """For a test whose subject is how XLA compiles by default (e.g. a program built with other
    compiler options equals the default build bit for bit): in a process whose flags differ from
    the user's (``LEVEL_0``), runs the test again in a pytest process of its own with the user's
    flags, asserts that it passed and returns True (the test then returns); else returns False
    (the test runs here)."""
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top

    if os.environ.get("XLA_FLAGS", "") == USER_XLA_FLAGS:
        return False
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           request.node.nodeid], cwd=_REPO, env=user_xla_env(), capture_output=True, text=True,
                          timeout=1800, check=False)
    assert proc.returncode == 0, f"{request.node.nodeid} with the user's XLA flags:\n{proc.stdout[-6000:]}"
    return True


import jax  # noqa: E402  (XLA reads XLA_FLAGS when its first backend is created, after this import)
import pytest  # noqa: E402

# Many tests build the same small programs (in several xdist workers, in subprocesses and
# across repeated training runs); a shared persistent compilation cache compiles each once.
# Programs that take at least half a second to compile are cached (the notebooks' kernels and
# the scripts the tests start inherit the setting). Caching every program (threshold 0) took
# four notebook tests 15 % less time but wrote ~15x as many entries (8,350 against 552 in a
# whole suite run), each a serialization of the executable under the cache's lock, and a
# worker once aborted inside such a write: not worth the exposure.
# One folder per user: another user's folder in the shared temporary directory is not
# writable, and JAX would warn on every compile (breaking the tests that read stderr).
_JIT_CACHE = os.environ.setdefault(
    "JAX_COMPILATION_CACHE_DIR",
    os.path.join(tempfile.gettempdir(), f"azdb_jax_test_jit_cache_{getattr(os, 'getuid', lambda: 'user')()}"))
try:
    os.makedirs(_JIT_CACHE, exist_ok=True)
    _CACHE_WRITABLE = os.access(_JIT_CACHE, os.W_OK)
except OSError:
    _CACHE_WRITABLE = False
if _CACHE_WRITABLE:
    jax.config.update("jax_compilation_cache_dir", _JIT_CACHE)
    _MIN_SECONDS = os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(_MIN_SECONDS))
else:
    del os.environ["JAX_COMPILATION_CACHE_DIR"]  # subprocesses compile without a cache too

_REPO = pathlib.Path(__file__).resolve().parents[1]

# Every program XLA compiles for the CPU keeps memory mappings of its machine code while
# JAX's caches hold it, and a worker of the whole suite compiles thousands: at the kernel's
# limit (vm.max_map_count, 65,530 by default) LLVM cannot map the next program, most likely
# why workers died of a segmentation fault in the compile, serialisation or deserialisation
# that came next (late in three whole-suite runs, one 47 minutes in; a worker held 16,000 mappings
# after 15 minutes). After each test, a process holding more than AZDB_TEST_MAX_MAPS mappings
# (default 20,000) clears JAX's caches, which frees the programs nothing else holds; the
# programs later tests need again come from the persistent cache or are compiled again.
_MAX_MAPS = int(os.environ.get("AZDB_TEST_MAX_MAPS", "20000"))


def _memory_mappings() -> int:
    """This process's memory mappings (0 where /proc is missing)."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    del item, nextitem
    if _memory_mappings() > _MAX_MAPS:
        import gc  # pylint: disable=g-import-not-at-top

        jax.clear_caches()
        gc.collect()


def _session_folder(tmp_path_factory) -> pathlib.Path:
    """A folder shared by this session's processes: under xdist each worker's basetemp sits in
    the session's folder; without xdist the basetemp is the session's folder itself (its
    parent is shared by every session)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True)
def _close_figures():
    """Closes the matplotlib figures a test drew and left open (the figure functions return
    them to the caller): pyplot keeps every open figure, and a worker runs hundreds of tests."""
    yield
    import sys  # pylint: disable=g-import-not-at-top

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


# ``AZDB_TEST_COMPILE_LOG=FILE``: every test's compile, trace and cache-hit counts and
# seconds (JAX's monitoring events in this process; notebooks' kernels and subprocesses are
# not seen) appended to FILE.<worker> as JSON lines; ``benchmarks/suite_compiles.py`` sums them.
_COMPILE_LOG = os.environ.get("AZDB_TEST_COMPILE_LOG")
_COMPILE_EVENTS = {"/jax/core/compile/backend_compile_duration": "compile",
                   "/jax/core/compile/jaxpr_trace_duration": "trace",
                   "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
                   "/jax/compilation_cache/compile_time_saved_sec": "cache_hit"}
_compile_counts: dict = {}


def _count_compile_event(event, seconds, **_):
    name = _COMPILE_EVENTS.get(event)
    if name is not None:
        _compile_counts[name] = _compile_counts.get(name, 0) + 1
        _compile_counts[name + "_s"] = _compile_counts.get(name + "_s", 0.0) + seconds


if _COMPILE_LOG:
    from jax import monitoring  # pylint: disable=g-import-not-at-top

    monitoring.register_event_duration_secs_listener(_count_compile_event)


@contextlib.contextmanager
def counted_compiles():
    """Yields a list that gets one entry for every program XLA compiles inside the block
    (persistent-cache hits compile nothing)."""
    from jax import monitoring  # pylint: disable=g-import-not-at-top

    compiles = []

    def count(event, seconds, **_):
        del seconds
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(event)

    monitoring.register_event_duration_secs_listener(count)
    try:
        yield compiles
    finally:
        monitoring.unregister_event_duration_listener(count)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _COMPILE_LOG:
        yield
        return
    import time  # pylint: disable=g-import-not-at-top

    _compile_counts.clear()
    start, cpu = time.time(), time.process_time()
    yield
    record = dict(test=item.nodeid, wall_s=round(time.time() - start, 3), cpu_s=round(time.process_time() - cpu, 3),
                  **{k: round(v, 3) for k, v in _compile_counts.items()})
    with open(f"{_COMPILE_LOG}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}", "a") as f:
        f.write(json.dumps(record) + "\n")


def pytest_collection_modifyitems(items):
    """Tests of the trained ``ci`` results folder (a training run per arm, then notebooks)
    are end-to-end: marked ``slow`` like the modules that mark themselves."""
    for item in items:
        if "ci_results" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(scope="session")
def connect_four_solver():
    """The connect-four solver (``games.connect_four_solver.Solver``): skipped with the install
    hint when ``bitbully`` is missing (failed when ``AZDB_REQUIRE_DATA=1``, as on CI)."""
    from azdb_jax.games import connect_four_solver  # pylint: disable=g-import-not-at-top

    return _engine_path(connect_four_solver.solver, connect_four_solver.SolverNotFound)


@pytest.fixture(scope="session")
def ci_results(tmp_path_factory) -> pathlib.Path:
    """A results folder of the reproduction's ``ci`` scale, trained once per test session.

    Shared by the xdist workers (the first to arrive trains every run under a file lock; the
    others wait and reuse it). Figure groups add their reports and figures to it. With
    ``AZDB_TEST_CI_RESULTS`` naming a trained ci folder, a copy of it is used instead of training
    (its evaluation reports are dropped, so every group is evaluated again).
    """
    import fcntl  # pylint: disable=g-import-not-at-top
    import shutil  # pylint: disable=g-import-not-at-top

    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top

    shared = _session_folder(tmp_path_factory)
    root = shared / "ci_results"
    with open(shared / "ci_results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        given = os.environ.get("AZDB_TEST_CI_RESULTS")
        if given and not root.exists():
            shutil.copytree(given, root, ignore=shutil.ignore_patterns("eval", "figures"))
        results = reproduction.Results(root, "ci")
        reproduction.train_runs(results, progress=False)
        fcntl.flock(lock, fcntl.LOCK_UN)
    return root


# ------------------------------------------------------------------ shared trained runs

# One tiny trained run per registered game, trained once per test session and shared by every
# test that needs "some trained run of game X" (``trained_run``). A diverse team of three
# (λ = 0.5, so that φ, ψ and the intrinsic reward take part) on the smallest network and
# search the pipeline allows, two iterations with a checkpoint and an evaluation after each
# (the second evaluation plays the previous network too). A test that needs another
# configuration trains its own (or trains a variant of ``trained_run_config(game)``, whose
# unchanged programs the persistent compilation cache and ``runner.programs`` share).
TRAINED_RUN_PLAYERS = 3
TRAINED_RUN_ITERATIONS = 2
TRAINED_RUN_EVAL_GAMES = 2
TRAINED_RUN_EVAL_PLIES = 12  # evaluation games are cut here (or at the game's own end, if sooner)


def trained_run_config(game_id: str):
    """The configuration of ``trained_run(game_id)`` (the same for every test of that game)."""
    from azdb_jax import config as config_lib  # pylint: disable=g-import-not-at-top
    from azdb_jax import games  # pylint: disable=g-import-not-at-top
    from azdb_jax.presets import get_preset  # pylint: disable=g-import-not-at-top

    max_plies = games.max_plies(games.make(game_id))
    return config_lib.apply_overrides(get_preset("demo"), [
        f"env.name={game_id}", f"team.num_players={TRAINED_RUN_PLAYERS}", "team.lam=0.5", "diversity.l0=0.8",
        "team.matchmaker=uniform", "network.channels=4", "network.num_blocks=1", "network.value_hidden=4",
        "search.num_simulations=2", "selfplay.num_games=2", "selfplay.num_plies=4", "selfplay.sample_plies=2",
        "replay.capacity=64", "run.batch_size=8", "run.learner_steps=1", f"run.num_iterations={TRAINED_RUN_ITERATIONS}",
        "run.eval_every=1", f"run.eval_games={TRAINED_RUN_EVAL_GAMES}", "run.eval_simulations=2",
        f"run.eval_max_plies={min(TRAINED_RUN_EVAL_PLIES, max_plies)}", "run.checkpoint_every=1",
    ])


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    """``trained_run(game_id)``: the folder of that game's tiny trained run (``trained_run_config``).

    Trained once per test session: the first xdist worker to ask for a game trains it under
    that game's file lock, the others wait and reuse it (games train in parallel). The run is
    shared: read it (``loading.load_team``, ``runs.load_run``, metrics), never write into it;
    a test that resumes, continues or damages a run copies it first (``shutil.copytree``).
    ``train_summary(run)`` is what ``runner.train`` returned for it.
    """
    import fcntl  # pylint: disable=g-import-not-at-top
    import shutil  # pylint: disable=g-import-not-at-top

    from azdb_jax import games, runner  # pylint: disable=g-import-not-at-top

    folder = _session_folder(tmp_path_factory) / "trained_runs"
    folder.mkdir(exist_ok=True)
    made = {}

    def get(game_id: str) -> pathlib.Path:
        if game_id not in games.IDS:
            raise ValueError(f"no registered game {game_id!r}; registered: {', '.join(games.IDS)}")
        if game_id not in made:
            run = folder / game_id
            done = folder / f"{game_id}.train_summary.json"
            with open(folder / f"{game_id}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    if not done.exists():
                        if run.exists():  # a worker died while training it
                            shutil.rmtree(run)
                        summary = runner.train(trained_run_config(game_id), run, progress=False)
                        done.write_text(json.dumps(summary, default=_plain))
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
            made[game_id] = run
        return made[game_id]

    return get


def _plain(value):
    """JSON for the numpy and JAX scalars of a training summary."""
    return value.item() if hasattr(value, "item") else str(value)


def train_summary(run) -> dict:
    """What ``runner.train`` returned when ``trained_run`` trained ``run``."""
    run = pathlib.Path(run)
    return json.loads((run.parent / f"{run.name}.train_summary.json").read_text())


def run_notebook(path, results_root, timeout: int = 900) -> dict:
    """Executes a notebook of ``colabs/`` in a fresh kernel (nbclient) with ``AZDB_RESULTS=results_root``.

    Returns the executed notebook; a failing cell fails the test with its traceback.
    """
    import nbclient  # pylint: disable=g-import-not-at-top
    import nbformat  # pylint: disable=g-import-not-at-top

    notebook = nbformat.read(str(path), as_version=4)
    previous = os.environ.get("AZDB_RESULTS")
    os.environ["AZDB_RESULTS"] = str(results_root)
    try:
        client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                         resources={"metadata": {"path": str(_REPO)}})
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{pathlib.Path(path).name} failed:\n{e}")
    finally:
        if previous is None:
            os.environ.pop("AZDB_RESULTS", None)
        else:
            os.environ["AZDB_RESULTS"] = previous
    return notebook


def figure_numbers(results_root, name: str) -> dict:
    """The numbers saved beside ``figures/<name>.png`` (which must exist and be non-empty)."""
    path = pathlib.Path(results_root) / "figures" / f"{name}.json"
    assert path.is_file() and path.with_suffix(".png").stat().st_size > 0, name
    return json.loads(path.read_text())


def stderr_of(values) -> float:
    """Standard error of the mean, ``std(ddof=1) / sqrt(N)``, computed here independently."""
    import numpy as np  # pylint: disable=g-import-not-at-top

    values = np.asarray(values, float)
    return float(np.std(values, ddof=1) / np.sqrt(values.size))
