"""azdb_jax/uci: the protocol parsers, the clock, and the engine's command handling.

The engine runs here with a scripted searcher (no network), so every command, option
and error path is checked in milliseconds; tests/test_uci_engine.py plays real games
with a trained checkpoint through python-chess against Stockfish.
"""

import json
import math
import threading
import time

import chess
import pytest

from azdb_jax.uci import engine as engine_lib
from azdb_jax.uci import lookup, protocol, searcher, timeman
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

    assert protocol.GARDNER_STARTING_FEN == gardner_interop.STARTING_FEN
    assert protocol.Position.start("gardner").board().fen() == gardner_interop.STARTING_FEN
    position = protocol.parse_position(["startpos", "moves", "b1c3", "b4c3"], "gardner")
    expected = GardnerBoard()
    for move in ("b1c3", "b4c3"):
        expected.push_uci(move)
    assert position.board() == expected and position.board().move_stack == expected.move_stack
    fen = "4k/5/5/5/R3K w - - 7 30"
    assert protocol.parse_position(["fen", *fen.split()], "gardner").board().fen() == fen
    for args, message in [(["fen", "rnbqk/ppppp/5/PPPPP/RNBQ w - - 0 1"], "not a Gardner position"),
                          (["startpos", "moves", "b2b4"], "move 1 'b2b4' is illegal"),
                          (["startpos", "moves", "e2f3"], "move 1 'e2f3' is not a UCI move"),
                          (["startpos", "moves", "0000"], "move 1 '0000' is illegal")]:
        with pytest.raises(UciError, match=message):
            protocol.parse_position(args, "gardner")
    with pytest.raises(UciError, match="this engine plays chess or gardner"):
        protocol.parse_position(["startpos"], "shogi")


