"""A match between two agents: W/D/L, score, Elo ± SE, and every game saved (SPEC §2 "Matches").

  python experiments/play_match.py --a=runs/demo@120 --b=runs/demo@40 --seeds=32 --sample_plies=4 --out=/tmp/match
  python experiments/play_match.py --a=runs/demo --a_rule=gap --b=minimax2 --seeds=16 --sample_plies=4 --out=/tmp/m2
  python experiments/play_match.py --a=runs/chess --a_rule=lookup --seeds=4 --heldout_seeds=2 --sample_plies=8 \\
      --b=runs/az --num_openings=20 --out=/tmp/lookup
  python experiments/play_match.py --a=runs/chess --b=stockfish --stockfish_elo=1500 --out=/tmp/sf
  python experiments/play_match.py --a=runs/gardner_cpu --b=alphabeta:depth=3 --num_openings=10 --opening_plies=2 \
      --out=/tmp/ab3

An agent (--a, --b) is a run directory of experiments/train.py, optionally at a
checkpoint step (``runs/demo@40``); ``stockfish`` (chess; --stockfish* flags); a classical
alpha-beta searcher (chess, Gardner chess; ``alphabeta:depth=3``, ``alphabeta:nodes=20000``,
see ``azdb_jax.classical.player``: it plays on host boards with the game's move stack,
and two of them, or one and stockfish, play a host-side match); or a
fixed opponent of the game (``random``, and per game ``perfect``, ``minimax2``,
``oracle``; see ``azdb_jax.opponents.opponents_for``). A run plays as one team player
(--a_player=j), as the whole team through a selection rule (--a_rule=visit|value|lcb|gap),
or, for A only, as the opening-specialisation lookup of the paper's Appendix C.5
(--a_rule=lookup: the table is built on --seeds training seeds and scored on
--heldout_seeds further seeds). By default a team of one plays its player and a larger
team the visit rule.

Chess starts from book positions (--book, default the shared 4mvs book under
AZDB_DATA_DIR; a ``.tsv`` file or folder is read as ECO openings), other games from
their initial position, or from --num_openings random openings of --opening_plies
uniformly random plies. A noiseless search plays (almost) the same game for every seed:
--sample_plies=N makes the agents of runs sample their first N moves ∝ visit counts, as
in self-play, so that seeds (and the lookup's held-out seeds) differ. Every start is
played with both colours for every seed.
--out receives ``match.json`` (summary + per-game rows), ``match.csv`` (per-game rows)
and the games: ``games.pgn`` for chess, ``games.txt`` otherwise.
The players of runs search as in self-play (their λ_i and the intrinsic reward of the
checkpoint's ψ); --extrinsic_only makes every run's team search with λ = 1 (the paper's
ablation): its names end in ``/extrinsic_only`` and the summary's ``search`` says so.
"""

import dataclasses
import pathlib
import sys
from typing import Any, Dict, List, Optional

from absl import app, flags, logging

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import distributed  # noqa: E402  (imports no JAX: safe before jax.distributed.initialize)

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

import chess  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402

from azdb_jax import games, opponents  # noqa: E402
from azdb_jax.classical import matches as host_matches  # noqa: E402
from azdb_jax.classical import player as classical_player  # noqa: E402
from azdb_jax.evaluation import game_records, matches, reports, specialisation  # noqa: E402
from azdb_jax import cli, runner  # noqa: E402
from azdb_jax.evaluation import loading  # noqa: E402

DEFAULT_BOOK = ("books", "4mvs_+90_+99.epd")
RULES = ("visit", "value", "lcb", "gap", "lookup")


@dataclasses.dataclass
class Agent:
    """One side of the match, resolved from its command-line spec."""

    name: str
    env: Any = None  # the game of a run (None for fixed opponents and engines)
    team: Any = None  # azdb_jax.evaluation.Team of a run
    policy: Any = None  # arena policy (runs with a player/rule, fixed opponents)
    params: Any = None
    engine: Any = None  # a host-side chess engine
    lookup: bool = False


def _parse_run(spec: str):
    path, _, step = spec.partition("@")
    if step and not step.isdigit():
        raise ValueError(f"agent {spec!r}: the checkpoint step after '@' must be an integer")
    return pathlib.Path(path), int(step) if step else None


def _team_policy(agent: Agent, player: Optional[int], rule: Optional[str], side: str, sample_plies: int) -> None:
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
        agent.policy = matches.team_agent(team, rule, sample_plies=sample_plies)
        agent.params, agent.name = team.params, f"{team.name}/{rule}"
    else:
        agent.policy, agent.params = matches.player_agent(team, player, sample_plies=sample_plies), team.params
        agent.name = f"{team.name}/player{player}"


