"""Figure group ``sweep``: the settings of a sweep scale side by side (docs/results.md, "Choosing λ and ℓ0").

A sweep scale (``scales.SCALES["cpu_sweep"]``) trains, per training seed, plain AlphaZero
(``az``), the λ = 1 control (``control``) and one run per setting (its ``variants``: the
``azdb`` arm with λ and ℓ0 overridden), all with the same budget. Per run of every variant
and of the control this group measures, against the same seed's runs:

- **strength**: every player of the team against AZ's player 0, both colours from every
  opening of the ``openings`` group for enough match seeds that a pairing has at least
  ``eval.match_games`` games (the first ``SAMPLE_PLIES`` plies sampled ∝ visits, games
  still running at ``eval.max_plies`` adjudicated by material, as the ``matches`` group
  plays); W/D/L, score and Elo ``−400 log10(1/p − 1)`` ± SE (``ratings.elo_difference``);
- **diversity**: distinct moves per position among the team's players (most-visited moves
  on ``eval.positions`` random positions, ``evaluation.move_choices``), and its difference
  from the control of the same seed on the same positions (paired over positions);
- **what training did** (its ``metrics.jsonl``, mean over the last ``LAST_ITERATIONS``):
  plies per game, the dropped fraction, the players' mean d_i, r_d per move, the share of
  the diverse players' search value that is intrinsic and the intrinsic return per game.

Per variant the report also pools the seeds: W/D/L summed per player, Elo of the pooled
score ± SE over games, and the means over seeds of the other numbers ± SE over seeds (over
positions, paired, when there is one seed).
Rows: one per game (its moves as action ids).
"""

import time
from typing import Any, Dict, List, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import adjudication, arena, runs
from azdb_jax.evaluation import loading
from azdb_jax.evaluation import matches as matches_lib
from azdb_jax.evaluation import move_choices
from azdb_jax.reproduction import matches as matches_group
from azdb_jax.reproduction import openings as openings_group
from azdb_jax.reproduction.results import Results, RunInfo, stderr

ARMS = ("az", "control")  # and every variant of the sweep scale
REFERENCE = "az"  # whose player 0 every player plays
CONTROL = "control"  # the λ = 1 team every variant's distinct moves are compared with
SEED = 0
SAMPLE_PLIES = matches_group.SAMPLE_PLIES
LAST_ITERATIONS = 10
TRAINING_METRICS = ("plies_per_game", "dropped_fraction", "reward_d_per_move", "intrinsic_share",
                    "intrinsic_return_per_game")


def training_summary(workdir, *, last: int = LAST_ITERATIONS) -> Dict[str, float]:
    """Means over a run's last ``last`` training records of ``TRAINING_METRICS`` and of the
    players' mean d_i (``d_mean``); a metric the run did not record is NaN."""
    records = [r for r in runs.read_metrics(workdir) if r.get("kind") == "train"][-last:]
    out = {name: float(np.mean([r.get(name, np.nan) for r in records])) for name in TRAINING_METRICS}
    out["d_mean"] = float(np.mean([np.mean([v for k, v in r.items() if k.startswith("d_") and k[2:].isdigit()])
                                   for r in records]))
    return out


def _record(match: matches_lib.MatchResult) -> Dict[str, Any]:
    out = matches_group.record(match.result, match.decided)
    out["mean_length"] = float(match.length.mean())
    out["adjudicated"] = int(match.adjudicated.sum()) if match.adjudicated is not None else 0
    return out


