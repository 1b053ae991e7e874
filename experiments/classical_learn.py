"""Fit the classical evaluation's weights by least squares from engine games, then measure them.

1. ``--games`` games of the game's reference engine against itself (Stockfish on chess,
   Fairy-Stockfish on Gardner chess), each side at a node limit drawn from
   ``--engine_nodes`` (unequal sides make decisive games), from the 4-move book (chess) or
   ``--opening_plies`` random plies (Gardner); games stop at ``--max_plies`` (draws).
2. The quiet positions of 80% of the games fit the weights (``azdb_jax.classical.
   learning.fit_weights``); the other 20% measure how well each weight set predicts the
   outcome (R² of the rescaled evaluation).
3. ``alphabeta:depth=D:weights=<learned>`` plays ``alphabeta:depth=D`` (the textbook
   weights) from ``--starts`` start positions with both colours (``--depth``; 0 skips it).

Writes the weights (``<out>/weights_<game>.json``) and a report (``<out>/learn_<game>.json``).

    python experiments/classical_learn.py --game=gardner_chess --games=400 --out=eval/classical
"""

import json
import pathlib
import random
import sys
import time

from absl import app, flags

from azdb_jax import cli, referee
from azdb_jax import games as games_lib
from azdb_jax.cli import common_flags
from azdb_jax.classical import evaluation, learning, player as player_lib
from azdb_jax.classical import matches as host_matches
from azdb_jax.evaluation import matches
from azdb_jax.files import write_atomic

_GAME = common_flags.define_game("The game.", default="gardner_chess", choices=host_matches.GAMES)
_GAMES = common_flags.define_games("Engine games to learn from.", default=400, lower_bound=5)
_NODES = flags.DEFINE_list("engine_nodes", ["100", "300", "1000", "3000"], "Node limits the sides are drawn from.")
_OPENING_PLIES = flags.DEFINE_integer("opening_plies", 4, "Gardner: random plies before each game.", lower_bound=0)
_MAX_PLIES = common_flags.define_max_plies("Engine games stop here (a draw).", default=200, lower_bound=10)
_RIDGE = flags.DEFINE_float("ridge", 1.0, "Ridge penalty λ of the least-squares fit.", lower_bound=0.0)
_DEPTH = flags.DEFINE_integer("depth", 3, "Depth of the learned-vs-default match (0: no match).", lower_bound=0)
_STARTS = flags.DEFINE_integer("starts", 30, "Start positions of that match (both colours each).", lower_bound=1)
_SEED = common_flags.define_seed("Seed of openings and node limits.")
_OUT = common_flags.define_out("Output folder.", required=True)


def _engine(game: str, nodes: int):
    """The game's reference engine (Stockfish, Fairy-Stockfish) at ``nodes`` nodes a move."""
    from azdb_jax.evaluation import reference_engines  # pylint: disable=g-import-not-at-top
    return reference_engines.reference_engine(game).player(nodes=nodes)


def engine_games(game: str, count: int, node_limits, starts, max_plies: int, seed: int):
    """[(search positions along the game, White's result)] of engine-vs-engine games."""
    interop = games_lib.board_game(game)
    rng = random.Random(seed)
    engines = {n: _engine(game, n) for n in node_limits}
    games = []
    try:
        for index in range(count):
            board = interop.new_board(starts[index % len(starts)])
            sides = {True: engines[rng.choice(node_limits)], False: engines[rng.choice(node_limits)]}
            for engine in sides.values():
                engine.new_game()
            positions, current = [], player_lib.position_of(board)

            def record(_, move):
                positions.append(current.copy())
                current.push(current.from_chess(move))

            played = referee.play_host_game(board, sides, max_plies=max_plies, on_move=record)
            if played.faulty is not None:
                raise ValueError(f"engine game {index}: {played.termination}: {played.message}")
            games.append((positions, played.white_score))
            if (index + 1) % 20 == 0:
                print(f"{index + 1} games", flush=True)
    finally:
        for engine in engines.values():
            engine.close()
    return games


def main(argv):
    del argv
    game, out = _GAME.value, pathlib.Path(_OUT.value)
    out.mkdir(parents=True, exist_ok=True)
    node_limits = [int(n) for n in _NODES.value]
    # The openings: a book's first 10,000 positions (a game with an opening book), else one
    # position after random plies per game.
    count = 10_000 if games_lib.get(game).opening_book is not None else _GAMES.value
    openings = host_matches.host_starts(game, count, plies=_OPENING_PLIES.value, seed=_SEED.value + 1)
    random.Random(_SEED.value).shuffle(openings)
    start = time.time()
    games = engine_games(game, _GAMES.value, node_limits, openings, _MAX_PLIES.value, _SEED.value)
    split = int(0.8 * len(games))
    train_x, train_z = learning.dataset(games[:split])
    test_x, test_z = learning.dataset(games[split:])
    weights = learning.fit_weights(train_x, train_z, ridge=_RIDGE.value, name=f"learned_{game}")
    weights_path = out / f"weights_{game}.json"
    weights.save(weights_path)
    report = dict(command=" ".join(sys.argv), games=len(games), game_seconds=time.time() - start,
                  results={k: sum(1 for _, r in games if r == v) for k, v in (("white", 1.0), ("draw", 0.0),
                                                                              ("black", -1.0))},
                  train_positions=int(train_z.size), test_positions=int(test_z.size),
                  weights=weights.as_dict(), default_weights=evaluation.DEFAULT_WEIGHTS.as_dict(),
                  r2_test={"learned": learning.explained_variance(test_x, test_z, weights),
                           "default": learning.explained_variance(test_x, test_z, evaluation.DEFAULT_WEIGHTS)})
    print(json.dumps({k: report[k] for k in ("results", "weights", "r2_test")}, indent=1), flush=True)
    if _DEPTH.value:
        starts = host_matches.host_starts(game, _STARTS.value, plies=4, seed=0)
        learned = player_lib.player_from_spec(f"alphabeta:depth={_DEPTH.value}:weights={weights_path}",
                                              name=f"alphabeta:depth={_DEPTH.value}:learned")
        default = player_lib.player_from_spec(f"alphabeta:depth={_DEPTH.value}")
        match = host_matches.play_host_match(learned, default, starts, max_plies=300, names=(learned.name, default.name),
                                             env_id=game, progress=True)
        report["match"] = host_matches.match_record(match)
        print(matches.format_summary(matches.summarize_match(match)), flush=True)
    write_atomic(out / f"learn_{game}.json", json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
