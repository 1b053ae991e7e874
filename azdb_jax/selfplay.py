"""Team self-play: one jitted program per iteration, a ``lax.scan`` over plies.

A batch of games runs side by side. Each game has a White player and a Black player of
the team, drawn when the game starts from an interaction graph (``azdb_jax.matchmaking``;
SPEC §1.11): player i, its colour, then its opponent j ~ Σ_colour[i]. The identity
graph (``matchmaking.selfplay``) is plain self-play, ``j = i``. At every ply each position is searched
by its mover's player (latent and ``λ`` of that player), the move is sampled in
proportion to ``N^(1/τ)`` (``sample_temperature``; τ = 1: the visits) for the first
``sample_plies`` plies of a game and is the most-visited move afterwards, and a finished game is replaced by a new start position
(optionally drawn from a start-position sampler, SPEC §1.12).

Games carry over from one iteration to the next; each iteration returns the ``[T, B]``
transitions it played.

Every game slot draws its randomness (root noise, move sampling, its next start position
and players) from a key of its own: given ``[B]`` keys, one per slot, a game depends on
its slot's key and nothing else in the batch, so a device that plays a share of the
slots plays exactly the games one device playing all of them would, and the program
exchanges nothing between devices (``azdb_jax.trainer``).
"""

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import pgx.core

from azdb_jax import matchmaking
from azdb_jax import search as search_lib
from azdb_jax import tree_search
from azdb_jax.envs.autoreset import InitFn, reset_where_done

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
    """Shape of one self-play iteration."""

    num_games: int = 64  # B, games played side by side
    num_plies: int = 32  # T, plies per iteration (lax.scan length)
    sample_plies: int = 30  # k: moves ∝ visits for the first k plies of a game (AZ: 30)
    # τ of that sampling: moves ∝ N^(1/τ) (AlphaZero's temperature; 1: ∝ visits, larger:
    # flatter over the visited moves). Table 1's exploration row uses τ = 10 for k = 15.
    # Gumbel self-play plays its sequential-halving action, unless τ ≠ 1: then it too
    # samples ∝ N^(1/τ) for the first k plies.
    sample_temperature: float = 1.0
    # Playout cap randomisation (Wu 2019, KataGo §3.1): each ply searches with the full
    # budget (search.num_simulations) with probability full_search_prob, else with
    # fast_simulations and no root noise; only the full searches' positions are trained on.
    # One draw per ply for the whole window's games (a batch searches with one budget).
    # 1 (the default): every search is full.
    full_search_prob: float = 1.0
    fast_simulations: int = 0

    def __post_init__(self):
        for name in ("num_games", "num_plies"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"selfplay.{name} must be an int >= 1, got {value!r}")
        if not (isinstance(self.sample_plies, int) and self.sample_plies >= 0):
            raise ValueError(f"selfplay.sample_plies must be an int >= 0, got {self.sample_plies!r}")
        if not (isinstance(self.sample_temperature, (int, float)) and self.sample_temperature > 0):
            raise ValueError(f"selfplay.sample_temperature must be > 0, got {self.sample_temperature!r}")
        if not (isinstance(self.full_search_prob, (int, float)) and not isinstance(self.full_search_prob, bool)
                and 0.0 < self.full_search_prob <= 1.0):
            raise ValueError(f"selfplay.full_search_prob must be in (0, 1], got {self.full_search_prob!r}")
        if isinstance(self.fast_simulations, bool) or not isinstance(self.fast_simulations, int) or \
                self.fast_simulations < 0:
            raise ValueError(f"selfplay.fast_simulations must be an int >= 0, got {self.fast_simulations!r}")
        if (self.full_search_prob < 1.0) != (self.fast_simulations > 0):
            raise ValueError("selfplay.fast_simulations (> 0) goes with full_search_prob < 1 and only with it, got "
                             f"{self.fast_simulations!r} and {self.full_search_prob!r}")


class SelfPlayState(NamedTuple):
    """Games in progress, carried across iterations."""

    env_state: pgx.core.State  # [B, ...] positions to move from (never terminal)
    matchup: matchmaking.Matchup  # [B] who plays each game
    first_seat: Array  # [B] pgx player id of the game's first mover ("White")
    ply: Array  # [B] plies played in the current game


