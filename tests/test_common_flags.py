"""azdb_jax/cli/common_flags.py: the flags the scripts share, parsed, unset and refused.

- each flag parses its value, and unset is the one meaning its module docstring gives
  (None for ``--simulations``, ``--games``, ``--workdir``, ``--checkpoint``, ``--out``,
  ``--max_plies``; 0 for ``--seed``; every checkpoint, ``[]``, for ``--steps``), or the
  script's own default;
- a bad value (``--simulations=0``, a checkpoint step that is not an iteration number, a
  game that is not one of the script's, ``--max_plies`` below its bound, a missing
  required flag) is refused when the flags are parsed, with the flag's name; a script
  ends with that one line and exit status 2;
- no script defines one of these flags on its own, and no script edits ``sys.path``
  (the package is installed into the environment the scripts run with);
- the module imports no JAX (the scripts define their flags before a multi-host run
  starts JAX).
"""

import ast
import pathlib
import subprocess
import sys

import pytest
from absl import flags

from azdb_jax.cli import common_flags

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = ("simulations", "seed", "games", "workdir", "checkpoint", "out", "game", "max_plies", "steps")
GAME_IDS = ("chess", "gardner_chess", "connect_four")  # registry ids (azdb_jax.games.IDS)
SCRIPT_FOLDERS = ("experiments", "benchmarks")


def _parse(define, *args, **kwargs):
    """The value of the flag ``define`` defines on a fresh FlagValues, parsed from ``args``."""
    values = flags.FlagValues()
    holder = define(*args, flag_values=values, **kwargs)
    return holder, values


def test_unset_is_none_and_given_values_parse():
    for define in (common_flags.define_simulations, common_flags.define_workdir, common_flags.define_checkpoint):
        holder, values = _parse(define)
        values(["prog"])
        assert holder.value is None
    for define in (common_flags.define_games, common_flags.define_out):
        holder, values = _parse(define, "help")
        values(["prog"])
        assert holder.value is None
    holder, values = _parse(common_flags.define_seed)
    values(["prog"])
    assert holder.value == 0
    holder, values = _parse(common_flags.define_max_plies, "help")
    values(["prog"])
    assert holder.value is None  # the game's own longest game
    holder, values = _parse(common_flags.define_steps)
    values(["prog"])
    assert holder.value == []  # every checkpoint kept
    values(["prog", "--steps="])
    assert holder.value == []

    holder, values = _parse(common_flags.define_simulations)
    values(["prog", "--simulations=400"])
    assert holder.value == 400
    holder, values = _parse(common_flags.define_checkpoint)
    values(["prog", "--checkpoint=runs/demo@40"])
    assert holder.value == "runs/demo@40"
    holder, values = _parse(common_flags.define_seed, "Seed.", default=123)
    values(["prog", "--seed=-3"])
    assert holder.value == -3
    holder, values = _parse(common_flags.define_max_plies, "help")
    values(["prog", "--max_plies=1"])
    assert holder.value == 1
    holder, values = _parse(common_flags.define_game, "Game.", default="chess", choices=GAME_IDS)
    values(["prog", "--game=gardner_chess"])
    assert holder.value == "gardner_chess"


def test_steps_are_iteration_numbers_in_the_order_given():
    holder, values = _parse(common_flags.define_steps)
    values(["prog", "--steps=40, 0,10"])
    assert holder.value == [40, 0, 10] and {type(step) for step in holder.value} == {int}
    assert values["steps"].serialize() == "--steps=40,0,10"


def test_game_is_one_of_the_scripts_registry_ids_or_its_own_choice():
    holder, values = _parse(common_flags.define_game, "Recipe (all: each in turn).", default="all",
                            choices=list(GAME_IDS) + ["all"])
    values(["prog"])
    assert holder.value == "all"
    values(["prog", "--game=connect_four"])
    assert holder.value == "connect_four"


def test_a_flag_is_filed_under_the_module_that_defines_it():
    # absl lists a script's own flags in its --help: the shared ones must be among them.
    values = flags.FlagValues()
    common_flags.define_simulations(flag_values=values)
    common_flags.define_out("Report.", flag_values=values)
    assert [flag.name for flag in values.flags_by_module_dict()[__name__]] == ["simulations", "out"]


def test_a_script_gives_its_own_default_and_bound():
    holder, values = _parse(common_flags.define_simulations, "Simulations per timed call.", default=300)
    values(["prog"])
    assert holder.value == 300 and values["simulations"].help == "Simulations per timed call."
    holder, values = _parse(common_flags.define_games, "Games (0: none).", default=32, lower_bound=0)
    values(["prog", "--games=0"])
    assert holder.value == 0
    holder, values = _parse(common_flags.define_out, "Output folder.", default="eval/uci_match")
    values(["prog"])
    assert holder.value == "eval/uci_match"
    holder, values = _parse(common_flags.define_workdir, default="runs/demo")
    values(["prog", "--workdir=runs/other"])
    assert holder.value == "runs/other"
    holder, values = _parse(common_flags.define_max_plies, "Engine games stop here (a draw).", default=200,
                            lower_bound=10)
    values(["prog"])
    assert holder.value == 200
    values(["prog", "--max_plies=10"])
    assert holder.value == 10


