"""The classical alpha-beta searcher as a UCI engine: ``azdb-alphabeta`` or ``python -m azdb_jax.classical.uci``.

Plays chess or Gardner's 5x5 minichess (``setoption name UCI_Variant value gardner``, the
name Fairy-Stockfish uses), so a GUI or a cutechess-style gauntlet can play it. The UCI
server core (``azdb_jax.uci.server``) speaks the protocol — ``uci``, ``isready``,
``ucinewgame``, ``setoption``, ``position``, ``go`` (``depth``, ``nodes``, ``movetime``,
``wtime``/``btime``/``winc``/``binc``/``movestogo``, ``infinite``), ``stop``, ``quit``,
``d`` — with the time management of ``azdb_jax.uci.timeman``; a ``position`` it cannot
play is answered with ``info string error: ...`` and the engine keeps serving (a ``go``
then answers ``bestmove (none)``). This module supplies the searcher: its options, the
player it prepares (tables, book, weights), and its search and info lines.

Options: ``UCI_Variant``, ``Hash`` (MiB of transposition table), ``OwnBook`` and
``BookFile`` (a polyglot book, chess), ``EvalFile`` (evaluation weights,
``EvalWeights.save``), ``Quiescence``, ``SingularExtensions``, ``EndgameTables`` and
``Move Overhead``. Every completed iteration prints ``info depth D nodes N nps X time T
score cp S|mate M pv ...``; the search runs on the server's worker thread, so ``stop``
and ``isready`` are answered while it runs.
"""

import sys
from typing import Any, Dict, List, Optional

import chess

from azdb_jax.classical import evaluation, player as player_lib, search
from azdb_jax.uci import protocol
from azdb_jax.uci.server import OptionSpec, SearchJob, UciServer, overhead_option, variant_option

ENGINE_NAME = "azdb_jax alphabeta"
BYTES_PER_ENTRY = 150  # a filled transposition-table slot in CPython (ttable docstring)


def option_specs(defaults: Dict[str, Any]) -> List[OptionSpec]:
    """The engine's options, their defaults from ``defaults`` (the command line)."""
    return [
        variant_option(defaults.get("UCI_Variant", "chess")),
        OptionSpec("Hash", "spin", defaults.get("Hash", 32), 1, 4096, help="MiB of transposition table"),
        OptionSpec("OwnBook", "check", bool(defaults.get("OwnBook", False)), help="play from BookFile (chess)"),
        OptionSpec("BookFile", "string", defaults.get("BookFile", ""), help="polyglot opening book"),
        OptionSpec("EvalFile", "string", defaults.get("EvalFile", ""), help="evaluation weights (JSON)"),
        OptionSpec("Quiescence", "check", True),
        OptionSpec("SingularExtensions", "check", False),
        OptionSpec("EndgameTables", "check", True),
        overhead_option(defaults.get("Move Overhead", 30)),
    ]


def tt_slots(megabytes: int) -> int:
    """The largest power of two of table slots that fits in ``megabytes`` MiB."""
    slots = max(1, megabytes * 2**20 // BYTES_PER_ENTRY)
    return 1 << (slots.bit_length() - 1)


class ClassicalEngine(UciServer):
    """The UCI engine; ``write`` receives each output line (called from two threads, under a lock)."""

    NAME = ENGINE_NAME
    PREPARE_OPTIONS = ("UCI_Variant", "Hash", "OwnBook", "BookFile", "EvalFile", "Quiescence", "SingularExtensions",
                       "EndgameTables")
    IGNORED_GO_LIMITS = ("mate",)
    QUIT_WAIT = 5.0  # commands piped in before quit are answered (a stopped search answers at once)

    def __init__(self, write, *, defaults: Optional[Dict[str, Any]] = None):
        self.player: Optional[player_lib.AlphaBetaPlayer] = None
        super().__init__(write, defaults=defaults)

    def option_specs(self, defaults: Dict[str, Any]) -> List[OptionSpec]:
        return option_specs(defaults)

    def prepare(self) -> Optional[str]:
        """The player of the options, its search tables built for the game's board."""
        self.player = None
        options = search.SearchOptions(quiescence=self.options["Quiescence"],
                                       singular_extensions=self.options["SingularExtensions"],
                                       endgame_tables=self.options["EndgameTables"],
                                       tt_size=tt_slots(self.options["Hash"]))
        weights = (evaluation.EvalWeights.load(self.options["EvalFile"]) if self.options["EvalFile"]
                   else evaluation.DEFAULT_WEIGHTS)
        book = None
        # Polyglot books key chess.Board positions.
        if self.options["OwnBook"] and self.options["BookFile"] and issubclass(self.game.board_type, chess.Board):
            from azdb_jax.classical.book import OpeningBook  # pylint: disable=g-import-not-at-top

            book = OpeningBook(self.options["BookFile"], choose="weighted")
        player = player_lib.AlphaBetaPlayer(search.Limits(depth=search.MAX_PLY // 2), options, weights=weights,
                                            book=book)
        player.searcher(self.game.board_size)  # builds the tables now
        self.player = player
        return None

    def new_game(self) -> None:
        self.player.new_game()

    def search(self, job: SearchJob) -> Optional[str]:
        board = job.board
        if board.is_game_over():
            board = protocol.searchable(board)  # the rules ended the game; the GUI plays on
        if self.player.book is not None:
            move = self.player.book.move(board)
            if move is not None:
                self.note(f"book move {move.uci()}")
                return move.uci()
        seconds = job.seconds_left()
        limits = search.Limits(depth=job.go.depth or search.MAX_PLY // 2, nodes=job.go.nodes,
                               time=None if seconds is None else max(0.005, seconds))
        native = player_lib.position_of(board)

        def info(result: search.SearchResult) -> None:
            mate = search.mate_in(result.score)
            self.send(protocol.format_info(depth=result.depth, nodes=result.nodes, seconds=result.seconds,
                                           cp=result.score, mate=mate, pv=[native.uci(m) for m in result.pv]))

        result = self.player.searcher(self.game.board_size).search(native, limits, stop=job.stop.is_set,
                                                                   on_iteration=info)
        if result.nodes > (result.nodes_by_depth[-1] if result.nodes_by_depth else 0):
            info(result)  # the unfinished iteration's nodes and time count too
        return native.uci(result.best_move)


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
