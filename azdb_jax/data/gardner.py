"""Engine-labelled Gardner chess (5x5) puzzle sets, shipped with the package.

Our analogue of the paper's Lichess / Penrose evaluations for the CPU-scale game (SPEC
§2, "Gardner chess"), written by ``experiments/make_gardner_puzzles.py`` (fixed seed;
positions from random play and from Fairy-Stockfish play; labelled by Fairy-Stockfish
11.1, ``UCI_Variant gardner``, at the depth the script's docstring states). Files
(``azdb_jax/data/gardner_puzzles/``):

- ``mate_in_1.csv``, ``mate_in_2.csv``, ``mate_in_3.csv``: Lichess layout (``PuzzleId,
  FEN,Moves,Rating,Themes,Source,Label``; the FEN is the position before the opponent's
  move ``Moves[0]``), the full mating line with the defender's replies; the first move of
  every non-final step is the only one that mates as fast (any mating move counts at the
  last step, as for Lichess puzzles);
- ``only_move.csv``: Lichess layout, one solver move, the best move clearly ahead of the
  second best;
- ``values.csv``: the paper's value-puzzle layout (``id,set,paper_table,fen,to_move,
  outcome,value,legal``), set ``draw`` (engine says draw while material or a shallow
  search says otherwise) and ``decisive`` (a forced mate the material does not show),
  scored by value like the Penrose set.

>>> mates = load_gardner_puzzles("mate_in_2")       # Loaded[LichessPuzzle], GardnerBoards
>>> values = load_gardner_values()                  # Loaded[PaperPosition]
"""

from __future__ import annotations

import importlib.resources
import pathlib

from azdb_jax.data._common import Loaded, PathLike
from azdb_jax.data.lichess import LichessPuzzle, load_lichess_puzzles
from azdb_jax.data.paper import PaperPosition, load_paper_positions

__all__ = ["PUZZLE_SETS", "VALUE_SET", "SETS", "packaged_path", "load_gardner_puzzles", "load_gardner_values"]

PUZZLE_SETS = ("mate_in_1", "mate_in_2", "mate_in_3", "only_move")  # Lichess layout
VALUE_SET = "values"  # paper value layout
SETS = PUZZLE_SETS + (VALUE_SET,)
FOLDER = "gardner_puzzles"


def packaged_path(name: str) -> pathlib.Path:
    """Path of a packaged set (``SETS``); FileNotFoundError if it was not generated."""
    if name not in SETS:
        raise ValueError(f"unknown Gardner puzzle set {name!r}; valid sets: {', '.join(SETS)}")
    resource = importlib.resources.files("azdb_jax.data").joinpath(FOLDER).joinpath(f"{name}.csv")
    path = pathlib.Path(str(resource))
    if not path.is_file():
        raise FileNotFoundError(f"Gardner puzzle set {name!r} not found at {path}; regenerate the sets with "
                                "`python experiments/make_gardner_puzzles.py`")
    return path


def load_gardner_puzzles(name: str = "mate_in_1", *, path: PathLike | None = None,
                         strict: bool = True) -> Loaded[LichessPuzzle]:
    """A Lichess-layout Gardner set: packaged ``name`` (``PUZZLE_SETS``), or the file at ``path``."""
    if path is None and name not in PUZZLE_SETS:
        raise ValueError(f"{name!r} is not a move-puzzle set; valid sets: {', '.join(PUZZLE_SETS)} "
                         f"(the value set loads with load_gardner_values)")
    return load_lichess_puzzles(packaged_path(name) if path is None else path, strict=strict, game="gardner_chess")


def load_gardner_values(set: str | None = None, *, path: PathLike | None = None,  # noqa: A002
                        strict: bool = True) -> Loaded[PaperPosition]:
    """The Gardner value puzzles (packaged ``values.csv`` or ``path``), optionally one ``set``."""
    return load_paper_positions(set, path=packaged_path(VALUE_SET) if path is None else path, strict=strict,
                                game="gardner_chess")
