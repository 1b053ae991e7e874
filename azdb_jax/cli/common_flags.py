"""The flags the command-line scripts share: one name, type, check and meaning of "unset" each.

The scripts of ``experiments/`` and ``benchmarks/`` and the entry points of the package
(``azdb-train``, ``azdb-eval``, ``azdb-uci``) define these flags with the functions below
instead of a ``flags.DEFINE_*`` line of their own, so that a flag means the same on
every command line:

- ``--simulations``: search simulations per move, >= 1. Unset (None) is the search
  budget of the run the script loads (its evaluation budget, or its self-play budget
  where the script replays self-play). A benchmark, which loads no run, gives a fixed
  default instead.
- ``--seed``: the seed of the script's randomness (starts, searches, games), default 0.
- ``--games``: a number of games, >= 1 unless the script says what fewer mean. Unset
  (None, where a script allows it) means no new games: the script reads the ones the
  run recorded.
- ``--workdir``: a run directory (written by ``azdb-train``) to read, or to write where the
  script trains.
- ``--checkpoint``: a run directory and optionally a checkpoint step, ``RUN[@STEP]``
  (default the latest checkpoint); a step that is not an iteration number is refused
  when the flags are parsed (``split_checkpoint``). ``RUN`` may be ``pretrained:NAME``,
  a team shipped in the package (``azdb_jax.pretrained``).
- ``--out``: where the script writes its report. Unset (None) is the script's own place
  for it (under the run directory, or a fixed folder) or, where the script has none, no
  file: its help says which.
- ``--game``: a game by its id in the game registry (``azdb_jax.games.IDS``: ``chess``,
  ``gardner_chess``, ``connect_four``, ...), one of the games the script plays. Every
  script spells a game the same way; a script may add a choice of its own that its help
  explains (``all``: each game in turn).
- ``--max_plies``: plies per game at most, >= 1 (or the script's bound). Unset (None) is
  the game's own longest game (``azdb_jax.games.max_plies``). A script with a fixed
  default keeps it, and its help says what happens to a game at the cap.
- ``--steps``: checkpoint steps, comma-separated iteration numbers (``--steps=10,20,40``),
  each checked when the flags are parsed; the value is a list of ints. Unset or empty
  (``[]``) is every checkpoint the run kept.

Each script passes its own help text (what the flag does there) and, where it has
one, its own default or bound; type, check and the meaning of "unset" stay the same.
Each flag is filed under the module that calls ``define_*`` (the script), so that the
script's ``--help`` lists it with its own flags. Nothing here imports JAX: the scripts
define their flags before they join a multi-host run (``azdb_jax.distributed``).
"""

import pathlib
import sys
from typing import List, Optional, Sequence, Tuple, Union

from absl import flags

from azdb_jax import team_files


def _step_problem(step: str) -> Optional[str]:
    """What is wrong with checkpoint step ``step`` (text), or None: a step is an iteration number."""
    return None if step.isdigit() else f"must be an iteration number, got {step!r}"


def _checkpoint_problem(spec: str) -> Optional[str]:
    """What is wrong with ``RUN[@STEP]`` ``spec``, or None."""
    path, _, step = str(spec).partition("@")
    if not path:
        return "no run directory before '@' (RUN[@STEP])"
    if team_files.is_pretrained(path) and path[len(team_files.PREFIX):] not in team_files.names():
        return f"no pretrained team {path[len(team_files.PREFIX):]!r} (shipped: {', '.join(team_files.names()) or 'none'})"
    problem = _step_problem(step) if step else None
    return f"the checkpoint step after '@' {problem}" if problem else None


def split_checkpoint(spec: str) -> Tuple[pathlib.Path, Optional[int]]:
    """``RUN[@STEP]`` as ``(run directory, step)``; the step is None without ``@STEP``.
    ``RUN`` may be ``pretrained:NAME``, a team shipped in the package (``azdb_jax.team_files``):
    its folder, its files checked.

    Raises:
      ValueError: no run directory before ``@``, a step that is not an iteration number, or
        no shipped team of that name.
      team_files.DamagedTeamError: a shipped team's file missing or damaged (named).
    """
    problem = _checkpoint_problem(spec)
    if problem:
        raise ValueError(f"{str(spec)!r}: {problem}")
    path, _, step = str(spec).partition("@")
    return team_files.resolve(path), int(step) if step else None


def _calling_module() -> Optional[str]:
    """The module that called a ``define_*`` function, named as absl names it (the path of a script)."""
    name = sys._getframe(2).f_globals.get("__name__")  # pylint: disable=protected-access
    return sys.argv[0] if name == "__main__" else name


