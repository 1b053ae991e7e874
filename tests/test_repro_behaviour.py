"""Figure groups occupancy (Fig. 2, 18, 19), openings (Fig. 3) and matchmaking (Fig. 9, 10).

The notebooks run end to end on the ci results folder; their numbers are then checked
against independent computations: occupancy replayed from the games' moves on host
boards and read off their FENs, LCB moves legal in their positions, distinct counts and
standard errors recomputed from the rows, interaction graphs against the matchmakers
called directly and the graphs the run saved. The figure functions are tested on small
hand-made reports.
"""

import pathlib

import chess
import numpy as np
import pytest

from azdb_jax import matchmaking, reproduction
from azdb_jax import games as games_lib
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import occupancy as occupancy_lib
from azdb_jax.figures import matchmaking as figures_matchmaking
from azdb_jax.figures import occupancy as figures_occupancy
from azdb_jax.figures import openings as figures_openings

from conftest import figure_numbers, run_notebook, stderr_of  # pylint: disable=g-bad-import-order

COLABS = pathlib.Path(__file__).resolve().parents[1] / "colabs"
PIECES = "PNBRQKpnbrqk"


def _planes_from_fen(fen: str, size: int) -> np.ndarray:
    """12 piece planes [12, size, size] (rank 1 first) read off a FEN's placement."""
    planes = np.zeros((12, size, size))
    for rank, text in enumerate(reversed(fen.split()[0].split("/"))):
        file = 0
        for ch in text:
            if ch.isdigit():
                file += int(ch)
            else:
                planes[PIECES.index(ch), rank, file] = 1
                file += 1
    return planes


# ------------------------------------------------------------------ notebooks on the ci folder


def test_occupancy_notebook_matches_games_replayed_on_boards(ci_results):
    run_notebook(COLABS / "occupancy.ipynb", ci_results)
    report = reproduction.Results(ci_results).read_report("occupancy")
    summary = report["summary"]
    assert summary["game"] == "gardner_chess" and summary["castling_names"] is None
    assert "no castling" in summary["castling_note"]
    start = np.asarray(summary["start_planes"])
    assert start.sum() == 20 and start[0].sum() == 5 and start[6].sum() == 5 and start[5, 0, 4] == 1  # K on e1
    assert summary["games_per_player"] == 4  # ci: eval.occupancy_games

    run = summary["arms"]["azdb"]["runs"][0]
    occupancy = np.asarray(run["occupancy"])  # [n, 2, 12, 5, 5]
    game = games_lib.board_game("gardner_chess")
    for player in range(run["num_players"]):
        sums, counts = np.zeros((2, 12, 5, 5)), np.zeros(2)
        games = [r for r in report["rows"] if r["run"] == run["run"] and r["player"] == player]
        assert len(games) == summary["games_per_player"]
        for row in games:
            board = GardnerBoard()
            moves = [int(a) for a in row["moves"].split()] if row["moves"] else []
            assert len(moves) == row["plies"]
            for action in moves:
                colour = 0 if board.turn == chess.WHITE else 1
                board.push_uci(game.action_to_uci(action, board))
                sums[colour] += _planes_from_fen(board.fen(), 5)
                counts[colour] += 1
            assert board.is_game_over() == row["finished"]
            if row["finished"]:
                assert row["white_result"] == {"1-0": 1.0, "0-1": -1.0, "1/2-1/2": 0.0}[board.result()]
            assert row["finished"] or row["plies"] == summary["max_plies"]
        np.testing.assert_array_equal(counts, run["positions"][player])
        np.testing.assert_allclose(occupancy[player], sums / counts[:, None, None, None], atol=1e-6)
        # every plane summed: the mean number of pieces on the board, at most the 20 of the start
        assert 0 < occupancy[player].sum(axis=(1, 2, 3)).max() <= 20

    with np.load(pathlib.Path(ci_results) / "runs" / run["run"] / "psi" / f"psi_{run['step']:07d}.npz") as saved:
        trained = np.where(saved["initialised_by_colour"][..., None], saved["psi_by_colour"], np.nan)
    np.testing.assert_allclose(np.array(run["trained_occupancy"], float), trained.reshape(trained.shape[:2] + (12, 5, 5)),
                               atol=1e-6)

    positions = np.asarray(run["positions"], float)
    pooled = (occupancy * positions[:, :, None, None, None]).sum(axis=1) / positions.sum(axis=1)[:, None, None, None]
    flat = pooled.reshape(len(pooled), -1)
    pairs = [np.linalg.norm(flat[i] - flat[j]) for i in range(len(flat)) for j in range(i + 1, len(flat))]
    assert run["psi_spread"] == pytest.approx(np.mean(pairs), rel=1e-5)
    assert run["psi_spread_stderr"] > 0
    control = summary["arms"]["control"]
    assert summary["psi_spread_difference"] == pytest.approx(summary["arms"]["azdb"]["psi_spread"]
                                                             - control["psi_spread"])

    std = figure_numbers(ci_results, "fig2_occupancy_std")
    index = [PIECES.index(p) for p in std["pieces"]]
    np.testing.assert_allclose(std["std_percent"], np.std(100 * occupancy[:, :, index], axis=0), atol=1e-9)
    assert std["castling_percent"] is None and "no castling" in std["castling_note"]
    heat = figure_numbers(ci_results, "fig18_piece_occupancy")
    np.testing.assert_allclose(heat["occupancy_percent"], 100 * occupancy[:, :, index], atol=1e-9)
    mean_sub = figure_numbers(ci_results, "fig19_mean_subtracted_occupancy")
    np.testing.assert_allclose(np.sum(mean_sub["difference_percent"], axis=0), 0.0, atol=1e-9)
    trained_heat = figure_numbers(ci_results, "fig18_piece_occupancy_trained")
    assert trained_heat["source"] == "trained"
    np.testing.assert_allclose(np.array(trained_heat["occupancy_percent"], float),
                               100 * np.array(run["trained_occupancy"], float)[:, :, index], atol=1e-9)
    spread = figure_numbers(ci_results, "fig2_psi_spread")
    assert spread["azdb"]["spread"] == summary["arms"]["azdb"]["psi_spread"]


