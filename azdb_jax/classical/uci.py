"""The classical alpha-beta searcher as a UCI engine: ``azdb-alphabeta`` or ``python -m azdb_jax.classical.uci``.

Plays chess or Gardner's 5x5 minichess (``setoption name UCI_Variant value gardner``, the
name Fairy-Stockfish uses), so a GUI or a cutechess-style gauntlet can play it. Commands:
``uci``, ``isready``, ``ucinewgame``, ``setoption``, ``position``, ``go`` (``depth``,
``nodes``, ``movetime``, ``wtime``/``btime``/``winc``/``binc``/``movestogo``,
``infinite``), ``stop``, ``quit``, ``d``. Positions and ``go`` are parsed by the project's
UCI protocol code (``azdb_jax.uci.protocol``); a ``position`` it cannot play is answered
with ``info string error: ...`` and the engine keeps serving (a ``go`` then answers
``bestmove (none)``).

Options: ``UCI_Variant``, ``Hash`` (MiB of transposition table), ``OwnBook`` and
``BookFile`` (a polyglot book, chess), ``EvalFile`` (evaluation weights,
``EvalWeights.save``), ``Quiescence``, ``SingularExtensions``, ``EndgameTables`` and
``Move Overhead``. Every completed iteration prints ``info depth D nodes N nps X time T
score cp S|mate M pv ...``; the search runs on its own thread, so ``stop`` and
``isready`` are answered while it runs.
"""

import queue
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional

from azdb_jax.classical import evaluation, player as player_lib, search
from azdb_jax.uci import protocol
from azdb_jax.uci.engine import OptionSpec
from azdb_jax.uci.protocol import UciError

ENGINE_NAME = "azdb_jax alphabeta"
BYTES_PER_ENTRY = 150  # a filled transposition-table slot in CPython (ttable docstring)


def option_specs(defaults: Dict[str, Any]) -> Dict[str, OptionSpec]:
    specs = [
        OptionSpec("UCI_Variant", "combo", defaults.get("UCI_Variant", "chess"), choices=protocol.VARIANTS),
        OptionSpec("Hash", "spin", defaults.get("Hash", 32), 1, 4096),
        OptionSpec("OwnBook", "check", str(defaults.get("OwnBook", False)).lower()),
        OptionSpec("BookFile", "string", defaults.get("BookFile", "") or "<empty>"),
        OptionSpec("EvalFile", "string", defaults.get("EvalFile", "") or "<empty>"),
        OptionSpec("Quiescence", "check", "true"),
        OptionSpec("SingularExtensions", "check", "false"),
        OptionSpec("EndgameTables", "check", "true"),
        OptionSpec("Move Overhead", "spin", defaults.get("Move Overhead", 30), 0, 10_000),
    ]
    return {spec.name.lower(): spec for spec in specs}


