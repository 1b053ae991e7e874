"""Tests for azdb_jax/data/lichess.py: Lichess puzzle CSV layouts, replay and helpers."""

import chess
import pytest

from azdb_jax import data

SAMPLE = "puzzles/lichess_puzzles_kagi_1000_random.csv"
FULL_HEADER = "PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags"
# Scholar's mate set-up: after 1. e4 e5 2. Bc4 Nc6 3. Qh5, Black blunders 3... Nf6 and 4. Qxf7#.
SCHOLAR_FEN = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3"
SCHOLAR = f"{SCHOLAR_FEN},g8f6 h5f7,600"


@pytest.fixture(scope="module")
def sample(data_dir):
    return data.load_lichess_puzzles(data_dir / SAMPLE)


def test_count_and_first_puzzle(sample):
    assert len(sample) == 1000 and sample.skipped == ()
    first = sample[0]
    assert first.puzzle_id == "tewjc"
    assert first.fen == "r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19"
    assert first.moves == ("a2a7", "e5e3", "f2e3", "f6a1", "a7a1", "a8a1")
    assert (first.rating, first.rating_deviation, first.popularity, first.nb_plays) == (1493, 76, 94, 18768)
    assert first.themes == ("crushing", "discoveredAttack", "long", "middlegame", "xRayAttack")
    assert first.game_url == "https://lichess.org/SLbfzQtP#36"
    assert first.opening_tags == ("Polish_Opening", "Polish_Opening_Other_variations")
    assert first.extra == (("SortKey", "1764192"),)
    # White's Ra2xa7 is the opponent move; the solver plays Black.
    assert first.start_fen == "r5k1/Rp3p1p/2b2qp1/3pr3/8/4P2P/2PN1PP1/Q3K2R b K - 0 19"
    assert first.solution == ("e5e3", "f6a1", "a8a1") and first.replies == ("f2e3", "a7a1")
    assert first.solver_color == chess.BLACK


def test_mate_themed_puzzles_end_in_checkmate(sample):
    # Independent fact: Lichess tags a puzzle "mate" when its line ends in checkmate.
    mates = [puzzle for puzzle in sample if "mate" in puzzle.themes]
    assert len(mates) > 100
    for puzzle in mates:
        board = chess.Board(puzzle.fen)
        for uci in puzzle.moves:
            board.push_uci(uci)
        assert board.is_checkmate(), puzzle.puzzle_id


def test_expected_moves_are_correct(sample):
    for puzzle in sample[:100]:
        for step, move in enumerate(puzzle.solution):
            assert data.is_correct_solver_move(puzzle, step, move)
            assert puzzle.board_at(step).turn == puzzle.solver_color


def test_short_layout_with_and_without_header(tmp_path):
    with_header = tmp_path / "short.csv"
    with_header.write_text(f"FEN,Moves,Rating\n{SCHOLAR}\n")
    headerless = tmp_path / "bare.csv"
    headerless.write_text(f"{SCHOLAR}\n{SCHOLAR}\n")
    (puzzle,) = data.load_lichess_puzzles(with_header)
    assert puzzle.puzzle_id is None and puzzle.rating == 600 and puzzle.themes == ()
    assert puzzle.moves == ("g8f6", "h5f7") and puzzle.solution == ("h5f7",)
    assert list(data.load_lichess_puzzles(headerless)) == [puzzle, puzzle]


def test_headerless_full_layout(tmp_path):
    path = tmp_path / "db.csv"
    path.write_text(f"abcde,{SCHOLAR_FEN},g8f6 h5f7,600,80,90,100,mate mateIn1 short,https://x,,7\n")
    (puzzle,) = data.load_lichess_puzzles(path)
    assert puzzle.puzzle_id == "abcde" and puzzle.themes == ("mate", "mateIn1", "short")
    assert puzzle.opening_tags == () and puzzle.extra == (("column11", "7"),)


def test_any_mating_move_counts(tmp_path):
    # White: Kh1, Qe1, Rd1 vs Black Kg8 with pawns f7 g7 h7; Black's first move a6 is the
    # opponent move, then Qe8# and Rd8# both mate.
    fen = "6k1/p4ppp/8/8/8/8/8/3RQ2K b - - 0 1"
    path = tmp_path / "m.csv"
    path.write_text(f"FEN,Moves,Rating\n{fen},a7a6 e1e8,900\n")
    (puzzle,) = data.load_lichess_puzzles(path)
    assert data.is_correct_solver_move(puzzle, 0, "e1e8")
    assert data.is_correct_solver_move(puzzle, 0, "d1d8")
    assert not data.is_correct_solver_move(puzzle, 0, "e1e2")
    assert not data.is_correct_solver_move(puzzle, 0, "e1e9")
    with pytest.raises(IndexError):
        puzzle.board_at(1)


