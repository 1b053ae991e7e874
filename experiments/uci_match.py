"""The UCI engine in games through python-chess: against a reference engine under a clock
(the engine's acceptance run), or against itself at another time a move (strength from time).

  python experiments/uci_match.py --checkpoint=runs/demo_chess --games=40 --base=10 --increment=0.1 \
      --fresh_engine --stop_latency_trials=10 --out=eval/uci_vs_stockfish_10
  python experiments/uci_match.py --checkpoint=runs/gardner_cpu --games=20 --base=30 --increment=0.3 \
      --out=eval/uci_vs_fairy_stockfish                      # Gardner: Fairy-Stockfish
  python experiments/uci_match.py --checkpoint=runs/gardner_cpu --games=40 --movetime=1 \
      --opponent=engine --opponent_movetime=4 --out=eval/time_1_vs_4

Starts ``python -m azdb_jax.uci`` (with ``Threads`` = ``--threads``, one core by default,
so that both engines and other jobs share the machine predictably) and the opponent with
``chess.engine.SimpleEngine.popen_uci``: Stockfish for a chess checkpoint, Fairy-Stockfish
(``UCI_Variant gardner``) for a Gardner one, or (``--opponent=engine``) the engine itself,
from ``--opponent_checkpoint`` (default: the same). Plays each opening of
``azdb_jax.uci.gauntlet.openings_for(game)`` with both colours under the clock
(``--base`` + ``--increment``; the referee charges each side the wall time of its move)
or, with ``--movetime``, at a fixed time a move for each side, and reports W/D/L and
the Elo difference (with its standard error) from the engine's side, how the games
ended, every fault (time losses, illegal moves, crashes), and the engine's use of its
time: each move's time ÷ its allotment (the engine's clock rule without overhead, or
its movetime), the first move's, and the start-to-``readyok`` time of a fresh engine
(``--fresh_engine``: one process per game). ``--stop_latency_trials`` also times
``go infinite`` → ``stop`` → ``bestmove`` on the engine's pipes. Writes ``match.json``
(summary and per-game rows) and ``games.pgn`` to ``--out``.
"""

import logging
import pathlib
import statistics
import sys
import time
from typing import List

from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags


def engine_command(checkpoint: str, values) -> List[str]:
    return [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={checkpoint}", f"--rule={values.rule}",
            f"--hash={values.hash}", f"--move_overhead={values.move_overhead}", f"--threads={values.threads}",
            "--reuse" if values.reuse else "--noreuse"]


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])}")
    from azdb_jax import games  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import reference_engines, reports  # pylint: disable=g-import-not-at-top
    from azdb_jax.files import write_atomic  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci import gauntlet  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci.main import checkpoint_variant  # pylint: disable=g-import-not-at-top

    # python-chess logs every line an engine sends outside a command (the engine's
    # "info string" load report, its stderr) as a warning: the games' lines say enough.
    logging.getLogger("chess.engine").setLevel(logging.ERROR)
    values = flags.FLAGS
    if not values.checkpoint:
        raise ValueError("--checkpoint is required (a chess or Gardner chess run directory[@step])")
    path, _ = common_flags.split_checkpoint(values.checkpoint)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"--checkpoint={values.checkpoint}: {path} is not a run directory (no config.json)")
    variant = checkpoint_variant(values.checkpoint)
    if variant is None:
        raise ValueError(f"--checkpoint={values.checkpoint}: the engine plays chess or Gardner chess runs")
    if (values.movetime is None) != (values.opponent_movetime is None) and values.opponent == "engine":
        raise ValueError("--movetime and --opponent_movetime go together")
    clock = None if values.movetime is not None else (values.base, values.increment)
    engine = engine_command(values.checkpoint, values)
    engine_limit = {"time": values.movetime} if values.movetime is not None else None
    if values.opponent == "engine":
        reference = f"the engine ({values.opponent_checkpoint or values.checkpoint})"
        opponent = engine_command(values.opponent_checkpoint or values.checkpoint, values)
        opponent_options, opponent_limit = {}, ({"time": values.opponent_movetime} if clock is None else {})
    else:
        engine_of_game = reference_engines.reference_engine(games.by_uci_variant(variant))
        reference = engine_of_game.name
        opponent = [engine_of_game.find(values.stockfish)]
        opponent_options = {"Skill Level": values.stockfish_skill, "Threads": 1}
        opponent_limit = {"nodes": values.stockfish_nodes}
    start = time.time()

    def progress(g, record):
        shares = [spent / allotted for spent, allotted in record.engine_moves if allotted > 0]
        print(f"game {g + 1}: {record.opening}, engine {'White' if record.engine_white else 'Black'}: "
              f"{record.result} ({record.termination}, {record.plies} plies, engine time {record.engine_seconds:.1f} s, "
              f"mean share of its allotment {statistics.fmean(shares) if shares else float('nan'):.2f})", flush=True)

    records = gauntlet.play_match(
        engine, opponent, games=values.games, clock=clock, engine_limit=engine_limit,
        opponent_options=opponent_options, opponent_limit=opponent_limit, max_plies=values.max_plies,
        progress=progress, variant=variant, fresh_engine=values.fresh_engine, adjudicate=values.adjudicate)
    summary = gauntlet.tally(records)
    summary.update(checkpoint=values.checkpoint, variant=variant, reference=reference, rule=values.rule,
                   clock=f"{values.base:g}+{values.increment:g}" if clock else None, movetime=values.movetime,
                   opponent_movetime=values.opponent_movetime, threads=values.threads, hash=values.hash,
                   reuse=values.reuse, fresh_engine=values.fresh_engine, max_plies=values.max_plies,
                   adjudicate=values.adjudicate, wall_seconds=round(time.time() - start, 1))
    if values.opponent != "engine":
        summary.update(stockfish_skill=values.stockfish_skill, stockfish_nodes=values.stockfish_nodes)
    if values.stop_latency_trials:
        latencies = gauntlet.stop_latency(engine, trials=values.stop_latency_trials, variant=variant)
        summary.update(stop_latency_max=max(latencies), stop_latency_mean=statistics.fmean(latencies))
    rows = [dict(game=g, opening=r.opening, engine_colour="white" if r.engine_white else "black", result=r.result,
                 termination=r.termination, faulty=r.faulty, plies=r.plies, engine_seconds=round(r.engine_seconds, 2),
                 engine_min_clock=round(r.engine_min_clock, 2), engine_ready_seconds=r.engine_ready_seconds,
                 first_move_seconds=r.engine_moves[0][0] if r.engine_moves else None,
                 first_move_allotted=r.engine_moves[0][1] if r.engine_moves else None,
                 mean_share=(statistics.fmean(s / a for s, a in r.engine_moves if a > 0)
                             if any(a > 0 for _, a in r.engine_moves) else None),
                 opponent_mean_seconds=statistics.fmean(r.opponent_seconds) if r.opponent_seconds else None)
            for g, r in enumerate(records)]
    out = pathlib.Path(values.out)
    paths = reports.write_report(out / "match", summary, rows)
    write_atomic(out / "games.pgn", "\n\n".join(r.pgn for r in records) + "\n")
    control = summary["clock"] or (f"{values.movetime:g} s a move" + (
        f" vs {values.opponent_movetime:g} s" if values.opponent_movetime is not None else ""))
    print(f"engine vs {reference}, {control}: +{summary['wins']} ={summary['draws']} -{summary['losses']} in "
          f"{summary['games']} games (Elo {summary['elo_clipped']:+.0f} ± {summary['elo_clipped_stderr']:.0f}); engine faults: "
          f"{summary['engine_time']} time, {summary['engine_illegal']} illegal, {summary['engine_crash']} crash; "
          f"mean share of its allotment {summary['budget_share']:.2f} (largest {summary['budget_share_max']:.2f}, "
          f"first moves up to {summary['first_move_share_max']:.2f}); seconds a move: engine "
          f"{summary['engine_move_seconds']:.2f}, opponent {summary['opponent_move_seconds']:.2f}"
          + (f"; stop latency up to {summary['stop_latency_max'] * 1000:.0f} ms" if values.stop_latency_trials else ""))
    print("wrote " + ", ".join(str(p) for p in paths) + f", {out / 'games.pgn'}")


