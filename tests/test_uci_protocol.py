"""azdb_jax/uci: the protocol parsers, the clock, the server core and the engine's command handling.

The team's engine runs here with a scripted searcher (no network; its simulations cost a
fixed time each), so every command, option, time limit and error path is checked in
milliseconds; the server core (``azdb_jax.uci.server``, shared with azdb-alphabeta) runs
with a small engine of its own that plays the last legal move and fails where a test
asks it to. tests/test_uci_engine.py drives both real engines through python-chess and
plays real games with a checkpoint against Stockfish.
"""

import json
import math
import subprocess
import sys
import threading
import time

import chess
import numpy as np
import pytest

from azdb_jax.uci import engine as engine_lib
from azdb_jax.uci import lookup, protocol, searcher, server, timeman
from azdb_jax.uci.protocol import UciError
from azdb_jax.uci.server import OptionSpec


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


def test_chunk_size_fits_the_deadline_and_the_node_limit():
    # 50 ms of search at 2,000 simulations/s = 100; the deadline cuts it to remaining / 1.5.
    assert timeman.chunk_size(2000.0, None) == 100
    assert timeman.chunk_size(2000.0, 1.0) == 100
    assert timeman.chunk_size(2000.0, 0.03) == 40  # 0.03 / 1.5 s = 20 ms
    assert timeman.chunk_size(2000.0, 0.0006) == 0  # one simulation (0.5 ms) needs 0.75 ms
    assert timeman.chunk_size(2000.0, 0.0008) == 1  # it fits: at least one
    assert timeman.chunk_size(2000.0, None, nodes_left=7) == 7 and timeman.chunk_size(2000.0, 5.0, nodes_left=0) == 0
    assert timeman.chunk_size(10.0, None) == 1  # slower than one simulation a chunk: one
    assert timeman.planned_simulations(2000.0, 0.5, nodes=None, capacity=10_000) == 1000
    assert timeman.planned_simulations(2000.0, 50.0, nodes=None, capacity=10_000) == 10_000
    assert timeman.planned_simulations(2000.0, 0.5, nodes=64, capacity=10_000) == 64
    assert timeman.planned_simulations(2000.0, None, nodes=None, capacity=777) == 777


def test_speed_follows_the_chunks_it_is_told():
    speed = timeman.Speed(rate=1000.0, memory=1.0)
    speed.record(100, 0.05)  # 2,000/s over a twentieth of the memory
    assert speed.rate == pytest.approx(0.95 * 1000 + 0.05 * 2000)
    for _ in range(40):  # a second of chunks at 500/s: the estimate is there
        speed.record(25, 0.05)
    assert speed.rate == pytest.approx(500.0, rel=0.15)
    speed.record(0, 0.05)
    speed.record(10, 0.0)  # nothing to learn from
    assert speed.rate == pytest.approx(500.0, rel=0.15)


def test_lag_is_what_the_clock_lost_beyond_the_budget():
    lag = timeman.Lag(window=2)
    lag.searched(protocol.Go(wtime=10_000, btime=9_000, winc=100, binc=100), chess.WHITE, 0.3)
    lag.observe(protocol.Go(wtime=9_600, btime=8_000, winc=100, binc=100), chess.WHITE)
    assert lag.values == [pytest.approx(0.2)]  # 10 s + 0.1 - 9.6 = 0.5 s spent on a 0.3 s budget
    assert lag.overhead_ms(100) == 200 and lag.overhead_ms(300) == 300
    lag.searched(protocol.Go(wtime=9_600, winc=100), chess.WHITE, 0.5)
    lag.observe(protocol.Go(wtime=9_300, winc=100), chess.WHITE)  # 0.4 s: within its budget
    assert lag.values == [pytest.approx(0.2), 0.0]
    lag.searched(protocol.Go(wtime=9_300, btime=9_000), chess.WHITE, 0.1)
    lag.observe(protocol.Go(wtime=9_000, btime=9_000), chess.BLACK)  # the other side's clock: nothing learnt
    lag.searched(protocol.Go(wtime=9_300), chess.WHITE, 0.1)
    lag.new_game()
    lag.observe(protocol.Go(wtime=5_000), chess.WHITE)  # another game: nothing learnt
    lag.searched(protocol.Go(wtime=5_000), chess.WHITE, 0.1)
    lag.observe(protocol.Go(wtime=60_000), chess.WHITE)  # the clock went up: not this game
    lag.searched(protocol.Go(movetime=100), chess.WHITE, 0.1)  # no clock: nothing to compare
    lag.observe(protocol.Go(wtime=1_000), chess.WHITE)
    assert lag.values == [pytest.approx(0.2), 0.0]
    lag.searched(protocol.Go(wtime=9_000), chess.WHITE, 0.2)
    lag.observe(protocol.Go(wtime=7_900), chess.WHITE)
    assert lag.values == [0.0, pytest.approx(0.9)] and lag.overhead_ms(100) == 900  # the window keeps two


