"""Test helpers for azdb_jax/uci: a scripted searcher and an engine in process.

``ScriptedSearcher`` stands in for the team's searcher (no network; it plays the first
legal move in UCI order, player j's move the j-th, and each simulation costs a fixed time,
so time limits are real); ``Session`` runs an engine in this process and collects its
output lines (tests/test_uci_engine_commands.py, tests/test_uci_server.py).
"""

import threading
import time

from azdb_jax.uci import engine as engine_lib
from azdb_jax.uci import searcher


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
