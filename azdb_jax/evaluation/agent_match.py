"""A match between two agents named on a command line: W/D/L, score, Elo ± SE, every game saved.

``run_match`` is what ``experiments/play_match.py`` runs (see its docstring for the
command line). An agent spec is a run directory (``RUN[@STEP]``, the team playing as one
player or through a selection rule, or A as the opening-specialisation lookup of the
paper's Appendix C.5), ``stockfish`` (chess), a classical alpha-beta searcher
(``alphabeta:depth=3``, ``azdb_jax.classical.player``) or a fixed opponent of the game
(``azdb_jax.opponents.opponents_for``). A game with an opening book (the record's
``opening_book``: chess) starts from book positions, other games from their initial
position or from random openings; every start is played with both
colours for every seed. The report (``match.json``, ``match.csv``) and the games
(``games.pgn`` for games python-chess replays, ``games.txt`` otherwise) go to ``out``.
"""

import dataclasses
import pathlib
from typing import Any, Dict, Optional

import jax
import numpy as np

from azdb_jax import games, opponents, planning
from azdb_jax.classical import matches as host_matches
from azdb_jax.classical import player as classical_player
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import game_records, loading, matches, reports, specialisation

RULES = (*planning.SELECTION_RULES, "lookup")  # the team's rules, or the opening lookup
# The games "stockfish" plays (their reference engine is Stockfish) and those that start
# from an opening book (``Game.opening_book``).
STOCKFISH_IDS = tuple(game.id for game in games.REGISTRY
                      if game.board is not None and game.board.reference_engine == "stockfish")
BOOK_IDS = tuple(game.id for game in games.REGISTRY if game.opening_book is not None)


@dataclasses.dataclass
class MatchSide:
    """One side of the match, resolved from its command-line spec."""

    name: str
    env: Any = None  # the game of a run (None for fixed opponents and engines)
    team: Any = None  # the run's azdb_jax.agent.Agent
    policy: Any = None  # arena policy (runs with a player/rule, fixed opponents)
    params: Any = None
    engine: Any = None  # a host-side chess engine
    lookup: bool = False


def _team_policy(agent: MatchSide, player: Optional[int], rule: Optional[str], side: str, sample_plies: int) -> None:
    team = agent.team
    if player is not None and rule is not None:
        raise ValueError(f"give --{side}_player or --{side}_rule, not both")
    if rule is None and player is None:
        player, rule = (0, None) if team.num_players == 1 else (None, "visit")
    if rule == "lookup":
        if side != "a":
            raise ValueError("the lookup team plays as A: pass --a=RUN --a_rule=lookup")
        agent.lookup, agent.name = True, f"{team.name}/lookup"
    elif rule is not None:
        agent.policy = team.rule_policy(rule, sample_plies=sample_plies)
        agent.params, agent.name = team.params, f"{team.name}/{rule}"
    else:
        agent.policy, agent.params = team.player_policy(player, sample_plies=sample_plies), team.params
        agent.name = f"{team.name}/player{player}"


def resolve_agent(spec: str, *, side: str, player=None, rule=None, num_players=None, simulations=None,
                  sample_plies: int = 0, extrinsic_only: bool = False,
                  stockfish: Optional[Dict[str, Any]] = None) -> MatchSide:
    """A ``MatchSide`` for ``spec`` (run directory[@step], "stockfish", a classical searcher
    ``alphabeta:...`` or a fixed opponent name)."""
    if spec == "stockfish":
        return MatchSide(name="stockfish", engine=stockfish or {})
    if classical_player.is_spec(spec):
        return MatchSide(name=spec, engine=classical_player.player_from_spec(spec))
    path, step = common_flags.split_checkpoint(spec)
    if not (path / "config.json").is_file():
        if step is None and not path.exists():
            return MatchSide(name=spec)  # a fixed opponent, checked once the game is known
        raise FileNotFoundError(f"agent {spec!r}: {path} is not a run directory (no config.json)")
    team = loading.load_team(path, step=step, num_players=num_players, num_simulations=simulations,
                             extrinsic_only=extrinsic_only)
    agent = MatchSide(name=team.name, env=team.env, team=team)
    _team_policy(agent, player, rule, side, sample_plies)
    return agent


