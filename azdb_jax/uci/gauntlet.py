"""Games between two UCI engines under a clock or at a fixed time a move, refereed through python-chess.

``play_match`` starts both engines with ``chess.engine.SimpleEngine.popen_uci`` (the
client GUIs and tournament managers use; ``fresh_engine`` starts the engine anew for
every game, waiting for its ``readyok`` before the game's clock starts, as a tournament
manager does), plays each opening with both colours, keeps the clocks itself (the wall
time of python-chess's ``play`` — ``ucinewgame``/``isready`` at a game's first move,
then ``position``/``go`` to ``bestmove`` — is charged to the mover, the increment added
after the move) and records, per game, the result and how it ended: checkmate,
stalemate, insufficient material, 75-move rule, fivefold/threefold repetition or the
50-move rule (claimed by the referee, ``referee.play_host_game``, whose players here are
the two engine processes under these clocks), adjudication at ``max_plies`` (counted
from the initial position, the opening's moves included), or a fault — a *time* loss,
an *illegal* move, or an engine that *crashed* or hung. At ``max_plies`` a
game is a draw, or (``adjudicate="material"``) won by the side ahead by at least
``MATERIAL_MARGIN`` pawns of material (P 1, N 3, B 3, R 5, Q 9), as
``azdb_jax.adjudication`` scores the arena's games. Without a clock
(``clock=None``) each side plays at its own limit (e.g. ``{"time": 4.0}``: ``go
movetime 4000``) and nobody loses on time.

Per engine move the referee records the time it took and the time it was allotted: the
engine's own rule for its clock (``timeman.move_budget`` with no overhead) or its
``movetime``, so that a match says how much of its time the engine used.

Two games: chess (``chess.Board``), and Gardner's 5x5 minichess (``variant="gardner"``)
on ``GardnerBoard``, which python-chess's client drives like a chess board (it sends
``setoption name UCI_Variant value gardner`` and ``position fen ...``). A Gardner game
ends by the env's rules (checkmate, stalemate, insufficient material, fifty moves,
threefold repetition, 256 plies) and is written as PGN with a ``Variant`` tag.

Used by the engine's acceptance runs (``experiments/uci_match.py``) and its tests.
"""

import dataclasses
import subprocess
import time
from typing import Dict, List, Optional, Sequence, Tuple

import chess
import chess.engine
import chess.pgn

from azdb_jax import arena, referee
from azdb_jax.uci import protocol, timeman

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
OPENINGS_BY_VARIANT = {"chess": OPENINGS, "gardner": GARDNER_OPENINGS}  # by UCI_Variant

FAULTS = ("time", "illegal", "crash")
PIECE_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
MATERIAL_MARGIN = 3


def material_result(board) -> str:
    """The result of a game stopped at ``board``: the side ahead by ``MATERIAL_MARGIN``
    pawns of material or more wins, else a draw."""
    balance = sum(PIECE_VALUES[piece.piece_type] * (1 if piece.color == chess.WHITE else -1)
                  for piece in board.piece_map().values())
    return "1-0" if balance >= MATERIAL_MARGIN else "0-1" if balance <= -MATERIAL_MARGIN else "1/2-1/2"


@dataclasses.dataclass
class GameRecord:
    opening: str
    engine_white: bool
    result: str  # "1-0", "0-1", "1/2-1/2"
    termination: str  # checkmate, stalemate, ..., adjudication, time, illegal, crash
    faulty: Optional[str]  # which side faulted ("engine" / "opponent"), or None
    plies: int
    engine_seconds: float  # clock time the engine used
    engine_min_clock: float  # the lowest the engine's clock got (seconds, before increments); inf without a clock
    pgn: str
    engine_moves: List[Tuple[float, float]] = dataclasses.field(default_factory=list)  # (seconds taken, allotted)
    opponent_seconds: List[float] = dataclasses.field(default_factory=list)  # the opponent's time for each move
    engine_ready_seconds: Optional[float] = None  # a fresh engine's start to readyok

    @property
    def engine_score(self) -> float:
        if self.result == "1/2-1/2":
            return 0.5
        return 1.0 if (self.result == "1-0") == self.engine_white else 0.0


def openings_for(variant: str) -> Dict[str, Tuple[str, ...]]:
    """The default openings of ``variant`` (a ``UCI_Variant`` name: chess or gardner)."""
    return dict(OPENINGS_BY_VARIANT[variant])


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


def allotted_seconds(clocks: Dict[bool, float], increment: float, mover: chess.Color) -> float:
    """The engine's allotment for a move at these clocks (seconds): ``timeman.move_budget``
    without the move overhead, the time its rule gives the move."""
    go = protocol.Go(wtime=int(clocks[chess.WHITE] * 1000), btime=int(clocks[chess.BLACK] * 1000),
                     winc=int(increment * 1000), binc=int(increment * 1000))
    return timeman.move_budget(go, mover, overhead_ms=0)


