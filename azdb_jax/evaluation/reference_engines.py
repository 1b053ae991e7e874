"""The reference engines of the games with boards, found through the game's record.

A game's host-side boards name the UCI engine that judges its positions and plays it at
known strengths (``BoardGame.reference_engine``): Stockfish for chess, Fairy-Stockfish
for Gardner chess (its ``UCI_Variant`` being the record's ``uci_variant``).
``reference_engine(game)`` gives what scripts need of it: its name, the finder of its
binary and its players, so no script chooses an engine by the game's name.

>>> engine = reference_engine("gardner_chess")
>>> engine.name
'Fairy-Stockfish'
>>> player = engine.player(nodes=200)   # FairyStockfishPlayer(nodes=200, variant="gardner")
"""

import dataclasses
import functools
from typing import Any, Callable, Optional

from azdb_jax import games
from azdb_jax.evaluation import fairy_stockfish, stockfish

__all__ = ["ReferenceEngine", "ENGINES", "reference_engine"]


@dataclasses.dataclass(frozen=True)
class ReferenceEngine:
    """One game's reference engine.

    Attributes:
      key: the engine's name in the records (``BoardGame.reference_engine``):
        ``"stockfish"`` or ``"fairy_stockfish"``.
      name: its name in reports (``"Stockfish"``, ``"Fairy-Stockfish"``).
      find: ``path or None -> the binary to run`` (``stockfish.find_stockfish``,
        ``fairy_stockfish.find_fairy_stockfish``); raises naming how to install it.
      player: ``(**limits) -> player(board) -> chess.Move``, a strength-limited opponent
        playing the game (limits as the engine's player takes them: ``nodes``, ``depth``,
        ``time``, ``skill_level``, ...).
    """

    key: str
    name: str
    find: Callable[[Optional[str]], str]
    player: Callable[..., Any]


def _stockfish_player(record: games.Game, **limits) -> stockfish.StockfishPlayer:
    del record  # Stockfish plays chess alone
    return stockfish.StockfishPlayer(**limits)


def _fairy_stockfish_player(record: games.Game, **limits) -> fairy_stockfish.FairyStockfishPlayer:
    return fairy_stockfish.FairyStockfishPlayer(variant=record.uci_variant, **limits)


# The engines by key: their report name, finder and ``(record, **limits) -> player``.
ENGINES = {
    "stockfish": ("Stockfish", stockfish.find_stockfish, _stockfish_player),
    "fairy_stockfish": ("Fairy-Stockfish", fairy_stockfish.find_fairy_stockfish, _fairy_stockfish_player),
}


def reference_engine(game: games.EnvOrId) -> ReferenceEngine:
    """The reference engine of ``game`` (an env or game id); ValueError for a game without
    host-side boards, naming the games that have one."""
    record = games.get(game)
    if record.board is None:
        raise ValueError(f"{record.id} has no reference engine; games with one: {', '.join(games.BOARD_IDS)}")
    key = record.board.reference_engine
    if key not in ENGINES:
        raise ValueError(f"{record.id}: unknown reference engine {key!r}; engines: {', '.join(ENGINES)}")
    name, find, make_player = ENGINES[key]
    return ReferenceEngine(key=key, name=name, find=find, player=functools.partial(make_player, record))