def _fixed(agent: MatchSide, env, side: str) -> None:
    if agent.env is not None or agent.engine is not None:
        return
    available = opponents.named_opponents(env, [agent.name])
    if agent.name not in available:
        raise ValueError(f"--{side}={agent.name!r} is neither a run directory nor 'stockfish' nor a fixed "
                         f"opponent of {env.id} ({', '.join(available)})")
    agent.policy, agent.params = available[agent.name], None


def _book_starts(game: games.Game, book: Optional[str], num_openings: Optional[int]):
    """(path, boards) of the start positions of ``book`` (a FEN/EPD book, or an ECO table:
    a folder or ``.tsv``), by default of the game's ``opening_book``."""
    from azdb_jax import data  # pylint: disable=g-import-not-at-top

    path = pathlib.Path(book) if book else data.data_path(*game.opening_book)
    if path.is_dir() or path.suffix == ".tsv":
        boards = [game.board.new_board(opening.fen) for opening in data.load_openings(path)]
    else:
        boards = [position.board() for position in data.load_book(path)]
    if num_openings is not None:
        if num_openings < 1:
            raise ValueError(f"--num_openings must be >= 1, got {num_openings}")
        boards = boards[:num_openings]
    return path, boards


def _flipped(match: matches.MatchResult) -> matches.MatchResult:
    """The same games from B's side."""
    other = {"white": "black", "black": "white", "first": "second", "second": "first"}
    return dataclasses.replace(match, names=match.names[::-1], a_first=~match.a_first, result=-match.result,
                               a_colour=np.array([other[c] for c in match.a_colour]), a_player=None)


