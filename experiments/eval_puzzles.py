"""Puzzle evaluation of a trained team (or of Stockfish): STS, bm/am suites, Lichess, paper values.

  python experiments/eval_puzzles.py --workdir=runs/demo --suite=lichess --themes=mateIn2 --simulations=200
  python experiments/eval_puzzles.py --workdir=runs/demo --step=40 --suite=sts --limit=100
  python experiments/eval_puzzles.py --workdir=runs/demo --suite=paper --rules=visit,gap --move=lcb
  python experiments/eval_puzzles.py --engine=stockfish --engine_nodes=100000 --suite=epd --out=eval/wac_sf

The team is searched once per player for every position (paper §4.3, SPEC §2): the report
has one column per player, per selection rule (``team_<rule>``), the max-over-latents
oracle and the homogeneous control (latent 0 searched ``--homogeneous_copies`` times).
Every player searches as in self-play (its λ_i, the intrinsic reward of the checkpoint's
ψ, v_d at the leaves; SPEC §2); ``--extrinsic_only`` is the paper's ablation (λ = 1 for
every player, Fig. 8 dashed), labelled as such in the JSON summary, in a ``search``
column of the CSV and in the printed summary.
``--data`` defaults to the shared file of the suite under ``$AZDB_DATA_DIR`` (the paper
list ships with azdb_jax). The report goes to ``--out`` (``<out>.json`` + ``<out>.csv``),
by default ``<workdir>/eval/<suite>_<step>_<simulations>`` (``_extrinsic_only`` appended
for the ablation).
"""

import pathlib
import sys
from typing import Optional, Sequence, Tuple

from absl import app, flags, logging

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import distributed  # noqa: E402  (imports no JAX: safe before jax.distributed.initialize)

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import planning  # noqa: E402  pylint: disable=g-import-not-at-top
from azdb_jax.evaluation import puzzles, solvers  # noqa: E402
from azdb_jax.evaluation.team import SEARCH_MODES, Team, check_num_players, label_rows  # noqa: E402
from azdb_jax import cli  # noqa: E402
from azdb_jax.evaluation import loading  # noqa: E402

ENGINES = ("stockfish",)


def evaluate(*, suite: str, data: Optional[str] = None, team: Optional[Team] = None, workdir: Optional[str] = None,
             step: Optional[int] = None, num_players: Optional[int] = None, simulations: Optional[int] = None,
             rules: Sequence[str] = solvers.DEFAULT_RULES, move: str = "visits",
             homogeneous_copies: Optional[int] = None, batch_size: int = 16, limit: Optional[int] = None,
             themes: Sequence[str] = (), engine: Optional[str] = None, engine_nodes: Optional[int] = None,
             engine_time: Optional[float] = None, stockfish: Optional[str] = None, out: Optional[str] = None,
             seed: int = 0, extrinsic_only: bool = False, progress: bool = True) -> Tuple[puzzles.PuzzleReport, pathlib.Path, pathlib.Path]:
    """Runs one puzzle suite for a team (``team`` or loaded from ``workdir``) or an engine.

    Returns the report and the paths of the JSON and CSV files written. Exactly one of
    ``team``, ``workdir`` and ``engine`` says who is evaluated; ``out`` is required unless
    a ``workdir`` gives the default place. ``extrinsic_only`` makes the team search with
    λ = 1 for every player (the ablation).
    """
    who = [name for name, given in (("team", team is not None), ("workdir", workdir is not None),
                                    ("engine", engine is not None)) if given]
    if len(who) != 1:
        raise ValueError(f"evaluate one of a team, a --workdir or an --engine; got {who or 'none'}")
    for rule in rules:
        planning.get_rule(rule)  # fail before loading anything
    if move not in planning.MOVES:
        raise ValueError(f"move must be one of {planning.MOVES}, got {move!r}")
    if data is None:
        data = puzzles.default_data_path(suite)  # None: the packaged paper list
    elif not pathlib.Path(data).is_file():
        raise FileNotFoundError(f"{suite} data file not found: {data}")
    if engine is not None:
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; valid engines: {', '.join(ENGINES)}")
        from azdb_jax.evaluation import stockfish as stockfish_lib  # pylint: disable=g-import-not-at-top

        tag = f"nodes{engine_nodes}" if engine_nodes else f"time{engine_time:g}" if engine_time else "default"
        prefix = pathlib.Path(out) if out else pathlib.Path("eval") / f"{suite}_{engine}_{tag}"
        with stockfish_lib.StockfishSolver(stockfish, nodes=engine_nodes, time=engine_time) as solver:
            report = puzzles.run_suite(suite, data, solver, limit=limit, themes=themes, batch_size=batch_size,
                                       progress=progress)
            report.summary["solver"] = {"engine": solver.engine_name, "path": solver.path,
                                        "nodes": engine_nodes, "time": engine_time}
    else:
        if workdir is not None:
            run_dir = pathlib.Path(workdir)
            team = loading.load_team(run_dir, step=step, num_players=num_players, num_simulations=simulations,
                                     extrinsic_only=extrinsic_only)
            default_out = run_dir / "eval" / (f"{suite}_{team.step}_{team.search_config.num_simulations}"
                                              + ("_extrinsic_only" if extrinsic_only else ""))
        else:
            check_num_players(team, num_players, source=f"team {team.name!r}")
            team = team.with_simulations(simulations) if simulations else team
            team = team.as_extrinsic_only() if extrinsic_only else team
            default_out = None
        if out is None and default_out is None:
            raise ValueError("out is required when the team does not come from a workdir")
        prefix = pathlib.Path(out) if out else default_out
        solver = solvers.TeamSolver(team, rules=rules, move=move, homogeneous_copies=homogeneous_copies,
                                    batch_size=batch_size, seed=seed)
        report = puzzles.run_suite(suite, data, solver, limit=limit, themes=themes, progress=progress)
        report.summary["solver"] = {"team": team.name, "num_players": team.num_players,
                                    "num_simulations": team.search_config.num_simulations,
                                    "algorithm": team.search_config.algorithm, "rules": list(solver.rules),
                                    "move": move, "homogeneous_copies": solver.homogeneous_copies, "seed": seed,
                                    **team.search_description()}
        report.summary.update(team.search_description())
        report.rows[:] = label_rows(report.rows, team)
    json_path, csv_path = report.write(prefix)
    return report, json_path, csv_path


