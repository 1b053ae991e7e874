"""The paper's experiments as library calls: attuning a senior, and the match tables.

- ``attune``: the strong run fine-tuned in a framework with the junior in the loop
  (``attuned.fine_tune``), written as a run directory (``runs.write_run``);
- ``play_tables``: the analogue of Hamade et al. (2024), Tables 1 and 2 — the junior's
  strength, then every focal senior (tree, expector, attuned, the junior itself) against
  the strong player in Stochastic Tag Team, Hand and Brain and regular play, with the STT
  move losses ``L(A, C)`` and ``ΔG`` — written to a folder after every match.

``experiments/train_attuned.py`` and ``experiments/skill_compat.py`` are their command
lines; ``azdb_jax.skill.reproduce`` chains them from a plain training run at a scale, for
``colabs/skill_compatible.ipynb``.
"""

import dataclasses
import functools
import json
import pathlib
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import jax

from azdb_jax import adjudication, arena, games, opponents, runs
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import loading, matches, reports
from azdb_jax.files import write_atomic
from azdb_jax.skill import agents, attuned, measures

FOCALS = ("tree", "expector", "attuned", "junior")
FRAMEWORKS = ("stt", "hb", "regular")
Log = Callable[[str], None]


def _print(line: str) -> None:
    print(line, flush=True)


@dataclasses.dataclass(frozen=True)
class Junior:
    """The junior: player 0 of the run ``run`` (``DIR[@STEP]``) playing its policy
    (``kind="policy"``) or a small PUCT search of ``simulations`` sampled by visits
    (``"search"``), at ``temperature``."""

    run: str
    kind: str = "policy"
    temperature: float = 1.0
    simulations: int = 8

    def __post_init__(self):
        if self.kind not in agents.JUNIOR_KINDS:
            raise ValueError(f"junior_kind must be one of {agents.JUNIOR_KINDS}, got {self.kind!r}")
        if not self.temperature > 0:
            raise ValueError(f"junior_temperature must be > 0, got {self.temperature!r}")
        if self.simulations < 1:
            raise ValueError(f"junior_simulations must be >= 1, got {self.simulations!r}")


def attune(strong: str, junior: Junior, workdir, config: attuned.AttunedConfig, *,
           simulations: Optional[int] = None, log: Log = _print) -> pathlib.Path:
    """Fine-tunes player 0 of ``strong`` (``DIR[@STEP]``) in ``config.framework`` with
    ``junior`` and writes it to ``workdir`` as a run (``attuned.json``: the settings;
    ``attuned_metrics.jsonl``: one line per round). ``simulations`` overrides the strong
    run's self-play search size.

    Raises:
      ValueError: ``workdir`` already holds a run, or the two runs play different games.
    """
    workdir = pathlib.Path(workdir)
    if (workdir / "config.json").exists() or (workdir / "checkpoints").exists():
        raise ValueError(f"workdir: {workdir} already holds a run; choose a new directory")
    strong_dir, strong_step = common_flags.split_checkpoint(strong)
    junior_dir, junior_step = common_flags.split_checkpoint(junior.run)
    run_config, components, state = runs.load_run(strong_dir, strong_step)
    junior_config, junior_components, junior_state = runs.load_run(junior_dir, junior_step)
    env = components.env
    if junior_components.env.id != env.id:
        raise ValueError(f"junior: {junior_dir} plays '{junior_components.env.id}', {strong_dir} plays '{env.id}'")
    search_config = run_config.search
    if simulations:
        search_config = dataclasses.replace(search_config, num_simulations=simulations)
    junior_model = agents.junior_move_model(env, junior_components.network.apply, junior_config.search, junior.kind,
                                            temperature=junior.temperature, simulations=junior.simulations)
    settings = dict(strong=strong, strong_iteration=int(state.iteration), junior=junior.run,
                    junior_kind=junior.kind, junior_temperature=junior.temperature,
                    junior_simulations=junior.simulations, simulations=search_config.num_simulations,
                    **dataclasses.asdict(config))
    workdir.mkdir(parents=True, exist_ok=True)
    write_atomic(workdir / "attuned.json", json.dumps(settings, indent=1))
    metrics = workdir / "attuned_metrics.jsonl"
    metrics.write_text("")
    log(f"attuning {strong} (iteration {int(state.iteration)}) to {config.framework.upper()} with the junior "
        f"{junior.run} ({junior.kind}); {config.iterations} rounds of {config.num_games} games")
    params = state.train_state.params
    for params, progress in attuned.fine_tune(env, components.network, params, search_config, junior_model,
                                               junior_state.train_state.params, config,
                                               adjudicate=adjudication.adjudicator(env, "material")):
        with metrics.open("a") as f:
            f.write(json.dumps(progress._asdict()) + "\n")
        log(f"round {progress.iteration}/{config.iterations}: {progress.positions} positions, mean length "
            f"{progress.mean_length:.1f}, senior share {progress.senior_share:.2f}, decisive "
            f"{progress.decisive:.2f}, loss {progress.loss:.3f} (policy {progress.policy_loss:.3f}, value "
            f"{progress.value_loss:.3f}), {progress.seconds} s")
    # write_run refuses a directory holding a run; attuned.json and the metrics are not one.
    return runs.write_run(workdir, run_config, state, params=jax.device_get(params))


