"""Matches between agents: book starts, both colours, several seeds; W/D/L and Elo.

SPEC §2 "Matches": two agents play every start position twice, once with each colour,
for every seed; a game scores W = 1, D = ½, L = 0 for agent A, and the Elo difference
−400·log10(1/p − 1) of the score p comes with its standard error
(``azdb_jax.ratings.elo_difference``). A team counts as one agent through a selection
rule (``Agent.rule_policy``, paper §3, Eq. 9); a single latent plays through ``Agent.player_policy``.

Games are played by ``azdb_jax.arena.play_games`` in chunks of ``batch_pairs`` pairs,
so memory stays bounded however long the match. Pair (seed ``s``, start ``i``) plays
with the key ``fold_in(fold_in(rng_key, s), i)`` and nothing else, so a game's course
does not depend on the chunking, on the other games, or on which *player* of a team
sits on A's side. That is what makes the opening-specialisation lookup of the paper's
Appendix C.5 exact and cheap (``azdb_jax.evaluation.specialisation``).

Against a UCI engine (chess with Stockfish, Gardner chess with Fairy-Stockfish)
``play_engine_match`` plays the same way: the engine is a host player made an arena
policy (``referee.host_policy``), answering through a host callback on boards
(``chess.Board`` or ``GardnerBoard``, through ``azdb_jax.envs.board_interop``) that
replay each game's moves. Games are written out (PGN for chess, a text record
otherwise) by ``azdb_jax.evaluation.game_records``. Every match's W/D/L, score and Elo
are ``arena.tally``'s.
"""

import dataclasses
import functools
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pgx.core
import tqdm

from azdb_jax import arena, games, referee
from azdb_jax.envs import chess_interop
from azdb_jax.policies import Policy, sample_uniform

Array = jax.Array

# Games whose matches are written as PGN, and games whose matches have White and Black
# (the games with boards: ``Game.board``).
CHESS_IDS = tuple(game.id for game in games.REGISTRY if game.board is not None and game.board.pgn)
COLOUR_IDS = games.BOARD_IDS


# ------------------------------------------------------------------ results


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """Every game of a match, from agent A's side; games ``[M]`` ordered by (seed, start, A's turn).

    A game's moves are ``actions[g, :length[g]]`` (pgx action ids, played alternately from
    the start position ``start_index[g]``; the first by A when ``a_first[g]``).
    """

    env_id: str
    names: Tuple[str, str]  # (A, B)
    start_index: np.ndarray  # [M] int index into the match's start positions
    seed: np.ndarray  # [M] int
    a_first: np.ndarray  # [M] bool A made the first move
    a_colour: np.ndarray  # [M] str "white"/"black" (chess) or "first"/"second"
    result: np.ndarray  # [M] float +1 / 0 / −1 for A; 0 when unfinished
    finished: np.ndarray  # [M] bool the game ended within max_plies
    length: np.ndarray  # [M] int plies played
    actions: np.ndarray  # [M, T] int moves in order, −1 after the end
    a_player: Optional[np.ndarray] = None  # [M] int team player on A's side (lookup games), else None
    # [M] bool reached max_plies and was scored by an adjudicator (its result in ``result``);
    # None when the match had no adjudicator
    adjudicated: Optional[np.ndarray] = None

    @property
    def num_games(self) -> int:
        return int(self.result.shape[0])

    @property
    def decided(self) -> np.ndarray:
        """[M] bool games with a result: ended by the rules or adjudicated at the ply cap."""
        return self.finished if self.adjudicated is None else self.finished | self.adjudicated

    def select(self, mask: np.ndarray) -> "MatchResult":
        """The games where ``mask`` [M] is True."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return MatchResult(**{k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in fields.items()})




def summarize_match(match: MatchResult) -> Dict[str, Any]:
    """The match summary: names, the tally of ``arena.tally`` overall and by A's colour, mean length."""
    summary = {"a": match.names[0], "b": match.names[1], "env": match.env_id,
               "seeds": sorted({int(s) for s in match.seed}), "starts": int(len(set(match.start_index.tolist())))}
    decided = match.decided
    summary.update(arena.tally(match.result, decided))
    if match.adjudicated is not None:
        summary["adjudicated"] = int(match.adjudicated.sum())
    summary["mean_length"] = float(match.length.mean()) if match.num_games else float("nan")
    summary["by_colour"] = {str(c): arena.tally(match.result[match.a_colour == c], decided[match.a_colour == c])
                            for c in sorted(set(match.a_colour.tolist()))}
    return summary


