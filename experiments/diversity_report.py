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
from typing import Dict

from absl import app, flags
import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from azdb_jax import distributed  # noqa: E402  (imports no JAX: safe before jax.distributed.initialize)

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

from azdb_jax import arena, opponents, ratings  # noqa: E402
from azdb_jax import runner  # noqa: E402
from azdb_jax.evaluation import loading, matches  # noqa: E402

_RUNS = flags.DEFINE_list("runs", [], "name=workdir pairs.")
_REFERENCE = flags.DEFINE_string("reference", "minimax2", "Fixed opponent (azdb_jax.opponents.opponents_for).")
_GAMES = flags.DEFINE_integer("games", 200, "Games against the reference (even).")
_POSITIONS = flags.DEFINE_integer("positions", 200, "Positions for the move-choice comparison.")
_SIMULATIONS = flags.DEFINE_integer("simulations", 24, "Search simulations in evaluation.")
_SEED = flags.DEFINE_integer("seed", 123, "Evaluation seed.")
_EXTRINSIC_ONLY = flags.DEFINE_bool("extrinsic_only", False,
                                    "Search with λ = 1 for every player (the paper's ablation, Fig. 8 dashed) "
                                    "instead of as in self-play.")


def _distances(workdir: pathlib.Path) -> Dict[int, list]:
    by_iteration = {}
    for line in (workdir / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["kind"] == "train":
            by_iteration[record["iteration"]] = [v for k, v in sorted(record.items()) if k.startswith("d_")]
    return by_iteration


def _random_openings(env, key, count: int):
    """Positions after 0-6 uniformly random plies from the start (none terminal)."""
    def one(key):
        init_key, plies_key, key = jax.random.split(key, 3)
        state = env.init(init_key)
        plies = jax.random.randint(plies_key, (), 0, 7)

        def ply(i, carry):
            state, key = carry
            key, sub = jax.random.split(key)
            action = opponents.sample_uniform(sub, state.legal_action_mask)
            stepped = env.step(state, action)
            keep = (i >= plies) | stepped.terminated
            return jax.tree.map(lambda a, b: jnp.where(keep, a, b), state, stepped), key

        return jax.lax.fori_loop(0, 6, ply, (state, key))[0]

    return jax.jit(jax.vmap(one))(jax.random.split(key, count))


def report_run(name: str, workdir: pathlib.Path) -> dict:
    config = runner.load_run_config(workdir)
    team = loading.load_team(workdir, num_simulations=_SIMULATIONS.value, extrinsic_only=_EXTRINSIC_ONLY.value)
    env, params, n = team.env, team.params, team.num_players
    key = jax.random.PRNGKey(_SEED.value)

    # (a) distances over training
    distances = _distances(workdir)
    last = max(distances)
    checkpoints = sorted({1, *range(0, last + 1, max(1, last // 6)), last} & set(distances))

    # (b) player 0 against the reference
    agent = matches.player_agent(team, 0)
    reference = opponents.opponents_for(env.id, env)[_REFERENCE.value]
    play = jax.jit(lambda p, k: arena.play_games(env, agent, p, reference, None, k, num_games=_GAMES.value,
                                                 max_plies=runner.max_plies(env)))
    summary = arena.summarize(jax.device_get(play(params, key)))
    elo = ratings.elo_difference(summary["wins"], summary["draws"], summary["losses"], saturated="clip")
    games = max(summary["finished"], 1)
    score_se = float(np.sqrt(max(elo.score * (1 - elo.score), 1e-9) / games))

    # (c) distinct moves across players
    positions = _random_openings(env, jax.random.fold_in(key, 1), _POSITIONS.value)
    moves = []
    for player in range(n):
        policy = matches.player_agent(team, player)
        moves.append(np.asarray(jax.jit(policy)(params, jax.random.fold_in(key, 2), positions)))
    moves = np.stack(moves)  # [n, P]
    distinct = np.array([len(set(moves[:, p])) for p in range(moves.shape[1])])
    return dict(
        run=name, workdir=str(workdir), search=team.search_mode, search_note=team.search_description()["search_note"],
        num_players=n, lam=config.team.lam, l0=config.diversity.l0,
        ema_rate=config.diversity.ema_rate, iterations=last,
        d_by_iteration={it: [round(d, 4) for d in distances[it]] for it in checkpoints},
        final_d_mean=float(np.mean(distances[last])), final_d_min=float(np.min(distances[last])),
        reference=_REFERENCE.value, player0=dict(wins=summary["wins"], draws=summary["draws"],
                                                 losses=summary["losses"], score=summary["score"],
                                                 score_se=score_se, elo=float(elo.elo), elo_se=float(elo.stderr)),
        distinct_moves_mean=float(distinct.mean()), positions=int(distinct.size),
        share_positions_with_disagreement=float((distinct > 1).mean()),
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
              f"{r['final_d_min']:.3f} | {p0['score']:.3f} ± {p0['score_se']:.3f} (W{p0['wins']} D{p0['draws']} "
              f"L{p0['losses']}) | {r['distinct_moves_mean']:.2f} |")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    app.run(main)