class Transition(NamedTuple):
    """One searched move of one game; self-play returns them stacked [T, B, ...]."""

    observation: Array  # [..obs] position before the move, mover's view
    legal_action_mask: Array  # [A]
    policy: Array  # [A] search policy (training target)
    action: Array  # [] move played
    player: Array  # [] team player (latent) who moved
    mover: Array  # [] pgx player id (seat) who moved
    is_white: Array  # [] the mover had the first move
    white_player: Array  # [] team player with the first move in this game
    black_player: Array  # [] team player with the second move
    train_mask: Array  # [] the mover is the game's learner (exploiter mask)
    search_value: Array  # [] root value after search, mover's side
    search_value_intrinsic: Array  # [] the part of search_value the intrinsic terms make up
    value_d: Array  # [] network intrinsic value at the root (z_d bootstrap)
    features: Array  # [F] φ of the position after the move
    reward_d: Array  # [] the mover's intrinsic reward r_d(s, a) as the search saw it (0 without diversity)
    rewards: Array  # [2] rewards by pgx player id after the move
    terminated: Array  # [] the move ended the game (terminated or truncated)


class _Searched(NamedTuple):
    """What a self-play ply keeps of its search (``search.SearchOutput``'s fields): the same
    shapes for a full and a fast search, whose trees differ in size."""

    action: Array
    policy: Array
    visits: Array
    search_value: Array
    search_value_intrinsic: Array
    value_d: Array


def _seat_players(matchup: matchmaking.Matchup, first_seat: Array) -> Array:
    """[B, 2] team player sitting in pgx seat 0 and seat 1 of each game."""
    white_in_seat0 = first_seat == 0
    seat0 = jnp.where(white_in_seat0, matchup.white_id, matchup.black_id)
    seat1 = jnp.where(white_in_seat0, matchup.black_id, matchup.white_id)
    return jnp.stack([seat0, seat1], axis=-1)


def init_selfplay(
    env: pgx.core.Env,
    rng_key: Array,
    *,
    num_games: int,
    graph: matchmaking.InteractionGraph,
    init_fn: Optional[InitFn] = None,
) -> SelfPlayState:
    """Starts ``num_games`` games with players drawn from ``graph``; the key is consumed
    (one key, or ``[num_games]`` keys, one per game slot)."""
    init_fn = env.init if init_fn is None else init_fn
    init_key, match_key = tree_search.split_rows(tree_search.row_keys(rng_key, num_games))
    env_state = jax.vmap(init_fn)(init_key)
    return SelfPlayState(
        env_state=env_state,
        matchup=_matchups(graph, match_key),
        first_seat=env_state.current_player,
        ply=jnp.zeros((num_games,), jnp.int32),
    )


def _matchups(graph: matchmaking.InteractionGraph, keys: Array) -> matchmaking.Matchup:
    """One matchup per key ``[B]`` (``matchmaking.sample_matchup``)."""
    return jax.vmap(matchmaking.sample_matchup, in_axes=(None, 0))(graph, keys)


def _choose_action(rng_key: Array, out: "_Searched", ply: Array, *, config: SelfPlayConfig,
                   algorithm: str) -> Array:
    """PUCT: sampling ∝ N^(1/τ) for the first k plies, then the most-visited move. Gumbel:
    sequential halving's action, except that a temperature τ ≠ 1 samples ∝ N^(1/τ) over the
    root's visits for the first k plies (Table 1's exploration row on a Gumbel preset).
    ``rng_key``: one key, or ``[B]`` keys, one per game."""
    if algorithm == "gumbel" and config.sample_temperature == 1.0:
        return out.action  # sequential halving with Gumbel noise already explores
    visits = out.visits
    logits = jnp.log(visits.astype(jnp.float32))
    if config.sample_temperature != 1.0:  # τ = 1 keeps the plain visit-proportional draw, bit for bit
        logits = logits / config.sample_temperature
    sampled = jax.vmap(jax.random.categorical)(tree_search.row_keys(rng_key, logits.shape[0]), logits)
    later = out.action if algorithm == "gumbel" else jnp.argmax(visits, axis=-1)
    return jnp.where(ply < config.sample_plies, sampled, later)


