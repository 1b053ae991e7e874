"""The classical searcher as a player: ``player(board) -> chess.Move``, built from a spec string.

A *spec* names the player in scripts and configs::

    alphabeta:depth=3
    alphabeta:nodes=20000
    alphabeta:depth=4:quiescence=0:tt=0
    alphabeta:time=0.1:book=books/eco.bin:weights=weights/gardner.json

``alphabeta`` then ``:``-separated ``key=value`` fields: one or more limits (``depth``,
``nodes`` — ints —, ``time`` in seconds), switches of ``SearchOptions`` (``ab``,
``id``, ``root_ordering``, ``tt_move``, ``mvv_lva``, ``killers``, ``history``, ``tt``,
``quiescence``, ``singular``, ``egtb``: 1/0, true/false, on/off), ``tt_size`` (slots, a
power of two), ``weights`` (a JSON file of ``EvalWeights.save``) and ``book`` (a polyglot
file, chess only; moves drawn in proportion to their weights, ``book_seed``). ``:`` keeps
a spec inside the comma-separated list flags of the scripts.

`AlphaBetaPlayer` takes ``chess.Board`` and ``GardnerBoard`` positions with their move
stacks (earlier positions count for repetitions), so it plugs in wherever the project
plays a host-side engine (``evaluation.matches.play_engine_match``, the skill
frameworks' engine levels, ``experiments/play_match.py``); `azdb_jax.classical.policy`
wraps it as a jittable policy for ``arena.play_games`` and the in-training evaluation.
"""

import dataclasses
from typing import Any, Dict, Optional

import chess

from azdb_jax.classical import evaluation, search
from azdb_jax.classical.chess_position import ChessPosition

__all__ = ["PlayerSpec", "parse_spec", "is_spec", "AlphaBetaPlayer", "player_from_spec", "position_of",
           "board_from_fen", "search_position", "BOARD_SIZES", "PREFIX"]

PREFIX = "alphabeta"
_SWITCHES = {"ab": "alpha_beta", "alpha_beta": "alpha_beta", "id": "iterative_deepening",
             "iterative_deepening": "iterative_deepening", "root_ordering": "root_ordering", "tt_move": "tt_move",
             "mvv_lva": "mvv_lva", "killers": "killers", "history": "history", "tt": "transposition_table",
             "transposition_table": "transposition_table", "quiescence": "quiescence", "qs": "quiescence",
             "singular": "singular_extensions", "singular_extensions": "singular_extensions",
             "egtb": "endgame_tables", "endgame_tables": "endgame_tables"}
_TRUE, _FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


@dataclasses.dataclass(frozen=True)
class PlayerSpec:
    """A parsed spec: the search's limits and options, and the files it reads."""

    text: str
    limits: search.Limits
    options: search.SearchOptions
    weights: Optional[str] = None
    book: Optional[str] = None
    book_seed: int = 0


def is_spec(text: str) -> bool:
    """Whether ``text`` names a classical player (``alphabeta`` or ``alphabeta:...``)."""
    return isinstance(text, str) and (text == PREFIX or text.startswith(PREFIX + ":"))


def parse_spec(text: str) -> PlayerSpec:
    """The `PlayerSpec` of ``text``; ValueError naming the spec and the field that is wrong."""
    if not is_spec(text):
        raise ValueError(f"{text!r} is not a classical player spec (alphabeta:depth=N, alphabeta:nodes=N, ...)")
    limits: Dict[str, Any] = {}
    options: Dict[str, Any] = {}
    files: Dict[str, Any] = {}
    for field in text.split(":")[1:]:
        name, sep, value = field.partition("=")
        if not sep or not value:
            raise ValueError(f"player spec {text!r}: field {field!r} is not key=value")
        if name in limits or name in files or _SWITCHES.get(name) in options or name in options:
            raise ValueError(f"player spec {text!r}: {name} is given twice")
        try:
            if name in ("depth", "nodes"):
                limits[name] = int(value)
            elif name == "time":
                limits[name] = float(value)
            elif name == "tt_size":
                options[name] = int(value)
            elif name in _SWITCHES:
                if value.lower() not in _TRUE + _FALSE:
                    raise ValueError(f"{name}={value!r} must be 1/0, true/false or on/off")
                options[_SWITCHES[name]] = value.lower() in _TRUE
            elif name in ("weights", "book"):
                files[name] = value
            elif name == "book_seed":
                files[name] = int(value)
            else:
                raise ValueError(f"unknown field {name!r}; fields: depth, nodes, time, {', '.join(sorted(_SWITCHES))}, "
                                 "tt_size, weights, book, book_seed")
        except ValueError as e:
            message = str(e) if "=" in str(e) or "field" in str(e) else f"{name}={value!r} ({e})"
            raise ValueError(f"player spec {text!r}: {message}") from None
    try:
        spec_limits = search.Limits(**limits) if limits else search.Limits(depth=3)
        spec_options = search.SearchOptions(**options)
        search.check_compatible(spec_limits, spec_options)
    except ValueError as e:
        raise ValueError(f"player spec {text!r}: {e}") from None
    return PlayerSpec(text, spec_limits, spec_options, **files)


def position_of(board) -> Any:
    """The search position of a ``chess.Board``, a ``GardnerBoard`` or a search position."""
    if isinstance(board, chess.Board):
        return ChessPosition(board)
    if hasattr(board, "legal_moves") and callable(board.legal_moves):
        return board.copy()  # already a search position
    from azdb_jax.classical.gardner_position import GardnerPosition  # pylint: disable=g-import-not-at-top

    return GardnerPosition.from_board(board)