@pytest.mark.parametrize("base, increment", [(10.0, 0.1), (60.0, 0.6), (60.0, 0.0)])
def test_the_chunk_loop_never_oversteps_a_move_or_runs_the_clock_out(base, increment):
    # The engine's loop (engine._search) with a simulated searcher whose real speed swings
    # between 1/3x and 2x of its average from one chunk to the next (other jobs on the cores),
    # 150 moves: no move ends past its deadline, and on average most of each budget is used.
    rng = np.random.default_rng(0)
    speed = timeman.Speed(rate=3000.0)
    left, shares = base * 1000.0, []
    for _ in range(150):
        budget = timeman.move_budget(protocol.Go(wtime=int(left), btime=int(left), winc=int(increment * 1000)),
                                     chess.WHITE, overhead_ms=100)
        remaining, spent = budget, 0.0
        while True:
            size = timeman.chunk_size(speed.rate, remaining)
            if size == 0:
                break
            seconds = size / (1000.0 * rng.choice([1 / 3, 1.0, 2.0]))
            speed.record(size, seconds)
            spent += seconds
            remaining -= seconds
            assert remaining > -timeman.CHUNK_SECONDS * 3  # at most a slow chunk's overshoot of the budget
        assert spent <= budget + 0.1  # within the overhead kept back
        shares.append(spent / (budget + 0.1))
        left -= 1000 * (spent + 0.02) - 1000 * increment  # 20 ms of latency on top
        assert left > 0
    assert np.mean(shares) > 0.5


def test_lateness_keeps_the_largest_recent_excess_over_the_plan():
    late = timeman.Lateness(window=3)
    assert late.value == 0.0
    late.record(100, 0.15, 1000.0)  # planned 0.1 s, took 0.15: 50 ms late
    late.record(100, 0.08, 1000.0)  # early: no excess
    assert late.value == pytest.approx(0.05)
    late.record(0, 5.0, 1000.0)  # nothing ran: says nothing about the plan
    late.record(50, 0.25, 1000.0)  # planned 0.05 s: 200 ms late
    assert late.value == pytest.approx(0.2)
    late.record(10, 0.01, 1000.0), late.record(10, 0.01, 1000.0), late.record(10, 0.01, 1000.0)
    assert late.value == 0.0  # the slow chunk left the window


def test_with_the_lateness_kept_back_no_move_ends_past_its_deadline():
    # The engine's loop with the reserve (deadline − lateness): a searcher that runs some
    # chunks at 1/3 of the speed it measured. Without the reserve a slow last chunk ends
    # past the deadline; with it, once one slow chunk has been seen (the first move of a
    # fresh engine may still see its first), no move does.
    def play(keep_back: bool):
        rng = np.random.default_rng(1)
        speed, late = timeman.Speed(rate=3000.0), timeman.Lateness()
        late_moves = []
        for move in range(100):
            budget = 0.5
            spent = 0.0
            while True:
                remaining = budget - spent - (late.value if keep_back else 0.0)
                rate = speed.rate
                size = timeman.chunk_size(rate, remaining)
                if size == 0:
                    break
                seconds = size / (3000.0 * rng.choice([1 / 3, 1.0, 1.0, 1.0]))
                speed.record(size, seconds)
                late.record(size, seconds, rate)
                spent += seconds
            late_moves.append(spent > budget)
        return late_moves

    without, with_reserve = play(False), play(True)
    assert sum(without) > 5  # the hazard is real in this model
    assert not any(with_reserve[1:]), [i for i, x in enumerate(with_reserve) if x]


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
    """Plays the first legal move in UCI order (player j's move is the j-th); each
    simulation takes ``seconds_per_simulation`` of real time, so limits are real."""

    num_players = 2
    capacity = 100_000

    def __init__(self, seconds_per_simulation=0.0002, variant="chess"):
        self.seconds = seconds_per_simulation
        self.variant = variant
        self.warm_ups = self.forgets = 0
        self.reuse = True
        self.reused = False
        self.count = 0
        self.starts, self.budgets, self.results = [], [], []

    def warm_up(self):
        self.warm_ups += 1
        return {"compile": 0.25}

    def start(self, board, line):
        self.board, self.count = board, 0
        self.starts.append(line)
        return False

    def grow(self, simulations, *, budget):
        ran = min(simulations, self.capacity - self.count)
        time.sleep(self.seconds * ran)
        self.count += ran
        self.budgets.append(budget)
        return ran

    def nodes(self):
        return self.num_players * self.count

    def result(self, *, rule="visit", player=None):
        self.results.append((rule, player))
        legal = sorted(m.uci() for m in self.board.legal_moves)
        moves = [legal[min(j, len(legal) - 1)] for j in range(2)]
        chosen = 0 if player is None else player
        return searcher.SearchResult(move=moves[chosen], value=0.25, player=chosen,
                                     column=f"player_{player}" if player is not None else f"team_{rule}",
                                     nodes=self.nodes(), depth=2, seldepth=5, pv=[moves[chosen]], player_moves=moves,
                                     player_values=[0.25, 0.1], full=self.count >= self.capacity)

    def forget(self):
        self.forgets += 1

    def set_reuse(self, reuse):
        self.reuse = reuse


