"""Tests for azdb_jax/data/epd.py: EPD suites, STS c0 scores and the two scoring rules."""

import collections

import chess
import pytest

from azdb_jax import data

STS = "sts/STS1-STS15_LAN_v6.epd"
# A legal position: White Ke1, Pe2; Black Ke8. White to move.
K_P = "4k3/8/8/8/8/8/4P3/4K3 w - -"


@pytest.fixture(scope="module")
def sts(data_dir):
    return data.load_epd(data_dir / STS, c0="scores")


@pytest.mark.parametrize(
    "name, count",
    [(STS, 1188), ("suites/wac.epd", 300), ("suites/HTC114.epd", 114), ("suites/fortresses.epd", 168)],
)
def test_counts(data_dir, name, count):
    loaded = data.load_epd(data_dir / name)
    assert len(loaded) == count and loaded.skipped == ()


def test_first_sts_record(sts):
    first = sts[0]
    assert first.id == "STS(v1.0) Undermine.001"
    assert first.fen == "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - 0 1"
    assert first.bm == ("f4f5",)
    # c0 "f5=100, Bf2=46, Bg4=23, fxg5=22, Bg7=19, Kh1=10, Be3=5, b3=1, h3=1, h4=1", by hand.
    assert first.scores == (
        ("f4f5", 100.0), ("d4f2", 46.0), ("f3g4", 23.0), ("f4g5", 22.0), ("d4g7", 19.0),
        ("g1h1", 10.0), ("d4e3", 5.0), ("b2b3", 1.0), ("h2h3", 1.0), ("h2h4", 1.0),
    )  # fmt: skip
    assert data.sts_score(first, "d4f2") == pytest.approx(0.46)
    assert data.sts_score(first, chess.Move.from_uci("f4f5")) == 1.0
    assert data.sts_score(first, "e2e4") == 0.0
    assert ("Ae", "Stockish 15") in first.ops


def test_sts_scores_agree_with_the_files_own_uci_list(sts):
    # c0 is SAN and c9 the same moves in UCI: our SAN->UCI conversion must reproduce c9.
    for record in sts:
        assert tuple(move for move, _ in record.scores) == record.c9, record.id
        assert record.bm == (record.scores[0][0],), record.id


def test_sts_suites(sts):
    counts = collections.Counter(data.sts_suite(record) for record in sts)
    assert sorted(counts) == list(range(1, 16)) and sum(counts.values()) == 1188
    assert data.sts_theme(sts[0]) == "Undermine"
    assert data.sts_suite(data.EpdRecord(fen=chess.STARTING_FEN, id="WAC.001")) is None


def test_wac_first_record(data_dir):
    first = data.load_epd(data_dir / "suites/wac.epd")[0]
    assert (first.id, first.bm, first.am, first.scores) == ("WAC.001", ("g3g6",), (), ())
    assert data.bm_am_solved(first, "g3g6") and not data.bm_am_solved(first, "g3g7")


def test_fortress_free_text_c0_is_kept_not_scored(data_dir):
    loaded = data.load_epd(data_dir / "suites/fortresses.epd")
    assert loaded[0].am == ("a4b6",) and ("c1", "diff=10") in loaded[0].ops
    texts = [dict(record.ops).get("c0") for record in loaded]
    assert "fortress From Smirin-HIARCS" in texts
    assert not any(record.scores for record in loaded)
    # Three fortress positions have more pieces than a legal game allows; they still load.
    assert sum(not record.board().is_valid() for record in loaded) == 3


def test_sts_score_hand_made():
    record = data.parse_epd_line(K_P + ' c0 "e4=100, e3=50, Kd2=10"; id "t";')
    assert record.scores == (("e2e4", 100.0), ("e2e3", 50.0), ("e1d2", 10.0))
    assert [data.sts_score(record, m) for m in ("e2e4", "e2e3", "e1d2", "e1f1")] == [1.0, 0.5, 0.1, 0.0]


def test_sts_score_best_not_listed_first():
    record = data.parse_epd_line(K_P + ' c0 "e3=20, e4=80";')
    assert data.sts_score(record, "e2e3") == 0.25


