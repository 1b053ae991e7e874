"""The notebooks run top to bottom against the current library (outputs not compared)."""

import json
import pathlib

import pytest

pytestmark = pytest.mark.slow


def _reads_results(path: pathlib.Path) -> bool:
    """Figure notebooks draw from a results folder (AZDB_RESULTS: a reproduction's;
    AZDB_SKILL_ROOT: the skill-compatibility tables'); tests/test_repro_*.py and
    tests/test_skill_notebook.py execute them at the ci scale and check their numbers."""
    text = path.read_text()
    return "AZDB_RESULTS" in text or "AZDB_SKILL_ROOT" in text


# The tutorial has a test of its own that checks what it prints (tests/test_tutorial.py).
COLABS = [p for p in sorted((pathlib.Path(__file__).resolve().parents[1] / "colabs").glob("*.ipynb"))
          if not _reads_results(p) and p.name != "tutorial.ipynb"]


@pytest.mark.parametrize("path", COLABS, ids=lambda p: p.name)
def test_notebook_runs(path, capsys):
    notebook = json.loads(path.read_text())
    namespace = {"display": print, "__name__": "__notebook__"}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        try:
            exec(compile(source, f"{path.name}[cell {index}]", "exec"), namespace)  # pylint: disable=exec-used
        except Exception as e:  # pylint: disable=broad-except
            pytest.fail(f"{path.name} cell {index} failed: {e!r}\n{source}")
    assert capsys.readouterr().out  # the notebook printed its results