def main(argv: Sequence[str]) -> None:
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    if _WORKDIR.value is None and _ENGINE.value is None:
        raise app.UsageError("pass --workdir (a team) or --engine=stockfish")
    if _WORKDIR.value is not None and _ENGINE.value is not None:
        raise app.UsageError("pass either --workdir or --engine, not both")
    report, json_path, csv_path = evaluate(
        suite=_SUITE.value, data=_DATA.value, workdir=_WORKDIR.value, step=_STEP.value,
        num_players=_NUM_PLAYERS.value, simulations=_SIMULATIONS.value, rules=_RULES.value, move=_MOVE.value,
        homogeneous_copies=_HOMOGENEOUS.value, batch_size=_BATCH_SIZE.value, limit=_LIMIT.value,
        themes=_THEMES.value, engine=_ENGINE.value, engine_nodes=_ENGINE_NODES.value,
        engine_time=_ENGINE_TIME.value, stockfish=_STOCKFISH.value, out=_OUT.value, seed=_SEED.value,
        extrinsic_only=_EXTRINSIC_ONLY.value)
    summary = report.summary
    unit = "puzzles" if summary["suite"] == "lichess" else "positions"
    print(f"{summary['suite']}: {summary['num_positions']} {unit} from {summary.get('data')}")
    if "search" in summary:
        print(f"search: {SEARCH_MODES[summary['search']]}")
    print(report.table())
    if "note" in summary:
        print(summary["note"])
    print(f"report written to {json_path} and {csv_path}")


if __name__ == "__main__":
    # Flags are defined only when run as a script, so tests can import several CLIs.
    _WORKDIR = flags.DEFINE_string("workdir", None, "Run directory of experiments/train.py holding the team.")
    _STEP = flags.DEFINE_integer("step", None, "Checkpoint step to evaluate (default: the latest).")
    _NUM_PLAYERS = flags.DEFINE_integer("num_players", None, "If set, the checkpoint's team size must be this.")
    _SUITE = flags.DEFINE_enum("suite", "lichess", list(puzzles.SUITES), "Puzzle suite: sts, epd (bm/am), lichess, paper.")
    _DATA = flags.DEFINE_string("data", None, "Suite file (default: the shared file of the suite under $AZDB_DATA_DIR).")
    _SIMULATIONS = flags.DEFINE_integer("simulations", None, "Search simulations per position (default: the run's).")
    _RULES = flags.DEFINE_list("rules", list(solvers.DEFAULT_RULES),
                               f"Selection rules to report ({', '.join(planning.SELECTION_RULES)}).")
    _MOVE = flags.DEFINE_enum("move", "visits", list(planning.MOVES), "A player's move: most visited or LCB.")
    _HOMOGENEOUS = flags.DEFINE_integer("homogeneous_copies", None,
                                        "Homogeneous control copies of latent 0 (default: team size; 0: off).")
    _BATCH_SIZE = flags.DEFINE_integer("batch_size", 16, "Positions per search batch.")
    _LIMIT = flags.DEFINE_integer("limit", None, "Evaluate only the first N records (after --themes).")
    _THEMES = flags.DEFINE_list("themes", [], "Lichess only: keep puzzles with any of these themes, e.g. mateIn2.")
    _ENGINE = flags.DEFINE_enum("engine", None, list(ENGINES), "Evaluate a reference engine instead of a team.")
    _ENGINE_NODES = flags.DEFINE_integer("engine_nodes", None, "Engine search limit: nodes per position.")
    _ENGINE_TIME = flags.DEFINE_float("engine_time", None, "Engine search limit: seconds per position.")
    _STOCKFISH = flags.DEFINE_string("stockfish", None, "Stockfish binary (default: $AZDB_STOCKFISH, PATH, /usr/games).")
    _OUT = flags.DEFINE_string("out", None, "Report prefix for .json and .csv (default under the workdir).")
    _SEED = flags.DEFINE_integer("seed", 0, "Seed of the team's search randomness.")
    _EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False, "Search with λ = 1 for every player: the "
                                        "paper's ablation (Fig. 8 dashed) instead of the self-play search.")
    app.run(cli.input_errors_exit(main))