def test_openings_notebook_moves_are_legal_and_counts_match_rows(ci_results):
    run_notebook(COLABS / "openings.ipynb", ci_results)
    report = reproduction.Results(ci_results).read_report("openings")
    summary, rows = report["summary"], report["rows"]
    assert len(summary["openings"]) == 4 and summary["openings"][0]["label"] == "start"
    assert len({o["fen"] for o in summary["openings"]}) == 4
    per_arm = {}
    for arm in ("azdb", "control"):
        data = summary["arms"][arm]["runs"][0]
        n = data["num_players"]
        openings = [r for r in rows if r["kind"] == "opening" and r["arm"] == arm]
        assert [r["fen"] for r in openings] == [o["fen"] for o in summary["openings"]]
        for row, moves in zip(openings, data["opening_moves"]):
            board = GardnerBoard(row["fen"])
            assert [row[f"player_{j}"] for j in range(n)] == moves
            assert all(board.is_legal(chess.Move.from_uci(m)) for m in moves)
            assert row["distinct"] == len(set(moves))
        positions = [r for r in rows if r["kind"] == "position" and r["arm"] == arm]
        assert len(positions) == summary["positions"] == 16
        distinct = np.array([len({r[f"player_{j}"] for j in range(n)}) for r in positions])
        np.testing.assert_array_equal(distinct, [r["distinct"] for r in positions])
        assert data["distinct_mean"] == pytest.approx(distinct.mean())
        assert data["distinct_stderr"] == pytest.approx(stderr_of(distinct))
        assert sum(data["histogram"].values()) == len(positions)
        assert 1 <= distinct.min() and distinct.max() <= n
        per_arm[arm] = distinct
    gaps = per_arm["azdb"] - per_arm["control"]  # the same positions: paired
    assert summary["distinct_difference"] == pytest.approx(gaps.mean())
    assert summary["distinct_difference_stderr"] == pytest.approx(stderr_of(gaps))

    numbers = figure_numbers(ci_results, "fig3_distinct_moves")
    assert numbers["azdb"]["mean"] == pytest.approx(per_arm["azdb"].mean())
    assert numbers["difference"] == pytest.approx(gaps.mean())
    boards = figure_numbers(ci_results, "fig3_opening_moves")["boards"]
    assert [b["moves"] for b in boards] == summary["arms"]["azdb"]["runs"][0]["opening_moves"]


