"""Games between two UCI engines under a clock, refereed through python-chess.

``play_match`` starts both engines with ``chess.engine.SimpleEngine.popen_uci`` (the
client GUIs and tournament managers use), plays each opening with both colours, keeps
the clocks itself (the wall time from ``go`` to ``bestmove`` is charged to the mover,
the increment added after the move) and records, per game, the result and how it
ended: checkmate, stalemate, insufficient material, 75-move rule, fivefold/threefold
repetition or the 50-move rule (claimed by the referee), adjudication at ``max_plies``,
or a fault — a *time* loss, an *illegal* move, or an engine that *crashed* or hung.

Two games: chess (``chess.Board``), and Gardner's 5x5 minichess (``variant="gardner"``)
on ``GardnerBoard``, which python-chess's client drives like a chess board (it sends
``setoption name UCI_Variant value gardner`` and ``position fen ...``). A Gardner game
ends by the env's rules (checkmate, stalemate, insufficient material, fifty moves,
threefold repetition, 256 plies) and is written as PGN with a ``Variant`` tag.

Used by the engine's acceptance runs (``experiments/uci_match.py``) and its tests.
"""

import dataclasses
import time
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import chess.engine
import chess.pgn

from azdb_jax.uci import protocol

# Short, common openings as UCI moves (facts of the game, not third-party data).
OPENINGS: Dict[str, Tuple[str, ...]] = {
    "Ruy Lopez": ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5"),
    "Sicilian": ("e2e4", "c7c5", "g1f3", "d7d6"),
    "French": ("e2e4", "e7e6", "d2d4", "d7d5"),
    "Caro-Kann": ("e2e4", "c7c6", "d2d4", "d7d5"),
    "Queen's Gambit Declined": ("d2d4", "d7d5", "c2c4", "e7e6"),
    "Slav": ("d2d4", "d7d5", "c2c4", "c7c6"),
    "King's Indian": ("d2d4", "g8f6", "c2c4", "g7g6", "b1c3", "f8g7"),
    "English": ("c2c4", "e7e5", "b1c3"),
    "Italian": ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4"),
    "Scandinavian": ("e2e4", "d7d5", "e4d5", "d8d5"),
}

# Gardner chess from its start (rnbqk/ppppp/5/PPPPP/RNBQK): White's first moves.
GARDNER_OPENINGS: Dict[str, Tuple[str, ...]] = {
    "Knight c3": ("b1c3",),
    "Knight a3": ("b1a3",),
    "Pawn b3": ("b2b3",),
    "Pawn d3": ("d2d3",),
    "Pawn e3": ("e2e3",),
}

FAULTS = ("time", "illegal", "crash")


@dataclasses.dataclass
class GameRecord:
    opening: str
    engine_white: bool
    result: str  # "1-0", "0-1", "1/2-1/2"
    termination: str  # checkmate, stalemate, ..., adjudication, time, illegal, crash
    faulty: Optional[str]  # which side faulted ("engine" / "opponent"), or None
    plies: int
    engine_seconds: float  # clock time the engine used
    engine_min_clock: float  # the lowest the engine's clock got (seconds, before increments)
    pgn: str

    @property
    def engine_score(self) -> float:
        if self.result == "1/2-1/2":
            return 0.5
        return 1.0 if (self.result == "1-0") == self.engine_white else 0.0


def openings_for(variant: str) -> Dict[str, Tuple[str, ...]]:
    """The default openings of ``variant`` (chess or gardner)."""
    return dict(GARDNER_OPENINGS if variant == "gardner" else OPENINGS)


def _ended(board) -> Optional[Tuple[str, str]]:
    if isinstance(board, chess.Board):
        outcome = board.outcome(claim_draw=True)
        return None if outcome is None else (outcome.result(), outcome.termination.name.lower())
    return (board.result(), board.termination()) if board.is_game_over() else None


def game_pgn(board, headers: Dict[str, str]) -> str:
    """The game on ``board`` (its root and move stack) as PGN with ``headers``."""
    if isinstance(board, chess.Board):
        game = chess.pgn.Game.from_board(board)
        game.headers.update(headers)
        return str(game)
    replay = board.root()
    tags = {"Event": "?", "Site": "?", "Date": "????.??.??", "Round": "?", "White": "?", "Black": "?",
            "Result": board.result(), **headers, "Variant": replay.uci_variant, "SetUp": "1", "FEN": replay.fen()}
    words = []
    for i, move in enumerate(board.move_stack):
        if replay.turn == chess.WHITE or i == 0:
            words.append(f"{replay.fullmove_number}." + ("" if replay.turn == chess.WHITE else ".."))
        words.append(replay.san(move))
        replay.push(move)
    words.append(tags["Result"])
    lines, line = [], ""
    for word in words:  # PGN lines of at most 80 characters
        if line and len(line) + 1 + len(word) > 80:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([f'[{key} "{value}"]' for key, value in tags.items()] + ["", *lines, line])


