"""No module outside ``azdb_jax/games/`` branches on a game's name (docs/contributing.md).

Game facts live in the game's record (``azdb_jax.games.game.Game``); code elsewhere reads
the record (``games.get(env).field``) instead of comparing names. This test parses every
module of ``azdb_jax/`` outside ``azdb_jax/games/``, and of ``experiments/`` and
``benchmarks/``, and fails on each comparison (``==``, ``!=``, ``is``, ``in`` / ``not in``
a literal tuple, list or set, a ``match`` case) of anything with a string literal that is
a registered game's id or its record's ``uci_variant``, naming the file and line.
"""

import ast
import pathlib
from typing import Iterable, List, Set

from azdb_jax import games

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHECKED = ("azdb_jax", "experiments", "benchmarks")
EXEMPT = ROOT / "azdb_jax" / "games"  # the records themselves


def game_names() -> Set[str]:
    """Every registered game's id and UCI variant name."""
    return set(games.IDS) | {game.uci_variant for game in games.REGISTRY if game.uci_variant is not None}


def _names_in(node: ast.AST, names: Set[str]) -> List[str]:
    """The game names a comparison operand is or (a literal tuple, list or set) holds."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) and node.value in names else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [found for element in node.elts for found in _names_in(element, names)]
    return []


def offenders(source: str, filename: str, names: Set[str]) -> List[str]:
    """``"file:line: name in code"`` for each comparison with a game name in ``source``."""
    found = []

    def report(node: ast.AST, name: str) -> None:
        code = (ast.get_source_segment(source, node) or "").splitlines()[0].strip()
        found.append(f"{filename}:{node.lineno}: {name!r} in `{code}`")

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    hits = [name for side in (left, right) if isinstance(side, ast.Constant)
                            for name in _names_in(side, names)]
                elif isinstance(op, (ast.In, ast.NotIn)):
                    hits = _names_in(left, names) + _names_in(right, names)
                else:
                    hits = []
                for name in hits:
                    report(node, name)
        elif isinstance(node, ast.match_case):
            for pattern in ast.walk(node.pattern):
                if isinstance(pattern, ast.MatchValue):
                    for name in _names_in(pattern.value, names):
                        report(pattern, name)
    return found


def checked_files() -> Iterable[pathlib.Path]:
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if EXEMPT not in path.parents:
                yield path


def test_the_registry_has_the_names_the_check_looks_for():
    names = game_names()
    assert {"chess", "gardner_chess", "gardner", "connect_four", "nim"} <= names
    assert len(list(checked_files())) > 100  # the package, the scripts and the benchmarks


def test_the_check_finds_comparisons_with_game_names():
    planted = (
        "if env.id == 'chess':\n    pass\n"
        "x = 1 if 'gardner' != variant else 2\n"
        "ok = env_id in ('gardner_chess', 'othello')\n"
        "bad = game not in ['nim']\n"
        "match game:\n    case 'connect_four':\n        pass\n"
        "fine = env.id == other and name == 'random' and {'chess': 1}.get(env.id)\n"
    )
    found = offenders(planted, "planted.py", game_names())
    assert sorted(int(line.split(":")[1]) for line in found) == [1, 3, 4, 4, 5, 7], found
    assert all(line.startswith("planted.py:") for line in found)


def test_no_module_outside_the_games_package_compares_with_a_game_name():
    names = game_names()
    found = [line for path in checked_files()
             for line in offenders(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), names)]
    assert not found, ("compare with the game's record (azdb_jax.games.get(env).<field>) instead of its name "
                       "(docs/contributing.md, 'A game'):\n" + "\n".join(found))