# The board sizes (squares a side, a game's ``BoardGame.board_size``) the searcher plays:
# 8, chess (``ChessPosition``), and 5, Gardner chess (``GardnerPosition``).
BOARD_SIZES = (8, 5)


def _check_size(size: int) -> None:
    if size not in BOARD_SIZES:
        raise ValueError(f"the classical searcher plays boards of {' or '.join(map(str, BOARD_SIZES))} squares a side, "
                         f"not {size}")


def search_position(size: int, fen: Optional[str] = None) -> Any:
    """A search position of a board of ``size`` squares a side (one of ``BOARD_SIZES``):
    ``fen``, or the game's initial position."""
    _check_size(size)
    if size == 8:
        return ChessPosition() if fen is None else ChessPosition(fen)
    from azdb_jax.classical.gardner_position import GardnerPosition  # pylint: disable=g-import-not-at-top

    return GardnerPosition() if fen is None else GardnerPosition(fen)


def board_from_fen(fen: str, size: int) -> Any:
    """What a player searches from a FEN of a board of ``size`` squares a side: a
    ``chess.Board`` (8; an opening book reads it) or a ``GardnerPosition`` (5)."""
    _check_size(size)
    return chess.Board(fen) if size == 8 else search_position(size, fen)


def _board_size(board) -> int:
    return 8 if isinstance(board, (chess.Board, ChessPosition)) else 5


class AlphaBetaPlayer:
    """A classical alpha-beta player: ``player(board) -> chess.Move``.

    Args:
      limits: the search's ``Limits`` per move.
      options: ``SearchOptions``.
      weights: evaluation weights (``EvalWeights``).
      book: an ``azdb_jax.classical.book.OpeningBook`` consulted first (chess).
      name: label for reports (default: a spec-like description).

    The search's table, killers and history carry over from move to move; `new_game`
    clears them. ``last`` holds the last search's ``SearchResult`` (None after a book move).
    """

    def __init__(self, limits: search.Limits = search.Limits(depth=3),
                 options: search.SearchOptions = search.SearchOptions(), *,
                 weights: evaluation.EvalWeights = evaluation.DEFAULT_WEIGHTS, book=None, name: Optional[str] = None):
        self.limits, self.options, self.weights, self.book = limits, options, weights, book
        limit_text = ":".join(f"{k}={v}" for k, v in dataclasses.asdict(limits).items() if v is not None)
        self.name = name or f"{PREFIX}:{limit_text}"
        self._searchers: Dict[int, search.Searcher] = {}
        self.last: Optional[search.SearchResult] = None
        self.nodes_total, self.seconds_total, self.searches = 0, 0.0, 0  # over every search of this player

    def searcher(self, size: int) -> search.Searcher:
        """The searcher of a board size (8: chess, 5: Gardner), with its endgame tables."""
        if size not in self._searchers:
            tables = None
            if self.options.endgame_tables:
                from azdb_jax.classical.endgames import EndgameTables  # pylint: disable=g-import-not-at-top

                tables = EndgameTables(size)
            self._searchers[size] = search.Searcher(self.options, weights=self.weights, tables=tables)
        return self._searchers[size]

    def new_game(self) -> None:
        for searcher in self._searchers.values():
            searcher.reset()

    def analyse(self, board, limits: Optional[search.Limits] = None, **kwargs) -> search.SearchResult:
        """The search result of ``board`` (any board `position_of` takes; its native moves);
        ValueError for a finished game. ``kwargs`` go to ``Searcher.search``."""
        return self._search(board, limits, **kwargs)[1]

    def _search(self, board, limits: Optional[search.Limits] = None, **kwargs):
        _check_playable(board)
        position = position_of(board)
        return position, self.searcher(_board_size(board)).search(position, limits or self.limits, **kwargs)

    def __call__(self, board) -> chess.Move:
        if self.book is not None and isinstance(board, chess.Board):
            move = self.book.move(board)
            if move is not None:
                self.last = None
                return move
        position, self.last = self._search(board)
        self.nodes_total += self.last.nodes
        self.seconds_total += self.last.seconds
        self.searches += 1
        return position.to_chess(self.last.best_move)

    def close(self) -> None:
        if self.book is not None:
            self.book.close()

    def __enter__(self) -> "AlphaBetaPlayer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _check_playable(board) -> None:
    over = board.is_game_over() if hasattr(board, "is_game_over") else not board.legal_moves()
    if over:
        raise ValueError(f"position {board.fen()} is already over: no move to find")


def player_from_spec(text: str, *, name: Optional[str] = None) -> AlphaBetaPlayer:
    """The `AlphaBetaPlayer` of a spec (`parse_spec`); ValueError naming a bad spec or file."""
    spec = parse_spec(text)
    weights = evaluation.DEFAULT_WEIGHTS if spec.weights is None else evaluation.EvalWeights.load(spec.weights)
    book = None
    if spec.book is not None:
        from azdb_jax.classical.book import OpeningBook  # pylint: disable=g-import-not-at-top

        book = OpeningBook(spec.book, choose="weighted", seed=spec.book_seed)
    return AlphaBetaPlayer(spec.limits, spec.options, weights=weights, book=book, name=name or text)
