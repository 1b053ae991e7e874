"""Nodes per second of the classical searcher beside a pure-Python reference engine (and a match).

  python benchmarks/classical_nps.py --reference=/path/to/sunfish-uci --movetime=1.0 --positions=30 \\
      --match_starts=30 --match_movetime=0.1 --out=eval/nps_chess.json

Both engines are driven over UCI through python-chess's engine API — ours as
``python -m azdb_jax.classical.uci``, the reference as the command given (e.g. sunfish,
installed in its own virtualenv: it pins an old python-chess) — on the same chess
positions (the first ``--positions`` of the shared 4-move book), alternating position by
position so that a change in the machine's load hits both. Each search runs
``--movetime`` seconds; the report keeps each engine's last ``info`` (depth, nodes, time)
per position, and the totals ``nodes / time``. Engines count nodes differently (ours:
every interior, leaf and quiescence node; sunfish: every node of its MTD-bi probes), so
the ratio compares implementations, not algorithms.

With ``--match_starts`` the two engines also play each start with both colours at
``--match_movetime`` seconds a move (``azdb_jax.classical.matches.play_host_match``).
"""

import json
import pathlib
import sys
import time

import chess
import chess.engine
from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.classical import matches as host_matches
from azdb_jax.evaluation import matches
from azdb_jax.files import write_atomic

_REFERENCE = flags.DEFINE_string("reference", None, "The reference engine's UCI command (a path).", required=True)
_MOVETIME = flags.DEFINE_float("movetime", 1.0, "Seconds per measured search.", lower_bound=0.01)
_POSITIONS = flags.DEFINE_integer("positions", 30, "Book positions measured.", lower_bound=1)
_MATCH_STARTS = flags.DEFINE_integer("match_starts", 0, "Starts of the match (0: no match).", lower_bound=0)
_MATCH_MOVETIME = flags.DEFINE_float("match_movetime", 0.1, "Seconds per move in the match.", lower_bound=0.01)
_OUT = common_flags.define_out("JSON report.", required=True)

OURS = [sys.executable, "-m", "azdb_jax.classical.uci"]


class UciPlayer:
    """``board -> chess.Move`` of a UCI engine at a fixed time per move."""

    def __init__(self, engine: chess.engine.SimpleEngine, seconds: float, name: str):
        self.engine, self.limit, self.name = engine, chess.engine.Limit(time=seconds), name

    def new_game(self) -> None:
        self._game = object()

    def __call__(self, board: chess.Board) -> chess.Move:
        return self.engine.play(board, self.limit, game=getattr(self, "_game", None)).move


def measure(engine, board, seconds):
    info = engine.analyse(board, chess.engine.Limit(time=seconds), game=object())
    return dict(depth=info.get("depth"), nodes=info.get("nodes"), time=info.get("time"))


def main(argv):
    del argv
    fens = host_matches.chess_starts(_POSITIONS.value, None)
    report = dict(command=" ".join(sys.argv), movetime=_MOVETIME.value, positions=fens, rows=[])
    with chess.engine.SimpleEngine.popen_uci(OURS) as ours, \
            chess.engine.SimpleEngine.popen_uci([_REFERENCE.value]) as reference:
        report["engines"] = {"ours": ours.id.get("name"), "reference": reference.id.get("name")}
        for fen in fens:
            board = chess.Board(fen)
            row = {"fen": fen, "ours": measure(ours, board, _MOVETIME.value),
                   "reference": measure(reference, board, _MOVETIME.value)}
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
        for side in ("ours", "reference"):
            nodes = sum(r[side]["nodes"] or 0 for r in report["rows"])
            seconds = sum(r[side]["time"] or 0.0 for r in report["rows"])
            depths = [r[side]["depth"] or 0 for r in report["rows"]]
            report[side] = dict(nodes=nodes, seconds=seconds, nps=nodes / seconds if seconds else 0.0,
                                mean_depth=sum(depths) / len(depths))
        report["nps_ratio"] = report["ours"]["nps"] / report["reference"]["nps"]
        print(json.dumps({k: report[k] for k in ("ours", "reference", "nps_ratio")}), flush=True)
        if _MATCH_STARTS.value:
            a = UciPlayer(ours, _MATCH_MOVETIME.value, f"alphabeta:time={_MATCH_MOVETIME.value}")
            b = UciPlayer(reference, _MATCH_MOVETIME.value, f"{report['engines']['reference']}:time="
                          f"{_MATCH_MOVETIME.value}")
            start = time.time()
            match = host_matches.play_host_match(a, b, host_matches.chess_starts(_MATCH_STARTS.value, None),
                                                 max_plies=300, names=(a.name, b.name), progress=True)
            report["match"] = dict(host_matches.match_record(match), seconds=time.time() - start)
            print(matches.format_summary(matches.summarize_match(match)), flush=True)
    write_atomic(pathlib.Path(_OUT.value), json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