if __name__ == "__main__":
    common_flags.define_checkpoint("Chess or Gardner chess run directory[@step] for the engine.")
    flags.DEFINE_string("rule", "visit", "Engine Rule option (visit, value, lcb, gap, player, lookup).")
    flags.DEFINE_integer("threads", 1, "Engine Threads option (CPU cores).", lower_bound=1)
    flags.DEFINE_integer("hash", 256, "Engine Hash option (MB for the search trees).", lower_bound=16)
    flags.DEFINE_integer("move_overhead", 100, "Engine Move Overhead option (ms).", lower_bound=0)
    flags.DEFINE_bool("reuse", True, "Engine Reuse option (subtree reuse between moves).")
    flags.DEFINE_bool("fresh_engine", False, "Start the engine anew for every game (readyok before the clock starts).")
    common_flags.define_games("Games (each opening with both colours).", default=20)
    flags.DEFINE_float("base", 60.0, "Clock: seconds per game and side.")
    flags.DEFINE_float("increment", 1.0, "Clock: seconds added per move.")
    flags.DEFINE_float("movetime", None, "No clock: the engine's seconds a move.")
    flags.DEFINE_enum("opponent", "reference", ["reference", "engine"],
                      "Stockfish / Fairy-Stockfish, or the engine itself (--opponent_checkpoint).")
    flags.DEFINE_string("opponent_checkpoint", None, "The opponent engine's checkpoint (default: --checkpoint).")
    flags.DEFINE_float("opponent_movetime", None, "No clock: the opponent engine's seconds a move.")
    flags.DEFINE_string("stockfish", None, "Reference engine binary: Stockfish on chess, Fairy-Stockfish on Gardner "
                        "(default: PATH, then /usr/games).")
    flags.DEFINE_integer("stockfish_skill", 0, "Reference engine's Skill Level (0-20).")
    flags.DEFINE_integer("stockfish_nodes", 1000, "Reference engine's nodes per move at most.")
    common_flags.define_max_plies("Adjudicate the game after this many plies (--adjudicate).", default=300)
    flags.DEFINE_enum("adjudicate", "draw", ["draw", "material"],
                      "At --max_plies: a draw, or a win for the side 3 pawns of material ahead.")
    flags.DEFINE_integer("stop_latency_trials", 0, "Also time go infinite -> stop -> bestmove this many times.")
    common_flags.define_out("Output folder.", default="eval/uci_match")
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
