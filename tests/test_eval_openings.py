"""Tests of azdb_jax/evaluation/openings.py: hand-built statistics, a stub team checked with
python-chess, and a random tiny network end to end (``openings.evaluate``, what
experiments/opening_diversity.py runs)."""

import json

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import data, games, networks, planning, search
from azdb_jax.envs import chess_interop
from azdb_jax.evaluation import openings as openings_lib
from azdb_jax.agent import Agent

NEG_INF = -np.inf


def _team_search(visits, q, u):
    """A TeamSearch from hand-written [B, n, A] visits / Q / U (the fields the moves depend on)."""
    visits, q, u = (jnp.asarray(x) for x in (visits, q, u))
    visited = visits > 0
    q = jnp.where(visited, q, -jnp.inf)
    stats = planning.TeamRootStatistics(
        visits=visits, total_visits=visits.sum(-1), visited=visited, q=q,
        prior=jnp.full(visits.shape, 1.0 / visits.shape[-1]), u=u, value=q.max(-1))
    return planning.TeamSearch(
        stats=stats, players=jnp.arange(visits.shape[1]), network_value=jnp.zeros(visits.shape[:2]),
        most_visited_action=jax.vmap(jax.vmap(planning.most_visited_action))(visits, q),
        lcb_action=jax.vmap(jax.vmap(planning.lcb_action))(q, u, visited))


