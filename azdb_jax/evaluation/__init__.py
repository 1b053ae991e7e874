"""Evaluation of trained teams (SPEC §2): puzzle suites, matches, opening diversity,
Nim measures and the Stockfish reference engine.

- ``team``: the ``Solver`` interface of the puzzle runners (the trained team itself is
  ``azdb_jax.agent.Agent``).
- ``solvers``: ``TeamSolver`` — every player, every selection rule, max-over-latents and
  the homogeneous control from one batched search per position; the same over the first
  ``k`` players for each number of trials, over several training seeds as one team, and
  one player's view of each move (prior, values, visits); ``members_solver``: several
  teams of one configuration (an arm's seeds) answering apart, searched as members of
  one program.
- ``puzzles``: STS (scored), bm/am EPD suites, Lichess multi-step puzzles and the
  paper's Penrose/Challenge value puzzles, for any solver; ``puzzle_eval``: one suite
  for a team, a run or an engine, written as a report.
- ``matches``: agent vs agent from book positions (a single player, a team with a rule,
  a strength-limited engine), W/D/L, Elo ± SE; ``specialisation``: the per-opening
  player lookup built on training seeds and scored on held-out seeds (Appendix C.5);
  ``game_records``: the games as PGN (chess) or text; ``agent_match``: a match
  between two agents named by spec strings (runs, engines, fixed opponents), written
  as a report with its games.
- ``openings``: distinct moves across latents over the ECO openings.
- ``nim``: the expert (accuracy vs the oracle) and champion (Elo vs checkpoints) measures.
- ``stockfish``: the reference engine as a solver and as a strength-limited opponent;
  ``reference_engines``: a game's reference engine (Stockfish, Fairy-Stockfish) found
  through its record: its name, binary and players.
- ``learning_check``: the learning acceptance recipes (short AZ runs that must reach a
  known strength); ``gardner_crosscheck``: our Gardner chess env against Fairy-Stockfish,
  position by position.
- ``reports``: atomic JSON + CSV reports.

Submodules that pull in python-chess engines or the arena are imported on use.
"""

from azdb_jax.evaluation.team import Solver, SolverOutput, check_num_players

__all__ = ["Solver", "SolverOutput", "check_num_players"]
