"""Games of an RBC player against the reconchess bots: W/D/L, Elo, and how the tracking went.

``play_game`` plays one game as ``reconchess.play_local_game`` does (``LocalGame``,
reconchess's ``play_turn`` steps, the same calls in the same order) and, for a player
with a ``tracker`` (``tracking.PossibleStates``), checks after each of its observations
whether the game's true board is among the tracked boards. ``run_gauntlet`` plays N
games with alternating colours (White in even-numbered games), seeding Python's
``random`` (the reconchess bots' randomness) per game, and ``summarize`` reduces them
to W/D/L, score, Elo with a 95% interval (``evaluation.matches.tally``: ±1.96 standard errors;
at a perfect score or a whitewash the interval of the clipped score, flagged
``saturated``), the tracker's set sizes (sizes: distinct boards after each sense and own
move, averaged per game then over games; pairs: the (board, opponent move) pairs before
each sense), caps, rebuilds and truth checks, and seconds per game. Each game's reconchess ``GameHistory`` is written beside the report.
"""

import dataclasses
import json
import os
import pathlib
import random
import time
from typing import Any, Callable, Dict, List, Optional

import chess
import numpy as np
import reconchess

from azdb_jax import files
from azdb_jax.evaluation import matches

__all__ = ["OPPONENTS", "check_opponent", "make_opponent", "GameRecord", "play_game", "run_gauntlet", "summarize"]

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


def play_game(player: reconchess.Player, opponent: reconchess.Player, player_color: bool, *,
              seconds_per_player: float = 900, max_turns: Optional[int] = None):
    """One game (``reconchess.play_local_game``'s steps) with truth checks; (GameRecord, GameHistory)."""
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
            reconchess.play_turn(game, players[game.turn], end_turn_last=True)
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
    seconds = time.perf_counter() - start
    winner, reason, history = game.get_winner_color(), game.get_win_reason(), game.get_game_history()
    for color in (chess.WHITE, chess.BLACK):
        players[color].handle_game_end(winner, reason, history)
    record = GameRecord(player_color="white" if player_color else "black",
                        result=0 if winner is None else (1 if winner == player_color else -1),
                        win_reason=reason.name if reason is not None else None, turns=game.board.fullmove_number,
                        seconds=seconds, truth_checks=checks, truth_misses=misses,
                        tracker=tracker.stats.summary() if tracker is not None else {})
    return record, history


def _finite(x: float) -> Optional[float]:
    return float(x) if np.isfinite(x) else None


def summarize(records: List[GameRecord]) -> Dict[str, Any]:
    """W/D/L, score, Elo ± 95%, tracker aggregates and seconds per game (module docstring)."""
    tally = matches.tally([r.result for r in records], [True] * len(records))  # the library's one tally
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
    return summary


def run_gauntlet(make_player: Callable[[int], reconchess.Player], opponent: str, games: int, *, seed: int = 0,
                 out: Optional[pathlib.Path] = None, seconds_per_player: float = 900,
                 max_turns: Optional[int] = None, progress: Optional[Callable[[int, GameRecord], None]] = None
                 ) -> Dict[str, Any]:
    """``games`` games of ``make_player(game seed)`` against the bot ``opponent``, colours
    alternating; the report (``summarize`` plus every game's record) and, with ``out``,
    ``out/report.json`` and ``out/games/game_<i>.json`` (reconchess GameHistory files)."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    check_opponent(opponent)
    if out is not None:
        (out / "games").mkdir(parents=True, exist_ok=True)
    records = []
    for index in range(games):
        game_seed = seed * 100_003 + index
        random.seed(game_seed)
        record, history = play_game(make_player(game_seed), make_opponent(opponent), index % 2 == 0,
                                    seconds_per_player=seconds_per_player, max_turns=max_turns)
        if out is not None:
            name = f"games/game_{index:03d}.json"
            history.save(str(out / name))
            record.history = name
        records.append(record)
        if progress is not None:
            progress(index, record)
    report = {"opponent": opponent, "seed": seed, **summarize(records),
              "records": [dataclasses.asdict(r) for r in records]}
    if out is not None:
        files.write_atomic(out / "report.json", json.dumps(report, indent=1))
    return report
