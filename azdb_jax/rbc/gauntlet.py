"""Games of an RBC player against the reconchess bots: W/D/L, Elo, and how the tracking went.

``play_game`` plays one game as ``reconchess.play_local_game`` does (``LocalGame``,
reconchess's ``play_turn`` steps, the same calls in the same order) and, for a player
with a ``tracker`` (``tracking.PossibleStates``), checks after each of its observations
whether the game's true board is among the tracked boards. ``run_gauntlet`` plays N
games with alternating colours (White in even-numbered games), seeding Python's
``random`` (the reconchess bots' randomness) per game, and ``summarize`` reduces them
to W/D/L, score, Elo with a 95% interval (``arena.tally``: ±1.96 standard errors;
at a perfect score or a whitewash the interval of the clipped score, flagged
``saturated``), the tracker's set sizes (sizes: distinct boards after each sense and own
move, averaged per game then over games; pairs: the (board, opponent move) pairs before
each sense), caps, rebuilds and truth checks, and seconds per game. Each game's reconchess ``GameHistory`` is written beside the report.

**Opponents that die.** TroutBot's Stockfish process can die mid-game (TroutBot hands it
boards built from its guesses); TroutBot then catches the error and passes every turn
after, which would count as a game against a bot that stopped playing. ``play_game``
looks at an opponent's engine process (``engine_died``: the bot's ``engine`` transport
has a return code) after each of the opponent's turns and at the end, and raises
``OpponentError``; ``run_gauntlet`` records it as the opponent's error (game, attempt,
turn, reason) and replays the game with a fresh opponent and a fresh player (same seed),
at most ``max_replays`` times (then the last game counts, flagged). The report says how
many games were replayed (``replayed``) and lists the errors (``opponent_errors``), as the
paper does ("games with errors were ignored and replayed", §6).

**Opponents that request what they cannot.** reconchess refuses a move request outside
``move_actions`` with a ValueError, and the turn cannot go on (TroutBot can ask for a
king capture its guessed board shows but its true pieces cannot make). Raised during the
opponent's turn, it is the opponent's error too: the game is replayed; when no replay is
left the game cannot be finished and is left out of the tally (``dropped``). The same
error from the player's own request is the player's fault and propagates.
"""

import dataclasses
import json
import logging
import os
import pathlib
import random
import time
from typing import Any, Callable, Dict, List, Optional

import chess
import numpy as np
import reconchess

from azdb_jax import arena, files

__all__ = ["OPPONENTS", "check_opponent", "make_opponent", "GameRecord", "OpponentError", "engine_died", "play_game",
           "run_gauntlet", "summarize"]

log = logging.getLogger(__name__)

OPPONENTS = ("random", "attacker", "trout")
STOCKFISH_ENV = "STOCKFISH_EXECUTABLE"
STOCKFISH_HINT = ("TroutBot needs Stockfish: install it (sudo apt-get install stockfish, /usr/games/stockfish) and "
                  f"set {STOCKFISH_ENV} to its path")


def check_opponent(name: str) -> None:
    """ValueError naming the problem when ``make_opponent(name)`` cannot make the bot."""
    if name not in OPPONENTS:
        raise ValueError(f"unknown opponent {name!r}; one of {', '.join(OPPONENTS)}")
    if name == "trout":
        path = os.environ.get(STOCKFISH_ENV)
        if not path or not os.path.exists(path):
            raise ValueError(f"{STOCKFISH_HINT} (now {path!r})")


def make_opponent(name: str) -> reconchess.Player:
    """A fresh reconchess bot by name (``OPPONENTS``); ValueError names what is missing."""
    check_opponent(name)
    if name == "random":
        from reconchess.bots.random_bot import RandomBot  # pylint: disable=g-import-not-at-top
        return RandomBot()
    if name == "attacker":
        from reconchess.bots.attacker_bot import AttackerBot  # pylint: disable=g-import-not-at-top
        return AttackerBot()
    from reconchess.bots.trout_bot import TroutBot  # pylint: disable=g-import-not-at-top
    return TroutBot()


@dataclasses.dataclass
class GameRecord:
    """One game from the player's side."""

    player_color: str  # "white" / "black"
    result: int  # +1 win, 0 draw, -1 loss for the player
    win_reason: Optional[str]
    turns: int  # full turns (LocalGame's fullmove number at the end)
    seconds: float
    truth_checks: int  # observations after which the true board was looked up in the tracked set
    truth_misses: int  # ... and was not there
    tracker: Dict[str, Any]  # tracking.TrackerStats.summary(), {} for a player without a tracker
    history: Optional[str] = None  # the GameHistory file, relative to the report
    planner: Dict[str, Any] = dataclasses.field(default_factory=dict)  # DSMCPPlayer.planner_summary(), if any
    opponent_error: Optional[str] = None  # set when the opponent failed in every replay of this game


class OpponentError(RuntimeError):
    """The opponent failed during a game (its engine died): the game says nothing about the player."""

    def __init__(self, reason: str, turn: int):
        super().__init__(f"{reason} (turn {turn})")
        self.reason, self.turn = reason, turn


