"""Classical game-tree search: alpha-beta with the improvements of the chess-engine era.

A baseline and a strength ladder for the trained teams, on chess (python-chess boards)
and Gardner's 5x5 minichess (a fast host-side move generator):

- ``search``: negamax alpha-beta (fail-soft), iterative deepening under depth, node or
  time limits, principal variation and root scores, move ordering (table move,
  MVV/LVA, killers, history, the previous iteration's values), quiescence search and
  singular extensions, each switchable (``SearchOptions``);
- ``ttable``: the transposition table (Zobrist keys, exact/lower/upper bounds,
  depth-preferred replacement, a size limit);
- ``evaluation`` and ``learning``: the classical evaluation terms and their weights
  fitted by least squares from game outcomes;
- ``book`` (polyglot opening books) and ``endgames`` (KQK and KRK databases by
  retrograde analysis, on 8x8 and 5x5);
- ``chess_position`` / ``gardner_position``: the boards the search runs on;
- ``player`` (``AlphaBetaPlayer``, spec strings such as ``alphabeta:depth=3``),
  ``policy`` (the player inside jitted matches), ``matches`` (host-side matches) and
  ``uci`` (the ``azdb-alphabeta`` UCI engine).
"""

from azdb_jax.classical.chess_position import ChessPosition
from azdb_jax.classical.evaluation import DEFAULT_WEIGHTS, EvalWeights
from azdb_jax.classical.gardner_position import GardnerPosition
from azdb_jax.classical.player import AlphaBetaPlayer, parse_spec, player_from_spec
from azdb_jax.classical.search import Limits, SearchOptions, SearchResult, Searcher

__all__ = ["ChessPosition", "GardnerPosition", "EvalWeights", "DEFAULT_WEIGHTS", "AlphaBetaPlayer", "parse_spec",
           "player_from_spec", "Limits", "SearchOptions", "SearchResult", "Searcher"]
