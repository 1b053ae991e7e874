"""The trained team behind the engine: one ``TeamSolver`` per simulation budget.

Positions are answered by ``azdb_jax.evaluation.solvers.TeamSolver``, the evaluation
API every other chess protocol uses, so the engine searches exactly as the puzzle and
match evaluations do (each player's latent, the team's default evaluation search, no
noise). One search answers every player and every selection rule; the engine then
plays the column its options ask for:

- a selection rule of Eq. 9 (``visit``, ``value``, ``lcb``, ``gap``): the team's move,
  and the player the rule chose (the player whose move and value the team's are);
- ``player``: one fixed player's move;
- ``lookup``: the player an opening-specialisation table names for the game's opening
  and the engine's colour (``azdb_jax.uci.lookup``), else the fallback rule.

Nodes are network evaluations: simulations × players searched. The team plays chess or
Gardner chess (``variant``: the UCI_Variant name, chess or gardner), with boards from
``azdb_jax.envs.board_interop``.
"""

import dataclasses
import time
from typing import Any, Dict, List, Optional, Sequence

from azdb_jax.envs import board_interop
from azdb_jax.evaluation import solvers
from azdb_jax.evaluation.team import Team

RULES = tuple(solvers.DEFAULT_RULES)  # visit, value, lcb, gap


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """One searched position."""

    move: str  # UCI move ("" when the position is over)
    value: float  # the chosen player's value V for the side to move, in [-1, 1]
    player: int  # the team player whose move is played
    column: str  # the solver column played (team_<rule> or player_<j>)
    simulations: int  # per player
    nodes: int  # simulations × players searched
    seconds: float
    player_moves: Sequence[str]  # [n] every player's move
    player_values: Sequence[float]  # [n]


class TeamSearcher:
    """Compiled team searches of one checkpoint, by number of simulations per player."""

    def __init__(self, team: Team, *, move: str = "visits", seed: int = 0):
        env_id = getattr(team.env, "id", team.env)
        if env_id not in board_interop.ENV_IDS:
            raise ValueError(f"the engine plays {' or '.join(board_interop.ENV_IDS)}; {team.name} plays {env_id!r}")
        self._game = board_interop.for_env(env_id)
        self.variant = self._game.variant  # chess or gardner, as UCI_Variant names them
        self.team = team
        self.move = move
        self.seed = seed
        self._solvers: Dict[int, solvers.TeamSolver] = {}
        # Compile the board's own steps (Gardner's are jitted) before the first clock starts.
        board = self._game.new_board(None)
        board.push(next(iter(board.legal_moves)))

    @property
    def num_players(self) -> int:
        return self.team.num_players

    @property
    def default_simulations(self) -> int:
        """The team's evaluation budget (the run's ``run.eval_simulations`` when loaded)."""
        return self.team.search_config.num_simulations

    def compiled(self, simulations: int) -> bool:
        return simulations in self._solvers

    def prepare(self, simulations: int) -> float:
        """Compiles the search of ``simulations`` per player (if needed) and returns the
        seconds one search of the start position takes once compiled."""
        solver = self._solver(simulations)
        board = [self._game.new_board(None)]
        solver(board)  # compiles on first use
        start = time.perf_counter()
        solver(board)
        return time.perf_counter() - start

    def _solver(self, simulations: int) -> solvers.TeamSolver:
        if simulations not in self._solvers:
            self._solvers[simulations] = solvers.TeamSolver(
                self.team.with_simulations(int(simulations)), rules=RULES, move=self.move, homogeneous_copies=0,
                batch_size=1, seed=self.seed)
        return self._solvers[simulations]

    def search(self, board: Any, simulations: int, *, rule: str = "visit",
               player: Optional[int] = None) -> SearchResult:
        """Searches ``board``; plays ``player``'s move when given, else the team's under ``rule``."""
        solver = self._solver(simulations)
        start = time.perf_counter()
        out = solver([board])
        seconds = time.perf_counter() - start
        n = self.num_players
        moves = [out.moves[f"player_{j}"][0] for j in range(n)]
        values = [float(out.values[f"player_{j}"][0]) for j in range(n)]
        if player is not None:
            column, chosen = f"player_{player}", player
        else:
            column = f"team_{rule}"
            chosen = chosen_player(moves, values, out.moves[column][0], float(out.values[column][0]))
        return SearchResult(move=out.moves[column][0], value=float(out.values[column][0]), player=chosen,
                            column=column, simulations=simulations, nodes=simulations * n, seconds=seconds,
                            player_moves=moves, player_values=values)


def chosen_player(moves: List[str], values: List[float], team_move: str, team_value: float) -> int:
    """The player whose answer the team played: the team's column copies the chosen
    player's move and value, so the first player with both is it (rules break ties
    towards the lowest index too)."""
    for j, (move, value) in enumerate(zip(moves, values)):
        if move == team_move and value == team_value:
            return j
    for j, move in enumerate(moves):
        if move == team_move:
            return j
    return 0


__all__ = ["TeamSearcher", "SearchResult", "chosen_player", "RULES"]
