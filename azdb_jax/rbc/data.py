"""Game histories and training examples for the synopsis network (paper §5.1-5.3).

DSMCP's network (§5.2) reads a *synopsis* of the possible boards at each decision and is
trained on recorded games (§5.3, Table 1). This module makes both halves locally:

- ``play_games`` plays reconchess games between the reconchess bots (``random``,
  ``attacker``, ``trout``) and the library's ``TrackingPlayer`` (``tracking``) with
  ``reconchess.play_local_game`` and writes each game's ``GameHistory`` (``history.save``).
- ``game_examples`` replays one recorded game from one player's point of view: the
  player's observations (the opponent's capture square, its sense result, its own move
  result, in reconchess's order) go through a ``tracking.PossibleStates``, and at every
  sense and every move decision a synopsis of a uniform sample of at most
  ``synopsis_boards`` possible boards is made (the paper's limited state set size ℓ:
  "represents infostates with sets of world states and then subsamples to a manageable
  cardinality", §5.1; sampling makes extraction non-deterministic, which is why
  the paper extracts each game several times, ``multiplicity``). Each example records

  * ``stage`` 0 (sense) / 1 (move) and ``action``: the sense index or the index of the
    *requested* move (``actions.sense_index`` / ``actions.move_index``; a pass is
    ``actions.PASS``); ``legal``: the move requests the player could make (reconchess's
    ``move_actions`` on the true board, which depend on its own pieces only, and the
    pass) as a packed bit mask over ``actions.NUM_MOVES`` (all zeros at a sense);
  * ``result``: the game's result from the player's side (+1 / 0 / -1): the value target;
  * ``soon_win`` / ``soon_lose``: the game ends, won / lost by the player, within the
    next ``horizon`` actions, this one included, counting both players' senses and moves
    (§5.2: "predicting winning and losing within the next 5 actions"; ``horizon`` = 5);
  * ``pieces``: the true board's piece counts by kind (§5.2: "the number of pieces of each
    type in the ground truth world state"): the player's own pawns, knights, bishops,
    rooks, queens, king, then the opponent's (``PIECE_COUNT_NAMES``); the own half is
    known to the player, the opponent's is what the head has to guess;
  * ``tracked``: whether the true board was in the tracked set at that decision (False
    only after the tracker's cap or a lenient rebuild lost it).

  The context planes (32-35) hold the player's last taken move (from, to; none after a
  pass), the square where that move captured and the square where the opponent's last
  move captured (none when it captured nothing); the previous planes (86-103) are the
  player's synopsis at its decision before (``synopsis`` module).
- The *headset* of an example (§5.2: one set of heads per modelled player, "All" for every
  game) is the name of the player whose point of view it is (``scheme="player"``, the
  paper's: the RandomBot headset learns RandomBot's actions), or that name and the
  opponent's (``scheme="matchup"``: ``"RandomBot-vs-TrackingPlayer"``).
- ``history_examples`` returns them as ``dataset.Examples`` (arrays and ``.npz`` files;
  ``dataset.split_by_game`` holds out games by a hash of their names).
"""

import dataclasses
import hashlib
import json
import logging
import pathlib
import random
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import chess
import numpy as np
import reconchess

from azdb_jax import files
from azdb_jax.rbc import actions, synopsis, tracking
from azdb_jax.rbc.dataset import MASK_WORDS, NUM_PIECE_COUNTS, Examples, pack_mask

__all__ = ["PLAYERS", "HEADSET_SCHEMES", "PIECE_COUNT_NAMES", "ExampleConfig", "Matchup", "parse_matchups",
           "make_player", "play_games", "load_history", "game_examples", "history_examples", "headset_of",
           "piece_counts", "list_histories"]

log = logging.getLogger(__name__)

PLAYERS = ("tracking", "random", "attacker", "trout")
HEADSET_SCHEMES = ("player", "matchup")
_KINDS = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
PIECE_COUNT_NAMES = tuple(f"{side}_{name}" for side in ("own", "opponent")
                          for name in ("pawns", "knights", "bishops", "rooks", "queens", "king"))
assert len(PIECE_COUNT_NAMES) == NUM_PIECE_COUNTS
_SENSE, _MOVE = 0, 1


# ---------------------------------------------------------------------------- playing games