def test_hand_built_statistics():
    # Two positions, three players, three actions.
    #   position 0: player 0 visits [5, 3, 0], Q [0.2, 0.5], U [0.1, 0.1, 0.4] -> LCB: 0.1 vs 0.4 -> action 1;
    #               most visited: action 0.
    #               player 1 visits [2, 6, 0], Q [0.9, 0.1], U [0.05, 0.05, 0.3] -> LCB 0.85 vs 0.05 -> 0; visits 1.
    #               player 2 visits [0, 1, 7], Q [-, 0.0, 0.3], U [0.5, 0.2, 0.1] -> LCB -0.2 vs 0.2 -> 2; visits 2.
    #   LCB moves (1, 0, 2): 3 distinct; most-visited (0, 1, 2): 3 distinct.
    #   position 1: every player visits [4, 4, 0] with Q [0.1, 0.3], U [0.1, 0.1, 0.9]
    #   -> LCB 1 for all; most visited: tie on visits, higher Q -> 1 for all: 1 distinct.
    visits = np.array([[[5, 3, 0], [2, 6, 0], [0, 1, 7]], [[4, 4, 0]] * 3], np.int32)
    q = np.array([[[0.2, 0.5, 0], [0.9, 0.1, 0], [0, 0.0, 0.3]], [[0.1, 0.3, 0]] * 3], np.float32)
    u = np.array([[[0.1, 0.1, 0.4], [0.05, 0.05, 0.3], [0.5, 0.2, 0.1]], [[0.1, 0.1, 0.9]] * 3], np.float32)
    out = _team_search(visits, q, u)
    lcb = np.asarray(openings_lib.player_moves(out, "lcb"))
    most = np.asarray(openings_lib.player_moves(out, "visits"))
    np.testing.assert_array_equal(lcb, [[1, 0, 2], [1, 1, 1]])
    np.testing.assert_array_equal(most, [[0, 1, 2], [1, 1, 1]])
    np.testing.assert_array_equal(openings_lib.distinct_counts(lcb), [3, 1])
    np.testing.assert_array_equal(openings_lib.distinct_counts(most), [3, 1])
    # Agreement with player 0: lcb rows (1,0,2), (1,1,1) -> players [1, 0.5, 0.5].
    np.testing.assert_allclose(openings_lib.agreement_with_first(lcb), [1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="move must be one of"):
        openings_lib.player_moves(out, "best")


def test_distinct_counts_and_summary_by_hand():
    actions = np.array([[3, 3, 3, 3], [1, 2, 1, 2], [4, 0, 9, 7], [5, 5, 6, 5], [2, 8, 2, 1]])
    counts = np.asarray(openings_lib.distinct_counts(actions))
    np.testing.assert_array_equal(counts, [1, 2, 4, 2, 3])
    summary = openings_lib.summarize(["A01", "B20", "B90", "E60", "C00"], counts,
                                     openings_lib.agreement_with_first(actions), 4)
    assert summary["mean_distinct_moves"] == pytest.approx(12 / 5)
    assert summary["histogram"] == {1: 1, 2: 2, 3: 1, 4: 1}
    assert summary["mean_distinct_by_eco_letter"] == {"A": 1.0, "B": 3.0, "C": 3.0, "E": 2.0}
    np.testing.assert_allclose(summary["agreement_with_player_0"], [1.0, 0.4, 0.6, 0.4])


# Player j prefers these White moves in this order (first legal one wins); players 0 and 3 agree.
PREFERENCES = (
    ("e2e4", "d2d4", "a2a3", "h2h3"),
    ("d2d4", "c2c4", "h2h3", "a2a3"),
    ("g1f3", "b1c3", "a2a3", "h2h3"),
    ("e2e4", "d2d4", "a2a3", "h2h3"),
)


def _stub_apply(preference_logits):
    """Policy logits that depend only on the player id: [n, A] table rows; value 0."""
    table = jnp.asarray(preference_logits)

    def apply_fn(params, observation, player):
        del params
        batch = observation.shape[0]
        return networks.NetOutput(policy_logits=table[player], value=jnp.zeros(batch), value_d=jnp.zeros(batch))

    return apply_fn


def test_stub_team_distinct_moves_match_python_chess(data_dir):
    openings = data.load_openings(data_dir / "openings", exclude=("A00",))
    # White to move (even number of plies), so the stub's action ids are White moves.
    chosen = [o for o in openings if len(o.moves) % 2 == 0][:6]
    start = chess.Board()
    table = np.zeros((len(PREFERENCES), games.make("chess").num_actions), np.float32)
    for j, moves in enumerate(PREFERENCES):
        for rank, uci in enumerate(moves):
            table[j, chess_interop.uci_to_action(uci, start)] = 40.0 - 10.0 * rank
    env = games.make("chess")
    team = Agent(env=env, apply_fn=_stub_apply(table), params=None, num_players=len(PREFERENCES),
                search_config=search.SearchConfig(num_simulations=4))
    # Independent answer: python-chess legality of each preference list.
    expected = []
    for opening in chosen:
        board = opening.board()
        legal = {m.uci() for m in board.legal_moves}
        row = [next(uci for uci in moves if uci in legal) for moves in PREFERENCES]
        expected.append(row)
    expected_distinct = [len(set(row)) for row in expected]
    assert max(expected_distinct) >= 3  # the positions do tell the players apart
    summary, rows = openings_lib.opening_diversity(team, chosen, batch_size=4)
    assert [[r[f"player_{j}"] for j in range(4)] for r in rows] == expected
    assert [r["distinct"] for r in rows] == expected_distinct
    assert summary["mean_distinct_moves"] == pytest.approx(np.mean(expected_distinct))
    assert summary["agreement_with_player_0"][3] == 1.0
    assert summary["positions"] == len(chosen)
    assert [r["eco"] for r in rows] == [o.eco for o in chosen]


@pytest.mark.slow
def test_random_tiny_network_end_to_end(data_dir, tmp_path):
    env = games.make("chess")
    net = networks.make_network(networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8),
                                num_actions=env.num_actions, num_players=2)
    state = chess_interop.state_from_board(chess.Board())
    params = net.init(jax.random.PRNGKey(0), state.observation)
    team = Agent(env=env, apply_fn=net.apply, params=params, num_players=2,
                search_config=search.SearchConfig(num_simulations=2), name="random")
    json_path, csv_path = openings_lib.evaluate(team, data_dir / "openings", tmp_path / "report", limit=8, batch_size=8,
                                                 progress=False)
    report = json.loads(json_path.read_text())
    rows = report["rows"]
    assert len(rows) == 8 and report["summary"]["positions"] == 8
    for row in rows:
        board = chess.Board(row["fen"])
        for j in range(2):
            assert board.is_legal(chess.Move.from_uci(row[f"player_{j}"]))
        assert row["distinct"] == len({row["player_0"], row["player_1"]})
    assert 1.0 <= report["summary"]["mean_distinct_moves"] <= 2.0
    assert csv_path.read_text().splitlines()[0].startswith("eco,name,fen,player_0,player_1,distinct")
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(ValueError, match="limit"):
        openings_lib.evaluate(team, data_dir / "openings", tmp_path / "bad", limit=0)


def test_rejects_non_chess_team():
    env = games.make("nim", heaps=(1, 2))
    team = Agent(env=env, apply_fn=_stub_apply(np.zeros((1, env.num_actions))), params=None, num_players=1,
                search_config=search.SearchConfig(num_simulations=2))
    with pytest.raises(ValueError, match="chess team"):
        openings_lib.team_opening_moves(team, [chess.Board()])