def resolve_agent(spec: str, *, side: str, player=None, rule=None, num_players=None, simulations=None,
                  sample_plies: int = 0, extrinsic_only: bool = False,
                  stockfish: Optional[Dict[str, Any]] = None) -> Agent:
    """An ``Agent`` for ``spec`` (run directory[@step], "stockfish", a classical searcher
    ``alphabeta:...`` or a fixed opponent name)."""
    if spec == "stockfish":
        return Agent(name="stockfish", engine=stockfish or {})
    if classical_player.is_spec(spec):
        return Agent(name=spec, engine=classical_player.player_from_spec(spec))
    path, step = _parse_run(spec)
    if not (path / "config.json").is_file():
        if step is None and not path.exists():
            return Agent(name=spec)  # a fixed opponent, checked once the game is known
        raise FileNotFoundError(f"agent {spec!r}: {path} is not a run directory (no config.json)")
    team = loading.load_team(path, step=step, num_players=num_players, num_simulations=simulations,
                             extrinsic_only=extrinsic_only)
    agent = Agent(name=team.name, env=team.env, team=team)
    _team_policy(agent, player, rule, side, sample_plies)
    return agent


def _fixed(agent: Agent, env, side: str) -> None:
    if agent.env is not None or agent.engine is not None:
        return
    available = opponents.opponents_for(env.id, env)
    if agent.name not in available:
        raise ValueError(f"--{side}={agent.name!r} is neither a run directory nor 'stockfish' nor a fixed "
                         f"opponent of {env.id} ({', '.join(available)})")
    agent.policy, agent.params = available[agent.name], None


def _chess_starts(book: Optional[str], num_openings: Optional[int]):
    from azdb_jax import data  # pylint: disable=g-import-not-at-top

    path = pathlib.Path(book) if book else data.data_path(*DEFAULT_BOOK)
    if path.is_dir() or path.suffix == ".tsv":
        boards = [chess.Board(opening.fen) for opening in data.load_openings(path)]
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
    engines = [agent for agent in (agent_a, agent_b) if agent.engine is not None]
    if any(isinstance(agent.engine, dict) for agent in engines) and env.id != "chess":
        raise ValueError(f"stockfish plays chess, not {env.id}")
    if engines and env.id not in ("chess", "gardner_chess"):
        raise ValueError(f"{engines[0].name} plays chess and gardner_chess, not {env.id}")
    if len(engines) == 2 and all(isinstance(agent.engine, dict) for agent in engines):
        raise ValueError("both agents are stockfish: one side must be an agent of this project")
    if agent_a.lookup and (heldout_seeds < 1 or engines):
        raise ValueError("--a_rule=lookup needs --heldout_seeds >= 1 and an opponent that is not stockfish")
    max_plies = max_plies or games.max_plies(env)

    starts, fens, book_path = None, None, None
    if env.id == "chess":
        from azdb_jax.envs import chess_interop  # pylint: disable=g-import-not-at-top

        book_path, boards = _chess_starts(book, num_openings)
        max_pieces = chess_interop.required_max_pieces(boards)
        if max_pieces != getattr(env, "max_pieces", max_pieces):
            # Crowded book positions need the exact move generator, in the games and in
            # every search tree: rebuild the runs' agents on it.
            env = games.make("chess", max_pieces=max_pieces)
            for agent, side, player, rule in ((agent_a, "a", a_player, a_rule), (agent_b, "b", b_player, b_rule)):
                if agent.team is not None:
                    agent.team, agent.env = agent.team.with_env(env), env
                    _team_policy(agent, player, rule, side, sample_plies)
        starts, fens = matches.book_starts(boards, max_pieces=max_pieces)
    elif book is not None:
        raise ValueError(f"--book holds chess start positions; {env.id} starts from its initial position "
                         "(or from random openings: --num_openings, --opening_plies)")
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

        if fens is None:  # Gardner chess: the starts as FENs for the host boards
            game = games.board_game(env)
            fens = ([None] if starts is None else
                    [game.state_to_fen(jax.tree.map(lambda x, i=i: x[i], starts)) for i in range(int(starts.current_player.shape[0]))])
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
    games_path = game_records.write_games(out / ("games.pgn" if env.id == "chess" else "games.txt"), match, fens)
    summary["files"] = [str(json_path), str(csv_path), str(games_path)]
    return summary


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    if not (_A.value and _B.value and _OUT.value):
        raise app.UsageError("--a, --b and --out are required")
    stockfish = dict(path=_STOCKFISH.value, nodes=_SF_NODES.value, time=_SF_TIME.value, elo=_SF_ELO.value,
                     skill_level=_SF_SKILL.value)
    summary = run_match(
        a=_A.value, b=_B.value, out=_OUT.value, a_player=_A_PLAYER.value, a_rule=_A_RULE.value,
        b_player=_B_PLAYER.value, b_rule=_B_RULE.value, num_players_a=_NUM_PLAYERS_A.value,
        num_players_b=_NUM_PLAYERS_B.value, env_name=_ENV.value, book=_BOOK.value, num_openings=_NUM_OPENINGS.value,
        opening_plies=_OPENING_PLIES.value, seeds=_SEEDS.value, heldout_seeds=_HELDOUT.value,
        sample_plies=_SAMPLE_PLIES.value,
        simulations=_SIMULATIONS.value, max_plies=_MAX_PLIES.value,
        batch_pairs=_BATCH_PAIRS.value, stockfish=stockfish, extrinsic_only=_EXTRINSIC_ONLY.value)
    print(matches.format_summary(summary))
    for side, search in summary["search"].items():
        print(f"  {side} searches: {search['search_note']}")
    for colour, part in summary["by_colour"].items():
        print(f"  as {colour}: +{part['wins']} ={part['draws']} -{part['losses']} (score {part['score']:.3f})")
    if "specialisation" in summary:
        report = summary["specialisation"]
        print(f"  lookup (held-out): score {report['lookup']['score']:.3f}; best latent "
              f"{report['best_latent']['player']}: {report['best_latent']['score']:.3f}; "
              f"max over latents: {report['max_over_latents']['score']:.3f}")
        if report["leave_one_seed_out"]:
            print(f"  leave-one-seed-out lookup: {report['leave_one_seed_out']['lookup']['score']:.3f}")
        for j, by_turn in enumerate(report["per_player_by_turn"]):
            print(f"  player {j} (all seeds): " + "; ".join(
                f"moving {turn} +{r['wins']} ={r['draws']} -{r['losses']} ({r['score']:.3f})"
                for turn, r in by_turn.items()))
    print("wrote " + ", ".join(summary["files"]))


