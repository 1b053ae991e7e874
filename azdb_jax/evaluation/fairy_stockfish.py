"""Fairy-Stockfish, Gardner chess's reference engine: move oracle, puzzle solver and opponent.

SPEC §2 ("Gardner chess"): Fairy-Stockfish (Debian ``fairy-stockfish``, 11.1) with
``UCI_Variant gardner`` plays the part Stockfish plays on chess. python-chess's engine
API cannot send a 5x5 position, so this module speaks UCI through
``azdb_jax.evaluation.uci.UciEngine``:

- ``FairyStockfish``: one engine process for a variant, with ``legal_moves`` (``go perft
  1``), ``checkers`` (the ``d`` command) and ``analyse`` (``go`` with MultiPV);
- ``FairyStockfishSolver``: the ``Solver`` protocol of ``azdb_jax.evaluation.team`` on
  ``GardnerBoard`` positions, so the puzzle runners score it like a team;
- ``FairyStockfishPlayer``: a match opponent ``player(board) -> chess.Move``, limited by
  nodes, depth or time per move and by ``Skill Level`` (-20..20 in 11.1). ``UCI_Elo`` is
  calibrated on chess and is not offered.

Values for the side to move are on [-1, 1]: a forced mate is ±1; a centipawn score goes
through python-chess's ``lichess`` win/draw/loss model by default (a logistic in the
score; the ``sf`` models are fitted to Stockfish's chess scores, which Gardner scores
are not).

Finding the binary: ``--fairy_stockfish=PATH`` (scripts), ``$AZDB_FAIRY_STOCKFISH``,
``fairy-stockfish`` on PATH, ``/usr/games/fairy-stockfish`` (Debian's location, often
not on PATH); otherwise ``FairyStockfishNotFound`` with the install command.
"""

from typing import Dict, List, Optional, Sequence, Tuple

import chess
import chess.engine
import numpy as np

from azdb_jax.evaluation import uci
from azdb_jax.evaluation.stockfish import find_engine, make_limit, score_to_value
from azdb_jax.evaluation.team import SolverOutput

__all__ = [
    "FairyStockfish", "FairyStockfishSolver", "FairyStockfishPlayer", "FairyStockfishNotFound",
    "FairyStockfishError", "find_fairy_stockfish", "INSTALL_HINT", "ENV_VAR", "DEBIAN_PATH", "score_value",
]

ENV_VAR = "AZDB_FAIRY_STOCKFISH"
DEBIAN_PATH = "/usr/games/fairy-stockfish"
INSTALL_HINT = (
    "install it with `apt-get install fairy-stockfish` (Debian/Ubuntu; the binary lands in "
    f"/usr/games/fairy-stockfish) or point at a binary with --fairy_stockfish=PATH or the {ENV_VAR} "
    "environment variable")
FairyStockfishError = uci.UciError


class FairyStockfishNotFound(FileNotFoundError):
    """No Fairy-Stockfish binary where we looked; the message says how to install or point at one."""


def find_fairy_stockfish(path: Optional[str] = None) -> str:
    """The Fairy-Stockfish binary: ``path``, ``$AZDB_FAIRY_STOCKFISH``, PATH, ``/usr/games/fairy-stockfish``."""
    return find_engine(path, env_var=ENV_VAR, command="fairy-stockfish", debian_path=DEBIAN_PATH,
                       install_hint=INSTALL_HINT, label="Fairy-Stockfish", not_found=FairyStockfishNotFound)


def score_value(score: chess.engine.Score, *, ply: int = 30, wdl_model: str = "lichess") -> float:
    """Value in [-1, 1] for the side to move of a score from its own point of view."""
    return score_to_value(chess.engine.PovScore(score, chess.WHITE), chess.WHITE, ply=ply, wdl_model=wdl_model)


def _go_args(limit: chess.engine.Limit) -> Dict[str, Optional[int]]:
    return dict(nodes=limit.nodes, depth=limit.depth,
                movetime_ms=None if limit.time is None else max(1, int(round(limit.time * 1000))))


def _position_of(board) -> Tuple[str, List[str]]:
    """(root FEN, UCI moves) of a board with its move stack (GardnerBoard or chess.Board)."""
    return board.root().fen(), [move.uci() for move in board.move_stack]


