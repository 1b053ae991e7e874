"""The UCI engine: commands from a GUI on one thread, searches on another.

The reader thread (``Engine.serve``) answers every command at once — ``isready`` and
``stop`` included while a search runs — and hands loading and searching to one worker
thread. Loading (importing JAX, restoring the checkpoint, compiling the search's
programs and running them once: ``TeamSearcher.warm_up``) starts as soon as the engine
starts when it is given a checkpoint (``preload``), else at the first ``isready``;
``readyok`` follows once the engine can search without compiling anything, and the
time the load took is reported as an ``info string`` before it. An option that changes
what is compiled (``Checkpoint``, ``Hash``, ``Move``, ``Seed``) loads again at the next
``isready``; ``ucinewgame`` only forgets the last search's tree. Bad input never ends the
process: it is answered with ``info string error: ...`` (and a ``go`` that cannot search
answers ``bestmove (none)``).

A search (``azdb_jax.uci.searcher``) grows its trees in chunks of about 50 ms
(``azdb_jax.uci.timeman``) until the move's deadline (from ``movetime`` or the clock,
counted from the arrival of ``go``), the ``go nodes`` limit, or ``stop``; ``go infinite``
and ``go ponder`` search until ``stop``. It reports ``info depth seldepth nodes nps
hashfull time score pv`` at least once a second and once at the end, then ``bestmove``.

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
INFO_SECONDS = 1.0  # an info line at least this often while searching
# Options whose change needs the checkpoint reloaded or the searches recompiled.
RELOAD_OPTIONS = ("Checkpoint", "Hash", "Move", "Seed")


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
        default = str(self.default).lower() if self.kind == "check" else self.default
        text = f"option name {self.name} type {self.kind} default {default}"
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
        OptionSpec("Hash", "spin", defaults.get("Hash", 256), 16, 65536,
                   help="MB for the search trees (their capacity in nodes follows)"),
        OptionSpec("Reuse", "check", bool(defaults.get("Reuse", True)),
                   help="keep the subtree of the last search for the next move (PUCT teams)"),
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
        self.answered = False
        self.lock = threading.Lock()


class Engine:
    """A UCI engine around a trained team.

    Args:
      write: called with each output line (no newline); must be thread-safe or the
        engine's own lock is enough (all writes go through ``self.send``).
      load_searcher: ``(options) -> searcher`` builds the team searcher from the options
        (``Checkpoint``, ``Hash``, ``Move``, ``Seed``, ``Reuse``); raises ``ValueError`` /
        ``FileNotFoundError`` for bad input. A searcher (``searcher.TeamSearcher``) has
        ``variant`` (``chess``/``gardner``: the game it plays), ``num_players``,
        ``capacity``, ``warm_up() -> {step: seconds}``, ``start(board, line)``,
        ``grow(simulations, budget=) -> simulations run``, ``nodes()``,
        ``result(rule=, player=)``, ``forget()`` and ``set_reuse(flag)``; an optional
        ``load_times`` dict says what loading it took.
      defaults: option defaults (from the command line).
      log: called with notes for the person running the engine (what was loaded and
        how fast it searches), off the UCI channel.
      variant_of: ``checkpoint option -> variant or None``, the game of a checkpoint
        read without loading it (its config), so that ``uci`` announces the game and
        positions parse as that game before the load.
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
        self.speed = timeman.Speed()
        self.lag = timeman.Lag()
        self.reading = timeman.RecentMax()  # how long reading the trees takes (warm-up's, recent searches'), kept back
        self.lateness = timeman.Lateness()  # how much longer than planned recent chunks took, kept back too
        self.lookup = None
        self._report: Optional[str] = None  # the last load's timings, sent before the next readyok
        self.debug = False
        self._jobs: "queue.Queue" = queue.Queue()
        self._active: Optional[SearchJob] = None
        self._worker = threading.Thread(target=self._work, name="azdb-uci-search", daemon=True)
        self._worker.start()

    def preload(self) -> None:
        """Starts loading now (on the worker), before any command asks for it."""
        self._jobs.put(("load", None))

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
        self._jobs.put(("newgame", None))  # compiled programs stay; the last tree is forgotten

    def _cmd_debug(self, args) -> None:
        self.debug = bool(args) and args[0] == "on"  # debug on: each search says where its time went

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
        elif spec.name == "Reuse":
            self._jobs.put(("reuse", parsed))  # the worker owns the searcher
        elif spec.name == "Threads" and self.searcher is not None:
            note = set_threads(parsed)
            if note:
                self.send(protocol.info_string(note))
        elif spec.name == "Lookup":
            self.lookup = None  # read again at the next search

    def _cmd_go(self, args) -> None:
        received = time.monotonic()
        go, warnings = protocol.parse_go(args)
        for warning in warnings:
            self.send(protocol.info_string(warning))
        if go.searchmoves:
            self.send(protocol.info_string("go: searchmoves is not supported; searching every move"))
        if go.depth is not None or go.mate is not None:
            self.send(protocol.info_string("go: depth/mate limits do not apply to this search; using the clock"))
        job = SearchJob(go, self.position, received)
        self._active = job
        if self.needs_load:
            self._jobs.put(("load", None))
        self._jobs.put(("search", job))

    def _cmd_stop(self, args) -> None:
        job = self._active
        if job is not None:
            job.stop.set()  # the search answers after its current chunk

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
                    if self._report:
                        self.send(protocol.info_string(self._report))
                        self._report = None
                    self.send("readyok")
                elif kind == "newgame":
                    self.lag.new_game()
                    if self.searcher is not None:
                        self.searcher.forget()
                elif kind == "reuse":
                    if self.searcher is not None:
                        self.searcher.set_reuse(job)
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
        self.searcher, self.load_error = None, None
        if not self.options["Checkpoint"]:
            self.load_error = "no checkpoint: setoption name Checkpoint value <run directory>[@step]"
            self.error(self.load_error)
            return
        note = set_threads(self.options["Threads"])
        if note:
            self.send(protocol.info_string(note))
        start = time.perf_counter()
        try:
            searcher = self._load_searcher(dict(self.options))
            plays = getattr(searcher, "variant", "chess")
            if plays != self.variant:
                if not self._variant_asked:
                    self._set_variant(plays)  # nothing told the game before; the checkpoint does
                else:
                    raise ValueError(f"Checkpoint {self.options['Checkpoint']!r} plays {plays}, "
                                     f"UCI_Variant is {self.variant}")
            steps = dict(getattr(searcher, "load_times", {}))
            steps.update(searcher.warm_up())
            started = time.perf_counter()
            self._warm_positions()
            steps["positions"] = time.perf_counter() - started
        except (ValueError, FileNotFoundError) as e:
            self.load_error = " ".join(str(e).split())
            self.error(self.load_error)
            return
        except Exception as e:  # pylint: disable=broad-except  (an engine keeps serving; go says why it cannot search)
            self.load_error = f"loading failed: {type(e).__name__}: {' '.join(str(e).split())}"
            self.error(self.load_error)
            return
        self.searcher = searcher
        self.speed = timeman.Speed(rate=getattr(searcher, "warm_rate", timeman.Speed().rate))
        self.reading = timeman.RecentMax()
        self.reading.add(getattr(searcher, "warm_read_seconds", 0.0))
        self.lateness = timeman.Lateness()
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in steps.items())
        self._report = (f"loaded {self.options['Checkpoint']} in {time.perf_counter() - start:.1f} s ({parts}): "
                        f"{searcher.num_players} players, trees of {searcher.capacity} nodes each")
        self._log(self._report)

    def _warm_positions(self) -> None:
        """The reader's handling of a game, once: ``position startpos|fen ... moves`` as a
        GUI sends it, and what a search asks of the board (Gardner boards compile their
        rules on first use, which would otherwise land on the first move's clock)."""
        start = protocol.Position.start(self.variant)
        board, moves = start.board(), []
        for _ in range(2):
            moves.append(sorted(move.uci() for move in board.legal_moves)[0])
            board.push(board.parse_uci(moves[-1]))
        previous = None
        for args in (["startpos", "moves", *moves[:1]], ["startpos", "moves", *moves],
                     ["fen", *start.start_fen.split(), "moves", *moves]):
            previous = protocol.parse_position(args, self.variant, previous=previous)
            board = previous.board()
            searched = protocol.searchable(board, self.variant)
            list(searched.legal_moves), board.is_game_over(), board.turn  # pylint: disable=expression-not-assigned

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
        if self._report:  # loaded by this go: say what it took
            self.send(protocol.info_string(self._report))
            self._report = None
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
        legal = list(board.legal_moves)
        if not legal:
            return self._answer(job, None)
        try:
            choice = self._choice(job.position)
        except (UciError, ValueError, FileNotFoundError) as e:
            self.error(str(e))
            choice = dict(rule=self.options["LookupFallback"])
        go = job.go
        searched = protocol.searchable(board, job.position.variant)  # still playable when nobody claims the draw
        self.lag.observe(go, board.turn)
        budget = timeman.move_budget(go, board.turn, overhead_ms=self.lag.overhead_ms(self.options["Move Overhead"]))
        deadline = None if budget is None else job.received + budget
        forced = len(legal) == 1 and go.movetime is None and go.nodes is None and budget is not None
        searcher = self.searcher
        queued = time.monotonic()
        searcher.start(searched, (job.position.start_fen, job.position.moves))
        n = searcher.num_players
        nodes_at_start = searcher.nodes()
        begun = time.monotonic()
        chunks, longest = 0, 0.0
        planned = timeman.planned_simulations(self.speed.rate, None if deadline is None else deadline - begun,
                                              nodes=None if go.nodes is None else -(-go.nodes // n),
                                              capacity=searcher.capacity)
        last_info, full = begun, False
        while not job.stop.is_set() and not forced:
            now = time.monotonic()
            nodes_left = None if go.nodes is None else -(-(go.nodes - searcher.nodes()) // n)
            remaining = None if deadline is None else deadline - now - self.reading.value - self.lateness.value
            rate = self.speed.rate
            size = timeman.chunk_size(rate, remaining, nodes_left=nodes_left)
            if size == 0:
                break
            ran = searcher.grow(size, budget=planned)
            took = time.monotonic() - now
            self.speed.record(ran, took)
            self.lateness.record(ran, took, rate)
            chunks, longest = chunks + 1, max(longest, took)
            if ran < size:
                full = True
                break
            if time.monotonic() - last_info >= INFO_SECONDS:
                last_info = time.monotonic()
                self._info(job, searcher.result(**choice), nodes_at_start, begun)
        if searcher.nodes() == 0:  # no time at all: one simulation, so that the move is searched
            searcher.grow(1, budget=1)
        if go.infinite or go.ponder:  # UCI: never answer an infinite search before stop
            if full:
                self.send(protocol.info_string(f"the search trees are full ({searcher.capacity} nodes each; "
                                               "setoption name Hash for more); waiting for stop"))
            job.stop.wait()
        searched_until = time.monotonic()
        result = searcher.result(**choice)
        self.reading.add(time.monotonic() - searched_until)
        self._info(job, result, nodes_at_start, begun)
        if self.debug:
            self.send(protocol.info_string(
                f"timing: waited {1000 * (queued - job.received):.0f} ms, start {1000 * (begun - queued):.0f} ms, "
                f"{chunks} chunks {1000 * (searched_until - begun):.0f} ms (longest {1000 * longest:.0f} ms), "
                f"result {1000 * (time.monotonic() - searched_until):.0f} ms; budget "
                + ("none" if budget is None else f"{1000 * budget:.0f} ms")
                + f"; measured lag up to {1000 * self.lag.value:.0f} ms"
                + f"; kept back: reading {1000 * self.reading.value:.0f} ms, lateness {1000 * self.lateness.value:.0f} ms"))
        self._answer(job, result.move or self._fallback_move(job))
        self.lag.searched(go, board.turn, budget)

    def _info(self, job: SearchJob, result, nodes_at_start: int, begun: float) -> None:
        rule = result.column[len("team_"):] if result.column.startswith("team_") else None
        how = f"rule {rule}" if rule else f"Rule={self.options['Rule']}"
        reused = " reused tree;" if self.searcher.reused else ""
        text = (f"player {result.player} ({how};{reused} players "
                + " ".join(f"{j}:{m or '-'}" for j, m in enumerate(result.player_moves)) + ")")
        now = time.monotonic()
        self.send(protocol.format_info(
            depth=result.depth, seldepth=result.seldepth, nodes=result.nodes, seconds=now - job.received,
            nps=(result.nodes - nodes_at_start) / max(now - begun, 1e-6),
            hashfull=int(1000 * result.nodes / max(self.searcher.capacity * self.searcher.num_players, 1)),
            value=result.value, pv=list(result.pv) or ([result.move] if result.move else []), text=text))

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