class Session:
    """An engine in process and its output lines: the team engine on ``script`` (or on
    ``scripts`` by checkpoint), or ``make_engine(write)``."""

    def __init__(self, script=None, scripts=None, variant_of=None, make_engine=None, **defaults):
        self.lines = []
        self.cond = threading.Condition()
        self.script = script or ScriptedSearcher()
        self.loads = []
        if make_engine is not None:
            self.engine = make_engine(self._write)
            return

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

    def ready(self, *commands):
        """Sends ``commands`` (options), then ``isready``, and waits for ``readyok``."""
        self.send(*commands, "isready")
        self.wait_for("readyok")
        return self

    def close(self):
        self.engine.shutdown()


def test_uci_handshake_lists_the_options():
    s = Session()
    s.send("uci")
    s.wait_for("uciok")
    names = [line.split(" type ")[0][len("option name "):] for line in s.lines if line.startswith("option")]
    assert names == ["Checkpoint", "UCI_Variant", "Rule", "Player", "Lookup", "LookupFallback", "Move", "Hash",
                     "Reuse", "Threads", "Move Overhead", "Seed"]
    assert s.lines[0] == "id name azdb_jax"
    assert "option name Reuse type check default true" in s.lines
    assert "option name Hash type spin default 256 min 16 max 65536" in s.lines
    s.close()


def test_the_load_is_done_and_reported_before_readyok_and_kept_by_ucinewgame():
    s = Session()
    s.engine.preload()  # what azdb-uci does when it starts with a checkpoint
    s.send("uci")
    s.wait_for("uciok")
    s.send("isready")
    report = s.wait_for("info string loaded run in ")
    assert "(compile 0.2 s" in report and "2 players, trees of 100000 nodes each" in report
    s.wait_for("readyok")
    assert s.script.warm_ups == 1
    s.send("ucinewgame", "isready")
    s.wait_for("readyok")
    assert s.script.warm_ups == 1 and s.script.forgets == 1 and len(s.loads) == 1  # nothing thrown away
    s.send("setoption name Reuse value false", "isready")
    s.wait_for("readyok")
    assert s.script.reuse is False and len(s.loads) == 1  # applied without a reload
    s.send("setoption name Hash value 64", "isready")  # the trees' size: compiled again
    s.wait_for("info string loaded")
    s.wait_for("readyok")
    assert len(s.loads) == 2 and s.loads[-1]["Hash"] == 64 and s.script.warm_ups == 2
    s.close()


