"""Plays a short batch of games through the game layer and prints them.

Uniformly random legal moves, one jitted program: a ``lax.scan`` over plies of a
``vmap``-ed batch of games. Chess games are printed as PGN (replayed and scored by
python-chess), the others as results and move lists.

  python experiments/play.py --game=chess --num_games=8
  python experiments/play.py --game=nim --heaps=1,3,5,7,9
"""

import sys
import time
from typing import Dict, List

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import distributed  # imports no JAX backend: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the import below creates the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import games as games_lib  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax.cli import common_flags  # noqa: E402  pylint: disable=g-import-not-at-top

_GAME = common_flags.define_game("Which game to play.", default="chess", choices=games_lib.IDS)
_NUM_GAMES = flags.DEFINE_integer("num_games", 8, "Games played in parallel.", lower_bound=1)
_MAX_PLIES = common_flags.define_max_plies("Plies simulated per game; games still running there are shown "
                                           "unfinished (chess ends by ply 512).", default=520)
_SEED = common_flags.define_seed("Random seed.")
_SHOW = flags.DEFINE_integer("show", 2, "How many games to print in full.", lower_bound=0)
_HEAPS = flags.DEFINE_list("heaps", "1,3,5,7,9", "Nim heaps.")


def play_random_games(env, key: jax.Array, num_games: int, max_plies: int) -> Dict[str, jax.Array]:
    """Random legal games; key is consumed. Returns per-game arrays (time axis second).

    Keys: ``first_player`` [B] (player id that moved first), ``actions`` [B, T],
    ``done`` [B, T] (game over after this ply), ``rewards`` [B, 2] final rewards.
    """

    def one_game(key):
        init_key, key = jax.random.split(key)
        state = env.init(init_key)

        def one_ply(state, key):
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(key, logits)
            was_done = state.terminated | state.truncated
            next_state = env.step(state, action)
            # pgx leaves a finished game untouched (and zeroes its rewards): keep the final ones.
            next_state = jax.tree.map(lambda a, b: jnp.where(was_done, a, b), state, next_state)
            return next_state, (action, next_state.terminated | next_state.truncated)

        final, (actions, done) = jax.lax.scan(one_ply, state, jax.random.split(key, max_plies))
        return dict(first_player=state.current_player, actions=actions, done=done, rewards=final.rewards)

    return jax.vmap(one_game)(jax.random.split(key, num_games))


def _game_length(done: np.ndarray) -> int:
    ended = np.flatnonzero(done)
    return int(ended[0]) + 1 if ended.size else len(done)


def _result(rewards: np.ndarray, first_player: int, finished: bool) -> str:
    """Result from the first mover's side, in PGN notation."""
    if not finished:
        return "*"
    first = rewards[first_player]
    return {1.0: "1-0", -1.0: "0-1"}.get(float(first), "1/2-1/2")


def _print_chess(games: Dict[str, np.ndarray], show: int) -> None:
    from azdb_jax.envs import chess_pgn  # pylint: disable=g-import-not-at-top

    for b in range(len(games["actions"])):
        length = _game_length(games["done"][b])
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
        length = _game_length(games["done"][b])
        finished = bool(games["done"][b].any())
        result = _result(games["rewards"][b], int(games["first_player"][b]), finished)
        line = f"game {b}: {length} plies, {result} (first mover's view)"
        if b < show:
            line += f"; actions {games['actions'][b, :length].tolist()}"
        print(line)


def main(argv: List[str]) -> None:
    del argv
    game = games_lib.get(_GAME.value)
    options = {"heaps": tuple(int(h) for h in _HEAPS.value)} if "nim_heaps" in game.config_fields else {}
    env = games_lib.make(game.id, **options)
    play = jax.jit(lambda key: play_random_games(env, key, _NUM_GAMES.value, _MAX_PLIES.value))
    start = time.perf_counter()
    games = jax.device_get(play(jax.random.PRNGKey(_SEED.value)))
    elapsed = time.perf_counter() - start
    plies = sum(_game_length(d) for d in games["done"])
    print(f"{_NUM_GAMES.value} random {_GAME.value} games, {plies} plies, {elapsed:.1f}s (compile included) "
          f"on {jax.devices()[0].platform}")
    if game.board is not None and game.board.pgn:  # python-chess replays its moves
        _print_chess(games, _SHOW.value)
    else:
        _print_other(_GAME.value, games, _SHOW.value)


if __name__ == "__main__":
    app.run(main)
