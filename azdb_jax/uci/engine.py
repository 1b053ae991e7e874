"""The UCI engine: commands from a GUI on one thread, searches on another.

The reader thread (``Engine.serve``) answers every command at once — ``isready`` and
``stop`` included while a search runs — and hands loading and searching to one worker
thread. Loading (importing JAX, restoring the checkpoint, compiling the search levels
and timing them) starts at the first ``isready`` or ``go``, so options set before it
(``Threads``, ``Simulations``, ``Checkpoint``) apply without reloading; ``readyok``
follows once the engine can search. Bad input never ends the process: it is answered
with ``info string error: ...`` (and a ``go`` that cannot search answers
``bestmove (none)``).

Searches (``azdb_jax.uci.searcher``) are whole compiled team searches; a move's level
(simulations per player) is chosen by ``azdb_jax.uci.timeman`` from the clock. ``go
infinite`` searches the main level, then doubles it (compiling each new level) until
``stop``; the answer is the largest finished search.

The game is the checkpoint's: chess, or Gardner's 5x5 minichess (``UCI_Variant
gardner``, the name Fairy-Stockfish and variant GUIs use). The engine announces it as
the ``UCI_Variant`` option's default, and a GUI that asks for another game gets an error.
"""

import dataclasses
import os
import queue
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import chess

from azdb_jax.uci import protocol, timeman
from azdb_jax.uci.protocol import UciError

ENGINE_NAME = "azdb_jax"
ENGINE_AUTHOR = "the azdb_jax authors"
RULE_CHOICES = ("visit", "value", "lcb", "gap", "player", "lookup")
MOVE_CHOICES = ("visits", "lcb")
MAX_INFINITE_FACTOR = 16  # go infinite deepens up to 16 x the main level
# Options whose change needs the checkpoint reloaded or the searches recompiled.
RELOAD_OPTIONS = ("Checkpoint", "Simulations", "MinSimulations", "Move", "Seed")


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    name: str
    kind: str  # spin, string, combo, check
    default: Any
    low: int = 0
    high: int = 0
    choices: tuple = ()
    help: str = ""

    def declaration(self) -> str:
        text = f"option name {self.name} type {self.kind} default {self.default}"
        if self.kind == "spin":
            text += f" min {self.low} max {self.high}"
        if self.kind == "combo":
            text += "".join(f" var {c}" for c in self.choices)
        return text.rstrip()

    def parse(self, value: str) -> Any:
        if self.kind == "spin":
            try:
                number = int(value)
            except ValueError:
                raise UciError(f"setoption {self.name}: {value!r} is not an integer") from None
            if not self.low <= number <= self.high:
                raise UciError(f"setoption {self.name}: {number} is outside [{self.low}, {self.high}]")
            return number
        if self.kind == "combo":
            match = [c for c in self.choices if c.lower() == value.lower()]
            if not match:
                raise UciError(f"setoption {self.name}: {value!r} is not one of {', '.join(self.choices)}")
            return match[0]
        if self.kind == "check":
            if value.lower() not in ("true", "false"):
                raise UciError(f"setoption {self.name}: expected true or false, got {value!r}")
            return value.lower() == "true"
        return value.strip()