def test_go_searches_until_its_limit_with_info_and_a_legal_bestmove():
    s = Session().ready()
    s.send("position startpos moves e2e4", "go wtime 60000 btime 60000 winc 1000 binc 1000")
    start = time.monotonic()
    info = s.wait_for("info depth")
    move = s.wait_for("bestmove").split()[1]
    # Budget 60/30 + 0.75 - 0.1 = 2.65 s: searched until the deadline, not past it.
    assert 2.0 < time.monotonic() - start < 2.9
    assert " seldepth 5 " in info and " hashfull " in info and " score cp " in info and " pv " in info
    assert "string player 0 (rule visit; players" in info
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    assert s.script.starts[-1] == (chess.STARTING_FEN, ("e2e4",))  # the game, for subtree reuse
    s.lines.clear()  # the search's earlier info lines
    s.send("go nodes 6")  # 6 nodes / 2 players = 3 simulations each
    s.wait_for("bestmove")
    assert s.script.count == 3 and s.script.budgets[-1] == 3  # Gumbel's plan: the node limit
    s.send("go movetime 300")
    start = time.monotonic()
    info = s.wait_for("info depth")
    s.wait_for("bestmove")
    assert 0.12 < time.monotonic() - start < 0.3 and int(info.split(" time ")[1].split()[0]) <= 300
    s.send("go wtime 10 btime 10")  # almost no time: one simulation, at once
    s.wait_for("bestmove")
    assert s.script.count == 1
    s.close()


def test_a_move_that_cost_more_than_its_budget_makes_the_next_ones_shorter():
    s = Session().ready("setoption name Move Overhead value 0", "debug on")
    s.send("position startpos", "go wtime 3000 btime 3000")  # 3 s / 30: 100 ms
    assert "budget 100 ms" in s.wait_for("info string timing:")
    s.wait_for("bestmove")
    assert s.script.count > 1
    s.send("position startpos moves e2e4 e7e5", "go wtime 2000 btime 3000")  # the GUI charged a whole second
    assert "budget 0 ms; measured lag up to 900 ms" in s.wait_for("info string timing:")
    s.wait_for("bestmove")
    assert s.script.count == 1  # no time to spare: one simulation
    s.close()


def test_info_comes_every_second_and_stop_ends_an_infinite_search_at_once():
    s = Session().ready()
    s.send("position startpos", "go infinite")
    time.sleep(2.3)
    assert sum(line.startswith("info depth") for line in s.lines) >= 2
    s.send("isready")
    s.wait_for("readyok", timeout=0.5)  # answered while searching
    sent = time.monotonic()
    s.send("stop")
    s.wait_for("bestmove", timeout=1.0)
    assert time.monotonic() - sent < 0.3  # a chunk (50 ms) and the answer; measured latencies: docs/results.md
    assert s.script.budgets[0] == s.script.capacity  # an infinite search plans on the whole tree
    s.close()


def test_a_full_tree_ends_a_timed_search_but_not_an_infinite_one():
    script = ScriptedSearcher(seconds_per_simulation=0.00001)
    script.capacity = 50
    s = Session(script=script).ready()
    s.send("position startpos", "go movetime 5000")
    start = time.monotonic()
    s.wait_for("bestmove")
    assert time.monotonic() - start < 1.0 and script.count == 50
    s.send("go infinite")
    assert s.wait_for("info string the search trees are full")
    time.sleep(0.2)
    assert not any(line.startswith("bestmove") for line in s.lines)
    s.send("stop")
    s.wait_for("bestmove")
    s.close()


def test_bad_input_is_an_info_string_and_the_engine_carries_on():
    s = Session().ready()
    for command in ("flip", "position fen not/a/fen w - - 0 1", "setoption name Nope value 1",
                    "setoption name Threads value 999", "setoption name Rule value best",
                    "setoption name Reuse value maybe", "setoption name Hash value 8"):
        s.send(command)
        assert s.wait_for("info string error:")
    s.send("position startpos moves e2e4 e2e4", "go movetime 100")  # the bad position is not searched
    assert "move 2 'e2e4' is illegal" in s.wait_for("info string error:")
    assert "no valid position" in s.wait_for("info string error:")
    assert s.wait_for("bestmove") == "bestmove (none)"
    s.send("position startpos", "go movetime 100")
    assert s.wait_for("bestmove") != "bestmove (none)"
    s.close()


def test_options_rule_and_player():
    s = Session().ready("setoption name Rule value player", "setoption name Player value 1")
    s.send("position startpos", "go movetime 100")
    assert "string player 1 (Rule=player;" in s.wait_for("info depth")
    s.wait_for("bestmove")
    assert s.script.results[-1] == ("visit", 1)
    s.send("setoption name Player value 5", "go movetime 100")  # beyond the team: error, then the fallback rule
    assert "Player 5" in s.wait_for("info string error:")
    s.wait_for("bestmove")
    assert s.script.results[-1] == ("visit", None)
    s.lines.clear()
    s.send("setoption name Rule value gap", "go nodes 4")
    assert "(rule gap;" in s.wait_for("info depth")
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


