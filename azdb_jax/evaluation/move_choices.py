"""How differently a team's players move: each player's choice on the same positions.

The behavioural diversity the method trains for (paper §3) shows in play as players who
pick different moves in the same position. Every player searches each position the way
the team searches in evaluation (``Agent.latent_policy``: its own latent, no noise) and
plays its most-visited move; the choices ``[n, P]`` are compared:

- ``distinct``: the number of different moves the ``n`` players choose, per position;
- ``unique_share[i]``: the share of positions where player ``i``'s move is chosen by no
  other player (0 for every player of identical copies; NaN for a team of one);
- ``disagreement[i, j]``: the share of positions where players ``i`` and ``j`` differ.

Positions come from ``random_positions`` (0..``max_plies`` uniformly random plies from
the start, none over), or any batched pgx ``State``.
"""

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core

from azdb_jax import agent as agent_lib
from azdb_jax.agent import Agent
from azdb_jax.policies import sample_uniform

Array = jax.Array


class MoveChoices(NamedTuple):
    """Each player's move on a set of positions and how much they differ."""

    moves: np.ndarray  # [n, P] action of player i on position p
    distinct: np.ndarray  # [P] number of different moves among the n players
    unique_share: np.ndarray  # [n] share of positions where i's move is nobody else's
    disagreement: np.ndarray  # [n, n] share of positions where i and j choose differently

    @property
    def distinct_mean(self) -> float:
        return float(self.distinct.mean())

    def as_dict(self) -> Dict[str, Any]:
        return dict(positions=int(self.moves.shape[1]), distinct_mean=self.distinct_mean,
                    share_positions_with_disagreement=float((self.distinct > 1).mean()),
                    unique_share=self.unique_share.tolist(), disagreement=self.disagreement.tolist())


def random_positions(env: pgx.core.Env, count: int, rng_key: Array, *, max_plies: int = 6) -> pgx.core.State:
    """``count`` positions [P], each after 0..``max_plies`` uniformly random plies from
    ``env.init`` (position ``p`` from ``fold_in(rng_key, p)``); a ply that would end the
    game is not played, so no position is over."""
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    if not isinstance(max_plies, int) or max_plies < 0:
        raise ValueError(f"max_plies must be an int >= 0, got {max_plies!r}")

    def one(key):
        init_key, plies_key, move_key = jax.random.split(key, 3)
        state = env.init(init_key)
        plies = jax.random.randint(plies_key, (), 0, max_plies + 1)

        def ply(t, state):
            action = sample_uniform(jax.random.fold_in(move_key, t), state.legal_action_mask[None])[0]
            stepped = env.step(state, action)
            keep = (t >= plies) | stepped.terminated | stepped.truncated
            return jax.tree.map(lambda a, b: jnp.where(keep, a, b), state, stepped)

        return jax.lax.fori_loop(0, max_plies, ply, state)

    keys = jax.vmap(lambda p: jax.random.fold_in(rng_key, p))(jnp.arange(count))
    return jax.jit(jax.vmap(one))(keys)


def player_moves(team: Agent, positions: pgx.core.State, rng_key: Array, *,
                 players: Optional[int] = None, programs: Optional[Dict[str, Callable]] = None) -> np.ndarray:
    """Moves ``[n, P]`` of the first ``players`` (default all) team players on ``positions``.

    Each player searches as in evaluation (``Agent.latent_policy``: one compiled program
    for every player) with the same key, so two players differ only through their latents.
    ``programs``: a dict holding that program, to share it with the teams of one
    configuration's other seeds (its parameters and ψ are the program's arguments).
    """
    n = team.num_players if players is None else players
    programs = {} if programs is None else programs
    if "latent" not in programs:
        programs["latent"] = jax.jit(team.psi_as_param(lambda agent: agent.latent_policy()))
    agent = programs["latent"]
    return np.stack([np.asarray(agent((team.psi, (team.params, jnp.int32(j))), rng_key, positions))
                     for j in range(n)])


def members_player_moves(teams: Sequence[Agent], positions: pgx.core.State, rng_key: Array, *,
                         players: Optional[int] = None, programs: Optional[Dict[str, Callable]] = None) -> np.ndarray:
    """``player_moves`` of several teams of one configuration (one game, network, team size,
    search; their own parameters and ψ) as members of one program: moves ``[K, n, P]``, each
    team's as ``player_moves`` gives them, every team's player ``j`` in one vmapped call
    (the first team's network and search are the program's)."""
    teams = list(teams)
    if not teams:
        raise ValueError("members_player_moves needs at least one team")
    n = teams[0].num_players if players is None else players
    programs = {} if programs is None else programs
    if "latent_members" not in programs:
        policy = teams[0].psi_as_param(lambda agent: agent.latent_policy())
        programs["latent_members"] = jax.jit(jax.vmap(policy, in_axes=((0, (0, None)), None, None)))
    agent = programs["latent_members"]
    psis = agent_lib.stack_members([t.psi for t in teams])
    params = agent_lib.stack_members([t.params for t in teams])
    return np.stack([np.asarray(agent((psis, (params, jnp.int32(j))), rng_key, positions)) for j in range(n)], axis=1)


def compare_moves(moves: np.ndarray) -> MoveChoices:
    """``MoveChoices`` of the moves ``[n, P]`` (any comparable ids, e.g. actions)."""
    moves = np.asarray(moves)
    if moves.ndim != 2 or moves.shape[1] < 1:
        raise ValueError(f"moves must be [n, P] with P >= 1, got shape {moves.shape}")
    n = moves.shape[0]
    distinct = np.array([len(set(moves[:, p].tolist())) for p in range(moves.shape[1])])
    differ = moves[:, None, :] != moves[None, :, :]  # [n, n, P]
    disagreement = differ.mean(axis=-1)
    if n > 1:
        others = ~np.eye(n, dtype=bool)
        unique_share = np.array([differ[i][others[i]].all(axis=0).mean() for i in range(n)])
    else:
        unique_share = np.full((1,), np.nan)
    return MoveChoices(moves=moves, distinct=distinct, unique_share=unique_share, disagreement=disagreement)


def team_move_choices(team: Agent, *, num_positions: int = 200, rng_key: Optional[Array] = None,
                      max_plies: int = 6, programs: Optional[Dict[str, Callable]] = None) -> MoveChoices:
    """Every player's move on ``num_positions`` random positions of the team's game,
    compared (``programs`` as ``player_moves`` takes it)."""
    rng_key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    position_key, search_key = jax.random.split(rng_key)
    positions = random_positions(team.env, num_positions, position_key, max_plies=max_plies)
    return compare_moves(player_moves(team, positions, search_key, programs=programs))


def members_move_choices(teams: Sequence[Agent], *, num_positions: int = 200, rng_key: Optional[Array] = None,
                         max_plies: int = 6, programs: Optional[Dict[str, Callable]] = None) -> List[MoveChoices]:
    """``team_move_choices`` of each of several teams of one configuration, their searches
    as members of one program (``members_player_moves``); the same positions for all."""
    rng_key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    position_key, search_key = jax.random.split(rng_key)
    positions = random_positions(teams[0].env, num_positions, position_key, max_plies=max_plies)
    return [compare_moves(moves) for moves in members_player_moves(teams, positions, search_key, programs=programs)]


__all__ = ["MoveChoices", "random_positions", "player_moves", "members_player_moves", "compare_moves",
           "team_move_choices", "members_move_choices"]