def format_summary(summary: Dict[str, Any]) -> str:
    """One line for people: ``A vs B: +W =D -L, score, Elo ± SE (n unfinished)``."""
    elo = f"Elo {summary['elo']:+.1f} ± {summary['elo_stderr']:.1f}"
    if np.isinf(summary["elo"]):
        elo += f" (clipped bound {summary['elo_clipped']:+.1f} ± {summary['elo_clipped_stderr']:.1f})"
    return (f"{summary['a']} vs {summary['b']}: +{summary['wins']} ={summary['draws']} -{summary['losses']} "
            f"(score {summary['score']:.3f}, {elo}, {summary['unfinished']} unfinished of {summary['games']})")


def match_rows(match: MatchResult) -> List[Dict[str, Any]]:
    """One dict per game for the CSV report (moves as space-separated action ids); with an
    adjudicator, ``adjudicated`` says which results it gave."""
    outcome = {1.0: "win", 0.0: "draw", -1.0: "loss"}
    decided = match.decided
    rows = []
    for g in range(match.num_games):
        row = {"game": g, "start_index": int(match.start_index[g]), "seed": int(match.seed[g]),
               "a_colour": str(match.a_colour[g]), "a_first": bool(match.a_first[g]),
               "result": outcome[float(match.result[g])] if decided[g] else "unfinished",
               "plies": int(match.length[g])}
        if match.adjudicated is not None:
            row["adjudicated"] = bool(match.adjudicated[g])
        if match.a_player is not None:
            row["a_player"] = int(match.a_player[g])
        row["moves"] = " ".join(str(int(a)) for a in match.actions[g, :match.length[g]])
        rows.append(row)
    return rows


# ------------------------------------------------------------------ playing a match


def check_seeds(seeds: Sequence[int]) -> np.ndarray:
    """The seeds of a match as an int array [S]; they must be distinct, non-negative, at least one."""
    seeds = np.asarray(list(seeds), np.int64)
    if seeds.ndim != 1 or seeds.size == 0 or len(set(seeds.tolist())) != seeds.size or (seeds < 0).any():
        raise ValueError(f"seeds must be distinct non-negative ints, at least one; got {seeds.tolist()}")
    return seeds


def pair_keys(rng_key: Array, seeds: np.ndarray, starts: np.ndarray) -> Array:
    """Key of each pair (seed ``s``, start ``i``): ``fold_in(fold_in(rng_key, s), i)``, [K]."""
    fold = jax.vmap(jax.random.fold_in)
    return fold(fold(jnp.broadcast_to(rng_key, (len(seeds),) + rng_key.shape), jnp.asarray(seeds, jnp.uint32)),
                jnp.asarray(starts, jnp.uint32))


def _white_to_move(env: pgx.core.Env, starts: Optional[pgx.core.State], num_starts: int) -> Optional[np.ndarray]:
    """[P] whether White moves first from each start (chess games), None for colourless games."""
    if env.id not in COLOUR_IDS:
        return None
    if starts is None:
        return np.ones(num_starts, bool)
    return np.asarray(games.board_game(env).colour_to_move(starts)) == 0


def _colours(a_first: np.ndarray, start_index: np.ndarray, white_to_move: Optional[np.ndarray]) -> np.ndarray:
    if white_to_move is None:
        return np.where(a_first, "first", "second")
    return np.where(a_first == white_to_move[start_index], "white", "black")


