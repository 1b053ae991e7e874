"""What the evaluation code needs of a trained team, and the solver interface of the puzzle runners.

A ``Team`` is a network with its parameters, the game it plays, its size and the
search settings used to evaluate it. ``experiments/eval_lib.load_team`` builds one
from a run's checkpoint; tests build one from any ``apply_fn`` (e.g. a stub network).

A *solver* answers chess positions (``chess.Board``; Gardner chess: ``GardnerBoard``, the
same board API) for the puzzle runners (``azdb_jax.evaluation.puzzles``):
``solver(boards) -> SolverOutput``, one UCI move and one value per position for each of
its *columns* (a team player, a selection rule, a control copy, a reference engine).
``groups`` names oracle columns scored as "solved if any member solved it"
(max-over-latents, the homogeneous control's max over copies).
"""

import dataclasses
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple

import chess
import jax
import numpy as np
import pgx.core

from azdb_jax import search as search_lib

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class Team:
    """A trained team ready to search.

    Attributes:
      env: the game.
      apply_fn: ``(params, observation [B, ...], player [B]) -> NetOutput``.
      params: the network parameters.
      num_players: n, the number of latents the network was trained with.
      search_config: the evaluation search (no noise is added in evaluation).
      lam: λ used when searching in evaluation; 1 (the default) scores positions by the
        game's outcome only, which is what puzzles and matches measure.
      name: a label for reports and PGN headers.
      step: the checkpoint step the parameters come from, when loaded from a run.
    """

    env: pgx.core.Env
    apply_fn: search_lib.ApplyFn
    params: Any
    num_players: int
    search_config: search_lib.SearchConfig
    lam: float = 1.0
    name: str = "team"
    step: Optional[int] = None

    def __post_init__(self):
        if not isinstance(self.num_players, int) or self.num_players < 1:
            raise ValueError(f"num_players must be an int >= 1, got {self.num_players!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1], got {self.lam!r}")

    def with_simulations(self, num_simulations: int) -> "Team":
        """The same team searching with ``num_simulations`` simulations per move."""
        if not isinstance(num_simulations, int) or num_simulations < 1:
            raise ValueError(f"num_simulations must be an int >= 1, got {num_simulations!r}")
        return dataclasses.replace(
            self, search_config=dataclasses.replace(self.search_config, num_simulations=num_simulations))

    def with_env(self, env: pgx.core.Env) -> "Team":
        """The same team on another env with the same observations and actions (e.g. chess
        with the 32-piece move generator)."""
        return dataclasses.replace(self, env=env)


class SolverOutput(NamedTuple):
    """A solver's answers to a batch of ``B`` positions, per column."""

    moves: Mapping[str, List[str]]  # column -> [B] UCI move for the side to move
    values: Mapping[str, np.ndarray]  # column -> [B] value for the side to move in [-1, 1] (NaN: none)


class Solver(Protocol):
    """Answers chess or Gardner chess positions (see the module docstring)."""

    columns: Tuple[str, ...]  # every column of the output, in report order
    groups: Dict[str, Tuple[str, ...]]  # oracle column -> member columns (solved if any member is)

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        ...


def check_num_players(team: Team, expected: Optional[int], *, source: str = "checkpoint") -> None:
    """Raises ``ValueError`` when ``expected`` is given and differs from the team's size."""
    if expected is not None and expected != team.num_players:
        raise ValueError(f"{source} holds a team of {team.num_players} player(s), but {expected} were asked for; "
                         f"pass num_players={team.num_players} (or leave it unset)")


__all__ = ["Team", "Solver", "SolverOutput", "check_num_players"]
