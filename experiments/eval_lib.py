"""Shared by the evaluation scripts: load a team from a run's checkpoint, write reports."""

import dataclasses
import functools
import pathlib
import sys
from typing import Callable, Optional, Sequence

from azdb_jax import checkpoint
from azdb_jax.evaluation import team as team_lib
from experiments import run_lib


def load_team(workdir, *, step: Optional[int] = None, num_players: Optional[int] = None,
              num_simulations: Optional[int] = None, lam: float = 1.0, name: Optional[str] = None) -> team_lib.Team:
    """The team saved in ``workdir`` (a run directory of experiments/train.py).

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
    config, components, state = run_lib.load_run(workdir, step)
    saved_step = int(state.iteration)
    search_config = dataclasses.replace(config.search, num_simulations=num_simulations or config.run.eval_simulations)
    team = team_lib.Team(env=components.env, apply_fn=components.network.apply, params=state.train_state.params,
                         num_players=config.team.num_players, search_config=search_config, lam=lam,
                         name=name or f"{workdir.name}@{saved_step}", step=saved_step)
    team_lib.check_num_players(team, num_players, source=f"checkpoint {workdir}/checkpoints (step {saved_step})")
    return team


# Bad input a user can fix: reported as one line (file, line and reason are in the message).
INPUT_ERRORS = (FileNotFoundError, ValueError, checkpoint.CheckpointError)


def input_errors_exit(main: Callable[[Sequence[str]], None]) -> Callable[[Sequence[str]], None]:
    """Wraps an absl ``main`` so that bad input (a missing or malformed data file, a bad
    flag value, a missing, corrupt or mismatched checkpoint) ends the script with its
    message and exit status 2 instead of a traceback. Other errors propagate."""

    @functools.wraps(main)
    def wrapped(argv: Sequence[str]) -> None:
        try:
            main(argv)
        except INPUT_ERRORS as e:
            print(f"{pathlib.Path(sys.argv[0]).name}: error: {e}", file=sys.stderr)
            sys.exit(2)

    return wrapped


__all__ = ["load_team", "input_errors_exit", "INPUT_ERRORS"]
