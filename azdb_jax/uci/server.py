"""The UCI server core: the GUI's commands on one thread, preparing and searching on another.

Both of the project's UCI engines are a `UciServer`: ``azdb-uci`` (``azdb_jax.uci.engine``,
a trained team) and ``azdb-alphabeta`` (``azdb_jax.classical.uci``, the classical
alpha-beta searcher). The server does what UCI asks of every engine:

- the reader (``serve``/``handle``) answers every command at once: ``uci`` (the engine's
  id and its options), ``isready`` (at once while searching, else once the engine is
  prepared), ``ucinewgame``, ``setoption`` (names and values checked against the
  engine's `OptionSpec` list), ``position startpos|fen ... moves ...`` (the game of the
  ``UCI_Variant`` option, ``azdb_jax.uci.protocol``), ``go``, ``stop``, ``ponderhit``,
  ``debug``, ``register``, ``d`` and ``quit``;
- one worker thread prepares (at the first ``isready`` or ``go``, again after an option
  of ``PREPARE_OPTIONS`` changed, or at once with ``preload``) and searches; a ``go``
  becomes a `SearchJob` holding the board, the move's budget and deadline from the clock
  (``timeman.move_budget`` less ``Move Overhead`` or the latency measured on the pipes,
  counted from the arrival of ``go``), and a stop flag that ``stop``, ``ponderhit`` and
  ``quit`` set; ``go infinite`` and ``go ponder`` answer only after ``stop``;
- bad input never ends the process: an unknown command, a malformed or illegal
  position, a bad option value or a failed preparation is answered with ``info string
  error: ...``; a ``go`` that cannot search answers ``bestmove (none)``, one whose
  search failed the first legal move.

An engine subclasses `UciServer` and supplies only what differs: ``NAME``, its options
(``option_specs``; ``variant_option`` and ``overhead_option`` give the two every engine
has), how it prepares (``prepare``: compile, build tables; returns a note sent before
the next ``readyok``), how it searches a position under limits (``search``: until
``job.deadline``, the ``go`` limits or ``job.stop``, sending its own ``info`` lines with
``send``; returns the move), and where it needs them ``set_option`` (checks and effects
of a new value), ``new_game`` and ``go_notes``.
"""

import abc
import dataclasses
import queue
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from azdb_jax.uci import protocol, timeman
from azdb_jax.uci.protocol import UciError


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One UCI option: its declaration at ``uci`` and the values ``setoption`` accepts."""

    name: str
    kind: str  # spin, string, combo, check
    default: Any
    low: int = 0
    high: int = 0
    choices: tuple = ()
    help: str = ""

    def declaration(self) -> str:
        """The ``option name ... type ...`` line (an empty string default is ``<empty>``)."""
        default = self.default
        if self.kind == "check":
            default = str(bool(default)).lower()
        elif self.kind == "string" and not default:
            default = "<empty>"
        text = f"option name {self.name} type {self.kind} default {default}"
        if self.kind == "spin":
            text += f" min {self.low} max {self.high}"
        if self.kind == "combo":
            text += "".join(f" var {c}" for c in self.choices)
        return text.rstrip()

    def parse(self, value: str) -> Any:
        """The value of ``setoption``'s text; UciError naming what is wrong."""
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
        value = value.strip()
        return "" if value == "<empty>" else value


def variant_option(default: str, help: str = "the game") -> OptionSpec:  # pylint: disable=redefined-builtin
    """``UCI_Variant``: the game, one of ``protocol.VARIANTS``."""
    return OptionSpec("UCI_Variant", "combo", default, choices=protocol.VARIANTS, help=help)


def overhead_option(default: int) -> OptionSpec:
    """``Move Overhead``: milliseconds kept back from every move's budget."""
    return OptionSpec("Move Overhead", "spin", default, 0, 10_000,
                      help="milliseconds kept back per move for GUI and process latency")


class SearchJob:
    """One ``go``: its limits and position, what the server worked out for the search
    (filled in on the worker before ``UciServer.search``), and whether it has been answered.

    Attributes:
      go: the ``go`` command's limits.
      position: the game as the GUI set it (None after a rejected ``position``).
      received: ``time.monotonic()`` when ``go`` arrived; deadlines count from it.
      stop: set by ``stop``, ``ponderhit`` and ``quit``; the search ends soon after.
      board: the current position with the game's moves on its stack.
      legal: its legal moves.
      budget: seconds the move may take (None: no time limit: nodes, depth, infinite).
      deadline: ``received + budget`` (None without a budget).
    """

    def __init__(self, go: protocol.Go, position: Optional[protocol.Position], received: float):
        self.go = go
        self.position = position
        self.received = received
        self.stop = threading.Event()
        self.board: Any = None
        self.legal: List[Any] = []
        self.budget: Optional[float] = None
        self.deadline: Optional[float] = None
        self.answered = False
        self.lock = threading.Lock()

    @property
    def forced(self) -> bool:
        """One legal move under a clock: nothing to search for."""
        return len(self.legal) == 1 and self.go.movetime is None and self.go.nodes is None and self.budget is not None

    def seconds_left(self) -> Optional[float]:
        """Seconds to the deadline (None without one)."""
        return None if self.deadline is None else self.deadline - time.monotonic()


