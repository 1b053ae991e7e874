"""Tests of azdb_jax/classical/endgames.py: the retrograde databases against the known
longest mates, brute-force search, Stockfish (8x8) and Fairy-Stockfish (Gardner), and
their use in the search."""

import chess
import chess.engine
import numpy as np
import pytest

from azdb_jax.classical import endgames, search
from azdb_jax.classical.chess_position import ChessPosition
from azdb_jax.classical.gardner_position import GardnerPosition


def test_longest_mates_on_8x8_are_the_known_10_and_16_moves():
    assert endgames.longest_mate_moves(endgames.cached_table("KQK", 8)) == 10
    assert endgames.longest_mate_moves(endgames.cached_table("KRK", 8)) == 16


@pytest.mark.parametrize("material", endgames.MATERIALS)
def test_every_white_to_move_position_is_won_and_draws_are_captures_or_stalemates(material):
    table = endgames.cached_table(material, 5)
    assert (table.wtm[table.valid_wtm] >= 0).all()  # the strong side to move always wins
    tables = endgames.EndgameTables(5, [material])
    for index in endgames.sample_entries(table, 60, seed=0, white_to_move=False):
        position = GardnerPosition(endgames.index_fen(table, int(index), False))
        outcome, plies = tables.lookup(position)
        moves = position.legal_moves()
        if outcome == 0:  # a draw: stalemate, or the lone king takes the piece, or reaches a draw
            assert not moves or any(position.is_capture(m) for m in moves)
        elif plies == 0:
            assert position.in_check() and not moves


@pytest.mark.parametrize("size, make", [(5, GardnerPosition), (8, ChessPosition)])
def test_table_distances_obey_the_bellman_equations(size, make):
    """Won in n: some move reaches a position lost in n - 1; lost in n: every move reaches
    a position won in at most n - 1 and one in exactly n - 1."""
    tables = endgames.EndgameTables(size)
    for material in endgames.MATERIALS:
        table = endgames.cached_table(material, size)
        for white in (True, False):
            for index in endgames.sample_entries(table, 25, seed=size, white_to_move=white):
                position = make(endgames.index_fen(table, int(index), white))
                outcome, plies = tables.lookup(position)
                children = []
                for move in position.legal_moves():
                    position.push(move)
                    children.append(tables.probe(position) if position.piece_count() == 3 else (0, 0))
                    position.pop()
                if outcome > 0:
                    assert min(p for o, p in children if o < 0) == plies - 1
                elif outcome < 0 and plies > 0:
                    assert all(o > 0 for o, _ in children) and max(p for _, p in children) == plies - 1
                elif outcome == 0 and children:
                    assert any(o == 0 for o, _ in children)


def test_black_strong_side_is_mirrored():
    tables = endgames.EndgameTables(8)
    white = ChessPosition("8/8/8/3k4/1Q6/1K6/8/8 w - - 0 1")
    black = ChessPosition("8/8/1k6/1q6/3K4/8/8/8 b - - 0 1")
    assert tables.lookup(white) == tables.lookup(black) == (1, 11)


def test_missing_material_is_named():
    with pytest.raises(ValueError, match="KBNK"):
        endgames.EndgameTables(8, ["KBNK"])
    with pytest.raises(ValueError, match="KvKR|no endgame database for K"):
        endgames.EndgameTables(8, ["KQK"]).lookup(ChessPosition("8/8/8/3k4/1r6/1K6/8/8 w - - 0 1"))


def _check(report, min_positions):
    """Every outcome agrees; the engine never finds a shorter mate; short mates are exact."""
    assert report["positions"] >= min_positions
    assert report["same_outcome"] == report["positions"], report["disagreements"]
    assert report["engine_shorter"] == 0, report["disagreements"]
    assert all(ours[1] > 3 for _, ours, _ in report["disagreements"]), report["disagreements"]
    return report


def test_gardner_tables_agree_with_fairy_stockfish(fsf_path):
    from azdb_jax.evaluation.fairy_stockfish import FairyStockfish  # pylint: disable=g-import-not-at-top

    tables = endgames.EndgameTables(5)
    with FairyStockfish(fsf_path) as engine:
        for material in endgames.MATERIALS:
            analyse = lambda fen: engine.analyse(fen, limit=chess.engine.Limit(depth=20)).lines[0].score  # noqa: E731
            report = _check(endgames.compare_with_engine(tables, endgames.cached_table(material, 5),
                                                         GardnerPosition, analyse, 30), 25)
            assert report["same_mate"] >= report["engine_mates"] // 2


def test_chess_tables_agree_with_stockfish(stockfish_path):
    tables = endgames.EndgameTables(8)
    with chess.engine.SimpleEngine.popen_uci(stockfish_path) as engine:
        analyse = lambda fen: engine.analyse(chess.Board(fen), chess.engine.Limit(depth=18))["score"].relative  # noqa
        _check(endgames.compare_with_engine(tables, endgames.cached_table("KQK", 8), ChessPosition, analyse, 16), 14)


def test_search_with_tables_plays_the_shortest_mate():
    position = GardnerPosition("5/R4/5/5/K2k1 w - - 0 1")  # KRK, won in 9 plies
    tables = endgames.EndgameTables(5)
    assert tables.lookup(position) == (1, 9)
    result = search.Searcher(tables=tables).search(position, search.Limits(depth=2))
    assert result.score == search.MATE - 9 and search.mate_in(result.score) == 5
    played = 0
    while position.legal_moves():
        result = search.Searcher(tables=tables).search(position, search.Limits(depth=1))
        position.push(result.best_move)
        played += 1
    assert position.in_check() and played == 9


def test_cache_files_are_rebuilt_when_broken(tmp_path, monkeypatch):
    monkeypatch.setenv("AZDB_CACHE_DIR", str(tmp_path))
    endgames.cached_table.cache_clear()
    try:
        first = endgames.cached_table("KRK", 5)
        files = list((tmp_path / "endgames").glob("KRK_5x5*.npz"))
        assert len(files) == 1
        files[0].write_bytes(b"not a table")
        endgames.cached_table.cache_clear()
        again = endgames.cached_table("KRK", 5)
        assert np.array_equal(first.wtm, again.wtm) and np.array_equal(first.btm, again.btm)
    finally:
        endgames.cached_table.cache_clear()