def play_game(engine: chess.engine.SimpleEngine, opponent: chess.engine.SimpleEngine, *, opening: str,
              moves: Sequence[str], engine_white: bool, clock: Optional[Tuple[float, float]],
              opponent_limit: Dict[str, float], max_plies: int, game_id: object, variant: str = "chess",
              engine_limit: Optional[Dict[str, float]] = None, adjudicate: str = "draw") -> GameRecord:
    """One game of ``variant`` from the opening ``moves``; ``clock = (base, increment)``
    seconds (the referee keeps both clocks) or None (each side plays at its limit)."""
    board = protocol.new_board(variant)
    for move in moves:
        board.push_uci(move)
    base, increment = clock if clock is not None else (float("inf"), 0.0)
    clocks = {chess.WHITE: base, chess.BLACK: base}
    engine_colour = chess.WHITE if engine_white else chess.BLACK
    spent_by = {chess.WHITE: [], chess.BLACK: []}  # (seconds, allotted) of each side's moves
    lowest = base

    def side(colour: chess.Color):
        """The referee's player for ``colour``: the engine process under the referee's clock."""
        process = engine if colour == engine_colour else opponent
        side_limit = dict(engine_limit or {}) if colour == engine_colour else dict(opponent_limit)

        def move(board) -> Optional[chess.Move]:
            nonlocal lowest
            if clock is not None:
                limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                           white_inc=increment, black_inc=increment, **side_limit)
                allotted = allotted_seconds(clocks, increment, colour)
            else:
                limit = chess.engine.Limit(**side_limit)
                allotted = side_limit.get("time", float("nan"))
            start = time.monotonic()
            try:
                played = process.play(board, limit, game=game_id)
            except chess.engine.EngineTerminatedError as e:
                raise referee.Fault("crash", str(e)) from None
            except chess.engine.EngineError as e:  # python-chess rejects an illegal bestmove
                raise referee.Fault("illegal" if "illegal" in str(e).lower() else "crash", str(e)) from None
            spent = time.monotonic() - start
            clocks[colour] -= spent
            spent_by[colour].append((spent, allotted))
            if colour == engine_colour:
                lowest = min(lowest, clocks[colour])
            if clocks[colour] < 0:
                raise referee.Fault("time")
            clocks[colour] += increment  # the move is made (an illegal one ends the game anyway)
            return played.move

        return move

    game = referee.play_host_game(board, {chess.WHITE: side(chess.WHITE), chess.BLACK: side(chess.BLACK)},
                                  max_plies=max(0, max_plies - board.ply()))
    ended = (game.result, game.termination)
    if not game.finished:
        ended = (material_result(board) if adjudicate == "material" else "1/2-1/2", "adjudication")
    faulty = None if game.faulty is None else ("engine" if game.faulty == engine_colour else "opponent")
    timings = spent_by[engine_colour]
    used = sum(seconds for seconds, _ in timings)
    opponent_timings = [seconds for seconds, _ in spent_by[not engine_colour]]
    control = f"{base:g}+{increment:g}" if clock is not None else "movetime"
    pgn = game_pgn(board, dict(Event="azdb_jax UCI match", White="azdb_jax" if engine_white else "opponent",
                               Black="opponent" if engine_white else "azdb_jax", Result=ended[0], Opening=opening,
                               Termination=ended[1], TimeControl=control))
    return GameRecord(opening=opening, engine_white=engine_white, result=ended[0], termination=ended[1],
                      faulty=faulty, plies=board.ply(), engine_seconds=used, engine_min_clock=lowest, pgn=pgn,
                      engine_moves=timings, opponent_seconds=opponent_timings)


def _start(command: Sequence[str], options: Optional[Dict[str, object]]) -> chess.engine.SimpleEngine:
    process = chess.engine.SimpleEngine.popen_uci(list(command), timeout=None)
    if options:
        process.configure(options)
    process.ping()  # isready: the engine loads and compiles before any clock starts
    return process


def _close(process: Optional[chess.engine.SimpleEngine]) -> None:
    if process is None:
        return
    try:
        process.quit()
    except Exception:  # pylint: disable=broad-except  (already dead)
        process.close()


