"""Gardner chess through the evaluation code: the engine-labelled puzzle sets and their loaders,
the puzzle runners with a team (mate-aware stub network) and with Fairy-Stockfish, and
host-loop matches against an engine.

Fairy-Stockfish is installed on CI (Debian package ``fairy-stockfish``); without it the
engine tests skip, or fail with the install message when ``AZDB_REQUIRE_DATA=1``.
``AZDB_ALL_GARDNER_PUZZLES=1`` runs the team and engine checks on every puzzle of a set
instead of a subset.
"""

import os
import pathlib
import sys

import chess
import jax.numpy as jnp
import numpy as np
import pytest

from azdb_jax import data, games, search
from azdb_jax.policies import uniform_random_policy
from azdb_jax.data import gardner as gardner_data
from azdb_jax.envs import gardner_interop
from azdb_jax.envs.gardner_board import GardnerBoard
from azdb_jax.evaluation import fairy_stockfish, game_records, matches, puzzles, solvers
from azdb_jax.agent import Agent

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gardner_mate_stub  # noqa: E402  pylint: disable=g-import-not-at-top

ALL = os.environ.get("AZDB_ALL_GARDNER_PUZZLES") == "1"
LABEL_DEPTH = 14  # experiments/make_gardner_puzzles.py --label_depth
RANDOM = uniform_random_policy()


def _subset(records, size):
    return list(records) if ALL else list(records)[:size]


# ------------------------------------------------------------------ the packaged sets


@pytest.mark.parametrize("name, mate_in", [("mate_in_1", 1), ("mate_in_2", 2), ("mate_in_3", 3)])
def test_packaged_mate_sets_replay_to_mate(name, mate_in):
    found = gardner_data.load_gardner_puzzles(name)
    assert 100 <= len(found) <= 300 and not found.skipped
    assert all(p.game == "gardner_chess" and f"mateIn{mate_in}" in p.themes for p in found)
    assert len({p.fen for p in found}) == len(found)
    for puzzle in _subset(found, 40):
        assert len(puzzle.moves) == 2 * mate_in and dict(puzzle.extra)["Label"].endswith(f"mate {mate_in}")
        board = puzzle.board_at(mate_in - 1)
        assert isinstance(board, GardnerBoard) and board.turn == puzzle.solver_color
        board.push_uci(puzzle.solution[-1])
        assert board.is_checkmate()  # our env agrees with the engine's line
        assert data.is_correct_solver_move(puzzle, mate_in - 1, puzzle.solution[-1])


def test_packaged_only_move_and_value_sets():
    only = gardner_data.load_gardner_puzzles("only_move")
    assert 100 <= len(only) <= 300 and all(len(p.moves) == 2 and "onlyMove" in p.themes for p in only)
    values = gardner_data.load_gardner_values()
    sets = {p.set for p in values}
    assert sets <= {"draw", "decisive"} and "draw" in sets and all(p.game == "gardner_chess" for p in values)
    assert all(p.value == 0.5 for p in values if p.set == "draw")
    assert all(p.value in (0.0, 1.0) for p in values if p.set == "decisive")
    for position in values:
        assert not position.board().is_game_over()
    with pytest.raises(ValueError, match="valid sets"):
        gardner_data.load_gardner_puzzles("mate_in_4")
    with pytest.raises(ValueError, match="not a move-puzzle set"):
        gardner_data.load_gardner_puzzles("values")


# ------------------------------------------------------------------ loaders of either game


