"""Where a UCI engine's first move goes: the start, readyok and the first moves, timed on its pipes.

  python benchmarks/uci_first_move.py --checkpoint=runs/demo_chess --jit_cache=/tmp/cold --out=first.json
  python benchmarks/uci_first_move.py --checkpoint=runs/demo_chess --noisready_first    # python-chess's order

Starts ``python -m azdb_jax.uci --checkpoint=... --threads=1`` (from the current folder,
so any checkout's engine can be timed) and plays the part of a GUI on its pipes:
``uci`` → ``uciok``; with ``--isready_first`` (a GUI or tournament manager that waits
for the engine before starting the clock) ``isready`` → ``readyok``; then, as
python-chess's ``play`` does for a new game, ``ucinewgame``, ``isready`` → ``readyok``,
``position startpos`` and ``go wtime/btime/winc/binc`` (``--base`` + ``--increment``)
→ ``bestmove``, and further moves two plies apart (``--moves``, a fixed reply between). Each
step's wall time is recorded, with the moves' allotment under the engine's clock rule
(``timeman.move_budget`` without overhead; the clock is not run down between the moves)
and every ``info string`` the engine sent before its first ``bestmove``. ``--jit_cache``
(a fresh folder: a cold start) is passed to the engine.

What a bot sees when it calls python-chess's ``play`` right after starting the engine
(``--noisready_first``; ``--delay=S`` waits S seconds after ``uciok``, as a bot that
starts its engine before the game): ``first_move_wait_seconds``, from ``ucinewgame`` to
the first ``bestmove``. ``--checkpoint_via=flag,option`` times, in each trial, an engine
given ``--checkpoint`` (it prepares from launch) and one told the checkpoint by
``setoption`` after ``uciok`` (it prepares at the first ``isready``):

  python benchmarks/uci_first_move.py --checkpoint=pretrained:gardner --variant=gardner \
      --noisready_first --checkpoint_via=option,flag --trials=3 --jit_cache= --out=wait.json

``--trials=N --checkouts=A,B`` starts N fresh engines of each checkout, interleaved, so
that two commits are timed under the same load (``git worktree add`` gives the older
one a folder); the summary gives each move's share of its allotment per checkout:

  python benchmarks/uci_first_move.py --checkpoint=runs/gardner --variant=gardner --base=30 \\
      --increment=0.3 --moves=3 --trials=5 --checkouts=../old,. --debug --out=ab.json
"""

import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

from absl import app, flags

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import games
from azdb_jax.cli import common_flags

_CHECKPOINT = common_flags.define_checkpoint("Run directory[@step] of the engine.", required=True)
_BASE = flags.DEFINE_float("base", 15.0, "Clock: seconds per side.")
_INCREMENT = flags.DEFINE_float("increment", 0.1, "Clock: seconds added per move.")
_ISREADY_FIRST = flags.DEFINE_bool("isready_first", True, "Wait for readyok before the game (as a GUI does).")
_DELAY = flags.DEFINE_float("delay", 0.0, "Seconds between uciok and the game's first command (a bot that "
                            "starts its engine before the game begins).", lower_bound=0.0)
_CHECKPOINT_VIA = flags.DEFINE_list(
    "checkpoint_via", ["flag"], "How each engine is given the checkpoint: 'flag' (--checkpoint=..., prepared from "
    "launch) or 'option' (started with --checkpoint='' and told by setoption Checkpoint after uciok, as a GUI's "
    "engine settings do: prepared from the first isready). Several: each trial starts one engine of each, interleaved.")
_JIT_CACHE = flags.DEFINE_string("jit_cache", "", "The engine's --jit_cache ('' keeps its default; 'fresh': a new "
                                 "empty folder for each engine, every start cold).")
_VARIANT = flags.DEFINE_enum("variant", "chess", list(games.UCI_VARIANTS), "The checkpoint's game (UCI_Variant).")
_MOVES = flags.DEFINE_integer("moves", 2, "Moves timed per engine (each after a fixed reply).", lower_bound=1)
_TRIALS = flags.DEFINE_integer("trials", 1, "Fresh engines per checkout.", lower_bound=1)
_CHECKOUTS = flags.DEFINE_list("checkouts", [], "Checkouts whose engines are timed, interleaved (default: this "
                               "folder): an A/B of two commits under the same load.")
_DEBUG = flags.DEFINE_bool("debug", False, "Send 'debug on': each move's timing breakdown as an info string.")
_OUT = common_flags.define_out("Write the timings as JSON here (default: print them only).")


class Pipes:
    def __init__(self, command: List[str], **popen):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1, **popen)
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


