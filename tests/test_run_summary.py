"""azdb_jax/evaluation/move_choices.py and run_summary.py: hand-computed move comparisons,
the table and picture of a real (tiny) run: tic-tac-toe's shared ``trained_run`` (tests/conftest.py)."""

import json

import jax
import numpy as np
import pytest

from azdb_jax import games
from azdb_jax.evaluation import loading, move_choices, run_summary
from conftest import trained_run_config  # pylint: disable=g-bad-import-order


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


@pytest.fixture
def tiny_run(trained_run):
    """Tic-tac-toe's shared run: three players, λ = 0.5, an evaluation after each of its iterations."""
    return trained_run("tic_tac_toe")


@pytest.mark.slow
def test_summary_of_a_run(tiny_run, tmp_path):
    config = trained_run_config("tic_tac_toe")
    n, last_iteration = config.team.num_players, config.run.num_iterations
    assert n == 3  # three distances d_i, each player's own
    team = loading.load_team(tiny_run)
    summary = run_summary.summarize_run(tiny_run, team=team, num_positions=16)
    records = [json.loads(line) for line in (tiny_run / "metrics.jsonl").read_text().splitlines()]
    last = [r for r in records if r["kind"] == "train"][-1]
    assert summary.d_final == [last[f"d_{i}"] for i in range(n)]
    assert summary.lambdas == [1.0, 0.5, 0.5] and summary.scores_from == f"metrics.jsonl@{last_iteration}"
    final_eval = {(r["player"], r["opponent"]): r["score"] for r in records
                  if r["kind"] == "eval" and r["iteration"] == last_iteration}
    for name, scores in summary.scores.items():
        assert scores == [final_eval[(j, name)] for j in range(n)]
    assert set(summary.scores) == {"random", "perfect", "minimax2"}  # tic-tac-toe's references, not "previous"
    moves = move_choices.player_moves(team, move_choices.random_positions(team.env, 16, jax.random.PRNGKey(5)),
                                      jax.random.PRNGKey(6))
    assert moves.shape == (n, 16)
    table = run_summary.format_table(summary)
    assert "| player | λ_i | score vs random (W/D/L)" in table and table.count("\n| ") == n + 1
    json_path, csv_path, png_path = run_summary.write_summary(summary, tmp_path / "out")  # the shared run stays as it is
    assert png_path.stat().st_size > 10_000 and png_path.read_bytes()[:4] == b"\x89PNG"
    saved = json.loads(json_path.read_text())
    assert saved["summary"]["d_final"] == summary.d_final and len(saved["rows"]) == n
    assert csv_path.read_text().splitlines()[0].startswith("player,lambda,score_random")


@pytest.mark.slow
def test_summary_plays_games_when_asked(tiny_run):
    # The run's first checkpoint, one iteration before its last: its metrics are cut there.
    config = trained_run_config("tic_tac_toe")
    step = config.run.num_iterations - 1
    team = loading.load_team(tiny_run, step=step)
    summary = run_summary.summarize_run(tiny_run, team=team, num_positions=8, reference_games_count=4)
    assert summary.iteration == step and summary.scores_from == "games (4 per reference)"
    assert all(sum(summary.records["random"][j].values()) == 4 for j in range(config.team.num_players))
    assert summary.d_iterations == list(range(1, step + 1))
