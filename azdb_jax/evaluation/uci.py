"""The UCI client for Gardner chess (5x5) positions sent as FEN strings: Fairy-Stockfish as an oracle.

The project has one UCI client, python-chess's ``chess.engine``: every chess engine
(Stockfish, the project's own ``azdb-uci`` and ``azdb-alphabeta``) is driven through it,
and so are games of Gardner chess on ``GardnerBoard``, which that client reads like a
``chess.Board`` (``azdb_jax.uci.gauntlet``, ``tests/test_uci_engine.py``). This client
remains for what python-chess cannot do with a 5x5 position:

- send one without a board: python-chess takes positions only as board objects, and a
  ``GardnerBoard`` steps the env for every move (a jitted step, milliseconds a move) and
  replays every ``pv`` of every ``info`` line on a copy of the board. The Gardner oracle
  (``azdb_jax.evaluation.fairy_stockfish``: legal moves, checkers, analyses and players for
  the cross-check against the env, the puzzle makers and the solvers) asks about many
  positions given as ``position fen <5x5 FEN> moves ...`` and reads the ``pv`` as UCI text;
- ask what python-chess has no command for: Stockfish's ``go perft N`` move list (the
  engine's legal moves of a Gardner position) and the ``d`` command's ``Fen`` and
  ``Checkers`` lines.

It speaks the protocol directly, for one engine process reused across calls:

- ``UciEngine(command)`` starts the process and waits for ``uciok`` (options parsed);
- ``set_option`` (checked against the options the engine announced), ``new_game``,
  ``position``, ``go`` (``info`` lines parsed into ``SearchInfo``, then ``bestmove``),
  ``perft`` (Stockfish's ``go perft N`` move list), ``display`` (the ``d`` command);
- every wait has a timeout; an engine that exits or hangs raises ``UciError`` with its
  exit code and last stderr lines, and the process is not left running;
- ``close`` sends ``quit`` and kills the process if it does not exit; the engine is a
  context manager.

Scores are python-chess's ``chess.engine.Cp`` / ``chess.engine.Mate`` (relative to the
side to move, as UCI sends them), so the helpers of ``azdb_jax.evaluation.stockfish``
apply to them.
"""

import collections
import dataclasses
import logging
import queue
import subprocess
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple, Union

import chess.engine

__all__ = ["UciEngine", "UciError", "UciOption", "SearchInfo", "SearchResult", "parse_info"]

_EOF = object()  # the reader's end-of-output marker


class UciError(RuntimeError):
    """The engine died, hung, or answered something the protocol does not allow."""


@dataclasses.dataclass(frozen=True)
class UciOption:
    """One ``option name ... type ...`` line of the engine's ``uci`` answer."""

    name: str
    type: str  # check, spin, combo, button, string
    default: Optional[str] = None
    min: Optional[int] = None
    max: Optional[int] = None
    choices: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class SearchInfo:
    """The fields of one ``info`` line we use (None when absent)."""

    depth: Optional[int] = None
    multipv: int = 1
    score: Optional[chess.engine.Score] = None  # side to move's view
    bound: Optional[str] = None  # "lowerbound" / "upperbound" for a fail-high/low score
    nodes: Optional[int] = None
    pv: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """What ``go`` returned: the best move (None: no legal move) and the last info per PV line."""

    bestmove: Optional[str]
    lines: Tuple[SearchInfo, ...]  # by multipv 1, 2, ...: the deepest exact info of each line
    info: Tuple[SearchInfo, ...]  # every parsed info line, in order


def _parse_option(line: str) -> UciOption:
    """Parses ``option name <words> type <t> [default <v>] [min <a>] [max <b>] [var <c>]*``."""
    tokens = line.split()
    keys = {"name", "type", "default", "min", "max", "var"}
    fields: Dict[str, List[str]] = collections.defaultdict(list)
    choices: List[str] = []
    key = None
    for token in tokens[1:]:
        # Names hold spaces ("Skill Level"): within a name only "type" starts the next field.
        if token in keys and (key != "name" or token == "type"):
            key = token
            if key == "var":
                choices.append("")
            continue
        if key == "var":
            choices[-1] = f"{choices[-1]} {token}".strip()
        elif key is not None:
            fields[key].append(token)
    as_int = lambda k: int(fields[k][0]) if fields.get(k) else None  # noqa: E731
    default = " ".join(fields["default"]) if "default" in fields else None
    return UciOption(name=" ".join(fields["name"]), type=" ".join(fields["type"]), default=default,
                     min=as_int("min"), max=as_int("max"), choices=tuple(choices))


