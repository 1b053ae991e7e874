"""The KQK and KRK databases: build time, longest mates, and agreement with the reference engines.

  python experiments/classical_endgames.py --positions=200 --out=eval/endgames.json

For each material set and board (8x8: chess, Stockfish; 5x5: Gardner chess,
Fairy-Stockfish ``UCI_Variant gardner``): the time to build the table by retrograde
analysis (``azdb_jax.classical.endgames.build_table``), the number of legal positions
and of wins, the longest mate with the strong side to move, and ``--positions`` sampled
positions (half with each side to move) compared with the engine searching to
``--depth`` plies (``endgames.compare_with_engine``): same win/draw verdict, and the
engine's mate distance where it finds a mate — equal to the table's, longer (the
engine's pruned search missed the fastest mate), or shorter (which would refute the
table). Positions the engine found a longer mate in are searched again at
``--recheck_nodes`` nodes, and the report says how many then agree.
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
from azdb_jax.classical import endgames
from azdb_jax.classical.chess_position import ChessPosition
from azdb_jax.classical.gardner_position import GardnerPosition
from azdb_jax.files import write_atomic

_POSITIONS = flags.DEFINE_integer("positions", 200, "Sampled positions per table.", lower_bound=2)
_DEPTH = flags.DEFINE_integer("depth", 25, "Engine search depth.", lower_bound=1)
_RECHECK = flags.DEFINE_integer("recheck_nodes", 5_000_000, "Nodes of the second search of longer mates (0: none).",
                                lower_bound=0)
_OUT = common_flags.define_out("JSON report.", required=True)


def main(argv):
    del argv
    from azdb_jax.evaluation.fairy_stockfish import FairyStockfish  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation.stockfish import find_stockfish  # pylint: disable=g-import-not-at-top

    report = dict(command=" ".join(sys.argv), depth=_DEPTH.value, tables=[])
    stockfish = chess.engine.SimpleEngine.popen_uci(find_stockfish())
    stockfish.configure({"Hash": 64, "Threads": 1})
    fairy = FairyStockfish(hash_mb=64)
    try:
        for size, make in ((8, ChessPosition), (5, GardnerPosition)):
            for material in endgames.MATERIALS:
                start = time.process_time()
                table = endgames.build_table(material, size)
                build = time.process_time() - start
                tables = endgames.EndgameTables(size, [material])
                if size == 8:
                    def analyse(fen, limit=chess.engine.Limit(depth=_DEPTH.value)):
                        return stockfish.analyse(chess.Board(fen), limit, game=object())["score"].relative
                else:
                    def analyse(fen, limit=chess.engine.Limit(depth=_DEPTH.value)):
                        return fairy.analyse(fen, limit=limit).lines[0].score
                compared = endgames.compare_with_engine(tables, table, make, analyse, _POSITIONS.value)
                recheck = {"positions": 0, "now_equal": 0, "still_longer": 0, "shorter": 0}
                for fen, ours, theirs in compared["disagreements"]:
                    if _RECHECK.value and ours[0] == theirs[0] and theirs[1] is not None and theirs[1] > ours[1]:
                        again = endgames.engine_verdict(analyse(fen, chess.engine.Limit(nodes=_RECHECK.value)))
                        recheck["positions"] += 1
                        key = ("now_equal" if again[1] == ours[1] else "shorter" if again[1] is not None
                               and again[1] < ours[1] else "still_longer")
                        recheck[key] += 1
                row = dict(material=material, board=f"{size}x{size}", build_cpu_seconds=build,
                           legal_wtm=int(table.valid_wtm.sum()), legal_btm=int(table.valid_btm.sum()),
                           won_wtm=int((table.wtm >= 0).sum()), lost_btm=int((table.btm >= 0).sum()),
                           longest_mate_moves=endgames.longest_mate_moves(table),
                           engine=(stockfish.id.get("name") if size == 8 else fairy.name), recheck=recheck,
                           **{k: v for k, v in compared.items() if k != "disagreements"},
                           disagreements=[[fen, list(o), list(t)] for fen, o, t in compared["disagreements"]])
                report["tables"].append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "disagreements"}), flush=True)
                write_atomic(pathlib.Path(_OUT.value), json.dumps(report, indent=1))
    finally:
        stockfish.quit()
        fairy.close()


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