def engine_died(player: reconchess.Player) -> bool:
    """Whether ``player`` runs a chess engine (a ``chess.engine.SimpleEngine`` in ``engine``, as
    TroutBot) whose process has ended."""
    engine = getattr(player, "engine", None)
    transport = getattr(engine, "transport", None)
    if transport is None:
        return False
    try:
        if transport.get_returncode() is not None:
            return True
        returncode = getattr(engine.protocol, "returncode", None)
        return bool(returncode is not None and returncode.done())
    except Exception:  # pylint: disable=broad-except  (a closed transport: the engine is gone)
        return True


def play_game(player: reconchess.Player, opponent: reconchess.Player, player_color: bool, *,
              seconds_per_player: float = 900, max_turns: Optional[int] = None, opponent_errors: str = "raise"):
    """One game (``reconchess.play_local_game``'s steps) with truth checks; (GameRecord, GameHistory).

    The opponent's engine is checked after each of its turns and at the end (module
    docstring); when it has died, ``opponent_errors="raise"`` raises ``OpponentError`` and
    ``"record"`` plays on and sets the record's ``opponent_error``."""
    if opponent_errors not in ("raise", "record"):
        raise ValueError(f"opponent_errors must be 'raise' or 'record', got {opponent_errors!r}")
    failure: Optional[str] = None
    game = reconchess.LocalGame(seconds_per_player=seconds_per_player, full_turn_limit=max_turns)
    players = {player_color: player, not player_color: opponent}
    names = {c: type(players[c]).__name__ for c in (chess.WHITE, chess.BLACK)}
    game.store_players(names[chess.WHITE], names[chess.BLACK])
    players[chess.WHITE].handle_game_start(chess.WHITE, game.board.copy(), names[chess.BLACK])
    players[chess.BLACK].handle_game_start(chess.BLACK, game.board.copy(), names[chess.WHITE])
    tracker = getattr(player, "tracker", None)
    checks = misses = 0
    start = time.perf_counter()
    game.start()
    while not game.is_over():
        if game.turn != player_color or tracker is None:
            mover, turn = game.turn, game.board.fullmove_number
            try:
                reconchess.play_turn(game, players[mover], end_turn_last=True)
            except ValueError as e:  # a request outside move_actions: the turn cannot go on
                if mover == player_color:
                    raise
                _abandon(game, players)
                raise OpponentError(f"illegal request: {e}", turn) from e
            if failure is None and mover != player_color and engine_died(opponent):
                failure = "engine died"
                if opponent_errors == "raise":
                    _abandon(game, players)
                    raise OpponentError(failure, turn)
            continue
        sense_actions, move_actions = game.sense_actions(), game.move_actions()
        reconchess.notify_opponent_move_results(game, player)
        misses += game.board not in tracker
        reconchess.play_sense(game, player, sense_actions, move_actions)
        misses += game.board not in tracker
        reconchess.play_move(game, player, move_actions, end_turn_last=True)
        misses += game.board not in tracker
        checks += 3
    game.end()
    if failure is None and engine_died(opponent):
        failure = "engine died"
        if opponent_errors == "raise":
            _abandon(game, players)
            raise OpponentError(failure, game.board.fullmove_number)
    seconds = time.perf_counter() - start
    winner, reason, history = game.get_winner_color(), game.get_win_reason(), game.get_game_history()
    for color in (chess.WHITE, chess.BLACK):
        players[color].handle_game_end(winner, reason, history)
    record = GameRecord(player_color="white" if player_color else "black",
                        result=0 if winner is None else (1 if winner == player_color else -1),
                        win_reason=reason.name if reason is not None else None, turns=game.board.fullmove_number,
                        seconds=seconds, truth_checks=checks, truth_misses=misses,
                        tracker=tracker.stats.summary() if tracker is not None else {},
                        planner=player.planner_summary() if hasattr(player, "planner_summary") else {},
                        opponent_error=failure)
    return record, history


def _abandon(game: reconchess.LocalGame, players) -> None:
    """Ends an abandoned game so that the players release what they hold (TroutBot its engine)."""
    if not game.is_over():
        game.end()
    history = game.get_game_history()
    for player in players.values():
        try:
            player.handle_game_end(None, None, history)
        except Exception:  # pylint: disable=broad-except  (a dead engine may complain on quitting)
            log.debug("handle_game_end of %s failed on an abandoned game", type(player).__name__, exc_info=True)


def _finite(x: float) -> Optional[float]:
    return float(x) if np.isfinite(x) else None


