"""Expert and champion measures of a Nim run's checkpoints (SPEC §2 "Nim"; Zhou & Riis).

  python experiments/nim_measures.py --workdir=runs/nim
  python experiments/nim_measures.py --workdir=runs/nim --steps=10,20,30 --simulations=32 --games=32

For every checkpoint and team player: the expert measure (policy top-1 accuracy against
the nim-sum winning moves, value sign accuracy, both also after search) over every
position of the run's Nim game; then the champion measure: every (checkpoint, player)
plays every other one (both colours, ``--seeds`` rounds of ``--games`` games) and
maximum-likelihood Elo ratings are fitted, anchored at the earliest checkpoint's
player 0, next to each agent's score against the Nim oracle. The report is
``<out>.json`` (summary with the pairwise results, and one row per checkpoint and
player) and ``<out>.csv`` (the rows); default ``<workdir>/reports/nim_measures``.
"""

import pathlib
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from absl import app, flags, logging

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import distributed  # noqa: E402  (imports no JAX: safe before jax.distributed.initialize)

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

import jax  # noqa: E402  pylint: disable=g-import-not-at-top
import tqdm  # noqa: E402

from azdb_jax.evaluation import nim as nim_eval  # noqa: E402
from azdb_jax.evaluation import reports  # noqa: E402
from azdb_jax.evaluation.team import Team  # noqa: E402
from azdb_jax import cli  # noqa: E402
from azdb_jax.evaluation import loading  # noqa: E402


