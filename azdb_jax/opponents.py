"""Fixed opponents for evaluation, all behind one policy interface.

A *policy* is a pure function ``policy(params, rng_key, state) -> action`` over a
batched pgx ``State`` ``[B]``, returning ``[B]`` int32 legal actions; ``params`` is any
pytree (network parameters for the trained agent, ``None`` for fixed opponents) and
``rng_key`` is consumed (``azdb_jax.policies``). The arena (``azdb_jax.arena``) plays
any two policies against each other, so the trained team is measured against
opponents whose strength is known exactly: uniform random play, the Nim oracle (SPEC §2,
"Nim"), a perfect tic-tac-toe player, depth-limited minimax — each game's own set is in
its record (``Game.opponents``, ``azdb_jax.games``), read by ``opponents_for``.

Every policy breaks ties uniformly at random among its best actions, so repeated games
between deterministic-strength players still cover different lines.
"""

from typing import Dict, Optional

import jax
import pgx.core

from azdb_jax import games, policies
from azdb_jax import search as search_lib
from azdb_jax.policies import MAX_MINIMAX_LEAVES, Policy, uniform_random_policy

Array = jax.Array


def minimax_policy(env: pgx.core.Env, depth: int, *, max_leaves: int = MAX_MINIMAX_LEAVES,
                   num_moves: Optional[int] = None) -> Policy:
    """``policies.minimax_policy`` over ``num_moves`` legal moves a position, by default the
    game's search bound ``search.num_slots_for(env)`` (it covers every position seen in
    random play, see ``azdb_jax.search``)."""
    width = search_lib.num_slots_for(env) if num_moves is None else num_moves
    return policies.minimax_policy(env, depth, num_moves=width, max_leaves=max_leaves)


def classical_opponents(env: pgx.core.Env, names) -> Dict[str, Policy]:
    """The classical alpha-beta players among ``names`` (specs such as ``alphabeta:depth=3``,
    ``alphabeta:nodes=20000``; ``azdb_jax.classical.player``), as policies for ``env``
    (chess or Gardner chess). They search on the host through a callback at every ply
    (``azdb_jax.classical.policy``), so they slow a compiled match by their search time.
    Names that are not specs are left out; ValueError names a bad spec or a game without
    boards."""
    from azdb_jax.classical import player, policy  # pylint: disable=g-import-not-at-top

    return {name: policy.alphabeta_policy(env, name) for name in names if player.is_spec(name)}


def spec_opponents(env: pgx.core.Env, names) -> Dict[str, Policy]:
    """The opponents among ``names`` that are specs rather than names of the default set:
    the classical alpha-beta players (``classical_opponents``; chess, Gardner chess) and
    the game's own parameterised ones (``Game.opponent_spec``; connect four's solver,
    ``perfect[:random=R][,depth=D]``). Names that are neither are left out; ValueError
    names a bad spec, and the solver's ``SolverNotFound`` gives its install hint."""
    found = classical_opponents(env, names)
    spec = games.get(env.id).opponent_spec
    for name in names:
        if name not in found:
            policy = spec(env, name)
            if policy is not None:
                found[name] = policy
    return found


def named_opponents(env: pgx.core.Env, names) -> Dict[str, Policy]:
    """The game's default opponents (``opponents_for``) and those of ``names`` that are
    specs (``spec_opponents``), by name: what a name a user gives can stand for."""
    return dict(opponents_for(env.id, env), **spec_opponents(env, names))


def opponents_for(env_id: str, env: Optional[pgx.core.Env] = None) -> Dict[str, Policy]:
    """The sensible fixed opponents of a game, by name: "random" for every game, then the
    game's own (``Game.opponents``; e.g. nim: "oracle"; tic_tac_toe: "perfect",
    "minimax2"; connect_four, gardner_chess: "minimax2", depth-2 negamax over the legal
    moves: wins in one, avoids moves that let the opponent win in one).
    ``env`` defaults to ``azdb_jax.games.make(env_id)``; pass the env in use when it has
    options (Nim heaps).
    """
    if env is None:
        env = games.make(env_id)
    if env.id != env_id:
        raise ValueError(f"env is '{env.id}', not '{env_id}'")
    opponents: Dict[str, Policy] = {"random": uniform_random_policy()}
    opponents.update(games.get(env_id).opponents(env))
    return opponents
