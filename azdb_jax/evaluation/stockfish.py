"""Stockfish as the reference engine: a puzzle solver and a strength-limited match opponent.

SPEC §2 ("Reference engine"): the trained team is compared with Stockfish on the same
puzzle sets and plays matches against a strength-limited Stockfish. Both uses talk to
one engine process through python-chess's UCI API (``chess.engine.SimpleEngine``):

- ``StockfishSolver`` implements the ``Solver`` protocol of
  ``azdb_jax.evaluation.team`` (one column, no oracle groups), so the puzzle runners
  score it exactly like a team: a best move and a value per position.
- ``StockfishPlayer`` is a match opponent, ``player(board) -> chess.Move``, limited by
  ``UCI_LimitStrength``/``UCI_Elo`` or by ``Skill Level``.

The value of a position is for the side to move on [-1, 1]: a forced mate is ±1; a
centipawn score becomes the expected score of python-chess's win/draw/loss model,
``E = P(win) + P(draw) / 2``, mapped to ``2E − 1``.

Finding the binary: Debian's ``stockfish`` package installs ``/usr/games/stockfish``,
which is often not on PATH (SPEC §4); ``find_stockfish`` looks there after the
explicit path, ``$AZDB_STOCKFISH`` and PATH.

Runs on the host; each solver or player owns one engine process until ``close()``
(both are context managers).
"""

import math
import os
import shutil
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import chess.engine
import numpy as np

from azdb_jax.evaluation.team import SolverOutput

ENV_VAR = "AZDB_STOCKFISH"
DEBIAN_PATH = "/usr/games/stockfish"
INSTALL_HINT = (
    "install it with `apt-get install stockfish` (Debian/Ubuntu; the binary lands in /usr/games/stockfish) "
    f"or point at a binary with --stockfish=PATH or the {ENV_VAR} environment variable")


class StockfishNotFound(FileNotFoundError):
    """No Stockfish binary where we looked; the message says how to install or point at one."""


class StockfishError(RuntimeError):
    """The engine process failed (died, hung up or answered nonsense)."""


def find_engine(path: Optional[str], *, env_var: str, command: str, debian_path: str, install_hint: str,
                label: str, not_found: type = FileNotFoundError) -> str:
    """An engine binary: ``path``, then ``$env_var``, then ``command`` on PATH, then ``debian_path``.

    An explicit ``path`` or environment variable must name an executable file (a bare
    command name is looked up on PATH). Raises ``not_found`` (a ``FileNotFoundError``)
    naming what was tried and ``install_hint``.
    """
    for source, given in (("path", path), (env_var, os.environ.get(env_var))):
        if given:
            resolved = shutil.which(given) or (given if os.access(given, os.X_OK) and os.path.isfile(given) else None)
            if resolved is None:
                raise not_found(f"{label} binary {given!r} (from {source}) is not an executable file; {install_hint}")
            return resolved
    on_path = shutil.which(command)
    if on_path:
        return on_path
    if os.path.isfile(debian_path) and os.access(debian_path, os.X_OK):
        return debian_path
    raise not_found(f"{label} not found (looked at ${env_var}, PATH and {debian_path}); {install_hint}")


def find_stockfish(path: Optional[str] = None) -> str:
    """The Stockfish binary to run.

    Looks, in order, at ``path``, ``$AZDB_STOCKFISH``, ``stockfish`` on PATH and
    ``/usr/games/stockfish``. An explicit ``path`` or environment variable must name an
    executable file (a bare command name is looked up on PATH).

    Raises:
      StockfishNotFound: nothing usable was found; the message names what was tried.
    """
    return find_engine(path, env_var=ENV_VAR, command="stockfish", debian_path=DEBIAN_PATH,
                       install_hint=INSTALL_HINT, label="Stockfish", not_found=StockfishNotFound)


# ------------------------------------------------------------------ helpers


def make_limit(*, nodes: Optional[int] = None, time: Optional[float] = None,
               depth: Optional[int] = None) -> chess.engine.Limit:
    """A search limit from exactly one of ``nodes`` (≥ 1), ``time`` (seconds, > 0), ``depth`` (≥ 1)."""
    given = {name: value for name, value in (("nodes", nodes), ("time", time), ("depth", depth)) if value is not None}
    if len(given) != 1:
        raise ValueError(f"give exactly one search limit of nodes, time, depth; got {given or 'none'}")
    (name, value), = given.items()
    if name == "time":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"time must be a positive number of seconds, got {value!r}")
        return chess.engine.Limit(time=float(value))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return chess.engine.Limit(**{name: value})


