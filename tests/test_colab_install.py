"""The notebooks as a Colab user opens them: every notebook starts with the same install cell
and has a parameter cell, and that install cell, run in a fresh environment outside the
checkout with ``AZDB_JAX_SOURCE`` a ``git+file://`` URL of a clone, installs the library
from git (the path a Colab user takes, with the project's git URL)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "colabs").glob("*.ipynb"))


def _cells(path: pathlib.Path, tag: str):
    cells = json.loads(path.read_text())["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if tag in c["metadata"].get("tags", [])]


def _install_source() -> str:
    ((_, source),) = _cells(REPO / "colabs" / "tutorial.ipynb", "install")
    return source


def test_every_notebook_opens_with_the_same_install_cell_and_a_parameter_cell():
    assert len(NOTEBOOKS) >= 13
    install = _install_source()
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        assert cells[0]["cell_type"] == "markdown", path.name  # the title, then the install cell
        assert _cells(path, "install") == [(1, install)], path.name
        params = _cells(path, "parameters")
        assert len(params) == 1 and params[0][0] == 2, path.name  # right after the install cell
        assert "=" in params[0][1], path.name


def _git_clone_of_the_tree(destination: pathlib.Path) -> str:
    """A git repository of the files a fresh clone has (the tracked files as they are now,
    plus new ones not ignored), committed; returns its ``git+file://`` URL."""
    listing = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    for name in listing:
        if (REPO / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, destination / name)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "tree"]):
        subprocess.run(git + args, cwd=destination, check=True, capture_output=True)
    return f"git+file://{destination}"


@pytest.mark.slow
def test_the_install_cell_installs_from_a_git_url_in_a_fresh_environment(tmp_path):
    url = _git_clone_of_the_tree(tmp_path / "repo")
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    site = pathlib.Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies come from the test environment (pip sees them as installed), so the
    # cell installs azdb_jax itself from the git URL; downloading JAX again would test pip.
    (site / "azdb_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "AZDB_JAX_SOURCE")}
    cell = _install_source()

    missing = subprocess.run([python, "-c", cell], cwd=work, capture_output=True, text=True, env=env, timeout=300)
    assert missing.returncode != 0 and "set os.environ['AZDB_JAX_SOURCE']" in missing.stderr, missing.stderr[-2000:]

    installed = subprocess.run([python, "-c", cell], cwd=work, capture_output=True, text=True, timeout=900,
                               env=dict(env, AZDB_JAX_SOURCE=url))
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-3000:]
    check = subprocess.run([python, "-c", "import azdb_jax, azdb_jax.pretrained as p; print(azdb_jax.__file__); "
                                          "print(p.load('connect_four').name)"],
                           cwd=work, capture_output=True, text=True, env=env, timeout=600)
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stdout.startswith(str(venv)) and "pretrained:connect_four" in check.stdout, check.stdout
    again = subprocess.run([python, "-c", cell], cwd=work, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0 and not again.stdout.strip(), again.stderr[-2000:]  # importable: nothing to do


def test_figure_notebooks_default_to_a_folder_they_can_make(tmp_path, monkeypatch):
    # Each reproduction notebook's default folder is a ci scale's, trained first when missing.
    from azdb_jax import reproduction  # pylint: disable=g-import-not-at-top

    defaults = {}
    for path in NOTEBOOKS:
        ((_, params),) = _cells(path, "parameters")
        if "reproduction.open_or_train(RESULTS, SCALE)" in path.read_text().replace('\\"', '"'):
            namespace = {}
            exec(params, namespace)  # pylint: disable=exec-used
            defaults[path.name] = (namespace["RESULTS"], namespace["SCALE"])
    assert len(defaults) == 9, sorted(defaults)
    for name, (folder, scale) in defaults.items():
        assert scale in reproduction.SCALES and folder == f"results/{scale}", name

    trained = []
    monkeypatch.setattr(reproduction, "train_runs", lambda results, **kw: trained.append(results.scale.name))
    made = reproduction.open_or_train(tmp_path / "new", "ci", progress=False)
    assert trained == ["ci"] and made.scale.name == "ci"
    made.update_manifest("runs", "az_s0", {"done": True})  # now the folder exists: opened, not trained
    assert reproduction.open_or_train(tmp_path / "new", "ci_sweep").scale.name == "ci" and trained == ["ci"]
