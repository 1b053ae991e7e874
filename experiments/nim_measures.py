"""Expert and champion measures of a Nim run's checkpoints (SPEC §2 "Nim"; Zhou & Riis).

  python experiments/nim_measures.py --workdir=runs/nim
  python experiments/nim_measures.py --workdir=runs/nim --steps=10,20,30 --simulations=32 --games=32
  python experiments/nim_measures.py --workdir=runs/nim7 --max_positions=10000 --nosearch --nochampion
  python experiments/nim_measures.py --workdir=runs/nim5 --max_positions=0 --nochampion --initial

For every checkpoint and team player: the expert measure (policy top-1 accuracy against
the nim-sum winning moves, value sign accuracy, both also after search) over every
position of the run's Nim game (or ``--max_positions`` drawn uniformly: Zhou & Riis
measure 10,000 of the 6- and 7-heap boards); then the champion measure: every (checkpoint, player)
plays every other one (both colours, ``--seeds`` rounds of ``--games`` games) and
maximum-likelihood Elo ratings are fitted, anchored at the earliest checkpoint's
player 0, next to each agent's score against the Nim oracle. ``--initial`` adds the
run's untrained network as step 0 (what search alone finds with it). The report is
``<out>.json`` (summary with the pairwise results, and one row per checkpoint and
player) and ``<out>.csv`` (the rows); default ``<workdir>/reports/nim_measures``.
"""

import pathlib
import sys
from typing import List

from absl import app, flags, logging

from azdb_jax import distributed  # imports no JAX: safe before jax.distributed.initialize

if __name__ == "__main__":  # multi-host: join the run before the imports below create the XLA backend
    distributed.define_flags()
    distributed.initialize_from_argv(sys.argv)

import tqdm  # noqa: E402

from azdb_jax import cli  # noqa: E402
from azdb_jax.cli import common_flags  # noqa: E402
from azdb_jax.evaluation import loading, reports  # noqa: E402
from azdb_jax.evaluation import nim as nim_eval  # noqa: E402


def main(argv: List[str]) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # checkpoint restores log at INFO
    from azdb_jax import checkpoint  # pylint: disable=g-import-not-at-top

    workdir = pathlib.Path(_WORKDIR.value)
    steps = sorted(set(_STEPS.value))
    if not steps:
        with checkpoint.RunCheckpointer(str(workdir / "checkpoints"), create=False) as manager:
            steps = sorted(manager.all_steps())
        if not steps:
            raise FileNotFoundError(f"no checkpoints in {workdir / 'checkpoints'}")
    if _INITIAL.value and steps[0] <= 0:
        raise ValueError(f"--initial measures the untrained network as step 0, but --steps has {steps[0]}")
    teams = [(step, loading.load_team(workdir, step=step, num_simulations=_SIMULATIONS.value))
             for step in tqdm.tqdm(steps, desc="loading", unit="ckpt")]
    if _INITIAL.value:
        teams.insert(0, (0, _initial_team(workdir, teams[0][1])))
    summary, rows = nim_eval.measure_checkpoints(teams, num_games=_GAMES.value, num_seeds=_SEEDS.value,
                                                 seed=_SEED.value, max_positions=_MAX_POSITIONS.value or None,
                                                 search=_SEARCH.value, champion=_CHAMPION.value)
    summary["workdir"] = str(workdir)
    out = _OUT.value or str(workdir / "reports" / "nim_measures")
    json_path, csv_path = reports.write_report(out, summary, rows)
    print(nim_eval.format_measures(rows))
    print(f"Nim measures of {len(teams)} checkpoint(s): report written to {json_path} and {csv_path}")


def _initial_team(workdir: pathlib.Path, like):
    """``like`` (a checkpoint's team of the run) with the run's initial network and ψ: what
    its configuration and seed build before any training (``trainer.init_trainer``)."""
    import jax  # pylint: disable=g-import-not-at-top

    from azdb_jax import runner, runs  # pylint: disable=g-import-not-at-top

    config = runs.load_run_config(workdir)
    state = runner.programs(config, workdir, num_devices=1, local=True).init(jax.random.PRNGKey(config.run.seed))
    return like.with_arrays(state.train_state.params, state.expected_features.psi)


if __name__ == "__main__":
    _WORKDIR = common_flags.define_workdir("Run directory of experiments/train.py (a Nim run).", required=True)
    _STEPS = common_flags.define_steps("Checkpoint steps, comma-separated (default: every checkpoint kept).")
    _SIMULATIONS = common_flags.define_simulations("Simulations per search (default: the run's evaluation budget).")
    _GAMES = common_flags.define_games("Games per pair of agents and seed (even: both colours).", default=16,
                                       lower_bound=2)
    _SEEDS = flags.DEFINE_integer("seeds", 2, "Independent rounds of --games games per pair.", lower_bound=1)
    _SEED = common_flags.define_seed("Random seed of the searches and games.")
    _OUT = common_flags.define_out("Report prefix (default: <workdir>/reports/nim_measures).")
    _MAX_POSITIONS = flags.DEFINE_integer("max_positions", 10_000, "Measure at most this many non-terminal "
                                          "positions, drawn uniformly with --seed (0: every position).",
                                          lower_bound=0)
    _SEARCH = flags.DEFINE_bool("search", True, "Also the expert measure after search.")
    _INITIAL = flags.DEFINE_bool("initial", False, "Also the run's untrained network (its configuration and seed, "
                                 "before the first iteration) as step 0: the baseline of the measures after search.")
    _CHAMPION = flags.DEFINE_bool("champion", True, "Also the champion measure (round robin of the checkpoints' "
                                  "players, Elo, score against the oracle).")
    app.run(cli.input_errors_exit(main))
