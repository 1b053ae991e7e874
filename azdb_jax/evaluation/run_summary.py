"""The end-of-run summary of a training run: a table a person reads and one picture.

For a run directory written by ``azdb_jax.runner.train`` it gathers, per player:

- the score against each fixed reference opponent (``opponents.opponents_for``) from the
  run's last evaluation in ``metrics.jsonl`` (W = 1, D = ½, L = 0), or from games played
  here when the run has none (``reference_games``);
- the nearest-neighbour distance ``d_i = min_{j≠i} ||ψ_i − ψ_j||`` of its expected
  features (paper Eq. 7) at the end, and over training;
- how often its move differs from the other players' (``move_choices``);

and the final interaction graph Σ_w and payoff matrix from ``graphs/``. ``format_table``
renders the table; ``write_summary`` writes ``summary.json`` (every number) and
``summary.png`` (``plots.run_summary_figure``) into the run directory.
"""

import dataclasses
import json
import pathlib
from typing import Any, Dict, List, Optional, Tuple

import jax
import numpy as np

from azdb_jax import games
from azdb_jax.agent import Agent
from azdb_jax.evaluation import move_choices, reports


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """Everything the table and the picture show (lists are per player unless noted)."""

    workdir: str
    env: str
    num_players: int
    lambdas: List[float]  # λ_i (λ_0 = 1)
    l0: float  # ℓ0 of the diversity objective
    matchmaker: str
    iteration: int  # the checkpoint summarised
    scores: Dict[str, List[Optional[float]]]  # reference -> [n] score (None: not measured)
    records: Dict[str, List[Optional[Dict[str, int]]]]  # reference -> [n] {wins, draws, losses}
    scores_from: str  # "metrics.jsonl@<iteration>" or "games (<count> per reference)"
    d_final: List[float]  # [n] d_i at the last training iteration
    d_iterations: List[int]  # [T]
    d_history: List[List[float]]  # [T][n]
    moves: Dict[str, Any]  # MoveChoices.as_dict()
    sigma_white: Optional[List[List[float]]] = None  # [n][n] final Σ_w
    payoff: Optional[List[List[float]]] = None  # [n][n] mean result for White, white i vs black j

    def as_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


# ------------------------------------------------------------------ reading a run


def read_metrics(workdir) -> List[Dict[str, Any]]:
    """The records of ``<workdir>/metrics.jsonl``; a malformed line is an error naming it."""
    path = pathlib.Path(workdir) / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no metrics (is {workdir} a run directory?)")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}, line {number}: not valid JSON ({e})") from None
    return records


def distances(records: List[Dict[str, Any]], num_players: int) -> Tuple[List[int], List[List[float]]]:
    """(iterations [T], d [T][n]) of the training records."""
    train = [r for r in records if r.get("kind", "train") == "train"]
    return ([int(r["iteration"]) for r in train],
            [[float(r.get(f"d_{i}", float("nan"))) for i in range(num_players)] for r in train])


def last_evaluation(records: List[Dict[str, Any]], num_players: int, references) -> Optional[Tuple[int, Dict, Dict]]:
    """(iteration, scores, records) of the last evaluation against ``references``, or None."""
    evals = [r for r in records if r.get("kind") == "eval" and r.get("opponent") in references]
    if not evals:
        return None
    iteration = max(int(r["iteration"]) for r in evals)
    scores = {name: [None] * num_players for name in references}
    tallies = {name: [None] * num_players for name in references}
    for r in evals:
        if int(r["iteration"]) == iteration and 0 <= int(r["player"]) < num_players:
            scores[r["opponent"]][int(r["player"])] = float(r["score"])
            tallies[r["opponent"]][int(r["player"])] = {k: int(r[k]) for k in ("wins", "draws", "losses")}
    return iteration, scores, tallies