def define_simulations(help_text: str = "Search simulations per move (default: the run's evaluation budget).", *,
                       default: Optional[int] = None,
                       flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--simulations``: search simulations per move, >= 1; unset (None) is the loaded run's budget.

    Args:
      help_text: what the simulations are in the script, and what unset means there.
      default: a fixed budget for scripts that load no run (benchmarks); None otherwise.
      flag_values: where to define the flag (tests use their own ``flags.FlagValues``).
    """
    return flags.DEFINE_integer("simulations", default, help_text, lower_bound=1, flag_values=flag_values,
                                module_name=_calling_module())


def define_seed(help_text: str = "Random seed.", *, default: int = 0,
                flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--seed``: the seed of the script's randomness (what it seeds goes in ``help_text``)."""
    return flags.DEFINE_integer("seed", default, help_text, flag_values=flag_values, module_name=_calling_module())


def define_games(help_text: str, *, default: Optional[int] = None, lower_bound: int = 1,
                 flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--games``: a number of games, at least ``lower_bound``.

    Args:
      help_text: which games, and what unset means when ``default`` is None (no new games:
        the ones the run recorded).
      default: the script's number of games.
      lower_bound: the fewest allowed: 1 unless the script plays pairs (2) or says what
        0 means (e.g. no games of that kind).
      flag_values: where to define the flag.
    """
    return flags.DEFINE_integer("games", default, help_text, lower_bound=lower_bound, flag_values=flag_values,
                                module_name=_calling_module())


def define_workdir(help_text: str = "Run directory (written by azdb-train / experiments/train.py).", *,
                   default: Optional[str] = None, required: bool = False,
                   flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--workdir``: a run directory to read (or to write, where the script trains)."""
    return flags.DEFINE_string("workdir", default, help_text, required=required, flag_values=flag_values,
                               module_name=_calling_module())


def _check_checkpoint(value: Optional[str]) -> bool:
    problem = _checkpoint_problem(value) if value else None
    if problem:
        raise flags.ValidationError(problem)
    return True


def define_checkpoint(help_text: str = "Run directory[@step] (default step: the latest checkpoint).", *,
                      required: bool = False, flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--checkpoint``: ``RUN[@STEP]``, checked when the flags are parsed (``split_checkpoint``)."""
    holder = flags.DEFINE_string("checkpoint", None, help_text, required=required, flag_values=flag_values,
                                 module_name=_calling_module())
    flags.register_validator("checkpoint", _check_checkpoint, flag_values=flag_values)
    return holder


def define_out(help_text: str, *, default: Optional[str] = None, required: bool = False,
               flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--out``: where the report goes; unset (None) is the script's own place or no file.

    Args:
      help_text: what is written there (a file, a folder, a report prefix) and what unset
        means in the script.
      default: a fixed place, for scripts whose help names it.
      required: the script has no place of its own and always writes.
      flag_values: where to define the flag.
    """
    return flags.DEFINE_string("out", default, help_text, required=required, flag_values=flag_values,
                               module_name=_calling_module())


def define_game(help_text: str, *, default: str, choices: Sequence[str],
                flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--game``: one of ``choices``, games named by their registry ids; others are refused when parsed.

    Args:
      help_text: which game the script plays, and what a choice of its own means.
      default: the script's game.
      choices: the games the script plays, by registry id (``azdb_jax.games.IDS``, or the
        part of it the script handles), and any choice of the script's own (``all``).
        Passed in by the script: this module imports no game (the registry imports JAX).
      flag_values: where to define the flag.
    """
    return flags.DEFINE_enum("game", default, list(choices), help_text, flag_values=flag_values,
                             module_name=_calling_module())


def define_max_plies(help_text: str, *, default: Optional[int] = None, lower_bound: int = 1,
                     flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--max_plies``: plies per game at most, at least ``lower_bound``; unset (None) is the game's longest game.

    Args:
      help_text: which games stop there and what happens to a game at the cap (a draw,
        adjudication, unfinished), and what unset means in the script.
      default: the script's fixed cap; None where the script reads the game's own
        (``azdb_jax.games.max_plies(env)``).
      lower_bound: the fewest plies allowed.
      flag_values: where to define the flag.
    """
    return flags.DEFINE_integer("max_plies", default, help_text, lower_bound=lower_bound, flag_values=flag_values,
                                module_name=_calling_module())


class _StepsParser(flags.ListParser):
    """Comma-separated checkpoint steps as a list of ints; a step that is not an iteration number is refused."""

    def __init__(self):
        super().__init__()
        self.syntactic_help = "a comma-separated list of iteration numbers"

    def parse(self, argument: Union[str, Sequence[Union[str, int]]]) -> List[int]:
        steps = []
        for step in super().parse(argument if isinstance(argument, str) else list(argument)):
            text = str(step).strip()
            problem = _step_problem(text)
            if problem:
                raise ValueError(f"each checkpoint step {problem} (comma-separated, e.g. 10,20,40)")
            steps.append(int(text))
        return steps

    def flag_type(self) -> str:
        return "comma-separated list of checkpoint steps"


def define_steps(help_text: str = "Checkpoint steps, comma-separated (default: every checkpoint kept).", *,
                 flag_values: flags.FlagValues = flags.FLAGS) -> flags.FlagHolder:
    """``--steps``: checkpoint steps as a list of ints, each checked when parsed; unset or empty is every checkpoint.

    The steps keep the order given (a script that wants them sorted sorts them).
    """
    return flags.DEFINE(_StepsParser(), "steps", [], help_text, flag_values=flag_values,
                        serializer=flags.CsvListSerializer(","), module_name=_calling_module())


__all__ = ["split_checkpoint", "define_simulations", "define_seed", "define_games", "define_workdir",
           "define_checkpoint", "define_out", "define_game", "define_max_plies", "define_steps"]
