"""Tests for azdb_jax/data/books.py: opening books of FEN or EPD lines."""

import chess
import pytest

from azdb_jax import data

BOOK = "books/4mvs_+90_+99.epd"
START_EPD = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def test_count_and_first_position(data_dir):
    book = data.load_book(data_dir / BOOK)
    assert len(book) == 635 and book.skipped == ()
    assert book[0].fen == "rnbqk1nr/p1p2ppp/1p2p3/3pP3/1b1P4/2N5/PPP2PPP/R1BQKBNR w KQkq - 0 5"
    # Four moves each: every position is White to move at move 5.
    assert all(position.board().fullmove_number == 5 for position in book)
    assert all(position.board().turn == chess.WHITE for position in book)


def test_fen_and_epd_lines_mix(tmp_path):
    path = tmp_path / "mixed.epd"
    path.write_text(f"{chess.STARTING_FEN}\n{START_EPD}\n{START_EPD} id \"b.2\"; bm e4; hmvc 2; fmvn 9;\n")
    first, second, third = data.load_book(path)
    assert first == second == data.BookPosition(chess.STARTING_FEN)
    assert third.id == "b.2" and third.ops == (("bm", "e2e4"),)
    assert third.fen == START_EPD + " 2 9"


def _write_bad(tmp_path):
    lines = [
        chess.STARTING_FEN,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 x",
        START_EPD + " bm e5;",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
        "# comment",
        "",
        START_EPD + ' id "ok";',
    ]
    path = tmp_path / "bad.epd"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_strict_names_file_line_and_reason(tmp_path):
    path = _write_bad(tmp_path)
    with pytest.raises(data.DataFormatError) as info:
        data.load_book(path)
    assert str(info.value).startswith(f"{path}:2: bad FEN")
    assert "invalid fullmove number" in str(info.value)


def test_lenient_reports_every_bad_line(tmp_path):
    loaded = data.load_book(_write_bad(tmp_path), strict=False)
    assert [position.id for position in loaded] == [None, "ok"]
    assert [skip.line for skip in loaded.skipped] == [2, 3, 4, 5]
    reasons = [skip.reason for skip in loaded.skipped]
    assert reasons[1] == "illegal move 'e5' in bm"
    assert reasons[2].startswith("position is not legal in standard chess (empty")
    assert reasons[3] == "position has no legal move (checkmate or stalemate)"