def test_matchmaking_notebook_graphs_are_the_matchmakers_and_the_saved_ones(ci_results):
    run_notebook(COLABS / "matchmaking.ipynb", ci_results)
    report = reproduction.Results(ci_results).read_report("matchmaking")
    summary = report["summary"]
    assert summary["run_matchmaker"] == "psro_nash" and len(summary["graphs"]) == 6
    payoff = np.asarray(summary["payoff"], np.float32)
    for name, graph in summary["graphs"].items():
        direct = matchmaking.interaction_graphs(name, payoff)
        for colour, expected in (("white", direct.white), ("black", direct.black)):
            sigma = np.asarray(graph[colour])
            assert (sigma >= 0).all()
            np.testing.assert_allclose(sigma.sum(axis=1), 1.0, atol=1e-5)
            np.testing.assert_allclose(sigma, np.asarray(expected), atol=1e-6)
            rows = [r for r in report["rows"] if r["kind"] == "matchmaker" and r["graph"] == name
                    and r["colour"] == colour]
            np.testing.assert_allclose([[r[f"p_{j}"] for j in range(len(sigma))] for r in rows], sigma)

    workdir = pathlib.Path(ci_results) / "runs" / summary["run"]
    files = sorted((workdir / "graphs").glob("graph_*.npz"))
    assert [t["iteration"] for t in summary["training"]] == [int(f.stem.split("_")[1]) for f in files] == [1, 2]
    for item, path in zip(summary["training"], files):
        with np.load(path) as saved:
            np.testing.assert_allclose(item["white"], saved["sigma_white"])
            np.testing.assert_allclose(item["black"], saved["sigma_black"])
            direct = matchmaking.psro_nash(saved["payoff"])
        np.testing.assert_allclose(item["white"], np.asarray(direct.white), atol=1e-5)
        for sigma in (np.asarray(item["white"]), np.asarray(item["black"])):
            np.testing.assert_allclose(sigma.sum(axis=1), 1.0, atol=1e-5)
            assert np.allclose(np.triu(sigma, 1), 0.0)  # player i meets players j <= i only
    np.testing.assert_allclose(payoff, np.load(files[-1])["payoff"])

    numbers = figure_numbers(ci_results, "fig10_psro_nash_over_training")
    assert numbers["iterations"] == [1, 2]
    np.testing.assert_allclose(numbers["white"][-1], summary["training"][-1]["white"])
    numbers = figure_numbers(ci_results, "fig9_matchmaker_graphs")
    assert numbers["graphs"] == summary["graphs"]


# ------------------------------------------------------------------ measures and figures on hand-made inputs


