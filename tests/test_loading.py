"""azdb_jax.cli and azdb_jax.evaluation.loading: input errors end a script with their message, others propagate."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import checkpoint, data  # noqa: E402
from azdb_jax import cli
from azdb_jax.evaluation import loading  # noqa: E402


@pytest.mark.parametrize("error", [
    FileNotFoundError("suite file not found: /x.epd"),
    data.DataFormatError("/x.epd", 2, "bad EPD position"),
    checkpoint.CheckpointError("checkpoint /run/checkpoints/40 is unreadable"),
    ValueError("unknown selection rule 'best'; valid rules: visit, value, lcb, gap"),
])
def test_input_errors_exit_with_their_message(error, capsys):
    def main(argv):
        raise error

    with pytest.raises(SystemExit) as exit_info:
        cli.input_errors_exit(main)(["script"])
    assert exit_info.value.code == 2
    assert str(error) in capsys.readouterr().err


def test_other_errors_propagate():
    def main(argv):
        raise RuntimeError("engine crashed")

    with pytest.raises(RuntimeError, match="engine crashed"):
        cli.input_errors_exit(main)(["script"])


def test_load_team_names_a_missing_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_run"):
        loading.load_team(tmp_path / "no_run")