# ------------------------------------------------------------------ the server core (azdb_jax/uci/server.py)


class LastMove(server.UciServer):
    """Plays the last legal move in UCI order; ``go depth 13`` makes its search fail, and
    ``go infinite``/``go ponder`` search until stopped."""

    NAME = "last move"
    PREPARE_OPTIONS = ("Table",)

    def __init__(self, write):
        self.prepares, self.new_games, self.jobs = 0, 0, []
        super().__init__(write, defaults={"Table": "good"})

    def option_specs(self, defaults):
        return [server.variant_option("chess"), OptionSpec("Table", "string", defaults["Table"]),
                OptionSpec("Notes", "string", ""), OptionSpec("Fast", "check", False), server.overhead_option(0)]

    def set_option(self, name, value):
        if name == "Notes" and value == "crash":
            raise KeyError(value)  # a bug in an engine's option handling: reported, not fatal
        super().set_option(name, value)

    def prepare(self):
        self.prepares += 1
        if self.options["Table"] == "missing":
            raise FileNotFoundError("Table 'missing': no such file")
        if self.options["Table"] == "broken":
            raise RuntimeError("the table is corrupt")
        return f"table {self.options['Table']} ready"

    def new_game(self):
        self.new_games += 1

    def search(self, job):
        self.jobs.append(job)
        if job.go.depth == 13:
            raise RuntimeError("the search failed")
        if job.go.infinite or job.go.ponder:
            job.stop.wait()
        return sorted(move.uci() for move in job.legal)[-1]


@pytest.fixture
def session():
    s = Session(make_engine=LastMove)
    yield s
    s.close()


def test_options_are_declared_and_checked(session):
    session.send("uci")
    session.wait_for("uciok")
    assert session.lines == [
        "id name last move", "id author the azdb_jax authors",
        "option name UCI_Variant type combo default chess var chess var gardner",
        "option name Table type string default good", "option name Notes type string default <empty>",
        "option name Fast type check default false", "option name Move Overhead type spin default 0 min 0 max 10000"]
    session.lines.clear()
    session.send("setoption name notes value two words", "setoption name FAST value TRUE")  # names: any case
    assert session.engine.options["Notes"] == "two words" and session.engine.options["Fast"] is True
    session.send("setoption name Notes value <empty>")
    assert session.engine.options["Notes"] == ""
    for command, message in (("setoption name Fast value maybe", "expected true or false"),
                             ("setoption name Move Overhead value -1", "outside [0, 10000]"),
                             ("setoption name UCI_Variant value shogi", "not one of chess, gardner"),
                             ("setoption name Speed value 3", "unknown option 'Speed'"),
                             ("setoption Fast", "expected 'setoption name"),
                             ("setoption name Notes value crash", "setoption: KeyError: 'crash'"),
                             ("flip", "unknown command 'flip'")):
        session.send(command)
        assert message in session.wait_for("info string error: ")
    assert session.lines == []


def test_preparing_is_reported_before_readyok_and_failures_leave_the_engine_serving(session):
    session.send("isready")
    assert session.wait_for("info string ") == "info string table good ready"
    session.wait_for("readyok")
    session.send("ucinewgame", "isready")
    session.wait_for("readyok")
    assert session.engine.prepares == 1 and session.engine.new_games == 1  # ucinewgame keeps what was prepared
    session.send("setoption name Table value missing", "isready")
    assert session.wait_for("info string error:") == "info string error: Table 'missing': no such file"
    session.wait_for("readyok")
    session.send("position startpos", "go movetime 50")
    assert "cannot search (Table 'missing': no such file)" in session.wait_for("info string error:")
    assert session.wait_for("bestmove") == "bestmove (none)"
    session.send("setoption name Table value broken", "go movetime 50")  # prepared by go itself
    assert "preparing failed: RuntimeError: the table is corrupt" in session.wait_for("info string error:")
    assert session.wait_for("bestmove") == "bestmove (none)"
    session.send("setoption name Table value good", "go movetime 50")
    assert session.wait_for("info string table good ready")
    assert session.wait_for("bestmove") == "bestmove h2h4"
    assert session.engine.prepares == 4


