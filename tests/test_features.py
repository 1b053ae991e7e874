"""Board features φ: checked against python-chess boards and hand-built states."""

import random

import chess
import jax
import numpy as np
import pytest
from pgx import gardner_chess as pgx_gardner
from pgx.experimental import chess as pgx_chess_fen

from azdb_jax import features, games

PIECE_ORDER = "PNBRQKpnbrqk"


def _expected_chess_features(board: chess.Board) -> np.ndarray:
    planes = np.zeros((12, 64), np.float32)
    for square, piece in board.piece_map().items():
        planes[PIECE_ORDER.index(piece.symbol()), square] = 1.0
    castling = [
        board.has_kingside_castling_rights(chess.WHITE),
        board.has_queenside_castling_rights(chess.WHITE),
        board.has_kingside_castling_rights(chess.BLACK),
        board.has_queenside_castling_rights(chess.BLACK),
    ]
    return np.concatenate([planes.reshape(-1), np.float32(castling)])


def _random_positions(count, seed=0):
    rng = random.Random(seed)
    fens = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, 80)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        fens.append(board.fen())
    return fens


def test_chess_features_match_python_chess():
    fens = _random_positions(16) + [
        "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 3 40",  # partial castling rights, black to move
        "r3k2r/8/8/8/8/8/8/R3K2R w Qk - 0 1",
        "4k3/1P6/8/8/8/8/6p1/4K3 b - - 0 1",
    ]
    assert any(" b " in f for f in fens) and any(" w " in f for f in fens)
    phi = jax.jit(games.get("chess").features)
    for fen in fens:
        state = pgx_chess_fen.from_fen(fen)
        np.testing.assert_array_equal(phi(state), _expected_chess_features(chess.Board(fen)), err_msg=fen)


def test_chess_features_of_start_position():
    env = games.make("chess")
    phi = features.feature_fn(env)(env.init(jax.random.PRNGKey(3)))
    assert phi.shape == (772,) and float(phi.sum()) == 32 + 4
    assert float(phi[PIECE_ORDER.index("K") * 64 + chess.E1]) == 1.0
    assert float(phi[PIECE_ORDER.index("q") * 64 + chess.D8]) == 1.0


def _parse_gardner_fen(fen: str) -> np.ndarray:
    """Hand reading of a 5x5 FEN into 12 x 25 planes, squares a1, b1, ..., e5."""
    planes = np.zeros((12, 25), np.float32)
    rows = fen.split()[0].split("/")
    for r, row in enumerate(rows):  # rank 5 first
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
                continue
            planes[PIECE_ORDER.index(ch), (4 - r) * 5 + file] = 1.0
            file += 1
    return planes.reshape(-1)


def test_gardner_features_after_moves_both_colours():
    env = games.make("gardner_chess")
    phi = jax.jit(games.get("gardner_chess").features)
    step = env.step
    state = env.init(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(phi(state), _parse_gardner_fen("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"))
    rng = random.Random(1)
    for _ in range(12):  # positions after White's and after Black's moves
        action = rng.choice(np.flatnonzero(state.legal_action_mask).tolist())
        state = step(state, action)
        if bool(state.terminated):
            break
        fen = pgx_gardner._to_fen(state)  # pylint: disable=protected-access
        np.testing.assert_array_equal(phi(state), _parse_gardner_fen(fen), err_msg=fen)


def test_connect_four_features_hand_built():
    env = games.make("connect_four")
    state = env.init(jax.random.PRNGKey(0))
    for column in [3, 3, 0]:  # first player: d1, a1; second player: d2
        state = env.step(state, column)
    expected = np.zeros((2, 6, 7), np.float32)
    expected[0, 5, 3] = expected[0, 5, 0] = 1.0  # row 5 is the bottom row
    expected[1, 4, 3] = 1.0
    np.testing.assert_array_equal(games.get("connect_four").features(state), expected.reshape(-1))


def test_tic_tac_toe_features_hand_built():
    env = games.make("tic_tac_toe")
    state = env.init(jax.random.PRNGKey(1))
    for cell in [4, 0, 8]:
        state = env.step(state, cell)
    expected = np.zeros((2, 9), np.float32)
    expected[0, [4, 8]] = 1.0
    expected[1, 0] = 1.0
    np.testing.assert_array_equal(games.get("tic_tac_toe").features(state), expected.reshape(-1))


def test_nim_features_are_one_hot_heaps():
    env = games.make("nim", heaps=(1, 3, 5))
    state = env.step(env.init(jax.random.PRNGKey(0)), env.action(2, 4))  # heaps [1, 3, 1]
    phi = np.asarray(games.get("nim").features(state)).reshape(3, 6)
    np.testing.assert_array_equal(phi.argmax(axis=1), [1, 3, 1])
    assert phi.sum() == 3


@pytest.mark.parametrize("env_id,size", [("chess", 772), ("gardner_chess", 300), ("connect_four", 84),
                                         ("tic_tac_toe", 18), ("nim", 5 * 10)])
def test_num_features_and_vmap(env_id, size):
    env = games.make(env_id)
    assert features.num_features(env) == size
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 2))
    assert jax.vmap(features.feature_fn(env))(states).shape == (2, size)


def test_unknown_env_has_no_features():
    class Fake:
        id = "go_9x9"

    with pytest.raises(ValueError, match="go_9x9"):
        features.feature_fn(Fake())