ENGINE_LIMIT_KEYS = {"depth": "depth", "nodes": "nodes", "time": "time", "skill": "skill_level", "elo": "elo"}
# Each reference engine (a game's ``BoardGame.reference_engine``): its name and the strength
# limits it takes.
ENGINES = {"stockfish": ("Stockfish", ("depth", "nodes", "time", "skill_level", "elo")),
           "fairy_stockfish": ("Fairy-Stockfish", ("depth", "nodes", "time", "skill_level"))}


def parse_engine_limit(text: str, game: Optional[str] = None) -> Dict[str, Any]:
    """An engine level as the reference engine's player arguments: ``"depth=1"``,
    ``"nodes=200"``, ``"depth=1:skill=-10"``, ``"time=0.05:elo=1350"``: exactly one of
    depth, nodes (ints) and time (seconds), then optionally skill (Stockfish 0..20,
    Fairy-Stockfish -20..20) or elo (Stockfish's UCI_Elo, chess only). With ``game``
    (``chess``: Stockfish; ``gardner_chess``: Fairy-Stockfish) the keys that engine does
    not take are refused too; the engine checks the ranges when it starts."""
    limit: Dict[str, Any] = {}
    for part in str(text).split(":"):
        name, _, value = part.partition("=")
        number = value.lstrip("-").replace(".", "", 1) if name == "time" else value.lstrip("-")
        if name not in ENGINE_LIMIT_KEYS or not number.isdigit() or name in limit:
            raise ValueError(f"engine_limits: {text!r} is not one of depth=N, nodes=N, time=S, then skill=K or "
                             "elo=E, joined by ':'")
        limit[ENGINE_LIMIT_KEYS[name]] = float(value) if name == "time" else int(value)
    searches = [k for k in ("depth", "nodes", "time") if k in limit]
    if len(searches) != 1:
        raise ValueError(f"engine_limits: {text!r} needs exactly one of depth, nodes and time, got "
                         f"{', '.join(searches) or 'none'}")
    if limit[searches[0]] <= 0:
        raise ValueError(f"engine_limits: {text!r}: {searches[0]} must be positive")
    if "skill_level" in limit and "elo" in limit:
        raise ValueError(f"engine_limits: {text!r} gives skill and elo; give one")
    if game is not None:
        if game not in games.BOARD_IDS:
            raise ValueError(f"engine_limits: no reference engine for {game}; engines play {', '.join(games.BOARD_IDS)}")
        engine, keys = ENGINES[games.board_game(game).reference_engine]
        refused = [k for k in limit if k not in keys]
        if refused:
            raise ValueError(f"engine_limits: {text!r}: {engine} ({game}) takes no {', '.join(refused)}")
    return limit


