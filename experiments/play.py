"""Plays a short batch of games through the game layer and prints them.

Uniformly random legal moves on both sides, played by the library's game loop
(``arena.play_games``: one jitted ``lax.scan`` over plies, games in pairs from the same
start with the colours swapped). Chess games are printed as PGN (replayed and scored by
python-chess), the others as results and move lists.

  python experiments/play.py --game=chess --num_games=8
  python experiments/play.py --game=nim --heaps=1,3,5,7,9
"""

import sys
import time
from typing import Dict, List

from absl import app, flags
import jax
import numpy as np

from azdb_jax import distributed  # imports no JAX backend: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the import below creates the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import arena, policies  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax import games as games_lib  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax.cli import common_flags  # noqa: E402  pylint: disable=g-import-not-at-top

_GAME = common_flags.define_game("Which game to play.", default="chess", choices=games_lib.IDS)
_NUM_GAMES = flags.DEFINE_integer("num_games", 8, "Games played in parallel (an odd number plays one more, "
                                  "unprinted: games come in pairs).", lower_bound=1)
_MAX_PLIES = common_flags.define_max_plies("Plies simulated per game; games still running there are shown "
                                           "unfinished (chess ends by ply 512).", default=520)
_SEED = common_flags.define_seed("Random seed.")
_SHOW = flags.DEFINE_integer("show", 2, "How many games to print in full.", lower_bound=0)
_HEAPS = flags.DEFINE_list("heaps", "1,3,5,7,9", "Nim heaps.")


def play_random_games(env, key: jax.Array, num_games: int, max_plies: int) -> Dict[str, np.ndarray]:
    """Random legal games (``arena.play_games`` of two uniformly random players); key is consumed.

    Returns per-game host arrays for the first ``num_games`` games: ``actions`` [B, T]
    (−1 after the end), ``length`` [B] plies, ``finished`` [B] and ``first_result`` [B],
    the result from the first mover's side (+1/0/−1; 0 when unfinished).
    """
    random = policies.uniform_random_policy()
    played = num_games + num_games % 2
    results = jax.device_get(jax.jit(lambda k: arena.play_games(env, random, None, random, None, k,
                                                                num_games=played, max_plies=max_plies))(key))
    first_result = np.where(results.a_first, results.result, -results.result)
    return dict(actions=np.asarray(results.actions)[:num_games], length=np.asarray(results.length)[:num_games],
                finished=np.asarray(results.finished)[:num_games], first_result=first_result[:num_games])


def _result(first_result: float, finished: bool) -> str:
    """Result from the first mover's side, in PGN notation."""
    if not finished:
        return "*"
    return {1.0: "1-0", -1.0: "0-1"}.get(float(first_result), "1/2-1/2")


def _print_chess(games: Dict[str, np.ndarray], show: int) -> None:
    from azdb_jax.envs import chess_pgn  # pylint: disable=g-import-not-at-top

    for b in range(len(games["actions"])):
        length = int(games["length"][b])
        actions = games["actions"][b, :length].tolist()
        final = chess_pgn.replay_actions(actions)
        result = chess_pgn.game_result(final, num_plies=length)
        termination = chess_pgn.termination_reason(final, num_plies=length)
        print(f"game {b}: {length} plies, {result} ({termination})")
        if b < show:
            print(chess_pgn.pgn_string(actions, white="random", black="random", event=f"azdb_jax random game {b}"),
                  end="\n\n")


def _print_other(game: str, games: Dict[str, np.ndarray], show: int) -> None:
    for b in range(len(games["actions"])):
        length = int(games["length"][b])
        result = _result(games["first_result"][b], bool(games["finished"][b]))
        line = f"game {b}: {length} plies, {result} (first mover's view)"
        if b < show:
            line += f"; actions {games['actions'][b, :length].tolist()}"
        print(line)


def main(argv: List[str]) -> None:
    del argv
    game = games_lib.get(_GAME.value)
    options = {"heaps": tuple(int(h) for h in _HEAPS.value)} if "nim_heaps" in game.config_fields else {}
    env = games_lib.make(game.id, **options)
    start = time.perf_counter()
    games = play_random_games(env, jax.random.PRNGKey(_SEED.value), _NUM_GAMES.value, _MAX_PLIES.value)
    elapsed = time.perf_counter() - start
    plies = int(games["length"].sum())
    print(f"{_NUM_GAMES.value} random {_GAME.value} games, {plies} plies, {elapsed:.1f}s (compile included) "
          f"on {jax.devices()[0].platform}")
    if game.board is not None and game.board.pgn:  # python-chess replays its moves
        _print_chess(games, _SHOW.value)
    else:
        _print_other(_GAME.value, games, _SHOW.value)


if __name__ == "__main__":
    app.run(main)