def latest_graph(workdir) -> Optional[Dict[str, np.ndarray]]:
    """The newest ``graphs/graph_<iteration>.npz`` of the run (Σ_w, Σ_b, payoff), or None."""
    files = sorted((pathlib.Path(workdir) / "graphs").glob("graph_*.npz"))
    if not files:
        return None
    with np.load(files[-1]) as data:
        return {name: np.asarray(data[name]) for name in data.files}


def reference_games(team: Agent, num_games: int, rng_key, *, max_plies: int) -> Tuple[Dict, Dict]:
    """Every player against every fixed reference opponent of the game: ``num_games``
    games each (both colours), as the run's own evaluation plays them."""
    from azdb_jax import arena, opponents  # pylint: disable=g-import-not-at-top

    agent = team.latent_policy()
    scores, tallies = {}, {}
    for name, reference in opponents.opponents_for(team.env.id, team.env).items():
        play = jax.jit(lambda p, k, reference=reference: arena.play_games(
            team.env, agent, p, reference, None, k, num_games=num_games, max_plies=max_plies))
        scores[name], tallies[name] = [], []
        for j in range(team.num_players):
            summary = arena.summarize(jax.device_get(play((team.params, np.int32(j)), jax.random.fold_in(rng_key, j))))
            scores[name].append(float(summary["score"]))
            tallies[name].append({k: int(summary[k]) for k in ("wins", "draws", "losses")})
    return scores, tallies


# ------------------------------------------------------------------ the summary


def summarize_run(workdir, *, team: Optional[Agent] = None, step: Optional[int] = None, num_positions: int = 200,
                  reference_games_count: Optional[int] = None, seed: int = 0) -> RunSummary:
    """The summary of the run in ``workdir`` at ``step`` (default: its latest checkpoint).

    ``team``: the loaded team (default ``loading.load_team(workdir, step=step)``).
    ``reference_games_count``: when given (> 0), or when the run's metrics hold no
    evaluation, the scores come from that many new games per player and reference
    (default 64); unset (None), from the run's last evaluation.
    """
    from azdb_jax import opponents, runs  # pylint: disable=g-import-not-at-top
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top

    workdir = pathlib.Path(workdir)
    config = runs.load_run_config(workdir)
    if team is None:
        team = loading.load_team(workdir, step=step)
    n = team.num_players
    records = read_metrics(workdir)
    references = list(opponents.opponents_for(team.env.id, team.env))
    key = jax.random.PRNGKey(seed)
    # The run's own evaluation counts only if it evaluated exactly this checkpoint.
    at_step = [r for r in records if team.step is None or int(r.get("iteration", -1)) <= team.step]
    evaluation = None if reference_games_count else last_evaluation(at_step, n, references)
    if evaluation is not None and team.step is not None and evaluation[0] != team.step:
        evaluation = None
    if evaluation is not None:
        eval_iteration, scores, tallies = evaluation
        scores_from = f"metrics.jsonl@{eval_iteration}"
    else:
        count = reference_games_count or 64
        scores, tallies = reference_games(team, count + count % 2, jax.random.fold_in(key, 1),
                                          max_plies=games.max_plies(team.env))
        scores_from = f"games ({count + count % 2} per reference)"
    iterations, history = distances(records, n)
    upto = [k for k, it in enumerate(iterations) if team.step is None or it <= team.step]
    iterations, history = [iterations[k] for k in upto], [history[k] for k in upto]
    choices = move_choices.team_move_choices(team, num_positions=num_positions, rng_key=jax.random.fold_in(key, 2))
    graph = latest_graph(workdir)
    return RunSummary(
        workdir=str(workdir), env=team.env.id, num_players=n,
        lambdas=list(config.team.lambdas),
        l0=float(config.diversity.l0), matchmaker=config.team.matchmaker,
        iteration=int(team.step if team.step is not None else (iterations[-1] if iterations else 0)),
        scores=scores, records=tallies, scores_from=scores_from,
        d_final=history[-1] if history else [float("nan")] * n, d_iterations=iterations, d_history=history,
        moves=choices.as_dict(),
        sigma_white=None if graph is None else graph["sigma_white"].tolist(),
        payoff=None if graph is None else graph["payoff"].tolist())