def check_engine_level(text: str, game: Optional[str] = None) -> None:
    """ValueError unless ``text`` is a reference-engine limit (``parse_engine_limit``) or a
    classical searcher spec (``alphabeta:depth=3``, chess and Gardner chess)."""
    from azdb_jax.classical import player as classical_player  # pylint: disable=g-import-not-at-top

    if not classical_player.is_spec(text):
        parse_engine_limit(text, game)
        return
    classical_player.parse_spec(text)
    if game is not None and game not in games.BOARD_IDS:
        raise ValueError(f"engine_limits: {text!r}: the classical searcher plays {', '.join(games.BOARD_IDS)}, "
                         f"not {game}")


def engine_player(game: str, limit: str):
    """The reference engine of ``game`` at ``limit`` (``parse_engine_limit``): Stockfish
    for chess, Fairy-Stockfish for Gardner chess; or, for a classical spec such as
    ``alphabeta:depth=3`` (``azdb_jax.classical.player``), that alpha-beta searcher;
    ``player(board) -> chess.Move``."""
    from azdb_jax.classical import player as classical_player  # pylint: disable=g-import-not-at-top

    if classical_player.is_spec(limit):
        return classical_player.player_from_spec(limit)
    kwargs = parse_engine_limit(limit, game)
    if games.board_game(game).reference_engine == "stockfish":
        from azdb_jax.evaluation import stockfish  # pylint: disable=g-import-not-at-top
        return stockfish.StockfishPlayer(**kwargs, name=f"Stockfish {limit}")
    from azdb_jax.evaluation import fairy_stockfish  # pylint: disable=g-import-not-at-top
    return fairy_stockfish.FairyStockfishPlayer(**kwargs)


@dataclasses.dataclass(frozen=True)
class TableSettings:
    """What ``play_tables`` plays. ``strong``: the strong player's run (``DIR[@STEP]``, its
    player 0 with its evaluation search, or ``simulations``); ``attuned_stt`` /
    ``attuned_hb``: runs written by ``attune``; ``games`` per match (even: both colours of
    ``games / 2`` starts of ``opening_plies`` random plies), capped at ``max_plies`` and
    adjudicated by material; ``references``: fixed opponents measuring the junior
    (``opponents.opponents_for``); ``engine_limits``: levels of the game's reference
    engine (Stockfish on chess, Fairy-Stockfish on Gardner chess; ``"depth=1"``,
    ``"nodes=100:skill=-10"``, see ``parse_engine_limit``) or classical searchers
    (``"alphabeta:depth=3"``, ``azdb_jax.classical.player``) that the junior and the strong
    player play from the same starts, for their Elo against the engine;
    ``junior_strength=False`` skips the junior's rows (and the engine's);
    ``junior_top_k``: the expector's model of a junior (its top-k moves)."""

    strong: str
    junior: Junior
    attuned_stt: Optional[str] = None
    attuned_hb: Optional[str] = None
    simulations: Optional[int] = None
    junior_top_k: int = 4
    focals: Sequence[str] = ("tree", "expector", "junior")  # add "attuned" with attuned_stt / attuned_hb
    frameworks: Sequence[str] = FRAMEWORKS
    games: int = 64
    opening_plies: int = 2
    max_plies: int = 100
    references: Sequence[str] = ("random", "minimax2")
    engine_limits: Sequence[str] = ()
    junior_strength: bool = True
    seed: int = 0

    def __post_init__(self):
        for name in self.focals:
            if name not in FOCALS:
                raise ValueError(f"focals: unknown senior {name!r}; valid: {', '.join(FOCALS)}")
        for name in self.frameworks:
            if name not in FRAMEWORKS:
                raise ValueError(f"frameworks: unknown framework {name!r}; valid: {', '.join(FRAMEWORKS)}")
        if "attuned" in self.focals and not (self.attuned_stt or self.attuned_hb):
            raise ValueError("focals: 'attuned' needs attuned_stt and/or attuned_hb (runs trained by "
                             "experiments/train_attuned.py)")
        if self.games < 2 or self.games % 2:
            raise ValueError(f"games must be even and >= 2 (both colours per start), got {self.games}")
        for text in self.engine_limits:
            check_engine_level(text)
        if self.max_plies < 1 or self.opening_plies < 0 or self.junior_top_k < 1:
            raise ValueError(f"max_plies >= 1, opening_plies >= 0 and junior_top_k >= 1 are needed, got "
                             f"{self.max_plies}, {self.opening_plies}, {self.junior_top_k}")


