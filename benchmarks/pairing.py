"""One Table 2 pairing's matches timed: every AZdb player and the GAP team against AZ's player 0.

  python benchmarks/pairing.py                                   # the cpu scale's sizes
  python benchmarks/pairing.py --games=8 --simulations=4 --max_plies=10

The networks are fresh (untrained) ``--preset`` networks, an AZdb team (the preset's team)
and an AZ (one player), with a non-zero ψ so that the intrinsic reward is searched as in a
trained team. The games are those of ``azdb_jax.reproduction.matches`` (its policies,
opening positions, colours, seeds, adjudication and sampled first plies:
``pairing_policies``) at ``--games`` games an agent. Each policy's match is played twice:
``<agent>_first_s`` (compiling included) and ``<agent>_second_s`` (the compiled program
again); untrained games end sooner than trained ones, so the seconds of play are a lower
bound for a trained pairing.
"""

import time
from typing import List

from absl import app, flags
import jax
import jax.numpy as jnp

import report  # benchmarks/report.py (this folder is on the path when a script runs)

from azdb_jax import presets, runner
from azdb_jax import agent as agent_lib
from azdb_jax import config as config_lib
from azdb_jax.cli import common_flags
from azdb_jax.evaluation import matches as matches_lib
from azdb_jax.reproduction import matches as group
from azdb_jax.reproduction import openings as openings_group

_PRESET = flags.DEFINE_enum("preset", "gardner_cpu", sorted(presets.PRESETS), "The AZdb team's configuration.")
_GAMES = common_flags.define_games("Games an agent (eval.match_games).", default=144)
_SIMULATIONS = common_flags.define_simulations("Simulations a move.", default=32)
_MAX_PLIES = common_flags.define_max_plies("Plies a game at most (then adjudicated).", default=100)
_OPENINGS = flags.DEFINE_integer("openings", 12, "Opening positions (eval.openings).", lower_bound=1)
_OUT = common_flags.define_out("Write the timings as JSON here (default: print them only).")


def _agent(config: config_lib.TrainConfig, seed: int) -> agent_lib.Agent:
    state = runner.programs(config).init(jax.random.PRNGKey(seed))
    psi = state.expected_features.psi + 0.01  # as after training: the intrinsic reward is on
    return agent_lib.Agent.from_config(config, state.train_state.params, psi).with_simulations(_SIMULATIONS.value)


def main(argv: List[str]) -> None:
    del argv
    config = presets.get_preset(_PRESET.value)
    azdb = _agent(config, 0)
    az = _agent(config_lib.apply_overrides(config, ["team.num_players=1", "team.lam=1.0",
                                                    "team.matchmaker=selfplay"]), 1)
    game = azdb.env.id
    openings = openings_group.opening_positions(game, _OPENINGS.value)
    seeds = list(range(group.num_match_seeds(_GAMES.value, len(openings))))
    # the reproduction's own policies, starts and adjudicator (ψ and parameters as arguments)
    policies = group.pairing_policies(game, azdb, az, openings, key=("azdb", "az"))
    common = dict(starts=policies.starts, seeds=seeds, max_plies=_MAX_PLIES.value,
                  rng_key=jax.random.PRNGKey(group.SEED), adjudicate=policies.adjudicate,
                  batch_pairs=len(openings) * len(seeds))
    agents = {"player": (policies.latent, (azdb.psi, (azdb.params, jnp.int32(1)))),
              "team_gap": (policies.rules["gap"], (azdb.psi, azdb.params))}
    out = dict(preset=_PRESET.value, backend=jax.default_backend(), games=2 * len(openings) * len(seeds),
               simulations=_SIMULATIONS.value, max_plies=_MAX_PLIES.value)
    for name, (policy, params) in agents.items():
        for call in ("first", "second"):
            started = time.perf_counter()
            match = matches_lib.play_match(policies.env, policy, params, policies.opponent, (az.psi, az.params),
                                           **common)
            out[f"{name}_{call}_s"] = round(time.perf_counter() - started, 2)
        out[f"{name}_mean_plies"] = round(float(match.length.mean()), 2)
    report.emit(out, _OUT.value)


if __name__ == "__main__":
    app.run(main)