def parse_info(line: str) -> Optional[SearchInfo]:
    """An ``info`` line's depth, multipv, score, bound, nodes and pv; None for ``info string``."""
    tokens = line.split()
    if len(tokens) < 2 or tokens[0] != "info" or tokens[1] == "string":
        return None
    fields: Dict[str, object] = {}
    i = 1
    try:
        while i < len(tokens):
            token = tokens[i]
            if token in ("depth", "seldepth", "multipv", "nodes", "nps", "tbhits", "time", "hashfull",
                         "currmovenumber"):
                fields[token] = int(tokens[i + 1])
                i += 2
            elif token == "score":
                kind, value = tokens[i + 1], int(tokens[i + 2])
                if kind not in ("cp", "mate"):
                    raise ValueError(f"unknown score kind {kind!r}")
                fields["score"] = chess.engine.Cp(value) if kind == "cp" else chess.engine.Mate(value)
                i += 3
                if i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                    fields["bound"] = tokens[i]
                    i += 1
            elif token == "pv":
                fields["pv"] = tuple(tokens[i + 1:])
                break
            else:
                i += 1  # currmove, wdl, ... : not used here
    except (IndexError, ValueError) as e:
        raise UciError(f"malformed info line {line!r}: {e}") from None
    return SearchInfo(depth=fields.get("depth"), multipv=int(fields.get("multipv", 1)),  # type: ignore[arg-type]
                      score=fields.get("score"), bound=fields.get("bound"),  # type: ignore[arg-type]
                      nodes=fields.get("nodes"), pv=fields.get("pv", ()))  # type: ignore[arg-type]


