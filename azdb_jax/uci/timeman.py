"""Time management: how long a move may take, and which compiled search fits in it.

A team search is one compiled program per simulation budget (mctx's number of
simulations is static), so the engine does not stop a search half-way: it keeps a few
compiled *levels* (simulations per player), knows how long each takes from measured
searches, and picks the largest level whose expected time fits the move's budget.

The budget for a move with ``t`` ms left, increment ``inc`` and ``m`` moves to the next
time control (``movestogo``; 30 when not given, sudden death):

    budget = t / m + 0.75 · inc,   capped at  (t − reserve) / 2,   reserve = min(1 s, t / 10),

less the ``Move Overhead`` (GUI and process latency). The cap keeps half of what is left
after the reserve for the rest of the game, so a move never takes the clock below the
reserve; with an increment the clock then settles where each move costs about the
increment. ``movetime`` is a budget of its own (less the overhead).
"""

import dataclasses
from typing import Dict, Iterable, Optional

import chess

from azdb_jax.uci.protocol import Go

DEFAULT_MOVES_TO_GO = 30
SAFETY = 1.25  # expected time × SAFETY must fit the budget (measurements vary)
FLOOR = 16  # the smallest compiled level has at most this many simulations (unless MinSimulations says)


def move_budget(go: Go, turn: chess.Color, *, overhead_ms: int) -> Optional[float]:
    """Seconds the move may take, or None when the search has no time limit."""
    if go.infinite or go.ponder:
        return None
    if go.movetime is not None:
        return max(go.movetime - overhead_ms, 0) / 1000.0
    left, inc = go.clock(turn)
    if left is None:
        return None
    moves = min(go.movestogo or DEFAULT_MOVES_TO_GO, DEFAULT_MOVES_TO_GO)
    reserve = min(1000.0, left / 10.0)
    budget = min(left / moves + 0.75 * inc, (left - reserve) / 2.0)
    return max(budget - overhead_ms, 0.0) / 1000.0


@dataclasses.dataclass
class LevelTimes:
    """Expected seconds per search of each compiled level (simulations per player).

    Each level keeps its best (fastest) measured time; what the machine costs *now* is one
    load factor shared by all levels: the largest ratio ``measured / best`` over the last
    ``history`` searches of any level (a slow search is the one that matters on the clock).
    ``expected(level) = best(level) × load``. A level is only re-measured when it is
    played, so a per-level memory would keep a level that was slow once (a load spike)
    out of play for the rest of the session; through the shared factor, the searches the
    engine does play tell it when the spike has passed.
    """

    history: int = 5
    best: Dict[int, float] = dataclasses.field(default_factory=dict)
    ratios: list = dataclasses.field(default_factory=list)

    def record(self, simulations: int, seconds: float) -> None:
        seconds = max(float(seconds), 1e-6)
        self.best[simulations] = min(self.best.get(simulations, seconds), seconds)
        self.ratios.append(seconds / self.best[simulations])
        del self.ratios[:-self.history]

    def load(self) -> float:
        return max(self.ratios, default=1.0)

    def expected(self, simulations: int) -> Optional[float]:
        best = self.best.get(simulations)
        return None if best is None else best * self.load()

    @property
    def levels(self) -> list:
        return sorted(self.best)


def choose_level(times: LevelTimes, budget: Optional[float], *, cap: Optional[int] = None,
                 preferred: Optional[int] = None) -> int:
    """The simulations to search with.

    No budget: ``preferred`` (the engine's main level) or the largest measured level.
    With a budget: the largest measured level (at most ``cap``, e.g. from ``go nodes``)
    whose expected time × ``SAFETY`` fits; the smallest level when none fits.
    """
    levels = [s for s in times.levels if cap is None or s <= cap] or times.levels[:1]
    if not levels:
        raise ValueError("no compiled search level to choose from")
    if budget is None:
        return preferred if preferred in levels else levels[-1]
    fitting = [s for s in levels if times.expected(s) * SAFETY <= budget]
    return fitting[-1] if fitting else levels[0]


def ladder(main: int, minimum: Optional[int] = None) -> Iterable[int]:
    """The levels compiled before the engine reports ready: the main one, a fast one for a
    low clock, and below it levels an eighth as large down to at most ``FLOOR``
    simulations, so some level fits any normal increment however large the main one is
    (with only main and main / 8, a 4,096-simulation engine spends ~1.8 s a move at its
    fast level and loses a long 60 + 1 game on time). ``minimum`` (the MinSimulations
    option) sets the fast level and is then the floor: nothing smaller is compiled."""
    if minimum:
        return sorted({main, min(minimum, main)})
    levels = {main}
    level = main
    while level > FLOOR:
        level = max(1, level // 8)
        levels.add(level)
    if len(levels) == 1:
        levels.add(max(1, main // 8))
    return sorted(levels)


__all__ = ["move_budget", "LevelTimes", "choose_level", "ladder", "DEFAULT_MOVES_TO_GO", "SAFETY", "FLOOR"]