def settings_record(settings: TableSettings) -> Dict[str, Any]:
    """``settings`` as the report stores them (JSON types)."""
    return json.loads(json.dumps(dataclasses.asdict(settings)))


def write_tables(out, report: Dict[str, Any]) -> None:
    """``skill_compat.json`` (everything) and ``matches.*`` / ``losses.*`` (the rows) in ``out``."""
    out = pathlib.Path(out)
    write_atomic(out / "skill_compat.json", json.dumps(report, indent=1, default=float))
    flat = [{k: v for k, v in r.items() if k != "delta"} for r in report["matches"]]
    if flat:
        reports.write_report(out / "matches", {"strong": report["strong"], "junior": report["junior"]}, flat)
    if report["losses"]:
        reports.write_report(out / "losses", {"strong": report["strong"]}, report["losses"])


def read_tables(out) -> Dict[str, Any]:
    """The report ``play_tables`` wrote to ``out``."""
    path = pathlib.Path(out) / "skill_compat.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no skill-compatibility tables here (write them with play_tables)")
    return json.loads(path.read_text())


def _attuned_senior(run: str, env, strong, framework: str):
    """The attuned senior of ``framework`` from its run: its network searched as the strong
    player searches."""
    directory, step = common_flags.split_checkpoint(run)
    team = loading.load_team(directory, step=step, num_simulations=strong.search_config.num_simulations)
    if team.env.id != env.id:
        raise ValueError(f"attuned_{framework}: {directory} plays '{team.env.id}', the strong run plays '{env.id}'")
    return dataclasses.replace(team, env=env, search_config=strong.search_config).player_policy(0), team.params


def _engine_match(env, policy, params, limit: str, starts, max_plies: int, rng_key, name: str) -> Dict[str, Any]:
    """``policy`` against the game's reference engine (``engine_player``) at ``limit`` from
    each start with both colours; games still running at ``max_plies`` count as draws.
    Score ± SE, W/D/L and the Elo difference to the engine (± SE; ±inf at a perfect score
    or a whitewash)."""
    import numpy as np  # pylint: disable=g-import-not-at-top

    from azdb_jax import games  # pylint: disable=g-import-not-at-top

    game = games.board_game(env)
    count = int(starts.current_player.shape[0])
    fens = [game.state_to_fen(jax.tree.map(lambda x, i=i: x[i], starts)) for i in range(count)]
    engine = engine_player(env.id, limit)
    try:
        result = matches.play_engine_match(policy, params, engine, fens, env=env, max_plies=max_plies,
                                           rng_key=rng_key, agent_name=name)
    finally:
        engine.close()
    finished = np.asarray(result.finished)
    tally = arena.tally(np.asarray(result.result), np.ones_like(finished))
    wins, draws, losses = int(tally["wins"]), int(tally["draws"]), int(tally["losses"])
    return dict(engine=engine.name, limit=limit, games=wins + draws + losses, wins=wins, draws=draws, losses=losses,
                unfinished=int((~finished).sum()), score=float(tally["score"]),
                score_stderr=float(tally["score_stderr"]), elo=float(tally["elo"]),
                elo_stderr=float(tally["elo_stderr"]), elo_clipped=float(tally["elo_clipped"]),
                elo_clipped_stderr=float(tally["elo_clipped_stderr"]))


def _rows(settings: TableSettings, attuned_frameworks: Sequence[str]) -> List[Tuple[str, str, str, str]]:
    """(framework, focal senior, label, the framework whose senior plays the regular games)."""
    rows = []
    for framework in settings.frameworks:
        for name in settings.focals:
            if framework == "regular" and name == "junior":
                continue  # that is the junior's own strength
            if name == "attuned":
                if framework == "regular":
                    rows += [(framework, name, f"attuned_{f}", f) for f in attuned_frameworks]
                elif framework in attuned_frameworks:
                    rows.append((framework, name, name, framework))
                continue
            if framework == "regular" and name == "expector":
                rows.append((framework, name, name, "stt"))  # the STT expector picks moves; the HB one cannot
                continue
            rows.append((framework, name, name, framework))
    return rows