def play_match(engine_command: Sequence[str], opponent_command: Sequence[str], *, games: int,
               clock: Optional[Tuple[float, float]], engine_options: Optional[Dict[str, object]] = None,
               opponent_options: Optional[Dict[str, object]] = None,
               engine_limit: Optional[Dict[str, float]] = None, opponent_limit: Optional[Dict[str, float]] = None,
               openings: Optional[Dict[str, Sequence[str]]] = None, max_plies: int = 300, progress=None,
               variant: str = "chess", fresh_engine: bool = False, adjudicate: str = "draw") -> List[GameRecord]:
    """``games`` games of ``variant`` (each opening with both colours, cycling through
    ``openings``, by default ``openings_for(variant)``) under ``clock = (base,
    increment)`` or, with ``clock=None``, at each side's limit (``engine_limit``,
    ``opponent_limit``: python-chess ``Limit`` fields such as ``time``)."""
    openings = dict(openings or openings_for(variant))
    names = list(openings)
    records: List[GameRecord] = []
    engine = opponent = None
    try:
        opponent = _start(opponent_command, opponent_options)
        for g in range(games):
            ready = None
            if engine is None or fresh_engine:
                _close(engine)
                start = time.monotonic()
                engine = _start(engine_command, engine_options)
                ready = time.monotonic() - start
            name = names[(g // 2) % len(names)]
            record = play_game(engine, opponent, opening=name, moves=openings[name], engine_white=g % 2 == 0,
                               clock=clock, engine_limit=engine_limit, opponent_limit=dict(opponent_limit or {}),
                               max_plies=max_plies, game_id=g, variant=variant, adjudicate=adjudicate)
            record.engine_ready_seconds = ready
            records.append(record)
            if progress:
                progress(g, record)
            if record.termination == "crash" and record.faulty == "engine":
                break  # a dead engine plays no more games
    finally:
        _close(engine)
        _close(opponent)
    return records


def tally(records: Sequence[GameRecord]) -> Dict[str, object]:
    """The tally of the engine's games (``arena.tally`` from its side: W/D/L, score
    and Elo with standard errors), faults per kind and side, clock use.

    ``budget_share``: the engine's time per move ÷ its allotment, averaged over its moves
    (``budget_share_max`` the largest); ``first_move_share``: the same for each game's
    first engine move (the largest over games, and the mean); ``engine_move_seconds`` and
    ``opponent_move_seconds``: each side's mean time a move.
    """
    counts = arena.tally([2.0 * r.engine_score - 1.0 for r in records], [True] * len(records))
    faults = {f"{side}_{kind}": sum(r.faulty == side and r.termination == kind for r in records)
              for side in ("engine", "opponent") for kind in FAULTS}
    terminations: Dict[str, int] = {}
    for r in records:
        terminations[r.termination] = terminations.get(r.termination, 0) + 1
    shares = [spent / allotted for r in records for spent, allotted in r.engine_moves if allotted > 0]
    first = [r.engine_moves[0][0] / r.engine_moves[0][1] for r in records if r.engine_moves and r.engine_moves[0][1] > 0]
    ready = [r.engine_ready_seconds for r in records if r.engine_ready_seconds is not None]
    spent = [seconds for r in records for seconds, _ in r.engine_moves]
    opponent = [seconds for r in records for seconds in r.opponent_seconds]
    nan = float("nan")
    return dict(counts, **faults,
                terminations=terminations,
                engine_min_clock=min((r.engine_min_clock for r in records), default=nan),
                mean_plies=sum(r.plies for r in records) / max(len(records), 1),
                engine_moves=len(shares), budget_share=sum(shares) / len(shares) if shares else nan,
                budget_share_max=max(shares, default=nan), first_move_share_max=max(first, default=nan),
                first_move_share=sum(first) / len(first) if first else nan,
                first_move_seconds_max=max((r.engine_moves[0][0] for r in records if r.engine_moves), default=nan),
                engine_ready_seconds_max=max(ready, default=nan),
                engine_move_seconds=sum(spent) / len(spent) if spent else nan,
                opponent_move_seconds=sum(opponent) / len(opponent) if opponent else nan)


def stop_latency(engine_command: Sequence[str], *, trials: int, search_seconds: float = 1.0,
                 options: Optional[Dict[str, str]] = None, variant: str = "chess") -> List[float]:
    """Seconds from ``stop`` to ``bestmove`` after ``go infinite``, ``trials`` times, timed
    on the engine's own pipes (no client in between)."""
    process = subprocess.Popen(list(engine_command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(line):
        process.stdin.write(line + "\n")
        process.stdin.flush()

    def wait_for(prefix):
        for line in process.stdout:
            if line.startswith(prefix):
                return time.monotonic()
        raise RuntimeError(f"the engine ended before {prefix!r}")

    try:
        send("uci")
        wait_for("uciok")
        for name, value in dict(options or {}, UCI_Variant=variant).items():
            send(f"setoption name {name} value {value}")
        send("isready")
        wait_for("readyok")
        latencies = []
        board = protocol.new_board(variant)
        for _ in range(trials):
            send(f"position fen {board.fen()}")
            send("go infinite")
            time.sleep(search_seconds)
            sent = time.monotonic()
            send("stop")
            latencies.append(wait_for("bestmove") - sent)
            board.push(sorted(board.legal_moves, key=lambda move: move.uci())[0])
        send("quit")
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return latencies


__all__ = ["OPENINGS", "GARDNER_OPENINGS", "openings_for", "game_pgn", "GameRecord", "allotted_seconds", "play_game",
           "material_result",
           "play_match", "tally", "stop_latency"]