@dataclasses.dataclass(frozen=True)
class Matchup:
    """``games`` games between two players (names from ``PLAYERS``), colours alternating:
    ``first`` is White in even-numbered games."""

    first: str
    second: str
    games: int

    @property
    def name(self) -> str:
        return f"{self.first}-{self.second}"


def parse_matchups(spec: str) -> List[Matchup]:
    """``"tracking:random=40,attacker:random=20"`` -> matchups; ValueError names a bad part."""
    out = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        pair, _, count = part.partition("=")
        first, _, second = pair.partition(":")
        if not count or not second:
            raise ValueError(f"matchup {part!r} is not FIRST:SECOND=GAMES (e.g. tracking:random=20)")
        for name in (first, second):
            if name not in PLAYERS:
                raise ValueError(f"matchup {part!r}: unknown player {name!r}; one of {', '.join(PLAYERS)}")
        try:
            games = int(count)
        except ValueError:
            raise ValueError(f"matchup {part!r}: the number of games {count!r} is not an integer") from None
        if games < 1:
            raise ValueError(f"matchup {part!r}: the number of games must be >= 1")
        out.append(Matchup(first, second, games))
    if not out:
        raise ValueError(f"no matchup in {spec!r} (e.g. tracking:random=20)")
    return out


def make_player(name: str, seed: int, *, seconds_per_move: float = 0.5) -> reconchess.Player:
    """A fresh player by name: ``tracking`` is ``TrackingPlayer`` (seeded), the others the
    reconchess bots (``gauntlet.make_opponent``; ``trout`` needs Stockfish)."""
    from azdb_jax.rbc import gauntlet  # pylint: disable=g-import-not-at-top
    if name == "tracking":
        from azdb_jax.rbc.player import TrackingPlayer  # pylint: disable=g-import-not-at-top
        return TrackingPlayer(seconds_per_move=seconds_per_move, seed=seed)
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; one of {', '.join(PLAYERS)}")
    return gauntlet.make_opponent(name)


def play_games(matchups: Sequence[Matchup], out: pathlib.Path, *, seed: int = 0, seconds_per_move: float = 0.5,
               seconds_per_player: float = 900, max_turns: Optional[int] = None,
               progress: Optional[Callable[[str, Dict], None]] = None) -> List[Dict]:
    """Plays every matchup, writing ``out/games/<first>-<second>_<i>.json`` (GameHistory
    files) and ``out/games.json`` (one record per game: file, players, seed, winner, turns,
    seconds). Game ``i`` of a matchup seeds Python's ``random`` (the bots) and the
    ``TrackingPlayer`` with ``seed * 1_000_003 + matchup index * 10_007 + i``."""
    from azdb_jax.rbc import gauntlet  # pylint: disable=g-import-not-at-top
    for m in matchups:
        for name in (m.first, m.second):
            if name != "tracking":
                gauntlet.check_opponent(name)
    (out / "games").mkdir(parents=True, exist_ok=True)
    records = []
    for m_index, m in enumerate(matchups):
        for i in range(m.games):
            game_seed = seed * 1_000_003 + m_index * 10_007 + i
            random.seed(game_seed)
            first = make_player(m.first, game_seed, seconds_per_move=seconds_per_move)
            second = make_player(m.second, game_seed + 1, seconds_per_move=seconds_per_move)
            white, black = (first, second) if i % 2 == 0 else (second, first)
            game = reconchess.LocalGame(seconds_per_player=seconds_per_player, full_turn_limit=max_turns)
            start = time.perf_counter()
            winner, reason, history = reconchess.play_local_game(white, black, game=game)
            name = f"games/{m.name}_{i:04d}.json"
            history.save(str(out / name))
            record = {"file": name, "white": history.get_white_player_name(),
                      "black": history.get_black_player_name(), "seed": game_seed,
                      "winner": None if winner is None else ("white" if winner else "black"),
                      "win_reason": reason.name if reason is not None else None,
                      "turns": history.num_turns(), "seconds": time.perf_counter() - start}
            records.append(record)
            log.info("game %s: %s", name, record)
            if progress is not None:
                progress(name, record)
    files.write_atomic(out / "games.json", json.dumps(records, indent=1))
    return records


# ---------------------------------------------------------------------------- examples


