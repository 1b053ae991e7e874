"""Evaluation of trained teams: puzzle suites, matches, opening diversity, Nim measures,
and the Stockfish reference engine (SPEC §2)."""

from azdb_jax.evaluation.team import Solver, SolverOutput, Team, check_num_players

__all__ = ["Team", "Solver", "SolverOutput", "check_num_players"]
