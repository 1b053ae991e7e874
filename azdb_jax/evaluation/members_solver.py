"""Several teams of one configuration answering puzzles as members of one program.

An arm's training seeds, or a population's members, are teams that differ only in their
parameters' values and ψ. ``MembersSolver`` answers each of them with the columns and
oracle groups its own ``solvers.TeamSolver`` gives (its players, its selection rules,
its homogeneous control), named ``member_<k>/<column>``, while every team's batch is
searched in one call of one compiled program (``jax.vmap`` over the stacked parameters
and ψ, the control's copies too). The reproduction's solve rates use it for each arm's
runs of one configuration (``reproduction.solve_rates.evaluate(batch_members=)``).
"""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import chess
import jax

from azdb_jax.agent import Agent
from azdb_jax.evaluation import solver_search, solvers
from azdb_jax.evaluation.team import SolverOutput


def member_column(k: int, column: str) -> str:
    """Column (or group) ``column`` of member ``k`` of a ``MembersSolver``."""
    return f"member_{k}/{column}"


class MembersSolver:
    """Several teams of one configuration (an arm's training seeds, a population's
    members) answering as separate teams, searched as members of one program.

    Each team answers with the columns and groups of ``solvers.TeamSolver(team, **options)``
    (its players, its rules, its own homogeneous control), named ``member_<k>/<column>``
    (``member_column``); ``split`` takes one member's answers out of a row of
    ``puzzles.run_lichess``, named as its own solver names them. An answer does not
    depend on the batch a position comes in, so the rows are each team's own solver's.

    Args:
      teams: the teams.
      batch_members: search every team's batch in one call of one program (``jax.vmap``
        over the parameters and ψ, the control's copies too) rather than one call per
        team. Default (None): where the teams search alike and the backend is not a CPU;
        True insists (ValueError when the teams differ).
      programs: a dict that holds the compiled searches (shared with a
        ``solvers.TeamSolver`` of any of these teams).
      **options: keyword arguments of ``solvers.TeamSolver`` (``rules``,
        ``homogeneous_copies``, ``batch_size``, ...).
    """

    def __init__(self, teams: Sequence[Agent], *, batch_members: Optional[bool] = None,
                 programs: Optional[Dict[Any, Callable]] = None, **options):
        teams = list(teams)
        if not teams or not all(isinstance(t, Agent) for t in teams):
            raise ValueError("MembersSolver needs a sequence of one or more teams")
        self._programs: Dict[Any, Callable] = {} if programs is None else programs
        self.solvers = [solvers.TeamSolver(team, programs=self._programs, **options) for team in teams]
        alike = solver_search.search_alike(teams)
        if batch_members and not alike:
            raise ValueError("batch_members: the teams must search alike (one network, team size, search settings, "
                             "λ_i, ℓ0 and search mode)")
        self.batch_members = alike and jax.default_backend() != "cpu" if batch_members is None else bool(batch_members)
        self.teams = teams
        self.columns: Tuple[str, ...] = tuple(member_column(k, c) for k, solver in enumerate(self.solvers)
                                              for c in solver.columns)
        self.groups: Dict[str, Tuple[str, ...]] = {
            member_column(k, group): tuple(member_column(k, c) for c in columns)
            for k, solver in enumerate(self.solvers) for group, columns in solver.groups.items()}

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        """Moves and values of every member's columns for ``boards``."""
        outputs = self._batched(boards) if self.batch_members else [solver(boards) for solver in self.solvers]
        moves = {member_column(k, c): m for k, out in enumerate(outputs) for c, m in out.moves.items()}
        values = {member_column(k, c): v for k, out in enumerate(outputs) for c, v in out.values.items()}
        return SolverOutput(moves=moves, values=values)

    def _batched(self, boards: Sequence[chess.Board]) -> List[SolverOutput]:
        first = self.solvers[0]
        searched = None if first.players is None else min(first.players, first.team.num_players)
        stacked = solver_search.stacked_arrays(self.teams)
        answers = [solver.begin_answers() for solver in self.solvers]
        boards = list(boards)
        for begin in range(0, len(boards), first.batch_size):
            batch = solver_search.prepare_batch(first.game, boards[begin:begin + first.batch_size],
                                                first.batch_size, first.team.env)
            program = solver_search.search_program(self._programs, first.team, slot=0, searched=searched,
                                                   copies=first.homogeneous_copies, max_pieces=batch.max_pieces,
                                                   members=True)
            players, copies = jax.device_get(program(*stacked, jax.random.PRNGKey(first.seed), batch.indices,
                                                     batch.states))
            for k, solver in enumerate(self.solvers):
                pick = lambda tree, k=k: None if tree is None else jax.tree.map(lambda x: x[k], tree)  # noqa: E731
                solver.add_answers(answers[k], batch, pick(players), pick(copies))
        return [solver.end_answers(a) for solver, a in zip(self.solvers, answers)]

    def split(self, row: Dict[str, Any], k: int) -> Dict[str, Any]:
        """Member ``k``'s part of a row whose answers are this solver's: the shared fields,
        then member ``k``'s fields without their prefix (the others' dropped)."""
        prefix = member_column(k, "")
        out = {}
        for name, value in row.items():
            if name.startswith(prefix):
                out[name[len(prefix):]] = value
            elif not name.startswith("member_"):
                out[name] = value
        return out


__all__ = ["MembersSolver", "member_column"]