def evaluate_run(results: Results, run: RunInfo, reference, starts, openings: Sequence[Tuple[str, str]],
                 seeds: Sequence[int], control_distinct: np.ndarray) -> Dict[str, Any]:
    """Every player of ``run`` against ``reference``'s player 0, its distinct moves and its
    training numbers; ``{"summary", "rows", "distinct"}``."""
    sizes = results.scale.eval
    team = loading.load_team(run.workdir, num_simulations=sizes.simulations)
    env = team.env
    adjudicate = adjudication.adjudicator(env, matches_group.ADJUDICATION, margin=matches_group.MARGIN)
    opponent = reference.player_policy(0, sample_plies=SAMPLE_PLIES)
    latent = team.latent_policy(sample_plies=SAMPLE_PLIES)
    pairing = f"{run.name} vs {reference.name}"
    players, rows = [], []
    for j in range(team.num_players):
        match = matches_lib.play_match(env, latent, (team.params, jnp.int32(j)), opponent, reference.params,
                                       starts=starts, seeds=seeds, max_plies=sizes.max_plies,
                                       rng_key=jax.random.PRNGKey(SEED), adjudicate=adjudicate,
                                       batch_pairs=max(1, len(openings) * len(seeds)),
                                       names=(f"{team.name}/player_{j}", reference.name), a_player=j)
        players.append(dict(_record(match), player=j, lam=float(team.search_lambdas[j])))
        rows += matches_group._game_rows(match, "player", f"player_{j}", pairing, openings)  # pylint: disable=protected-access
    choices = move_choices.team_move_choices(team, num_positions=sizes.positions, rng_key=jax.random.PRNGKey(SEED),
                                             max_plies=openings_group.POSITION_PLIES)
    distinct = np.asarray(choices.distinct, float)
    gap = distinct - control_distinct
    summary = {
        "run": run.name, "arm": run.arm, "seed": run.seed, "step": team.step,
        "search_lambdas": [float(x) for x in team.search_lambdas], "l0": float(team.l0),
        "players": players,
        "distinct_mean": float(distinct.mean()), "distinct_stderr": stderr(distinct),
        "distinct_vs_control": float(gap.mean()), "distinct_vs_control_stderr": stderr(gap),
        "training": training_summary(run.workdir),
    }
    return {"summary": summary, "rows": rows, "distinct": distinct}


