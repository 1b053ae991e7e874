"""What the command-line entry points share: bad input ends a script with one line.

Heavy modules (pgx, the trainer) are imported inside the entry points' ``main``, after the
flags are parsed, so that a multi-host run can call ``jax.distributed.initialize`` before
anything touches the XLA backend.
"""

import functools
import pathlib
import sys
from typing import Callable, Sequence

from azdb_jax import checkpoint

# Bad input a user can fix: reported as one line (file, line and reason are in the message).
INPUT_ERRORS = (FileNotFoundError, ValueError, checkpoint.CheckpointError)


def input_errors_exit(main: Callable[[Sequence[str]], None]) -> Callable[[Sequence[str]], None]:
    """Wraps an absl ``main`` so that bad input (a missing or malformed data file, a bad
    flag value, a missing, corrupt or mismatched checkpoint) ends the script with its
    message and exit status 2 instead of a traceback. Other errors propagate."""

    @functools.wraps(main)
    def wrapped(argv: Sequence[str]) -> None:
        try:
            main(argv)
        except INPUT_ERRORS as e:
            print(f"{pathlib.Path(sys.argv[0]).name}: error: {e}", file=sys.stderr)
            sys.exit(2)

    return wrapped


__all__ = ["input_errors_exit", "INPUT_ERRORS"]
