"""azdb_jax/uci: the protocol parsers (positions, ``go``, options, scores) and the opening
lookup table.

The clock is checked in tests/test_uci_timeman.py, the engine's command handling with a
scripted searcher in tests/test_uci_engine_commands.py, the server core shared with
azdb-alphabeta in tests/test_uci_server.py; tests/test_uci_engine.py drives both real
engines through python-chess and plays real games with a checkpoint against Stockfish.
"""

import math

import chess
import pytest

from azdb_jax.uci import lookup, protocol
from azdb_jax.uci.protocol import UciError


# ------------------------------------------------------------------ protocol


def test_position_startpos_and_fen_with_moves():
    position = protocol.parse_position(["startpos", "moves", "e2e4", "e7e5", "g1f3"])
    board = position.board()
    expected = chess.Board()
    for move in ("e2e4", "e7e5", "g1f3"):
        expected.push_uci(move)
    assert board == expected and board.move_stack == expected.move_stack
    fen = "8/8/8/8/8/5k2/6q1/7K w - - 12 80"
    assert protocol.parse_position(["fen", *fen.split()]).board().fen() == fen
    promoted = protocol.parse_position(["fen", *"8/P7/8/8/8/8/k7/7K w - - 0 1".split(), "moves", "a7a8n"])
    assert promoted.board().piece_at(chess.A8) == chess.Piece(chess.KNIGHT, chess.WHITE)


@pytest.mark.parametrize("args, message", [
    ([], "expected 'startpos'"),
    (["startfen"], "expected 'startpos' or 'fen'"),
    (["fen"], "FEN is missing"),
    (["fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX", "w", "KQkq", "-", "0", "1"], "malformed FEN"),
    (["fen", "8/8/8/8/8/8/8/8", "w", "-", "-", "0", "1"], "not a legal chess position"),
    (["startpos", "moves", "e2e5"], "move 1 'e2e5' is illegal"),
    (["startpos", "moves", "e2e4", "zz"], "move 2 'zz' is not a UCI move"),
    (["startpos", "junk"], "unexpected 'junk'"),
])
def test_position_errors_name_the_problem(args, message):
    with pytest.raises(UciError, match=message):
        protocol.parse_position(args)


def test_gardner_positions_follow_the_env():
    from azdb_jax.envs import gardner_interop  # pylint: disable=g-import-not-at-top
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    assert protocol.starting_fen("gardner") == gardner_interop.STARTING_FEN
    assert protocol.Position.start("gardner").board().fen() == gardner_interop.STARTING_FEN
    position = protocol.parse_position(["startpos", "moves", "b1c3", "b4c3"], "gardner")
    expected = GardnerBoard()
    for move in ("b1c3", "b4c3"):
        expected.push_uci(move)
    assert position.board() == expected and position.board().move_stack == expected.move_stack
    fen = "4k/5/5/5/R3K w - - 7 30"
    assert protocol.parse_position(["fen", *fen.split()], "gardner").board().fen() == fen
    for args, message in [(["fen", "rnbqk/ppppp/5/PPPPP/RNBQ w - - 0 1"], "malformed FEN .* for gardner"),
                          (["startpos", "moves", "b2b4"], "move 1 'b2b4' is illegal"),
                          (["startpos", "moves", "e2f3"], "move 1 'e2f3' is not a UCI move"),
                          (["startpos", "moves", "0000"], "move 1 '0000' is illegal")]:
        with pytest.raises(UciError, match=message):
            protocol.parse_position(args, "gardner")
    with pytest.raises(UciError, match="this engine plays chess or gardner"):
        protocol.parse_position(["startpos"], "shogi")


def test_the_protocol_games_are_the_registry_games_played_over_uci():
    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    assert protocol.VARIANTS == games.UCI_VARIANTS
    for variant in protocol.VARIANTS:
        game, record = protocol.uci_game(variant), games.by_uci_variant(variant)
        assert game.game_id == record.id and protocol.variant_of_game(record.id) == variant
        board = record.board.new_board(None)
        assert type(board) is game.board_type and board.uci_variant == variant  # what python-chess's client sends
        assert game.start_fen == board.fen() and game.board_size == record.board.board_size
    for record in games.REGISTRY:
        if record.uci_variant is None:
            assert protocol.variant_of_game(record.id) is None
    with pytest.raises(UciError, match="this engine plays chess or gardner"):
        protocol.uci_game("shogi")


def test_gardner_game_the_gui_plays_on_after_the_env_ended_it():
    shuffle = ["b1a3", "b5c3", "a3b1", "c3b5"] * 2  # the start position stands a third time
    ended = protocol.parse_position(["startpos", "moves", *shuffle], "gardner").board()
    assert ended.is_game_over() and ended.termination() == "threefold_repetition"
    on = protocol.parse_position(["startpos", "moves", *shuffle, "b1a3"], "gardner").board()
    assert not on.is_game_over() and on.fen().split()[:2] == ["rnbqk/ppppp/N4/PPPPP/R1BQK", "b"]
    fifty = protocol.searchable(protocol.new_board("gardner", "4k/5/5/5/R3K w - - 100 80"))
    assert fifty.halfmove_clock == 99 and not fifty.is_game_over()


