"""The solver interface of the puzzle runners.

The team every evaluation measures is the library's one agent type,
``azdb_jax.agent.Agent``: a network with its parameters, the game it plays, its size, the
search settings used to evaluate it and what its players' searches mix in (λ_i, ψ, ℓ0: by
default they search as in self-play; ``extrinsic_only`` is the paper's ablation).
``azdb_jax.runs.load_agent`` (and ``evaluation.loading.load_team``) build one from a run's
checkpoint; tests build one from any ``apply_fn`` (e.g. a stub network).

A *solver* answers chess positions (``chess.Board``; Gardner chess: ``GardnerBoard``, the
same board API) for the puzzle runners (``azdb_jax.evaluation.puzzles``):
``solver(boards) -> SolverOutput``, one UCI move and one value per position for each of
its *columns* (a team player, a selection rule, a control copy, a reference engine).
``groups`` names oracle columns scored as "solved if any member solved it"
(max-over-latents, the homogeneous control's max over copies).
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple

import chess
import numpy as np

from azdb_jax import agent as agent_lib


def label_rows(rows: Sequence[Mapping[str, Any]], team: agent_lib.Agent) -> List[Dict[str, Any]]:
    """``rows`` with a ``search`` column (the team's search mode), so that a CSV of the
    ablation says so on every line."""
    return [{**row, "search": team.search_mode} for row in rows]


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


def check_num_players(team: agent_lib.Agent, expected: Optional[int], *, source: str = "checkpoint") -> None:
    """Raises ``ValueError`` when ``expected`` is given and differs from the team's size."""
    if expected is not None and expected != team.num_players:
        raise ValueError(f"{source} holds a team of {team.num_players} player(s), but {expected} were asked for; "
                         f"pass num_players={team.num_players} (or leave it unset)")


__all__ = ["Solver", "SolverOutput", "check_num_players", "label_rows"]