@functools.lru_cache(maxsize=8)
def _match_program(env: pgx.core.Env, agent_a: Policy, agent_b: Policy, max_plies: int, adjudicate=None,
                   members: bool = False):
    """One jitted chunk of games; compiled once per (agents, adjudicator, chunk size). With
    ``members`` the agents' params carry a leading member axis and every member's games
    are played in the one program (``jax.vmap``), with the same keys and starts."""

    def run(params_a, params_b, keys, starts):
        return arena.play_games(env, agent_a, params_a, agent_b, params_b, keys[0], num_games=2 * keys.shape[0],
                                max_plies=max_plies, initial_state=starts, pair_keys=keys, adjudicate=adjudicate)

    return jax.jit(jax.vmap(run, in_axes=(0, 0, None, None)) if members else run)


def _chunk_params(agent: Policy, params: Any, chunk_starts: np.ndarray, real: int) -> Any:
    """``params`` for a chunk: for a host player (``referee.host_policy``), each pair's
    start index (−1 for the padding pairs, which it skips); other agents' as given."""
    if not getattr(agent, "starts_as_params", False):
        return params
    return np.where(np.arange(chunk_starts.size) < real, chunk_starts, -1).astype(np.int32)


def _raise_host_fault(agents: Sequence[Policy]) -> None:
    """Raises what a host player raised inside the compiled games, if one did."""
    for agent in agents:
        fault = getattr(agent, "fault", None)
        if fault is not None:
            agent.fault = None
            raise fault


def _chunks(num_pairs: int, batch_pairs: int):
    """(index array padded to the chunk size, number of real pairs) per chunk."""
    size = min(batch_pairs, num_pairs)
    for begin in range(0, num_pairs, size):
        real = np.arange(begin, min(begin + size, num_pairs))
        yield np.concatenate([real, np.full(size - real.size, real[-1])]), real.size


