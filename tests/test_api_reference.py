"""The API reference (docs/api): every module of the package on its page, every public module
exported by the package, and the documentation site (``scripts/docs.sh``: the reference, the
tutorial and the pages) built free of warnings (they are errors there)."""

import importlib
import os
import pathlib
import re
import subprocess
import sys

import pytest

import azdb_jax

REPO = pathlib.Path(__file__).resolve().parents[1]
API = REPO / "docs" / "api"


def _modules():
    out = []
    for path in sorted((REPO / "azdb_jax").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] != "__main__":
            out.append(".".join(parts))
    return out


def test_every_module_is_on_the_reference_page_once():
    listed = re.findall(r"^\.\. automodule:: ([\w.]+)$", (API / "index.rst").read_text(), flags=re.M)
    assert sorted(listed) == sorted(_modules()), (
        f"not listed: {sorted(set(_modules()) - set(listed))}; not modules: {sorted(set(listed) - set(_modules()))}")


def test_the_package_exports_its_public_modules_lazily():
    code = "import sys, azdb_jax; print(sorted(m for m in sys.modules if m.startswith('azdb_jax')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['azdb_jax']"  # importing the package imports none of its modules
    for name in azdb_jax.__all__:
        assert getattr(azdb_jax, name) is importlib.import_module(f"azdb_jax.{name}")
    assert set(azdb_jax.__all__) <= set(dir(azdb_jax))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(azdb_jax, "nope")


@pytest.mark.slow
def test_the_site_builds_without_warnings(tmp_path):
    # The script a user runs (scripts/docs.sh): the API reference, the tutorial and the pages,
    # Sphinx's warnings as errors.
    out = tmp_path / "html"
    env = dict(os.environ, PYTHON=sys.executable)
    build = subprocess.run(["bash", "scripts/docs.sh", str(out)], capture_output=True, text=True, cwd=REPO,
                           timeout=900, env=env)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-6000:]
    assert not (tmp_path / "html.partial").exists()
    page = (out / "docs" / "api" / "index.html").read_text()
    for name in ("azdb_jax.pretrained.load", "azdb_jax.agent.Agent", "azdb_jax.runs.load_agent", "azdb_jax.arena.play_games"):
        assert f'id="{name}"' in page, name
    tutorial = (out / "colabs" / "tutorial.html").read_text()
    assert "a trained team, its players, its search" in tutorial  # its title, from the notebook
    assert tutorial.count('class="highlight') >= 5  # its code cells, rendered as code
    results = (out / "docs" / "results.html").read_text()
    assert 'href="method.html#training-levers-from-the-field-off-by-default"' in results  # a page-to-page link
    for name in ("method", "performance", "reproduction"):
        assert (out / "docs" / f"{name}.html").is_file(), name
    index = (out / "index.html").read_text()
    assert "docs/results.html" in index and "colabs/tutorial.html" in index and "docs/api/index.html" in index