def time_engine(checkout: str, via: str = "flag") -> Dict[str, Any]:
    """One fresh engine of ``checkout`` (its folder first on the path), given the checkpoint
    ``via`` its flag or the option: the start and ``--moves`` moves on the clock, each with
    its allotment and share. ``first_move_wait_seconds`` is what python-chess's first
    ``play`` waits: from ``ucinewgame`` (then ``isready``, ``position``, ``go``) to ``bestmove``."""
    from azdb_jax.uci import protocol, timeman  # pylint: disable=g-import-not-at-top

    if via not in ("flag", "option"):
        raise ValueError(f"--checkpoint_via: {via!r} is neither 'flag' nor 'option'")
    given = _CHECKPOINT.value if via == "flag" else ""
    command = [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={given}", "--threads=1"]
    if _JIT_CACHE.value:
        cache = tempfile.mkdtemp(prefix="uci_first_move_") if _JIT_CACHE.value == "fresh" else _JIT_CACHE.value
        command.append(f"--jit_cache={cache}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH")) if p))
    started = time.monotonic()
    engine = Pipes(command, cwd=checkout, env=env)
    out: Dict[str, Any] = {"command": " ".join(command), "checkout": checkout, "checkpoint_via": via,
                           "isready_first": _ISREADY_FIRST.value, "delay": _DELAY.value}
    engine.send("uci")
    out["uciok_seconds"] = engine.wait_for("uciok") - started
    if via == "option":
        engine.send(f"setoption name Checkpoint value {_CHECKPOINT.value}")
    if _VARIANT.value != _VARIANT.default:  # the engine's default game needs no option
        engine.send(f"setoption name UCI_Variant value {_VARIANT.value}")
    if _DEBUG.value:
        engine.send("debug on")
    if _ISREADY_FIRST.value:
        sent = engine.send("isready")
        out["readyok_seconds"] = engine.wait_for("readyok") - sent
    clock_ms, inc_ms = int(_BASE.value * 1000), int(_INCREMENT.value * 1000)
    go = f"go wtime {clock_ms} btime {clock_ms} winc {inc_ms} binc {inc_ms}"
    allotted = timeman.move_budget(protocol.parse_go(go.split()[1:])[0], True, overhead_ms=0)
    time.sleep(_DELAY.value)
    new_game = engine.send("ucinewgame")
    engine.send("isready")
    out["newgame_readyok_seconds"] = engine.wait_for("readyok") - new_game
    board = protocol.new_board(_VARIANT.value)
    moves = []
    for k in range(_MOVES.value):
        engine.send("position startpos" + (f" moves {' '.join(m.uci() for m in board.move_stack)}" if k else ""))
        sent = engine.send(go)
        answered = engine.wait_for("bestmove")
        seconds = answered - sent
        played = engine.lines[-1].split()[1]
        timing = [line for line in engine.lines if line.startswith("info string timing")]
        moves.append({"seconds": seconds, "share": seconds / allotted, "move": played,
                      "timing": timing[-1] if timing else None})
        if k == 0:
            out["launch_to_first_move_seconds"] = answered - started
            out["info_strings"] = [line for line in engine.lines if line.startswith("info string")]
        board.push_uci(played)
        if board.is_game_over():
            break
        board.push(sorted(board.legal_moves, key=lambda move: move.uci())[0])  # a fixed reply, two plies on
        if board.is_game_over():
            break
    out["first_move_seconds"] = moves[0]["seconds"]
    out["first_move_wait_seconds"] = out["newgame_readyok_seconds"] + moves[0]["seconds"]
    out["first_move_allotted_seconds"] = allotted
    if len(moves) > 1:
        out["second_move_seconds"] = moves[1]["seconds"]
    out["moves"] = moves
    engine.send("quit")
    engine.process.wait(timeout=120)
    return out


def main(argv: List[str]) -> None:
    del argv
    checkouts = [str(pathlib.Path(c).resolve()) for c in (_CHECKOUTS.value or ["."])]
    runs = [time_engine(checkout, via) for _ in range(_TRIALS.value) for checkout in checkouts
            for via in _CHECKPOINT_VIA.value]  # interleaved
    with open("/proc/loadavg") as f:
        loadavg = f.read().split()[:3]
    if len(runs) == 1:
        report.emit(dict(runs[0], loadavg=loadavg), _OUT.value)
        return
    summary = {}
    for checkout, via in [(c, v) for c in checkouts for v in _CHECKPOINT_VIA.value]:
        mine = [r for r in runs if r["checkout"] == checkout and r["checkpoint_via"] == via]
        waits = sorted(r["first_move_wait_seconds"] for r in mine)
        summary.setdefault(f"{checkout} ({via})", []).append(
            {"first_move_wait_median": waits[len(waits) // 2], "first_move_wait_max": waits[-1],
             "uciok_median": sorted(r["uciok_seconds"] for r in mine)[len(mine) // 2]})
        for k in range(_MOVES.value):
            shares = [r["moves"][k]["share"] for r in mine if len(r["moves"]) > k]
            if shares:
                summary[f"{checkout} ({via})"].append({"move": k + 1, "engines": len(shares),
                                                         "share_mean": sum(shares) / len(shares),
                                                         "share_max": max(shares),
                                                         "over_allotment": sum(s > 1.0 for s in shares)})
    report.emit({"summary": summary, "runs": runs, "loadavg_after": loadavg}, _OUT.value)


if __name__ == "__main__":
    app.run(main)