def summarize(records: List[GameRecord]) -> Dict[str, Any]:
    """W/D/L, score, Elo ± 95%, tracker aggregates and seconds per game (module docstring)."""
    tally = arena.tally([r.result for r in records], [True] * len(records))  # the library's one tally
    saturated = not np.isfinite(tally["elo"])
    elo, half = tally["elo_clipped"], 1.96 * tally["elo_clipped_stderr"]  # finite bound at a whitewash
    trackers = [r.tracker for r in records if r.tracker]
    summary = {"games": len(records), "wins": tally["wins"], "draws": tally["draws"], "losses": tally["losses"],
               "score": tally["score"] if records else None,
               "score_stderr": _finite(tally["score_stderr"]),
               "elo": _finite(tally["elo"]), "elo_95": [elo - half, elo + half] if records else None,
               "saturated": bool(saturated), "mean_seconds_per_game": float(np.mean([r.seconds for r in records]))
               if records else None, "mean_turns": float(np.mean([r.turns for r in records])) if records else None,
               "win_reasons": {k: sum(r.win_reason == k for r in records) for k in sorted(
                   {str(r.win_reason) for r in records})}}
    summary["by_colour"] = {c: [sum(r.result == v for r in records if r.player_color == c) for v in (1, 0, -1)]
                            for c in ("white", "black")}
    if trackers:
        summary["tracker"] = {
            "mean_size": float(np.mean([t["mean_size"] for t in trackers])),
            "max_size": max(t["max_size"] for t in trackers),
            "mean_size_after_sense": float(np.mean([t["mean_size_after_sense"] for t in trackers])),
            "mean_pairs_before_sense": float(np.mean([t["mean_pairs_before_sense"] for t in trackers])),
            "max_pairs_before_sense": max(t["max_pairs_before_sense"] for t in trackers),
            "cap_hits": sum(t["cap_hits"] for t in trackers),
            "games_with_cap_hit": sum(t["cap_hits"] > 0 for t in trackers),
            "rebuilds": sum(t["rebuilds"] for t in trackers),
            "games_with_rebuild": sum(t["rebuilds"] > 0 for t in trackers),
            "truth_checks": sum(r.truth_checks for r in records),
            "truth_misses": sum(r.truth_misses for r in records),
            "tracker_seconds": float(sum(t["seconds"] for t in trackers))}
    planners = [r.planner for r in records if r.planner]
    if planners:
        beliefs = [p["belief"] for p in planners]
        summary["planner"] = {
            "decisions": sum(p["decisions"] for p in planners), "searched": sum(p["searched"] for p in planners),
            "fallbacks": sum(p["fallbacks"] for p in planners), "forced_wins": sum(p["forced_wins"] for p in planners),
            "mean_simulations": float(np.mean([p["mean_simulations"] for p in planners if p["searched"]] or [0.0])),
            "belief_candidates": sum(b.get("candidates", 0) for b in beliefs),
            "belief_rejections": sum(b.get("rejections", 0) for b in beliefs),
            "belief_fallbacks": sum(b.get("fallbacks", 0) for b in beliefs),
            "belief_refills": sum(b.get("refills", 0) for b in beliefs)}
    return summary


def run_gauntlet(make_player: Callable[[int], reconchess.Player], opponent: str, games: int, *, seed: int = 0,
                 out: Optional[pathlib.Path] = None, seconds_per_player: float = 900,
                 max_turns: Optional[int] = None, progress: Optional[Callable[[int, GameRecord], None]] = None,
                 max_replays: int = 3, make_opponent_fn: Optional[Callable[[], reconchess.Player]] = None
                 ) -> Dict[str, Any]:
    """``games`` games of ``make_player(game seed)`` against the bot ``opponent``, colours
    alternating; the report (``summarize`` plus every game's record, the opponent's errors
    and how many games were replayed because of them) and, with ``out``, ``out/report.json``
    and ``out/games/game_<i>.json`` (reconchess GameHistory files). ``make_opponent_fn``
    makes the opponent instead of ``make_opponent(opponent)`` (e.g. a wrapped bot)."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if max_replays < 0:
        raise ValueError(f"max_replays must be >= 0, got {max_replays}")
    check_opponent(opponent)
    if out is not None:
        (out / "games").mkdir(parents=True, exist_ok=True)
    records, errors, dropped = [], [], []
    for index in range(games):
        game_seed = seed * 100_003 + index
        record = None
        for attempt in range(max_replays + 1):
            random.seed(game_seed + 7_919 * attempt)
            last = attempt == max_replays
            try:
                record, history = play_game(make_player(game_seed), (make_opponent_fn or (
                    lambda: make_opponent(opponent)))(), index % 2 == 0, seconds_per_player=seconds_per_player,
                                            max_turns=max_turns, opponent_errors="record" if last else "raise")
            except OpponentError as e:
                errors.append({"game": index, "attempt": attempt, "turn": e.turn, "error": e.reason})
                log.warning("game %d: the opponent failed (%s); replaying it", index, e)
                continue
            break
        if record is None:  # the opponent failed in a way that ends the game in every attempt
            dropped.append(index)
            continue
        if out is not None:
            name = f"games/game_{index:03d}.json"
            history.save(str(out / name))
            record.history = name
        records.append(record)
        if progress is not None:
            progress(index, record)
    report = {"opponent": opponent, "seed": seed, **summarize(records),
              "replayed": len({e["game"] for e in errors}), "opponent_errors": errors, "dropped": dropped,
              "games_with_opponent_error": sum(r.opponent_error is not None for r in records),
              "records": [dataclasses.asdict(r) for r in records]}
    if out is not None:
        files.write_atomic(out / "report.json", json.dumps(report, indent=1))
    return report