def score_to_value(score: chess.engine.PovScore, turn: chess.Color, *, ply: int = 30,
                   wdl_model: str = "sf") -> float:
    """Value in [-1, 1] for ``turn`` (the side to move) of an engine score.

    Mate for ``turn`` is +1, mate against it −1; otherwise ``2E − 1`` with
    ``E = (wins + draws / 2) / 1000`` from python-chess's WDL model at game ``ply``.
    """
    relative = score.pov(turn)
    if relative.is_mate():
        return 1.0 if relative.mate() > 0 else -1.0  # mate 0: the side to move is mated
    return 2.0 * relative.wdl(model=wdl_model, ply=ply).expectation() - 1.0


def _check_int(name: str, value, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an int {bound}, got {value!r}")
    return value


class _Engine:
    """One UCI engine process with error translation."""

    def __init__(self, path: Optional[str], options: Dict[str, object]):
        self.path = find_stockfish(path)
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(self.path)
        except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
            raise StockfishError(f"could not start Stockfish at {self.path}: {e}") from e
        try:
            self.configure(options)
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        return self.engine.id.get("name", "Stockfish")

    def option(self, name: str) -> chess.engine.Option:
        try:
            return self.engine.options[name]
        except KeyError:
            raise StockfishError(f"engine at {self.path} ({self.name}) has no UCI option {name!r}") from None

    def configure(self, options: Dict[str, object]) -> None:
        for name, value in options.items():
            option = self.option(name)
            if option.type == "spin" and not option.min <= value <= option.max:  # type: ignore[operator]
                raise ValueError(f"{name}={value} is outside the engine's range [{option.min}, {option.max}] "
                                 f"({self.name})")
        try:
            self.engine.configure(options)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
            raise StockfishError(f"Stockfish at {self.path} rejected options {options}: {e}") from e

    def play(self, board: chess.Board, limit: chess.engine.Limit, game: object) -> chess.engine.PlayResult:
        try:
            result = self.engine.play(board, limit, game=game, info=chess.engine.INFO_SCORE)
        except chess.engine.EngineTerminatedError as e:
            raise StockfishError(f"Stockfish at {self.path} died while searching {board.fen()}: {e}") from e
        except chess.engine.EngineError as e:
            raise StockfishError(f"Stockfish at {self.path} failed on {board.fen()}: {e}") from e
        if result.move is None:
            raise StockfishError(f"Stockfish at {self.path} returned no move for {board.fen()}")
        return result

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            self.engine.close()


def _playable(board: chess.Board) -> None:
    if board.is_game_over(claim_draw=False):
        raise ValueError(f"position {board.fen()} is already over ({board.outcome().termination.name.lower()}): "
                         "no move to find")


# ------------------------------------------------------------------ the solver


class _EngineUser:
    """Owns one ``_Engine`` (``self._engine``); closes it on ``close()`` or leaving a ``with`` block."""

    _engine: _Engine

    def close(self) -> None:
        """Stops the engine process."""
        self._engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class StockfishSolver(_EngineUser):
    """Stockfish answering puzzle positions: best move and value for the side to move.

    Implements ``azdb_jax.evaluation.team.Solver`` with one column (``name``) and no
    groups. Each position is a new UCI game (``ucinewgame`` clears the hash), so with
    ``threads=1`` and a ``nodes`` or ``depth`` limit every answer is reproducible and
    does not depend on the order of the positions. The board's move stack, if any, is
    sent too, so the engine sees repetitions.

    Args:
      path: the binary (default: ``find_stockfish``).
      nodes, time, depth: the search limit per position, exactly one.
      threads, hash_mb: the engine's ``Threads`` and ``Hash`` (MiB).
      name: the solver's column name.
      wdl_model: python-chess's win/draw/loss model for centipawn scores.
    """

    def __init__(self, path: Optional[str] = None, *, nodes: Optional[int] = None, time: Optional[float] = None,
                 depth: Optional[int] = None, threads: int = 1, hash_mb: int = 64, name: str = "stockfish",
                 wdl_model: str = "sf"):
        self.limit = make_limit(nodes=nodes, time=time, depth=depth)
        _check_int("threads", threads, 1)
        _check_int("hash_mb", hash_mb, 1)
        if not name:
            raise ValueError("name must be a non-empty string")
        self.columns: Tuple[str, ...] = (name,)
        self.groups: Dict[str, Tuple[str, ...]] = {}
        self.wdl_model = wdl_model
        self._engine = _Engine(path, {"Threads": threads, "Hash": hash_mb})

    @property
    def path(self) -> str:
        return self._engine.path

    @property
    def engine_name(self) -> str:
        """The engine's own name, e.g. ``"Stockfish 15.1"``."""
        return self._engine.name

    def analyse(self, board: chess.Board) -> Tuple[chess.Move, float]:
        """Best move and value (side to move, [-1, 1]) of one non-terminal position."""
        _playable(board)
        result = self._engine.play(board, self.limit, game=object())
        score = result.info.get("score")
        if score is None:
            raise StockfishError(f"Stockfish at {self.path} reported no score for {board.fen()}")
        return result.move, score_to_value(score, board.turn, ply=board.ply(), wdl_model=self.wdl_model)

    def __call__(self, boards: Sequence[chess.Board]) -> SolverOutput:
        moves: List[str] = []
        values = np.empty(len(boards), np.float64)
        for index, board in enumerate(boards):
            move, values[index] = self.analyse(board)
            moves.append(move.uci())
        column = self.columns[0]
        return SolverOutput(moves={column: moves}, values={column: values})


# ------------------------------------------------------------------ the match opponent


class StockfishPlayer(_EngineUser):
    """A strength-limited Stockfish opponent for matches: ``player(board) -> chess.Move``.

    Strength is limited by ``elo`` (``UCI_LimitStrength`` + ``UCI_Elo``, checked against
    the range the engine reports, 1350..2850 for Stockfish 15.1) or by ``skill_level``
    (``Skill Level``, 0..20), not both; with neither it plays at full strength. Each move
    searches ``nodes`` nodes, to ``depth`` plies or for ``time`` seconds (at most one;
    default 0.1 s, the engine's Elo calibration being by time). A board that does not
    continue the previous board's game starts a new UCI game (``ucinewgame``).

    Args:
      path: the binary (default: ``find_stockfish``).
      nodes, depth, time: per-move limit.
      elo, skill_level: strength limit.
      threads, hash_mb: the engine's ``Threads`` and ``Hash`` (MiB).
      name: label for PGN headers; default e.g. ``"Stockfish 15.1 elo=1500"``.
    """

    def __init__(self, path: Optional[str] = None, *, nodes: Optional[int] = None, time: Optional[float] = None,
                 elo: Optional[int] = None, skill_level: Optional[int] = None, threads: int = 1, hash_mb: int = 16,
                 name: Optional[str] = None, depth: Optional[int] = None):
        if nodes is None and time is None and depth is None:
            time = 0.1
        self.limit = make_limit(nodes=nodes, time=time, depth=depth)
        if elo is not None and skill_level is not None:
            raise ValueError("give elo or skill_level, not both")
        _check_int("threads", threads, 1)
        _check_int("hash_mb", hash_mb, 1)
        options: Dict[str, object] = {"Threads": threads, "Hash": hash_mb}
        if skill_level is not None:
            options["Skill Level"] = _check_int("skill_level", skill_level, 0, 20)
        self._engine = _Engine(path, options)
        try:
            if elo is not None:
                _check_int("elo", elo, 0)
                bounds = self._engine.option("UCI_Elo")
                if not bounds.min <= elo <= bounds.max:  # type: ignore[operator]
                    raise ValueError(f"elo={elo} is outside the engine's UCI_Elo range [{bounds.min}, {bounds.max}] "
                                     f"({self._engine.name})")
                self._engine.configure({"UCI_LimitStrength": True, "UCI_Elo": elo})
        except BaseException:
            self._engine.close()
            raise
        self.elo, self.skill_level = elo, skill_level
        strength = (f" elo={elo}" if elo is not None else f" skill={skill_level}" if skill_level is not None
                    else f" nodes={nodes}" if nodes is not None else f" depth={depth}" if depth is not None
                    else f" time={time}s")
        self.name = name or f"{self._engine.name}{strength}"
        self._game: object = object()
        self._last: Optional[Tuple[str, List[chess.Move]]] = None

    @property
    def elo_range(self) -> Tuple[int, int]:
        """The ``UCI_Elo`` range the engine accepts."""
        option = self._engine.option("UCI_Elo")
        return int(option.min), int(option.max)  # type: ignore[arg-type]

    def new_game(self) -> None:
        """Starts a new UCI game at the next move (clears the engine's hash)."""
        self._game = object()
        self._last = None

    def __call__(self, board: chess.Board) -> chess.Move:
        _playable(board)
        root, stack = board.root().fen(), list(board.move_stack)
        if self._last is None or self._last[0] != root or stack[: len(self._last[1])] != self._last[1]:
            self._game = object()
        move = self._engine.play(board, self.limit, game=self._game).move
        self._last = (root, stack + [move])
        return move  # type: ignore[return-value]


__all__ = [
    "StockfishNotFound", "StockfishError", "StockfishSolver", "StockfishPlayer", "find_stockfish", "make_limit",
    "score_to_value", "INSTALL_HINT", "find_engine",
]
