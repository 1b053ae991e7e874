"""Puzzle runners and the team solver: scoring rules by hand, Lichess lines, mate search, the CLI.

The runners are checked with scripted solvers (moves and values chosen by hand) against
hand-computed scores; the team solver is checked with a mate-aware stub network
(``tests/mate_stub.py``: uniform policy, python-chess mate knowledge as value) on the
Lichess mate puzzles of the shared sample, and with a tiny random network for the
structure of its columns, batch independence and the CLI.
"""

import json
import math
import pathlib
import sys
from typing import Dict, Optional, Sequence, Tuple

import chess
import jax
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import mate_stub  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax import data, games, networks, search  # noqa: E402
from azdb_jax.envs import chess_interop  # noqa: E402
from azdb_jax.evaluation import puzzle_eval, puzzles, solvers  # noqa: E402
from azdb_jax.agent import Agent  # noqa: E402
from azdb_jax.evaluation.team import SolverOutput  # noqa: E402

LICHESS = ("puzzles", "lichess_puzzles_kagi_1000_random.csv")
START = chess.STARTING_FEN
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1"


class ScriptedSolver:
    """A solver that answers from a table: ``answers[column][position EPD] = (uci, value)``.

    Positions are keyed by EPD (board, side, castling, en passant) so clocks do not matter;
    an unknown position gets no move (``""``) and a NaN value.
    """

    def __init__(self, answers: Dict[str, Dict[str, Tuple[str, float]]],
                 groups: Optional[Dict[str, Tuple[str, ...]]] = None):
        self.answers = {c: {chess.Board(fen).epd(): a for fen, a in table.items()} for c, table in answers.items()}
        self.columns = tuple(answers)
        self.groups = dict(groups or {})
        self.calls = []

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        self.calls.append([b.fen() for b in boards])
        moves = {c: [self.answers[c].get(b.epd(), ("", math.nan))[0] for b in boards] for c in self.columns}
        values = {c: np.array([self.answers[c].get(b.epd(), ("", math.nan))[1] for b in boards]) for c in self.columns}
        return SolverOutput(moves=moves, values=values)


def _scripted(fen_moves: Dict[str, Dict[str, str]], groups=None) -> ScriptedSolver:
    """``{column: {fen: uci}}`` with value 0 everywhere."""
    return ScriptedSolver({c: {f: (m, 0.0) for f, m in table.items()} for c, table in fen_moves.items()}, groups)


# ------------------------------------------------------------------ STS and bm/am, by hand


STS_LINES = f"""\
{START.rsplit(' ', 2)[0]} id "STS(v1.0) Openings.001"; c0 "e4=100, d4=80, Nf3=50";
{AFTER_E4.rsplit(' ', 2)[0]} id "STS(v2.0) Replies.001"; c0 "e5=10, c5=5";
{AFTER_E4_E5.rsplit(' ', 2)[0]} id "STS(v1.0) Openings.002"; c0 "Nf3=40, Bc4=20";
"""


