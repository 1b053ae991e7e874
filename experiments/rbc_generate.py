"""Reconnaissance Blind Chess: games between the reconchess bots and TrackingPlayer, and training examples from them.

Two steps, either or both:

1. ``--matchups`` plays games (``azdb_jax.rbc.data.play_games``): ``FIRST:SECOND=GAMES``
   pairs of ``tracking`` (the library's ``TrackingPlayer``), ``random``, ``attacker``,
   ``trout`` (reconchess's bots; TroutBot needs Stockfish and STOCKFISH_EXECUTABLE),
   colours alternating, and writes ``<out>/games/<first>-<second>_<i>.json`` (reconchess
   GameHistory files) and ``<out>/games.json``.
2. ``--examples`` replays every GameHistory under ``<out>/games`` (or ``--histories``) from
   both players' points of view into training examples (``data.history_examples``: a
   synopsis at every sense and move decision with its targets) and writes
   ``<out>/examples/part_<k>.npz``, ``--games_per_part`` games a file.

    python experiments/rbc_generate.py --matchups=tracking:random=20,attacker:random=10 \\
        --seed=0 --out=/tmp/rbc_data --examples
"""

import dataclasses
import json
import pathlib
import time

from absl import app, flags

from azdb_jax import cli, files
from azdb_jax.cli import common_flags
from azdb_jax.rbc import data

_MATCHUPS = flags.DEFINE_string("matchups", None, "Games to play: FIRST:SECOND=GAMES, comma-separated, players "
                                f"from {', '.join(data.PLAYERS)} (default: none, only --examples).")
_SEED = common_flags.define_seed("Seed of the games (the bots' and TrackingPlayer's randomness) and of the "
                                 "examples' board samples.")
_OUT = common_flags.define_out("Output folder: games/, games.json, examples/.", required=True)
_SECONDS_PER_MOVE = flags.DEFINE_float("seconds_per_move", 0.2, "TrackingPlayer's time for scoring a move (> 0).")
_SECONDS_PER_PLAYER = flags.DEFINE_float("seconds_per_player", 900.0, "Each side's clock in seconds (> 0).")
_MAX_TURNS = flags.DEFINE_integer("max_turns", 60, "Full turns after which a game is a draw.", lower_bound=1)
_EXAMPLES = flags.DEFINE_bool("examples", False, "Build training examples from the histories.")
_HISTORIES = flags.DEFINE_string("histories", None, "Folder of GameHistory files to build examples from "
                                 "(default: <out>/games).")
_HORIZON = flags.DEFINE_integer("horizon", data.ExampleConfig.horizon, "SoonWin / SoonLose horizon in actions.",
                                lower_bound=1)
_SYNOPSIS_BOARDS = flags.DEFINE_integer("synopsis_boards", data.ExampleConfig.synopsis_boards,
                                        "Possible boards a synopsis reads at most (a uniform sample).", lower_bound=1)
_MAX_BOARDS = flags.DEFINE_integer("max_boards", data.ExampleConfig.max_boards, "The replaying tracker's cap on "
                                   "possible boards.", lower_bound=1)
_SCHEME = flags.DEFINE_enum("scheme", "player", list(data.HEADSET_SCHEMES), "Headset of an example: the player's "
                            "name, or the player's and the opponent's (matchup).")
_MULTIPLICITY = flags.DEFINE_integer("multiplicity", 1, "Times each game is extracted (different samples).",
                                     lower_bound=1)
_GAME_PREFIX = flags.DEFINE_string("game_prefix", "", "Prefix of the examples' game names (the held-out split "
                                   "hashes them; runs whose histories share file names need different prefixes).")
_GAMES_PER_PART = flags.DEFINE_integer("games_per_part", 25, "Games per examples file.", lower_bound=1)
for _name in ("seconds_per_move", "seconds_per_player"):
    flags.register_validator(_name, lambda value: value > 0, message=f"--{_name} must be > 0")


def main(argv):
    del argv
    out = pathlib.Path(_OUT.value)
    if not _MATCHUPS.value and not _EXAMPLES.value:
        raise ValueError("nothing to do: give --matchups (play games) and/or --examples (build examples)")
    if _MATCHUPS.value:
        matchups = data.parse_matchups(_MATCHUPS.value)
        start = time.perf_counter()

        def played(name, record):
            print(f"{name}: {record['white']} vs {record['black']}, winner {record['winner']} "
                  f"({record['win_reason']}), {record['turns']} turns, {record['seconds']:.1f} s", flush=True)

        records = data.play_games(matchups, out, seed=_SEED.value, seconds_per_move=_SECONDS_PER_MOVE.value,
                                  seconds_per_player=_SECONDS_PER_PLAYER.value, max_turns=_MAX_TURNS.value,
                                  progress=played)
        print(f"played {len(records)} games in {time.perf_counter() - start:.0f} s; wrote {out / 'games'}")
    if _EXAMPLES.value:
        config = data.ExampleConfig(horizon=_HORIZON.value, synopsis_boards=_SYNOPSIS_BOARDS.value,
                                    max_boards=_MAX_BOARDS.value, scheme=_SCHEME.value,
                                    multiplicity=_MULTIPLICITY.value, seed=_SEED.value)
        folder = pathlib.Path(_HISTORIES.value) if _HISTORIES.value else out / "games"
        paths = data.list_histories(folder)
        start = time.perf_counter()
        per = _GAMES_PER_PART.value
        total = 0
        for k in range(0, len(paths), per):
            examples = data.history_examples(paths[k:k + per], config, root=folder, prefix=_GAME_PREFIX.value)
            path = examples.save(out / "examples" / f"part_{k // per:03d}.npz")
            total += len(examples)
            print(f"{path}: {len(examples)} examples from {len(examples.games)} games "
                  f"({time.perf_counter() - start:.0f} s so far)", flush=True)
        files.write_atomic(out / "examples" / "config.json",
                           json.dumps({"histories": str(folder), **dataclasses.asdict(config)}, indent=1))
        print(f"{total} examples from {len(paths)} games in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
