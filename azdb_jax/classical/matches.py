"""Matches between two host-side players (classical searchers, engines): the strength ladder's games.

``evaluation.matches.play_engine_match`` plays a jitted agent against a host-side
engine; here both sides are host-side players ``player(board) -> chess.Move`` (an
``AlphaBetaPlayer``, a ``StockfishPlayer``, a ``FairyStockfishPlayer``), so neither needs
JAX. Every start is played twice, A moving first and then second (SPEC §2,
"Matches"), each game refereed by ``referee.play_host_game``: it ends by the game's rules
— on ``chess.Board`` checkmate, stalemate, insufficient material, the fifty-move rule and
threefold repetition (both as automatic draws, as the project's chess env has them), on
``GardnerBoard`` the env's own rules — or at ``max_plies``, where it is unfinished; a
player's fault (an illegal move) is a bug of the library's own players and raises. The result is an
``evaluation.matches.MatchResult``, so ``summarize_match``, ``format_summary`` and the
game records apply unchanged.
"""

import json
import pathlib
import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np
import tqdm

from azdb_jax import arena, games, referee
from azdb_jax.classical import player as classical_player
from azdb_jax.evaluation.matches import MatchResult

__all__ = ["GAMES", "play_host_match", "host_starts", "random_starts", "gardner_starts", "book_starts", "chess_starts",
           "match_record", "fixed_positions", "resumable_report"]

Player = referee.Player

# The games the classical searcher plays, by registry id (``azdb_jax.games``): those with
# host-side boards of a size it searches (``player.BOARD_SIZES``); the ``--game`` choices
# of the classical scripts.
GAMES = tuple(game.id for game in games.REGISTRY
              if game.board is not None and game.board.board_size in classical_player.BOARD_SIZES)


def play_host_match(player_a: Player, player_b: Player, start_fens: Sequence[Optional[str]], *, env_id: str = "chess",
                    max_plies: int = 300, names=("A", "B"), progress: bool = False,
                    on_game: Optional[Callable[[int, float, int], None]] = None) -> MatchResult:
    """Plays every start twice (A first, then A second) between two host-side players.

    Args:
      player_a, player_b: ``board -> chess.Move`` (boards with their move stacks);
        a player with ``new_game()`` gets it before each game.
      start_fens: start positions (None: the game's initial position).
      env_id: ``chess`` or ``gardner_chess`` (boards from ``board_interop``).
      max_plies: plies per game at most; longer games are unfinished.
      on_game: called after each game with (game index, A's result, plies).

    Returns:
      ``MatchResult`` with games ordered (start, A first / A second); ``seed`` is 0.
    """
    game = games.board_game(env_id)
    if not start_fens:
        raise ValueError("play_host_match needs at least one start position")
    rows = {k: [] for k in ("start", "a_first", "result", "finished", "length", "actions", "white")}
    schedule = [(s, a_first) for s in range(len(start_fens)) for a_first in (True, False)]
    for index, (start, a_first) in enumerate(tqdm.tqdm(schedule, desc=f"{names[0]} vs {names[1]}", disable=not progress)):
        board = game.new_board(start_fens[start])
        white_start = board.turn == chess.WHITE
        a_white = white_start == a_first
        for player in (player_a, player_b):
            if hasattr(player, "new_game"):
                player.new_game()
        actions: List[int] = []
        played = referee.play_host_game(
            board, {a_white: player_a, not a_white: player_b}, max_plies=max_plies,
            on_move=lambda before, move: actions.append(game.move_to_action(move, before)))
        if played.faulty is not None:  # the library's own players: a bug, not a result
            mover = player_a if played.faulty == a_white else player_b
            raise ValueError(f"{getattr(mover, 'name', mover)} faulted ({played.termination}): {played.message}")
        result = played.white_score * (1.0 if a_white else -1.0)
        for key, value in (("start", start), ("a_first", a_first), ("result", result), ("finished", played.finished),
                           ("length", len(actions)), ("actions", actions), ("white", white_start)):
            rows[key].append(value)
        if on_game is not None:
            on_game(index, result, len(actions))
    length = np.asarray(rows["length"], np.int64)
    actions = np.full((len(length), max(1, int(length.max(initial=0)))), -1, np.int64)
    for g, moves in enumerate(rows["actions"]):
        actions[g, :len(moves)] = moves
    a_first = np.asarray(rows["a_first"])
    white = np.asarray(rows["white"])
    return MatchResult(env_id=game.env_id, names=tuple(names), start_index=np.asarray(rows["start"]),
                       seed=np.zeros(len(length), np.int64), a_first=a_first,
                       a_colour=np.where(a_first == white, "white", "black"), result=np.asarray(rows["result"]),
                       finished=np.asarray(rows["finished"]), length=length, actions=actions)


