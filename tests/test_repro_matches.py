"""Figure group matches (Table 2, 3, Fig. 6, 21-23).

The notebook runs end to end on the ci results folder; its numbers are then checked
against independent computations: every match game by replaying its moves on a
GardnerBoard (the result, or the material adjudication at the ply cap), W/D/L -> score ->
Elo by the hand formulas, the lookup and max over latents recomputed from the game rows.
The figure functions are tested on hand-made reports.
"""

import math
import pathlib

import chess
import jax
import numpy as np
import pytest

from azdb_jax import adjudication, games, reproduction
from azdb_jax.policies import uniform_random_policy
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import matches as matches_lib
from azdb_jax.figures import matches as figures_matches
from azdb_jax.reproduction import matches as matches_group

from conftest import figure_numbers, run_notebook  # pylint: disable=g-bad-import-order

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"
VALUES = {"P": 1, "N": 3, "B": 3, "R": 5, "Q": 9, "K": 0}

# ------------------------------------------------------------------ matches on the ci folder


def _material(fen):
    """White's material minus Black's, in pawns, read off the FEN."""
    total = 0
    for ch in fen.split()[0]:
        if ch.upper() in VALUES:
            total += VALUES[ch.upper()] * (1 if ch.isupper() else -1)
    return total


def _hand_record(scores):
    """W/D/L, score, its SE, Elo and its SE of scores in {1, 0, -1} by the hand formulas."""
    scores = np.asarray(scores, float)
    wins, draws, losses = int((scores == 1).sum()), int((scores == 0).sum()), int((scores == -1).sum())
    n = wins + draws + losses
    p = (wins + draws / 2) / n
    sigma2 = (wins * (1 - p) ** 2 + draws * (0.5 - p) ** 2 + losses * p ** 2) / n
    se = math.sqrt(sigma2 / n)
    elo = -400 * math.log10(1 / p - 1) if 0 < p < 1 else math.copysign(math.inf, p - 0.5)
    elo_se = 400 / (math.log(10) * p * (1 - p)) * se if 0 < p < 1 else math.inf
    return {"wins": wins, "draws": draws, "losses": losses, "score": p, "score_stderr": se, "elo": elo,
            "elo_stderr": elo_se}


def _check_record(item, scores):
    hand = _hand_record(scores)
    assert (item["wins"], item["draws"], item["losses"]) == (hand["wins"], hand["draws"], hand["losses"])
    assert item["score"] == pytest.approx(hand["score"])
    assert item["score_stderr"] == pytest.approx(hand["score_stderr"])
    if math.isfinite(hand["elo"]):
        assert item["elo"] == pytest.approx(hand["elo"])
        assert item["elo_stderr"] == pytest.approx(hand["elo_stderr"])
    else:
        assert item["elo"] is None  # ±inf is written as null