class UciServer(abc.ABC):
    """A UCI engine's server (see the module docstring); subclasses supply the engine.

    Args:
      write: called with each output line (no newline), from both threads under one lock.
      defaults: option defaults (from the command line), read by ``option_specs``.
      log: called with notes for the person running the engine (what ``prepare``
        reported), off the UCI channel.
    """

    NAME = "azdb_jax"
    AUTHOR = "the azdb_jax authors"
    PREPARE_OPTIONS: Tuple[str, ...] = ()  # options whose change needs `prepare` again
    IGNORED_GO_LIMITS: Tuple[str, ...] = ()  # go limits the search does not follow (it uses the clock)
    QUIT_WAIT = 0.0  # seconds `serve` waits after quit for the worker to finish what was queued (a stopped search)

    def __init__(self, write: Callable[[str], None], *, defaults: Optional[Dict[str, Any]] = None,
                 log: Optional[Callable[[str], None]] = None):
        self._write = write
        self._write_lock = threading.Lock()
        self._log = log or (lambda text: None)
        self.specs = {spec.name.lower(): spec for spec in self.option_specs(dict(defaults or {}))}
        self.options = {spec.name: spec.default for spec in self.specs.values()}
        self.position: Optional[protocol.Position] = protocol.Position.start(self.variant)
        self.needs_prepare = True
        self.prepared = False
        self.prepare_error: Optional[str] = None
        self.debug = False
        self.lag = timeman.Lag()
        self._report: Optional[str] = None  # the last preparation's note, sent before the next readyok or search
        self._jobs: "queue.Queue" = queue.Queue()
        self._active: Optional[SearchJob] = None
        self._worker = threading.Thread(target=self._work, name=f"{type(self).__name__}-worker", daemon=True)
        self._worker.start()

    # ---------------------------------------------------------------- what an engine supplies

    @abc.abstractmethod
    def option_specs(self, defaults: Dict[str, Any]) -> List[OptionSpec]:
        """The engine's options, in the order ``uci`` declares them (with ``UCI_Variant``
        and ``Move Overhead``)."""

    @abc.abstractmethod
    def prepare(self) -> Optional[str]:
        """Builds what searching needs (on the worker); a note for the GUI, or None.
        Raises ``UciError``/``ValueError``/``OSError`` naming bad input."""

    @abc.abstractmethod
    def search(self, job: SearchJob) -> Optional[str]:
        """Searches ``job.board`` (on the worker) under the job's limits, sending info
        lines; the move in UCI, or None for the server's fallback move."""

    def set_option(self, name: str, value: Any) -> None:
        """Applies a checked ``setoption`` value (on the reader); engines extend it with
        their checks (raise ``UciError``) and effects."""
        if name == "UCI_Variant":
            if value != self.variant:
                self.options[name] = value
                self.position = protocol.Position.start(value)
                self.needs_prepare = True  # what was prepared for the other game must not search
            return
        self.options[name] = value
        if name in self.PREPARE_OPTIONS:
            self.needs_prepare = True

    def new_game(self) -> None:
        """``ucinewgame`` on the worker: forget what the last game's searches kept."""

    def go_notes(self, go: protocol.Go) -> List[str]:
        """Notes on limits of ``go`` the search will not follow."""
        notes = []
        if go.searchmoves:
            notes.append("go: searchmoves is not supported; searching every move")
        ignored = [name for name in self.IGNORED_GO_LIMITS if getattr(go, name) is not None]
        if ignored:
            notes.append(f"go: {'/'.join(ignored)} limits do not apply to this search; using the clock")
        return notes

    # ---------------------------------------------------------------- output

    @property
    def variant(self) -> str:
        """The game the engine plays (``UCI_Variant``)."""
        return self.options["UCI_Variant"]

    @property
    def game(self) -> protocol.UciGame:
        return protocol.uci_game(self.variant)

    def send(self, line: str) -> None:
        with self._write_lock:
            self._write(line)

    def note(self, text: str) -> None:
        """``info string <text>``."""
        self.send(protocol.info_string(text))

    def error(self, message: str) -> None:
        self.send(protocol.info_string(f"error: {message}"))

    def on_worker(self, call: Callable[[], None]) -> None:
        """Runs ``call`` on the worker, after what is queued there (the worker owns what
        ``prepare`` built)."""
        self._jobs.put(("call", call))

    def preload(self) -> None:
        """Starts preparing now (on the worker), before any command asks for it."""
        self._jobs.put(("prepare", None))

    # ---------------------------------------------------------------- the reader

    def serve(self, lines: Iterable[str]) -> None:
        """Handles ``lines`` (e.g. ``sys.stdin``) until ``quit`` or end of input; then
        stops the search and gives the worker up to ``QUIT_WAIT`` seconds to answer what
        was asked before (commands piped in at once)."""
        for line in lines:
            if not self.handle(line):
                break
        self.shutdown()
        if self.QUIT_WAIT > 0:
            self._worker.join(timeout=self.QUIT_WAIT)

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
        except ValueError as e:  # UciError included: bad input, its message says why
            self.error(" ".join(str(e).split()))
        except Exception as e:  # pylint: disable=broad-except  (a GUI's engine must not die of a command)
            self.error(f"{command}: {type(e).__name__}: {' '.join(str(e).split())}")
        return True

    def shutdown(self) -> None:
        """Stops a running search and ends the worker."""
        job = self._active
        if job is not None:
            job.stop.set()
        self._jobs.put(None)

    def _cmd_uci(self, args) -> None:
        self.send(f"id name {self.NAME}")
        self.send(f"id author {self.AUTHOR}")
        for spec in self.specs.values():
            self.send(spec.declaration())
        self.send("uciok")

    def _cmd_isready(self, args) -> None:
        if self._active is not None:  # searching: answer at once (UCI)
            self.send("readyok")
            return
        self._jobs.put(("prepare", None))
        self._jobs.put(("ready", None))

    def _cmd_ucinewgame(self, args) -> None:
        self.position = protocol.Position.start(self.variant)
        self._jobs.put(("newgame", None))  # what prepare built stays

    def _cmd_debug(self, args) -> None:
        self.debug = bool(args) and args[0] == "on"

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
        self.set_option(spec.name, spec.parse(value))

    def _cmd_go(self, args) -> None:
        received = time.monotonic()
        go, warnings = protocol.parse_go(args)
        for warning in warnings + self.go_notes(go):
            self.note(warning)
        job = SearchJob(go, self.position, received)
        self._active = job
        if self.needs_prepare:
            self._jobs.put(("prepare", None))
        self._jobs.put(("search", job))

    def _cmd_stop(self, args) -> None:
        job = self._active
        if job is not None:
            job.stop.set()

    def _cmd_d(self, args) -> None:  # Stockfish's "d": show the position
        board = None if self.position is None else self.position.board()
        self.note(f"position {board.fen() if board else '(none: the last position was bad)'}")

    # ---------------------------------------------------------------- the worker

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            kind, payload = item
            try:
                if kind == "prepare":
                    self._prepare()
                elif kind == "ready":
                    self._send_report()
                    self.send("readyok")
                elif kind == "newgame":
                    self.lag.new_game()
                    if self.prepared:
                        self.new_game()
                elif kind == "call":
                    payload()
                else:
                    self._search(payload)
            except Exception as e:  # pylint: disable=broad-except  (keep serving)
                self.error(f"{kind}: {type(e).__name__}: {' '.join(str(e).split())}")
                if kind == "search":
                    self._answer(payload, self._fallback_move(payload))

    def _send_report(self) -> None:
        if self._report:
            self.note(self._report)
            self._report = None

    def _prepare(self) -> None:
        if not self.needs_prepare:
            return
        self.needs_prepare = False
        self.prepared, self.prepare_error = False, None
        try:
            report = self.prepare()
        except (ValueError, OSError) as e:  # bad input: an option's file, a checkpoint
            self.prepare_error = " ".join(str(e).split())
        except Exception as e:  # pylint: disable=broad-except  (an engine keeps serving; go says why it cannot search)
            self.prepare_error = f"preparing failed: {type(e).__name__}: {' '.join(str(e).split())}"
        else:
            self.prepared = True
            if report:
                self._report = report
                self._log(report)
            return
        self.error(self.prepare_error)

    def _search(self, job: SearchJob) -> None:
        self._send_report()  # prepared for this go: say what it took
        if job.position is None:
            self.error("go: no valid position (the last position command was rejected)")
            return self._answer(job, None)
        if not self.prepared:
            self.error(f"go: the engine cannot search ({self.prepare_error or 'not prepared'})")
            return self._answer(job, None)
        job.board = job.position.board()
        job.legal = list(job.board.legal_moves)
        if not job.legal:
            self.error(f"go: the game is over in {job.board.fen()}: no move to search")
            return self._answer(job, None)
        go, turn = job.go, job.board.turn
        self.lag.observe(go, turn)
        job.budget = timeman.move_budget(go, turn, overhead_ms=self.lag.overhead_ms(self.options["Move Overhead"]))
        job.deadline = None if job.budget is None else job.received + job.budget
        move = self.search(job)
        if go.infinite or go.ponder:  # UCI: never answer an infinite search before stop
            job.stop.wait()
        self._answer(job, move or self._fallback_move(job))
        self.lag.searched(go, turn, job.budget)

    def _fallback_move(self, job: Optional[SearchJob]) -> Optional[str]:
        """A legal move when the search gave none (a position drawn by rule that the GUI
        plays on, a failed search): the first in UCI order."""
        if job is None or job.position is None:
            return None
        legal = sorted(move.uci() for move in job.position.board().legal_moves)
        if legal:
            self.note(f"no searched move; playing {legal[0]}")
        return legal[0] if legal else None

    def _answer(self, job: SearchJob, move: Optional[str]) -> None:
        with job.lock:
            if job.answered:
                return
            job.answered = True
            if self._active is job:
                self._active = None
        self.send(f"bestmove {move or '(none)'}")


__all__ = ["OptionSpec", "SearchJob", "UciServer", "overhead_option", "variant_option"]
