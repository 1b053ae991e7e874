"""Reconnaissance Blind Chess: the tracking player against a reconchess bot, both colours.

Plays ``--games`` games of ``azdb_jax.rbc.player.TrackingPlayer`` against RandomBot,
AttackerBot or TroutBot (``--opponent``; TroutBot needs Stockfish and the environment
variable STOCKFISH_EXECUTABLE, e.g. /usr/games/stockfish), White in even-numbered games,
and writes to ``--out``: ``report.json`` (W/D/L, score, Elo with its 95% interval, the
tracker's set sizes, cap hits, rebuilds and truth checks, seconds per game, one record
per game) and ``games/game_<i>.json`` (reconchess GameHistory files).

    python experiments/rbc_gauntlet.py --opponent=random --games=20 --out=eval/rbc_random
"""

import pathlib

from absl import app, flags

from azdb_jax import cli
from azdb_jax.cli import common_flags
from azdb_jax.rbc import gauntlet, tracking
from azdb_jax.rbc import player as player_lib

_OPPONENT = flags.DEFINE_enum("opponent", "random", list(gauntlet.OPPONENTS), "The reconchess bot to play.")
_GAMES = common_flags.define_games("Games to play (colours alternate, the player White first).", default=10)
_SEED = common_flags.define_seed("Seed of the games (the bots' and the player's randomness).")
_OUT = common_flags.define_out("Output folder (default: eval/rbc_gauntlet_<opponent>).")
_SECONDS_PER_MOVE = flags.DEFINE_float("seconds_per_move", 0.5, "The player's time for scoring a move (> 0; at "
                                       "most 1/30 of its clock).")
_SECONDS_PER_PLAYER = flags.DEFINE_float("seconds_per_player", 900.0, "Each side's clock in seconds (> 0; "
                                         "reconchess adds 5 s per turn).")
_MAX_BOARDS = flags.DEFINE_integer("max_boards", tracking.DEFAULT_MAX_BOARDS, "Cap on the tracked possible boards "
                                   "(0: no cap).", lower_bound=0)
_MAX_BOARDS_BEFORE_SENSE = flags.DEFINE_integer(
    "max_boards_before_sense", 0, "Cap between the opponent's move and the sense (0: "
    f"{tracking.BEFORE_SENSE_FACTOR} x --max_boards).", lower_bound=0)
_SENSE_SAMPLES = flags.DEFINE_integer("sense_samples", 5000, "Boards the sense choice reads at most.", lower_bound=1)
_MAX_TURNS = flags.DEFINE_integer("max_turns", None, "Full turns after which a game is a draw (default: none).",
                                  lower_bound=1)
for _name in ("seconds_per_move", "seconds_per_player"):
    flags.register_validator(_name, lambda value: value > 0, message=f"--{_name} must be > 0")


def main(argv):
    del argv
    out = pathlib.Path(_OUT.value or f"eval/rbc_gauntlet_{_OPPONENT.value}")

    def make_player(seed: int) -> player_lib.TrackingPlayer:
        return player_lib.TrackingPlayer(seconds_per_move=_SECONDS_PER_MOVE.value, max_boards=_MAX_BOARDS.value or None,
                                         max_boards_before_sense=_MAX_BOARDS_BEFORE_SENSE.value or None,
                                         sense_samples=_SENSE_SAMPLES.value, seed=seed)

    def progress(index, record):
        tracker = record.tracker
        print(f"game {index}: {record.player_color} {'+=-'[1 - record.result]} {record.win_reason} "
              f"after {record.turns} turns, {record.seconds:.1f} s; boards max {tracker['max_size']} mean "
              f"{tracker['mean_size']:.0f} (before senses: max {tracker['max_pairs_before_sense']} pairs), "
              f"cap hits {tracker['cap_hits']}, rebuilds {tracker['rebuilds']}, "
              f"truth misses {record.truth_misses}/{record.truth_checks}", flush=True)

    report = gauntlet.run_gauntlet(make_player, _OPPONENT.value, _GAMES.value, seed=_SEED.value, out=out,
                                   seconds_per_player=_SECONDS_PER_PLAYER.value, max_turns=_MAX_TURNS.value,
                                   progress=progress)
    low, high = report["elo_95"]
    tracker = report["tracker"]
    print(f"TrackingPlayer vs {_OPPONENT.value}: +{report['wins']} ={report['draws']} -{report['losses']} "
          f"(score {report['score']:.3f}, Elo 95% [{low:+.0f}, {high:+.0f}]"
          f"{' clipped' if report['saturated'] else ''}), {report['mean_seconds_per_game']:.1f} s per game; boards "
          f"mean {tracker['mean_size']:.0f} max {tracker['max_size']} (before senses: mean "
          f"{tracker['mean_pairs_before_sense']:.0f} max {tracker['max_pairs_before_sense']} pairs), cap hits "
          f"{tracker['cap_hits']} "
          f"({tracker['games_with_cap_hit']} games), rebuilds {tracker['rebuilds']}, truth misses "
          f"{tracker['truth_misses']}/{tracker['truth_checks']}")
    print(f"wrote {out / 'report.json'} and {report['games']} game histories in {out / 'games'}")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
