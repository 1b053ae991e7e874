"""Tests for azdb_jax/data/_common.py: data_path, the Loaded result, the error policy."""

import pathlib
import pickle

import chess
import pytest

from azdb_jax import data
from azdb_jax.data import _common

ALL_LOADERS = [
    data.load_epd,
    data.load_lichess_puzzles,
    data.load_openings,
    data.load_book,
    lambda path: data.load_paper_positions(path=path),
]


def test_data_path_unset_says_what_to_set(monkeypatch):
    monkeypatch.delenv("AZDB_DATA_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="AZDB_DATA_DIR is not set"):
        data.data_path("sts", "x.epd")


def test_data_path_empty_variable_counts_as_unset(monkeypatch):
    monkeypatch.setenv("AZDB_DATA_DIR", "  ")
    with pytest.raises(FileNotFoundError, match="AZDB_DATA_DIR is not set"):
        data.data_path("a.epd")


def test_data_path_resolves_under_the_folder(monkeypatch, tmp_path):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "a.epd").write_text("")
    monkeypatch.setenv("AZDB_DATA_DIR", str(tmp_path))
    assert data.data_path("sts", "a.epd") == tmp_path / "sts" / "a.epd"
    assert data.data_path("sts") == tmp_path / "sts"


def test_data_path_missing_file_names_path_and_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("AZDB_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        data.data_path("sts", "missing.epd")
    assert "missing.epd" in str(info.value) and "AZDB_DATA_DIR" in str(info.value)


def test_data_path_variable_not_a_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("AZDB_DATA_DIR", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="not a folder"):
        data.data_path("a.epd")


def test_data_path_finds_shared_data(monkeypatch, data_dir):
    monkeypatch.setenv("AZDB_DATA_DIR", str(data_dir))
    assert data.data_path("sts", "STS1-STS15_LAN_v6.epd").is_file()


@pytest.mark.parametrize("loader", ALL_LOADERS)
def test_missing_file_names_the_path(loader, tmp_path):
    path = tmp_path / "does_not_exist.txt"
    with pytest.raises(FileNotFoundError, match="does_not_exist.txt"):
        loader(path)


@pytest.mark.parametrize("loader", ALL_LOADERS[:2] + ALL_LOADERS[3:])
def test_folder_instead_of_file_is_an_error(loader, tmp_path):
    with pytest.raises(OSError, match=str(tmp_path.name)):
        loader(tmp_path)


@pytest.mark.parametrize("loader", ALL_LOADERS)
def test_empty_file_loads_nothing(loader, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n# only a comment\n\n")
    loaded = loader(path)
    assert len(loaded) == 0 and loaded.skipped == ()


def test_non_utf8_file_is_a_format_error(tmp_path):
    path = tmp_path / "latin1.epd"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(data.DataFormatError, match="not UTF-8"):
        data.load_epd(path)


def test_loaded_is_a_tuple_with_skipped():
    skipped = [data.SkippedLine("f.epd", 3, "bad", "x")]
    loaded = data.Loaded(["a", "b"], skipped)
    assert isinstance(loaded, tuple) and list(loaded) == ["a", "b"]
    assert loaded.skipped == tuple(skipped)
    assert repr(loaded) == "Loaded(2 records, 1 skipped)"
    assert str(skipped[0]) == "f.epd:3: bad"
    assert data.Loaded().skipped == ()


def test_loaded_pickles_with_its_report():
    loaded = data.Loaded([1, 2], [data.SkippedLine("f", 1, "r", "t")])
    restored = pickle.loads(pickle.dumps(loaded))
    assert restored == loaded and restored.skipped == loaded.skipped


def test_data_format_error_is_value_error_with_fields():
    error = data.DataFormatError(pathlib.Path("dir/sts.epd"), 17, "illegal move 'Qxz9' in c0", "raw")
    assert isinstance(error, ValueError)
    assert str(error) == "dir/sts.epd:17: illegal move 'Qxz9' in c0"
    assert (error.line, error.reason, error.text) == (17, "illegal move 'Qxz9' in c0", "raw")


def test_collect_policy():
    def parse(text):
        return int(text)

    lines = [(1, "1"), (2, "x"), (4, "3")]
    with pytest.raises(data.DataFormatError, match="f.txt:2: invalid literal"):
        _common.collect("f.txt", lines, parse, strict=True)
    loaded = _common.collect("f.txt", lines, parse, strict=False)
    assert list(loaded) == [1, 3]
    assert [(s.line, s.text) for s in loaded.skipped] == [(2, "x")]


def test_move_parsers_reject_null_and_illegal():
    board = chess.Board()
    with pytest.raises(ValueError, match="null move '0000' in c9"):
        _common.parse_uci(board, "0000", "c9")
    with pytest.raises(ValueError, match="illegal move 'e2e5' in c9"):
        _common.parse_uci(board, "e2e5", "c9")
    with pytest.raises(ValueError, match="invalid move 'Qxz9' in c0"):
        _common.parse_san(board, "Qxz9", "c0")
    assert _common.parse_san(board, "Nf3", "c0") == chess.Move.from_uci("g1f3")


def test_status_names():
    assert data.status_names(chess.Board()) == ()
    assert "no_white_king" in data.status_names(chess.Board("8/8/8/8/8/8/8/k7 w - - 0 1"))