class FairyStockfish:
    """One Fairy-Stockfish process playing ``variant`` (see the module docstring).

    Args:
      path: the binary (default: ``find_fairy_stockfish``).
      variant: ``UCI_Variant`` (checked against the engine's list).
      threads, hash_mb: the engine's ``Threads`` and ``Hash`` (MiB).
      skill_level: ``Skill Level`` (-20..20), None for full strength.
      options: further UCI options, e.g. ``{"Contempt": 0}`` for analysis.
      timeout: seconds to wait for an answer beyond a search's own time limit.
    """

    def __init__(self, path: Optional[str] = None, *, variant: str = "gardner", threads: int = 1,
                 hash_mb: int = 16, skill_level: Optional[int] = None, options: Optional[Dict[str, object]] = None,
                 timeout: float = 60.0):
        self.path = find_fairy_stockfish(path)
        self.variant = variant
        self.engine = uci.UciEngine([self.path], name="Fairy-Stockfish", timeout=timeout)
        try:
            settings: Dict[str, object] = {"UCI_Variant": variant, "Threads": threads, "Hash": hash_mb}
            if skill_level is not None:
                settings["Skill Level"] = skill_level
            settings.update(options or {})
            for name, value in settings.items():
                self.engine.set_option(name, value)
            self.engine.is_ready()
        except BaseException:
            self.engine.close()
            raise
        self._multipv = 1

    @property
    def name(self) -> str:
        """The engine's own name, e.g. ``"Fairy-Stockfish 11.1 LB 64"``."""
        return self.engine.name

    def legal_moves(self, fen: str, moves: Sequence[str] = ()) -> List[str]:
        """UCI moves of the position (``go perft 1``), in the engine's order."""
        self.engine.position(fen, moves)
        return list(self.engine.perft(1))

    def checkers(self, fen: str, moves: Sequence[str] = ()) -> List[str]:
        """Squares of the pieces giving check to the side to move (``d``'s ``Checkers`` line)."""
        self.engine.position(fen, moves)
        shown = self.engine.display()
        if "Checkers" not in shown:
            raise FairyStockfishError(f"{self.name} showed no Checkers line for {fen} moves {' '.join(moves)}")
        return shown["Checkers"].split()

    def engine_fen(self, fen: str, moves: Sequence[str] = ()) -> str:
        """The FEN the engine holds after ``position fen ... moves ...``."""
        self.engine.position(fen, moves)
        return self.engine.display()["Fen"]

    def analyse_board(self, board, *, limit: chess.engine.Limit, multipv: int = 1,
                      new_game: bool = True) -> uci.SearchResult:
        """``analyse`` of a board's root FEN and move stack (``GardnerBoard`` or ``chess.Board``)."""
        fen, moves = _position_of(board)
        return self.analyse(fen, moves, limit=limit, multipv=multipv, new_game=new_game)

    def analyse(self, fen: str, moves: Sequence[str] = (), *, limit: chess.engine.Limit, multipv: int = 1,
                new_game: bool = True) -> uci.SearchResult:
        """Searches a position; ``result.lines[k]`` is the (k+1)-th best line's last exact info."""
        if multipv != self._multipv:
            self.engine.set_option("MultiPV", multipv)
            self._multipv = multipv
        if new_game:
            self.engine.new_game()
        self.engine.position(fen, moves)
        return self.engine.go(**_go_args(limit))

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> "FairyStockfish":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _playable(board) -> None:
    if board.is_game_over():
        reason = board.termination() if hasattr(board, "termination") else board.outcome().termination.name.lower()
        raise ValueError(f"position {board.fen()} is already over ({reason}): no move to find")


