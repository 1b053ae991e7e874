"""Compares an AZdb team with an AZ control run: distances, strength, move choices.

  python experiments/diversity_report.py --runs=az=runs/az_c4,azdb=runs/azdb_c4

For every run (a workdir written by experiments/train.py) it reports, as a markdown
table and JSON:
  (a) the nearest-neighbour distances d_i of the players' expected features over
      training (from metrics.jsonl) and at the end;
  (b) player 0's strength against a fixed reference opponent (score over
      --games games, both colours, with a standard error and the Elo difference);
  (c) how differently the players move: over --positions positions (random openings
      of 0-6 plies), the mean number of distinct moves chosen by the team's players
      (most-visited move of a noiseless search with --simulations).

The players search as in self-play (their λ_i, the intrinsic reward of the checkpoint's
ψ, v_d at the leaves; SPEC §2); --extrinsic_only searches with λ = 1 for every player,
the paper's ablation (Fig. 8 dashed), and the report says so.
"""

import json
import pathlib
import sys

from absl import app, flags
import jax
import numpy as np

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import arena, opponents, ratings  # noqa: E402
from azdb_jax import games as games_lib  # noqa: E402
from azdb_jax import cli, runs  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import loading, move_choices, run_summary  # noqa: E402

_RUNS = flags.DEFINE_list("runs", [], "name=workdir pairs.")
_REFERENCE = flags.DEFINE_string("reference", "minimax2", "Fixed opponent (azdb_jax.opponents.opponents_for).")
_GAMES = common_flags.define_games("Games against the reference (even).", default=200)
_POSITIONS = flags.DEFINE_integer("positions", 200, "Positions for the move-choice comparison.")
_SIMULATIONS = common_flags.define_simulations("Search simulations in evaluation (default: each run's evaluation "
                                               "budget).")
_SEED = common_flags.define_seed("Evaluation seed.", default=123)
_EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False,
                                    "Search with λ = 1 for every player (the paper's ablation, Fig. 8 dashed) "
                                    "instead of as in self-play.")


def report_run(name: str, workdir: pathlib.Path) -> dict:
    config = runs.load_run_config(workdir)
    team = loading.load_team(workdir, num_simulations=_SIMULATIONS.value, extrinsic_only=_EXTRINSIC_ONLY.value)
    env, n = team.env, team.num_players
    key = jax.random.PRNGKey(_SEED.value)

    # (a) distances over training
    iterations, history = run_summary.distances(run_summary.read_metrics(workdir), n)
    distances = dict(zip(iterations, history))
    last = max(distances)
    checkpoints = sorted({1, *range(0, last + 1, max(1, last // 6)), last} & set(distances))

    # (b) player 0 against the reference
    agent = team.player_policy(0)
    reference = opponents.opponents_for(env.id, env)[_REFERENCE.value]
    play = jax.jit(lambda p, k: arena.play_games(env, agent, p, reference, None, k, num_games=_GAMES.value,
                                                 max_plies=games_lib.max_plies(env)))
    summary = arena.summarize(jax.device_get(play(team.params, key)))
    elo = ratings.elo_difference(summary["wins"], summary["draws"], summary["losses"], saturated="clip")

    # (c) distinct moves across players (the same positions and key for every run)
    positions = move_choices.random_positions(env, _POSITIONS.value, jax.random.fold_in(key, 1))
    choices = move_choices.compare_moves(move_choices.player_moves(team, positions, jax.random.fold_in(key, 2)))
    return dict(
        run=name, workdir=str(workdir), search=team.search_mode, search_note=team.search_description()["search_note"],
        num_players=n, lam=config.team.lam, l0=config.diversity.l0,
        ema_rate=config.diversity.ema_rate, iterations=last,
        d_by_iteration={it: [round(d, 4) for d in distances[it]] for it in checkpoints},
        final_d_mean=float(np.mean(distances[last])), final_d_min=float(np.min(distances[last])),
        reference=_REFERENCE.value, player0=dict(wins=summary["wins"], draws=summary["draws"],
                                                 losses=summary["losses"], score=summary["score"],
                                                 score_stderr=summary["score_stderr"], elo=float(elo.elo),
                                                 elo_stderr=float(elo.stderr)),
        distinct_moves_mean=choices.distinct_mean, positions=int(choices.distinct.size),
        share_positions_with_disagreement=float((choices.distinct > 1).mean()),
        own_move_share=choices.unique_share.tolist(),
    )


def main(argv):
    del argv
    results = []
    for item in _RUNS.value:
        name, _, workdir = item.partition("=")
        results.append(report_run(name, pathlib.Path(workdir)))
    print("| run | search | n | λ | ℓ0 | final d (mean / min) | player 0 vs %s: score ± SE | "
          "distinct moves / position |" % _REFERENCE.value)
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        p0 = r["player0"]
        search = "extrinsic-only (ablation)" if r["search"] == "extrinsic_only" else "as in self-play"
        print(f"| {r['run']} | {search} | {r['num_players']} | {r['lam']} | {r['l0']} | {r['final_d_mean']:.3f} / "
              f"{r['final_d_min']:.3f} | {p0['score']:.3f} ± {p0['score_stderr']:.3f} (W{p0['wins']} D{p0['draws']} "
              f"L{p0['losses']}) | {r['distinct_moves_mean']:.2f} |")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)