def _write(tmp_path, name, text) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_sts_scores_match_hand_computed_means(tmp_path):
    records = data.load_epd(_write(tmp_path, "sts.epd", STS_LINES), c0="scores")
    solver = _scripted({"a": {START: "d2d4", AFTER_E4: "c7c5", AFTER_E4_E5: "h2h3"},  # 0.8, 0.5, 0 (unlisted)
                        "b": {START: "e2e4", AFTER_E4: "a7a6", AFTER_E4_E5: "f1c4"}},  # 1.0, 0 (unlisted), 0.5
                       groups={"best": ("a", "b")})
    report = puzzles.run_sts(records, solver, progress=False)
    score = report.summary["score"]
    assert score["a"] == pytest.approx((0.8 + 0.5 + 0.0) / 3)
    assert score["b"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert score["best"] == pytest.approx((1.0 + 0.5 + 0.5) / 3)  # best member per position
    by_suite = report.summary["by_sts_suite"]
    assert by_suite["1"]["theme"] == "Openings" and by_suite["1"]["count"] == 2
    assert by_suite["1"]["score"]["a"] == pytest.approx(0.4)
    assert by_suite["1"]["score"]["b"] == pytest.approx(0.75)
    assert by_suite["2"]["score"] == pytest.approx({"a": 0.5, "b": 0.0, "best": 0.5})
    assert [row["a_score"] for row in report.rows] == pytest.approx([0.8, 0.5, 0.0])
    assert [row["b_move"] for row in report.rows] == ["e2e4", "a7a6", "f1c4"]
    assert report.summary["columns"] == ["a", "b", "best"]


def test_sts_refuses_records_without_scores(tmp_path):
    records = data.load_epd(_write(tmp_path, "bm.epd", f"{START.rsplit(' ', 2)[0]} bm e4;\n"))
    with pytest.raises(ValueError, match="no c0"):
        puzzles.run_sts(records, _scripted({"a": {}}), progress=False)


def test_bm_am_solved_rates_match_hand_computed_values(tmp_path):
    lines = (f"{START.rsplit(' ', 2)[0]} bm e4 d4; id \"x1\";\n"
             f"{AFTER_E4.rsplit(' ', 2)[0]} am f6; id \"x2\";\n"
             f"{AFTER_E4_E5.rsplit(' ', 2)[0]} bm Nf3; am Qh5; id \"x3\";\n")
    records = data.load_epd(_write(tmp_path, "suite.epd", lines))
    solver = _scripted({"a": {START: "d2d4", AFTER_E4: "f7f6", AFTER_E4_E5: "g1f3"},  # 1, 0 (am), 1
                        "b": {START: "g1f3", AFTER_E4: "e7e5", AFTER_E4_E5: "d1h5"}},  # 0 (not bm), 1, 0 (am)
                       groups={"any": ("a", "b")})
    report = puzzles.run_bm_am(records, solver, progress=False)
    assert report.summary["solved"] == pytest.approx({"a": 2 / 3, "b": 1 / 3, "any": 1.0})
    assert report.summary["num_solved"] == {"a": 2, "b": 1, "any": 3}
    assert [row["a_solved"] for row in report.rows] == [1, 0, 1]
    assert [row["id"] for row in report.rows] == ["x1", "x2", "x3"]


# ------------------------------------------------------------------ value puzzles, by hand


PAPER_CSV = """\
id,set,paper_table,fen,to_move,outcome,value,legal
p-win,penrose,4,6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1,white,win,1.0,true
p-draw,penrose,5,8/8/4k3/8/8/4K3/8/8 w - - 0 1,white,draw,0.5,true
c-loss,challenge,,6k1/5ppp/8/8/8/8/5PPP/r5K1 w - - 0 1,white,loss,0.0,true
"""


def test_value_puzzles_at_both_thresholds(tmp_path):
    positions = data.load_paper_positions(path=_write(tmp_path, "paper.csv", PAPER_CSV))
    fens = [p.fen for p in positions]
    # Values V for the side to move; (V + 1) / 2 against the targets 1, 0.5, 0:
    #   a: 0.6 -> 0.8 (|0.2| ok@0.25, no@0.1); 0.1 -> 0.55 (0.05: both); -0.85 -> 0.075 (both)
    #   b: 0.9 -> 0.95 (both); -0.6 -> 0.2 (0.3: neither); NaN (no value: neither)
    solver = ScriptedSolver({"a": {fens[0]: ("a1a8", 0.6), fens[1]: ("e3e4", 0.1), fens[2]: ("g1f1", -0.85)},
                             "b": {fens[0]: ("a1a8", 0.9), fens[1]: ("e3e4", -0.6), fens[2]: ("g1f1", math.nan)}},
                            groups={"either": ("a", "b")})
    report = puzzles.run_value_puzzles(positions, solver, progress=False)
    solved = report.summary["solved"]
    assert solved["0.25"] == pytest.approx({"a": 1.0, "b": 1 / 3, "either": 1.0})
    assert solved["0.1"] == pytest.approx({"a": 2 / 3, "b": 1 / 3, "either": 1.0})  # b on p-win, a elsewhere
    by_set = report.summary["by_set"]
    assert by_set["penrose"]["count"] == 2 and by_set["challenge"]["count"] == 1
    assert by_set["penrose"]["solved"]["0.1"] == pytest.approx({"a": 0.5, "b": 0.5, "either": 1.0})
    assert by_set["challenge"]["solved"]["0.25"] == pytest.approx({"a": 1.0, "b": 0.0, "either": 1.0})
    assert "not published" in report.summary["note"]
    assert report.rows[0]["a_score"] == pytest.approx(0.8)
    assert [r["a_solved@0.1"] for r in report.rows] == [0, 1, 1]
    assert report.summary["headline"]["challenge@0.1"]["a"] == 1.0


# ------------------------------------------------------------------ Lichess lines


@pytest.fixture(scope="module")
def lichess(data_dir):
    return {p.puzzle_id: p for p in data.load_lichess_puzzles(data_dir.joinpath(*LICHESS))}


def _line_solver(puzzle, plays: Dict[str, Sequence[str]], groups=None) -> ScriptedSolver:
    """Column c plays ``plays[c][s]`` at step s of ``puzzle``'s line."""
    answers = {c: {puzzle.board_at(s).fen(): (m, 0.0) for s, m in enumerate(moves)} for c, moves in plays.items()}
    return ScriptedSolver(answers, groups)


def test_lichess_steps_right_wrong_and_other_mates(lichess):
    puzzle = lichess["dpHO5"]  # mateIn2: ... e7a7 | h5f6 g8h8 | g6h7#
    assert puzzle.solution == ("h5f6", "g6h7")
    board = puzzle.board_at(1)
    assert not _mates(board, "g6g7") and _mates(board, "g6h7")
    solver = _line_solver(puzzle, {"right": ["h5f6", "g6h7"], "wrong2": ["h5f6", "g6g7"], "wrong1": ["g6g7"]},
                          groups={"any": ("wrong2", "right"), "none": ("wrong1", "wrong2")})
    report = puzzles.run_lichess([puzzle], solver, progress=False)
    row = report.rows[0]
    assert (row["right_solved"], row["right_failed_step"]) == (1, None)
    assert (row["wrong2_solved"], row["wrong2_failed_step"]) == (0, 2)
    assert (row["wrong1_solved"], row["wrong1_failed_step"]) == (0, 1)
    assert (row["any_solved"], row["none_solved"], row["none_failed_step"]) == (1, 0, 2)
    assert row["wrong1_moves"] == "g6g7" and row["right_moves"] == "h5f6 g6h7"
    # Step 2 asks only about the still-open puzzle, once for every surviving column.
    assert [len(call) for call in solver.calls] == [1, 1]

    other = lichess["9A6fb"]  # the last step has two mates: the listed d2a2# and d2b4#
    assert other.solution == ("d7d2", "d2a2") and _mates(other.board_at(1), "d2b4")
    report = puzzles.run_lichess([other], _line_solver(other, {"other_mate": ["d7d2", "d2b4"]}), progress=False)
    assert report.rows[0]["other_mate_solved"] == 1


def test_lichess_edited_reply_fails_the_original_answer(lichess, tmp_path):
    """dpHO5 with the reply g8h8 edited to g8f8 and a listed last move that no longer mates:
    the original answer g6h7 is now neither the listed move nor mate; the real mate g6e8 counts."""
    original = lichess["dpHO5"]
    edited_moves = (original.moves[0], original.moves[1], "g8f8", "g6g7")
    header = "PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags\n"
    row = f"edit1,{original.fen},{' '.join(edited_moves)},1500,80,90,100,mate mateIn2,,\n"
    (edited,) = data.load_lichess_puzzles(_write(tmp_path, "edited.csv", header + row))
    board = edited.board_at(1)
    assert not _mates(board, "g6h7") and not _mates(board, "g6g7") and _mates(board, "g6e8")
    solver = _line_solver(edited, {"original": ["h5f6", "g6h7"], "mate": ["h5f6", "g6e8"], "listed": ["h5f6", "g6g7"]})
    report = puzzles.run_lichess([edited, original], solver, progress=False)
    assert report.rows[0]["original_failed_step"] == 2 and report.rows[0]["original_solved"] == 0
    assert report.rows[0]["mate_solved"] == 1 and report.rows[0]["listed_solved"] == 1
    assert report.summary["solved"]["original"] == 0.0  # the scripted table only covers the edited line


def _mates(board: chess.Board, uci: str) -> bool:
    board = board.copy()
    board.push_uci(uci)
    return board.is_checkmate()


# ------------------------------------------------------------------ files and errors


def test_missing_and_malformed_files_name_the_path(tmp_path):
    solver = _scripted({"a": {}})
    missing = tmp_path / "nowhere" / "sts.epd"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        puzzles.run_suite("sts", missing, solver, progress=False)
    bad = _write(tmp_path, "bad.epd", STS_LINES + "8/8/8/8 w - - c0 \"Qxz9=10\";\n")
    with pytest.raises(data.DataFormatError, match=rf"{bad}:4: "):
        puzzles.run_suite("sts", bad, solver, progress=False)
    with pytest.raises(ValueError, match="valid suites: sts, epd, lichess, paper"):
        puzzles.run_suite("chess960", bad, solver, progress=False)


def test_report_files_are_written(tmp_path):
    path = _write(tmp_path, "sts.epd", STS_LINES)
    solver = _scripted({"a": {START: "e2e4"}})
    report = puzzles.run_suite("sts", path, solver, limit=2, progress=False)
    json_path, csv_path = report.write(tmp_path / "out" / "sts_report")
    saved = json.loads(json_path.read_text())
    assert saved["summary"]["num_positions"] == 2 and saved["summary"]["data"] == str(path)
    assert saved["summary"]["score"]["a"] == pytest.approx(0.5)
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + 2 and lines[0].startswith("id,fen,")
    assert not list((tmp_path / "out").glob(".*tmp"))  # no temporary file left behind
    assert "a" in report.table()


# ------------------------------------------------------------------ the mate-aware stub


def test_stub_decodes_observations_like_python_chess():
    rng = np.random.default_rng(0)
    boards = []
    for _ in range(24):
        board = chess.Board()
        for _ in range(int(rng.integers(0, 60))):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(moves[int(rng.integers(len(moves)))])
        boards.append(board.copy(stack=False))
    observations = np.asarray(chess_interop.states_from_boards(boards).observation)
    for board, observation in zip(boards, observations):
        decoded = mate_stub.board_from_observation(observation)
        assert decoded.board_fen() == board.board_fen() and decoded.turn == board.turn
        assert decoded.castling_rights == board.clean_castling_rights()
        assert decoded.halfmove_clock == board.halfmove_clock


def test_stub_values_on_hand_solved_positions():
    # Black: Kh8 only move Kg8 (Kg6 guards g7 and h7), then Rb8#; White to move after Kg8 mates at once.
    mated_in_two = "7k/8/6K1/8/8/8/8/1R6 b - - 0 1"
    assert [m.uci() for m in chess.Board(mated_in_two).legal_moves] == ["h8g8"]
    assert mate_stub.mate_value(mated_in_two) == mate_stub.MATED_IN_TWO
    assert mate_stub.mate_value("6k1/8/6K1/8/8/8/8/1R6 w - - 0 1") == mate_stub.MATE_IN_ONE
    # Black to move with luft available (...h6) escapes the back-rank mate: no short mate either way.
    assert mate_stub.mate_value("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1") == 0.0
    assert mate_stub.mate_value("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1") == mate_stub.MATE_IN_ONE  # Ra8#
    assert mate_stub.mate_value(START) == 0.0


# The search budget of the mate tests: PUCT, 64 simulations, optimistic unvisited actions
# (unvisited_q = +1: every root move is tried once, the widest root has 54 legal moves)
# and a small exploration constant (the stub's prior carries no information).
MATE_SEARCH = search.SearchConfig(num_simulations=64, unvisited_q=1.0, pb_c_init=0.1)
# Puzzles of the test: the mateIn1 and the first 7 mateIn2 of the file (one batch per step).
# Not all 165: 14 are missed in some column (docs/results.md, "Mate puzzles with a
# mate-aware stub network"). On VC5cS, after the key move and the one reply, the search
# tries the moves of the next position one by one (unvisited_q = +1, uniform prior); those
# it tried let the opponent mate, and their -1s, averaged into the key move's Q, outweigh
# its stub value of +0.9 at 64 simulations. The full-width tree the test once ran on solved
# VC5cS only by visiting the opponent's illegal actions there, which pgx scores as losses
# for their mover; the compact tree's slots hold legal moves only.
MATE_SUBSET = 8


def mate_puzzles(path) -> list:
    """The mateIn1 and mateIn2 puzzles of a Lichess file, in file order."""
    return puzzles.filter_themes(data.load_lichess_puzzles(path), ["mateIn1", "mateIn2"])


def mate_team(num_players: int = 2) -> Agent:
    return Agent(env=games.make("chess"), apply_fn=mate_stub.make_mate_stub(), params={}, num_players=num_players,
                search_config=MATE_SEARCH, name="mate-stub")


@pytest.mark.slow
def test_team_solver_with_mate_stub_solves_mate_puzzles(data_dir):
    found = mate_puzzles(data_dir.joinpath(*LICHESS))
    assert len(found) == 165 and sum("mateIn1" in p.themes for p in found) == 1
    subset = [p for p in found if "mateIn1" in p.themes] + [p for p in found if "mateIn2" in p.themes]
    subset = subset[:MATE_SUBSET]
    solver = solvers.TeamSolver(mate_team(), homogeneous_copies=0, batch_size=8)
    report = puzzles.run_lichess(subset, solver, progress=False)
    for row in report.rows:
        assert all(row[f"{c}_solved"] for c in report.summary["columns"]), row
    # Independently: every move a column played is legal and the last one mates.
    for puzzle, row in zip(subset, report.rows):
        moves = row["team_visit_moves"].split()
        board = puzzle.board_at(len(moves) - 1)
        assert _mates(board, moves[-1])


# ------------------------------------------------------------------ the team solver, tiny network


TINY = networks.NetworkConfig(channels=8, num_blocks=1, value_hidden=8)


@pytest.fixture(scope="module")
def tiny_team() -> Agent:
    net = networks.make_network(TINY, num_actions=4672, num_players=2)
    params = net.init(jax.random.PRNGKey(0), np.zeros((8, 8, 119), np.float32))
    return Agent(env=games.make("chess"), apply_fn=net.apply, params=params, num_players=2,
                search_config=search.SearchConfig(num_simulations=8), name="tiny")


def test_team_solver_rejects_bad_options(tiny_team):
    with pytest.raises(ValueError, match="valid rules: visit, value, lcb, gap"):
        solvers.TeamSolver(tiny_team, rules=("visit", "majority"))
    with pytest.raises(ValueError, match="move must be one of"):
        solvers.TeamSolver(tiny_team, move="policy")
    with pytest.raises(ValueError, match="homogeneous_copies"):
        solvers.TeamSolver(tiny_team, homogeneous_copies=-1)
    with pytest.raises(ValueError, match="batch_size"):
        solvers.TeamSolver(tiny_team, batch_size=0)
    nim = Agent(env=games.make("nim"), apply_fn=tiny_team.apply_fn, params=None, num_players=2,
               search_config=tiny_team.search_config)
    with pytest.raises(ValueError, match="chess"):
        solvers.TeamSolver(nim)
    solver = solvers.TeamSolver(tiny_team, rules=("gap",), homogeneous_copies=3)
    assert solver.columns == ("player_0", "player_1", "team_gap", "homogeneous_0", "homogeneous_1",
                              "homogeneous_2", "homogeneous_gap")
    assert solver.groups == {"max_over_latents": ("player_0", "player_1"),
                             "homogeneous_max": ("homogeneous_0", "homogeneous_1", "homogeneous_2")}


@pytest.mark.slow
def test_team_solver_answers_are_batch_independent(tiny_team):
    solver = solvers.TeamSolver(tiny_team, batch_size=4, homogeneous_copies=2)
    in_check = chess.Board("6k1/5ppp/8/8/8/8/5PP1/r5K1 w - - 0 1")  # Kh2 escapes
    assert in_check.is_check() and not in_check.is_checkmate()
    checkmate = chess.Board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")
    assert checkmate.is_checkmate()
    boards = [chess.Board(START), chess.Board(AFTER_E4), checkmate, chess.Board(AFTER_E4_E5), in_check]
    together = solver(boards)
    alone = solver([boards[3]])
    reordered = solver([boards[4], boards[0]])
    for column in solver.columns:
        assert together.moves[column][3] == alone.moves[column][0]
        assert together.values[column][3] == pytest.approx(alone.values[column][0], abs=1e-6)
        assert together.moves[column][4] == reordered.moves[column][0]
        assert together.moves[column][0] == reordered.moves[column][1]
        # A finished game is not searched: no move, the result for the side to move.
        assert together.moves[column][2] == "" and together.values[column][2] == -1.0
        for board, move in zip(boards, together.moves[column]):
            assert move == "" or chess.Move.from_uci(move) in board.legal_moves
    # One compiled program served batches of 5 (4 + 1), 1 and 2 positions.
    assert len(solver._programs) == 1
    assert next(iter(solver._programs.values()))._cache_size() == 1
    # Rules play a player's move with that player's value; the value rule takes the best V.
    for b in (0, 1, 3, 4):
        player_moves = [together.moves[f"player_{j}"][b] for j in range(2)]
        player_values = [together.values[f"player_{j}"][b] for j in range(2)]
        for rule in solver.rules:
            assert together.moves[f"team_{rule}"][b] in player_moves
            assert min(abs(together.values[f"team_{rule}"][b] - v) for v in player_values) < 1e-6
        assert together.values["team_value"][b] == pytest.approx(max(player_values))
        assert together.values["team_gap"][b] <= together.values["team_value"][b] + 1e-6


def test_team_solver_columns_of_every_option(tiny_team):
    """Players searched, further per-player moves, trials and several teams name their
    columns and oracle groups (no search)."""
    alone = solvers.TeamSolver(tiny_team, players=1, rules=(), homogeneous_copies=0)
    assert alone.columns == ("player_0",) and alone.groups == {"max_over_latents": ("player_0",)}
    assert alone.members == ((0, 0),)
    moves = solvers.TeamSolver(tiny_team, rules=("value",), moves=("value",), homogeneous_copies=1)
    assert moves.columns == ("player_0", "player_1", "player_0_value", "player_1_value", "team_value",
                             "homogeneous_0", "homogeneous_value")
    assert moves.groups == {"max_over_latents": ("player_0", "player_1"),
                            "max_over_latents_value": ("player_0_value", "player_1_value"),
                            "homogeneous_max": ("homogeneous_0",)}
    lcb = solvers.TeamSolver(tiny_team, rules=(), move="lcb", moves=("lcb", "visits"), homogeneous_copies=0)
    assert lcb.columns == ("player_0", "player_1", "player_0_visits", "player_1_visits")
    trials = solvers.TeamSolver(tiny_team, trials=(4, 1, 2, 2), rules=("gap",), homogeneous_copies=3)
    assert trials.columns == ("player_0", "player_1", "latents_1_gap", "latents_2_gap", "copy_0", "copy_1",
                              "copy_2", "copies_1_gap", "copies_2_gap")
    assert trials.groups == {"latents_1_max": ("player_0",), "latents_2_max": ("player_0", "player_1"),
                             "copies_1_max": ("copy_0",), "copies_2_max": ("copy_0", "copy_1")}
    seeds = solvers.TeamSolver([tiny_team, tiny_team], players=2, rules=("visit",))
    assert seeds.homogeneous_copies == 0 and seeds.members == ((0, 0), (0, 1), (1, 0), (1, 1))
    assert seeds.columns == ("seed_0_player_0", "seed_0_player_1", "seed_1_player_0", "seed_1_player_1",
                             "team_visit")
    assert seeds.groups == {"max_over_seeds": seeds.columns[:4]}
    with pytest.raises(ValueError, match="latent 0"):
        solvers.TeamSolver([tiny_team, tiny_team], homogeneous_copies=2)
    with pytest.raises(ValueError, match="at least one team"):
        solvers.TeamSolver([])
    with pytest.raises(ValueError, match="moves must be among"):
        solvers.TeamSolver(tiny_team, moves=("policy",))
    with pytest.raises(ValueError, match="players"):
        solvers.TeamSolver(tiny_team, players=0)
    with pytest.raises(ValueError, match="trials"):
        solvers.TeamSolver(tiny_team, trials=(0, 2))
    gardner = Agent(env=games.make("gardner_chess"), apply_fn=tiny_team.apply_fn, params=None, num_players=2,
                   search_config=tiny_team.search_config)
    with pytest.raises(ValueError, match="different games"):
        solvers.TeamSolver([tiny_team, gardner])


@pytest.mark.slow
def test_team_solver_player_view_several_teams_and_shared_programs(tiny_team):
    """Player 0 searched alone with its move bars checked against the network by hand;
    several teams answer as each team alone; solvers sharing ``programs`` compile once."""
    programs = {}
    boards = [chess.Board(START), chess.Board(AFTER_E4), chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")]
    whole = solvers.TeamSolver(tiny_team, rules=("value", "gap"), homogeneous_copies=0, batch_size=4,
                               programs=programs)
    seeds = solvers.TeamSolver([tiny_team, tiny_team], rules=("value", "gap"), batch_size=4, programs=programs)
    together, as_seeds = whole(boards), seeds(boards)
    for j in range(2):
        for s in range(2):
            assert as_seeds.moves[f"seed_{s}_player_{j}"] == together.moves[f"player_{j}"]
            np.testing.assert_array_equal(as_seeds.values[f"seed_{s}_player_{j}"], together.values[f"player_{j}"])
    for rule in ("value", "gap"):  # a duplicated team changes no choice (ties go to the lower index)
        assert as_seeds.moves[f"team_{rule}"] == together.moves[f"team_{rule}"]
    assert len(programs) == 2  # the one team's program served both solvers; the second team has its own

    alone = solvers.TeamSolver(tiny_team, players=1, rules=(), homogeneous_copies=0, batch_size=4, programs=programs)
    again = solvers.TeamSolver(tiny_team, players=1, rules=(), homogeneous_copies=0, batch_size=4, programs=programs)
    assert again(boards).moves == alone(boards).moves
    searched = [program for key, program in programs.items() if key[0] == "search" and key[2] == 1]
    assert len(searched) == 1 and searched[0]._cache_size() == 1
    bars = alone.move_bars(boards)
    game = games.board_game(tiny_team.env)

    def network(positions):
        states = game.states_from_boards(positions, max_pieces=game.required_max_pieces(positions))
        return tiny_team.apply_fn(tiny_team.params, states.observation, np.zeros(len(positions), np.int32))

    roots = network(boards)
    for b, (board, view) in enumerate(zip(boards, bars)):
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        assert view["moves"] == [m.uci() for m in legal]
        logits = np.asarray(roots.policy_logits[b], np.float64)[view["actions"]]
        np.testing.assert_allclose(view["prior"], np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum(),
                                   atol=1e-5)
        assert view["root_value"] == pytest.approx(float(roots.value[b]), abs=1e-5)
        assert 0 < view["visits"].sum() <= tiny_team.search_config.num_simulations
        np.testing.assert_array_equal(np.isnan(view["q"]), view["visits"] == 0)
        assert view["search_value"] == pytest.approx(np.nanmax(view["q"]), abs=1e-6)
        children = []
        for move in legal:
            child = board.copy(stack=False)
            child.push(move)
            children.append(child)
        live = [k for k, child in enumerate(children) if not child.is_game_over()]
        np.testing.assert_allclose(view["raw_value"][live], -np.asarray(network([children[k] for k in live]).value),
                                   atol=1e-5)
        for k, child in enumerate(children):
            if child.is_checkmate():  # Ra8#
                assert view["raw_value"][k] == 1.0 and view["moves"][k] == "a1a8"
    with pytest.raises(ValueError, match="already over"):
        alone.move_bars([chess.Board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1")])


@pytest.mark.slow
def test_cli_runs_end_to_end_and_oracle_bounds_every_rule(tiny_team, tmp_path):
    path = _write(tmp_path, "sts.epd", STS_LINES)
    report, json_path, csv_path = puzzle_eval.evaluate(
        suite="sts", data=str(path), team=tiny_team, num_players=2, simulations=8, homogeneous_copies=2,
        batch_size=4, out=str(tmp_path / "eval" / "sts_tiny"), progress=False)
    saved = json.loads(json_path.read_text())
    assert saved["summary"]["num_positions"] == 3 and saved["summary"]["solver"]["num_simulations"] == 8
    assert len(csv_path.read_text().splitlines()) == 1 + 3
    columns = saved["summary"]["columns"]
    assert {"max_over_latents", "homogeneous_max", "team_gap", "homogeneous_visit"} <= set(columns)
    for row in saved["rows"]:
        players = [row[f"player_{j}_score"] for j in range(2)]
        assert row["max_over_latents_score"] == pytest.approx(max(players))
        for rule in solvers.DEFAULT_RULES:
            assert row[f"team_{rule}_score"] <= row["max_over_latents_score"] + 1e-9
            assert row[f"homogeneous_{rule}_score"] <= row["homogeneous_max_score"] + 1e-9
    for rule in solvers.DEFAULT_RULES:
        assert report.summary["score"][f"team_{rule}"] <= report.summary["score"]["max_over_latents"] + 1e-9
    missing = tmp_path / "missing.epd"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        puzzle_eval.evaluate(suite="sts", data=str(missing), team=tiny_team, out=str(tmp_path / "x"))
    with pytest.raises(ValueError, match="team of 2 player"):
        puzzle_eval.evaluate(suite="sts", data=str(path), team=tiny_team, num_players=3, out=str(tmp_path / "x"))
