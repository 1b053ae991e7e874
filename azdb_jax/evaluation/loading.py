"""A trained team from a run's directory, for the evaluation code (``runs.load_agent``)."""

from typing import Optional

from azdb_jax import agent as agent_lib
from azdb_jax import runs
from azdb_jax.evaluation import team as team_lib


def load_team(workdir, *, step: Optional[int] = None, num_players: Optional[int] = None,
              num_simulations: Optional[int] = None, extrinsic_only: bool = False,
              name: Optional[str] = None) -> agent_lib.Agent:
    """The team saved in ``workdir`` (a run directory written by ``azdb_jax.runner.train``),
    as the library's one agent type: ``runs.load_agent``, which reads the run's config,
    parameters and ψ and nothing else.

    The team searches as its players did in self-play (SPEC §2): each player's ``λ_i``
    from the run's config (``λ_0 = 1``), the intrinsic reward of the checkpoint's
    expected features ψ with the run's ℓ0, ``v_d`` at the leaves, no root noise.
    ``extrinsic_only=True`` gives the paper's ablation (λ = 1 for every player); its name
    then ends in ``/extrinsic_only`` so that match reports and PGN headers say so.

    Args:
      workdir: the run directory (holds ``config.json`` and ``checkpoints/``).
      step: checkpoint step (iteration); default the latest.
      num_players: when given, the checkpoint's team size must match it.
      num_simulations: evaluation search budget; default the run's ``run.eval_simulations``.
      extrinsic_only: search with λ = 1 for every player (the ablation).
      name: label; default ``<workdir name>@<step>`` (plus ``/extrinsic_only``).

    Raises:
      FileNotFoundError / checkpoint.CheckpointError: no run, or a missing or corrupt checkpoint.
      ValueError: the team size differs from ``num_players``.
    """
    team = runs.load_agent(workdir, step, num_simulations=num_simulations, extrinsic_only=extrinsic_only, name=name)
    team_lib.check_num_players(team, num_players, source=f"checkpoint {workdir}/checkpoints (step {team.step})")
    return team


__all__ = ["load_team"]
