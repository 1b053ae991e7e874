"""Chess start positions: the puzzle files our loaders read, solution lines, FENs to states.

Chess's ``FenGame`` (``CHESS_POSITIONS``, in its record ``azdb_jax.games.chess``). A source is

- ``"paper"``, ``"paper:penrose"`` or ``"paper:challenge"``: the packaged list of the
  paper's Penrose and Challenge positions. Its puzzles are grouped into the families of
  the paper's appendix tables (a puzzle and its variations): Tables 4-6 are
  ``penrose_variation_1``, Tables 7-11 ``penrose_variation_2`` (the original Penrose
  position and its 16 variations, held out in Table 1 row 4), Tables 12-18 the
  ``blocked_variation_<k>`` sets; the other positions are families of their own. The
  list publishes no solution lines;
- an EPD file (``.epd``): a puzzle per line, its ``id`` naming it, an optional ``pv``
  giving its solution line;
- a CSV file (``.csv``): the paper's layout (``id,set,...,fen,...``) or a Lichess puzzle
  file, whose puzzle position is the one after ``Moves[0]`` (the opponent's move) and
  whose solution line is the rest of ``Moves``;
- a book (``.fen``, ``.txt``, ``.book``): a FEN or EPD position per line.

Every error names the file and line (the data loaders' ``DataFormatError``).
"""

import importlib.resources
import pathlib
from typing import List, Sequence, Tuple

import chess
import jax
import pgx.core

from azdb_jax import data
from azdb_jax.data import _common
from azdb_jax.envs import chess_interop
from azdb_jax.games.positions import FenGame, PuzzleRecord, record_lines

BOOK_SUFFIXES = (".fen", ".txt", ".book")
# Paper appendix tables -> puzzle family (Tables 4-18 are variations of one position each).
PAPER_FAMILIES = {4: "penrose_variation_1", 5: "penrose_variation_1", 6: "penrose_variation_1",
                  7: "penrose_variation_2", 8: "penrose_variation_2", 9: "penrose_variation_2",
                  10: "penrose_variation_2", 11: "penrose_variation_2",
                  12: "blocked_variation_1", 13: "blocked_variation_2", 14: "blocked_variation_3",
                  15: "blocked_variation_4", 16: "blocked_variation_5", 17: "blocked_variation_5",
                  18: "blocked_variation_6"}


def _paper(source: str) -> List[PuzzleRecord]:
    which = source.partition(":")[2] or None
    if which is not None and which not in data.paper.SETS:
        raise ValueError(f"start_positions.sources: {source!r}: the paper's sets are {data.paper.SETS}")
    path = str(importlib.resources.files("azdb_jax.data").joinpath(data.paper.PACKAGED_FILE))
    return _paper_file(path, which)


def _paper_file(path: str, which=None) -> List[PuzzleRecord]:
    positions = data.load_paper_positions(path=path)
    numbers, header = record_lines(path, len(positions))
    return [PuzzleRecord(fen=p.fen, line=(), puzzle_id=p.id, group=PAPER_FAMILIES.get(p.paper_table, p.id),
                            path=path, line_number=n, header_line=header)
            for p, n in zip(positions, numbers) if which is None or p.set == which]


def _line(fen: str, moves: Sequence[str], where: str) -> Tuple[str, ...]:
    board = chess.Board(fen)
    for uci in moves:
        move = chess.Move.from_uci(uci)
        if move not in board.legal_moves:
            raise ValueError(f"{where}: solution move {uci} is illegal in {board.fen()}")
        board.push(move)
    return tuple(moves)


def _epd(path: str) -> List[PuzzleRecord]:
    records = data.load_epd(path)
    numbers, header = record_lines(path, len(records))
    out = []
    for record, n in zip(records, numbers):
        pv = dict(record.ops).get("pv", "").split()
        out.append(PuzzleRecord(fen=record.fen, line=_line(record.fen, pv, f"{path}:{n}"),
                                   puzzle_id=record.id or f"line {n}", group=record.id or f"line {n}",
                                   path=path, line_number=n, header_line=header))
    return out


def _lichess(path: str) -> List[PuzzleRecord]:
    puzzles = data.load_lichess_puzzles(path)
    numbers, header = record_lines(path, len(puzzles))
    out = []
    for puzzle, n in zip(puzzles, numbers):
        board = chess.Board(puzzle.fen)
        board.push(chess.Move.from_uci(puzzle.moves[0]))  # the loader checked the whole line
        name = puzzle.puzzle_id or f"line {n}"
        out.append(PuzzleRecord(fen=board.fen(), line=tuple(puzzle.moves[1:]), puzzle_id=name, group=name,
                                   path=path, line_number=n, header_line=header))
    return out


def _book(path: str) -> List[PuzzleRecord]:
    positions = data.load_book(path)
    numbers, header = record_lines(path, len(positions))
    return [PuzzleRecord(fen=p.fen, line=(), puzzle_id=p.id or f"line {n}", group=p.id or f"line {n}",
                            path=path, line_number=n, header_line=header) for p, n in zip(positions, numbers)]


def load_records(source: str) -> List[PuzzleRecord]:
    """The puzzles of one source (see the module docstring)."""
    if source == "paper" or source.startswith("paper:"):
        return _paper(source)
    path = pathlib.Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"start_positions.sources: positions file not found: {source}")
    suffix = path.suffix.lower()
    if suffix == ".epd":
        return _epd(str(path))
    if suffix in BOOK_SUFFIXES:
        return _book(str(path))
    if suffix == ".csv":
        first = _common.read_header(path, _common.read_lines(path))
        names = set(first[2]) if first else set()
        return _paper_file(str(path)) if {"set", "fen"} <= names else _lichess(str(path))
    raise ValueError(f"start_positions.sources: {source}: unknown file type {suffix!r}; "
                     f"use .epd, .csv (Lichess or the paper's layout) or {', '.join(BOOK_SUFFIXES)}")


def line_positions(fen: str, line: Sequence[str]) -> List[str]:
    """FENs where the solver is to move again along ``line`` (after its move and the reply)."""
    board = chess.Board(fen)
    out = []
    for k, uci in enumerate(line):
        board.push(chess.Move.from_uci(uci))
        if k % 2 == 1 and not board.is_game_over():
            out.append(board.fen())
    return out


def states_from_fens(env: pgx.core.Env, fens: Sequence[str]) -> pgx.core.State:
    """Stacked chess states on ``env``'s move generator; fails if it cannot play a position."""
    have = getattr(env, "max_pieces", 16)
    need = chess_interop.required_max_pieces(fens)
    if need > have:
        raise ValueError(f"start positions need chess's move generator for {need} pieces a side, the env has "
                         f"{have}: set env.max_pieces={need}")
    return chess_interop.states_from_fens(list(fens), max_pieces=have)


def set_halfmove_clock(env: pgx.core.Env, state: pgx.core.State, clock: jax.Array) -> pgx.core.State:
    """The position with half-move clock ``clock`` (its observation's clock plane too)."""
    state = state.replace(_x=state._x._replace(halfmove_count=clock))  # type: ignore  # pylint: disable=protected-access
    return state.replace(observation=env.observe(state))  # type: ignore


CHESS_POSITIONS = FenGame(load_records=load_records, line_positions=line_positions,
                          states_from_fens=states_from_fens, set_halfmove_clock=set_halfmove_clock)