def play_match(
    env: pgx.core.Env,
    agent_a: Policy,
    params_a: Any,
    agent_b: Policy,
    params_b: Any,
    *,
    starts: Optional[pgx.core.State] = None,
    seeds: Sequence[int] = (0,),
    max_plies: int,
    batch_pairs: int = 32,
    rng_key: Optional[Array] = None,
    names: Tuple[str, str] = ("A", "B"),
    a_player: Optional[int] = None,
    adjudicate: Optional[Any] = None,
    progress: bool = False,
    members: Optional[int] = None,
) -> Union[MatchResult, List[MatchResult]]:
    """Plays every start position with both colours for every seed: ``2·P·S`` games.

    Args:
      env: the game (its players alternate).
      agent_a, params_a, agent_b, params_b: the two policies and their params.
      starts: start positions, a batched State [P] (e.g. ``chess_interop.states_from_boards``
        of book positions); None plays one start, ``env.init`` with the pair's key.
      seeds: seed ``s`` plays with ``fold_in(rng_key, s)``; distinct non-negative ints.
      max_plies: plies per game at most; games still running then are unfinished.
      batch_pairs: pairs (two games each) per compiled chunk, which bounds memory.
      rng_key: default ``PRNGKey(0)``.
      names: labels of A and B for reports and PGN headers.
      a_player: the team player on A's side, recorded per game when given.
      adjudicate: an ``azdb_jax.adjudication`` adjudicator (e.g. ``adjudicator(env,
        "material")``) scoring the games still running at ``max_plies``; they keep
        ``finished`` False and get ``adjudicated`` True (``MatchResult.decided``). Pass the
        same object for every match to reuse the compiled program.
      progress: show a tqdm bar over chunks.
      members: ``K`` matches in one program: ``params_a`` and ``params_b`` hold ``K``
        members' parameters stacked on a leading axis (e.g. the seeds of two runs'
        configurations, ``Agent.psi_as_param``), member ``k`` of A meets member ``k`` of
        B, and a list of the ``K`` matches is returned, each the match that the members'
        own parameters play (within float rounding: the operations are batched). Made for
        accelerators, where the members' games run side by side.

    Either agent may be a host player (``referee.host_policy`` over the boards of
    ``starts``, params None): it is given each pair's start index, and what it raises
    (an engine's illegal move, a crash) is raised here.

    Returns:
      ``MatchResult`` with games ordered by seed, start, then A first / A second (a list
      of them with ``members``).
    """
    seeds = check_seeds(seeds)
    if not isinstance(batch_pairs, int) or batch_pairs < 1:
        raise ValueError(f"batch_pairs must be an int >= 1, got {batch_pairs!r}")
    num_starts = 1 if starts is None else int(starts.current_player.shape[0])
    rng_key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    pair_seed = np.repeat(seeds, num_starts)
    pair_start = np.tile(np.arange(num_starts), len(seeds))
    keys = pair_keys(rng_key, pair_seed, pair_start)
    hosted = [agent for agent in (agent_a, agent_b) if getattr(agent, "starts_as_params", False)]
    if members is not None and (hosted or isinstance(members, bool) or not isinstance(members, int) or members < 1):
        raise ValueError(f"members must be an int >= 1 and both agents compiled policies, got {members!r}"
                         + (" with a host player" if hosted else ""))
    # A host player's program is its own (not kept: it holds the player, an engine process).
    program = (_match_program.__wrapped__ if hosted else _match_program)(env, agent_a, agent_b, max_plies, adjudicate,
                                                                          members is not None)
    parts: List[List[Any]] = [[] for _ in range(members or 1)]
    chunks = list(_chunks(len(pair_seed), batch_pairs))
    for index, real in tqdm.tqdm(chunks, desc=f"{names[0]} vs {names[1]}", unit="chunk", disable=not progress):
        chunk_starts = None if starts is None else jax.tree.map(lambda x: x[pair_start[index]], starts)
        try:
            games = jax.device_get(program(_chunk_params(agent_a, params_a, pair_start[index], real),
                                           _chunk_params(agent_b, params_b, pair_start[index], real),
                                           keys[index], chunk_starts))
        except jax.errors.JaxRuntimeError:
            _raise_host_fault(hosted)
            raise
        size = index.size
        for k, part in enumerate(parts):
            member_games = games if members is None else jax.tree.map(lambda x, k=k: x[k], games)
            # Arena order is (A's turn, pair); the match keeps (pair, A's turn), real pairs only.
            part.append(jax.tree.map(lambda x: np.swapaxes(x.reshape((2, size) + x.shape[1:]), 0, 1)[:real]
                                     .reshape((2 * real,) + x.shape[1:]), member_games))
    white_to_move = _white_to_move(env, starts, num_starts)
    start_index, seed = np.repeat(pair_start, 2), np.repeat(pair_seed, 2)
    results = []
    for part in parts:
        games = jax.tree.map(lambda *xs: np.concatenate(xs), *part)
        if not games.in_turn.all():
            raise ValueError("a move was played out of turn: matches need a game whose two players alternate")
        results.append(MatchResult(
            env_id=env.id, names=tuple(names), start_index=start_index, seed=seed, a_first=games.a_first,
            a_colour=_colours(games.a_first, start_index, white_to_move),
            result=games.result.astype(np.float64), finished=games.finished, length=games.length,
            actions=games.actions, a_player=None if a_player is None else np.full(start_index.size, a_player),
            adjudicated=None if adjudicate is None else np.asarray(games.adjudicated, bool)))
    return results[0] if members is None else results


# ------------------------------------------------------------------ against a UCI engine