def test_occupancy_measures_by_hand():
    assert occupancy_lib.mean_pairwise_distance([[0.0, 0.0], [3.0, 4.0]]) == 5.0
    assert occupancy_lib.mean_pairwise_distance([[0.0], [1.0], [3.0]]) == pytest.approx((1 + 3 + 2) / 3)
    sums = np.array([[[2.0, 0.0], [1.0, 1.0]], [[1.0, 1.0], [0.0, 0.0]]])  # [G=2, 2, F=2]
    counts = np.array([[2, 1], [1, 0]])
    np.testing.assert_allclose(occupancy_lib.occupancy(sums, counts), [[1.0, 1 / 3], [1.0, 1.0]])
    np.testing.assert_allclose(occupancy_lib.pooled_psi(sums, counts), [1.0, 0.5])
    same = occupancy_lib.GameFeatures(sums=sums, counts=counts)
    spread = occupancy_lib.spread_with_stderr({0: same, 1: same}, np.random.default_rng(0), resamples=20)
    assert spread["spread"] == 0.0 and spread["stderr"] >= 0.0
    split = occupancy_lib.split_features("chess", np.arange(772.0))
    assert split["planes"].shape == (12, 8, 8) and split["planes"][0, 1, 0] == 8  # a2 is square 8
    np.testing.assert_array_equal(split["castling"], [768, 769, 770, 771])
    assert occupancy_lib.split_features("gardner_chess", np.zeros(300))["castling"] is None


def _occupancy_report(game="gardner_chess", size=5, n=2):
    rng = np.random.default_rng(0)
    occupancy = rng.uniform(0, 1, (n, 2, 12, size, size))
    start = np.zeros((12, size, size))
    start[0, 1, :] = 1  # white pawns on rank 2
    start[5, 0, size - 1] = 1
    run = {"run": "azdb_s0", "num_players": n, "occupancy": occupancy.tolist(),
           "positions": [[3, 1]] * n, "psi_spread": 0.5, "psi_spread_stderr": 0.1, "trained_psi_spread": 0.4,
           "castling": None, "trained_occupancy": (occupancy / 2).tolist(), "trained_castling": None}
    run["trained_occupancy"][0][1] = np.full((12, size, size), None).tolist()  # player 0 never played Black
    if game == "chess":
        run["castling"] = [[[1, 1, 0, 0], [0, 0, 1, 1]]] * n
    arms = {"azdb": {"runs": [run], "psi_spread": 0.5, "psi_spread_stderr": 0.1, "stderr_over": "games (bootstrap)"},
            "control": {"runs": [dict(run, psi_spread=0.2)], "psi_spread": 0.2, "psi_spread_stderr": 0.05,
                        "stderr_over": "games (bootstrap)"}}
    summary = {"game": game, "board_size": size, "pieces": list(PIECES), "colours": ["white", "black"],
               "castling_names": ["W O-O", "W O-O-O", "B O-O", "B O-O-O"] if game == "chess" else None,
               "castling_note": None if game == "chess" else "Gardner chess has no castling",
               "start_planes": start.tolist(), "games_per_player": 2, "arms": arms,
               "psi_spread_difference": 0.3, "psi_spread_difference_stderr": float(np.hypot(0.1, 0.05))}
    return {"summary": summary, "rows": []}, occupancy


def test_occupancy_figures_show_the_report():
    report, occupancy = _occupancy_report()
    _, numbers = figures_occupancy.piece_occupancy(report, pieces=("P", "K"))
    np.testing.assert_allclose(numbers["occupancy_percent"], 100 * occupancy[:, :, [0, 5]])
    np.testing.assert_allclose(numbers["piece_share"][:, :, 0], occupancy[:, :, 0].sum(axis=(2, 3)) / 5)
    assert numbers["start_squares"]["K"] == [[0, 4]] and len(numbers["start_squares"]["P"]) == 5
    _, numbers = figures_occupancy.occupancy_std(report, pieces=("P", "K"))
    np.testing.assert_allclose(numbers["std_percent"], np.std(100 * occupancy[:, :, [0, 5]], axis=0))
    assert numbers["castling_percent"] is None and "no castling" in numbers["castling_note"]
    _, numbers = figures_occupancy.mean_subtracted(report, pieces=("n",))
    np.testing.assert_allclose(numbers["difference_percent"][0], 100 * (occupancy[0] - occupancy.mean(0))[:, [7]])
    _, numbers = figures_occupancy.psi_spread(report)
    assert numbers["azdb"]["spread"] == 0.5 and numbers["control"]["per_run"] == [0.2]
    _, numbers = figures_occupancy.piece_occupancy(report, pieces=("P",), source="trained")
    assert np.isnan(numbers["occupancy_percent"][0, 1]).all()
    np.testing.assert_allclose(numbers["occupancy_percent"][1], 50 * occupancy[1][:, [0]])
    _, numbers = figures_occupancy.occupancy_std(report, pieces=("P",), source="trained")
    np.testing.assert_allclose(numbers["std_percent"][1], 0.0)  # only player 1 played Black
    np.testing.assert_allclose(numbers["std_percent"][0], 50 * occupancy[:, 0, [0]].std(axis=0))
    with pytest.raises(ValueError, match="source must be one of"):
        figures_occupancy.piece_occupancy(report, source="paper")
    with pytest.raises(ValueError, match="unknown pieces"):
        figures_occupancy.piece_occupancy(report, pieces=("X",))

    chess_report, _ = _occupancy_report("chess", 8)
    _, numbers = figures_occupancy.occupancy_std(chess_report)
    # 3 positions after White's moves with both White rights, 1 after Black's with both Black rights
    np.testing.assert_allclose(numbers["castling_percent"], [[75, 75, 25, 25]] * 2)


