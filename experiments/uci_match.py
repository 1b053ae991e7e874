"""The UCI engine against a reference engine through python-chess, under a clock (the engine's acceptance run).

  python experiments/uci_match.py --checkpoint=runs/demo_chess --games=20 --base=60 --increment=1 \
      --out=eval/uci_vs_stockfish
  python experiments/uci_match.py --checkpoint=runs/gardner_cpu --games=20 --base=30 --increment=0.3 \
      --out=eval/uci_vs_fairy_stockfish

Starts ``python -m azdb_jax.uci`` and the reference engine with
``chess.engine.SimpleEngine.popen_uci``: Stockfish for a chess checkpoint, Fairy-Stockfish
(``UCI_Variant gardner``) for a Gardner chess one. Plays each opening of
``azdb_jax.uci.gauntlet.openings_for(game)`` with both colours under the clock (the
referee charges each side the wall time from ``go`` to ``bestmove``), and reports W/D/L
from the engine's side, how the games ended, and every fault: time losses, illegal
moves, crashes (``gauntlet.tally``). The reference plays at a low level:
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
    from azdb_jax.evaluation import fairy_stockfish, reports, stockfish  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci import gauntlet  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci.main import checkpoint_variant, parse_checkpoint  # pylint: disable=g-import-not-at-top

    values = flags.FLAGS
    if not values.checkpoint:
        raise ValueError("--checkpoint is required (a chess or Gardner chess run directory[@step])")
    path, _ = parse_checkpoint(values.checkpoint)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"--checkpoint={values.checkpoint}: {path} is not a run directory (no config.json)")
    variant = checkpoint_variant(values.checkpoint)
    if variant is None:
        raise ValueError(f"--checkpoint={values.checkpoint}: the engine plays chess or Gardner chess runs")
    reference = "Fairy-Stockfish" if variant == "gardner" else "Stockfish"
    engine = [sys.executable, "-m", "azdb_jax.uci", f"--checkpoint={values.checkpoint}", f"--rule={values.rule}",
              f"--simulations={values.simulations}", f"--min_simulations={values.min_simulations}"]
    find = fairy_stockfish.find_fairy_stockfish if variant == "gardner" else stockfish.find_stockfish
    opponent = [find(values.stockfish)]
    start = time.time()

    def progress(g, record):
        print(f"game {g + 1}: {record.opening}, engine {'White' if record.engine_white else 'Black'}: "
              f"{record.result} ({record.termination}, {record.plies} plies, engine clock used "
              f"{record.engine_seconds:.1f} s, lowest {record.engine_min_clock:.1f} s)", flush=True)

    records = gauntlet.play_match(
        engine, opponent, games=values.games, base=values.base, increment=values.increment,
        opponent_options={"Skill Level": values.stockfish_skill, "Threads": 1},
        opponent_limit={"nodes": values.stockfish_nodes}, max_plies=values.max_plies, progress=progress,
        variant=variant)
    summary = gauntlet.tally(records)
    summary.update(checkpoint=values.checkpoint, variant=variant, reference=reference, rule=values.rule, simulations=values.simulations,
                   clock=f"{values.base:g}+{values.increment:g}", stockfish_skill=values.stockfish_skill,
                   stockfish_nodes=values.stockfish_nodes, wall_seconds=round(time.time() - start, 1))
    rows = [dict(game=g, opening=r.opening, engine_colour="white" if r.engine_white else "black", result=r.result,
                 termination=r.termination, faulty=r.faulty, plies=r.plies, engine_seconds=round(r.engine_seconds, 2),
                 engine_min_clock=round(r.engine_min_clock, 2)) for g, r in enumerate(records)]
    out = pathlib.Path(values.out)
    paths = reports.write_report(out / "match", summary, rows)
    reports.write_atomic(out / "games.pgn", "\n\n".join(r.pgn for r in records) + "\n")
    print(f"engine vs {reference} (skill {values.stockfish_skill}, {values.stockfish_nodes} nodes), "
          f"{summary['clock']}: +{summary['wins']} ={summary['draws']} -{summary['losses']} in {summary['games']} games; "
          f"engine faults: {summary['engine_time']} time, {summary['engine_illegal']} illegal, "
          f"{summary['engine_crash']} crash; lowest engine clock {summary['engine_min_clock']:.1f} s")
    print("wrote " + ", ".join(str(p) for p in paths) + f", {out / 'games.pgn'}")


if __name__ == "__main__":
    flags.DEFINE_string("checkpoint", None, "Chess or Gardner chess run directory[@step] for the engine.")
    flags.DEFINE_string("rule", "visit", "Engine Rule option (visit, value, lcb, gap, player, lookup).")
    flags.DEFINE_integer("simulations", 0, "Engine simulations per player (0: the run's eval_simulations).")
    flags.DEFINE_integer("min_simulations", 0, "Engine fastest level (0: eighths of --simulations down to <= 16).")
    flags.DEFINE_integer("games", 20, "Games (each opening with both colours).", lower_bound=1)
    flags.DEFINE_float("base", 60.0, "Clock: seconds per game and side.")
    flags.DEFINE_float("increment", 1.0, "Clock: seconds added per move.")
    flags.DEFINE_string("stockfish", None, "Reference engine binary: Stockfish on chess, Fairy-Stockfish on Gardner "
                        "(default: PATH, then /usr/games).")
    flags.DEFINE_integer("stockfish_skill", 0, "Reference engine's Skill Level (0-20).")
    flags.DEFINE_integer("stockfish_nodes", 1000, "Reference engine's nodes per move at most.")
    flags.DEFINE_integer("max_plies", 300, "Adjudicate a draw after this many plies.")
    flags.DEFINE_string("out", "eval/uci_match", "Output folder.")
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
