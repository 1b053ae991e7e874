"""Loaders for the evaluation data: EPD suites, Lichess puzzles, ECO openings, books, paper list.

Every loader takes a path and returns a :class:`Loaded` tuple of frozen records with a
``.skipped`` report; ``strict=True`` (default) raises :class:`DataFormatError` naming the
file, line and reason at the first bad line. Third-party files live under ``AZDB_DATA_DIR``
(see :func:`data_path`); only the paper's own position list and our engine-labelled Gardner
chess sets (:mod:`azdb_jax.data.gardner`, ``game="gardner_chess"`` in the loaders) ship with
the package.

Example::

    from azdb_jax import data
    sts = data.load_epd(data.data_path("sts", "STS1-STS15_LAN_v6.epd"), c0="scores")
    score = sum(data.sts_score(r, my_move(r.fen)) for r in sts) / len(sts)
"""

from azdb_jax.data._common import (
    BOARD_FORMATS,
    BoardFormat,
    DataFormatError,
    Loaded,
    SkippedLine,
    board_format,
    data_path,
    status_names,
)
from azdb_jax.data.books import BookPosition, load_book, parse_book_line
from azdb_jax.data.connect_four import SolvedPosition, load_connect_four_positions
from azdb_jax.data.epd import (
    EpdRecord,
    bm_am_solved,
    load_epd,
    parse_epd_line,
    sts_score,
    sts_suite,
    sts_theme,
)
from azdb_jax.data.gardner import load_gardner_puzzles, load_gardner_values
from azdb_jax.data.lichess import LichessPuzzle, is_correct_solver_move, load_lichess_puzzles
from azdb_jax.data.openings import Opening, load_openings, replay_movetext
from azdb_jax.data.paper import PaperPosition, load_paper_positions, paper_value_solved

__all__ = [
    "BOARD_FORMATS",
    "BoardFormat",
    "BookPosition",
    "DataFormatError",
    "EpdRecord",
    "LichessPuzzle",
    "Loaded",
    "Opening",
    "PaperPosition",
    "SkippedLine",
    "SolvedPosition",
    "bm_am_solved",
    "board_format",
    "data_path",
    "is_correct_solver_move",
    "load_book",
    "load_connect_four_positions",
    "load_epd",
    "load_gardner_puzzles",
    "load_gardner_values",
    "load_lichess_puzzles",
    "load_openings",
    "load_paper_positions",
    "paper_value_solved",
    "parse_book_line",
    "parse_epd_line",
    "replay_movetext",
    "status_names",
    "sts_score",
    "sts_suite",
    "sts_theme",
]
