"""azdb_jax/evaluation/move_choices.py and run_summary.py: hand-computed move comparisons,
the table and picture of a real (tiny) run."""

import json
import pathlib
import sys

import jax
import numpy as np
import pytest

from azdb_jax import config as config_lib
from azdb_jax import games, presets, runner
from azdb_jax.evaluation import loading, move_choices, run_summary

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_trainer import TINY  # noqa: E402  pylint: disable=g-import-not-at-top


def test_compare_moves_by_hand():
    moves = np.array([[0, 1, 2, 3],
                      [0, 1, 5, 4],
                      [0, 7, 5, 4]])
    choices = move_choices.compare_moves(moves)
    assert choices.distinct.tolist() == [1, 2, 2, 2]
    assert choices.distinct_mean == pytest.approx(7 / 4)
    # player 0's move is nobody else's at positions 2 and 3; player 1's nowhere
    # (position 1 shares with 0, positions 2-3 with 2); player 2's at position 1
    np.testing.assert_allclose(choices.unique_share, [0.5, 0.0, 0.25])
    np.testing.assert_allclose(choices.disagreement, [[0, 0.5, 0.75], [0.5, 0, 0.25], [0.75, 0.25, 0]])
    assert np.isnan(move_choices.compare_moves(moves[:1]).unique_share[0])
    with pytest.raises(ValueError):
        move_choices.compare_moves(np.zeros((2, 0)))


def test_random_positions_are_playable_and_vary():
    env = games.make("connect_four")
    states = move_choices.random_positions(env, 32, jax.random.PRNGKey(0), max_plies=6)
    assert not np.asarray(states.terminated).any()
    plies = np.asarray(states._step_count)
    assert plies.min() >= 0 and plies.max() <= 6 and len(set(plies.tolist())) > 3


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("summary") / "run"
    config = config_lib.apply_overrides(presets.get_preset("demo"), TINY + ["team.num_players=3", "team.lam=0.5"])
    runner.train(config, workdir, progress=False)
    return workdir


@pytest.mark.slow
def test_summary_of_a_run(tiny_run):
    team = loading.load_team(tiny_run)
    summary = run_summary.summarize_run(tiny_run, team=team, num_positions=16)
    records = [json.loads(line) for line in (tiny_run / "metrics.jsonl").read_text().splitlines()]
    last = [r for r in records if r["kind"] == "train"][-1]
    assert summary.d_final == [last[f"d_{i}"] for i in range(3)]
    assert summary.lambdas == [1.0, 0.5, 0.5] and summary.scores_from == "metrics.jsonl@4"
    final_eval = {(r["player"], r["opponent"]): r["score"] for r in records if r["kind"] == "eval" and r["iteration"] == 4}
    for name, scores in summary.scores.items():
        assert scores == [final_eval[(j, name)] for j in range(3)]
    assert set(summary.scores) == {"random", "perfect", "minimax2"}  # tic-tac-toe's references, not "previous"
    moves = move_choices.player_moves(team, move_choices.random_positions(team.env, 16, jax.random.PRNGKey(5)),
                                      jax.random.PRNGKey(6))
    assert moves.shape == (3, 16)
    table = run_summary.format_table(summary)
    assert "| player | λ_i | score vs random (W/D/L)" in table and table.count("\n| ") == 4
    json_path, csv_path, png_path = run_summary.write_summary(summary, tiny_run / "out")
    assert png_path.stat().st_size > 10_000 and png_path.read_bytes()[:4] == b"\x89PNG"
    saved = json.loads(json_path.read_text())
    assert saved["summary"]["d_final"] == summary.d_final and len(saved["rows"]) == 3
    assert csv_path.read_text().splitlines()[0].startswith("player,lambda,score_random")


@pytest.mark.slow
def test_summary_plays_games_when_asked(tiny_run):
    team = loading.load_team(tiny_run, step=2)
    summary = run_summary.summarize_run(tiny_run, team=team, num_positions=8, reference_games_count=4)
    assert summary.iteration == 2 and summary.scores_from == "games (4 per reference)"
    assert all(sum(summary.records["random"][j].values()) == 4 for j in range(3))
    assert summary.d_iterations == [1, 2]
