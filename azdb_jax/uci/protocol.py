"""The UCI text protocol: parsing the GUI's commands and formatting the engine's answers.

Pure functions on strings and boards, so the protocol is tested on its own. The games it
speaks (``UCI_Variant``, Fairy-Stockfish's names) are the registry's games with host-side
boards, each a `UciGame`: ``chess`` on python-chess boards (no JAX), and ``gardner``
(Gardner's 5x5 minichess) on ``azdb_jax.envs.gardner_board.GardnerBoard``, whose rules are
the env's. Everything the protocol does with a game — its start position, reading and
checking a FEN, replaying moves, a game the board's rules ended but the GUI plays on —
it asks of the game's boards, never of its name. Every parser raises ``UciError`` with a
message that names what is wrong; the engine reports it as ``info string error: ...``
and carries on.
"""

import dataclasses
import functools
import importlib
import math
from typing import Any, List, Optional, Sequence, Tuple

import chess

GO_INT_FIELDS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")
GO_FLAGS = ("infinite", "ponder")

# |cp| reported for a value of ±1 (the search's value is clipped to keep the map finite).
VALUE_CLIP = 0.999


class UciError(ValueError):
    """A command the engine cannot act on; the message says why."""


@dataclasses.dataclass(frozen=True)
class UciGame:
    """A game as the UCI engines speak it.

    The facts are the registry's (``azdb_jax.games``: a game's id and its ``BoardGame``'s
    ``variant`` and boards; ``tests/test_uci_protocol.py`` checks that they agree), named
    here so that speaking chess needs neither JAX nor the registry, whose import takes
    seconds that a GUI waiting for ``uciok`` does not give.

    Attributes:
      variant: the ``UCI_Variant`` name (Fairy-Stockfish's).
      game_id: the game's id in the registry, as a run's config names it.
      board_path: ``module:Class`` of the game's host-side boards (python-chess's board
        API; ``Class()`` is the start, ``Class(fen)`` a position), imported on first use.
      start_fen: the FEN of the start position (``Class().fen()``, which the tests check),
        written here because importing Gardner's boards imports pgx, which compiles at
        import: seconds that an engine answering ``uci`` or setting up its first
        position does not wait for.
    """

    variant: str
    game_id: str
    board_path: str
    start_fen: str

    @property
    def board_type(self) -> type:
        """The class of the game's boards."""
        return _import(self.board_path)

    def new_board(self, fen: Optional[str] = None) -> Any:
        """A board at ``fen`` (the start when None); ValueError for a malformed FEN."""
        return self.board_type() if fen is None else self.board_type(fen)

    @property
    def board_size(self) -> int:
        """Squares per side (the start FEN's ranks)."""
        return len(self.start_fen.split()[0].split("/"))


