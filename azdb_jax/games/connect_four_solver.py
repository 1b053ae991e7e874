"""Connect four solved: a perfect solver as the game's ground truth and as a fixed opponent.

Connect four is solved (the first player wins by starting in the centre column). The
solver is BitBully (PyPI ``bitbully``: a bitboard negamax with transposition tables and
the opening books of its ``bitbully-databases`` package, 12 plies deep), an optional
dependency (``pip install "azdb_jax[solver]"``). Without it, everything here raises
``SolverNotFound`` with that install hint.

Scores follow the solver's scheme, from the side to move: positive, the mover wins
(larger: sooner), 0 a draw, negative, the mover loses (more negative: sooner). What
matters to AlphaZero is the *outcome* a move keeps (its sign), not the distance:

- ``move_scores(cells)``: per column, the score of the position after the mover plays
  there (``ILLEGAL`` for a full column), from the mover's side.
- ``perfect_policy``: a fixed opponent that plays a best-scoring move (the fastest win,
  the slowest loss), uniform among ties; ``perfect:random=0.2`` plays a uniformly random
  legal move instead with probability 0.2, ``perfect:depth=8`` caps the solver's search
  at 8 plies (then the solver rolls out non-losing moves). Every game of a batch is
  solved on the host through one callback per ply.

Positions are pgx's: ``state._x.board``, 42 cells row-major from the top row, −1 empty,
0 the first player's discs, 1 the second player's.
"""

import functools
import re
from typing import Any, Dict, Optional

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import policies
from azdb_jax.data.connect_four import COLUMNS, ROWS, cells_from_moves, winner

ILLEGAL = -1000  # the score of a full column
INSTALL_HINT = 'pip install "azdb_jax[solver]"  (or: pip install "bitbully>=0.0.79,<0.1")'
SPEC = re.compile(r"^perfect(?::(?P<options>.*))?$")
_MAX_CACHED = 1_000_000  # positions whose scores a solver keeps


class SolverNotFound(ImportError):
    """The connect-four solver (``bitbully``) is not installed."""


class Solver:
    """The perfect solver on pgx positions, with a cache of the positions it has scored.

    Args:
      depth: the solver's search depth in plies (None: unlimited, exact). A capped
        search is no longer exact: it rolls out non-losing moves past the cap.
      opening_book: use the solver's 12-ply opening book (exact; faster early on).

    Raises:
      SolverNotFound: ``bitbully`` is not installed (with the install hint).
    """

    def __init__(self, depth: Optional[int] = None, opening_book: bool = True):
        try:
            import bitbully  # pylint: disable=g-import-not-at-top
        except ImportError as e:
            raise SolverNotFound(f"the connect-four solver is not installed: {INSTALL_HINT}") from e
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"depth must be an int >= 1 or None, got {depth!r}")
        self._bitbully = bitbully
        self._engine = bitbully.BitBully("default" if opening_book else None, max_depth=-1 if depth is None else depth)
        self.depth = depth
        self._cache: Dict[bytes, np.ndarray] = {}

    def move_scores(self, cells: np.ndarray) -> np.ndarray:
        """``[7]`` int32: the score of each column's move for the side to move (``ILLEGAL``
        for a full column) on ``cells`` (42 pgx cells of a position that is not over)."""
        cells = np.asarray(cells, np.int32).reshape(-1)
        if cells.shape != (ROWS * COLUMNS,):
            raise ValueError(f"a connect-four position has {ROWS * COLUMNS} cells, got {cells.shape}")
        key = cells.tobytes()
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if winner(cells) is not None or (cells >= 0).all():
            raise ValueError("the game is over in this position: no move to score")
        board = self._bitbully.Board.from_array((cells.reshape(ROWS, COLUMNS) + 1).tolist())
        scores = np.full(COLUMNS, ILLEGAL, np.int32)
        for column, score in self._engine.score_all_moves(board).items():
            scores[int(column)] = int(score)
        scores.setflags(write=False)
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[key] = scores
        return scores

    def value(self, cells: np.ndarray) -> int:
        """The position's outcome for the side to move: +1 win, 0 draw, −1 loss."""
        return int(np.sign(self.move_scores(cells).max()))

    def best_moves(self, cells: np.ndarray) -> np.ndarray:
        """``[7]`` bool: the best-scoring moves (fastest win, slowest loss)."""
        scores = self.move_scores(cells)
        return scores == scores.max()

    def keeping_moves(self, cells: np.ndarray) -> np.ndarray:
        """``[7]`` bool: the legal moves that keep the position's outcome (win stays win...)."""
        scores = self.move_scores(cells)
        return (scores != ILLEGAL) & (np.sign(scores) == np.sign(scores.max()))


