"""Where a player's pieces stand: piece occupancy of its self-play games, per colour played.

The expected features ψ_i = E[φ(s, a)] the diversity objective separates (paper §3, Eq. 7;
SPEC §1.2-1.3) are, on board games, piece-occupancy planes: φ is the board after a
player's move (12 piece planes, White's P N B R Q K then Black's, plus the 4 castling
rights on chess). The paper inspects them in Fig. 2, 18 and 19. Here a player plays
games against itself with its own search (its latent, λ_i and the intrinsic reward of
ψ, as ``Agent.latent_policy``; moves sampled ∝ visits for the first plies so that the
games differ), the games are replayed, and φ of every position reached by a move is
summed per game and per colour of the mover:

    occupancy_i[c] = Σ_games Σ_{moves of colour c} φ(s_{t+1}) / (number of such moves)

so ``occupancy_i[c][piece, square]`` is the share of positions (after a move as colour
``c``) with that piece on that square, and the sum of the 12 planes over the board is the
mean number of pieces on the board. ``psi`` pools both colours: the ψ of the method.
"""

import functools
from typing import Any, Callable, Dict, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import arena, features
from azdb_jax import games as games_lib  # `games` names played games here
from azdb_jax.agent import Agent

Array = jax.Array

PIECES = ("P", "N", "B", "R", "Q", "K", "p", "n", "b", "r", "q", "k")  # φ's plane order
COLOURS = ("white", "black")
CASTLING = ("W O-O", "W O-O-O", "B O-O", "B O-O-O")  # φ's last 4 entries on chess


class SelfPlayGames(NamedTuple):
    """A player's games against itself; ``actions[g, :length[g]]`` are game ``g``'s moves."""

    actions: np.ndarray  # [G, T] int pgx action ids, −1 after the end
    length: np.ndarray  # [G] int plies played
    result: np.ndarray  # [G] float +1 / 0 / −1 for White (0 when unfinished)
    finished: np.ndarray  # [G] bool the game ended within max_plies


class GameFeatures(NamedTuple):
    """φ summed over each game's positions, split by the colour that made the move."""

    sums: np.ndarray  # [G, 2, F] Σ φ(s_{t+1}) over moves by White (0) / Black (1)
    counts: np.ndarray  # [G, 2] number of such moves


def _board(env_id: str):
    board = games_lib.get(env_id).board
    if board is None:
        raise ValueError(f"piece occupancy needs a game with a board ({' or '.join(games_lib.BOARD_IDS)}), "
                         f"got {env_id!r}")
    return board


def board_size(env_id: str) -> int:
    """Squares per side of the game's board; ValueError for games without piece planes."""
    return _board(env_id).board_size


def colour_to_move(env_id: str, state: pgx.core.State) -> Array:
    """0 when White is to move, 1 when Black is (one state or a batch)."""
    return _board(env_id).colour_to_move(state)


# ------------------------------------------------------------------ playing and replaying


def selfplay_program(team: Agent, *, num_games: int, max_plies: int, sample_plies: int
                     ) -> Callable[[int, Array], SelfPlayGames]:
    """``(player, rng_key) -> SelfPlayGames``: ``num_games`` (even) games of a team player
    against itself from the start position, compiled once for every player of ``team``.

    Both sides search as the player does in evaluation (``Agent.latent_policy``: its
    latent, its λ_i and the intrinsic reward of the team's ψ, no root noise); the first
    ``sample_plies`` plies are sampled ∝ visits, then the most-visited move. The key is
    consumed.
    """
    if not isinstance(num_games, int) or num_games < 2 or num_games % 2:
        raise ValueError(f"num_games must be an even int >= 2, got {num_games!r}")
    agent = team.latent_policy(sample_plies=sample_plies)

    def run(player, rng_key):
        params = (team.params, player)
        return arena.play_games(team.env, agent, params, agent, params, rng_key, num_games=num_games,
                                max_plies=max_plies)

    program = jax.jit(run)

    def play(player: int, rng_key: Array) -> SelfPlayGames:
        if not 0 <= player < team.num_players:
            raise ValueError(f"player must be in [0, {team.num_players}), got {player!r}")
        games = jax.device_get(program(jnp.int32(player), rng_key))
        # The player sits on both sides: arena's A-first games have A as White from the start.
        white_result = np.where(np.asarray(games.a_first), 1.0, -1.0) * np.asarray(games.result, np.float64)
        return SelfPlayGames(actions=np.asarray(games.actions), length=np.asarray(games.length),
                             result=white_result, finished=np.asarray(games.finished))

    return play