@pytest.mark.parametrize("define, args, kwargs, words", [
    (common_flags.define_simulations, (), {}, ["--simulations=0", "positive integer"]),
    (common_flags.define_simulations, (), {}, ["--simulations=many", "invalid literal"]),
    (common_flags.define_games, ("help",), {"default": 16, "lower_bound": 2}, ["--games=1", ">= 2"]),
    (common_flags.define_checkpoint, (), {}, ["--checkpoint=runs/demo@last", "iteration number", "'last'"]),
    (common_flags.define_checkpoint, (), {}, ["--checkpoint=@40", "no run directory"]),
    (common_flags.define_max_plies, ("help",), {}, ["--max_plies=0", "positive integer"]),
    (common_flags.define_max_plies, ("help",), {"default": 200, "lower_bound": 10}, ["--max_plies=9", ">= 10"]),
    (common_flags.define_steps, (), {}, ["--steps=10,-1", "iteration number", "'-1'"]),
    (common_flags.define_steps, (), {}, ["--steps=10,last", "iteration number", "'last'"]),
    (common_flags.define_steps, (), {}, ["--steps=1.5", "iteration number", "'1.5'"]),
    # One spelling of a game: its registry id, not a short name.
    (common_flags.define_game, ("Game.",), {"default": "chess", "choices": GAME_IDS},
     ["--game=gardner", "one of", "gardner_chess"]),
])
def test_bad_values_are_refused_with_the_flag_and_the_reason(define, args, kwargs, words):
    _, values = _parse(define, *args, **kwargs)
    with pytest.raises(flags.IllegalFlagValueError) as error:
        values(["prog", words[0]])
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize("define, name", [(common_flags.define_out, "out"),
                                          (common_flags.define_workdir, "workdir"),
                                          (common_flags.define_checkpoint, "checkpoint")])
def test_required_flags_must_be_given(define, name):
    args = ("help",) if define is common_flags.define_out else ()
    _, values = _parse(define, *args, required=True)
    with pytest.raises(flags.IllegalFlagValueError, match=f"--{name} must have a value"):
        values(["prog"])


def test_split_checkpoint():
    assert common_flags.split_checkpoint("runs/demo") == (pathlib.Path("runs/demo"), None)
    assert common_flags.split_checkpoint("runs/demo@0") == (pathlib.Path("runs/demo"), 0)
    assert common_flags.split_checkpoint(pathlib.Path("runs") / "demo") == (pathlib.Path("runs/demo"), None)
    with pytest.raises(ValueError, match="iteration number, got '-1'"):
        common_flags.split_checkpoint("runs/demo@-1")
    with pytest.raises(ValueError, match="no run directory"):
        common_flags.split_checkpoint("")


def test_the_module_imports_no_jax():
    code = "import sys; import azdb_jax.cli.common_flags; print('jax' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr[-2000:]


@pytest.mark.parametrize("command, words", [
    # azdb-eval: --games unset reads the run's last evaluation; 0 no longer means that.
    (["-m", "azdb_jax.cli.eval", "--workdir=nowhere", "--games=0"], ["--games=0", "positive integer"]),
    # A game's old short name: every script spells a game by its registry id.
    (["benchmarks/classical_profile.py", "--game=gardner"], ["--game=gardner", "gardner_chess"]),
    (["experiments/gardner_curve.py", "--steps=10,last"], ["--steps=10,last", "iteration number"]),
])
def test_a_script_refuses_a_bad_value_in_one_line(command, words):
    result = subprocess.run([sys.executable] + command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and all(word in lines[0] for word in words), result.stderr[-2000:]


def _scripts():
    return sorted(path for folder in SCRIPT_FOLDERS for path in (REPO / folder).glob("*.py"))


def test_no_script_defines_a_shared_flag_of_its_own():
    own = []
    for path in _scripts() + sorted((REPO / "azdb_jax").rglob("*.py")):
        if path.name == "common_flags.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("DEFINE_") and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value in SHARED):
                own.append(f"{path.relative_to(REPO)}:{node.lineno} --{node.args[0].value}")
    assert not own, f"define these with azdb_jax.cli.common_flags: {own}"



def test_no_script_edits_sys_path():
    editing = [str(path.relative_to(REPO)) for path in _scripts() if "sys.path" in path.read_text()]
    assert not editing, f"the scripts run with the environment's python, the package installed: {editing}"
