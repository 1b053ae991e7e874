"""The UCI engine of a trained team: ``UciServer`` (``azdb_jax.uci.server``) with the
team's options, loading and anytime search.

The server answers every command at once — ``isready`` and ``stop`` included while a
search runs — and hands loading and searching to its worker thread. Loading (importing
JAX, restoring the checkpoint, compiling the search's programs and running them once:
``TeamSearcher.warm_up``) is this engine's ``prepare``: it starts as soon as the engine
starts when it is given a checkpoint (``preload``), else at the first ``isready``;
``readyok`` follows once the engine can search without compiling anything, and the time
the load took is reported as an ``info string`` before it. An option that changes what
is compiled (``Checkpoint``, ``Hash``, ``Move``, ``Seed``) loads again at the next
``isready``; ``ucinewgame`` only forgets the last search's tree.

A search (``azdb_jax.uci.searcher``) grows its trees in chunks of about 50 ms
(``azdb_jax.uci.timeman``) until the move's deadline, the ``go nodes`` limit, or
``stop``; ``go infinite`` and ``go ponder`` search until ``stop``. It reports ``info
depth seldepth nodes nps hashfull time score pv`` at least once a second and once at the
end, then ``bestmove``.

The game is the checkpoint's: chess, or Gardner's 5x5 minichess (``UCI_Variant
gardner``, the name Fairy-Stockfish and variant GUIs use). The engine announces it as
the ``UCI_Variant`` option's default, and a GUI that asks for another game gets an error.
"""

import os
import time
from typing import Any, Callable, Dict, List, Optional

import chess

from azdb_jax.uci import protocol, timeman
from azdb_jax.uci.protocol import UciError
from azdb_jax.uci.server import OptionSpec, SearchJob, UciServer, overhead_option, variant_option

ENGINE_NAME = "azdb_jax"
# planning.SELECTION_RULES' names (spelt out: this module loads without JAX, so ``uci``
# answers at once; tests/test_uci_engine.py checks the two agree), a fixed player, the lookup.
RULE_CHOICES = ("visit", "value", "lcb", "gap", "player", "lookup")
MOVE_CHOICES = ("visits", "lcb")
INFO_SECONDS = 1.0  # an info line at least this often while searching
# Options whose change needs the checkpoint reloaded or the searches recompiled.
RELOAD_OPTIONS = ("Checkpoint", "Hash", "Move", "Seed")