def _replay_one(env: pgx.core.Env, start: pgx.core.State, actions: Array) -> GameFeatures:
    """φ sums of one game from ``start`` through ``actions`` [T] (−1: the game is over)."""
    feature_fn = features.feature_fn(env)
    num_features = features.num_features(env)

    def ply(carry, action):
        state, sums, counts = carry
        played = action >= 0
        colour = colour_to_move(env.id, state)
        stepped = env.step(state, jnp.maximum(action, 0))
        state = jax.tree.map(lambda new, old: jnp.where(played, new, old), stepped, state)
        weight = played.astype(jnp.float32)
        sums = sums.at[colour].add(weight * feature_fn(state))
        counts = counts.at[colour].add(played.astype(jnp.int32))
        return (state, sums, counts), None

    init = (start, jnp.zeros((2, num_features), jnp.float32), jnp.zeros((2,), jnp.int32))
    (_, sums, counts), _ = jax.lax.scan(ply, init, actions)
    return GameFeatures(sums=sums, counts=counts)


@functools.lru_cache(maxsize=4)
def _replay_program(env: pgx.core.Env):
    def run(actions):
        start = env.init(jax.random.PRNGKey(0))
        return jax.vmap(lambda a: _replay_one(env, start, a))(actions)

    return jax.jit(run)


def game_features(env: pgx.core.Env, actions) -> GameFeatures:
    """φ of every position reached by a move of the games ``actions`` [G, T] (from
    ``env.init``, −1 after each game's end), summed per game and per colour of the mover."""
    out = jax.device_get(_replay_program(env)(jnp.asarray(actions, jnp.int32)))
    return GameFeatures(sums=np.asarray(out.sums, np.float64), counts=np.asarray(out.counts, np.int64))


# ------------------------------------------------------------------ measures


def occupancy(sums, counts) -> np.ndarray:
    """Mean φ per colour, ``[2, F]``, from per-game sums [G, 2, F] and counts [G, 2] (NaN: no move)."""
    total, moves = np.asarray(sums).sum(axis=0), np.asarray(counts).sum(axis=0)
    return np.where(moves[:, None] > 0, total / np.maximum(moves, 1)[:, None], np.nan)


def pooled_psi(sums, counts) -> np.ndarray:
    """Mean φ over every move of the games, both colours pooled, ``[F]``: the player's ψ."""
    total, moves = np.asarray(sums).sum(axis=(0, 1)), np.asarray(counts).sum()
    return total / moves if moves else np.full(total.shape, np.nan)


def mean_pairwise_distance(psi) -> float:
    """Mean of ``||ψ_i − ψ_j||₂`` over pairs i < j of ``psi`` [n, F] (NaN for n < 2)."""
    psi = np.asarray(psi, np.float64)
    n = psi.shape[0]
    if n < 2:
        return float("nan")
    pairs = [np.linalg.norm(psi[i] - psi[j]) for i in range(n) for j in range(i + 1, n)]
    return float(np.mean(pairs))


def spread_with_stderr(per_player: Dict[int, GameFeatures], rng: np.random.Generator, *,
                       resamples: int = 200) -> Dict[str, Any]:
    """ψ spread (``mean_pairwise_distance`` of the players' pooled ψ) and its bootstrap
    standard error, the games of each player resampled with replacement ``resamples`` times.

    The spread of identical players is not 0 with finitely many games: the control's
    spread, computed the same way, is the yardstick.
    """
    players = sorted(per_player)
    psi = np.stack([pooled_psi(per_player[i].sums, per_player[i].counts) for i in players])
    draws = []
    for _ in range(resamples):
        sample = []
        for i in players:
            games = per_player[i]
            pick = rng.integers(0, games.counts.shape[0], games.counts.shape[0])
            sample.append(pooled_psi(games.sums[pick], games.counts[pick]))
        draws.append(mean_pairwise_distance(np.stack(sample)))
    return {"spread": mean_pairwise_distance(psi), "stderr": float(np.std(draws, ddof=1)) if len(players) > 1
            else float("nan")}


def split_features(env_id: str, vector) -> Dict[str, Optional[np.ndarray]]:
    """φ-shaped values ``[..., F]`` as ``planes`` ``[..., 12, size, size]`` (rank 1 first,
    file a first) and ``castling`` ``[..., 4]`` (None on Gardner chess, which has no castling)."""
    size = board_size(env_id)
    vector = np.asarray(vector)
    planes = vector[..., :12 * size * size].reshape(vector.shape[:-1] + (12, size, size))
    castling = vector[..., 12 * size * size:] if vector.shape[-1] > 12 * size * size else None
    return {"planes": planes, "castling": castling}


def start_features(env: pgx.core.Env) -> np.ndarray:
    """φ of the start position, ``[F]`` (where each piece starts)."""
    return np.asarray(features.feature_fn(env)(env.init(jax.random.PRNGKey(0))))


__all__ = ["PIECES", "COLOURS", "CASTLING", "SelfPlayGames", "GameFeatures", "board_size", "colour_to_move",
           "selfplay_program", "game_features", "occupancy", "pooled_psi", "mean_pairwise_distance",
           "spread_with_stderr", "split_features", "start_features"]
