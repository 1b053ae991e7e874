"""azdb_jax/uci/server: the UCI server core shared by the team engine and azdb-alphabeta.

It runs with a small engine of its own that plays the last legal move and fails where a
test asks it to (options, preparing, searches, pondering, the variant).
"""

import subprocess
import sys
import time

import chess
import pytest

from azdb_jax.uci import server
from azdb_jax.uci.server import OptionSpec
from uci_session import Session  # pylint: disable=g-bad-import-order


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
