"""Positions as padded batches, and the compiled searches the puzzle solvers share.

``solvers.TeamSolver`` and ``members_solver.MembersSolver`` search chess and Gardner
positions in batches of a fixed size (``prepare_batch``: padded with the start position,
positions already over answered by their result, each with a key index folded from its
FEN), through programs compiled once per move generator, team size and control
(``search_program``), whose network parameters and ψ are arguments: the teams of one
configuration's seeds share them, and search as members of one program when their
parameters and ψ are stacked (``stacked_arrays``, ``search_alike``).
"""

import zlib
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import agent as agent_lib
from azdb_jax import games, planning
from azdb_jax.agent import Agent
from azdb_jax.envs.chess import DEFAULT_MAX_PIECES

Array = jax.Array


def position_index(board: chess.Board) -> int:
    """A 31-bit index of a position (CRC-32 of its FEN), folded into its search key."""
    return zlib.crc32(board.fen().encode()) & 0x7FFFFFFF


def game_over_value(board: chess.Board) -> Optional[float]:
    """The result for the side to move if the game is over (no search needed), else None.

    Uses the rules the search plays by: checkmate, stalemate, insufficient material and
    the fifty-move rule end the game (pgx ends it automatically, no claim). A
    ``GardnerBoard`` answers the same questions by the Gardner env's rules.
    """
    if board.is_checkmate():
        return -1.0
    if board.is_stalemate() or board.is_insufficient_material() or board.halfmove_clock >= 100:
        return 0.0
    return None


class Batch(NamedTuple):
    """A batch of positions ready to search: padded to the solver's batch size with the
    start position, positions already over replaced by it (and answered by their result)."""

    boards: List[chess.Board]  # the real positions (no padding)
    outcomes: List[Optional[float]]  # the result for the side to move of a finished position, else None
    max_pieces: int  # the move generator the batch needs (chess; Gardner's fixed one otherwise)
    states: Any  # the padded positions as env states [batch_size, ...]
    indices: Array  # [batch_size] uint32 each position's key index (``position_index``)


def prepare_batch(game, boards: Sequence[chess.Board], batch_size: int, env) -> Batch:
    """``boards`` (at most ``batch_size``) as a ``Batch`` for ``game`` (``board_interop``)."""
    boards = list(boards)
    start = game.new_board(None)
    outcomes = [game_over_value(board) for board in boards]
    padded = [board if outcome is None else start for board, outcome in zip(boards, outcomes)]
    padded += [start] * (batch_size - len(boards))
    max_pieces = max(game.required_max_pieces(padded), getattr(env, "max_pieces", DEFAULT_MAX_PIECES))
    states = game.states_from_boards(padded, max_pieces=max_pieces)
    indices = jnp.asarray([position_index(board) for board in padded], jnp.uint32)
    return Batch(boards, outcomes, max_pieces, states, indices)


def team_for_pieces(team: Agent, max_pieces: int) -> Agent:
    """``team`` on the chess move generator for ``max_pieces`` (itself when it already is)."""
    if max_pieces != getattr(team.env, "max_pieces", DEFAULT_MAX_PIECES):
        return team.with_env(games.board_game(team.env).make_env(max_pieces))
    return team


def search_program(programs: Dict[Any, Callable], team: Agent, *, slot: int, searched: Optional[int], copies: int,
                    max_pieces: int, members: bool) -> Callable:
    """The jitted search of one padded batch by ``team`` (the first ``searched`` latents,
    all for None; ``copies`` control copies of latent 0) on the ``max_pieces`` move
    generator: ``(params, psi, base_key, indices [B], states [B]) -> (players' TeamSearch
    [B, n, ...], copies' TeamSearch [B, k, ...] or None)``, each position searched alone
    with the key folded from ``base_key`` and its index. The network parameters and ψ are
    arguments, so teams that differ only in them share it (kept in ``programs`` under
    ``slot``, the team's place in its solver). ``members``: the same for several teams at
    once, their parameters and ψ stacked on a leading member axis and the searches
    [K, B, n, ...]."""
    key = ("members" if members else "search", slot, searched, copies, max_pieces)
    if key in programs:
        return programs[key]
    team = team_for_pieces(team, max_pieces)
    players = None if searched is None else jnp.arange(searched, dtype=jnp.int32)

    def one_position(params, psi, rng_key, state):
        # Searched alone (a batch of one) so that its randomness is its own key's.
        single = jax.tree.map(lambda x: x[None], state)
        team_key, control_key = jax.random.split(rng_key)
        out = team.with_arrays(params, psi).search(params, team_key, single, players=players)
        control = None
        if copies:
            # Latent 0 has λ_0 = 1: the control searches alike in both modes.
            control = planning.homogeneous_search(team.env, team.apply_fn, params, control_key, single,
                                                  num_copies=copies, config=team.search_config)
        return _squeeze(out), None if control is None else _squeeze(control)

    def search(params, psi, base_key, indices, states):
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(base_key, indices)
        return jax.vmap(one_position, in_axes=(None, None, 0, 0))(params, psi, keys, states)

    if members:
        search = jax.vmap(search, in_axes=(0, 0, None, None, None))
    programs[key] = jax.jit(search)
    return programs[key]


def stacked_arrays(teams: Sequence[Agent]) -> Tuple[Any, Any]:
    """The teams' parameters and ψ stacked on a member axis."""
    return (agent_lib.stack_members([t.params for t in teams]), agent_lib.stack_members([t.psi for t in teams]))


def search_alike(teams: Sequence[Agent]) -> bool:
    """Whether the teams differ only in their parameters' values and ψ (one configuration's
    seeds): one compiled search serves them all, as members of one program. The network is
    compared by its code and its parameters' shapes (a network function built apart for
    each seed is another object computing the same); the first team's is the program's."""
    first = teams[0]

    def how(team: Agent):
        shapes = jax.tree.map(lambda x: (np.shape(x), str(np.asarray(x).dtype)), (team.params, team.psi))
        network = getattr(team.apply_fn, "__code__", team.apply_fn)
        return (team.env.id, network, team.num_players, team.search_config, team.search_lambdas.tolist(),
                team.l0 if team.uses_intrinsic_terms else None, team.intrinsic_in_search, team.extrinsic_only,
                jax.tree.structure((team.params, team.psi)), shapes)

    return all(how(team) == how(first) for team in teams[1:])


def _squeeze(searched: planning.TeamSearch) -> planning.TeamSearch:
    """One position's search without its batch-of-one axis: fields [1, n, ...] -> [n, ...]."""
    return searched._replace(stats=jax.tree.map(lambda x: x[0], searched.stats),
                             network_value=searched.network_value[0],
                             most_visited_action=searched.most_visited_action[0],
                             lcb_action=searched.lcb_action[0])


__all__ = ["Batch", "prepare_batch", "position_index", "game_over_value", "team_for_pieces", "search_program",
           "stacked_arrays", "search_alike"]