def pooled(per_seed: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """A variant over its seeds: per player W/D/L summed and the pooled score's Elo ± SE over
    games; distinct moves and training numbers as means ± SE over seeds."""
    num_players = len(per_seed[0]["players"])
    players = []
    for j in range(num_players):
        counts = [int(sum(r["players"][j][k] for r in per_seed)) for k in ("wins", "draws", "losses")]
        pooled_games = arena.tally(np.repeat([1.0, 0.0, -1.0], counts), np.ones(sum(counts), bool))
        players.append({"player": j, "lam": per_seed[0]["players"][j]["lam"],
                        **{k: pooled_games[k] for k in ("wins", "draws", "losses", "score", "score_stderr")},
                        "games": sum(counts),
                        # finite at a whitewash:
                        "elo": pooled_games["elo_clipped"], "elo_stderr": pooled_games["elo_clipped_stderr"],
                        "elo_by_seed": [r["players"][j]["elo_clipped"] for r in per_seed]})

    def over_seeds(values):
        return {"mean": float(np.mean(values)), "stderr": stderr(values), "values": [float(v) for v in values]}

    training = {name: over_seeds([r["training"][name] for r in per_seed]) for name in per_seed[0]["training"]}
    distinct = over_seeds([r["distinct_mean"] for r in per_seed])
    gap = over_seeds([r["distinct_vs_control"] for r in per_seed])
    if len(per_seed) == 1:  # one seed: the SEs over its positions (the gap paired over positions)
        distinct["stderr"], gap["stderr"] = per_seed[0]["distinct_stderr"], per_seed[0]["distinct_vs_control_stderr"]
    distinct["stderr_over"] = gap["stderr_over"] = "seeds" if len(per_seed) > 1 else "positions"
    return {"seeds": [r["seed"] for r in per_seed], "players": players, "distinct": distinct,
            "distinct_vs_control": gap, "training": training}


def evaluate(results: Results) -> dict:
    """Evaluates the group into ``results`` (``eval/sweep.json|csv``); returns the report."""
    start = time.perf_counter()
    scale = results.scale
    if not scale.variants:
        raise ValueError(f"scale {scale.name!r} has no variants: the sweep group needs a sweep scale (cpu_sweep)")
    sizes = scale.eval
    openings = openings_group.opening_positions(scale.game, sizes.openings)
    seeds = list(range(matches_group.num_match_seeds(sizes.match_games, len(openings))))
    arms = (CONTROL, *(v.name for v in scale.variants))
    found = {arm: {r.seed: r for r in results.runs(arm)} for arm in (REFERENCE, *arms)}
    for arm, arm_runs in found.items():
        if not arm_runs:
            results.first_run(arm)  # ResultsError saying how to train it
    per_arm: Dict[str, List[Dict[str, Any]]] = {arm: [] for arm in arms}
    rows: List[Dict[str, Any]] = []
    names: List[str] = []
    for seed in sorted(found[REFERENCE]):
        if seed not in found[CONTROL]:
            continue
        reference = loading.load_team(found[REFERENCE][seed].workdir, num_simulations=sizes.simulations)
        starts = matches_group._starts(scale.game, reference.env, [fen for _, fen in openings])  # pylint: disable=protected-access
        control_team = loading.load_team(found[CONTROL][seed].workdir, num_simulations=sizes.simulations)
        control_distinct = np.asarray(move_choices.team_move_choices(
            control_team, num_positions=sizes.positions, rng_key=jax.random.PRNGKey(SEED),
            max_plies=openings_group.POSITION_PLIES).distinct, float)
        names.append(found[REFERENCE][seed].name)
        for arm in arms:
            run = found[arm].get(seed)
            if run is None:
                continue
            out = evaluate_run(results, run, reference, starts, openings, seeds, control_distinct)
            per_arm[arm].append(out["summary"])
            rows += out["rows"]
            names.append(run.name)
    summary = {
        "game": scale.game, "reference": REFERENCE, "control": CONTROL,
        "variants": [{"name": v.name, "base": v.base, "overrides": list(v.overrides)} for v in scale.variants],
        "openings": [{"label": label, "fen": fen} for label, fen in openings], "match_seeds": seeds,
        "games_per_pairing": 2 * len(openings) * len(seeds), "num_simulations": sizes.simulations,
        "max_plies": sizes.max_plies, "adjudication": matches_group.ADJUDICATION, "sample_plies": SAMPLE_PLIES,
        "positions": sizes.positions, "last_iterations": LAST_ITERATIONS,
        "runs": per_arm,
        "arms": {arm: pooled(runs) for arm, runs in per_arm.items() if runs},
    }
    results.write_report("sweep", summary, rows, runs=names, seconds=time.perf_counter() - start)
    return results.read_report("sweep")


def _num(value, spec: str) -> str:
    """``value`` formatted, or "—" where the report has none (NaN is written as null)."""
    return "—" if value is None or not np.isfinite(value) else format(value, spec)


def table(report: Dict[str, Any]) -> str:
    """The report as a markdown table: one row per arm (seeds pooled), then one per run."""
    summary = report["summary"]
    lines = ["| arm | seeds | player | λ_i | W/D/L vs AZ p0 | score | Elo vs AZ p0 | distinct moves (vs control) "
             "| plies/game | intrinsic share | r_d/move | d_i |", "|" + "---|" * 12]
    for arm, entry in summary["arms"].items():
        training = entry["training"]
        for p in entry["players"]:
            first = p["player"] == 0
            gap = entry["distinct_vs_control"]
            distinct = (f"{_num(entry['distinct']['mean'], '.2f')} ({_num(gap['mean'], '+.2f')} "
                        f"± {_num(gap['stderr'], '.2f')})") if first else ""
            extra = " | ".join(_num(training[k]["mean"], f) for k, f in (
                ("plies_per_game", ".0f"), ("intrinsic_share", ".3f"), ("reward_d_per_move", ".3f"),
                ("d_mean", ".3f"))) if first else " |  |  | "
            lines.append(f"| {arm if first else ''} | {','.join(map(str, entry['seeds'])) if first else ''} | "
                         f"{p['player']} | {p['lam']:g} | {p['wins']}/{p['draws']}/{p['losses']} | "
                         f"{_num(p['score'], '.3f')} | {_num(p['elo'], '+.0f')} ± {_num(p['elo_stderr'], '.0f')} | "
                         f"{distinct} | {extra} |")
    return "\n".join(lines)


__all__ = ["ARMS", "CONTROL", "LAST_ITERATIONS", "REFERENCE", "TRAINING_METRICS", "evaluate", "evaluate_run", "pooled",
           "table", "training_summary"]
