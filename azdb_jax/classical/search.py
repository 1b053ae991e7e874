"""Negamax alpha-beta search with the improvements of the chess-engine era, each switchable.

The search runs on any position with the interface of ``ChessPosition`` /
``GardnerPosition`` (``legal_moves``, ``noisy_moves``, ``push``/``pop``, ``key``,
``history``, ``in_check``, ...). Values are centipawns for the side to move (negamax):
a checkmate found ``n`` plies below the root scores ``−(MATE − n)`` for the mated side,
draws (stalemate, repetition, fifty-move rule, insufficient material) score 0.

``SearchOptions`` switches every technique, so its effect can be measured:

- ``alpha_beta``: fail-soft alpha-beta pruning (off: plain minimax, every move searched
  with the full window). Knuth and Moore: with the best move first everywhere, a uniform
  tree of branching b and depth d has ``b^⌈d/2⌉ + b^⌊d/2⌋ − 1`` leaves in its minimal tree.
- ``iterative_deepening``: depths 1, 2, ... up to the limit (needed for node and time
  limits); off: one search at the depth limit. ``root_ordering``: each iteration searches
  the root moves in the order of the previous iteration's values.
- move ordering inside the tree: ``tt_move`` (the table's best move first), ``mvv_lva``
  (captures and promotions by most-valuable-victim / least-valuable-attacker, before
  quiet moves), ``killers`` (two quiet moves per ply that caused a cut-off), ``history``
  (quiet moves by the depth² credited to them for cut-offs).
- ``transposition_table`` (``azdb_jax.classical.ttable``, ``tt_size`` slots): results of
  earlier searches of a position cut the search off when deep enough and their bound
  allows, and order its moves.
- ``quiescence``: at depth 0, captures and promotions are searched until the position
  is quiet; the side to move may "stand pat" on the static evaluation (in check every
  evasion is searched). Off: the leaf's static evaluation.
- ``singular_extensions`` (off by default): where the table's move was a cut-off or
  exact at depth ≥ d − 3 (nodes of depth d ≥ 3), the other moves are searched to depth ⌊(d−1)/2⌋ against
  ``score − SINGULAR_MARGIN · d``; if all fail low, the move is *singular* and its
  subtree is searched one ply deeper (Anantharaman, Campbell and Hsu's idea, in the
  table-driven form of current engines).
- ``endgame_tables``: positions whose material has a retrograde database
  (``azdb_jax.classical.endgames``) score their exact distance to mate.

Repetition: a position that already stood on the board since the last capture or pawn
move (in the game or on the search path) scores 0 (the first repetition is treated as a
draw, as engines do).
"""

import dataclasses
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from azdb_jax.classical import evaluation as evaluation_lib
from azdb_jax.classical import ttable

__all__ = ["SearchOptions", "Limits", "SearchResult", "Searcher", "MATE", "MATE_BOUND", "INF", "mate_in", "check_compatible",
           "SearchAborted"]

MATE = 100_000
MATE_BOUND = MATE - 1_000  # |score| above this is a mate
INF = 1_000_000
MAX_PLY = 128
SINGULAR_MIN_DEPTH = 3
SINGULAR_MARGIN = 20  # centipawns per ply of depth
_CHECK_EVERY = 128  # nodes between looks at the clock (and the stop request)
EVAL_CACHE_SIZE = 1 << 18  # static evaluations kept by key (cleared when full)


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """Which techniques the search uses (module docstring); all on but singular extensions."""

    alpha_beta: bool = True
    iterative_deepening: bool = True
    root_ordering: bool = True
    tt_move: bool = True
    mvv_lva: bool = True
    killers: bool = True
    history: bool = True
    transposition_table: bool = True
    tt_size: int = 1 << 18
    quiescence: bool = True
    singular_extensions: bool = False
    endgame_tables: bool = True

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in (bool, "bool") and not isinstance(value, bool):
                raise ValueError(f"SearchOptions.{field.name} must be true or false, got {value!r}")
        if not isinstance(self.tt_size, int) or self.tt_size < 1 or self.tt_size & (self.tt_size - 1):
            raise ValueError(f"SearchOptions.tt_size must be a power of two >= 1, got {self.tt_size!r}")


