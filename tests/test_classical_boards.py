"""Tests of the classical search's boards: the fast Gardner move generator against the env's
rules (GardnerBoard) and Fairy-Stockfish, the incremental Zobrist keys against
python-chess's polyglot hash, and the evaluation's symmetry."""

import random

import chess
import chess.polyglot
import pytest

from azdb_jax.classical import evaluation
from azdb_jax.classical.chess_position import ChessPosition
from azdb_jax.classical.gardner_position import GardnerPosition


def _random_gardner_games(count: int, seed: int, max_plies: int = 60):
    """Yields (GardnerPosition, uci moves) along random games from the start."""
    rng = random.Random(seed)
    for _ in range(count):
        position, moves = GardnerPosition(), []
        for _ in range(max_plies):
            legal = position.legal_moves()
            if not legal or position.is_insufficient_material():
                break
            yield position, list(moves)
            move = rng.choice(legal)
            position.push(move)
            moves.append(position.uci(move))


def test_gardner_moves_match_the_env_rules():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    checked = 0
    for position, _ in _random_gardner_games(4, seed=0, max_plies=40):
        board = GardnerBoard(position.fen())
        assert sorted(position.uci(m) for m in position.legal_moves()) == sorted(m.uci() for m in board.legal_moves)
        assert position.in_check() == board.is_check()
        assert position.is_insufficient_material() == board.is_insufficient_material()
        assert position.fen() == board.fen()
        checked += 1
    assert checked > 60


def test_gardner_moves_and_perft_match_fairy_stockfish(fsf_path):
    from azdb_jax.evaluation.fairy_stockfish import FairyStockfish  # pylint: disable=g-import-not-at-top

    def perft(position, depth):
        if depth == 0:
            return 1
        total = 0
        for move in position.legal_moves():
            position.push(move)
            total += perft(position, depth - 1)
            position.pop()
        return total

    with FairyStockfish(fsf_path) as engine:
        for index, (position, _) in enumerate(_random_gardner_games(20, seed=1)):
            ours = sorted(position.uci(m) for m in position.legal_moves())
            assert ours == sorted(engine.legal_moves(position.fen())), position.fen()
            if index % 25 == 0:
                engine.engine.position(position.fen())
                assert perft(position, 3) == sum(engine.engine.perft(3).values()), position.fen()
        engine.engine.position(GardnerPosition().fen())
        assert perft(GardnerPosition(), 4) == sum(engine.engine.perft(4).values()) == 4775


def test_gardner_promotions_captures_and_mate():
    position = GardnerPosition("k4/2P2/5/5/K4 w - - 0 1")
    assert sorted(position.uci(m) for m in position.noisy_moves()) == ["c4c5b", "c4c5n", "c4c5q", "c4c5r"]
    position.push(position.from_chess(chess.Move.from_uci("c4c5q")))
    assert position.fen().startswith("k1Q2/5/5/5/K4 b") and position.in_check()
    position.pop()
    assert position.fen() == "k4/2P2/5/5/K4 w - - 0 1"
    mated = GardnerPosition("k4/1Q3/1K3/5/5 b - - 0 1")
    assert mated.in_check() and mated.legal_moves() == []
    with pytest.raises(chess.IllegalMoveError):
        GardnerPosition().from_chess(chess.Move.from_uci("a2a4"))
    with pytest.raises(ValueError, match="not to move is in check"):
        GardnerPosition("k4/1Q3/1K3/5/5 w - - 0 1")
    with pytest.raises(ValueError):
        GardnerPosition("rnbqk/ppppp/5/PPPPP w - - 0 1")


def test_gardner_keys_are_incremental_and_position_determined():
    seen = {}
    for position, moves in _random_gardner_games(6, seed=2):
        assert position.key == GardnerPosition(position.fen()).key
        seen.setdefault(position.key, position.fen().rsplit(" ", 2)[0])
        assert seen[position.key] == position.fen().rsplit(" ", 2)[0]  # no collisions among these


def test_gardner_board_history_becomes_repetition_keys():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    board = GardnerBoard()
    for uci in ("b1c3", "b5a3", "c3b1"):
        board.push_uci(uci)
    position = GardnerPosition.from_board(board)
    assert position.fen() == board.fen() and len(position.history) == 3
    assert position.history[0] == GardnerPosition().key


def test_chess_keys_are_polyglot_hashes_after_every_kind_of_move():
    rng = random.Random(3)
    kinds = set()
    for _ in range(60):
        position = ChessPosition()
        for _ in range(150):
            moves = position.legal_moves()
            if not moves:
                break
            board = position.board
            special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m) or m.promotion]
            move = rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves)
            kinds.update(k for k, f in (("castling", board.is_castling), ("en_passant", board.is_en_passant),
                                        ("promotion", lambda m: bool(m.promotion))) if f(move))
            position.push(move)
            assert position.key == chess.polyglot.zobrist_hash(position.board)
            if rng.random() < 0.1:
                position.pop()
                assert position.key == chess.polyglot.zobrist_hash(position.board)
    assert kinds == {"castling", "en_passant", "promotion"}


def test_chess_position_keeps_the_board_history_and_refuses_bad_positions():
    board = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8"):
        board.push_san(san)
    position = ChessPosition(board)
    assert position.history[0] == position.key  # the start position stood before
    with pytest.raises(ValueError, match="not valid"):
        ChessPosition("8/8/8/8/8/8/8/8 w - - 0 1")
    with pytest.raises(ValueError, match="FEN"):
        ChessPosition("not a fen")


@pytest.mark.parametrize("game", ["chess", "gardner_chess"])
def test_evaluation_is_antisymmetric_under_colour_mirroring(game):
    rng = random.Random(4)
    for _ in range(30):
        position = ChessPosition() if game == "chess" else GardnerPosition()
        for _ in range(rng.randrange(2, 30)):
            moves = position.legal_moves()
            if not moves:
                break
            position.push(rng.choice(moves))
        if game == "chess":
            mirrored = ChessPosition(position.board.mirror())
        else:
            rows = position.fen().split()
            placement = "/".join(reversed(rows[0].split("/"))).swapcase()
            mirrored = GardnerPosition(f"{placement} {'b' if rows[1] == 'w' else 'w'} - - 0 1")
        assert evaluation.features(mirrored) == [-x for x in evaluation.features(position)]
        assert evaluation.evaluate(mirrored) == evaluation.evaluate(position)


def test_evaluation_terms_by_hand():
    # White: Ke1, Ra1 on an open file, two bishops; Black: Ke8 and a pawn on e7.
    board = chess.Board("4k3/4p3/8/8/8/8/8/R1B1KB2 w - - 0 1")
    f = dict(zip(evaluation.FEATURES, evaluation.features(ChessPosition(board))))
    assert (f["pawn"], f["bishop"], f["rook"], f["bishop_pair"], f["rook_open_file"]) == (-1, 2, 1, 1, 1)
    assert f["pawn_shield"] == -1  # Black's pawn shields its king, White has none
    assert evaluation.evaluate(ChessPosition(board)) > 600
