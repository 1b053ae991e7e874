"""One puzzle suite for a team (a loaded ``Agent`` or a run directory) or a reference engine.

``evaluate`` is what ``experiments/eval_puzzles.py`` runs: it builds the solver
(``solvers.TeamSolver`` over the team, or ``stockfish.StockfishSolver``), runs the suite
(``puzzles.run_suite``), records who solved it and how (simulations, rules, the team's
search mode) in the summary and writes the report as ``<out>.json`` and ``<out>.csv``.
A team loaded from a run directory writes by default under it:
``<workdir>/eval/<suite>_<step>_<simulations>`` (``_extrinsic_only`` appended for the
ablation).
"""

import pathlib
from typing import Optional, Sequence, Tuple

from azdb_jax import planning
from azdb_jax.agent import Agent
from azdb_jax.evaluation import loading, puzzles, solvers
from azdb_jax.evaluation.team import check_num_players, label_rows

ENGINES = ("stockfish",)


def evaluate(*, suite: str, data: Optional[str] = None, team: Optional[Agent] = None, workdir: Optional[str] = None,
             step: Optional[int] = None, num_players: Optional[int] = None, simulations: Optional[int] = None,
             rules: Sequence[str] = solvers.DEFAULT_RULES, move: str = "visits",
             homogeneous_copies: Optional[int] = None, batch_size: int = 16, limit: Optional[int] = None,
             themes: Sequence[str] = (), engine: Optional[str] = None, engine_nodes: Optional[int] = None,
             engine_time: Optional[float] = None, stockfish: Optional[str] = None, out: Optional[str] = None,
             seed: int = 0, extrinsic_only: bool = False,
             progress: bool = True) -> Tuple[puzzles.PuzzleReport, pathlib.Path, pathlib.Path]:
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


__all__ = ["ENGINES", "evaluate"]
