"""The UCI engine against Stockfish through python-chess, under a clock (the engine's acceptance run).

  python experiments/uci_match.py --checkpoint=runs/demo_chess --games=20 --base=60 --increment=1 \
      --out=eval/uci_vs_stockfish

Starts ``python -m azdb_jax.uci`` and Stockfish with ``chess.engine.SimpleEngine.popen_uci``,
plays each opening of ``azdb_jax.uci.gauntlet.OPENINGS`` with both colours under the
clock (the referee charges each side the wall time from ``go`` to ``bestmove``), and
reports W/D/L from the engine's side, how the games ended, and every fault: time
losses, illegal moves, crashes (``gauntlet.tally``). Stockfish plays at a low level:
``--stockfish_skill`` and at most ``--stockfish_nodes`` nodes a move (and its clock).
Writes ``match.json`` (summary and per-game rows) and ``games.pgn`` to ``--out``.
"""

import pathlib
import sys
import time
from typing import List

from absl import app, flags

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import cli  # noqa: E402


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    from azdb_jax.evaluation import reports, stockfish  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci import gauntlet  # pylint: disable=g-import-not-at-top

    values = flags.FLAGS
    if not values.checkpoint:
        raise ValueError("--checkpoint is required (a chess run directory[@step])")
    engine = [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={values.checkpoint}", f"--rule={values.rule}",
              f"--simulations={values.simulations}", f"--min_simulations={values.min_simulations}"]
    opponent = [stockfish.find_stockfish(values.stockfish)]
    start = time.time()

    def progress(g, record):
        print(f"game {g + 1}: {record.opening}, engine {'White' if record.engine_white else 'Black'}: "
              f"{record.result} ({record.termination}, {record.plies} plies, engine clock used "
              f"{record.engine_seconds:.1f} s, lowest {record.engine_min_clock:.1f} s)", flush=True)

    records = gauntlet.play_match(
        engine, opponent, games=values.games, base=values.base, increment=values.increment,
        opponent_options={"Skill Level": values.stockfish_skill, "Threads": 1},
        opponent_limit={"nodes": values.stockfish_nodes}, max_plies=values.max_plies, progress=progress)
    summary = gauntlet.tally(records)
    summary.update(checkpoint=values.checkpoint, rule=values.rule, simulations=values.simulations,
                   clock=f"{values.base:g}+{values.increment:g}", stockfish_skill=values.stockfish_skill,
                   stockfish_nodes=values.stockfish_nodes, wall_seconds=round(time.time() - start, 1))
    rows = [dict(game=g, opening=r.opening, engine_colour="white" if r.engine_white else "black", result=r.result,
                 termination=r.termination, faulty=r.faulty, plies=r.plies, engine_seconds=round(r.engine_seconds, 2),
                 engine_min_clock=round(r.engine_min_clock, 2)) for g, r in enumerate(records)]
    out = pathlib.Path(values.out)
    paths = reports.write_report(out / "match", summary, rows)
    reports.write_atomic(out / "games.pgn", "\n\n".join(r.pgn for r in records) + "\n")
    print(f"engine vs Stockfish (skill {values.stockfish_skill}, {values.stockfish_nodes} nodes), "
          f"{summary['clock']}: +{summary['wins']} ={summary['draws']} -{summary['losses']} in {summary['games']} games; "
          f"engine faults: {summary['engine_time']} time, {summary['engine_illegal']} illegal, "
          f"{summary['engine_crash']} crash; lowest engine clock {summary['engine_min_clock']:.1f} s")
    print("wrote " + ", ".join(str(p) for p in paths) + f", {out / 'games.pgn'}")


if __name__ == "__main__":
    flags.DEFINE_string("checkpoint", None, "Chess run directory[@step] for the engine.")
    flags.DEFINE_string("rule", "visit", "Engine Rule option (visit, value, lcb, gap, player, lookup).")
    flags.DEFINE_integer("simulations", 0, "Engine simulations per player (0: the run's eval_simulations).")
    flags.DEFINE_integer("min_simulations", 0, "Engine fastest level (0: eighths of --simulations down to <= 16).")
    flags.DEFINE_integer("games", 20, "Games (each opening with both colours).", lower_bound=1)
    flags.DEFINE_float("base", 60.0, "Clock: seconds per game and side.")
    flags.DEFINE_float("increment", 1.0, "Clock: seconds added per move.")
    flags.DEFINE_string("stockfish", None, "Stockfish binary (default: PATH, then /usr/games).")
    flags.DEFINE_integer("stockfish_skill", 0, "Stockfish Skill Level (0-20).")
    flags.DEFINE_integer("stockfish_nodes", 1000, "Stockfish nodes per move at most.")
    flags.DEFINE_integer("max_plies", 300, "Adjudicate a draw after this many plies.")
    flags.DEFINE_string("out", "eval/uci_match", "Output folder.")
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
