"""Tests of azdb_jax/classical/book.py (polyglot books) and learning.py (least-squares weights)."""

import struct

import chess
import chess.polyglot
import numpy as np
import pytest

from azdb_jax.classical import book, evaluation, learning
from azdb_jax.classical.gardner_position import GardnerPosition


def test_written_book_is_read_by_python_chess_with_castling_and_promotion(tmp_path):
    board = chess.Board("r3k2r/pPpppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    moves = [chess.Move.from_uci(u) for u in ("e1g1", "e1c1", "b7a8q", "b7b8n")]
    key = chess.polyglot.zobrist_hash(board)
    path = book.write_book(tmp_path / "b.bin", [(key, book.encode_move(board, m), w)
                                               for m, w in zip(moves, (5, 1, 9, 2))])
    with chess.polyglot.open_reader(path) as reader:  # python-chess, the independent reader
        read = {e.move: e.weight for e in reader.find_all(board)}
    assert read == dict(zip(moves, (5, 1, 9, 2)))
    opened = book.OpeningBook(path)
    assert opened.move(board) == chess.Move.from_uci("b7a8q")  # the highest weight
    assert [m for m, _ in opened.moves(board)] == [moves[2], moves[0], moves[3], moves[1]]
    assert opened.move(chess.Board()) is None


def test_book_from_eco_openings_follows_the_lines(tmp_path, data_dir):
    path = book.book_from_openings([data_dir / "openings" / "c.tsv"], tmp_path / "c.bin", max_plies=8)
    opened = book.OpeningBook(path)
    assert opened.move(chess.Board()) == chess.Move.from_uci("e2e4")  # every C opening starts 1. e4
    ruy = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6"):
        ruy.push_san(san)
    assert chess.Move.from_uci("f1b5") in dict(opened.moves(ruy))


@pytest.mark.parametrize("content, words", [(b"", "empty"), (b"x" * 17, "16-byte"),
                                            (struct.pack(">QHHI", 5, 1, 1, 0) + struct.pack(">QHHI", 3, 1, 1, 0),
                                             "entry 1 is out of key order")])
def test_malformed_books_are_named(tmp_path, content, words):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=words) as info:
        book.OpeningBook(path)
    assert str(path) in str(info.value)
    with pytest.raises(ValueError, match="cannot read"):
        book.OpeningBook(tmp_path / "missing.bin")


def test_least_squares_recovers_known_weights():
    rng = np.random.default_rng(0)
    true = np.array([1.0, 3.0, 3.2, 5.0, 9.0, 0.05, 0.1, 0.2, 0.3, 0.25, 0.1, 0.05, 0.2]) / 10
    features = rng.integers(-3, 4, size=(20_000, len(evaluation.FEATURES))).astype(float)
    features[:, -1] = 1.0
    outcomes = features @ true + rng.normal(0, 0.05, size=20_000)
    weights = learning.fit_weights(features, outcomes, ridge=0.0)
    np.testing.assert_allclose(weights.values, 100 * true / true[0], rtol=0.03, atol=0.5)
    assert learning.explained_variance(features, outcomes, weights) > 0.95


def test_fit_refuses_uninformative_data_and_bad_shapes():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(100, len(evaluation.FEATURES)))
    outcomes = -features[:, 0]  # material predicts losses: no pawn scale
    with pytest.raises(ValueError, match="pawn weight"):
        learning.fit_weights(features, outcomes)
    with pytest.raises(ValueError, match="features must be"):
        learning.fit_weights(features[:, :3], outcomes)


def test_dataset_uses_quiet_positions_from_the_mover_side():
    quiet = GardnerPosition("k4/5/5/2Q2/K4 w - - 0 1")
    noisy = GardnerPosition("k4/5/2p2/2Q2/K4 w - - 0 1")  # the queen can take the pawn
    black = GardnerPosition("k4/5/5/2Q2/K4 b - - 0 1")
    x, z = learning.dataset([([quiet, noisy, black], 1.0)], skip_plies=0)
    assert z.tolist() == [1.0, -1.0]  # noisy skipped; Black to move lost
    assert x[0][evaluation.FEATURES.index("queen")] == 1 and x[1][evaluation.FEATURES.index("queen")] == -1
    assert learning.is_quiet(quiet) and not learning.is_quiet(noisy)


def test_weights_files_round_trip_and_bad_files_are_named(tmp_path):
    path = tmp_path / "w.json"
    evaluation.DEFAULT_WEIGHTS.save(path)
    assert evaluation.EvalWeights.load(path).values == evaluation.DEFAULT_WEIGHTS.values
    path.write_text('{"weights": {"pawn": 1}}')
    with pytest.raises(ValueError, match="w.json"):
        evaluation.EvalWeights.load(path)
