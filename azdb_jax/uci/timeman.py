"""Time management: how long a move may take, and how to spend it in chunks.

The search grows its trees in chunks of simulations (``azdb_jax.anytime``) and can stop
after any chunk, so a move uses its time as it goes: the engine runs chunks of about
``CHUNK_SECONDS`` at the measured speed until the next one would end past the move's
deadline, a ``stop`` arrives or a node limit is reached.

The budget for a move with ``t`` ms left, increment ``inc`` and ``m`` moves to the next
time control (``movestogo``; 30 when not given, sudden death):

    budget = t / m + 0.75 · inc,   capped at  (t − reserve) / 2,   reserve = min(1 s, t / 10),

less the move overhead (GUI and process latency: the ``Move Overhead`` option, or the
latency the engine has measured, ``Lag``, when that is larger). Within a move the engine
also keeps back the time reading the trees takes (the largest of the warm-up's and the
last searches' reads) and the largest lateness of its recent chunks (``Lateness``: a chunk on a loaded
machine can take several times what the measured speed planned), so that the last chunk
ends before the deadline even when the machine stalls. The cap keeps half of what is left
after the reserve for the rest of the game, so a move never takes the clock below the
reserve; with an increment the clock then settles where each move costs about the
increment. ``movetime`` is a budget of its own (less the overhead). The deadline counts
from the moment the ``go`` command arrived.
"""

import dataclasses
import math
from typing import Optional

import chess

from azdb_jax.uci.protocol import Go

DEFAULT_MOVES_TO_GO = 30
CHUNK_SECONDS = 0.05  # a chunk of simulations takes about this long: the latency of stop and of the deadline
SAFETY = 1.5  # a chunk is planned to end this many of its expected durations before the deadline


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
class Speed:
    """Simulations per second per player tree, from the chunks the engine ran.

    An exponential average of the chunks' rates weighted by their durations (a short
    chunk says little), with weight ``memory`` seconds: it follows a change of load
    within about a second of searching. ``rate`` is the warm-up's measurement until a
    chunk is recorded.
    """

    rate: float = 100.0
    memory: float = 1.0

    def record(self, simulations: int, seconds: float) -> None:
        if simulations <= 0 or seconds <= 0:
            return
        weight = min(1.0, seconds / self.memory)
        self.rate = (1.0 - weight) * self.rate + weight * simulations / seconds


@dataclasses.dataclass
class RecentMax:
    """The largest of the last ``window`` values recorded (0 when none): a duration the
    engine keeps back from its deadlines, remembering a slow spell for ``window`` records."""

    window: int = 8
    values: list = dataclasses.field(default_factory=list)

    def add(self, value: float) -> None:
        self.values = (self.values + [max(float(value), 0.0)])[-self.window:]

    @property
    def value(self) -> float:
        return max(self.values, default=0.0)


@dataclasses.dataclass
class Lag(RecentMax):
    """What a move costs on the clock beyond the time the engine gave it, measured from
    the clocks the GUI sends: the GUI's and the operating system's latency, and stalls of
    the engine's own process on a machine that other jobs load.

    After a move given ``b`` seconds with ``t`` ms left and increment ``inc``, the GUI's
    next clock for the same side is ``t' = t − spent + inc``, so the move cost
    ``spent = t + inc − t'`` and overstepped its budget by ``spent − b``. The estimate is
    the largest overstep of the last ``window`` moves: a slow spell keeps the engine
    careful for that many moves.
    """

    _last: Optional[tuple] = None  # (turn, ms left, increment ms, budget s) of the last timed move

    def searched(self, go: Go, turn: chess.Color, budget: Optional[float]) -> None:
        """Records a move given ``budget`` seconds under the clock of ``go``."""
        left, inc = go.clock(turn)
        self._last = None if left is None or budget is None else (turn, left, inc, budget)

    def observe(self, go: Go, turn: chess.Color) -> None:
        """Reads the clock of the next ``go`` for the same side, learning the last move's lag."""
        left, _ = go.clock(turn)
        if self._last is not None and left is not None and self._last[0] == turn:
            _, before, inc, budget = self._last
            spent = (before + inc - left) / 1000.0
            if 0.0 <= spent <= before / 1000.0:  # else not the same game, or a clock of another kind
                self.add(spent - budget)
        self._last = None

    def new_game(self) -> None:
        self._last = None

    def overhead_ms(self, option_ms: int) -> int:
        """The overhead to keep back: the option, or the measured lag when larger."""
        return max(int(option_ms), int(round(1000 * self.value)))


@dataclasses.dataclass
class Lateness(RecentMax):
    """How much longer than planned the engine's chunks took: the largest excess
    (``seconds − simulations / rate``, the rate the chunk was planned with) of the last
    ``window`` chunks, kept across moves. A move keeps it back from its deadline, so a
    stall as long as a recent one still ends the search in time; a slow spell is
    remembered for ``window`` chunks (about ``window × CHUNK_SECONDS`` of searching).
    """

    window: int = 64

    def record(self, simulations: int, seconds: float, rate: float) -> None:
        if simulations > 0 and rate > 0:
            self.add(seconds - simulations / rate)


def chunk_size(rate: float, remaining: Optional[float], *, nodes_left: Optional[int] = None) -> int:
    """Simulations of the next chunk: ``CHUNK_SECONDS`` of search at ``rate``, cut so that
    it ends ``SAFETY`` chunk-times before the deadline (``remaining`` seconds away; None:
    no deadline) and within ``nodes_left``; 0 when no simulation fits."""
    seconds = CHUNK_SECONDS
    if remaining is not None:
        seconds = min(seconds, remaining / SAFETY)
    size = int(math.floor(rate * seconds))
    if remaining is None or remaining >= SAFETY / max(rate, 1e-9):
        size = max(size, 1)  # at least one simulation when one fits
    if nodes_left is not None:
        size = min(size, max(nodes_left, 0))
    return max(size, 0)


def planned_simulations(rate: float, budget: Optional[float], *, nodes: Optional[int], capacity: int) -> int:
    """The simulations per player a search expects to run (Gumbel's sequential halving
    plans its schedule on it): the node limit, else the budget at ``rate``, else the
    trees' capacity (an infinite search); at least 1."""
    if nodes is not None:
        return max(1, min(nodes, capacity))
    if budget is not None:
        return max(1, min(int(rate * budget), capacity))
    return capacity


__all__ = ["move_budget", "Speed", "Lag", "RecentMax", "Lateness", "chunk_size", "planned_simulations", "DEFAULT_MOVES_TO_GO", "CHUNK_SECONDS",
           "SAFETY"]
