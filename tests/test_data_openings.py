"""Tests for azdb_jax/data/openings.py: ECO TSV tables, movetext replay and ECO filters."""

import collections

import chess
import pytest

from azdb_jax import data

HEADER = "eco\tname\tpgn"


@pytest.fixture(scope="module")
def openings(data_dir):
    return data.load_openings(data_dir / "openings")


def test_counts(openings, data_dir):
    assert len(openings) == 3373 and openings.skipped == ()
    assert len(data.load_openings(data_dir / "openings", exclude="A00")) == 3234
    per_letter = collections.Counter(opening.eco[0] for opening in openings)
    # One file per ECO letter, each line but the header a row.
    for letter in "ABCDE":
        lines = (data_dir / "openings" / f"{letter.lower()}.tsv").read_text().splitlines()
        assert per_letter[letter] == len(lines) - 1


def test_filters(openings, data_dir):
    single = data.load_openings(data_dir / "openings" / "c.tsv", eco=["C6", "C7"])
    assert single and all(o.eco[:2] in ("C6", "C7") for o in single)
    assert len(single) == sum(o.eco[:2] in ("C6", "C7") for o in openings)
    b_not_b0 = data.load_openings(data_dir / "openings", eco="b", exclude=["B0"])
    assert len(b_not_b0) == sum(o.eco[0] == "B" and o.eco[:2] != "B0" for o in openings)


def test_french_defense_position(openings):
    french = next(o for o in openings if o.name == "French Defense")
    assert (french.eco, french.pgn, french.moves) == ("C00", "1. e4 e6", ("e2e4", "e7e6"))
    assert french.fen == "rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"


def test_ruy_lopez_matches_a_hand_replay(openings):
    ruy = next(o for o in openings if o.name == "Ruy Lopez: Morphy Defense")
    board = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6"):
        board.push_san(san)
    assert ruy.eco == "C70" and ruy.fen == board.fen()
    assert ruy.board().move_stack == board.move_stack


def test_every_fen_matches_its_moves(openings):
    for opening in openings[::50]:
        board = chess.Board()
        for uci in opening.moves:
            board.push(chess.Move.from_uci(uci))
        assert board.fen() == opening.fen, opening.name


def test_replay_movetext():
    assert data.replay_movetext("1. e4 e5 2. Nf3 *").fen() == (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
    )
    assert data.replay_movetext("1.d4 d5 2.c4").ply() == 3
    with pytest.raises(ValueError, match="invalid move 'foo'"):
        data.replay_movetext("1. e4 foo e5")
    with pytest.raises(ValueError, match="unsupported PGN element"):
        data.replay_movetext("1. e4 {best by test} e5")


def _write_bad(tmp_path):
    rows = [
        HEADER,
        "C00\tFrench Defense\t1. e4 e6",
        "C20\tBroken\t1. e4 e5 2. Qxz9 Nc6",
        "C20\tIllegal\t1. e4 e5 2. Ke3",
        "C20\tTwo columns\t",
        "C20 only one column",
        "Z99\tBad code\t1. e4",
        "# comment",
        "B00\tKing's Pawn\t1. e4",
    ]
    path = tmp_path / "x.tsv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_strict_names_file_line_and_reason(tmp_path):
    path = _write_bad(tmp_path)
    with pytest.raises(data.DataFormatError) as info:
        data.load_openings(path)
    assert str(info.value) == f"{path}:3: invalid move 'Qxz9' in pgn (ply 3)"


def test_lenient_reports_every_bad_row(tmp_path):
    loaded = data.load_openings(_write_bad(tmp_path), strict=False)
    assert [o.name for o in loaded] == ["French Defense", "King's Pawn"]
    assert [skip.line for skip in loaded.skipped] == [3, 4, 5, 6, 7]
    reasons = [skip.reason for skip in loaded.skipped]
    assert reasons[1] == "illegal move 'Ke3' in pgn (ply 3)"
    assert reasons[2] == "pgn has no moves"
    assert reasons[3] == "expected 3 tab-separated columns, got 1"
    assert reasons[4].startswith("bad ECO code 'Z99'")


def test_folder_reports_the_file_of_each_bad_row(tmp_path):
    (tmp_path / "a.tsv").write_text(f"{HEADER}\nA00\tX\t1. Nh3\n")
    (tmp_path / "b.tsv").write_text(f"{HEADER}\nB00\tY\t1. e5\n")
    loaded = data.load_openings(tmp_path, strict=False)
    assert [o.eco for o in loaded] == ["A00"]
    assert loaded.skipped[0].path.endswith("b.tsv") and loaded.skipped[0].line == 2


def test_missing_header_and_empty_folder(tmp_path):
    path = tmp_path / "nohead.tsv"
    path.write_text("C00\tFrench Defense\t1. e4 e6\n")
    with pytest.raises(data.DataFormatError, match=r"nohead\.tsv:1: header must name"):
        data.load_openings(path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no .tsv files"):
        data.load_openings(empty)


def test_extra_columns_are_allowed(tmp_path):
    path = tmp_path / "dist.tsv"
    path.write_text("eco\tname\tpgn\tuci\nC00\tFrench Defense\t1. e4 e6\te2e4 e7e6\n")
    (opening,) = data.load_openings(path)
    assert opening.moves == ("e2e4", "e7e6")