class UciEngine:
    """One UCI engine process (see the module docstring).

    Args:
      command: the program and its arguments.
      name: a label for error messages (the engine's ``id name`` replaces it once known).
      timeout: seconds to wait for ``uciok``/``readyok`` and for a search beyond its own
        limit; a search with a ``movetime`` gets that time on top.
    """

    def __init__(self, command: Union[str, Sequence[str]], *, name: str = "engine", timeout: float = 30.0):
        self.command = [command] if isinstance(command, str) else list(command)
        self.name = name
        self.timeout = float(timeout)
        self._stderr: collections.deque = collections.deque(maxlen=20)
        self._lines: "queue.Queue[object]" = queue.Queue()
        try:
            self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True, bufsize=1)
        except OSError as e:
            raise UciError(f"could not start {self.name} ({' '.join(self.command)}): {e}") from e
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.options: Dict[str, UciOption] = {}
        self.id: Dict[str, str] = {}
        try:
            self.send("uci")
            for line in self.read_until(lambda text: text == "uciok"):
                if line.startswith("option "):
                    option = _parse_option(line)
                    self.options[option.name] = option
                elif line.startswith("id "):
                    key, _, value = line[3:].partition(" ")
                    self.id[key] = value.strip()
            self.name = self.id.get("name", self.name)
        except BaseException:
            self.kill()
            raise

    # ------------------------------------------------------------- plumbing

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line.rstrip())

    def _died(self, doing: str) -> UciError:
        try:
            code = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        stderr = "; ".join(self._stderr) or "nothing on stderr"
        return UciError(f"{self.name} ({' '.join(self.command)}) exited with code {code} while {doing} ({stderr})")

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def send(self, line: str) -> None:
        """Writes one command line."""
        logging.debug("%s << %s", self.name, line)
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(line + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._died(f"sending {line!r}") from None

    def read_until(self, done, *, timeout: Optional[float] = None, doing: str = "waiting") -> List[str]:
        """Lines up to and including the first for which ``done(line)`` holds.

        Raises ``UciError`` when the engine exits first or ``timeout`` (default: the
        engine's) seconds pass; a hung engine is killed.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        lines: List[str] = []
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                self.kill()
                raise UciError(f"{self.name} did not answer within {timeout or self.timeout:.0f} s while {doing}; "
                               "the process was stopped") from None
            if line is _EOF:
                raise self._died(doing)
            assert isinstance(line, str)
            logging.debug("%s >> %s", self.name, line)
            lines.append(line)
            if done(line):
                return lines

    # ------------------------------------------------------------- commands

    def is_ready(self) -> None:
        self.send("isready")
        self.read_until(lambda line: line == "readyok", doing="waiting for readyok")

    def set_option(self, name: str, value: object) -> None:
        """``setoption``; ValueError for an option the engine lacks or a value out of its range."""
        option = self.options.get(name)
        if option is None:
            raise ValueError(f"{self.name} has no UCI option {name!r}")
        if option.type == "spin":
            if isinstance(value, bool) or not isinstance(value, int) or not option.min <= value <= option.max:
                raise ValueError(f"{name}={value!r} is not an int in [{option.min}, {option.max}] ({self.name})")
        elif option.type == "combo" and str(value) not in option.choices:
            raise ValueError(f"{name}={value!r} is not one of the {len(option.choices)} values {self.name} "
                             f"accepts, e.g. {', '.join(option.choices[:8])}")
        elif option.type == "check":
            value = "true" if value else "false"
        self.send(f"setoption name {name}" + ("" if option.type == "button" else f" value {value}"))

    def new_game(self) -> None:
        self.send("ucinewgame")
        self.is_ready()

    def position(self, fen: str, moves: Sequence[str] = ()) -> None:
        self.send(f"position fen {fen}" + (f" moves {' '.join(moves)}" if moves else ""))

    def go(self, *, nodes: Optional[int] = None, depth: Optional[int] = None,
           movetime_ms: Optional[int] = None) -> SearchResult:
        """Searches the current position; waits for ``bestmove`` (``(none)``: no legal move)."""
        limits = [f"{k} {v}" for k, v in (("nodes", nodes), ("depth", depth), ("movetime", movetime_ms))
                  if v is not None]
        if not limits:
            raise ValueError("go needs a limit: nodes, depth or movetime_ms")
        self.send("go " + " ".join(limits))
        timeout = self.timeout + (movetime_ms or 0) / 1000.0
        lines = self.read_until(lambda line: line.startswith("bestmove"), timeout=timeout, doing="searching")
        infos = tuple(i for i in (parse_info(line) for line in lines if line.startswith("info ")) if i is not None)
        tokens = lines[-1].split()
        if len(tokens) < 2:
            raise UciError(f"{self.name} sent a bestmove line without a move: {lines[-1]!r}")
        best: Dict[int, SearchInfo] = {}
        for info in infos:
            if info.score is not None and info.bound is None:
                best[info.multipv] = info
        bestmove = None if tokens[1] in ("(none)", "0000") else tokens[1]
        return SearchResult(bestmove=bestmove, lines=tuple(best[k] for k in sorted(best)), info=infos)

    def perft(self, depth: int = 1) -> Dict[str, int]:
        """Stockfish's ``go perft``: {move: leaf count} of the current position (empty: no moves)."""
        self.send(f"go perft {depth}")
        lines = self.read_until(lambda line: line.startswith("Nodes searched"), doing="running perft")
        counts: Dict[str, int] = {}
        for line in lines[:-1]:
            move, sep, count = line.partition(":")
            if sep and count.strip().isdigit() and " " not in move.strip():
                counts[move.strip()] = int(count)
        total = int(lines[-1].partition(":")[2])
        if sum(counts.values()) != total:
            raise UciError(f"{self.name}'s perft lines add up to {sum(counts.values())}, not {total}")
        return counts

    def display(self) -> Dict[str, str]:
        """The ``d`` command's ``Key: value`` lines (``Fen``, ``Key``, ``Checkers``, ...)."""
        self.send("d")
        self.send("isready")
        lines = self.read_until(lambda line: line == "readyok", doing="displaying the position")
        return {k.strip(): v.strip() for k, sep, v in (line.partition(":") for line in lines) if sep and k.strip()
                and not k.startswith(" ")}

    # ------------------------------------------------------------- shutdown

    def kill(self) -> None:
        if self.alive:
            self._process.kill()
        try:
            self._process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """Sends ``quit`` and waits; kills the process if it does not exit within a few seconds."""
        if self.alive:
            try:
                self.send("quit")
                self._process.wait(timeout=5.0)
            except (UciError, subprocess.TimeoutExpired):
                pass
        self.kill()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def __enter__(self) -> "UciEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            if getattr(self, "_process", None) is not None and self.alive:
                self._process.kill()
        except Exception:  # pylint: disable=broad-except
            pass
