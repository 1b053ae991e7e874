"""Tests for azdb_jax/data/paper.py: the packaged Penrose/Challenge list of the paper."""

import chess
import pytest

from azdb_jax import data

HEADER = "id,set,paper_table,fen,to_move,outcome,value,legal"
KP_FEN = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"


@pytest.fixture(scope="module")
def positions():
    return data.load_paper_positions()


def test_counts(positions):
    assert len(positions) == 68 and positions.skipped == ()
    assert len(data.load_paper_positions("penrose")) == 53
    assert len(data.load_paper_positions(set="challenge")) == 15
    assert {p.id for p in positions} == {f"penrose-{i:02d}" for i in range(1, 54)} | {
        f"challenge-{i:02d}" for i in range(1, 16)
    }
    with pytest.raises(ValueError, match="set must be"):
        data.load_paper_positions("others")


def test_packaged_copy_agrees_with_the_shared_list(positions, data_dir):
    shared = data.load_paper_positions(path=data_dir / "puzzles" / "paper_penrose_challenge.csv")
    assert shared == positions


def test_illegal_but_playable_positions_load(positions):
    illegal = [p for p in positions if not p.legal]
    assert [p.id for p in illegal] == ["penrose-19"] + [f"penrose-{i}" for i in range(30, 36)]
    assert illegal[0].illegal_reasons == ("too_many_black_pawns",)
    for position in illegal:
        board = position.board()
        assert not board.is_valid() and board.status() != chess.STATUS_VALID
        assert any(board.legal_moves)
    assert all(p.illegal_reasons == () for p in positions if p.legal)


def test_known_facts(positions):
    by_id = {p.id: p for p in positions}
    first = by_id["penrose-01"]
    assert (first.set, first.paper_table, first.to_move, first.outcome, first.value) == (
        "penrose", 4, "white", "draw", 0.5
    )
    assert first.fen == "knb5/1b1p4/p1pPb3/P1P5/6p1/6Pp/7P/K7 w - - 0 1"
    assert by_id["penrose-12"].outcome == "loss" and by_id["penrose-12"].value == 0.0
    assert by_id["challenge-15"].fen == by_id["penrose-48"].fen
    assert all((p.to_move == "white") == (p.board().turn == chess.WHITE) for p in positions)


def test_value_solved_rule(positions):
    draw = positions[0]
    assert data.paper_value_solved(draw, 0.0) and data.paper_value_solved(draw, 0.5)
    assert not data.paper_value_solved(draw, 0.6)
    assert not data.paper_value_solved(draw, 0.3, tolerance=0.1)
    win = next(p for p in positions if p.value == 1.0)
    assert data.paper_value_solved(win, 1.0) and not data.paper_value_solved(win, 0.0)


def _write_bad(tmp_path):
    rows = [
        "# comment line",
        HEADER,
        f"t-01,penrose,4,{KP_FEN},white,win,1.0,true",
        f"t-02,penrose,4,{KP_FEN.replace('K3 w', 'X3 w')},white,win,1.0,true",
        f"t-03,penrose,4,{KP_FEN},black,win,1.0,true",
        f"t-04,penrose,4,{KP_FEN},white,win,0.5,true",
        f"t-05,penrose,4,{KP_FEN},white,win,1.0,false",
        f"t-06,penrose,4,{KP_FEN},white,win,1.0",
        f"t-07,other,4,{KP_FEN},white,win,1.0,true",
        f"t-01,penrose,4,{KP_FEN},white,win,1.0,true",
        f"t-09,challenge,x,{KP_FEN},white,draw,half,true",
        f"t-10,challenge,,{KP_FEN},white,draw,0.5,true",
    ]
    path = tmp_path / "paper.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_strict_names_file_line_and_reason(tmp_path):
    path = _write_bad(tmp_path)
    with pytest.raises(data.DataFormatError) as info:
        data.load_paper_positions(path=path)
    assert str(info.value).startswith(f"{path}:4: bad FEN")


def test_lenient_reports_every_bad_row(tmp_path):
    loaded = data.load_paper_positions(path=_write_bad(tmp_path), strict=False)
    assert [p.id for p in loaded] == ["t-01", "t-10"]
    assert loaded[1].paper_table is None
    assert [skip.line for skip in loaded.skipped] == [4, 5, 6, 7, 8, 9, 10, 11]
    reasons = [skip.reason for skip in loaded.skipped]
    assert reasons[1] == "to_move 'black' disagrees with the FEN (white to move)"
    assert reasons[2] == "value 0.5 disagrees with outcome 'win'"
    assert reasons[3] == "legal=false but python-chess says valid"
    assert reasons[4].startswith("expected 8 columns")
    assert reasons[5] == "set 'other' is not one of penrose, challenge"
    assert reasons[6] == "duplicate id 't-01'"
    assert reasons[7] == "paper_table 'x' is not an integer"


def test_bad_header(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("id,set,fen\n")
    expected = r"h\.csv:1: bad header \(missing to_move, outcome, value\)"
    with pytest.raises(data.DataFormatError, match=expected):
        data.load_paper_positions(path=path)
