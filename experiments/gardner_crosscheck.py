"""Cross-check our Gardner chess env against Fairy-Stockfish, position by position.

  python experiments/gardner_crosscheck.py --positions=5000 --seed=0 --out=gardner_crosscheck.json

Plays games with ``azdb_jax.games.make("gardner_chess")`` (random playouts, random
endgames and lines played by Fairy-Stockfish) and compares every position with the
engine's view: legal moves, FEN, check, game ends, and the state rebuilt from the
engine's FEN (``azdb_jax.evaluation.gardner_crosscheck``). Writes the JSON report with
``--out``, prints a summary and exits with status 1 on an unexplained mismatch.
"""

import json
import sys

import pgx
from absl import app, flags

from azdb_jax.cli import common_flags
from azdb_jax.evaluation import fairy_stockfish
from azdb_jax.files import write_atomic
from azdb_jax.evaluation.gardner_crosscheck import crosscheck


def main(argv):
    del argv
    flags_ = flags.FLAGS
    try:
        with fairy_stockfish.FairyStockfish(flags_.fairy_stockfish) as engine:
            report = crosscheck(engine, positions=flags_.positions, seed=flags_.seed,
                                engine_games=flags_.engine_games, endgame_games=flags_.endgame_games,
                                engine_nodes=flags_.engine_nodes,
                                env=pgx.make("gardner_chess") if flags_.pgx_env else None)
    except (fairy_stockfish.FairyStockfishNotFound, fairy_stockfish.FairyStockfishError, ValueError) as error:
        sys.exit(f"gardner_crosscheck: {error}")
    if flags_.out:
        write_atomic(flags_.out, json.dumps(report, indent=2) + "\n")
    summary = {k: v for k, v in report.items() if k != "mismatches"}
    print(json.dumps(summary, indent=2))
    for mismatch in report["mismatches"][:10]:
        print("MISMATCH", json.dumps(mismatch))
    print(f"{report['positions']} positions, {report['unexplained_mismatches']} unexplained mismatches")
    if report["unexplained_mismatches"]:
        sys.exit(1)


if __name__ == "__main__":
    flags.DEFINE_integer("positions", 5000, "Positions to check (at least).")
    common_flags.define_seed("Seed of the games.")
    flags.DEFINE_float("engine_games", 0.3, "Fraction of games played by Fairy-Stockfish (the rest: random moves).")
    flags.DEFINE_float("endgame_games", 0.15, "Fraction of games with random moves from random endgames.")
    flags.DEFINE_integer("engine_nodes", 2000, "Fairy-Stockfish nodes per move in engine-played games.")
    flags.DEFINE_string("fairy_stockfish", None, "Fairy-Stockfish binary (default: $AZDB_FAIRY_STOCKFISH, PATH, "
                        "/usr/games/fairy-stockfish).")
    flags.DEFINE_bool("pgx_env", False, "Check pgx's own gardner_chess env instead of ours (its hashes differ).")
    common_flags.define_out("Write the JSON report here (default: print the summary only).")
    app.run(main)