def option_specs(defaults: Dict[str, Any]) -> List[OptionSpec]:
    cpus = available_cpus()
    return [
        OptionSpec("Checkpoint", "string", defaults.get("Checkpoint", ""),
                   help="run directory written by azdb-train, optionally @step"),
        variant_option(defaults.get("UCI_Variant", "chess"), help="the game: the checkpoint's"),
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
        overhead_option(defaults.get("Move Overhead", 100)),
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


class Engine(UciServer):
    """A UCI engine around a trained team.

    Args:
      write: called with each output line (no newline), from both threads under the
        server's lock.
      load_searcher: ``(options) -> searcher`` builds the team searcher from the options
        (``Checkpoint``, ``Hash``, ``Move``, ``Seed``, ``Reuse``); raises ``ValueError`` /
        ``FileNotFoundError`` for bad input. A searcher (``searcher.TeamSearcher``) has
        ``variant`` (the ``UCI_Variant`` of the game it plays), ``num_players``,
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

    NAME = ENGINE_NAME
    PREPARE_OPTIONS = RELOAD_OPTIONS
    IGNORED_GO_LIMITS = ("depth", "mate")

    def __init__(self, write: Callable[[str], None], load_searcher: Callable[[Dict[str, Any]], Any], *,
                 defaults: Optional[Dict[str, Any]] = None, log: Optional[Callable[[str], None]] = None,
                 variant_of: Optional[Callable[[str], Optional[str]]] = None):
        self._load_searcher = load_searcher
        self._variant_of = variant_of or (lambda checkpoint: None)
        defaults = dict(defaults or {})
        self._variant_asked = "UCI_Variant" in defaults  # by the command line (later: the GUI)
        defaults.setdefault("UCI_Variant", self._variant_of(defaults.get("Checkpoint") or "") or "chess")
        self.searcher = None
        self.speed = timeman.Speed()
        self.reading = timeman.RecentMax()  # how long reading the trees takes (warm-up's, recent searches'), kept back
        self.lateness = timeman.Lateness()  # how much longer than planned recent chunks took, kept back too
        self.lookup = None
        super().__init__(write, defaults=defaults, log=log)

    def option_specs(self, defaults: Dict[str, Any]) -> List[OptionSpec]:
        return option_specs(defaults)

    # ---------------------------------------------------------------- options (the reader)

    def _set_variant(self, variant: str) -> None:
        """The game of the checkpoint, where nothing asked for another."""
        if variant != self.variant:
            self.options["UCI_Variant"] = variant
            self.position = protocol.Position.start(variant)
            self.lookup = None
            self.note(f"UCI_Variant {variant}: the game of the checkpoint")

    def set_option(self, name: str, value: Any) -> None:
        if name == "UCI_Variant":
            plays = self._variant_of(self.options["Checkpoint"])
            if plays is not None and value != plays:
                raise UciError(f"setoption UCI_Variant {value}: the checkpoint {self.options['Checkpoint']!r} "
                               f"plays {plays}")
            self._variant_asked = True
        elif name == "Rule" and value == "lookup" and not self._chess_openings():
            raise UciError(f"setoption Rule lookup: the opening lookup is built on chess openings; "
                           f"this engine plays {self.variant}")
        super().set_option(name, value)
        if name == "Checkpoint":
            self._variant_asked = False
            plays = self._variant_of(value)
            if plays is not None:
                self._set_variant(plays)
        elif name == "Reuse":
            self.on_worker(lambda: self._set_reuse(value))  # the worker owns the searcher
        elif name == "Threads" and self.searcher is not None:
            note = set_threads(value)
            if note:
                self.note(note)
        elif name == "Lookup":
            self.lookup = None  # read again at the next search

    def _set_reuse(self, reuse: bool) -> None:
        if self.searcher is not None:
            self.searcher.set_reuse(reuse)

    def _chess_openings(self) -> bool:
        """Whether the game's positions are chess boards, which the opening lookup's table keys."""
        return issubclass(self.game.board_type, chess.Board)

    # ---------------------------------------------------------------- loading (the worker)

    def new_game(self) -> None:
        self.searcher.forget()

    def prepare(self) -> Optional[str]:
        self.searcher = None
        if not self.options["Checkpoint"]:
            raise UciError("no checkpoint: setoption name Checkpoint value <run directory>[@step]")
        note = set_threads(self.options["Threads"])
        if note:
            self.note(note)
        start = time.perf_counter()
        searcher = self._load_searcher(dict(self.options))
        plays = getattr(searcher, "variant", "chess")
        if plays != self.variant:
            if self._variant_asked:
                raise ValueError(f"Checkpoint {self.options['Checkpoint']!r} plays {plays}, "
                                 f"UCI_Variant is {self.variant}")
            self._set_variant(plays)  # nothing told the game before; the checkpoint does
        steps = dict(getattr(searcher, "load_times", {}))
        steps.update(searcher.warm_up())
        started = time.perf_counter()
        self._warm_positions()
        steps["positions"] = time.perf_counter() - started
        self.searcher = searcher
        self.speed = timeman.Speed(rate=getattr(searcher, "warm_rate", timeman.Speed().rate))
        self.reading = timeman.RecentMax()
        self.reading.add(getattr(searcher, "warm_read_seconds", 0.0))
        self.lateness = timeman.Lateness()
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in steps.items())
        return (f"loaded {self.options['Checkpoint']} in {time.perf_counter() - start:.1f} s ({parts}): "
                f"{searcher.num_players} players, trees of {searcher.capacity} nodes each")

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
            searched = protocol.searchable(board)
            list(searched.legal_moves), board.is_game_over(), board.turn  # pylint: disable=expression-not-assigned

    # ---------------------------------------------------------------- searching (the worker)

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
            if not self._chess_openings():
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

    def search(self, job: SearchJob) -> Optional[str]:
        try:
            choice = self._choice(job.position)
        except (ValueError, FileNotFoundError) as e:
            self.error(str(e))
            choice = dict(rule=self.options["LookupFallback"])
        go, deadline = job.go, job.deadline
        n = self.searcher.num_players
        searcher = self.searcher
        queued = time.monotonic()
        # A fresh board of the current position: still playable when nobody claims the draw.
        searcher.start(protocol.searchable(job.board), (job.position.start_fen, job.position.moves))
        nodes_at_start = searcher.nodes()
        begun = time.monotonic()
        chunks, longest = 0, 0.0
        planned = timeman.planned_simulations(self.speed.rate, None if deadline is None else deadline - begun,
                                              nodes=None if go.nodes is None else -(-go.nodes // n),
                                              capacity=searcher.capacity)
        last_info, full = begun, False
        while not job.stop.is_set() and not job.forced:
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
        if full and (go.infinite or go.ponder):
            self.note(f"the search trees are full ({searcher.capacity} nodes each; "
                      "setoption name Hash for more); waiting for stop")
        searched_until = time.monotonic()
        result = searcher.result(**choice)
        self.reading.add(time.monotonic() - searched_until)
        self._info(job, result, nodes_at_start, begun)
        if self.debug:  # where the move's time went
            budget = job.budget
            self.note(
                f"timing: waited {1000 * (queued - job.received):.0f} ms, start {1000 * (begun - queued):.0f} ms, "
                f"{chunks} chunks {1000 * (searched_until - begun):.0f} ms (longest {1000 * longest:.0f} ms), "
                f"result {1000 * (time.monotonic() - searched_until):.0f} ms; budget "
                + ("none" if budget is None else f"{1000 * budget:.0f} ms")
                + f"; measured lag up to {1000 * self.lag.value:.0f} ms"
                + f"; kept back: reading {1000 * self.reading.value:.0f} ms, lateness {1000 * self.lateness.value:.0f} ms")
        return result.move

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


__all__ = ["Engine", "OptionSpec", "option_specs", "set_threads", "RULE_CHOICES", "ENGINE_NAME"]