def play_game(engine: chess.engine.SimpleEngine, opponent: chess.engine.SimpleEngine, *, opening: str,
              moves: Sequence[str], engine_white: bool, base: float, increment: float,
              opponent_limit: Dict[str, int], max_plies: int, game_id: object, variant: str = "chess") -> GameRecord:
    """One game of ``variant`` from the opening ``moves``; the referee keeps both clocks."""
    board = protocol.new_board(variant)
    for move in moves:
        board.push_uci(move)
    clocks = {chess.WHITE: base, chess.BLACK: base}
    engine_colour = chess.WHITE if engine_white else chess.BLACK
    used, lowest = 0.0, base
    ended, faulty = None, None
    while ended is None:
        ended = _ended(board)
        if ended is not None:
            break
        if board.ply() >= max_plies:
            ended = ("1/2-1/2", "adjudication")
            break
        mover = board.turn
        player = engine if mover == engine_colour else opponent
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=increment, black_inc=increment,
                                   **({} if mover == engine_colour else opponent_limit))
        side = "engine" if mover == engine_colour else "opponent"
        loser = "0-1" if mover == chess.WHITE else "1-0"
        start = time.monotonic()
        try:
            played = player.play(board, limit, game=game_id)
        except chess.engine.EngineTerminatedError:
            ended, faulty = (loser, "crash"), side
            break
        except chess.engine.EngineError as e:  # python-chess rejects an illegal bestmove
            ended, faulty = (loser, "illegal" if "illegal" in str(e).lower() else "crash"), side
            break
        spent = time.monotonic() - start
        clocks[mover] -= spent
        if mover == engine_colour:
            used += spent
            lowest = min(lowest, clocks[mover])
        if clocks[mover] < 0:
            ended, faulty = (loser, "time"), side
            break
        if played.move is None or not board.is_legal(played.move):
            ended, faulty = (loser, "illegal"), side
            break
        board.push(played.move)
        clocks[mover] += increment
    pgn = game_pgn(board, dict(Event="azdb_jax UCI match", White="azdb_jax" if engine_white else "opponent",
                               Black="opponent" if engine_white else "azdb_jax", Result=ended[0], Opening=opening,
                               Termination=ended[1], TimeControl=f"{base:g}+{increment:g}"))
    return GameRecord(opening=opening, engine_white=engine_white, result=ended[0], termination=ended[1],
                      faulty=faulty, plies=board.ply(), engine_seconds=used, engine_min_clock=lowest, pgn=pgn)


def play_match(engine_command: Sequence[str], opponent_command: Sequence[str], *, games: int, base: float,
               increment: float, engine_options: Optional[Dict[str, object]] = None,
               opponent_options: Optional[Dict[str, object]] = None,
               opponent_limit: Optional[Dict[str, int]] = None, openings: Optional[Dict[str, Sequence[str]]] = None,
               max_plies: int = 300, progress=None, variant: str = "chess") -> List[GameRecord]:
    """``games`` games of ``variant`` (each opening with both colours, cycling through
    ``openings``, by default ``openings_for(variant)``)."""
    openings = dict(openings or openings_for(variant))
    names = list(openings)
    records: List[GameRecord] = []
    engine = chess.engine.SimpleEngine.popen_uci(list(engine_command), timeout=None)
    opponent = chess.engine.SimpleEngine.popen_uci(list(opponent_command))
    try:
        if engine_options:
            engine.configure(engine_options)
        if opponent_options:
            opponent.configure(opponent_options)
        engine.ping()  # isready: the engine loads and compiles before the first clock starts
        for g in range(games):
            name = names[(g // 2) % len(names)]
            record = play_game(engine, opponent, opening=name, moves=openings[name], engine_white=g % 2 == 0,
                               base=base, increment=increment, opponent_limit=dict(opponent_limit or {}),
                               max_plies=max_plies, game_id=g, variant=variant)
            records.append(record)
            if progress:
                progress(g, record)
            if record.termination == "crash" and record.faulty == "engine":
                break  # a dead engine plays no more games
    finally:
        for process in (engine, opponent):
            try:
                process.quit()
            except Exception:  # pylint: disable=broad-except  (already dead)
                process.close()
    return records


def tally(records: Sequence[GameRecord]) -> Dict[str, object]:
    """W/D/L from the engine's side, faults per kind and side, clock use."""
    wins = sum(r.engine_score == 1.0 for r in records)
    draws = sum(r.engine_score == 0.5 for r in records)
    losses = len(records) - wins - draws
    faults = {f"{side}_{kind}": sum(r.faulty == side and r.termination == kind for r in records)
              for side in ("engine", "opponent") for kind in FAULTS}
    terminations: Dict[str, int] = {}
    for r in records:
        terminations[r.termination] = terminations.get(r.termination, 0) + 1
    return dict(games=len(records), wins=wins, draws=draws, losses=losses,
                score=(wins + draws / 2) / len(records) if records else float("nan"), **faults,
                terminations=terminations,
                engine_min_clock=min((r.engine_min_clock for r in records), default=float("nan")),
                mean_plies=sum(r.plies for r in records) / max(len(records), 1))


__all__ = ["OPENINGS", "GARDNER_OPENINGS", "openings_for", "game_pgn", "GameRecord", "play_game", "play_match", "tally"]