def option_specs(defaults: Dict[str, Any]) -> List[OptionSpec]:
    cpus = available_cpus()
    return [
        OptionSpec("Checkpoint", "string", defaults.get("Checkpoint", ""),
                   help="run directory written by azdb-train, optionally @step"),
        OptionSpec("UCI_Variant", "combo", defaults.get("UCI_Variant", "chess"), choices=protocol.VARIANTS,
                   help="the game: the checkpoint's (chess or Gardner's 5x5 minichess)"),
        OptionSpec("Rule", "combo", defaults.get("Rule", "visit"), choices=RULE_CHOICES,
                   help="selection rule (Eq. 9), a fixed player, or the opening lookup"),
        OptionSpec("Player", "spin", defaults.get("Player", 0), 0, 255, help="the player of Rule=player"),
        OptionSpec("Lookup", "string", defaults.get("Lookup", ""), help="opening lookup file of Rule=lookup"),
        OptionSpec("LookupFallback", "combo", defaults.get("LookupFallback", "visit"), choices=RULE_CHOICES[:4]),
        OptionSpec("Move", "combo", defaults.get("Move", "visits"), choices=MOVE_CHOICES,
                   help="the chosen player's most-visited or LCB move"),
        OptionSpec("Simulations", "spin", defaults.get("Simulations", 0), 0, 1_000_000,
                   help="simulations per player of the main search (0: the run's eval_simulations)"),
        OptionSpec("MinSimulations", "spin", defaults.get("MinSimulations", 0), 0, 1_000_000,
                   help="the fastest search, for a low clock (0: eighths of Simulations down to <= 16)"),
        OptionSpec("Threads", "spin", min(defaults.get("Threads", cpus), cpus), 1, cpus,
                   help="CPU cores the engine's threads may run on"),
        OptionSpec("Move Overhead", "spin", defaults.get("Move Overhead", 100), 0, 10_000,
                   help="milliseconds kept back per move for GUI and process latency"),
        OptionSpec("Seed", "spin", defaults.get("Seed", 0), 0, 2**31 - 1),
    ]


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


_ALL_CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def set_threads(count: int) -> Optional[str]:
    """Pins every thread of the process (and the threads they start later) to ``count``
    cores; returns a note when the platform cannot. XLA's CPU thread pools then share
    those cores."""
    if not _ALL_CPUS or not hasattr(os, "sched_setaffinity"):
        return "Threads: CPU affinity is not available on this platform; ignored"
    cpus = set(_ALL_CPUS[:max(1, count)])
    for task in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(task), cpus)
        except OSError:  # the thread ended meanwhile
            pass
    return None


class SearchJob:
    """One ``go``: its limits, the game, and whether it has been answered."""

    def __init__(self, go: protocol.Go, position: Optional[protocol.Position], received: float):
        self.go = go
        self.position = position
        self.received = received
        self.stop = threading.Event()
        self.best: Optional[str] = None  # the answer so far (go infinite)
        self.answered = False
        self.lock = threading.Lock()