def measure(teams: Sequence[Tuple[int, Team]], *, num_games: int = 16, num_seeds: int = 2, seed: int = 0,
            prior_draws: float = 0.5, progress: bool = True) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Both measures for checkpoints ``teams`` ([(step, team)], earliest first): ``(summary, rows)``.

    All teams must share the env, network and team size (checkpoints of one run).
    """
    if not teams:
        raise ValueError("no checkpoints to measure")
    steps = [step for step, _ in teams]
    if steps != sorted(steps) or len(set(steps)) != len(steps):
        raise ValueError(f"checkpoint steps must be distinct and increasing, got {steps}")
    first = teams[0][1]
    if first.env.id != "nim":
        raise ValueError(f"the Nim measures need a Nim run, got env '{first.env.id}'")
    for step, team in teams:
        if team.num_players != first.num_players:
            raise ValueError(f"checkpoint {step} has {team.num_players} players, checkpoint {steps[0]} "
                             f"{first.num_players}")
    # The measures compare moves and values with Nim's game-theoretic oracle, so every
    # search scores positions by the game's outcome only (λ = 1): a value mixed with v_d
    # has no sign to compare with the oracle's.
    key = jax.random.PRNGKey(seed)
    expert: Dict[Tuple[int, int], Dict[str, Any]] = {}
    started = time.perf_counter()
    for index, (step, team) in enumerate(tqdm.tqdm(teams, desc="expert measure", unit="ckpt", disable=not progress)):
        result = nim_eval.expert_measure(team.env, team.apply_fn, team.params, num_players=team.num_players,
                                         search_config=team.search_config, lam=1.0,
                                         rng_key=jax.random.fold_in(key, index))
        for player in result["players"]:
            expert[(step, player["player"])] = player
    expert_seconds = time.perf_counter() - started
    agents = nim_eval.checkpoint_agents(first.env, first.apply_fn, first.search_config,
                                        [(step, team.params) for step, team in teams], first.num_players,
                                        lam=1.0)
    champion = nim_eval.champion_measure(first.env, agents, jax.random.fold_in(key, len(teams)), num_games=num_games,
                                         num_seeds=num_seeds, prior_draws=prior_draws, progress=progress)
    rows = []
    for agent_row in champion["agents"]:
        row = {"step": agent_row["step"], "player": agent_row["player"], "name": agent_row["name"]}
        row.update({k: v for k, v in expert[(agent_row["step"], agent_row["player"])].items() if k != "player"})
        row.update({k: v for k, v in agent_row.items() if k not in ("step", "player", "name")})
        rows.append(row)
    summary = {
        "heaps": list(first.env.initial_heaps),
        "num_players": first.num_players,
        "steps": steps,
        "simulations": first.search_config.num_simulations,
        "search": "extrinsic_only",  # against the oracle: see the comment above
        "random_baseline": result["random_baseline"],
        "positions": result["positions"],
        "won_positions": result["won_positions"],
        "champion": {k: v for k, v in champion.items() if k != "agents"},
        "seconds": {"expert": round(expert_seconds, 1), "total": round(time.perf_counter() - started, 1)},
    }
    return summary, rows


def write(summary: Dict[str, Any], rows: Sequence[Dict[str, Any]], out) -> Tuple[pathlib.Path, pathlib.Path]:
    """Writes ``<out>.json`` and ``<out>.csv`` atomically; returns the paths."""
    return reports.write_report(out, summary, rows)


def format_rows(rows: Sequence[Dict[str, Any]]) -> str:
    """A fixed-width table of the headline numbers, one line per (checkpoint, player)."""
    columns = (("step", "step", "{}"), ("player", "player", "{}"), ("top1", "top1_accuracy", "{:.3f}"),
               ("value sign", "value_sign_accuracy", "{:.3f}"), ("search top1", "search_top1_accuracy", "{:.3f}"),
               ("Elo", "elo", "{:+.0f}"), ("± SE", "elo_stderr", "{:.0f}"), ("vs oracle", "score_vs_oracle", "{:.3f}"))
    lines = ["  ".join(f"{title:>11}" for title, _, _ in columns)]
    for row in rows:
        cells = [fmt.format(row[key]) if row.get(key) is not None else "-" for _, key, fmt in columns]
        lines.append("  ".join(f"{cell:>11}" for cell in cells))
    return "\n".join(lines)


def _parse_steps(text: Optional[str]) -> Optional[List[int]]:
    if not text:
        return None
    try:
        steps = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise app.UsageError(f"--steps must be a comma-separated list of integers, got {text!r}") from None
    if not steps:
        raise app.UsageError("--steps is empty")
    return steps


def main(argv: List[str]) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    from azdb_jax import checkpoint  # pylint: disable=g-import-not-at-top

    workdir = pathlib.Path(_WORKDIR.value)
    steps = _parse_steps(_STEPS.value)
    if steps is None:
        with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
            steps = sorted(manager.all_steps())
        if not steps:
            raise FileNotFoundError(f"no checkpoints in {workdir / 'checkpoints'}")
    teams = [(step, loading.load_team(workdir, step=step, num_simulations=_SIMULATIONS.value))
             for step in tqdm.tqdm(steps, desc="loading", unit="ckpt")]
    summary, rows = measure(teams, num_games=_GAMES.value, num_seeds=_SEEDS.value, seed=_SEED.value)
    summary["workdir"] = str(workdir)
    out = _OUT.value or str(workdir / "reports" / "nim_measures")
    json_path, csv_path = write(summary, rows, out)
    print(format_rows(rows))
    print(f"Nim measures of {len(steps)} checkpoint(s): report written to {json_path} and {csv_path}")


if __name__ == "__main__":
    _WORKDIR = flags.DEFINE_string("workdir", None, "Run directory of experiments/train.py (a Nim run).", required=True)
    _STEPS = flags.DEFINE_string("steps", None, "Comma-separated checkpoint steps; default all checkpoints.")
    _SIMULATIONS = flags.DEFINE_integer("simulations", None, "Simulations per search; default the run's eval budget.",
                                        lower_bound=1)
    _GAMES = flags.DEFINE_integer("games", 16, "Games per pair of agents and seed (even: both colours).",
                                  lower_bound=2)
    _SEEDS = flags.DEFINE_integer("seeds", 2, "Independent rounds of --games games per pair.", lower_bound=1)
    _SEED = flags.DEFINE_integer("seed", 0, "Random seed of the searches and games.")
    _OUT = flags.DEFINE_string("out", None, "Report prefix; default <workdir>/reports/nim_measures.")
    app.run(cli.input_errors_exit(main))