def test_a_search_job_carries_the_board_and_the_clock(session):
    session.send("position startpos moves e2e4", "go wtime 60000 btime 30000 winc 1000 binc 500 movestogo 10")
    assert session.wait_for("bestmove") == "bestmove h7h6"
    job = session.engine.jobs[-1]
    assert job.board.move_stack == [chess.Move.from_uci("e2e4")] and len(job.legal) == 20
    assert job.budget == pytest.approx(30000 / 10 / 1000 + 0.75 * 0.5)  # Black's clock: timeman.move_budget
    assert job.deadline == pytest.approx(job.received + job.budget) and not job.forced
    session.send("setoption name Move Overhead value 100", "go movetime 300")
    session.wait_for("bestmove")
    assert session.engine.jobs[-1].budget == pytest.approx(0.2)
    session.send("go nodes 5 depth 4")
    session.wait_for("bestmove")
    assert session.engine.jobs[-1].deadline is None and session.engine.jobs[-1].go.depth == 4
    session.send("position fen 7k/8/8/8/8/8/6q1/7K w - - 0 1", "go wtime 1000 btime 1000")  # one legal move
    assert session.wait_for("bestmove") == "bestmove h1g2" and session.engine.jobs[-1].forced


def test_a_failed_search_plays_a_legal_move_and_no_position_none(session):
    session.send("position startpos", "go depth 13")
    assert "search: RuntimeError: the search failed" in session.wait_for("info string error:")
    assert session.wait_for("info string no searched move") == "info string no searched move; playing a2a3"
    assert session.wait_for("bestmove") == "bestmove a2a3"
    session.send("position startpos moves e2e4 e7e5 e1e3")
    assert "move 3 'e1e3' is illegal" in session.wait_for("info string error:")
    session.send("d")
    assert session.wait_for("info string position") == "info string position (none: the last position was bad)"
    session.send("go movetime 10")
    assert "no valid position" in session.wait_for("info string error:")
    assert session.wait_for("bestmove") == "bestmove (none)"
    session.send("position fen 7k/5QQ1/8/8/8/8/8/K7 b - - 0 1", "go movetime 10")  # checkmated
    assert "the game is over" in session.wait_for("info string error:")
    assert session.wait_for("bestmove") == "bestmove (none)"


def test_infinite_and_ponder_searches_answer_after_stop_ponderhit_or_quit(session):
    session.send("position startpos", "go infinite", "isready")
    session.wait_for("readyok", timeout=1.0)  # answered while searching
    time.sleep(0.1)
    assert not any(line.startswith("bestmove") for line in session.lines)
    session.send("stop")
    assert session.wait_for("bestmove") == "bestmove h2h4"
    session.send("go ponder searchmoves e2e4 mate 3")
    assert "searchmoves is not supported" in session.wait_for("info string go:")
    session.send("ponderhit")
    session.wait_for("bestmove")
    session.send("go infinite")
    assert session.engine.handle("quit") is False
    session.engine.shutdown()
    session.wait_for("bestmove")


def test_the_game_follows_uci_variant(session):
    session.send("setoption name UCI_Variant value gardner", "isready")
    session.wait_for("readyok")
    assert session.engine.prepares == 1 and session.engine.game.board_size == 5
    session.send("position startpos moves b1c3", "go movetime 50")
    assert session.wait_for("bestmove") == "bestmove e4e3"
    session.send("position startpos moves e2e4")  # a chess move: pawns step one square in Gardner chess
    assert "move 1 'e2e4' is illegal" in session.wait_for("info string error:")
    session.send("setoption name UCI_Variant value chess", "position startpos moves e2e4", "go movetime 50")
    assert session.wait_for("bestmove") == "bestmove h7h6"
    assert session.engine.prepares == 2  # prepared again for the other game


def test_a_gardner_start_position_needs_neither_jax_nor_pgx():
    """The engine sets up its first position while answering ``uci``: for Gardner it must
    not import the boards' module (pgx compiles at import, seconds before ``uciok``)."""
    script = ("import sys\n"
              "from azdb_jax.uci import protocol\n"
              "position = protocol.Position.start('gardner')\n"
              "assert position.start_fen == 'rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1', position\n"
              "loaded = sorted(m for m in ('jax', 'pgx', 'azdb_jax.envs.gardner_board') if m in sys.modules)\n"
              "assert not loaded, loaded\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
