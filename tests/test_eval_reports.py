"""azdb_jax/evaluation/reports.py and team.py: report files by hand, Agent validation."""

import json
import math

import numpy as np
import pytest

from azdb_jax import games
from azdb_jax import search as search_lib
from azdb_jax.evaluation import reports
from azdb_jax.files import write_atomic
from azdb_jax.agent import Agent
from azdb_jax.evaluation.team import check_num_players


def test_write_report_json_and_csv_by_hand(tmp_path):
    rows = [{"id": "a", "score": np.float32(0.5)}, {"id": "b", "solved": np.int64(1), "value": math.nan}]
    json_path, csv_path = reports.write_report(tmp_path / "sub" / "r", {"mean": np.float64(0.25), "bad": math.inf,
                                                                        "per": {"x": np.arange(2)}}, rows)
    assert (json_path.name, csv_path.name) == ("r.json", "r.csv")
    saved = json.loads(json_path.read_text())
    assert saved["summary"] == {"mean": 0.25, "bad": None, "per": {"x": [0, 1]}}
    assert saved["rows"] == [{"id": "a", "score": 0.5}, {"id": "b", "solved": 1, "value": None}]
    # The header is the union of the rows' keys in first-seen order; missing and NaN cells are empty.
    assert csv_path.read_text() == "id,score,solved,value\na,0.5,,\nb,,1,\n"
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["r.csv", "r.json"]  # no temporary left


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path):
    path = write_atomic(tmp_path / "f.txt", "old")
    with pytest.raises(TypeError):
        write_atomic(path, None)  # type: ignore[arg-type]
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_team_validation_and_size_check():
    env = games.make("tic_tac_toe")
    config = search_lib.SearchConfig(num_simulations=4)
    team = Agent(env=env, apply_fn=None, params=None, num_players=3, search_config=config, name="t")
    assert team.with_simulations(9).search_config.num_simulations == 9 and team.search_config.num_simulations == 4
    for bad in (dict(num_players=0), dict(num_players=2.0), dict(lambdas=(1.0, 0.5, 1.5)),
                dict(lambdas=(0.9, 1.0, 1.0)), dict(lambdas=(1.0, 0.9)), dict(psi=np.zeros((2, 18))), dict(l0=0.0)):
        with pytest.raises(ValueError):
            Agent(**{**dict(env=env, apply_fn=None, params=None, num_players=3, search_config=config), **bad})
    with pytest.raises(ValueError, match="num_simulations"):
        team.with_simulations(0)
    check_num_players(team, None)
    check_num_players(team, 3)
    with pytest.raises(ValueError, match="team of 3 player.*but 2 were asked"):
        check_num_players(team, 2)
