"""What the command-line entry points share: quiet logs, and bad input ends a script with one line.

Heavy modules (pgx, the trainer) are imported inside the entry points' ``main``, after the
flags are parsed, so that a multi-host run can call ``jax.distributed.initialize`` before
anything touches the XLA backend.

Every entry point behaves like a tool:

- library logging (orbax, JAX) is quiet: warnings and errors only, unless ``--verbosity``
  is given (``--verbosity=0`` shows INFO, ``--verbosity=1`` DEBUG);
- a bad flag, a bad config override, a missing, corrupt or mismatched checkpoint or a
  malformed data file ends the script with one line ``<script>: error: <what and where>``
  and exit status 2; ``--verbosity=1`` adds the traceback.
"""

import functools
import pathlib
import sys
import traceback
from typing import Callable, List, Sequence

from absl import app, flags, logging

# Bad input a user can fix: reported as one line (file, line and reason are in the message).
# ``checkpoint.CheckpointError`` (missing, corrupt or mismatched checkpoint) is a ValueError;
# it is not imported here so that this module stays free of JAX (see above).
INPUT_ERRORS = (FileNotFoundError, ValueError, app.UsageError)

EXIT_INPUT_ERROR = 2


def _program() -> str:
    return pathlib.Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "azdb"


def _verbosity_given() -> bool:
    return "verbosity" in flags.FLAGS and flags.FLAGS["verbosity"].present


def show_tracebacks() -> bool:
    """True when the user asked for debug output (``--verbosity`` >= 1)."""
    return _verbosity_given() and flags.FLAGS.verbosity >= 1


def quiet_logging() -> None:
    """Library logs at WARNING and above unless ``--verbosity`` was given on the command line
    (orbax and JAX log every checkpoint and backend step at INFO)."""
    if not _verbosity_given():
        logging.set_verbosity(logging.WARNING)


def parse_flags(argv: Sequence[str]) -> List[str]:
    """absl flags parser for ``app.run(..., flags_parser=parse_flags)``: a bad flag ends the
    script with one line naming it (absl's own parser prints a FATAL banner and usage)."""
    try:
        return flags.FLAGS(list(argv))
    except flags.Error as e:
        print(f"{_program()}: error: {e}", file=sys.stderr)
        sys.exit(EXIT_INPUT_ERROR)


def input_errors_exit(main: Callable[[Sequence[str]], None]) -> Callable[[Sequence[str]], None]:
    """Wraps an absl ``main`` so that bad input (a missing or malformed data file, a bad
    flag value, a missing, corrupt or mismatched checkpoint) ends the script with its
    message and exit status 2 instead of a traceback (kept with ``--verbosity=1``).
    Library logging is made quiet first (``quiet_logging``). Other errors propagate."""

    @functools.wraps(main)
    def wrapped(argv: Sequence[str]) -> None:
        quiet_logging()
        try:
            main(argv)
        except INPUT_ERRORS as e:
            if show_tracebacks():
                traceback.print_exc()
            message = " ".join(str(e).split()) or type(e).__name__  # one line, whatever the message
            print(f"{_program()}: error: {message}", file=sys.stderr)
            sys.exit(EXIT_INPUT_ERROR)

    return wrapped


__all__ = ["input_errors_exit", "parse_flags", "quiet_logging", "show_tracebacks", "INPUT_ERRORS",
           "EXIT_INPUT_ERROR"]
