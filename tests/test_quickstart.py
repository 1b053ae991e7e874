"""The README's first contact, for real: its commands, and the package installed outside the checkout.

- ``bash scripts/demo.sh`` (the main job) with a tiny override: trains the demo team,
  prints the summary table and the picture's path, keeps library logs quiet;
- ``bash scripts/test.sh`` on one test file (the test command itself works);
- a wheel and an sdist built from a copy of the tracked files (as a fresh clone has them)
  through pyproject.toml's build system, the sdist holding LICENSE, CITATION.cff and the
  package data; the wheel installed into a new virtual environment in a temporary
  directory, then, from another temporary directory, the four console scripts:
  ``azdb-train`` (the demo and a chess run), ``azdb-eval``, ``azdb-alphabeta`` and
  ``azdb-uci`` answering ``uci``, ``isready`` and ``go``.

The new environment installs the package with ``--no-deps`` and sees the
dependencies of the test environment through a ``.pth`` line (the same pins from the
same setup.py): downloading JAX and friends again would take minutes and a network,
and would test pip rather than this package. What is tested is that the package,
its data files and its console scripts work without the checkout.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import chess
import pytest

pytestmark = pytest.mark.slow

REPO = pathlib.Path(__file__).resolve().parents[1]

TINY_DEMO = [
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
    "selfplay.num_games=8", "selfplay.num_plies=4", "selfplay.sample_plies=2", "replay.capacity=256",
    "run.batch_size=16", "run.learner_steps=1", "run.num_iterations=2", "run.eval_every=2", "run.eval_games=4",
    "run.eval_simulations=4", "run.checkpoint_every=2",
]
TINY_CHESS = [
    "network.channels=8", "network.num_blocks=1", "network.value_hidden=8", "search.num_simulations=4",
    "selfplay.num_games=4", "selfplay.num_plies=4", "selfplay.sample_plies=4", "replay.capacity=256",
    "run.batch_size=16", "run.learner_steps=1", "run.num_iterations=1", "run.eval_every=0",
    "run.eval_simulations=4", "run.checkpoint_every=1",
]


def _overrides(items):
    return [f"--override={item}" for item in items]


def _check_demo_output(result, workdir: pathlib.Path, cwd: pathlib.Path = REPO):
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "a team of 3 on connect_four after 2 iterations" in out, out
    assert "| player | λ_i | score vs random (W/D/L) | score vs minimax2 (W/D/L) | d_i |" in out
    assert out.count("\n| 0 | 1 |") == 1 and "\n| 2 | " in out
    picture = cwd / out.split("picture: ")[1].split()[0]
    assert picture.resolve() == (cwd / workdir / "summary.png").resolve()
    assert picture.is_file() and picture.stat().st_size > 10_000
    assert "I0" not in result.stderr and "I1" not in result.stderr and "Traceback" not in result.stderr


def test_demo_script_with_a_tiny_override(tmp_path):
    workdir = tmp_path / "demo"
    result = subprocess.run(["bash", "scripts/demo.sh", f"--workdir={workdir}", "--summary_positions=8",
                             *_overrides(TINY_DEMO)], cwd=REPO, capture_output=True, text=True, timeout=1500)
    _check_demo_output(result, workdir)


def test_test_script_runs(tmp_path):
    # The inner run's tests are not this suite's: they stay out of its compile log.
    env = {k: v for k, v in os.environ.items() if k != "AZDB_TEST_COMPILE_LOG"}
    env["AZDB_TEST_WORKERS"] = "0"
    result = subprocess.run(["bash", "scripts/test.sh", "tests/test_uci_protocol.py", "-q", "-p", "no:cacheprovider"],
                            cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "[100%]" in result.stdout and "F" not in result.stdout.split("[")[0]


def _tracked_copy(destination: pathlib.Path) -> None:
    """The files a fresh clone has (git's tracked files, plus new files not ignored)."""
    listing = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    for name in listing:
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def test_installed_package_outside_the_checkout(tmp_path):
    source, venv, work = tmp_path / "src", tmp_path / "venv", tmp_path / "work"
    _tracked_copy(source)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    site = pathlib.Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                        "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    (site / "azdb_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # A wheel and an sdist built the PEP 517 way (pyproject.toml's build system, with the test
    # environment's setuptools and wheel); the wheel is what goes into the new environment.
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
                            f"--outdir={dist}", str(source)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,), (sdist,) = dist.glob("azdb_jax-*.whl"), dist.glob("azdb_jax-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {pathlib.Path(*pathlib.Path(n).parts[1:]).as_posix() for n in archive.getnames()}
    for name in ("LICENSE", "CITATION.cff", "pyproject.toml", "setup.py", "azdb_jax/data/connect_four_positions.csv",
                 "azdb_jax/pretrained/gardner/MANIFEST.json"):
        assert name in names, f"{name} missing from {sdist.name}"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names), names
    assert "azdb_jax/pretrained/connect_four/MANIFEST.json" in names
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                              str(wheel)], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def run(*args, **kwargs):
        return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=work, capture_output=True, text=True,
                              env=env, timeout=1500, **kwargs)

    where = run("python", "-c", "import azdb_jax, azdb_jax.data as d; print(azdb_jax.__file__); "
                                "print(len(d.load_paper_positions()))")
    assert where.returncode == 0, where.stderr[-2000:]
    assert where.stdout.startswith(str(venv)), where.stdout  # the installed copy, not the checkout
    # The shipped teams are in the installed package, whole (every file checked), and load.
    shipped = run("python", "-c", "import azdb_jax.pretrained as p; print(p.path('connect_four')); "
                                  "print(p.load('connect_four').name)")
    assert shipped.returncode == 0, shipped.stderr[-2000:]
    assert shipped.stdout.startswith(str(venv)) and "pretrained:connect_four@120" in shipped.stdout, shipped.stdout

    demo = run("azdb-train", "--workdir=demo", "--summary_positions=8", *_overrides(TINY_DEMO))
    _check_demo_output(demo, pathlib.Path("demo"), work)
    summary = run("azdb-eval", "--workdir=demo", "--positions=8", "--out=eval")
    assert summary.returncode == 0 and "| player | λ_i |" in summary.stdout, summary.stderr[-2000:]
    assert (work / "eval" / "summary.png").is_file()
    bad = run("azdb-eval", "--workdir=nowhere")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "nowhere" in bad.stderr

    alphabeta = run("azdb-alphabeta", "--variant=gardner", input="uci\nisready\nposition startpos\ngo depth 2\nquit\n")
    assert alphabeta.returncode == 0 and "uciok" in alphabeta.stdout and "readyok" in alphabeta.stdout, (
        alphabeta.stdout[-2000:] + alphabeta.stderr[-2000:])
    assert "\nbestmove " in alphabeta.stdout

    chess_run = run("azdb-train", "--preset=demo_chess", "--workdir=chess", "--summary=false", *_overrides(TINY_CHESS))
    assert chess_run.returncode == 0, chess_run.stderr[-3000:]
    engine = subprocess.Popen([str(venv / "bin" / "azdb-uci"), "--checkpoint=chess"], cwd=work, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        engine.stdin.write("uci\nisready\nposition startpos moves e2e4\ngo nodes 8\n")
        engine.stdin.flush()
        lines = []
        for line in engine.stdout:
            lines.append(line.strip())
            if line.startswith("bestmove"):
                break
        engine.stdin.write("quit\n")
        engine.stdin.flush()
        assert engine.wait(timeout=60) == 0
    finally:
        engine.kill()
    assert "uciok" in lines and "readyok" in lines, lines
    info = next(line for line in lines if line.startswith("info depth"))
    assert " nodes 8 " in info and " score cp " in info
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(lines[-1].split()[1]) in board.legal_moves