@dataclasses.dataclass(frozen=True)
class Limits:
    """When to stop: after ``depth`` plies, ``nodes`` nodes or ``time`` seconds (the
    first reached; at least one). A node or time limit ends the search inside an
    iteration: the answer is the deepest completed iteration's, or the current one's
    best move if it had already beaten that."""

    depth: Optional[int] = None
    nodes: Optional[int] = None
    time: Optional[float] = None

    def __post_init__(self):
        if self.depth is None and self.nodes is None and self.time is None:
            raise ValueError("search limits: give at least one of depth, nodes and time")
        for name in ("depth", "nodes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"search limit {name} must be an integer >= 1, got {value!r}")
        if self.depth is not None and self.depth > MAX_PLY // 2:
            raise ValueError(f"search limit depth must be <= {MAX_PLY // 2}, got {self.depth}")
        if self.time is not None and not (isinstance(self.time, (int, float)) and self.time > 0):
            raise ValueError(f"search limit time must be > 0 seconds, got {self.time!r}")


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """The answer of one search."""

    best_move: Any  # the position's native move
    score: int  # centipawns for the side to move (mates: ±(MATE − plies))
    pv: Tuple[Any, ...]  # principal variation from the root, native moves
    depth: int  # deepest completed iteration
    nodes: int  # nodes visited (interior, leaf and quiescence)
    seconds: float
    # {move: (score, bound)} of the deepest completed iteration: "exact", or "upper" for a
    # move that failed low (its value is at most the score)
    root_scores: Dict[Any, Tuple[int, str]]
    nodes_by_depth: Tuple[int, ...]  # cumulative nodes when each iteration completed
    leaves: int  # leaf evaluations (static evaluations at depth 0 and in quiescence)


def check_compatible(limits: Limits, options: SearchOptions) -> None:
    """ValueError when the limits need a technique that is switched off."""
    if not options.iterative_deepening and limits.depth is None:
        raise ValueError("a search without iterative deepening needs a depth limit (nodes and time limits stop "
                         "between iterations)")


def mate_in(score: int) -> Optional[int]:
    """Moves to mate of a score (positive: the side to move mates; negative: is mated), or None."""
    if abs(score) <= MATE_BOUND:
        return None
    plies = MATE - abs(score)
    return (plies + 1) // 2 if score > 0 else -((plies + 1) // 2)


class SearchAborted(Exception):
    """A node or time limit (or a stop request) ended the search mid-iteration."""


class Searcher:
    """A search with its own transposition table, killers and history (kept across
    searches: a player's table carries over from move to move, aged by generation).

    Args:
      options: ``SearchOptions``.
      evaluate: ``position -> centipawns`` for the side to move (default: the classical
        evaluation with ``weights``).
      weights: ``azdb_jax.classical.evaluation.EvalWeights`` of the default evaluation.
      tables: ``azdb_jax.classical.endgames.EndgameTables`` probed when
        ``options.endgame_tables``; None: no probing.
    """

    def __init__(self, options: SearchOptions = SearchOptions(), *, evaluate: Optional[Callable[[Any], int]] = None,
                 weights: evaluation_lib.EvalWeights = evaluation_lib.DEFAULT_WEIGHTS, tables: Any = None):
        self.options = options
        self.weights = weights
        self.evaluate = evaluate or (lambda position: evaluation_lib.evaluate(position, weights))
        self.tables = tables if options.endgame_tables else None
        self.tt = ttable.TranspositionTable(options.tt_size) if options.transposition_table else None
        self.history: Dict[Any, int] = {}
        self.killers: List[List[Any]] = [[None, None] for _ in range(MAX_PLY + 1)]
        self.nodes = self.leaves = self.extensions = 0  # of the last search (extensions: singular)
        self._eval_cache: Dict[int, int] = {}  # key -> static evaluation (it depends on the position only)
        self._stop: Optional[Callable[[], bool]] = None

    def reset(self) -> None:
        """Forgets everything learned in earlier searches (table, killers, history)."""
        if self.tt is not None:
            self.tt.clear()
        self.history.clear()
        self.killers = [[None, None] for _ in range(MAX_PLY + 1)]
        self._eval_cache.clear()

    # ------------------------------------------------------------------ the driver

    def search(self, position, limits: Limits, *, stop: Optional[Callable[[], bool]] = None,
               on_iteration: Optional[Callable[[SearchResult], None]] = None) -> SearchResult:
        """Searches ``position`` (left as it was) within ``limits``.

        ``stop() -> bool`` is polled with the clock (a UCI ``stop``); ``on_iteration`` is
        called with the result after every completed iteration.

        Raises:
          ValueError: the position has no legal move (the game is over), or the limits need
            iterative deepening and it is off.
        """
        opts = self.options
        check_compatible(limits, opts)
        moves = position.legal_moves()
        if not moves:
            raise ValueError(f"position {position.fen()} has no legal move (the game is over): nothing to search")
        self.nodes = self.leaves = self.extensions = 0
        self._start = time.monotonic()
        self._deadline = None if limits.time is None else self._start + limits.time
        self._node_limit = limits.nodes
        self._stop = stop
        self._iteration_scores: Dict[Any, Tuple[int, str]] = {}
        self._next_check = self._limit_step()
        self._pv: List[tuple] = [()] * (MAX_PLY + 2)
        if self.tt is not None:
            self.tt.new_search()
        max_depth = limits.depth if limits.depth is not None else MAX_PLY // 2
        first = 1 if opts.iterative_deepening else max_depth
        root = [(move, 0) for move in self._ordered(position, moves, None, 0)]
        result: Optional[SearchResult] = None
        nodes_by_depth: List[int] = []
        for depth in range(first, max_depth + 1):
            try:
                scores = self._search_root(position, root, depth)
            except SearchAborted:
                result = self._partial(result, nodes_by_depth)
                break
            nodes_by_depth.append(self.nodes)
            result = self._result(scores, depth, nodes_by_depth)
            if on_iteration is not None:
                on_iteration(result)
            order = sorted(range(len(root)), key=lambda i: -scores[root[i][0]][0]) if opts.root_ordering else None
            root = [(root[i][0], scores[root[i][0]][0]) for i in order] if order else root
            if abs(result.score) > MATE_BOUND and MATE - abs(result.score) <= depth:
                break  # a mate within the full-width horizon: deeper iterations cannot change it
        if result is None:  # stopped inside the first iteration: any legal move
            result = SearchResult(moves[0], 0, (moves[0],), 0, self.nodes, time.monotonic() - self._start, {}, (),
                                  self.leaves)
        return result

    def _limit_step(self) -> int:
        step = self.nodes + _CHECK_EVERY
        return min(step, self._node_limit) if self._node_limit is not None else step

    def _check_limits(self) -> None:
        if self._node_limit is not None and self.nodes >= self._node_limit:
            raise SearchAborted()
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise SearchAborted()
        if self._stop is not None and self._stop():
            raise SearchAborted()
        self._next_check = self._limit_step()

    def _result(self, scores, depth: int, nodes_by_depth) -> SearchResult:
        best = max(scores, key=lambda m: scores[m][0])
        pv = self._pv[0] if self._pv[0] and self._pv[0][0] == best else (best,)
        return SearchResult(best, scores[best][0], tuple(pv), depth, self.nodes, time.monotonic() - self._start,
                            dict(scores), tuple(nodes_by_depth), self.leaves)

    def _partial(self, result: Optional[SearchResult], nodes_by_depth) -> Optional[SearchResult]:
        """After an abort: the last completed iteration's answer, unless the aborted
        iteration had already searched that move and found another one better (exactly)."""
        seconds = time.monotonic() - self._start
        partial = self._iteration_scores
        if result is None:
            if not partial:
                return None
            move = max(partial, key=lambda m: partial[m][0])
            return SearchResult(move, partial[move][0], (move,), 0, self.nodes, seconds, dict(partial), (),
                                self.leaves)
        result = dataclasses.replace(result, nodes=self.nodes, seconds=seconds, leaves=self.leaves)
        if result.best_move not in partial:
            return result
        move = max(partial, key=lambda m: partial[m][0])
        if partial[move][0] <= partial[result.best_move][0]:
            return result
        pv = self._pv[0] if self._pv[0] and self._pv[0][0] == move else (move,)
        return dataclasses.replace(result, best_move=move, score=partial[move][0], pv=tuple(pv))

    def _search_root(self, position, root, depth: int) -> Dict[Any, Tuple[int, str]]:
        opts = self.options
        self.nodes += 1
        alpha, beta = -INF, INF
        scores: Dict[Any, Tuple[int, str]] = {}
        self._iteration_scores = scores
        best = -INF
        moves = [m for m, _ in root] if opts.root_ordering else self._ordered(position, [m for m, _ in root],
                                                                                self._tt_move(position), 0)
        for move in moves:
            position.push(move)
            try:
                score = -self._negamax(position, depth - 1, -beta, -alpha, 1, None)
            finally:
                position.pop()
            exact = score > alpha or not opts.alpha_beta
            scores[move] = (score, "exact" if exact else "upper")
            if score > best:
                best = score
                self._pv[0] = (move,) + self._pv[1]
            if opts.alpha_beta and score > alpha:
                alpha = score
        best_move = max(scores, key=lambda m: scores[m][0])
        if self.tt is not None:
            self.tt.store(position.key, depth, ttable.EXACT, best, best_move)
        return scores

    # ------------------------------------------------------------------ the tree

    def _tt_move(self, position):
        if self.tt is None or not self.options.tt_move:
            return None
        entry = self.tt.probe(position.key)
        return entry.move if entry is not None else None

    def _ordered(self, position, moves: List[Any], tt_move, ply: int) -> List[Any]:
        """Moves in search order: table move, noisy by MVV/LVA, killers, quiet by history."""
        opts = self.options
        killers = self.killers[ply] if opts.killers else (None, None)
        history = self.history if opts.history else None
        mvv_lva = position.mvv_lva if opts.mvv_lva else None

        def rank(move):
            if move == tt_move:
                return -(1 << 40)
            if mvv_lva is not None:
                noisy = mvv_lva(move)
                if noisy:
                    return -(1 << 30) - noisy
            if move == killers[0]:
                return -(1 << 29)
            if move == killers[1]:
                return -(1 << 29) + 1
            return -history.get(move, 0) if history is not None else 0

        if tt_move is None and mvv_lva is None and killers[0] is None and history is None:
            return moves
        return sorted(moves, key=rank)

    def _is_repetition(self, position) -> bool:
        history, key = position.history, position.key
        end = len(history) - 2
        stop = max(end - position.halfmove_clock, -1)
        for i in range(end, stop, -2):
            if history[i] == key:
                return True
        return False

    def _draw_or_table(self, position, ply: int) -> Optional[int]:
        """The exact score of a non-root node by the draw rules or an endgame table, or None."""
        if position.halfmove_clock >= 4 and self._is_repetition(position):
            return 0
        if position.halfmove_clock >= 100:
            if position.in_check() and not position.has_legal_move():
                return -(MATE - ply)  # a mate on the 100th ply still wins
            return 0
        if position.piece_count() <= 4:
            if position.is_insufficient_material():
                return 0
            if self.tables is not None:
                known = self.tables.probe(position)
                if known is not None:
                    outcome, plies = known
                    return 0 if outcome == 0 else outcome * (MATE - ply - plies)
        return None

    def _static(self, position) -> int:
        """The static evaluation, from the cache when this position was evaluated before."""
        self.leaves += 1
        cache = self._eval_cache
        value = cache.get(position.key)
        if value is None:
            value = self.evaluate(position)
            if len(cache) >= EVAL_CACHE_SIZE:
                cache.clear()
            cache[position.key] = value
        return value

    def _leaf(self, position, ply: int) -> int:
        if not position.has_legal_move():
            self.leaves += 1
            return -(MATE - ply) if position.in_check() else 0
        return self._static(position)

    def _negamax(self, position, depth: int, alpha: int, beta: int, ply: int, excluded) -> int:
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check_limits()
        self._pv[ply] = ()
        if excluded is None:
            known = self._draw_or_table(position, ply)
            if known is not None:
                return known
        opts = self.options
        if depth <= 0 or ply >= MAX_PLY:
            if opts.quiescence and ply < MAX_PLY:
                return self._quiesce(position, alpha, beta, ply)
            return self._leaf(position, ply)
        tt, tt_entry, tt_move = self.tt, None, None
        if tt is not None and excluded is None:
            tt_entry = tt.probe(position.key)
            if tt_entry is not None:
                tt_move = tt_entry.move
                if tt_entry.depth >= depth:
                    score = ttable.from_table(tt_entry.score, ply, MATE_BOUND)
                    bound = tt_entry.bound
                    if bound == ttable.EXACT or (opts.alpha_beta and (
                            (bound == ttable.LOWER and score >= beta) or (bound == ttable.UPPER and score <= alpha))):
                        return score
        moves = position.legal_moves()
        if not moves:
            return -(MATE - ply) if position.in_check() else 0
        extend = None
        if (opts.singular_extensions and tt_entry is not None and tt_move is not None and depth >= SINGULAR_MIN_DEPTH
                and tt_entry.bound != ttable.UPPER and tt_entry.depth >= depth - 3
                and abs(tt_entry.score) < MATE_BOUND and len(moves) > 1):
            singular_beta = ttable.from_table(tt_entry.score, ply, MATE_BOUND) - SINGULAR_MARGIN * depth
            if self._negamax(position, (depth - 1) // 2, singular_beta - 1, singular_beta, ply, tt_move) < singular_beta:
                extend = tt_move
                self.extensions += 1
            self._pv[ply] = ()
        ordered = self._ordered(position, moves, tt_move if opts.tt_move else None, ply)
        original_alpha = alpha
        if not opts.alpha_beta:
            alpha, beta = -INF, INF
        best, best_move = -INF, None
        for move in ordered:
            if move == excluded:
                continue
            position.push(move)
            try:
                score = -self._negamax(position, depth - 1 + (move == extend), -beta, -alpha, ply + 1, None)
            finally:  # also when a limit aborts the search: the caller's position is restored
                position.pop()
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    self._pv[ply] = (move,) + self._pv[ply + 1]
                    if opts.alpha_beta:
                        alpha = score
                        if score >= beta:
                            if not position.is_capture(move):
                                self._credit(move, depth, ply)
                            break
        if best_move is None:  # every move excluded (a singularity test at a one-move node)
            return alpha
        if tt is not None and excluded is None:
            if not opts.alpha_beta:
                bound = ttable.EXACT
            else:
                bound = ttable.UPPER if best <= original_alpha else ttable.LOWER if best >= beta else ttable.EXACT
            tt.store(position.key, depth, bound, ttable.to_table(best, ply, MATE_BOUND), best_move)
        return best

    def _credit(self, move, depth: int, ply: int) -> None:
        """A quiet move caused a cut-off: it becomes a killer of this ply and gains history."""
        if self.options.killers:
            killers = self.killers[ply]
            if killers[0] != move:
                killers[1], killers[0] = killers[0], move
        if self.options.history:
            self.history[move] = self.history.get(move, 0) + depth * depth

    def _quiesce(self, position, alpha: int, beta: int, ply: int) -> int:
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check_limits()
        self._pv[ply] = ()
        if position.piece_count() <= 4:
            known = self._draw_or_table(position, ply)
            if known is not None:
                return known
        opts = self.options
        if ply >= MAX_PLY:
            return self._static(position)
        if not opts.alpha_beta:
            alpha, beta = -INF, INF
        if position.in_check():
            moves = position.legal_moves()
            if not moves:
                return -(MATE - ply)
            best = -INF
        else:
            best = self._static(position)
            if best >= beta:
                return best
            alpha = max(alpha, best)
            moves = position.noisy_moves()
        if opts.mvv_lva:
            moves.sort(key=position.mvv_lva, reverse=True)
        for move in moves:
            position.push(move)
            try:
                score = -self._quiesce(position, -beta, -alpha, ply + 1)
            finally:
                position.pop()
            if score > best:
                best = score
                if score > alpha:
                    self._pv[ply] = (move,) + self._pv[ply + 1]
                    if opts.alpha_beta:
                        alpha = score
                        if score >= beta:
                            break
        return best
