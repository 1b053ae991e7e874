"""Where a UCI engine's first move goes: the start, readyok and the first moves, timed on its pipes.

  python benchmarks/uci_first_move.py --checkpoint=runs/demo_chess --jit_cache=/tmp/cold --out=first.json
  python benchmarks/uci_first_move.py --checkpoint=runs/demo_chess --noisready_first    # python-chess's order

Starts ``python -m azdb_jax.uci --checkpoint=... --threads=1`` (from the current folder,
so any checkout's engine can be timed) and plays the part of a GUI on its pipes:
``uci`` → ``uciok``; with ``--isready_first`` (a GUI or tournament manager that waits
for the engine before starting the clock) ``isready`` → ``readyok``; then, as
python-chess's ``play`` does for a new game, ``ucinewgame``, ``isready`` → ``readyok``,
``position startpos`` and ``go wtime/btime/winc/binc`` (``--base`` + ``--increment``)
→ ``bestmove``, and a second move two plies later. Each step's wall time is recorded,
with the first move's allotment under the engine's clock rule (``timeman.move_budget``
without overhead) and every ``info string`` the engine sent before its first
``bestmove``. ``--jit_cache`` (a fresh folder: a cold start) is passed to the engine.
"""

import subprocess
import sys
import time
from typing import List

from absl import app, flags

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax.cli import common_flags

_CHECKPOINT = common_flags.define_checkpoint("Run directory[@step] of the engine.", required=True)
_BASE = flags.DEFINE_float("base", 15.0, "Clock: seconds per side.")
_INCREMENT = flags.DEFINE_float("increment", 0.1, "Clock: seconds added per move.")
_ISREADY_FIRST = flags.DEFINE_bool("isready_first", True, "Wait for readyok before the game (as a GUI does).")
_JIT_CACHE = flags.DEFINE_string("jit_cache", "", "The engine's --jit_cache ('' keeps its default).")
_OUT = common_flags.define_out("Write the timings as JSON here (default: print them only).")


class Pipes:
    def __init__(self, command: List[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: List[str] = []

    def send(self, line: str) -> float:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return time.monotonic()

    def wait_for(self, prefix: str) -> float:
        for line in self.process.stdout:
            self.lines.append(line.strip())
            if line.startswith(prefix):
                return time.monotonic()
        raise RuntimeError(f"the engine ended before {prefix!r}: {self.lines[-5:]}")


def main(argv: List[str]) -> None:
    del argv
    from azdb_jax.uci import protocol, timeman  # pylint: disable=g-import-not-at-top

    command = [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={_CHECKPOINT.value}", "--threads=1"]
    if _JIT_CACHE.value:
        command.append(f"--jit_cache={_JIT_CACHE.value}")
    started = time.monotonic()
    engine = Pipes(command)
    out = {"command": " ".join(command), "isready_first": _ISREADY_FIRST.value}
    engine.send("uci")
    out["uciok_seconds"] = engine.wait_for("uciok") - started
    if _ISREADY_FIRST.value:
        sent = engine.send("isready")
        out["readyok_seconds"] = engine.wait_for("readyok") - sent
    clock_ms, inc_ms = int(_BASE.value * 1000), int(_INCREMENT.value * 1000)
    go = f"go wtime {clock_ms} btime {clock_ms} winc {inc_ms} binc {inc_ms}"
    sent = engine.send("ucinewgame")
    engine.send("isready")
    engine.wait_for("readyok")
    engine.send("position startpos")
    engine.send(go)
    out["first_move_seconds"] = engine.wait_for("bestmove") - sent
    out["first_move_allotted_seconds"] = timeman.move_budget(protocol.parse_go(go.split()[1:])[0], True, overhead_ms=0)
    first = engine.lines[-1].split()[1]
    out["info_strings"] = [line for line in engine.lines if line.startswith("info string")]
    board = protocol.new_board("chess")
    board.push_uci(first)
    board.push(sorted(board.legal_moves, key=lambda move: move.uci())[0])
    engine.send(f"position startpos moves {' '.join(move.uci() for move in board.move_stack)}")
    sent = engine.send(go)
    out["second_move_seconds"] = engine.wait_for("bestmove") - sent
    engine.send("quit")
    engine.process.wait(timeout=120)
    with open("/proc/loadavg") as f:
        out["loadavg"] = f.read().split()[:3]
    report.emit(out, _OUT.value)


if __name__ == "__main__":
    app.run(main)
