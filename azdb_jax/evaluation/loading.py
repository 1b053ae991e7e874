"""A trained team from a run's directory: config, checkpoint, search settings."""

import dataclasses
import pathlib
from typing import Optional

from azdb_jax import runner
from azdb_jax.evaluation import team as team_lib


def load_team(workdir, *, step: Optional[int] = None, num_players: Optional[int] = None,
              num_simulations: Optional[int] = None, lam: float = 1.0, name: Optional[str] = None) -> team_lib.Team:
    """The team saved in ``workdir`` (a run directory written by ``azdb_jax.runner.train``).

    Args:
      workdir: the run directory (holds ``config.json`` and ``checkpoints/``).
      step: checkpoint step (iteration); default the latest.
      num_players: when given, the checkpoint's team size must match it.
      num_simulations: evaluation search budget; default the run's ``run.eval_simulations``.
      lam: λ for evaluation searches (1: the game's outcome only).
      name: label; default ``<workdir name>@<step>``.

    Raises:
      FileNotFoundError / checkpoint.CheckpointError: no run, or a missing or corrupt checkpoint.
      ValueError: the team size differs from ``num_players``.
    """
    workdir = pathlib.Path(workdir)
    config, components, state = runner.load_run(workdir, step)
    saved_step = int(state.iteration)
    search_config = dataclasses.replace(config.search, num_simulations=num_simulations or config.run.eval_simulations)
    team = team_lib.Team(env=components.env, apply_fn=components.network.apply, params=state.train_state.params,
                         num_players=config.team.num_players, search_config=search_config, lam=lam,
                         name=name or f"{workdir.name}@{saved_step}", step=saved_step)
    team_lib.check_num_players(team, num_players, source=f"checkpoint {workdir}/checkpoints (step {saved_step})")
    return team


__all__ = ["load_team"]