def _score_cell(score: Optional[float], record: Optional[Dict[str, int]]) -> str:
    if score is None or not np.isfinite(score):
        return "-"
    return f"{score:.2f}" + (f" ({record['wins']}/{record['draws']}/{record['losses']})" if record else "")


def format_table(summary: RunSummary) -> str:
    """The summary as a Markdown table with a heading line (readable in a terminal)."""
    n = summary.num_players
    lam = summary.lambdas[1] if n > 1 else 1.0
    lines = [f"{summary.workdir}: a team of {n} on {summary.env} after {summary.iteration} iterations "
             f"(λ_0 = 1, λ_i = {lam:g} for i > 0, ℓ0 = {summary.l0:g}, matchmaker {summary.matchmaker})",
             ""]
    refs = list(summary.scores)
    header = (["player", "λ_i"] + [f"score vs {r} (W/D/L)" for r in refs]
              + ["d_i", "own move (no other player's)"])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    unique = summary.moves["unique_share"]
    for i in range(n):
        cells = [str(i), f"{summary.lambdas[i]:g}"]
        cells += [_score_cell(summary.scores[r][i], summary.records[r][i]) for r in refs]
        cells.append(f"{summary.d_final[i]:.3f}")
        cells.append("-" if unique[i] is None or not np.isfinite(unique[i]) else f"{100 * unique[i]:.0f}%")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"scores from {summary.scores_from}; d_i = distance of ψ_i to its nearest neighbour (Eq. 7); "
                 f"moves: {summary.moves['distinct_mean']:.2f} distinct moves per position among the {n} players "
                 f"over {summary.moves['positions']} random positions")
    return "\n".join(lines)


def table_rows(summary: RunSummary) -> List[Dict[str, Any]]:
    """One row per player: λ_i, score and W/D/L per reference, d_i, own-move share."""
    rows = []
    for i in range(summary.num_players):
        row: Dict[str, Any] = {"player": i, "lambda": summary.lambdas[i]}
        for name, values in summary.scores.items():
            row[f"score_{name}"] = values[i]
            for k, v in (summary.records[name][i] or {}).items():
                row[f"{k}_{name}"] = v
        row.update(d=summary.d_final[i], own_move_share=summary.moves["unique_share"][i])
        rows.append(row)
    return rows


def write_summary(summary: RunSummary, out_dir=None) -> Tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """Writes ``summary.json`` (every number), ``summary.csv`` (the table) and
    ``summary.png`` into ``out_dir`` (default the run's directory); returns their paths."""
    from azdb_jax import plots  # pylint: disable=g-import-not-at-top  (matplotlib only when used)

    out = pathlib.Path(out_dir or summary.workdir)
    json_path, csv_path = reports.write_report(out / "summary", summary.as_dict(), table_rows(summary))
    fig = plots.run_summary_figure(
        np.asarray(summary.d_iterations), np.asarray(summary.d_history, dtype=float).reshape(-1, summary.num_players),
        l0=summary.l0 if min(summary.lambdas) < 1 else None,
        sigma_white=None if summary.sigma_white is None else np.asarray(summary.sigma_white),
        payoff=None if summary.payoff is None else np.asarray(summary.payoff),
        disagreement=np.asarray(summary.moves["disagreement"]),
        scores={name: np.asarray([np.nan if s is None else s for s in values], float)
                for name, values in summary.scores.items()},
        title=f"{pathlib.Path(summary.workdir).name}: {summary.num_players} players on {summary.env}, "
              f"iteration {summary.iteration}")
    png_path = out / "summary.png"
    tmp = out / ".summary.tmp.png"
    plots.save_figure(fig, tmp)
    tmp.replace(png_path)
    return json_path, csv_path, png_path


__all__ = ["RunSummary", "read_metrics", "distances", "last_evaluation", "latest_graph", "reference_games",
           "summarize_run", "format_table", "table_rows", "write_summary"]