def test_matches_notebook_games_replay_and_numbers_recompute(ci_results):
    run_notebook(COLABS / "matches.ipynb", ci_results)
    results = reproduction.Results(ci_results)
    report = results.read_report("matches")
    summary, rows = report["summary"], report["rows"]
    sizes = results.scale.eval
    openings = summary["openings"]
    assert len(openings) == sizes.openings and openings[0]["label"] == "start"
    assert summary["seeds"] == [0, 1]  # ci: 4 games asked, 4 openings x 2 colours per seed, 2 seeds at least
    assert summary["games_per_agent"] == 2 * sizes.openings * 2 == 16
    pairing = summary["pairings"][0]
    n = pairing["num_players"]
    agents = [f"player_{j}" for j in range(n)] + ["team_gap"]
    game = games.board_game("gardner_chess")

    # Every game replayed on a GardnerBoard: legal moves, its end or the material adjudication.
    for row in rows:
        board = GardnerBoard(row["fen"])
        assert row["fen"] == openings[row["opening"]]["fen"]
        white_first = board.turn == chess.WHITE
        assert row["colour"] == ("white" if row["first"] == white_first else "black")
        moves = [int(a) for a in row["moves"].split()]
        assert len(moves) == row["plies"] <= sizes.max_plies
        for action in moves:
            uci = game.action_to_uci(action, board)
            assert board.is_legal(chess.Move.from_uci(uci))
            board.push_uci(uci)
        sign = 1 if row["colour"] == "white" else -1
        if board.is_game_over():
            assert not row["adjudicated"]
            assert row["score"] == sign * {"1-0": 1, "0-1": -1, "1/2-1/2": 0}[board.result()]
        else:
            assert row["adjudicated"] and row["plies"] == sizes.max_plies
            balance = _material(board.fen())
            white = 1 if balance >= 3 else (-1 if balance <= -3 else 0)
            assert row["score"] == sign * white
        assert row["result"] == {1: "win", 0: "draw", -1: "loss"}[row["score"]]

    # W/D/L -> score -> Elo by hand, per agent and by colour.
    def scores(agent, **match):
        return [r["score"] for r in rows if r["agent"] == agent and all(r[k] == v for k, v in match.items())]

    for agent in agents:
        assert len(scores(agent)) == summary["games_per_agent"]
        _check_record(pairing["agents"][agent], scores(agent))
        _check_record(summary["agents"][agent], scores(agent))
        for colour in ("white", "black"):
            _check_record(pairing["agents"][agent]["by_colour"][colour], scores(agent, colour=colour))
        assert summary["agents"][agent]["stderr_over"] == "games"

    # Max over latents and the leave-one-seed-out lookup from the players' rows.
    cells = sorted({(r["opening"], r["colour"], r["seed"]) for r in rows})
    assert len(cells) == summary["games_per_agent"]
    grid = {(r["agent"], r["opening"], r["colour"], r["seed"]): r["score"] for r in rows}
    players = [f"player_{j}" for j in range(n)]
    _check_record(pairing["agents"]["max_over_latents"], [max(grid[(p, *c)] for p in players) for c in cells])
    lookup = []
    for opening, colour, seed in cells:
        others = [s for s in summary["seeds"] if s != seed]
        means = [np.mean([(grid[(p, opening, colour, s)] + 1) / 2 for s in others]) for p in players]
        lookup.append(grid[(players[int(np.argmax(means))], opening, colour, seed)])
    _check_record(pairing["agents"]["lookup"], lookup)
    lookup_gap = []  # the GAP rule over the other seeds' scores: within one SE of the best, the lowest
    for opening, colour, seed in cells:
        others = [s for s in summary["seeds"] if s != seed]
        per = [[(grid[(p, opening, colour, s)] + 1) / 2 for s in others] for p in players]
        means = [np.mean(x) for x in per]
        gap = max(np.std(x, ddof=1) / np.sqrt(len(x)) if len(x) > 1 else 0.0 for x in per)
        chosen = min((m, j) for j, m in enumerate(means) if m >= max(means) - gap - 1e-12)[1]
        lookup_gap.append(grid[(players[chosen], opening, colour, seed)])
    _check_record(pairing["agents"]["lookup_gap"], lookup_gap)

    # Per-opening scores (win 1, draw 0, loss -1) by colour, over seeds.
    for agent in agents:
        mean = np.asarray(pairing["agents"][agent]["opening_scores"]["mean"], float)
        for p in range(len(openings)):
            for c, colour in enumerate(("white", "black")):
                assert mean[p, c] == pytest.approx(np.mean(scores(agent, opening=p, colour=colour)))

    # Figures show these numbers.
    numbers = figure_numbers(ci_results, "table2_matches")
    for agent in agents + ["lookup", "max_over_latents"]:
        assert numbers["agents"][agent]["winrate"] == pytest.approx(100 * summary["agents"][agent]["score"])
    numbers = figure_numbers(ci_results, "table3_colour_winrates")
    for player in players:
        for colour in ("white", "black"):
            assert numbers["winrate"][player][colour] == pytest.approx(
                100 * _hand_record(scores(player, colour=colour))["score"])
    numbers = figure_numbers(ci_results, "fig23_opening_scores_black")
    assert numbers["agents"][:n] == players
    np.testing.assert_allclose(numbers["scores"][0], [np.mean(scores("player_0", opening=p, colour="black"))
                                                      for p in range(len(openings))])
    curve = figure_numbers(ci_results, "fig21_lookup_curve")
    assert curve["train_seeds"] == [1] and curve["heldout_seeds"] == 1


# ------------------------------------------------------------------ library pieces by hand