def test_a_gui_sending_the_game_move_after_move_replays_only_the_new_moves():
    moves = ["b1c3", "b4c3", "b2c3", "a4a3"]
    previous = protocol.parse_position(["startpos", "moves", *moves[:2]], "gardner")
    replayed = []
    board = previous._board  # pylint: disable=protected-access
    original_push = type(board).push

    def counting_push(self, move):
        replayed.append(move.uci())
        original_push(self, move)

    type(board).push = counting_push
    try:
        extended = protocol.parse_position(["startpos", "moves", *moves], "gardner", previous=previous)
        assert replayed == moves[2:]  # only the two new moves
        same = protocol.parse_position(["fen", protocol.starting_fen("gardner"), "moves", *moves], "gardner",
                                       previous=extended)
        assert replayed == moves[2:]  # 'fen <start>' is the same game: nothing replayed
        branched = protocol.parse_position(["startpos", "moves", "b1a3", "b4b3"], "gardner", previous=extended)
        assert replayed == moves[2:] + ["b1a3", "b4b3"]  # not a continuation: replayed from the start
    finally:
        type(board).push = original_push
    fresh = protocol.parse_position(["startpos", "moves", *moves], "gardner")
    assert extended.board() == fresh.board() == same.board() and extended == fresh
    assert [m.uci() for m in extended.board().move_stack] == moves
    assert [m.uci() for m in branched.board().move_stack] == ["b1a3", "b4b3"]


def test_go_parses_every_limit_and_warns_about_junk():
    go, warnings = protocol.parse_go("wtime 60000 btime 59000 winc 1000 binc 900 movestogo 12".split())
    assert (go.wtime, go.btime, go.winc, go.binc, go.movestogo) == (60000, 59000, 1000, 900, 12) and not warnings
    assert go.clock(chess.WHITE) == (60000, 1000) and go.clock(chess.BLACK) == (59000, 900)
    go, warnings = protocol.parse_go("nodes 400 movetime 250 infinite".split())
    assert (go.nodes, go.movetime, go.infinite) == (400, 250, True) and not warnings
    go, warnings = protocol.parse_go("wtime -20 nodes x depth 0 banana".split())
    assert go.wtime == 0 and go.nodes is None and go.depth is None and len(warnings) == 3
    go, _ = protocol.parse_go("searchmoves e2e4 d2d4 wtime 10".split())
    assert go.searchmoves == ("e2e4", "d2d4") and go.wtime == 10


def test_setoption_names_with_spaces():
    assert protocol.parse_setoption("name Move Overhead value 250".split()) == ("Move Overhead", "250")
    assert protocol.parse_setoption("name Clear Hash".split()) == ("Clear Hash", "")
    with pytest.raises(UciError):
        protocol.parse_setoption("Threads value 2".split())


def test_value_to_cp_is_the_elo_logistic():
    assert protocol.value_to_cp(0.0) == 0
    # v = 0.5 is an expected score of 0.75: 400 log10(3) = 190.8 Elo
    assert protocol.value_to_cp(0.5) == 191 and protocol.value_to_cp(-0.5) == -191
    assert protocol.value_to_cp(1.0) == round(400 * math.log10(1.999 / 0.001))
    assert protocol.value_to_cp(float("nan")) == 0
    line = protocol.format_info(depth=1, nodes=48, seconds=0.5, value=0.5, pv=["e2e4"], text="player 1")
    assert line == "info depth 1 nodes 48 nps 96 time 500 score cp 191 pv e2e4 string player 1"
    line = protocol.format_info(depth=3, seldepth=7, nodes=480, nps=1000.4, hashfull=1200, seconds=0.5, value=-0.5,
                                pv=["e2e4", "e7e5"])
    assert line == "info depth 3 seldepth 7 nodes 480 nps 1000 hashfull 1000 time 500 score cp -191 pv e2e4 e7e5"


# ------------------------------------------------------------------ lookup


def test_lookup_picks_the_player_of_the_opening_and_turn(tmp_path):
    book = chess.Board()
    for move in ("e2e4", "e7e5"):
        book.push_uci(move)
    path = tmp_path / "lookup.json"
    path.write_text('{"positions": ["%s"], "table": [[2, 1]]}' % book.fen())
    table = lookup.load_lookup(path)
    start, moves = chess.Board(), [chess.Move.from_uci(m) for m in ("e2e4", "e7e5", "g1f3")]
    assert table.player(start, moves[:2]) == 2  # White to move at the book position: the team moves first
    assert table.player(start, moves) == 1  # Black to move: the team moved second
    assert table.player(start, moves[:1]) is None
    with pytest.raises(ValueError, match="names player"):
        table.check_players(2)
    path.write_text('{"positions": ["bad fen"], "table": [[0, 0]]}')
    with pytest.raises(ValueError, match="position 0: malformed FEN"):
        lookup.load_lookup(path)
