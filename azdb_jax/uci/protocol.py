"""The UCI text protocol: parsing the GUI's commands and formatting the engine's answers.

Pure functions on strings and python-chess boards (no JAX), so the protocol is tested on
its own. Every parser raises ``UciError`` with a message that names what is wrong; the
engine reports it as ``info string error: ...`` and carries on.
"""

import dataclasses
import math
from typing import List, Optional, Sequence, Tuple

import chess

GO_INT_FIELDS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")
GO_FLAGS = ("infinite", "ponder")

# |cp| reported for a value of ±1 (the search's value is clipped to keep the map finite).
VALUE_CLIP = 0.999


class UciError(ValueError):
    """A command the engine cannot act on; the message says why."""


@dataclasses.dataclass(frozen=True)
class Position:
    """A game as the GUI set it: the start position and the moves played since."""

    start_fen: str  # FEN of the start position (chess.STARTING_FEN for startpos)
    moves: Tuple[str, ...]  # UCI moves from the start

    def board(self) -> chess.Board:
        """The current position, with the game's moves on its stack."""
        board = chess.Board(self.start_fen)
        for move in self.moves:
            board.push_uci(move)
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


def parse_position(args: Sequence[str]) -> Position:
    """``position startpos|fen <FEN> [moves m1 m2 ...]`` (the arguments after ``position``).

    The FEN must describe a valid position (python-chess's ``Board.status()``) and every
    move must be legal where it is played.
    """
    args = list(args)
    if not args:
        raise UciError("position: expected 'startpos' or 'fen <FEN>'")
    moves_at = args.index("moves") if "moves" in args else len(args)
    head, moves = args[:moves_at], tuple(args[moves_at + 1:])
    if head[0] == "startpos":
        if len(head) > 1:
            raise UciError(f"position startpos: unexpected {' '.join(head[1:])!r} before 'moves'")
        fen = chess.STARTING_FEN
    elif head[0] == "fen":
        if len(head) < 2:
            raise UciError("position fen: the FEN is missing")
        if len(head) > 7:
            raise UciError(f"position fen: a FEN has at most 6 fields, got {len(head) - 1}: {' '.join(head[1:])!r}")
        fen = " ".join(head[1:])
        try:
            board = chess.Board(fen)
        except ValueError as e:
            raise UciError(f"position fen: malformed FEN {fen!r} ({e})") from None
        status = board.status()
        if status != chess.STATUS_VALID:
            problems = [flag.name.lower() for flag in chess.Status if flag and flag in status]
            raise UciError(f"position fen: {fen!r} is not a legal chess position ({', '.join(problems)})")
        fen = board.fen()
    else:
        raise UciError(f"position: expected 'startpos' or 'fen', got {head[0]!r}")
    board = chess.Board(fen)
    for ply, text in enumerate(moves, start=1):
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            raise UciError(f"position: move {ply} {text!r} is not a UCI move (e.g. e2e4, e7e8q)") from None
        if move not in board.legal_moves:
            raise UciError(f"position: move {ply} {text!r} is illegal in {board.fen()}")
        board.push(move)
    return Position(start_fen=fen, moves=moves)


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


def format_info(*, depth: int, nodes: int, seconds: float, value: float, pv: Sequence[str],
                text: str = "") -> str:
    """An ``info`` line: depth, nodes, nps, time (ms), score cp, pv and a trailing string."""
    ms = max(int(round(seconds * 1000)), 0)
    nps = int(nodes / seconds) if seconds > 0 else 0
    line = (f"info depth {depth} nodes {nodes} nps {nps} time {ms} score cp {value_to_cp(value)}"
            + (f" pv {' '.join(pv)}" if pv else ""))
    return line + (f" string {text}" if text else "")


def info_string(text: str) -> str:
    """``info string <text>`` on one line."""
    return "info string " + " ".join(str(text).split())


__all__ = ["UciError", "Position", "Go", "split_command", "parse_position", "parse_go", "parse_setoption",
           "value_to_cp", "format_info", "info_string"]