def play_tables(settings: TableSettings, out, *, log: Log = _print) -> Dict[str, Any]:
    """Plays the tables of ``settings`` and writes them to ``out`` (rewritten after every
    match, so an interrupted run keeps the rows it finished). Returns the report: the
    settings, ``juniors`` (the junior against each reference and the strong player),
    ``matches`` (one row per framework and focal senior, with ``delta`` for STT) and
    ``losses`` (``L(A, C)`` rows of the STT matches)."""
    strong_dir, strong_step = common_flags.split_checkpoint(settings.strong)
    junior_dir, junior_step = common_flags.split_checkpoint(settings.junior.run)
    strong = loading.load_team(strong_dir, step=strong_step, num_simulations=settings.simulations)
    junior_net = loading.load_team(junior_dir, step=junior_step)
    env = strong.env
    if junior_net.env.id != env.id:
        raise ValueError(f"junior: {junior_dir} plays '{junior_net.env.id}', {strong_dir} plays '{env.id}'")
    for text in settings.engine_limits:  # before any game: a level the game's engine cannot play
        check_engine_level(text, env.id)
    fixed = opponents.opponents_for(env.id, env)
    unknown = [name for name in settings.references if name not in fixed]
    if unknown:
        raise ValueError(f"references: unknown opponent(s) {unknown} for {env.id}; valid: {', '.join(fixed)}")
    sp, jp = strong.params, junior_net.params
    spec = settings.junior
    junior_model = agents.junior_move_model(env, junior_net.apply_fn, junior_net.search_config, spec.kind,
                                            temperature=spec.temperature, simulations=spec.simulations)
    junior = agents.sampling_policy(junior_model)
    strong_model = agents.network_move_model(strong.apply_fn)
    value = agents.network_value(strong.apply_fn)
    seniors: Dict[str, Any] = {
        "strong": (strong.with_env(env).player_policy(0), sp),
        "tree": (agents.tree_senior(env, junior_net.apply_fn, strong.search_config), jp),
        "expector": (agents.stt_expector(env, agents.STTModels(value, junior_model, strong_model, junior_model,
                                                                 strong_model), junior_top_k=settings.junior_top_k),
                     agents.STTModels(sp, jp, sp, jp, sp)),
        "junior": (junior, jp),
    }
    attuned_seniors = {framework: _attuned_senior(run, env, strong, framework)
                       for framework, run in (("stt", settings.attuned_stt), ("hb", settings.attuned_hb)) if run}
    if "stt" in attuned_seniors:
        seniors["attuned"] = attuned_seniors["stt"]
    brains: Dict[str, Any] = {name: (agents.brain_from_policy(env, policy), params)
                              for name, (policy, params) in seniors.items() if name not in ("expector", "attuned")}
    brains["expector"] = (agents.hb_expector(env, agents.HBModels(value, junior_model)), agents.HBModels(sp, jp))
    if "hb" in attuned_seniors:
        brains["attuned"] = (agents.brain_from_policy(env, attuned_seniors["hb"][0]), attuned_seniors["hb"][1])

    def team(framework: str, name: str):
        if framework == "stt":
            policy, params = seniors[name]
            return agents.tag_team(policy, junior), (params, jp)
        if framework == "hb":
            brain, params = brains[name]
            return agents.hand_and_brain(env, brain, junior_model), (params, jp)
        return seniors[name]

    start_key, match_key = jax.random.split(jax.random.PRNGKey(settings.seed))
    starts = matches.random_openings(env, settings.games // 2, settings.opening_plies, start_key)
    adjudicate = adjudication.adjudicator(env, "material")
    report: Dict[str, Any] = dict(
        strong=settings.strong, junior=spec.run, junior_kind=spec.kind, junior_temperature=spec.temperature,
        junior_simulations=spec.simulations, attuned_stt=settings.attuned_stt, attuned_hb=settings.attuned_hb,
        simulations=strong.search_config.num_simulations, junior_top_k=settings.junior_top_k, games=settings.games,
        max_plies=settings.max_plies, opening_plies=settings.opening_plies, seed=settings.seed, game=env.id,
        settings=settings_record(settings), complete=False, juniors={}, engines={}, matches=[], losses=[])

    if settings.junior_strength:
        references = [(name, (fixed[name], None)) for name in settings.references] + [("strong", seniors["strong"])]
        for name, (policy, params) in references:
            play = jax.jit(functools.partial(arena.play_games, env, junior, policy_b=policy, num_games=settings.games,
                                             max_plies=settings.max_plies, adjudicate=adjudicate))
            summary = measures.summarize(jax.device_get(play(params_a=jp, params_b=params, rng_key=match_key,
                                                             initial_state=starts)))
            report["juniors"][f"vs_{name}"] = summary
            log(f"junior vs {name}: {summary['score']:.3f} ± {summary['score_stderr']:.3f} "
                f"(+{summary['wins']} ={summary['draws']} -{summary['losses']})")
        write_tables(out, report)
        for text in settings.engine_limits:
            for who, (policy, params) in (("junior", (junior, jp)), ("strong", seniors["strong"])):
                item = _engine_match(env, policy, params, text, starts, settings.max_plies, match_key, who)
                report["engines"][f"{who}_vs_{text}"] = item
                log(f"{who} vs {item['engine']}: {item['score']:.3f} ± {item['score_stderr']:.3f} "
                    f"(+{item['wins']} ={item['draws']} -{item['losses']}), Elo {item['elo']:+.0f} ± "
                    f"{item['elo_stderr']:.0f}")
                write_tables(out, report)

    for framework, name, label, source in _rows(settings, tuple(attuned_seniors)):
        start = time.time()
        if framework == "regular":
            focal, focal_params = attuned_seniors[source] if name == "attuned" else seniors[name]
        else:
            focal, focal_params = team(framework, name)
        alter, alter_params = team(framework, "strong")
        match = measures.play_match(framework, env, focal, focal_params, alter, alter_params, match_key,
                                    num_games=settings.games, max_plies=settings.max_plies, adjudicate=adjudicate,
                                    initial_state=starts)
        s = match.summary
        row = dict(framework=framework, focal=label, alter="strong", games=s["games"], wins=s["wins"],
                   draws=s["draws"], losses=s["losses"], adjudicated=s["adjudicated"], score=s["score"],
                   score_stderr=s["score_stderr"], mean_length=s["mean_length"], seconds=round(time.time() - start, 1))
        report["matches"].append(row)
        log(f"{framework:8s} {label:12s} vs strong: {s['score']:.3f} ± {s['score_stderr']:.3f} "
            f"(+{s['wins']} ={s['draws']} -{s['losses']}, {row['seconds']} s)")
        if framework == "stt":
            moves = measures.move_losses(match, env, value, sp)
            table = measures.loss_table(moves, num_games=settings.games, seed=settings.seed)
            report["losses"] += [dict(framework=framework, focal=label, **r) for r in table]
            row["delta"] = {k: measures.delta(table, *pair) for k, pair in DELTAS.items()}
            log("    ΔG: " + ", ".join(f"{k} {v['delta']:+.2f} ± {v['se']:.2f}" for k, v in row["delta"].items()))
        write_tables(out, report)
    report["complete"] = True
    write_tables(out, report)
    return report


# ΔG(A1, A2, *) of each STT match: the strong player's team's agent against the focal team's.
DELTAS = {"alter_junior-focal_junior": ("alter_junior", "focal_junior"),
          "alter_senior-focal_senior": ("alter_senior", "focal_senior"),
          "alter_team-focal_team": ("alter_team", "focal_team")}


__all__ = ["DELTAS", "ENGINES", "FOCALS", "FRAMEWORKS", "Junior", "TableSettings", "attune", "engine_player",
           "parse_engine_limit", "play_tables", "read_tables", "settings_record", "write_tables"]