def test_gardner_loader_errors_name_file_line_and_reason(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("PuzzleId,FEN,Moves,Themes\n"
                    "a,4k/5/5/5/KR3 b - - 0 1,e5d5 b1b5,x\n"
                    "b,4k/5/5/5/KR3 b - - 0 1,e5d5 b1b6,x\n")
    with pytest.raises(data.DataFormatError, match=r"bad.csv:3: invalid move 'b1b6' in Moves \(move 2\)"):
        data.load_lichess_puzzles(path, game="gardner_chess")
    path.write_text("PuzzleId,FEN,Moves,Themes\na,4k/5/5/5/KR4 b - - 0 1,e5d5 b1b5,x\n")
    with pytest.raises(data.DataFormatError, match=r"bad.csv:2: bad FEN .*rank 1 \('KR4'\) has 6 squares"):
        data.load_lichess_puzzles(path, game="gardner_chess")
    chess_fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1"
    path.write_text(f"PuzzleId,FEN,Moves,Themes\na,{chess_fen},g8h8 d1d8,x\n")
    with pytest.raises(data.DataFormatError, match="8 ranks, expected 5"):
        data.load_lichess_puzzles(path, game="gardner_chess")
    loaded = data.load_lichess_puzzles(path)  # the same file is a good chess puzzle
    assert isinstance(loaded[0].board_at(0), chess.Board)
    with pytest.raises(ValueError, match="unknown game 'minichess'"):
        data.load_lichess_puzzles(path, game="minichess")
    values = tmp_path / "values.csv"
    values.write_text("id,set,fen,to_move,outcome,value\nv1,draw,4k/5/5/5/KR3 w - - 0 1,black,draw,0.5\n")
    with pytest.raises(data.DataFormatError, match=r"values.csv:2: to_move 'black' disagrees"):
        data.load_paper_positions(path=values, game="gardner_chess")
    with pytest.raises(ValueError, match="suites hold chess positions"):
        puzzles.load_suite("epd", values, game="gardner_chess")


# ------------------------------------------------------------------ the team solver (stub network)


MATE_SEARCH = search.SearchConfig(num_simulations=48, unvisited_q=1.0, pb_c_init=0.1)


@pytest.fixture(scope="module")
def stub_engine(fsf_path):
    with fairy_stockfish.FairyStockfish(fsf_path) as engine:
        yield engine


def test_stub_decodes_observations_like_our_fens():
    for fen in ("4k/5/5/1p3/R3K b - - 7 31", gardner_interop.STARTING_FEN, "k1K2/5/5/5/1R3 w - - 0 1"):
        state = gardner_interop.state_from_fen(fen)
        decoded = gardner_mate_stub.fen_from_observation(np.asarray(state.observation))
        assert decoded.split()[:5] == fen.split()[:5]


@pytest.mark.slow
def test_gardner_team_with_mate_stub_solves_the_mate_in_one_set(stub_engine):
    team = Agent(env=games.make("gardner_chess"), apply_fn=gardner_mate_stub.make_gardner_mate_stub(stub_engine),
                params={}, num_players=2, search_config=MATE_SEARCH, name="gardner-mate-stub")
    found = _subset(gardner_data.load_gardner_puzzles("mate_in_1"), 24)
    solver = solvers.TeamSolver(team, homogeneous_copies=0, batch_size=8)
    report = puzzles.run_lichess(found, solver, progress=False)
    assert report.summary["solved"]["team_visit"] == 1.0, [r for r in report.rows if not r["team_visit_solved"]]
    assert all(report.summary["solved"][c] == 1.0 for c in report.summary["columns"])
    for puzzle, row in zip(found, report.rows):
        board = puzzle.board_at(0)
        board.push_uci(row["player_0_moves"])
        assert board.is_checkmate()


# ------------------------------------------------------------------ Fairy-Stockfish on its own labels


@pytest.mark.parametrize("name", ["mate_in_1", "mate_in_2", "mate_in_3", "only_move"])
def test_fairy_stockfish_solves_its_own_labels(fsf_path, name):
    found = _subset(gardner_data.load_gardner_puzzles(name), 15)
    with fairy_stockfish.FairyStockfishSolver(fsf_path, depth=LABEL_DEPTH) as solver:
        report = puzzles.run_suite("lichess", gardner_data.packaged_path(name), solver, limit=len(found),
                                   progress=False, game="gardner_chess")
    assert report.summary["game"] == "gardner_chess" and report.summary["num_positions"] == len(found)
    # Labelled with MultiPV 2, solved with MultiPV 1: at the labelling depth the engine now and
    # then settles for a slower mate (3 of the 600 mate puzzles), which a puzzle does not accept.
    assert report.summary["solved"]["fairy_stockfish"] >= 0.95


def test_fairy_stockfish_scores_the_value_set(fsf_path):
    values = _subset(gardner_data.load_gardner_values(), 20)
    with fairy_stockfish.FairyStockfishSolver(fsf_path, depth=LABEL_DEPTH) as solver:
        report = puzzles.run_value_puzzles(values, solver, progress=False)
    assert report.summary["solved"]["0.25"]["fairy_stockfish"] == 1.0
    for position, row in zip(values, report.rows):
        assert abs(row["fairy_stockfish_score"] - position.value) <= 0.25


# ------------------------------------------------------------------ engine matches


class FirstLegalMove:
    """Stand-in engine: the legal move with the lowest pgx action id."""

    name = "first-legal"

    def __call__(self, board):
        return min(board.legal_moves, key=lambda m: gardner_interop.uci_to_action(m.uci(), board.state))


def lowest_action_policy(params, rng_key, state):
    del params, rng_key
    return jnp.argmax(state.legal_action_mask, axis=-1).astype(jnp.int32)


FENS = [None, "4k/5/5/1p3/R3K b - - 0 1", "k1K2/5/5/5/1R3 w - - 0 1"]


@pytest.mark.slow
def test_engine_loop_plays_the_same_games_as_the_arena():
    env = games.make("gardner_chess")
    kwargs = dict(seeds=(3,), max_plies=24, batch_pairs=4)
    hosted = matches.play_engine_match(RANDOM, None, FirstLegalMove(), FENS, env=env, agent_name="random", **kwargs)
    starts = gardner_interop.states_from_fens([gardner_interop.STARTING_FEN if f is None else f for f in FENS])
    jitted = matches.play_match(env, RANDOM, None, lowest_action_policy, None, starts=starts,
                                names=("random", "first-legal"), **kwargs)
    for field in ("start_index", "seed", "a_first", "a_colour", "result", "finished", "length", "actions"):
        np.testing.assert_array_equal(getattr(hosted, field), getattr(jitted, field), err_msg=field)
    assert hosted.env_id == "gardner_chess" and hosted.a_colour[:4].tolist() == ["white", "black", "black", "white"]
    assert game_records.match_record(hosted).count("\n") == 2 + hosted.num_games


@pytest.mark.slow
def test_engine_match_with_fairy_stockfish(fsf_path):
    env = games.make("gardner_chess")
    with fairy_stockfish.FairyStockfishPlayer(fsf_path, nodes=2000) as engine:
        match = matches.play_engine_match(RANDOM, None, engine, [FENS[2]], env=env, seeds=(0,), max_plies=6)
    # White to move mates in one (Rb1-a1#): Fairy-Stockfish as White mates at once.
    assert match.a_colour.tolist() == ["white", "black"]
    assert match.finished[1] and match.result[1] == -1 and match.length[1] == 1
    board = GardnerBoard(FENS[2])
    board.push_uci(gardner_interop.action_to_uci(int(match.actions[1, 0]), board.state))
    assert board.is_checkmate()