@functools.lru_cache(maxsize=8)
def solver(depth: Optional[int] = None) -> Solver:
    """One shared ``Solver`` per depth (its opening book is loaded once per process)."""
    return Solver(depth)


def parse_spec(name: str) -> Optional[Dict[str, Any]]:
    """``perfect[:random=R][,depth=D]`` as ``{"random": R, "depth": D}``; None for another name.

    Raises:
      ValueError: a ``perfect`` spec with an unknown option or a bad value.
    """
    match = SPEC.match(str(name))
    if match is None:
        return None
    options: Dict[str, Any] = {"random": 0.0, "depth": None}
    for item in filter(None, (match.group("options") or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in options:
            raise ValueError(f"opponent {name!r}: unknown option {item!r} (perfect:random=R,depth=D)")
        try:
            options[key] = float(value) if key == "random" else int(value)
        except ValueError:
            raise ValueError(f"opponent {name!r}: {key} must be a number, got {value!r}") from None
    if not 0.0 <= options["random"] <= 1.0:
        raise ValueError(f"opponent {name!r}: random must be in [0, 1], got {options['random']}")
    if options["depth"] is not None and options["depth"] < 1:
        raise ValueError(f"opponent {name!r}: depth must be >= 1, got {options['depth']}")
    return options


def perfect_policy(random: float = 0.0, depth: Optional[int] = None) -> policies.Policy:
    """The solver as a fixed opponent: a best-scoring move, uniform among ties; with
    probability ``random`` a uniformly random legal move instead; ``depth`` caps its search.

    The solver runs on the host (one ``pure_callback`` per ply for the batch); the
    random choices are the policy's keys', so a match is reproducible from its key.

    Raises:
      SolverNotFound: ``bitbully`` is not installed.
    """
    engine = solver(depth)  # fails here, when the policy is made, if the solver is missing

    def host(cells, done) -> np.ndarray:
        cells, done = np.asarray(cells), np.asarray(done)
        best = np.zeros(cells.shape[:1] + (COLUMNS,), bool)
        for row in np.flatnonzero(~done):
            best[row] = engine.best_moves(cells[row])
        return best

    def choose(keys, legal, best):
        def one(key, legal, best):
            explore, pick = jax.random.split(key)
            mask = jnp.where(jax.random.uniform(explore) < random, legal, best & legal)
            mask = jnp.where(mask.any(), mask, legal)
            return policies.sample_uniform(pick, mask[None])[0]

        return jax.vmap(one)(keys, legal, best)

    def rows(params, keys, state):
        del params
        done = state.terminated | state.truncated
        shape = jax.ShapeDtypeStruct(done.shape + (COLUMNS,), jnp.bool_)
        best = jax.pure_callback(host, shape, state._x.board, done,  # pylint: disable=protected-access
                                 vmap_method="sequential")
        return choose(keys, state.legal_action_mask, best)

    def policy(params, rng_key, state):
        keys = jax.random.split(rng_key, state.current_player.shape[0])
        return rows(params, keys, state)

    policy.rows = rows
    options = ([f"random={random:g}"] if random else []) + ([f"depth={depth}"] if depth else [])
    policy.name = ":".join(["perfect"] + ([",".join(options)] if options else []))
    return policy


def opponent_spec(env, name: str) -> Optional[policies.Policy]:
    """``Game.opponent_spec`` of connect four: ``perfect[:random=R][,depth=D]``, or None."""
    del env
    options = parse_spec(name)
    return None if options is None else perfect_policy(**options)


__all__ = ["ILLEGAL", "INSTALL_HINT", "Solver", "SolverNotFound", "cells_from_moves", "opponent_spec",
           "parse_spec", "perfect_policy", "solver", "winner"]