def _check_game(env_id: str) -> games.Game:
    if env_id not in GAMES:
        raise ValueError(f"the classical searcher plays {', '.join(GAMES)}, not {env_id!r}")
    return games.get(env_id)


def random_starts(env_id: str, count: int, plies: int, seed: int) -> List[str]:
    """``count`` distinct positions of game ``env_id`` (one of ``GAMES``) after ``plies``
    uniformly random plies (games not over)."""
    size = _check_game(env_id).board.board_size
    rng, fens, tries = random.Random(seed), [], 0
    while len(fens) < count:
        tries += 1
        if tries > 100 * count:
            raise ValueError(f"only {len(fens)} distinct start positions after {plies} random plies")
        position = classical_player.search_position(size)
        for _ in range(plies):
            moves = position.legal_moves()
            if not moves:
                break
            position.push(rng.choice(moves))
        if position.legal_moves() and not position.is_insufficient_material() and position.fen() not in fens:
            fens.append(position.fen())
    return fens


def gardner_starts(count: int, plies: int, seed: int) -> List[str]:
    """``random_starts`` of Gardner chess."""
    return random_starts("gardner_chess", count, plies, seed)


def book_starts(env_id: str, count: int, book=None) -> List[str]:
    """The first ``count`` positions of a FEN/EPD book: ``book``, or the game's
    ``opening_book`` (chess: the shared 4-move book)."""
    from azdb_jax import data  # pylint: disable=g-import-not-at-top

    game = games.get(env_id)
    if not book and game.opening_book is None:
        raise ValueError(f"{env_id} has no opening book; give the path of a FEN/EPD book")
    path = pathlib.Path(book) if book else data.data_path(*game.opening_book)
    return [position.board().fen() for position in data.load_book(path)][:count]


def chess_starts(count: int, book) -> List[str]:
    """``book_starts`` of chess."""
    return book_starts("chess", count, book)


def host_starts(env_id: str, count: int, *, plies: int, seed: int, book=None) -> List[str]:
    """``count`` start positions of the host-side matches of game ``env_id``: from its
    opening book (``book_starts``; ``book`` replaces the game's) when the game has one,
    else after ``plies`` random plies (``random_starts``, seeded ``seed``)."""
    if games.get(env_id).opening_book is not None:
        return book_starts(env_id, count, book)
    return random_starts(env_id, count, plies, seed)


def match_record(match: MatchResult) -> Dict[str, Any]:
    """A match's summary, unfinished games scored as draws, with its games' results."""
    decided = arena.tally(match.result, match.finished | ~match.finished)
    return dict(a=match.names[0], b=match.names[1], **{k: decided[k] for k in (
        "games", "wins", "draws", "losses", "score", "elo", "elo_stderr", "elo_clipped", "elo_clipped_stderr")},
        unfinished=int((~match.finished).sum()), mean_length=float(match.length.mean()),
        results=[float(r) for r in match.result])


def fixed_positions(env_id: str, count: int) -> Tuple[List[str], List[Any]]:
    """(FENs, search positions) of the benchmarks' fixed positions of game ``env_id`` (one
    of ``GAMES``): ``host_starts`` at 6 random plies, seed 1 (chess: the first ``count``
    positions of the shared 4-move book; Gardner chess: ``count`` distinct positions after
    6 random plies).

    Raises:
      ValueError: a game the classical searcher does not play.
    """
    size = _check_game(env_id).board.board_size
    fens = host_starts(env_id, count, plies=6, seed=1)
    return fens, [classical_player.search_position(size, fen) for fen in fens]


def resumable_report(path, empty: Dict[str, Any]) -> Dict[str, Any]:
    """The JSON report at ``path`` when a run already wrote it (to resume from), else ``empty``.

    Raises ValueError naming the file when it is not JSON."""
    path = pathlib.Path(path)
    if not path.exists():
        return empty
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON report to resume ({e})") from None