@dataclasses.dataclass(frozen=True)
class ExampleConfig:
    """How histories become examples (module docstring).

    Attributes:
      horizon: SoonWin / SoonLose horizon in actions (senses and moves of both players,
        the current one included); the paper's 5.
      synopsis_boards: ℓ, the most possible boards a synopsis reads (a uniform sample).
      max_boards: the tracker's cap on possible boards (``tracking.PossibleStates``).
      scheme: how an example's headset is named: "player" or "matchup" (``headset_of``).
      multiplicity: how many times each game is extracted (different samples, §5.3).
      seed: seed of the sampling (mixed with each game's name and point of view).
    """

    horizon: int = 5
    synopsis_boards: int = 128
    max_boards: int = 2000
    scheme: str = "player"
    multiplicity: int = 1
    seed: int = 0

    def __post_init__(self):
        for name in ("horizon", "synopsis_boards", "max_boards", "multiplicity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ExampleConfig.{name} must be an int >= 1, got {value!r}")
        if self.scheme not in HEADSET_SCHEMES:
            raise ValueError(f"ExampleConfig.scheme must be one of {HEADSET_SCHEMES}, got {self.scheme!r}")


def headset_of(player_name: str, opponent_name: str, scheme: str = "player") -> str:
    """The headset an example trains besides "all" (module docstring)."""
    if scheme == "player":
        return player_name
    if scheme == "matchup":
        return f"{player_name}-vs-{opponent_name}"
    raise ValueError(f"unknown headset scheme {scheme!r}; one of {', '.join(HEADSET_SCHEMES)}")


def piece_counts(board: chess.Board, color: bool) -> np.ndarray:
    """``[12]`` uint8: ``color``'s pawns .. king, then the other side's (``PIECE_COUNT_NAMES``)."""
    return np.asarray([len(board.pieces(kind, side)) for side in (color, not color) for kind in _KINDS], np.uint8)


def load_history(path) -> reconchess.GameHistory:
    """A reconchess GameHistory file; ValueError (or FileNotFoundError) names the file and reason."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"game history {path} does not exist")
    try:
        history = reconchess.GameHistory.from_file(str(path))
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        raise ValueError(f"game history {path} is not a reconchess GameHistory file: {type(e).__name__}: {e}") from e
    if not isinstance(history, reconchess.GameHistory):
        raise ValueError(f"game history {path} is not a reconchess GameHistory file (it holds a "
                         f"{type(history).__name__})")
    if history.is_empty():
        raise ValueError(f"game history {path} holds no turns")
    return history


def _opponent_turn(turn: reconchess.Turn) -> Optional[reconchess.Turn]:
    """The opponent's turn just before ``turn`` (None before White's first)."""
    before = turn.previous
    return None if before.turn_number < 0 else before


def _action_number(turn: reconchess.Turn, stage: int) -> int:
    """The position of a decision in the game's sequence of actions (W sense, W move, B sense, ...)."""
    return 2 * (2 * turn.turn_number + (0 if turn.color == chess.WHITE else 1)) + stage


def _truth_before(history: reconchess.GameHistory, turn: reconchess.Turn) -> chess.Board:
    """The true board when ``turn`` starts: the history's board before the player's move, or
    when the game ended before it (a clock ran out) the board after the opponent's move
    (reconchess hands that one back with the mover to move: the turn is set right here)."""
    if history.has_move(turn):
        return history.truth_board_before_move(turn)
    before = _opponent_turn(turn)
    if before is None:
        return chess.Board()
    board = history.truth_board_after_move(before)
    board.turn = turn.color
    return board