def run_match(*, a: str, b: str, out, a_player=None, a_rule=None, b_player=None, b_rule=None, num_players_a=None,
              num_players_b=None, env_name=None, book=None, num_openings=None, opening_plies: int = 0,
              seeds: int = 1, heldout_seeds: int = 0, sample_plies: int = 0,
              simulations=None, max_plies=None, batch_pairs: int = 32, stockfish: Optional[Dict[str, Any]] = None,
              extrinsic_only: bool = False, progress: bool = True) -> Dict[str, Any]:
    """Plays the match the flags describe and writes its report; returns the summary (+ ``files``)."""
    if a_rule not in (None,) + RULES:
        raise ValueError(f"unknown --a_rule {a_rule!r}; valid: {', '.join(RULES)}")
    if b_rule not in (None,) + RULES:
        raise ValueError(f"unknown --b_rule {b_rule!r}; valid: {', '.join(RULES[:-1])}")
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds!r}")
    agent_a = resolve_agent(a, side="a", player=a_player, rule=a_rule, num_players=num_players_a,
                            simulations=simulations, sample_plies=sample_plies, extrinsic_only=extrinsic_only,
                            stockfish=stockfish)
    agent_b = resolve_agent(b, side="b", player=b_player, rule=b_rule, num_players=num_players_b,
                            simulations=simulations, sample_plies=sample_plies, extrinsic_only=extrinsic_only,
                            stockfish=stockfish)
    run_envs = {agent.env.id for agent in (agent_a, agent_b) if agent.env is not None}
    if len(run_envs) > 1:
        raise ValueError(f"the two runs play different games: {sorted(run_envs)}")
    if env_name is not None and run_envs and env_name not in run_envs:
        raise ValueError(f"--env={env_name} but the runs play {run_envs.pop()}")
    env = next((agent.env for agent in (agent_a, agent_b) if agent.env is not None), None)
    if env is None:
        if env_name is None:
            raise ValueError("neither agent is a run: pass --env to name the game")
        env = games.make(env_name)
    for agent, side in ((agent_a, "a"), (agent_b, "b")):
        _fixed(agent, env, side)
    game = games.get(env)
    engines = [agent for agent in (agent_a, agent_b) if agent.engine is not None]
    if any(isinstance(agent.engine, dict) for agent in engines) and env.id not in STOCKFISH_IDS:
        raise ValueError(f"stockfish plays {' and '.join(STOCKFISH_IDS)}, not {env.id}")
    if engines and env.id not in games.BOARD_IDS:
        raise ValueError(f"{engines[0].name} plays {' and '.join(games.BOARD_IDS)}, not {env.id}")
    if len(engines) == 2 and all(isinstance(agent.engine, dict) for agent in engines):
        raise ValueError("both agents are stockfish: one side must be an agent of this project")
    if agent_a.lookup and (heldout_seeds < 1 or engines):
        raise ValueError("--a_rule=lookup needs --heldout_seeds >= 1 and an opponent that is not stockfish")
    max_plies = max_plies or games.max_plies(env)

    starts, fens, book_path = None, None, None
    if game.opening_book is not None:
        book_path, boards = _book_starts(game, book, num_openings)
        max_pieces = game.board.required_max_pieces(boards)
        if max_pieces != getattr(env, "max_pieces", max_pieces):
            # Crowded book positions need the exact move generator, in the games and in
            # every search tree: rebuild the runs' agents on it.
            env = games.make(env.id, max_pieces=max_pieces)
            for agent, side, player, rule in ((agent_a, "a", a_player, a_rule), (agent_b, "b", b_player, b_rule)):
                if agent.team is not None:
                    agent.team, agent.env = agent.team.with_env(env), env
                    _team_policy(agent, player, rule, side, sample_plies)
        starts, fens = game.board.states_from_boards(boards, max_pieces), [board.fen() for board in boards]
    elif book is not None:
        raise ValueError(f"--book holds {' and '.join(BOOK_IDS)} start positions; {env.id} starts from its initial "
                         "position (or from random openings: --num_openings, --opening_plies)")
    elif opening_plies:
        starts = matches.random_openings(env, num_openings or 1, opening_plies, jax.random.PRNGKey(12345))
    elif num_openings is not None:
        raise ValueError("--num_openings without --opening_plies: every opening would be the initial position")

    train_seeds = list(range(seeds))
    extra: Dict[str, Any] = {}
    if agent_a.lookup:
        result = specialisation.play_specialisation(
            env, agent_a.team, agent_b.policy, agent_b.params, starts=starts, train_seeds=train_seeds,
            heldout_seeds=list(range(seeds, seeds + heldout_seeds)), max_plies=max_plies, batch_pairs=batch_pairs,
            opponent_name=agent_b.name, sample_plies=sample_plies, progress=progress)
        match, extra["specialisation"] = result.lookup, result.report
    elif engines:
        from azdb_jax.evaluation.stockfish import StockfishPlayer  # pylint: disable=g-import-not-at-top

        if fens is None:  # a game without a book: the starts as FENs for the host boards
            fens = ([None] if starts is None else
                    [game.board.state_to_fen(jax.tree.map(lambda x, i=i: x[i], starts))
                     for i in range(int(starts.current_player.shape[0]))])
        host = {id(agent): (StockfishPlayer(**agent.engine) if isinstance(agent.engine, dict)
                            else agent.engine) for agent in engines}
        try:
            if len(engines) == 2:  # two host-side players (a classical searcher and an engine)
                match = host_matches.play_host_match(host[id(agent_a)], host[id(agent_b)], fens, env_id=env.id,
                                                     max_plies=max_plies, names=(agent_a.name, agent_b.name),
                                                     progress=progress)
            else:
                agent, engine_agent = (agent_a, agent_b) if agent_b.engine is not None else (agent_b, agent_a)
                match = matches.play_engine_match(agent.policy, agent.params, host[id(engine_agent)], fens,
                                                  seeds=train_seeds, max_plies=max_plies, env=env,
                                                  batch_pairs=batch_pairs, agent_name=agent.name, progress=progress)
                if agent is agent_b:
                    match = _flipped(match)
        finally:
            for player in host.values():
                player.close()
    else:
        match = matches.play_match(env, agent_a.policy, agent_a.params, agent_b.policy, agent_b.params,
                                   starts=starts, seeds=train_seeds, max_plies=max_plies, batch_pairs=batch_pairs,
                                   names=(agent_a.name, agent_b.name), progress=progress)

    summary = matches.summarize_match(match)
    summary.update(extra, max_plies=max_plies, book=None if book_path is None else str(book_path))
    summary["search"] = {side: agent.team.search_description() for side, agent in (("a", agent_a), ("b", agent_b))
                         if agent.team is not None}
    out = pathlib.Path(out)
    labels = {f"{side}_search": search["search"] for side, search in summary["search"].items()}
    rows = [{**row, **labels} for row in matches.match_rows(match)]
    json_path, csv_path = reports.write_report(out / "match", summary, rows)
    games_name = "games.pgn" if env.id in matches.CHESS_IDS else "games.txt"  # PGN: python-chess replays the game
    games_path = game_records.write_games(out / games_name, match, fens)
    summary["files"] = [str(json_path), str(csv_path), str(games_path)]
    return summary


__all__ = ["MatchSide", "BOOK_IDS", "RULES", "STOCKFISH_IDS", "resolve_agent", "run_match"]
