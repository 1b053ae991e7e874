"""Matches between agents: book starts, both colours, several seeds; W/D/L and Elo.

SPEC §2 "Matches": two agents play every start position twice, once with each colour,
for every seed; a game scores W = 1, D = ½, L = 0 for agent A, and the Elo difference
−400·log10(1/p − 1) of the score p comes with its standard error
(``azdb_jax.ratings.elo_difference``). A team counts as one agent through a selection
rule (``team_agent``, paper §3, Eq. 9); a single latent plays through ``player_agent``.

Games are played by ``azdb_jax.arena.play_games`` in chunks of ``batch_pairs`` pairs,
so memory stays bounded however long the match. Pair (seed ``s``, start ``i``) plays
with the key ``fold_in(fold_in(rng_key, s), i)`` and nothing else, so a game's course
does not depend on the chunking, on the other games, or on which *player* of a team
sits on A's side. That is what makes the opening-specialisation lookup of the paper's
Appendix C.5 exact and cheap (``azdb_jax.evaluation.specialisation``).

Against a UCI engine (chess with Stockfish, Gardner chess with Fairy-Stockfish)
``play_engine_match`` runs a host loop over plies that keeps host boards (``chess.Board``
or ``GardnerBoard``, through ``azdb_jax.envs.board_interop``) and pgx states in step.
Games are written out (PGN for chess, a text record otherwise) by
``azdb_jax.evaluation.game_records``.
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

from azdb_jax import arena, games, opponents, planning, ratings
from azdb_jax.envs import chess_interop
from azdb_jax.evaluation.team import Team

Array = jax.Array
Policy = opponents.Policy

# Games whose matches are written as PGN, and games whose matches have White and Black
# (the games with boards: ``Game.board``).
CHESS_IDS = tuple(game.id for game in games.REGISTRY if game.board is not None and game.board.pgn)
COLOUR_IDS = games.BOARD_IDS


# ------------------------------------------------------------------ agents


def player_agent(team: Team, player: int, *, sample_plies: int = 0) -> Policy:
    """Team player ``player`` alone: its own search, most-visited move.

    The search is the team's (``Team.search_mode``): by default as in self-play — the
    player's latent, its ``λ_i`` and the intrinsic reward of its ψ — or extrinsic-only.

    The policy's ``params`` are the network parameters (``team.params``). With
    ``sample_plies = k`` the first ``k`` plies of a game are sampled ∝ visit counts
    (``opponents.search_policy``), so that seeds give different games.
    """
    if not isinstance(player, (int, np.integer)) or not 0 <= player < team.num_players:
        raise ValueError(f"player must be an int in [0, {team.num_players}) for {team.name!r}, got {player!r}")
    return opponents.search_policy(team.env, team.apply_fn, team.search_config, player=int(player),
                                   lam=float(team.search_lambdas[int(player)]), sample_plies=sample_plies,
                                   **team.player_hook(int(player))._asdict())


def latent_agent(team: Team, *, sample_plies: int = 0) -> Policy:
    """Any single team player, chosen by the params: ``params = (network params, player [])``.

    Playing every player of a team through this one policy compiles the match once.
    ``sample_plies`` as in ``player_agent``.
    """

    lambdas, hook = jnp.asarray(team.search_lambdas), team.search_hook()

    def policy(params, rng_key, state):
        net_params, player = params
        return opponents.search_policy(team.env, team.apply_fn, team.search_config, player=player,
                                       lam=lambdas[player], sample_plies=sample_plies,
                                       **hook._asdict())(net_params, rng_key, state)

    return policy


def team_agent(team: Team, rule: str, *, move: str = "visits", sample_plies: int = 0) -> Policy:
    """The whole team as one agent: every latent searches, ``rule`` picks whose move to play.

    ``rule`` is a name of ``planning.SELECTION_RULES`` (visit, value, lcb, gap); ``move``
    is the chosen player's most-visited (``"visits"``) or LCB (``"lcb"``) move. The
    policy's ``params`` are the network parameters. With ``sample_plies = k`` the first
    ``k`` plies of a game are sampled ∝ the chosen player's visit counts instead.

    Raises:
      ValueError: unknown rule (the message lists the rules) or move.
    """
    planning.get_rule(rule)
    if move not in planning.MOVES:
        raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
    if not isinstance(sample_plies, int) or sample_plies < 0:
        raise ValueError(f"sample_plies must be an int >= 0, got {sample_plies!r}")

    def policy(params, rng_key, state):
        search_key, sample_key = jax.random.split(rng_key)
        search = team.search(params, search_key, state)
        player, action = planning.team_move(search.stats, rule, move=move)
        if sample_plies:
            visits = jnp.take_along_axis(search.stats.visits, player[:, None, None], axis=1)[:, 0]
            sampled = opponents.sample_by_visits(sample_key, visits)
            action = jnp.where(state._step_count < sample_plies, sampled, action)
        return action

    return policy


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


def tally(result, finished) -> Dict[str, Any]:
    """W/D/L of finished games with score, win rate and Elo difference (± standard error).

    ``score = (W + D/2) / N`` and ``win_rate = W / N`` over the ``N`` finished games (NaN
    when none); ``elo``/``elo_stderr`` from ``ratings.elo_difference`` (±inf at a perfect
    score or a whitewash; ``elo_clipped``/``elo_clipped_stderr`` then give the finite
    bound of ``saturated="clip"``, otherwise the same values). Unfinished games count as
    neither and are reported.
    """
    counts = arena.tally(result, finished)
    wins, draws, losses, n = counts["wins"], counts["draws"], counts["losses"], counts["finished"]
    elo = ratings.elo_difference(wins, draws, losses)
    clipped = ratings.elo_difference(wins, draws, losses, saturated="clip")
    return dict(counts, win_rate=wins / n if n else float("nan"), elo=float(elo.elo), elo_stderr=float(elo.stderr),
                elo_clipped=float(clipped.elo), elo_clipped_stderr=float(clipped.stderr))


def summarize_match(match: MatchResult) -> Dict[str, Any]:
    """The match summary: names, the tally of ``tally`` overall and by A's colour, mean length."""
    summary = {"a": match.names[0], "b": match.names[1], "env": match.env_id,
               "seeds": sorted({int(s) for s in match.seed}), "starts": int(len(set(match.start_index.tolist())))}
    decided = match.decided
    summary.update(tally(match.result, decided))
    if match.adjudicated is not None:
        summary["adjudicated"] = int(match.adjudicated.sum())
    summary["mean_length"] = float(match.length.mean()) if match.num_games else float("nan")
    summary["by_colour"] = {str(c): tally(match.result[match.a_colour == c], decided[match.a_colour == c])
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
def _match_program(env: pgx.core.Env, agent_a: Policy, agent_b: Policy, max_plies: int, adjudicate=None):
    """One jitted chunk of games; compiled once per (agents, adjudicator, chunk size)."""

    def run(params_a, params_b, keys, starts):
        return arena.play_games(env, agent_a, params_a, agent_b, params_b, keys[0], num_games=2 * keys.shape[0],
                                max_plies=max_plies, initial_state=starts, pair_keys=keys, adjudicate=adjudicate)

    return jax.jit(run)


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
) -> MatchResult:
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

    Returns:
      ``MatchResult`` with games ordered by seed, start, then A first / A second.
    """
    seeds = check_seeds(seeds)
    if not isinstance(batch_pairs, int) or batch_pairs < 1:
        raise ValueError(f"batch_pairs must be an int >= 1, got {batch_pairs!r}")
    num_starts = 1 if starts is None else int(starts.current_player.shape[0])
    rng_key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    pair_seed = np.repeat(seeds, num_starts)
    pair_start = np.tile(np.arange(num_starts), len(seeds))
    keys = pair_keys(rng_key, pair_seed, pair_start)
    program = _match_program(env, agent_a, agent_b, max_plies, adjudicate)
    parts = []
    chunks = list(_chunks(len(pair_seed), batch_pairs))
    for index, real in tqdm.tqdm(chunks, desc=f"{names[0]} vs {names[1]}", unit="chunk", disable=not progress):
        chunk_starts = None if starts is None else jax.tree.map(lambda x: x[pair_start[index]], starts)
        games = jax.device_get(program(params_a, params_b, keys[index], chunk_starts))
        size = index.size
        # Arena order is (A's turn, pair); the match keeps (pair, A's turn), real pairs only.
        parts.append(jax.tree.map(lambda x: np.swapaxes(x.reshape((2, size) + x.shape[1:]), 0, 1)[:real]
                                  .reshape((2 * real,) + x.shape[1:]), games))
    games = jax.tree.map(lambda *xs: np.concatenate(xs), *parts)
    if not games.in_turn.all():
        raise ValueError("a move was played out of turn: matches need a game whose two players alternate")
    start_index, seed = np.repeat(pair_start, 2), np.repeat(pair_seed, 2)
    return MatchResult(
        env_id=env.id, names=tuple(names), start_index=start_index, seed=seed, a_first=games.a_first,
        a_colour=_colours(games.a_first, start_index, _white_to_move(env, starts, num_starts)),
        result=games.result.astype(np.float64), finished=games.finished, length=games.length, actions=games.actions,
        a_player=None if a_player is None else np.full(start_index.size, a_player),
        adjudicated=None if adjudicate is None else np.asarray(games.adjudicated, bool))


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
    ``FairyStockfishPlayer``). A host loop over plies keeps host boards (for the engine:
    ``engine(board) -> chess.Move``, with the game's move stack; ``chess.Board`` or
    ``GardnerBoard``) and pgx states (the rules, results and the agent's input) in step.
    Each ply the agent's policy, jitted once, runs on the half of the games where it is
    to move (one half of each chunk, alternately); the engine answers the others one by one.

    Args:
      agent, params: the agent's policy and params.
      engine: callable ``board -> chess.Move`` with a ``name`` (e.g. ``StockfishPlayer``).
      start_fens: start positions (None: the standard start).
      seeds, max_plies, batch_pairs, rng_key: as in ``play_match``.
      env: the env to step; default ``Chess`` with the move generator the starts need.
    """
    seeds = check_seeds(seeds)
    if not start_fens:
        raise ValueError("play_engine_match needs at least one start position")
    game = games.board_game("chess" if env is None else env)
    boards0 = [game.new_board(f) for f in start_fens]
    max_pieces = game.required_max_pieces(boards0)
    env = game.make_env(max_pieces) if env is None else env
    starts = game.states_from_boards(boards0, max_pieces=getattr(env, "max_pieces", max_pieces))
    rng_key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    pair_seed = np.repeat(seeds, len(boards0))
    pair_start = np.tile(np.arange(len(boards0)), len(seeds))
    keys = pair_keys(rng_key, pair_seed, pair_start)
    run_agent = jax.jit(arena.per_game_policy(agent))
    step = jax.jit(jax.vmap(env.step))
    engine_name = str(getattr(engine, "name", type(engine).__name__))
    out = {k: [] for k in ("a_first", "result", "finished", "length", "actions")}
    chunks = list(_chunks(len(pair_seed), batch_pairs))
    for index, real in tqdm.tqdm(chunks, desc=f"{agent_name} vs {engine_name}", unit="chunk", disable=not progress):
        size = index.size
        state = jax.tree.map(lambda x: jnp.concatenate([x, x]), jax.tree.map(lambda x: x[pair_start[index]], starts))
        boards = [boards0[pair_start[i]].copy(stack=False) for i in np.concatenate([index, index])]
        _, first_keys, second_keys = jnp.moveaxis(jax.vmap(lambda k: jax.random.split(k, 3))(keys[index]), 1, 0)
        game_keys = jnp.concatenate([first_keys, second_keys])
        a_first = np.arange(2 * size) < size
        real_game = np.tile(np.arange(size) < real, 2)
        mover = np.asarray(state.current_player)
        a_seat = np.where(a_first, mover, 1 - mover)
        result = np.zeros(2 * size)
        length = np.zeros(2 * size, np.int64)
        actions = np.full((2 * size, max_plies), -1, np.int64)
        for t in range(max_plies):
            done = np.asarray(state.terminated | state.truncated) | ~real_game
            if done.all():
                break
            agent_half = slice(0, size) if t % 2 == 0 else slice(size, 2 * size)
            agent_moves = np.zeros(2 * size, bool)
            agent_moves[agent_half] = True
            if not (np.asarray(state.current_player) == np.where(agent_moves, a_seat, 1 - a_seat))[~done].all():
                raise ValueError(f"a move was played out of turn: the start positions must be legal {env.id} positions")
            step_keys = jax.vmap(lambda k: jax.random.fold_in(k, t))(game_keys[agent_half])
            half_state = jax.tree.map(lambda x: x[agent_half], state)
            chosen = np.zeros(2 * size, np.int64)
            chosen[agent_half] = np.asarray(run_agent(params, step_keys, half_state))
            for g in np.flatnonzero(~done):
                board = boards[g]
                if agent_moves[g]:
                    move = chess.Move.from_uci(game.action_to_uci(int(chosen[g]), board))
                else:
                    move = engine(board)
                    if move not in board.legal_moves:
                        raise ValueError(f"{engine_name} played an illegal move {move} in {board.fen()}")
                    chosen[g] = game.move_to_action(move, board)
                board.push(move)
                actions[g, t] = chosen[g]
            state = step(state, jnp.asarray(chosen, jnp.int32))
            rewards = np.asarray(state.rewards)[np.arange(2 * size), a_seat]
            result += np.where(done, 0.0, rewards)
            length += ~done
        finished = np.asarray(state.terminated | state.truncated)
        order = np.stack([np.arange(real), np.arange(real) + size], axis=1).reshape(-1)  # (pair, A's turn)
        for name, value in (("a_first", a_first), ("result", np.where(finished, result, 0.0)),
                            ("finished", finished), ("length", length), ("actions", actions)):
            out[name].append(value[order])
    a_first = np.concatenate(out["a_first"])
    start_index = np.repeat(pair_start, 2)
    white = np.array([b.turn == chess.WHITE for b in boards0])
    return MatchResult(
        env_id=env.id, names=(agent_name, engine_name), start_index=start_index, seed=np.repeat(pair_seed, 2),
        a_first=a_first, a_colour=_colours(a_first, start_index, white), result=np.concatenate(out["result"]),
        finished=np.concatenate(out["finished"]), length=np.concatenate(out["length"]),
        actions=np.concatenate(out["actions"]))


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
            return env.step(state, opponents.sample_uniform(jax.random.fold_in(move_key, t), mask)[0])

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
    "MatchResult", "player_agent", "latent_agent", "team_agent", "play_match", "play_engine_match", "tally",
    "summarize_match", "format_summary", "match_rows", "check_seeds", "pair_keys", "book_starts", "random_openings",
    "CHESS_IDS",
]