def _seed(config: ExampleConfig, game: str, color: bool, repeat: int) -> int:
    digest = hashlib.sha256(f"{config.seed}/{game}/{int(color)}/{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % (2 ** 63)


def game_examples(history: reconchess.GameHistory, color: bool, config: ExampleConfig = ExampleConfig(), *,
                  game: str = "game", repeat: int = 0) -> Tuple[List[Dict], Dict[str, int]]:
    """The examples of one game from ``color``'s side (module docstring), in decision
    order, as dicts of ``Examples`` fields (``game`` and ``group`` left to the caller), and
    counts: ``decisions``, ``skipped_senses`` (turns where the player sensed nothing: no
    sense index to learn), the tracker's ``cap_hits`` and ``rebuilds``."""
    rng = np.random.default_rng(_seed(config, game, color, repeat))
    tracker = tracking.PossibleStates(chess.Board(), color, max_boards=config.max_boards,
                                      seed=int(rng.integers(2 ** 31)))
    winner = history.get_winner_color()
    result = 0 if winner is None else (1 if winner == color else -1)
    total_actions = sum(history.has_sense(t) + history.has_move(t) for t in history.turns())
    rows: List[Dict] = []
    counts = {"decisions": 0, "skipped_senses": 0}
    context = synopsis.ContextTracker()

    def decision(turn, stage, truth, action, legal):
        boards = tracker.sample(config.synopsis_boards, rng)
        planes = context.synopsis(boards, color, stage == _MOVE)
        remaining = total_actions - _action_number(turn, stage)
        rows.append({"synopses": planes, "stage": stage, "action": action, "legal": legal, "result": result,
                     "soon_win": result == 1 and remaining <= config.horizon,
                     "soon_lose": result == -1 and remaining <= config.horizon,
                     "pieces": piece_counts(truth, color), "tracked": truth in tracker, "boards": len(boards),
                     "color": color, "turn": turn.turn_number, "game": 0, "group": 0})

    for turn in history.turns(color):
        before = _opponent_turn(turn)
        opponent_capture = history.capture_square(before) if before is not None and history.has_move(before) else None
        tracker.opponent_moved(opponent_capture)
        context.opponent_moved(opponent_capture)
        truth = _truth_before(history, turn)
        if history.has_sense(turn):
            square = history.sense(turn)
            if square is None:
                counts["skipped_senses"] += 1
            else:
                counts["decisions"] += 1
                decision(turn, _SENSE, truth, actions.sense_index(square), np.zeros(MASK_WORDS, np.uint64))
            tracker.sensed(history.sense_result(turn))
        if not history.has_move(turn):
            break
        requested, taken, capture = history.move_result(turn)
        counts["decisions"] += 1
        legal = pack_mask({actions.move_index(m) for m in reconchess.utilities.move_actions(truth)}
                          | {actions.PASS})
        decision(turn, _MOVE, truth, actions.move_index(requested), legal)
        tracker.moved(requested, taken, capture)
        context.moved(taken, capture)
    counts["cap_hits"] = tracker.stats.cap_hits
    counts["rebuilds"] = sum(tracker.stats.rebuilds.values())
    return rows, counts


def list_histories(folder) -> List[pathlib.Path]:
    """The ``*.json`` GameHistory files under ``folder`` (recursively, sorted), ``games.json``
    manifests left out; ValueError when there is none."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"history folder {folder} does not exist")
    found = sorted(p for p in folder.rglob("*.json") if p.name != "games.json")
    if not found:
        raise ValueError(f"no GameHistory (*.json) file under {folder}")
    return found


def history_examples(paths: Sequence[pathlib.Path], config: ExampleConfig = ExampleConfig(), *,
                     root: Optional[pathlib.Path] = None, prefix: str = "",
                     progress: Optional[Callable[[str, int, Dict[str, int]], None]] = None) -> Examples:
    """Examples of both players of every history in ``paths``, ``config.multiplicity`` times
    each. A game is named ``prefix`` + its path relative to ``root`` (default: its file
    name); examples files with the same game name are one game to ``dataset.split_by_game``, so
    histories of different runs need different prefixes."""
    rows: List[Dict] = []
    games: List[str] = []
    groups: List[str] = []
    for path in paths:
        path = pathlib.Path(path)
        history = load_history(path)
        name = prefix + (str(path.relative_to(root)) if root is not None else path.name)
        games.append(name)
        names = {chess.WHITE: history.get_white_player_name(), chess.BLACK: history.get_black_player_name()}
        made = 0
        totals: Dict[str, int] = {}
        for repeat in range(config.multiplicity):
            for color in (chess.WHITE, chess.BLACK):
                group = headset_of(names[color], names[not color], config.scheme)
                if group not in groups:
                    groups.append(group)
                game_rows, counts = game_examples(history, color, config, game=name, repeat=repeat)
                for row in game_rows:
                    row["game"], row["group"] = len(games) - 1, groups.index(group)
                rows.extend(game_rows)
                made += len(game_rows)
                for k, v in counts.items():
                    totals[k] = totals.get(k, 0) + v
        log.info("%s: %d examples %s", name, made, totals)
        if progress is not None:
            progress(name, made, totals)
    return Examples.from_rows(rows, games, groups)