def _write_bad(tmp_path):
    rows = [
        FULL_HEADER,
        f"ok1,{SCHOLAR_FEN},g8f6 h5f7,600,80,90,100,mate,https://x,",
        "# comment",
        f"bad1,{SCHOLAR_FEN.replace(' b ', ' x ')},g8f6 h5f7,600,80,90,100,mate,https://x,",
        f"bad2,{SCHOLAR_FEN},g8f6 h5h8,600,80,90,100,mate,https://x,",
        f"bad3,{SCHOLAR_FEN},g8f6 h5f7,600,80,90,100,mate,https://x",
        f"bad4,{SCHOLAR_FEN},g8f6 h5f7,high,80,90,100,mate,https://x,",
        f"bad5,{SCHOLAR_FEN},g8f6,600,80,90,100,mate,https://x,",
        "",
        f"ok2,{SCHOLAR_FEN},g8f6 h5f7,700,80,90,100,mate,https://x,",
    ]
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_strict_names_file_line_and_reason(tmp_path):
    path = _write_bad(tmp_path)
    with pytest.raises(data.DataFormatError) as info:
        data.load_lichess_puzzles(path)
    assert str(info.value).startswith(f"{path}:4: bad FEN")


def test_lenient_reports_every_bad_row(tmp_path):
    loaded = data.load_lichess_puzzles(_write_bad(tmp_path), strict=False)
    assert [puzzle.puzzle_id for puzzle in loaded] == ["ok1", "ok2"]
    assert [skip.line for skip in loaded.skipped] == [4, 5, 6, 7, 8]
    reasons = [skip.reason for skip in loaded.skipped]
    assert "bad FEN" in reasons[0]
    assert reasons[1] == "illegal move 'h5h8' in Moves (move 2)"
    assert reasons[2].startswith("expected 10 columns")
    assert reasons[3] == "Rating 'high' is not an integer"
    assert "even number" in reasons[4]
    assert loaded.skipped[1].text.startswith("bad2,")


def test_bad_headers(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("PuzzleId,FEN,Rating\n")
    with pytest.raises(data.DataFormatError, match=r"h\.csv:1: header lacks column\(s\) Moves"):
        data.load_lichess_puzzles(path)
    path.write_text("a,b,c\n")
    with pytest.raises(data.DataFormatError, match="no header row"):
        data.load_lichess_puzzles(path, strict=False)


def test_a_gardner_file_read_again_is_parsed_once_and_a_changed_file_again(tmp_path):
    path = tmp_path / "p.csv"
    puzzle = "r1b1k/3p1/p1nPp/P3P/1qBK1 w - - 1 8,d1e1 b1c1"
    path.write_text(f"FEN,Moves,Rating\n{puzzle},600\n")
    first = data.load_gardner_puzzles(path=path)
    assert data.load_gardner_puzzles(path=path) is first  # the same content: the parsed records again
    assert data.load_gardner_puzzles(path=path, strict=False) is not first
    # Same size, new content (the rating): parsed anew, whatever the file's timestamp says.
    path.write_text(f"FEN,Moves,Rating\n{puzzle},700\n")
    again = data.load_gardner_puzzles(path=path)
    assert again is not first and (first[0].rating, again[0].rating) == (600, 700)
    path.write_text("FEN,Moves,Rating\nnot a fen,e2e4,1\n")
    for _ in range(2):  # an error is not remembered as a result
        with pytest.raises(data.DataFormatError, match=r"p\.csv:2: bad FEN"):
            data.load_gardner_puzzles(path=path)
    # Chess files are parsed on every read (they parse fast and may hold millions of puzzles).
    path.write_text(f"FEN,Moves,Rating\n{SCHOLAR}\n")
    chess_first = data.load_lichess_puzzles(path)
    assert data.load_lichess_puzzles(path) is not chess_first and data.load_lichess_puzzles(path) == chess_first


@pytest.mark.parametrize("game", ["chess", "gardner_chess"])
def test_boards_kept_from_the_load_are_the_boards_replayed_from_the_fen(game, data_dir):
    import dataclasses  # pylint: disable=g-import-not-at-top

    loaded = (data.load_lichess_puzzles(data_dir / SAMPLE)[:20] if game == "chess"
              else data.load_gardner_puzzles("mate_in_3")[:10])
    for puzzle in loaded:
        # Gardner boards are kept from the load; chess boards are stepped when first asked for.
        assert ("_boards" in puzzle.__dict__) == (game == "gardner_chess")
        replayed = dataclasses.replace(puzzle)  # a new record: its boards are stepped from ``fen``
        assert "_boards" not in replayed.__dict__
        for step in range(len(puzzle.solution)):
            kept, again = puzzle.board_at(step), replayed.board_at(step)
            assert kept.fen() == again.fen() and kept.move_stack == again.move_stack
            assert kept.root().fen() == again.root().fen() == puzzle.fen
        kept = puzzle.board_at(0)
        kept.push(kept.legal_moves[0] if game == "gardner_chess" else next(iter(kept.legal_moves)))
        assert puzzle.board_at(0).fen() == replayed.board_at(0).fen()  # a fresh copy each time