def test_gardner_game_the_gui_plays_on_after_the_env_ended_it():
    shuffle = ["b1a3", "b5c3", "a3b1", "c3b5"] * 2  # the start position stands a third time
    ended = protocol.parse_position(["startpos", "moves", *shuffle], "gardner").board()
    assert ended.is_game_over() and ended.termination() == "threefold_repetition"
    on = protocol.parse_position(["startpos", "moves", *shuffle, "b1a3"], "gardner").board()
    assert not on.is_game_over() and on.fen().split()[:2] == ["rnbqk/ppppp/N4/PPPPP/R1BQK", "b"]
    fifty = protocol.searchable(protocol.new_board("gardner", "4k/5/5/5/R3K w - - 100 80"), "gardner")
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
        same = protocol.parse_position(["fen", protocol.GARDNER_STARTING_FEN, "moves", *moves], "gardner",
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


# ------------------------------------------------------------------ the clock


def test_move_budget():
    go = protocol.Go(wtime=60000, btime=60000, winc=1000, binc=1000)
    assert timeman.move_budget(go, chess.WHITE, overhead_ms=100) == pytest.approx((2000 + 750 - 100) / 1000)
    low = protocol.Go(wtime=500, btime=500, winc=1000, binc=1000)
    assert timeman.move_budget(low, chess.BLACK, overhead_ms=100) == pytest.approx((225 - 100) / 1000)
    assert timeman.move_budget(protocol.Go(wtime=0, btime=0), chess.WHITE, overhead_ms=100) == 0.0
    assert timeman.move_budget(protocol.Go(movetime=300), chess.WHITE, overhead_ms=100) == pytest.approx(0.2)
    assert timeman.move_budget(protocol.Go(nodes=10), chess.WHITE, overhead_ms=100) is None
    assert timeman.move_budget(protocol.Go(infinite=True, wtime=10), chess.WHITE, overhead_ms=0) is None
    # movestogo 1: most of the clock, never below the reserve
    last = protocol.Go(wtime=10000, btime=10000, movestogo=1)
    assert timeman.move_budget(last, chess.WHITE, overhead_ms=0) == pytest.approx(4.5)


def test_a_game_never_runs_the_clock_out():
    # Whatever the clock, a move's budget leaves time for the rest of the game.
    for inc in (0, 100, 1000):
        left = 60000.0
        for _ in range(300):
            spent = 1000 * timeman.move_budget(protocol.Go(wtime=int(left), winc=inc), chess.WHITE, overhead_ms=0)
            left = left - spent + inc
            assert left > 0


def test_choose_level():
    times = timeman.LevelTimes()
    times.record(8, 0.05)
    times.record(64, 0.4)
    times.record(64, 0.6)  # the slow one counts
    assert times.expected(64) == 0.6
    assert timeman.choose_level(times, None, preferred=64) == 64
    assert timeman.choose_level(times, 1.0) == 64
    assert timeman.choose_level(times, 0.5) == 8
    assert timeman.choose_level(times, 0.001) == 8  # nothing fits: the fastest
    assert timeman.choose_level(times, 10.0, cap=10) == 8
    assert times.expected(8) == pytest.approx(0.05 * 1.5)  # one load factor for every level
    assert list(timeman.ladder(64)) == [8, 64] and list(timeman.ladder(4)) == [1, 4]
    assert list(timeman.ladder(16)) == [2, 16] and list(timeman.ladder(1)) == [1]
    assert list(timeman.ladder(4096)) == [8, 64, 512, 4096] and list(timeman.ladder(800)) == [12, 100, 800]
    assert list(timeman.ladder(64, 16)) == [16, 64] and list(timeman.ladder(4096, 512)) == [512, 4096]


def test_a_level_slow_once_comes_back_when_the_load_passes():
    times = timeman.LevelTimes(history=5)
    times.record(64, 0.1)
    times.record(512, 1.0)
    times.record(512, 2.0)  # a load spike: the main level no longer fits a 2 s budget
    assert timeman.choose_level(times, 2.0) == 64
    for _ in range(4):  # the fast level, played at its usual speed, shows the spike is over
        times.record(64, 0.1)
        assert timeman.choose_level(times, 2.0) == 64
    times.record(64, 0.1)
    assert times.expected(512) == pytest.approx(1.0)
    assert timeman.choose_level(times, 2.0) == 512
    times.record(64, 0.25)  # load again: every level is expected slower
    assert times.expected(512) == pytest.approx(2.5) and timeman.choose_level(times, 2.0) == 64


@pytest.mark.parametrize("main", [64, 800, 4096, 20000])
def test_a_long_clocked_game_never_runs_out_whatever_the_main_level(main):
    # Searches cost 2.6 ms a simulation (the 4,096-simulation chess engine measured on this
    # machine: 512 simulations 1.36 s); 200 moves at 60 s + 1 s. With only the main and the
    # fast level (main / 8) the clock runs out for the large engines; the ladder's floor
    # levels keep it above the reserve.
    def play(levels):
        times = timeman.LevelTimes()
        for level in levels:
            times.record(level, 0.0026 * level)
        left = 60_000.0
        lowest = left
        for _ in range(200):
            budget = timeman.move_budget(protocol.Go(wtime=int(left), winc=1000), chess.WHITE, overhead_ms=100)
            level = timeman.choose_level(times, budget)
            left = left - 1000 * times.expected(level) - 100 + 1000  # the search, the overhead, the increment
            lowest = min(lowest, left)
        return lowest

    assert play(timeman.ladder(main)) > 1000
    if main >= 4096:
        assert play([main // 8, main]) < 0


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


# ------------------------------------------------------------------ the engine, scripted


class ScriptedSearcher:
    """Plays the first legal move in UCI order; player j's move is the j-th."""

    num_players = 2
    default_simulations = 8

    def __init__(self, delay=0.0, variant="chess"):
        self.delay = delay
        self.variant = variant
        self.levels = set()
        self.calls = []

    def compiled(self, simulations):
        return simulations in self.levels

    def prepare(self, simulations):
        self.levels.add(simulations)
        return 0.001 * simulations

    def search(self, board, simulations, *, rule="visit", player=None):
        time.sleep(self.delay)
        self.calls.append((simulations, rule, player))
        legal = sorted(m.uci() for m in board.legal_moves)
        moves = [legal[min(j, len(legal) - 1)] for j in range(2)]
        chosen = 0 if player is None else player
        return searcher.SearchResult(move=moves[chosen], value=0.25, player=chosen, column="x",
                                     simulations=simulations, nodes=2 * simulations, seconds=0.001 * simulations,
                                     player_moves=moves, player_values=[0.25, 0.1])


class Session:
    def __init__(self, script=None, scripts=None, variant_of=None, **defaults):
        self.lines = []
        self.cond = threading.Condition()
        self.script = script or ScriptedSearcher()
        self.loads = []

        def load(options):
            self.loads.append(dict(options))
            if options["Checkpoint"] == "missing":
                raise FileNotFoundError("Checkpoint 'missing': no such run")
            return (scripts or {}).get(options["Checkpoint"], self.script)

        self.engine = engine_lib.Engine(self._write, load, defaults=dict({"Checkpoint": "run"}, **defaults),
                                        variant_of=variant_of)

    def _write(self, line):
        with self.cond:
            self.lines.append(line)
            self.cond.notify_all()

    def send(self, *commands):
        for command in commands:
            assert self.engine.handle(command)

    def wait_for(self, prefix, timeout=5.0):
        with self.cond:
            ok = self.cond.wait_for(lambda: any(line.startswith(prefix) for line in self.lines), timeout)
        assert ok, f"no {prefix!r} in {self.lines}"
        line = next(line for line in self.lines if line.startswith(prefix))
        self.lines.remove(line)
        return line

    def close(self):
        self.engine.shutdown()


def test_uci_handshake_lists_the_options():
    s = Session()
    s.send("uci")
    s.wait_for("uciok")
    names = [line.split(" type ")[0][len("option name "):] for line in s.lines if line.startswith("option")]
    assert names == ["Checkpoint", "UCI_Variant", "Rule", "Player", "Lookup", "LookupFallback", "Move", "Simulations",
                     "MinSimulations", "Threads", "Move Overhead", "Seed"]
    assert s.lines[0] == "id name azdb_jax"
    s.close()


def test_go_answers_with_info_and_a_legal_bestmove():
    s = Session()
    s.send("isready")
    s.wait_for("readyok")
    assert s.script.levels == {1, 8}  # main level and the fast one, compiled before readyok
    s.send("position startpos moves e2e4", "go wtime 60000 btime 60000 winc 1000 binc 1000")
    info = s.wait_for("info depth")
    assert " nodes 16 " in info and " score cp " in info and " pv " in info and "string player 0" in info
    move = s.wait_for("bestmove").split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    s.send("go nodes 6")  # exact budget: 6 nodes / 2 players = 3 simulations, compiled on demand
    s.wait_for("bestmove")
    assert s.script.calls[-1][0] == 3
    s.send("go wtime 10 btime 10")  # almost no time: the fast level
    s.wait_for("bestmove")
    assert s.script.calls[-1][0] == 1
    s.close()


def test_bad_input_is_an_info_string_and_the_engine_carries_on():
    s = Session()
    s.send("isready")
    s.wait_for("readyok")
    for command in ("flip", "position fen not/a/fen w - - 0 1", "setoption name Nope value 1",
                    "setoption name Threads value 999", "setoption name Rule value best"):
        s.send(command)
        assert s.wait_for("info string error:")
    s.send("position startpos moves e2e4 e2e4", "go movetime 100")  # the bad position is not searched
    assert "move 2 'e2e4' is illegal" in s.wait_for("info string error:")
    assert "no valid position" in s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.send("position startpos", "go movetime 100")
    assert s.wait_for("bestmove") != "bestmove (none)"
    s.close()


def test_options_rule_player_and_reload():
    s = Session()
    s.send("setoption name Rule value player", "setoption name Player value 1", "isready")
    s.wait_for("readyok")
    s.send("position startpos", "go movetime 100")
    assert "string player 1" in s.wait_for("info depth")
    s.wait_for("bestmove")
    assert s.script.calls[-1][2] == 1
    s.send("setoption name Simulations value 32", "isready")
    s.wait_for("readyok")
    assert len(s.loads) == 2 and s.loads[-1]["Simulations"] == 32 and 32 in s.script.levels
    s.send("setoption name Player value 5", "go movetime 100")  # beyond the team: error, then the fallback rule
    assert "Player 5" in s.wait_for("info string error:")
    s.wait_for("bestmove")
    s.close()


def test_missing_checkpoint_is_reported_and_go_answers_none():
    s = Session(Checkpoint="missing")
    s.send("isready")
    assert "no such run" in s.wait_for("info string error:")
    s.wait_for("readyok")
    s.send("go movetime 10")
    s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_isready_and_stop_are_answered_during_go_infinite():
    s = Session(script=ScriptedSearcher(delay=0.05))
    s.send("isready")
    s.wait_for("readyok")
    s.send("position startpos", "go infinite")
    s.wait_for("info depth")
    s.send("isready")
    s.wait_for("readyok", timeout=1.0)
    time.sleep(0.3)
    s.send("stop")
    s.wait_for("bestmove", timeout=1.0)
    levels = [call[0] for call in s.script.calls]
    assert levels[:3] == [8, 16, 32]  # deepening until stop
    s.close()


def test_no_legal_move_answers_none():
    s = Session()
    s.send("position fen 7k/5QQ1/8/8/8/8/8/K7 b - - 0 1", "go movetime 50")  # Black is checkmated
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_the_engine_plays_the_game_of_its_checkpoint():
    from azdb_jax.envs.gardner_board import GardnerBoard  # pylint: disable=g-import-not-at-top

    plays = {"run": "chess", "mini": "gardner"}
    s = Session(scripts={"run": ScriptedSearcher(), "mini": ScriptedSearcher(variant="gardner")},
                variant_of=plays.get, Checkpoint="mini")
    s.send("uci")
    s.wait_for("uciok")
    assert "option name UCI_Variant type combo default gardner var chess var gardner" in s.lines
    s.send("setoption name UCI_Variant value chess")
    assert "the checkpoint 'mini' plays gardner" in s.wait_for("info string error:")
    s.send("setoption name UCI_Variant value gardner", "setoption name Rule value lookup")  # same game: fine
    assert "chess openings" in s.wait_for("info string error:")
    s.send("isready")
    s.wait_for("readyok")
    s.send("position startpos moves b1c3", "go movetime 50")
    board = GardnerBoard()
    board.push_uci("b1c3")
    assert board.is_legal(chess.Move.from_uci(s.wait_for("bestmove").split()[1]))
    s.send("position startpos moves e2e4")  # a chess move: pawns step one square in Gardner chess
    assert "move 1 'e2e4' is illegal" in s.wait_for("info string error:")
    s.send("setoption name Checkpoint value run")  # a chess checkpoint: the game follows
    assert s.wait_for("info string UCI_Variant") == "info string UCI_Variant chess: the game of the checkpoint"
    s.send("position startpos moves e2e4", "go movetime 50")
    move = s.wait_for("bestmove").split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    s.close()


def test_a_checkpoint_of_unknown_game_sets_it_at_load_and_a_mismatch_is_refused():
    s = Session(script=ScriptedSearcher(variant="gardner"))  # no config to read: the load tells
    s.send("isready")
    assert s.wait_for("info string UCI_Variant") == "info string UCI_Variant gardner: the game of the checkpoint"
    s.wait_for("readyok")
    s.send("position startpos", "go nodes 2")
    assert s.wait_for("bestmove") != "bestmove (none)"
    s.send("setoption name UCI_Variant value chess", "isready")  # the GUI insists on chess: the team cannot play it
    assert "plays gardner, UCI_Variant is chess" in s.wait_for("info string error:")
    s.wait_for("readyok")
    s.send("position startpos moves e2e4", "go nodes 2")
    assert "cannot search" in s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.close()


def test_checkpoint_variant_reads_the_game_from_the_run_config(tmp_path):
    from azdb_jax.uci.main import checkpoint_variant  # pylint: disable=g-import-not-at-top

    for env, variant in (("chess", "chess"), ("gardner_chess", "gardner"), ("connect_four", None)):
        run = tmp_path / env
        run.mkdir()
        (run / "config.json").write_text(json.dumps({"env": {"name": env}}))
        assert checkpoint_variant(str(run)) == variant
        assert checkpoint_variant(f"{run}@20") == variant
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{not json")
    for spec in ("", str(tmp_path / "missing"), str(tmp_path / "bad"), f"{tmp_path / 'chess'}@x"):
        assert checkpoint_variant(spec) is None  # unreadable: loading reports why