GAMES: Tuple[UciGame, ...] = (
    UciGame(variant="chess", game_id="chess", board_path="chess:Board",
            start_fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    UciGame(variant="gardner", game_id="gardner_chess", board_path="azdb_jax.envs.gardner_board:GardnerBoard",
            start_fen="rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"),
)
VARIANTS = tuple(game.variant for game in GAMES)  # the UCI_Variant names the engines speak
_BY_VARIANT = {game.variant: game for game in GAMES}


@functools.lru_cache(maxsize=None)
def _import(path: str) -> type:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def uci_game(variant: str) -> UciGame:
    """The game of a ``UCI_Variant`` name; UciError for a game the engines do not speak."""
    try:
        return _BY_VARIANT[variant]
    except (KeyError, TypeError):
        raise UciError(f"UCI_Variant {variant!r}: this engine plays {' or '.join(VARIANTS)}") from None


def variant_of_game(game_id: str) -> Optional[str]:
    """The ``UCI_Variant`` of a registry game id (``gardner_chess`` -> ``gardner``); None
    for a game without boards."""
    return next((game.variant for game in GAMES if game.game_id == game_id), None)


def starting_fen(variant: str) -> str:
    """The start position of ``variant`` (one of ``VARIANTS``)."""
    return uci_game(variant).start_fen


def new_board(variant: str, fen: Optional[str] = None) -> Any:
    """A board of ``variant`` at ``fen`` (the start when None): a ``chess.Board`` or a
    ``GardnerBoard``; ValueError for a malformed FEN."""
    return uci_game(variant).new_board(fen)


def searchable(board: Any) -> Any:
    """The board's current position without its history, ready to search: a halfmove
    clock at the fifty-move limit is set back to 99, so that a game the GUI plays on
    (nobody claimed the draw) still has moves to search."""
    fields = board.fen().split()
    fields[4] = str(min(int(fields[4]), 99))
    return type(board)(" ".join(fields))


@dataclasses.dataclass(frozen=True)
class Position:
    """A game as the GUI set it: the start position and the moves played since."""

    start_fen: str  # FEN of the start position (the variant's start for startpos)
    moves: Tuple[str, ...]  # UCI moves from the start
    variant: str = "chess"  # one of VARIANTS
    _board: Any = dataclasses.field(default=None, compare=False, repr=False)  # the replayed game, cached

    @classmethod
    def start(cls, variant: str = "chess") -> "Position":
        return cls(starting_fen(variant), (), variant)

    @property
    def game(self) -> UciGame:
        return uci_game(self.variant)

    def board(self) -> Any:
        """The current position, with the game's moves on its stack (a fresh copy).

        A game follows its board's rules (Gardner's are the env's, which end a game at a
        threefold repetition, the fifty-move rule and 256 plies); where a GUI plays on
        after the rules ended the game, the board restarts from the current FEN (its
        stack then holds the moves since)."""
        if self._board is None:
            object.__setattr__(self, "_board", _replay(self.game.new_board(self.start_fen), self.moves))
        return self._board.copy()


def _replay(board: Any, moves: Sequence[str], first_ply: int = 1) -> Any:
    """Plays UCI ``moves`` on ``board`` (in place where it can); UciError names the first
    move that is not UCI or not legal."""
    for ply, text in enumerate(moves, start=first_ply):
        try:
            move = board.parse_uci(text)
        except chess.IllegalMoveError:
            raise UciError(f"position: move {ply} {text!r} is illegal in {board.fen()}") from None
        except ValueError:
            raise UciError(f"position: move {ply} {text!r} is not a UCI move (e.g. e2e4, e7e8q)") from None
        if not move:  # "0000", a null move
            raise UciError(f"position: move {ply} {text!r} is illegal in {board.fen()}")
        if board.is_game_over():
            board = searchable(board)  # the rules ended the game; the GUI plays on
        board.push(move)
    return board


@dataclasses.dataclass(frozen=True)
class Go:
    """The limits of one ``go`` command (times in milliseconds); None where not given."""

    wtime: Optional[int] = None
    btime: Optional[int] = None
    winc: Optional[int] = None
    binc: Optional[int] = None
    movestogo: Optional[int] = None
    movetime: Optional[int] = None
    nodes: Optional[int] = None
    depth: Optional[int] = None
    mate: Optional[int] = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: Tuple[str, ...] = ()

    def clock(self, turn: chess.Color) -> Tuple[Optional[int], int]:
        """(time left, increment) of the side ``turn``, in milliseconds."""
        if turn == chess.WHITE:
            return self.wtime, self.winc or 0
        return self.btime, self.binc or 0


def split_command(line: str) -> Tuple[str, List[str]]:
    """(command, arguments) of a line; ("", []) for a blank line."""
    tokens = line.strip().split()
    return (tokens[0], tokens[1:]) if tokens else ("", [])


def parse_position(args: Sequence[str], variant: str = "chess", previous: Optional[Position] = None) -> Position:
    """``position startpos|fen <FEN> [moves m1 m2 ...]`` (the arguments after ``position``).

    The FEN must describe a valid position of ``variant`` (what its board accepts, and
    for python-chess boards ``Board.status()``) and every move must be
    legal where it is played. When ``previous`` is the same game a few moves earlier
    (what a GUI sends move after move), only the new moves are replayed.
    """
    game = uci_game(variant)
    args = list(args)
    if not args:
        raise UciError("position: expected 'startpos' or 'fen <FEN>'")
    moves_at = args.index("moves") if "moves" in args else len(args)
    head, moves = args[:moves_at], tuple(args[moves_at + 1:])
    if head[0] == "startpos":
        if len(head) > 1:
            raise UciError(f"position startpos: unexpected {' '.join(head[1:])!r} before 'moves'")
        fen = game.start_fen
    elif head[0] == "fen":
        if len(head) < 2:
            raise UciError("position fen: the FEN is missing")
        if len(head) > 7:
            raise UciError(f"position fen: a FEN has at most 6 fields, got {len(head) - 1}: {' '.join(head[1:])!r}")
        fen = _valid_fen(" ".join(head[1:]), game)
    else:
        raise UciError(f"position: expected 'startpos' or 'fen', got {head[0]!r}")
    done = 0
    if (previous is not None and previous.variant == variant and previous.start_fen == fen
            and previous.moves == moves[:len(previous.moves)]):
        board, done = previous.board(), len(previous.moves)
    else:
        board = game.new_board(fen)
    board = _replay(board, moves[done:], first_ply=done + 1)
    return Position(start_fen=fen, moves=moves, variant=variant, _board=board)


def _valid_fen(fen: str, game: UciGame) -> str:
    """The FEN as the game's board writes it; UciError naming what is wrong."""
    try:
        board = game.new_board(fen)
    except ValueError as e:
        raise UciError(f"position fen: malformed FEN {fen!r} for {game.variant} ({e})") from None
    status = board.status() if hasattr(board, "status") else chess.STATUS_VALID  # python-chess's checks
    if status != chess.STATUS_VALID:
        problems = [flag.name.lower() for flag in chess.Status if flag and flag in status]
        raise UciError(f"position fen: {fen!r} is not a legal {game.variant} position ({', '.join(problems)})")
    return board.fen()


def parse_go(args: Sequence[str]) -> Tuple[Go, List[str]]:
    """(limits, warnings) of ``go ...``; unknown or malformed parts are skipped with a warning."""
    values = {}
    warnings: List[str] = []
    searchmoves: List[str] = []
    args = list(args)
    i = 0
    while i < len(args):
        token = args[i]
        if token in GO_INT_FIELDS:
            if i + 1 >= len(args):
                warnings.append(f"go: {token} needs a value")
                break
            try:
                values[token] = int(args[i + 1])
            except ValueError:
                warnings.append(f"go: {token} {args[i + 1]!r} is not an integer; ignored")
            i += 2
        elif token in GO_FLAGS:
            values[token] = True
            i += 1
        elif token == "searchmoves":
            i += 1
            while i < len(args) and args[i] not in GO_INT_FIELDS + GO_FLAGS:
                searchmoves.append(args[i])
                i += 1
        else:
            warnings.append(f"go: unknown parameter {token!r}; ignored")
            i += 1
    for name in ("movestogo", "movetime", "nodes", "depth"):
        if name in values and values[name] < 1:
            warnings.append(f"go: {name} {values[name]} must be >= 1; ignored")
            del values[name]
    for name in ("wtime", "btime", "winc", "binc"):
        if name in values and values[name] < 0:
            values[name] = 0  # some GUIs send a negative clock when it has just run out
    return Go(searchmoves=tuple(searchmoves), **values), warnings


def parse_setoption(args: Sequence[str]) -> Tuple[str, str]:
    """(name, value) of ``setoption name <name> [value <value>]``; names may hold spaces."""
    args = list(args)
    if not args or args[0] != "name":
        raise UciError("setoption: expected 'setoption name <name> [value <value>]'")
    if "value" in args:
        at = args.index("value")
        name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
    else:
        name, value = " ".join(args[1:]), ""
    if not name:
        raise UciError("setoption: the option name is missing")
    return name, value


# ------------------------------------------------------------------ answers


def value_to_cp(value: float) -> int:
    """Centipawns of a value ``v ∈ [-1, 1]`` for the side to move.

    ``v`` is read as an expected score ``E = (1 + v) / 2`` and mapped to the Elo
    difference with that expected score, ``cp = 400 · log10(E / (1 − E))`` (a pawn is
    worth about 100 Elo, the usual convention of engines that report values as cp).
    ``|v|`` is clipped to 0.999, so ``|cp| ≤ 1320``.
    """
    if not math.isfinite(value):
        return 0
    v = min(max(value, -VALUE_CLIP), VALUE_CLIP)
    return int(round(400.0 * math.log10((1.0 + v) / (1.0 - v))))


def format_info(*, depth: int, nodes: int, seconds: float, pv: Sequence[str], value: Optional[float] = None,
                cp: Optional[int] = None, mate: Optional[int] = None, text: str = "", seldepth: Optional[int] = None,
                nps: Optional[float] = None, hashfull: Optional[int] = None) -> str:
    """An ``info`` line: depth, seldepth, nodes, nps (``nodes / seconds`` unless given),
    hashfull (per mille), time (ms), score, pv and a trailing string. The score is ``mate
    M`` when ``mate`` is given, else ``cp`` (centipawns), else the value ``v ∈ [-1, 1]`` as
    centipawns (``value_to_cp``)."""
    ms = max(int(round(seconds * 1000)), 0)
    if nps is None:
        nps = nodes / seconds if seconds > 0 else 0
    if mate is not None:
        score = f"mate {mate}"
    else:
        score = f"cp {cp if cp is not None else value_to_cp(value if value is not None else 0.0)}"
    line = (f"info depth {depth}" + (f" seldepth {seldepth}" if seldepth is not None else "")
            + f" nodes {nodes} nps {int(nps)}" + (f" hashfull {min(max(hashfull, 0), 1000)}" if hashfull is not None else "")
            + f" time {ms} score {score}" + (f" pv {' '.join(pv)}" if pv else ""))
    return line + (f" string {text}" if text else "")


def info_string(text: str) -> str:
    """``info string <text>`` on one line."""
    return "info string " + " ".join(str(text).split())


__all__ = ["UciError", "UciGame", "GAMES", "VARIANTS", "uci_game", "variant_of_game", "starting_fen", "new_board",
           "searchable", "Position", "Go", "split_command", "parse_position", "parse_go", "parse_setoption", "value_to_cp", "format_info", "info_string"]