def selfplay_iteration(
    env: pgx.core.Env,
    apply_fn: search_lib.ApplyFn,
    network_params: Any,
    rng_key: Array,
    state: SelfPlayState,
    *,
    lambdas: Array,
    config: SelfPlayConfig,
    search_config: search_lib.SearchConfig,
    graph: matchmaking.InteractionGraph,
    feature_fn: Callable[[pgx.core.State], Array],
    init_fn: Optional[InitFn] = None,
    intrinsic_reward_fn: Optional[search_lib.IntrinsicRewardFn] = None,
    hook_params: Any = None,
    intrinsic_in_search: bool = True,
    full_search: Optional[Array] = None,
) -> tuple[SelfPlayState, Transition]:
    """Plays ``config.num_plies`` plies of every game; the key is consumed.

    Args:
      env, apply_fn, network_params: the game and the team network.
      rng_key: consumed: one key, or ``[B]`` keys, one per game slot (each game then
        depends on its slot's key only).
      state: the games in progress (``init_selfplay``).
      lambdas: [n] each player's λ_i (all ones for AlphaZero).
      config, search_config: iteration and search settings.
      graph: the interaction graph new games draw their players from.
      feature_fn: φ of the env (``azdb_jax.features.feature_fn``).
      init_fn: start-position sampler for new games (``env.init`` by default).
      intrinsic_reward_fn, hook_params: the diversity reward ``r_d`` (optional): recorded
        per transition and, if ``intrinsic_in_search``, mixed into the search by λ_i.
      full_search: [T] bool, the plies that search with ``search_config``'s budget; the
        others search with ``config.fast_simulations`` and no root noise, and their
        transitions are not trained on (``train_mask`` False). None: every ply is full.

    Returns:
      The games in progress after the iteration, and the transitions [T, B, ...].
    """
    init_fn = env.init if init_fn is None else init_fn
    num_games = state.ply.shape[0]
    in_search = intrinsic_reward_fn is not None and intrinsic_in_search

    def searched(search_key, env_state, player, opponent, *, fast: bool) -> _Searched:
        budget = search_config if not fast else dataclasses.replace(search_config,
                                                                      num_simulations=config.fast_simulations)
        out = search_lib.run_search(
            env, apply_fn, network_params, search_key, env_state, player, lambdas[player],
            config=budget, add_noise=not fast, feature_fn=feature_fn if in_search else None,
            intrinsic_reward_fn=intrinsic_reward_fn if in_search else None, hook_params=hook_params,
            opponent=opponent)
        return _Searched(*(getattr(out, name) for name in _Searched._fields))

    def one_ply(state: SelfPlayState, xs):
        key, full = xs if full_search is not None else (xs, None)
        search_key, action_key, reset_key, match_key = tree_search.split_rows(key, 4)  # [B] each
        env_state = state.env_state
        mover = env_state.current_player
        seat_players = _seat_players(state.matchup, state.first_seat)
        player = jnp.take_along_axis(seat_players, mover[:, None], axis=1)[:, 0]
        opponent = jnp.take_along_axis(seat_players, 1 - mover[:, None], axis=1)[:, 0]
        operands = (search_key, env_state, player, opponent)
        if full is None:
            out = searched(*operands, fast=False)
        else:
            out = jax.lax.cond(full, functools.partial(searched, fast=False), functools.partial(searched, fast=True),
                               *operands)
        action = _choose_action(action_key, out, state.ply, config=config, algorithm=search_config.algorithm)
        next_state = jax.vmap(env.step)(env_state, action)
        done = next_state.terminated | next_state.truncated
        trainable = matchmaking.exploiter_mask(player, state.matchup.learner_id)
        if full is not None:  # a fast search's move is played, not learned from
            trainable = trainable & full
        is_white = mover == state.first_seat
        phi = jax.vmap(feature_fn)(next_state)
        if intrinsic_reward_fn is None:
            reward_d = jnp.zeros(num_games, jnp.float32)
        else:
            reward_d = jax.vmap(intrinsic_reward_fn, in_axes=(None, 0, 0))(hook_params, phi, player)
        transition = Transition(
            observation=env_state.observation,
            legal_action_mask=env_state.legal_action_mask,
            policy=out.policy,
            action=action,
            player=player,
            mover=mover,
            is_white=is_white,
            white_player=state.matchup.white_id,
            black_player=state.matchup.black_id,
            train_mask=trainable,
            search_value=out.search_value,
            search_value_intrinsic=out.search_value_intrinsic,
            value_d=out.value_d,
            features=phi,
            reward_d=reward_d,
            rewards=next_state.rewards,
            terminated=done,
        )
        restarted = jax.vmap(lambda s, k: reset_where_done(env, s, k, init_fn=init_fn))(next_state, reset_key)
        new_matchup = _matchups(graph, match_key)
        state = SelfPlayState(
            env_state=restarted,
            matchup=jax.tree.map(lambda new, old: jnp.where(done, new, old), new_matchup, state.matchup),
            first_seat=jnp.where(done, restarted.current_player, state.first_seat),
            ply=jnp.where(done, 0, state.ply + 1),
        )
        return state, transition

    game_keys = tree_search.row_keys(rng_key, num_games)
    ply_keys = jax.vmap(lambda key: jax.random.split(key, config.num_plies), out_axes=1)(game_keys)  # [T, B]
    if full_search is None:
        return jax.lax.scan(one_ply, state, ply_keys)
    if full_search.shape != (config.num_plies,):
        raise ValueError(f"selfplay: full_search must be [{config.num_plies}] (one per ply), got {full_search.shape}")
    return jax.lax.scan(one_ply, state, (ply_keys, jnp.asarray(full_search, jnp.bool_)))