if __name__ == "__main__":
    # Flags are defined only when run as a script, so tests can import several CLIs.
    _A = flags.DEFINE_string("a", None, "Agent A: RUN_DIR[@STEP], 'stockfish', 'alphabeta:...' or a fixed "
                             "opponent name.")
    _B = flags.DEFINE_string("b", None, "Agent B: RUN_DIR[@STEP], 'stockfish', 'alphabeta:...' or a fixed "
                             "opponent name.")
    _A_PLAYER = flags.DEFINE_integer("a_player", None, "A plays as this single team player.")
    _A_RULE = flags.DEFINE_string("a_rule", None, f"A plays as the team through this rule: {', '.join(RULES)}.")
    _B_PLAYER = flags.DEFINE_integer("b_player", None, "B plays as this single team player.")
    _B_RULE = flags.DEFINE_string("b_rule", None, f"B plays as the team through this rule: {', '.join(RULES[:-1])}.")
    _NUM_PLAYERS_A = flags.DEFINE_integer("num_players_a", None, "Check that A's checkpoint holds this many players.")
    _NUM_PLAYERS_B = flags.DEFINE_integer("num_players_b", None, "Check that B's checkpoint holds this many players.")
    _ENV = flags.DEFINE_string("env", None, "The game when neither agent is a run (e.g. tic_tac_toe).")
    _BOOK = flags.DEFINE_string("book", None, "Chess start positions: FEN/EPD book, or ECO .tsv file/folder.")
    _NUM_OPENINGS = flags.DEFINE_integer("num_openings", None, "Chess: the first N book positions (default all); "
                                         "other games: N random openings (with --opening_plies).")
    _OPENING_PLIES = flags.DEFINE_integer("opening_plies", 0, "Other games: random plies before each start "
                                          "(0: the initial position).", lower_bound=0)
    _SEEDS = flags.DEFINE_integer("seeds", 1, "Seeds per start and colour (lookup: training seeds).", lower_bound=1)
    _SAMPLE_PLIES = flags.DEFINE_integer(
        "sample_plies", 0, "Agents of runs sample their first N moves of a game in proportion to visit counts "
        "(as in self-play), so seeds give different games; 0: always the most-visited move.", lower_bound=0)
    _HELDOUT = flags.DEFINE_integer("heldout_seeds", 0, "Lookup: held-out seeds scored with the table.", lower_bound=0)
    _SIMULATIONS = flags.DEFINE_integer("simulations", None, "Search simulations per move (default: the run's).")
    _MAX_PLIES = flags.DEFINE_integer("max_plies", None, "Plies per game at most (default: the game's cap).")
    _BATCH_PAIRS = flags.DEFINE_integer("batch_pairs", 32, "Game pairs per compiled chunk.", lower_bound=1)
    _OUT = flags.DEFINE_string("out", None, "Output directory.")
    _STOCKFISH = flags.DEFINE_string("stockfish", None, "Stockfish binary (default: PATH, then /usr/games).")
    _SF_NODES = flags.DEFINE_integer("stockfish_nodes", None, "Stockfish nodes per move.")
    _SF_TIME = flags.DEFINE_float("stockfish_time", None, "Stockfish seconds per move (default 0.1 without nodes).")
    _SF_ELO = flags.DEFINE_integer("stockfish_elo", None, "Stockfish UCI_Elo strength limit.")
    _SF_SKILL = flags.DEFINE_integer("stockfish_skill", None, "Stockfish Skill Level (0-20).")
    _EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False, "Runs' teams search with λ = 1 for every player: "
                                        "the paper's ablation (Fig. 8 dashed) instead of the self-play search.")
    app.run(cli.input_errors_exit(main))
