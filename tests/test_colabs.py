"""The notebooks run top to bottom against the current library (outputs not compared)."""

import json
import pathlib

import pytest


def _reads_results(path: pathlib.Path) -> bool:
    """Figure notebooks draw from a reproduction's results folder (AZDB_RESULTS); the
    tests/test_repro_*.py files execute them on the ci folder and check their numbers."""
    return "AZDB_RESULTS" in path.read_text()


COLABS = [p for p in sorted((pathlib.Path(__file__).resolve().parents[1] / "colabs").glob("*.ipynb"))
          if not _reads_results(p)]


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