def test_match_adjudication_and_records_by_hand():
    env = games.make("gardner_chess")
    random = uniform_random_policy()
    kwargs = dict(seeds=(0, 1), max_plies=6, rng_key=jax.random.PRNGKey(3))
    plain = matches_lib.play_match(env, random, None, random, None, **kwargs)
    assert plain.adjudicated is None and (plain.decided == plain.finished).all()
    judged = matches_lib.play_match(env, random, None, random, None,
                                    adjudicate=adjudication.adjudicator(env, "draw"), **kwargs)
    np.testing.assert_array_equal(judged.actions, plain.actions)  # the same games
    np.testing.assert_array_equal(judged.adjudicated, ~plain.finished)
    assert judged.decided.all() and (judged.result[judged.adjudicated] == 0).all()
    assert matches_lib.summarize_match(judged)["finished"] == judged.num_games
    assert all(r["result"] != "unfinished" for r in matches_lib.match_rows(judged))

    assert matches_group.num_match_seeds(4, 4) == 2 and matches_group.num_match_seeds(32, 4) == 4
    assert matches_group.num_match_seeds(32, 12) == 2
    assert matches_group.record(np.zeros(4), np.ones(4, bool))["score_stderr"] == 0.0  # four draws
    assert matches_group.record(np.array([1.0, -1.0]), np.ones(2, bool))["score_stderr"] == pytest.approx(
        0.5 / math.sqrt(2))
    record = matches_group.record(np.array([1.0, 0.0, -1.0, 1.0]), np.ones(4, bool))
    hand = _hand_record([1, 0, -1, 1])
    assert record["score"] == hand["score"] == 0.625 and record["winrate"] == 62.5
    assert record["elo"] == pytest.approx(hand["elo"]) and record["elo_stderr"] == pytest.approx(hand["elo_stderr"])
    # [P=1, 2, S=2]: opening with White to move; first side wins both, second side draws and loses
    scores = matches_group.opening_scores(np.array([[[1.0, 1.0], [0.0, -1.0]]]), np.ones((1, 2, 2), bool),
                                          np.array(["white"]))
    np.testing.assert_allclose(scores["mean"], [[1.0, -0.5]])
    np.testing.assert_allclose(scores["stderr"], [[0.0, 0.5]])
    scores = matches_group.opening_scores(np.array([[[1.0, 1.0], [0.0, -1.0]]]), np.ones((1, 2, 2), bool),
                                          np.array(["black"]))
    np.testing.assert_allclose(scores["mean"], [[-0.5, 1.0]])


# ------------------------------------------------------------------ figures on hand-made reports


def _matches_report():
    def rec(w, d, l, white=None, black=None):
        hand = _hand_record([1] * w + [0] * d + [-1] * l)
        out = dict(hand, games=w + d + l, finished=w + d + l, winrate=100 * hand["score"],
                   winrate_stderr=100 * hand["score_stderr"])
        if white is not None:
            out["by_colour"] = {"white": dict(_hand_record(white), winrate=100 * _hand_record(white)["score"]),
                                "black": dict(_hand_record(black), winrate=100 * _hand_record(black)["score"])}
        return out

    agents = {"player_0": rec(3, 1, 0, [1, 1], [1, 0]), "player_1": rec(1, 1, 2, [1, -1], [0, -1]),
              "lookup": rec(3, 0, 1), "max_over_latents": rec(4, 0, 0)}
    opening = {"player_0": {"mean": [[1.0, 0.5]], "stderr": [[0.0, 0.5]]},
               "player_1": {"mean": [[0.0, -0.5]], "stderr": [[1.0, 0.5]]}}
    pair_agents = {k: dict(v, opening_scores=opening.get(k, opening["player_0"])) for k, v in agents.items()}
    curve = {"heldout_seeds": 1, "points": [{"train_seeds": 1, "score": 0.75, "score_stderr": 0.2}],
             "best_latent": {"player": 0, "score": 0.5}, "max_over_latents": {"score": 1.0}}
    summary = {"agents": agents, "stderr_over": "games", "games_per_agent": 4, "num_simulations": 8,
               "colours": ["white", "black"], "seeds": [0, 1], "openings": [{"label": "start", "fen": "x"}],
               "pairings": [{"agents": pair_agents, "lookup_curve": curve}]}
    return {"summary": summary, "rows": []}


def test_matches_figures_show_the_report():
    report = _matches_report()
    fig, numbers = figures_matches.match_summary(report)
    assert numbers["agents"]["player_0"]["winrate"] == 87.5 and numbers["agents"]["player_0"]["wins"] == 3
    assert fig.axes[0].get_title().startswith("AZdb vs AZ: 4 games per agent,\n8 simulations")
    two = {"summary": dict(report["summary"], pairings=report["summary"]["pairings"] * 2, stderr_over="seeds")}
    title = figures_matches.match_summary(two)[0].axes[0].get_title()
    assert title == ("AZdb vs AZ: 4 games per agent and training seed (2 training seeds),\n"
                     "8 simulations (SE over seeds)")
    assert numbers["agents"]["max_over_latents"]["elo"] == math.inf
    _, numbers = figures_matches.colour_winrates(report)
    assert numbers["winrate"] == {"player_0": {"white": 100.0, "black": 75.0},
                                  "player_1": {"white": 50.0, "black": 25.0}}
    _, numbers = figures_matches.lookup_curve(report)
    assert numbers["train_seeds"] == [1] and numbers["winrate"][0] == 75.0 and numbers["max_over_latents"] == 100.0
    _, numbers = figures_matches.opening_scores(report, "black", agents=["player_0", "player_1"])
    np.testing.assert_allclose(numbers["scores"], [[0.5], [-0.5]])
    np.testing.assert_allclose(numbers["stderr"], [[0.5], [0.5]])
    with pytest.raises(ValueError, match="colour must be one of"):
        figures_matches.opening_scores(report, "red")