def tt_slots(megabytes: int) -> int:
    """The largest power of two of table slots that fits in ``megabytes`` MiB."""
    slots = max(1, megabytes * 2**20 // BYTES_PER_ENTRY)
    return 1 << (slots.bit_length() - 1)


def move_time(go: protocol.Go, white: bool, overhead_ms: int) -> Optional[float]:
    """Seconds for this move: ``movetime`` less the overhead, or from the clock
    ``left / movestogo (default 30) + ¾ · increment`` (at most half the time left);
    None when the GUI gave no time."""
    if go.movetime is not None:
        return max(0.005, (go.movetime - overhead_ms) / 1000.0)
    left, increment = go.clock(white)
    if left is None:
        return None
    budget = min(left / (go.movestogo or 30) + 0.75 * increment, left / 2) - overhead_ms
    return max(0.005, budget / 1000.0)


def format_score(score: int) -> str:
    mate = search.mate_in(score)
    return f"mate {mate}" if mate is not None else f"cp {score}"


class ClassicalEngine:
    """The UCI engine; ``write`` receives each output line (called from two threads, under a lock)."""

    def __init__(self, write: Callable[[str], None], *, defaults: Optional[Dict[str, Any]] = None):
        self._write, self._lock = write, threading.Lock()
        self.specs = option_specs(defaults or {})
        self.options = {spec.name: spec.parse(str(spec.default)) if spec.kind != "string" else
                        ("" if spec.default == "<empty>" else spec.default) for spec in self.specs.values()}
        self.position: Optional[protocol.Position] = protocol.Position.start(self.options["UCI_Variant"])
        self.player: Optional[player_lib.AlphaBetaPlayer] = None
        self._stop = threading.Event()
        self._searching = threading.Event()
        self._jobs: "queue.Queue" = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="alphabeta-search", daemon=True)
        self._worker.start()

    def send(self, line: str, *, error: bool = False) -> None:
        """Writes one line; ``error=True`` sends it as ``info string error: ...``."""
        with self._lock:
            self._write(protocol.info_string(f"error: {line}") if error else line)

    def error(self, message: str) -> None:
        self.send(message, error=True)

    # ------------------------------------------------------------------ commands (reader thread)

    def serve(self, lines) -> None:
        """Handles ``lines`` until ``quit`` (``handle`` answers False) or their end."""
        all(self.handle(line) for line in lines)
        self._stop.set()
        self._jobs.put(None)
        self._worker.join(timeout=5)

    def handle(self, line: str) -> bool:
        """One command; False after ``quit``."""
        command, args = protocol.split_command(line)
        try:
            if command == "quit":
                return False
            if command:
                handler = getattr(self, f"_cmd_{command}", None)
                if handler is None:
                    raise UciError(f"unknown command {command!r}")
                handler(args)
        except (UciError, ValueError) as e:
            self.error(" ".join(str(e).split()))
        except Exception as e:  # pylint: disable=broad-except  (a GUI's engine must not die of a command)
            self.error(f"{command}: {type(e).__name__}: {e}")
        return True

    def _cmd_uci(self, args) -> None:
        self.send(f"id name {ENGINE_NAME}")
        self.send("id author the azdb_jax authors")
        for spec in self.specs.values():
            self.send(spec.declaration())
        self.send("uciok")

    def _cmd_isready(self, args) -> None:
        if self._searching.is_set():
            self.send("readyok")
        else:
            self._jobs.put(("ready", None))

    def _cmd_debug(self, args) -> None:
        pass

    def _cmd_ucinewgame(self, args) -> None:
        self.position = protocol.Position.start(self.options["UCI_Variant"])
        self._jobs.put(("newgame", None))

    def _cmd_setoption(self, args) -> None:
        name, value = protocol.parse_setoption(args)
        spec = self.specs.get(name.lower())
        if spec is None:
            raise UciError(f"setoption: unknown option {name!r}; options: "
                           f"{', '.join(s.name for s in self.specs.values())}")
        parsed = spec.parse(value)
        if spec.kind == "string" and parsed == "<empty>":
            parsed = ""
        if spec.name == "UCI_Variant" and parsed != self.options["UCI_Variant"]:
            self.position = protocol.Position.start(parsed)
        self.options[spec.name] = parsed
        self._jobs.put(("configure", None))

    def _cmd_position(self, args) -> None:
        try:
            self.position = protocol.parse_position(args, self.options["UCI_Variant"], previous=self.position)
        except UciError:
            self.position = None  # never search a position the GUI did not mean
            raise

    def _cmd_go(self, args) -> None:
        go, warnings = protocol.parse_go(args)
        for warning in warnings:
            self.send(protocol.info_string(warning))
        self._stop.clear()
        self._searching.set()
        self._jobs.put(("go", (go, self.position, time.monotonic())))

    def _cmd_stop(self, args) -> None:
        self._stop.set()

    def _cmd_ponderhit(self, args) -> None:
        self._stop.set()

    def _cmd_d(self, args) -> None:
        board = None if self.position is None else self.position.board()
        self.send(protocol.info_string(f"position {board.fen() if board else '(none: the last position was bad)'}"))

    # ------------------------------------------------------------------ the worker

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            kind, payload = job
            try:
                if kind == "go":
                    self._go(*payload)
                elif kind in ("configure", "newgame"):
                    if kind == "configure":
                        self.player = None
                    elif self.player is not None:
                        self.player.new_game()
                elif kind == "ready":
                    self._ensure_player()
                    self.send("readyok")
            except Exception as e:  # pylint: disable=broad-except  (keep serving)
                self.error(f"{kind}: {' '.join(str(e).split())}")
                if kind == "go":
                    self._answer(None)
                elif kind == "ready":
                    self.send("readyok")

    def _ensure_player(self) -> player_lib.AlphaBetaPlayer:
        if self.player is None:
            options = search.SearchOptions(quiescence=self.options["Quiescence"],
                                           singular_extensions=self.options["SingularExtensions"],
                                           endgame_tables=self.options["EndgameTables"],
                                           tt_size=tt_slots(self.options["Hash"]))
            weights = (evaluation.EvalWeights.load(self.options["EvalFile"]) if self.options["EvalFile"]
                       else evaluation.DEFAULT_WEIGHTS)
            book = None
            if self.options["OwnBook"] and self.options["BookFile"] and self.options["UCI_Variant"] == "chess":
                from azdb_jax.classical.book import OpeningBook  # pylint: disable=g-import-not-at-top

                book = OpeningBook(self.options["BookFile"], choose="weighted")
            self.player = player_lib.AlphaBetaPlayer(search.Limits(depth=search.MAX_PLY // 2), options,
                                                     weights=weights, book=book)
            self.player.searcher(8 if self.options["UCI_Variant"] == "chess" else 5)  # builds the tables now
        return self.player

    def _answer(self, move: Optional[str]) -> None:
        self._searching.clear()
        self.send(f"bestmove {move or '(none)'}")

    def _go(self, go: protocol.Go, position: Optional[protocol.Position], received: float) -> None:
        if position is None:
            self.error("go: no valid position (the last position command was rejected)")
            return self._answer(None)
        player = self._ensure_player()
        board = position.board()
        if not any(True for _ in board.legal_moves):
            self.error(f"go: the game is over in {board.fen()}: no move to search")
            return self._answer(None)
        if position.variant != "chess" and board.is_game_over():
            board = protocol.searchable(board, position.variant)  # the env ended the game; the GUI plays on
        if player.book is not None:
            move = player.book.move(board)
            if move is not None:
                self.send(protocol.info_string(f"book move {move.uci()}"))
                return self._answer(move.uci())
        seconds = None if go.infinite else move_time(go, board.turn, self.options["Move Overhead"])
        if seconds is not None:
            seconds = max(0.005, seconds - (time.monotonic() - received))
        limits = search.Limits(depth=go.depth or search.MAX_PLY // 2, nodes=go.nodes, time=seconds)
        native = player_lib.position_of(board)

        def info(result: search.SearchResult) -> None:
            nps = int(result.nodes / result.seconds) if result.seconds > 0 else 0
            self.send(f"info depth {result.depth} nodes {result.nodes} nps {nps} time {int(result.seconds * 1000)} "
                      f"score {format_score(result.score)} pv {' '.join(native.uci(m) for m in result.pv)}")

        result = player.searcher(8 if position.variant == "chess" else 5).search(
            native, limits, stop=self._stop.is_set, on_iteration=info)
        if result.nodes > (result.nodes_by_depth[-1] if result.nodes_by_depth else 0):
            info(result)  # the unfinished iteration's nodes and time count too
        if go.infinite:
            self._stop.wait()  # UCI: answer an infinite search only after stop
        self._answer(native.uci(result.best_move))


def run() -> None:
    """Console-script entry point: speaks UCI on stdin/stdout until ``quit``.

    Flags (each the default of the UCI option): ``--variant=chess|gardner``,
    ``--hash=MB``, ``--book=FILE`` (turns OwnBook on), ``--weights=FILE``.
    """
    from absl import app, flags  # pylint: disable=g-import-not-at-top

    from azdb_jax import cli  # pylint: disable=g-import-not-at-top

    flags.DEFINE_enum("variant", "chess", protocol.VARIANTS, "The game (UCI_Variant).")
    flags.DEFINE_integer("hash", 32, "Transposition table MiB (Hash).", lower_bound=1)
    flags.DEFINE_string("book", None, "Polyglot opening book (BookFile; turns OwnBook on).")
    flags.DEFINE_string("weights", None, "Evaluation weights JSON (EvalFile).")

    def main(argv) -> None:
        if len(argv) > 1:
            raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
        values = flags.FLAGS
        defaults = {"UCI_Variant": values.variant, "Hash": values.hash, "BookFile": values.book or "",
                    "OwnBook": bool(values.book), "EvalFile": values.weights or ""}
        out = sys.stdout

        def write(line: str) -> None:
            out.write(line + "\n")
            out.flush()

        ClassicalEngine(write, defaults=defaults).serve(sys.stdin)

    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)


if __name__ == "__main__":
    run()