class Engine:
    """A UCI engine around a trained team.

    Args:
      write: called with each output line (no newline); must be thread-safe or the
        engine's own lock is enough (all writes go through ``self.send``).
      load_searcher: ``(options) -> searcher`` builds the team searcher from the options
        (``Checkpoint``, ``Simulations``, ``Move``, ``Seed``); raises ``ValueError`` /
        ``FileNotFoundError`` for bad input. A searcher has ``num_players``,
        ``default_simulations``, ``prepare(simulations) -> seconds``,
        ``compiled(simulations)`` and ``search(board, simulations, rule=, player=)``.
        The searcher's ``variant`` (``chess``/``gardner``) is the game it plays.
      defaults: option defaults (from the command line).
      log: called with notes for the person running the engine (what was loaded, how
        fast each level searches); kept off the UCI channel, where clients such as
        python-chess warn about output outside a search.
      variant_of: ``checkpoint option -> variant or None``, the game of a checkpoint
        read without loading it (its config), so that ``uci`` announces the game and
        positions parse as that game before the first ``isready``.
    """

    def __init__(self, write: Callable[[str], None], load_searcher: Callable[[Dict[str, Any]], Any], *,
                 defaults: Optional[Dict[str, Any]] = None, log: Optional[Callable[[str], None]] = None,
                 variant_of: Optional[Callable[[str], Optional[str]]] = None):
        self._write = write
        self._log = log or (lambda text: None)
        self._write_lock = threading.Lock()
        self._load_searcher = load_searcher
        self._variant_of = variant_of or (lambda checkpoint: None)
        defaults = dict(defaults or {})
        self._variant_asked = "UCI_Variant" in defaults  # by the command line (later: the GUI)
        defaults.setdefault("UCI_Variant", self._variant_of(defaults.get("Checkpoint") or "") or "chess")
        self.specs = {spec.name.lower(): spec for spec in option_specs(defaults)}
        self.options = {spec.name: spec.default for spec in self.specs.values()}
        self.position: Optional[protocol.Position] = protocol.Position.start(self.variant)
        self.searcher = None
        self.load_error: Optional[str] = None
        self.needs_load = True
        self.times = timeman.LevelTimes()
        self.main_level = 0
        self.lookup = None
        self._jobs: "queue.Queue" = queue.Queue()
        self._active: Optional[SearchJob] = None
        self._worker = threading.Thread(target=self._work, name="azdb-uci-search", daemon=True)
        self._worker.start()

    # ---------------------------------------------------------------- output

    def send(self, line: str) -> None:
        with self._write_lock:
            self._write(line)

    def error(self, message: str) -> None:
        self.send(protocol.info_string(f"error: {message}"))

    # ---------------------------------------------------------------- the reader

    def serve(self, lines) -> None:
        """Handles ``lines`` (e.g. ``sys.stdin``) until ``quit`` or end of input."""
        for line in lines:
            if not self.handle(line):
                break
        self.shutdown()

    def handle(self, line: str) -> bool:
        """Handles one command; False after ``quit``."""
        command, args = protocol.split_command(line)
        try:
            if not command:
                return True
            if command == "quit":
                return False
            handler = getattr(self, f"_cmd_{command}", None)
            if handler is None:
                raise UciError(f"unknown command {command!r}")
            handler(args)
        except UciError as e:
            self.error(str(e))
        except Exception as e:  # pylint: disable=broad-except  (a GUI's engine must not die of a command)
            self.error(f"{command}: {type(e).__name__}: {e}")
        return True

    def shutdown(self) -> None:
        job = self._active
        if job is not None:
            job.stop.set()
        self._jobs.put(None)

    def _cmd_uci(self, args) -> None:
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for spec in self.specs.values():
            self.send(spec.declaration())
        self.send("uciok")

    def _cmd_isready(self, args) -> None:
        if self._active is not None:  # searching: answer at once (UCI)
            self.send("readyok")
            return
        self._jobs.put(("load", None))
        self._jobs.put(("ready", None))

    @property
    def variant(self) -> str:
        """The game the engine plays (``UCI_Variant``)."""
        return self.options["UCI_Variant"]

    def _set_variant(self, variant: str) -> None:
        if variant != self.variant:
            self.options["UCI_Variant"] = variant
            self.position = protocol.Position.start(variant)
            self.lookup = None
            self.send(protocol.info_string(f"UCI_Variant {variant}: the game of the checkpoint"))

    def _cmd_ucinewgame(self, args) -> None:
        self.position = protocol.Position.start(self.variant)

    def _cmd_debug(self, args) -> None:
        pass

    def _cmd_register(self, args) -> None:
        pass

    def _cmd_ponderhit(self, args) -> None:
        # No Ponder option is offered; a GUI that ponders anyway gets the answer so far.
        self._cmd_stop(args)

    def _cmd_position(self, args) -> None:
        try:
            self.position = protocol.parse_position(args, self.variant, previous=self.position)
        except UciError:
            self.position = None  # never search a position the GUI did not mean
            raise

    def _cmd_setoption(self, args) -> None:
        name, value = protocol.parse_setoption(args)
        spec = self.specs.get(name.lower())
        if spec is None:
            raise UciError(f"setoption: unknown option {name!r}; options: {', '.join(s.name for s in self.specs.values())}")
        parsed = spec.parse(value)
        if spec.name == "UCI_Variant":
            plays = self._variant_of(self.options["Checkpoint"])
            if plays is not None and parsed != plays:
                raise UciError(f"setoption UCI_Variant {parsed}: the checkpoint {self.options['Checkpoint']!r} "
                               f"plays {plays}")
            self._variant_asked = True
            if parsed != self.variant:
                self.options[spec.name] = parsed
                self.position = protocol.Position.start(parsed)
                self.needs_load = True  # a loaded checkpoint of the other game must not search
            return
        if spec.name == "Rule" and parsed == "lookup" and self.variant != "chess":
            raise UciError(f"setoption Rule lookup: the opening lookup is built on chess openings; "
                           f"this engine plays {self.variant}")
        self.options[spec.name] = parsed
        if spec.name == "Checkpoint":
            self._variant_asked = False
            plays = self._variant_of(parsed)
            if plays is not None:
                self._set_variant(plays)
        if spec.name in RELOAD_OPTIONS:
            self.needs_load = True
        elif spec.name == "Threads" and self.searcher is not None:
            note = set_threads(parsed)
            if note:
                self.send(protocol.info_string(note))
        elif spec.name == "Lookup":
            self.lookup = None  # read again at the next search

    def _cmd_go(self, args) -> None:
        go, warnings = protocol.parse_go(args)
        for warning in warnings:
            self.send(protocol.info_string(warning))
        if go.searchmoves:
            self.send(protocol.info_string("go: searchmoves is not supported; searching every move"))
        if go.depth is not None or go.mate is not None:
            self.send(protocol.info_string("go: depth/mate limits do not apply to this search; using the clock"))
        job = SearchJob(go, self.position, time.monotonic())
        self._active = job
        self._jobs.put(("load", None))
        self._jobs.put(("search", job))

    def _cmd_stop(self, args) -> None:
        job = self._active
        if job is None:
            return
        job.stop.set()
        with job.lock:  # a deepening search between levels answers with what it has
            if job.go.infinite and job.best is not None and not job.answered:
                job.answered = True
                self.send(f"bestmove {job.best}")
                self._active = None

    def _cmd_d(self, args) -> None:  # Stockfish's "d": show the position
        board = None if self.position is None else self.position.board()
        self.send(protocol.info_string(f"position {board.fen() if board else '(none: the last position was bad)'}"))

    # ---------------------------------------------------------------- the worker

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            kind, job = item
            try:
                if kind == "load":
                    self._ensure_loaded()
                elif kind == "ready":
                    self.send("readyok")
                else:
                    self._search(job)
            except Exception as e:  # pylint: disable=broad-except  (keep serving)
                self.error(f"{kind}: {type(e).__name__}: {e}")
                if kind == "search":
                    self._answer(job, self._fallback_move(job))

    def _ensure_loaded(self) -> None:
        if not self.needs_load:
            return
        self.needs_load = False
        self.searcher, self.load_error, self.times = None, None, timeman.LevelTimes()
        if not self.options["Checkpoint"]:
            self.load_error = "no checkpoint: setoption name Checkpoint value <run directory>[@step]"
            self.error(self.load_error)
            return
        note = set_threads(self.options["Threads"])
        if note:
            self.send(protocol.info_string(note))
        try:
            searcher = self._load_searcher(dict(self.options))
            plays = getattr(searcher, "variant", "chess")
            if plays != self.variant:
                if not self._variant_asked:
                    self._set_variant(plays)  # nothing told the game before; the checkpoint does
                else:
                    raise ValueError(f"Checkpoint {self.options['Checkpoint']!r} plays {plays}, "
                                     f"UCI_Variant is {self.variant}")
            main = self.options["Simulations"] or searcher.default_simulations
            for level in timeman.ladder(main, self.options["MinSimulations"] or None):
                self.times.record(level, searcher.prepare(level))
        except (ValueError, FileNotFoundError) as e:
            self.load_error = " ".join(str(e).split())
            self.error(self.load_error)
            return
        self.searcher, self.main_level = searcher, main
        levels = ", ".join(f"{s} simulations {self.times.expected(s) * 1000:.0f} ms" for s in self.times.levels)
        self._log(f"loaded {self.options['Checkpoint']}: {searcher.num_players} players; {levels}")

    def _choice(self, position: protocol.Position) -> Dict[str, Any]:
        """rule/player for this move from the Rule, Player and Lookup options."""
        rule = self.options["Rule"]
        n = self.searcher.num_players
        if rule == "player":
            player = self.options["Player"]
            if player >= n:
                raise UciError(f"Player {player}: the team has players 0..{n - 1}")
            return dict(player=player)
        if rule == "lookup":
            if position.variant != "chess":
                raise UciError(f"Rule=lookup: the opening lookup is built on chess openings, not {position.variant}")
            if self.lookup is None:
                if not self.options["Lookup"]:
                    raise UciError("Rule=lookup needs setoption name Lookup value <file>")
                from azdb_jax.uci import lookup as lookup_lib  # pylint: disable=g-import-not-at-top

                table = lookup_lib.load_lookup(self.options["Lookup"])
                table.check_players(n)
                self.lookup = table
            player = self.lookup.player(chess.Board(position.start_fen),
                                        [chess.Move.from_uci(m) for m in position.moves])
            return dict(player=player) if player is not None else dict(rule=self.options["LookupFallback"])
        return dict(rule=rule)

    def _search(self, job: SearchJob) -> None:
        if job.position is None:
            self.error("go: no valid position (the last position command was rejected)")
            return self._answer(job, None)
        if self.searcher is None:
            self.error(f"go: the engine cannot search ({self.load_error or 'no checkpoint loaded'})")
            return self._answer(job, None)
        plays = getattr(self.searcher, "variant", "chess")
        if job.position.variant != plays:
            self.error(f"go: the position is {job.position.variant}, the checkpoint plays {plays}")
            return self._answer(job, None)
        board = job.position.board()
        if not any(board.legal_moves):
            return self._answer(job, None)
        try:
            choice = self._choice(job.position)
        except (UciError, ValueError, FileNotFoundError) as e:
            self.error(str(e))
            choice = dict(rule=self.options["LookupFallback"])
        searched = protocol.searchable(board, job.position.variant)  # still playable when nobody claims the draw
        go = job.go
        n = self.searcher.num_players
        if go.infinite or go.ponder:
            return self._deepen(job, searched, choice)
        budget = timeman.move_budget(go, board.turn, overhead_ms=self.options["Move Overhead"])
        if budget is not None:
            budget = max(budget - (time.monotonic() - job.received), 0.0)
        cap = max(1, go.nodes // n) if go.nodes else None
        if cap is not None and budget is None and not self.searcher.compiled(cap):
            self.times.record(cap, self.searcher.prepare(cap))  # no clock: search exactly what was asked
        level = timeman.choose_level(self.times, budget, cap=cap, preferred=self.main_level)
        result = self._run(searched, level, choice)
        self._answer(job, result.move or self._fallback_move(job))

    def _deepen(self, job: SearchJob, board: Any, choice: Dict[str, Any]) -> None:
        level = self.main_level
        while True:
            result = self._run(board, level, choice)
            with job.lock:
                job.best = result.move or self._fallback_move(job)
            if job.stop.is_set() or level >= MAX_INFINITE_FACTOR * self.main_level:
                break
            level *= 2
            if not self.searcher.compiled(level):
                self.times.record(level, self.searcher.prepare(level))
            if job.stop.is_set():
                break
        job.stop.wait()
        self._answer(job, job.best)

    def _run(self, board: Any, level: int, choice: Dict[str, Any]):
        result = self.searcher.search(board, level, **choice)
        self.times.record(level, result.seconds)
        how = f"rule {choice['rule']}" if "rule" in choice else f"Rule={self.options['Rule']}"
        text = (f"player {result.player} ({how}; {result.simulations} simulations each; players "
                + " ".join(f"{j}:{m or '-'}" for j, m in enumerate(result.player_moves)) + ")")
        self.send(protocol.format_info(depth=1, nodes=result.nodes, seconds=result.seconds, value=result.value,
                                       pv=[result.move] if result.move else [], text=text))
        return result

    def _fallback_move(self, job: Optional[SearchJob]) -> Optional[str]:
        """A legal move when the search gave none (a position drawn by rule that the GUI
        plays on): the first in UCI order."""
        if job is None or job.position is None:
            return None
        legal = sorted(move.uci() for move in job.position.board().legal_moves)
        if legal:
            self.send(protocol.info_string(f"no searched move; playing {legal[0]}"))
        return legal[0] if legal else None

    def _answer(self, job: SearchJob, move: Optional[str]) -> None:
        with job.lock:
            if job.answered:
                return
            job.answered = True
            if self._active is job:
                self._active = None
        self.send(f"bestmove {move or '(none)'}")


__all__ = ["Engine", "OptionSpec", "option_specs", "set_threads", "RULE_CHOICES", "ENGINE_NAME"]
