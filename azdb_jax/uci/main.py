"""The UCI engine's command line: ``azdb-uci`` and ``python -m azdb_jax.uci``.

  azdb-uci                                    # the Gardner team shipped in the package
  azdb-uci --checkpoint=runs/demo_chess
  azdb-uci --checkpoint=runs/gardner_cpu      # Gardner chess: UCI_Variant gardner
  azdb-uci --checkpoint=runs/demo_chess@40 --rule=gap --hash=512 --threads=1

Every flag sets the default of the UCI option of the same meaning (a GUI can change it
with ``setoption``). The process speaks UCI on stdin/stdout; anything a library prints
goes to stderr, as do warnings (``--verbosity=0`` adds INFO logs). ``--log=FILE``
records the conversation. Compiled searches are kept in a persistent JAX cache
(``--jit_cache``, default ``~/.cache/azdb_jax/jit``), so the next start is quicker.

Without ``--checkpoint`` the engine plays the shipped Gardner team (``pretrained:gardner``,
``azdb_jax.pretrained``) when the installation has one. With a checkpoint the engine starts
loading at once, on its search thread (JAX, the
checkpoint, compiling and warming up the search); ``uci`` is answered meanwhile, and
``readyok`` once the load is done.
"""

import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from absl import app, flags

from azdb_jax import cli, team_files
from azdb_jax.cli import common_flags
from azdb_jax.uci import protocol


def default_jit_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "azdb_jax", "jit")


def default_checkpoint() -> str:
    """``pretrained:gardner`` (``team_files.UCI_TEAM``) when the package ships that team, else ""
    (no team loaded)."""
    return team_files.PREFIX + team_files.UCI_TEAM if team_files.UCI_TEAM in team_files.names() else ""


def checkpoint_variant(spec: str) -> Optional[str]:
    """The UCI_Variant of a checkpoint's game (``protocol.variant_of_game``) from its config,
    without loading it; None when that cannot be read or the game has no boards (loading
    then reports why)."""
    if not spec:
        return None
    try:
        path, _ = common_flags.split_checkpoint(spec)
        env = json.loads((path / "config.json").read_text())["env"]["name"]
    except (ValueError, OSError, KeyError, TypeError):
        return None
    return protocol.variant_of_game(env)


def load_searcher(options: Dict[str, Any]):
    """The team searcher of the engine's options (imports JAX and the game layer); its
    ``load_times`` say how long the import and the checkpoint took."""
    start = time.perf_counter()
    import jax  # pylint: disable=g-import-not-at-top

    cache = flags.FLAGS.jit_cache if "jit_cache" in flags.FLAGS else default_jit_cache()
    if cache and not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    from azdb_jax.evaluation import loading  # pylint: disable=g-import-not-at-top
    from azdb_jax.uci.searcher import TeamSearcher  # pylint: disable=g-import-not-at-top

    imported = time.perf_counter()
    path, step = common_flags.split_checkpoint(options["Checkpoint"])
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"Checkpoint {options['Checkpoint']!r}: {path} is not a run directory (no config.json)")
    team = loading.load_team(path, step=step)
    searcher = TeamSearcher(team, move=options["Move"], seed=options["Seed"], hash_mb=options["Hash"],
                            reuse=options["Reuse"])
    searcher.load_times = {"import": imported - start, "checkpoint": time.perf_counter() - imported}
    return searcher


class _Output:
    """Writes UCI lines to the real stdout (fd 1 is pointed at stderr, so that nothing a
    library prints can corrupt the protocol), and optionally to a log."""

    def __init__(self, log_path: str):
        self._out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        self._log = open(log_path, "a", buffering=1) if log_path else None  # pylint: disable=consider-using-with
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()
            if self._log:
                self._log.write(f"> {line}\n")

    def read(self, stream):
        for line in stream:
            if self._log:
                with self._lock:
                    self._log.write(f"< {line.rstrip()}\n")
            yield line


def main(argv: List[str]) -> None:
    if len(argv) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(argv[1:])} (flags are written --name=value)")
    from azdb_jax.uci import engine as engine_lib  # pylint: disable=g-import-not-at-top

    values = flags.FLAGS
    checkpoint = default_checkpoint() if values.checkpoint is None else values.checkpoint
    defaults = {"Checkpoint": checkpoint, "Rule": values.rule, "Player": values.player,
                "Lookup": values.lookup or "", "Move": values.move, "Hash": values.hash, "Reuse": values.reuse,
                "Move Overhead": values.move_overhead}
    if values.threads:
        defaults["Threads"] = values.threads
    output = _Output(values.log)
    engine = engine_lib.Engine(output.write, load_searcher, defaults=defaults, variant_of=checkpoint_variant,
                               log=lambda text: print(f"azdb-uci: {text}", file=sys.stderr, flush=True))
    if checkpoint:
        engine.preload()
    engine.serve(output.read(sys.stdin))
    sys.stderr.flush()
    os._exit(0)  # pylint: disable=protected-access  (do not wait for JAX's threads)


def define_flags() -> None:
    from azdb_jax.uci.engine import MOVE_CHOICES, RULE_CHOICES  # pylint: disable=g-import-not-at-top

    common_flags.define_checkpoint("Run directory of a chess or Gardner chess team (written by azdb-train), "
                                   "RUN[@STEP], or pretrained:NAME; default the shipped Gardner team "
                                   "(pretrained:gardner), '' for none.")
    flags.DEFINE_enum("rule", "visit", RULE_CHOICES, "Selection rule (Eq. 9), a fixed player, or the opening lookup.")
    flags.DEFINE_integer("player", 0, "The player of --rule=player.", lower_bound=0)
    flags.DEFINE_string("lookup", None, "Opening lookup file of --rule=lookup (azdb_jax/uci/lookup.py).")
    flags.DEFINE_enum("move", "visits", MOVE_CHOICES, "The chosen player's most-visited or LCB move.")
    flags.DEFINE_integer("hash", 256, "MB for the search trees.", lower_bound=16, upper_bound=65536)
    flags.DEFINE_bool("reuse", True, "Keep the subtree of the last search for the next move (PUCT teams).")
    flags.DEFINE_integer("threads", 0, "CPU cores to use (0: all available).", lower_bound=0)
    flags.DEFINE_integer("move_overhead", 100, "Milliseconds kept back per move.", lower_bound=0)
    flags.DEFINE_string("jit_cache", default_jit_cache(), "Persistent compilation cache ('' to turn off).")
    flags.DEFINE_string("log", None, "Append the UCI conversation to this file.")


def run() -> None:
    """Console-script entry point (``azdb-uci``)."""
    define_flags()
    app.run(cli.input_errors_exit(main), flags_parser=cli.parse_flags)


if __name__ == "__main__":
    run()