def play_engine_match(
    agent: Policy,
    params: Any,
    engine,
    start_fens: Sequence[Optional[str]],
    *,
    seeds: Sequence[int] = (0,),
    max_plies: int,
    env: Optional[pgx.core.Env] = None,
    batch_pairs: int = 16,
    rng_key: Optional[Array] = None,
    agent_name: str = "agent",
    progress: bool = False,
) -> MatchResult:
    """``agent`` (A) against a host-side engine (B) from every start, both colours, every seed.

    Chess (the default) or Gardner chess (``env`` a ``gardner_chess`` env, the engine e.g.
    ``FairyStockfishPlayer``). A ``play_match`` whose B is the engine made an arena policy
    (``referee.host_policy``): pgx states give the rules, the results and the agent's
    input; the engine answers through a host callback, one board at a time
    (``engine(board) -> chess.Move``, the board a ``chess.Board`` or ``GardnerBoard`` with
    the game's move stack), for the games where it is to move, while the agent's policy
    runs batched on the others. An illegal engine move raises ValueError.

    Args:
      agent, params: the agent's policy and params.
      engine: callable ``board -> chess.Move`` with a ``name`` (e.g. ``StockfishPlayer``).
      start_fens: start positions (None: the standard start).
      seeds, max_plies, batch_pairs, rng_key, progress: as in ``play_match``.
      env: the env to step; default ``Chess`` with the move generator the starts need.
    """
    seeds = check_seeds(seeds)
    if not start_fens:
        raise ValueError("play_engine_match needs at least one start position")
    game = games.board_game("chess" if env is None else env)
    boards = [game.new_board(f) for f in start_fens]
    max_pieces = game.required_max_pieces(boards)
    env = game.make_env(max_pieces) if env is None else env
    starts = game.states_from_boards(boards, max_pieces=getattr(env, "max_pieces", max_pieces))
    engine_policy = referee.host_policy(env, engine, boards)
    return play_match(env, agent, params, engine_policy, None, starts=starts, seeds=seeds, max_plies=max_plies,
                      batch_pairs=batch_pairs, rng_key=rng_key, names=(agent_name, engine_policy.name),
                      progress=progress)


# ------------------------------------------------------------------ start positions


def random_openings(env: pgx.core.Env, num_openings: int, num_plies: int, rng_key: Array) -> pgx.core.State:
    """``num_openings`` start positions [P]: ``num_plies`` uniformly random legal moves from
    ``env.init`` (opening ``i`` from ``fold_in(rng_key, i)``), for games without a book.

    Deterministic agents replay the same game from the same start whatever the seed;
    varied starts make a match between them informative, as book positions do in chess.

    Raises:
      ValueError: bad sizes, or a game ended within the opening plies.
    """
    if not isinstance(num_openings, int) or num_openings < 1:
        raise ValueError(f"num_openings must be an int >= 1, got {num_openings!r}")
    if not isinstance(num_plies, int) or num_plies < 0:
        raise ValueError(f"num_plies must be an int >= 0, got {num_plies!r}")

    def one(key):
        init_key, move_key = jax.random.split(key)

        def ply(t, state):
            mask = state.legal_action_mask[None]
            return env.step(state, sample_uniform(jax.random.fold_in(move_key, t), mask)[0])

        return jax.lax.fori_loop(0, num_plies, ply, env.init(init_key))

    keys = jax.vmap(lambda i: jax.random.fold_in(rng_key, i))(jnp.arange(num_openings))
    states = jax.jit(jax.vmap(one))(keys)
    ended = np.asarray(states.terminated | states.truncated)
    if ended.any():
        raise ValueError(f"{int(ended.sum())} of {num_openings} random openings of {num_plies} plies already ended "
                         f"the game ({env.id}); use fewer plies")
    return states


def book_starts(boards: Sequence[Union[chess.Board, str]], *, max_pieces: Optional[int] = None):
    """(states [P], FENs [P]) of chess start positions (boards or FENs)."""
    boards = [chess.Board(b) if isinstance(b, str) else b for b in boards]
    return chess_interop.states_from_boards(boards, max_pieces=max_pieces), [b.fen() for b in boards]


__all__ = [
    "MatchResult", "play_match", "play_engine_match",
    "summarize_match", "format_summary", "match_rows", "check_seeds", "pair_keys", "book_starts", "random_openings",
    "CHESS_IDS",
]