def test_bm_am_rules():
    both = data.parse_epd_line(K_P + " bm e4 e3; am Kd1;")
    assert both.bm == ("e2e4", "e2e3") and both.am == ("e1d1",)
    assert data.bm_am_solved(both, "e2e3") and not data.bm_am_solved(both, "e1d1")
    only_am = data.parse_epd_line(K_P + " am Kd1;")
    assert data.bm_am_solved(only_am, "e2e4") and not data.bm_am_solved(only_am, "e1d1")
    with pytest.raises(ValueError, match="neither bm nor am"):
        data.bm_am_solved(data.parse_epd_line(K_P + ' id "x";'), "e2e4")
    with pytest.raises(ValueError, match="no c0 scores"):
        data.sts_score(both, "e2e4")


def test_clocks_from_hmvc_fmvn():
    assert data.parse_epd_line(K_P + " hmvc 7; fmvn 42;").fen == "4k3/8/8/8/8/8/4P3/4K3 w - - 7 42"
    assert data.parse_epd_line(K_P).fen == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"


@pytest.mark.parametrize(
    "line, reason",
    [
        ("4k3/8/8/8/8/8/4P3/4K3 w - - bm Qxz9;", "invalid move 'Qxz9' in bm"),
        ("4k3/8/8/8/8/8/4P3/4K3 w - - bm e4; am e5;", "illegal move 'e5' in am"),
        (K_P + ' c0 "e4=100, Qxz9=3";', "invalid move 'Qxz9' in c0"),
        (K_P + ' c0 "e4=100, e3=abc";', "bad c0 entry 'e3=abc': points 'abc' is not a number"),
        (K_P + ' c0 "e4=100, e3";', "bad c0 entry 'e3': expected move=points"),
        (K_P + ' c0 "e4=100, e4=3";', "move listed twice"),
        (K_P + ' c9 "e2e4 e2e5";', "illegal move 'e2e5' in c9"),
        ("4k3/8/8/8/8/8/4P3/4KX2 w - - bm e4;", "bad EPD position"),
        ("4k3/8/8/8/8/8/4P3/4K3 w -", "expected 4 EPD fields"),
        ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "no clocks"),
    ],
)
def test_bad_lines(line, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        data.parse_epd_line(line)


def test_c0_modes():
    text = K_P + ' c0 "some comment";'
    assert data.parse_epd_line(text).ops == (("c0", "some comment"),)
    assert data.parse_epd_line(K_P + ' c0 "e4=100";', c0="text").scores == ()
    with pytest.raises(ValueError, match="bad c0 entry"):
        data.parse_epd_line(text, c0="scores")
    with pytest.raises(ValueError, match="missing c0 scores"):
        data.parse_epd_line(K_P + " bm e4;", c0="scores")
    with pytest.raises(ValueError, match="c0 must be one of"):
        data.parse_epd_line(K_P, c0="maybe")


def _write_suite(tmp_path):
    lines = [
        "# a small suite",
        K_P + ' bm e4; id "ok.1";',
        "",
        K_P + ' bm e5; id "bad.move";',
        K_P + ' c0 "e4=100, e3=x"; id "bad.c0";',
        "4k3/8/8/8/8/8/4P3/4K3 x - - id \"bad.fen\";",
        K_P + ' c0 "e4=100, e3=50"; id "ok.2";',
    ]
    path = tmp_path / "suite.epd"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_strict_names_file_line_and_reason(tmp_path):
    path = _write_suite(tmp_path)
    with pytest.raises(data.DataFormatError) as info:
        data.load_epd(path)
    assert str(info.value) == f"{path}:4: illegal move 'e5' in bm"
    assert info.value.line == 4 and "bad.move" in info.value.text


def test_lenient_reports_every_bad_line(tmp_path):
    path = _write_suite(tmp_path)
    loaded = data.load_epd(path, strict=False)
    assert [record.id for record in loaded] == ["ok.1", "ok.2"]
    assert [skip.line for skip in loaded.skipped] == [4, 5, 6]
    assert "points 'x' is not a number" in loaded.skipped[1].reason
    assert "bad EPD position" in loaded.skipped[2].reason
    assert all(skip.path == str(path) for skip in loaded.skipped)
    assert 'id "bad.c0"' in loaded.skipped[1].text