def test_opening_figures_show_the_report():
    board = figures_openings.parse_placement("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1")
    assert board[0] == list("RNBQK") and board[2] == [""] * 5 and board[4] == list("rnbqk")
    assert figures_openings.uci_squares("b1c3") == ((1, 0), (2, 2)) and figures_openings.uci_squares("") is None
    fens = ["rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1", chess.STARTING_FEN]
    run = {"run": "azdb_s0", "num_players": 3, "opening_moves": [["e2e3", "e2e3", "a2a3"], ["e2e4", "", "d2d4"]]}
    arms = {"azdb": {"runs": [dict(run, histogram={"1": 1, "2": 2, "3": 1})], "distinct_mean": 2.0,
                     "distinct_stderr": 0.4, "stderr_over": "positions"},
            "control": {"runs": [dict(run, histogram={"1": 4})], "distinct_mean": 1.0, "distinct_stderr": 0.0,
                        "stderr_over": "positions"}}
    report = {"summary": {"openings": [{"label": "start", "fen": fens[0]}, {"label": "chess", "fen": fens[1]}],
                          "arms": arms, "positions": 4, "distinct_difference": 1.0,
                          "distinct_difference_stderr": 0.4}, "rows": []}
    _, numbers = figures_openings.opening_moves(report)
    assert [b["distinct"] for b in numbers["boards"]] == [2, 2] and len(numbers["player_colours"]) == 3
    _, numbers = figures_openings.distinct_moves(report)
    assert numbers["azdb"]["histogram"] == {"1": 1, "2": 2, "3": 1} and numbers["difference"] == 1.0


def test_matchmaking_figures_show_the_report():
    payoff = np.array([[0.0, 1.0, -0.5], [-1.0, 0.0, 0.5], [0.5, -0.5, 0.0]], np.float32)
    graphs = {name: {colour: np.asarray(getattr(matchmaking.interaction_graphs(name, payoff), colour)).tolist()
                     for colour in ("white", "black")}
              for name in ("selfplay", "uniform", "psro_nash", "psro_rectified", "psro_uniform", "psro_cycle")}
    training = [{"iteration": it, "white": np.eye(3).tolist(), "black": np.eye(3).tolist()} for it in range(1, 6)]
    report = {"summary": {"run": "azdb_s0", "run_matchmaker": "psro_nash", "iteration": 5, "payoff": payoff.tolist(),
                          "payoff_games": np.ones((3, 3)).tolist(), "matchmakers": list(graphs), "graphs": graphs,
                          "training": training}, "rows": []}
    _, numbers = figures_matchmaking.matchmaker_graphs(report)
    assert numbers["graphs"] == graphs and numbers["matchmakers"][2] == "psro_nash"
    _, numbers = figures_matchmaking.graphs_over_training(report, max_panels=3)
    assert numbers["iterations"] == [1, 3, 5] and len(numbers["white"]) == 3