class FairyStockfishSolver:
    """Fairy-Stockfish answering puzzle positions: best move and value for the side to move.

    Implements ``azdb_jax.evaluation.team.Solver`` with one column (``name``) and no
    groups, on ``GardnerBoard`` positions (or ``chess.Board`` with ``variant="chess"``).
    Each position is a new UCI game, sent with its move stack (repetitions count); with
    one thread and a ``nodes`` or ``depth`` limit every answer is reproducible.

    Args:
      path, variant, threads, hash_mb: as for ``FairyStockfish``.
      nodes, time, depth: the search limit per position, exactly one.
      name: the solver's column name.
      wdl_model: python-chess's win/draw/loss model for centipawn scores.
    """

    def __init__(self, path: Optional[str] = None, *, nodes: Optional[int] = None, time: Optional[float] = None,
                 depth: Optional[int] = None, variant: str = "gardner", threads: int = 1, hash_mb: int = 64,
                 name: str = "fairy_stockfish", wdl_model: str = "lichess"):
        self.limit = make_limit(nodes=nodes, time=time, depth=depth)
        if not name:
            raise ValueError("name must be a non-empty string")
        self.columns: Tuple[str, ...] = (name,)
        self.groups: Dict[str, Tuple[str, ...]] = {}
        self.wdl_model = wdl_model
        self._engine = FairyStockfish(path, variant=variant, threads=threads, hash_mb=hash_mb)

    @property
    def engine_name(self) -> str:
        return self._engine.name

    def analyse(self, board) -> Tuple[str, float]:
        """Best move (UCI) and value (side to move, [-1, 1]) of one position that is not over."""
        _playable(board)
        fen, moves = _position_of(board)
        result = self._engine.analyse(fen, moves, limit=self.limit)
        if result.bestmove is None or not result.lines:
            raise FairyStockfishError(f"{self._engine.name} found no move or score for {board.fen()}")
        return result.bestmove, score_value(result.lines[0].score, ply=board.ply(), wdl_model=self.wdl_model)

    def __call__(self, boards: Sequence) -> SolverOutput:
        moves: List[str] = []
        values = np.empty(len(boards), np.float64)
        for index, board in enumerate(boards):
            move, values[index] = self.analyse(board)
            moves.append(move)
        return SolverOutput(moves={self.columns[0]: moves}, values={self.columns[0]: values})

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> "FairyStockfishSolver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FairyStockfishPlayer:
    """A strength-limited Fairy-Stockfish opponent: ``player(board) -> chess.Move``.

    Each move searches ``nodes`` nodes, to ``depth`` plies or for ``time`` seconds (one
    of them; default 10,000 nodes); ``skill_level`` (-20..20) weakens it further. A board
    that does not continue the previous board's game starts a new UCI game.

    Args:
      path, variant, threads, hash_mb: as for ``FairyStockfish``.
      nodes, depth, time: per-move limit.
      skill_level: ``Skill Level``.
      name: label for reports; default e.g. ``"Fairy-Stockfish 11.1 LB 64 nodes=10000"``.
    """

    def __init__(self, path: Optional[str] = None, *, nodes: Optional[int] = None, depth: Optional[int] = None,
                 time: Optional[float] = None, skill_level: Optional[int] = None, variant: str = "gardner",
                 threads: int = 1, hash_mb: int = 16, name: Optional[str] = None):
        if nodes is None and depth is None and time is None:
            nodes = 10_000
        self.limit = make_limit(nodes=nodes, depth=depth, time=time)
        self._engine = FairyStockfish(path, variant=variant, threads=threads, hash_mb=hash_mb,
                                      skill_level=skill_level)
        self.skill_level = skill_level
        strength = "".join(f" {k}={v}" for k, v in (("nodes", nodes), ("depth", depth), ("time", time),
                                                     ("skill", skill_level)) if v is not None)
        self.name = name or f"{self._engine.name}{strength}"
        self._last: Optional[Tuple[str, List[str]]] = None

    def new_game(self) -> None:
        """Starts a new UCI game at the next move (clears the engine's hash)."""
        self._last = None

    def __call__(self, board) -> chess.Move:
        _playable(board)
        fen, moves = _position_of(board)
        continues = self._last is not None and self._last[0] == fen and moves[:len(self._last[1])] == self._last[1]
        result = self._engine.analyse(fen, moves, limit=self.limit, new_game=not continues)
        if result.bestmove is None:
            raise FairyStockfishError(f"{self._engine.name} returned no move for {board.fen()}")
        self._last = (fen, moves + [result.bestmove])
        return chess.Move.from_uci(result.bestmove)

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> "FairyStockfishPlayer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
