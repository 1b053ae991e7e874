"""The package's import graph: no circle, and no import from a lower layer to a higher one.

The layers are the table in docs/contributing.md ("Import layers"), read from there.
The graph comes from the source (``ast``), imports inside functions included; importing
``a.b.c`` also counts as importing the packages ``a.b`` that hold it (their
``__init__`` runs first), except from inside those packages.
"""

import ast
import pathlib
import re
from typing import Dict, List, Set

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = "azdb_jax"


def modules() -> Dict[str, pathlib.Path]:
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: Dict[str, pathlib.Path]) -> str:
    while name not in known:
        name = name.rpartition(".")[0]
    return name


def _imported(module: str, path: pathlib.Path, known: Dict[str, pathlib.Path]) -> Set[str]:
    """The package's modules ``module`` imports (anywhere in its source)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets |= {_resolve(a.name, known) for a in node.names if a.name.split(".")[0] == PACKAGE}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            if base.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:  # `from a import b` imports the module a.b when there is one
                full = f"{base}.{alias.name}"
                targets.add(full if full in known else _resolve(base, known))
    return targets


def import_graph() -> Dict[str, Set[str]]:
    known = modules()
    graph = {}
    for module, path in known.items():
        edges = set()
        for target in _imported(module, path, known):
            parts = target.split(".")
            for k in range(2, len(parts) + 1):  # the target and the packages holding it
                holder = ".".join(parts[:k])
                if not (module == holder or module.startswith(holder + ".")):
                    edges.add(holder)
        graph[module] = edges - {module}
    return graph


def layers() -> List[List[str]]:
    """The module prefixes of each layer, lowest first, from docs/contributing.md."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    section = text.split("## Import layers", 1)[1]
    rows = re.findall(r"^\| (\d+) [^|]+\| ([^|]+) \|", section, flags=re.M)
    assert rows and [int(n) for n, _ in rows] == list(range(1, len(rows) + 1)), "layer table not found"
    return [re.findall(r"`([\w.]+)`", cell) for _, cell in rows]


def layer_of(module: str, table: List[List[str]]) -> int:
    """The layer of the longest prefix that names ``module`` or a package holding it."""
    best, length = -1, -1
    for index, prefixes in enumerate(table):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_graph_sees_function_level_and_package_imports():
    graph = import_graph()
    assert "azdb_jax.games" in graph["azdb_jax.features"]
    assert "azdb_jax.envs.gardner_board" in graph["azdb_jax.data._common"]  # inside a function
    assert "azdb_jax.envs" in graph["azdb_jax.games.chess"]  # the package holding envs.chess
    assert "azdb_jax.games" not in graph["azdb_jax.games.chess"]  # its own package is not an import


def test_cycle_finder_on_a_known_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_circle():
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_module_has_a_layer():
    table = layers()
    missing = [m for m in modules() if m != PACKAGE and layer_of(m, table) < 0]
    assert not missing, f"modules in no layer of docs/contributing.md: {missing}"


def test_no_import_runs_upward():
    table = layers()
    graph = import_graph()
    upward = [f"{m} (layer {layer_of(m, table) + 1}) imports {t} (layer {layer_of(t, table) + 1})"
              for m in sorted(graph) if m != PACKAGE for t in sorted(graph[m])
              if layer_of(t, table) > layer_of(m, table)]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_the_former_upward_imports_are_gone():
    # Before: runner -> evaluation.reports (training importing evaluation),
    # evaluation.loading -> runner (evaluation importing the training loop), and
    # envs.start_positions -> evaluation.reports, in a circle with its chess and Gardner halves.
    graph = import_graph()
    assert not any(t.startswith("azdb_jax.evaluation") for t in graph["azdb_jax.runner"] | graph["azdb_jax.runs"])
    assert "azdb_jax.runner" not in graph["azdb_jax.evaluation.loading"] | graph["azdb_jax.runs"]
    assert not any(t.startswith("azdb_jax.evaluation") for t in graph["azdb_jax.start_positions"])
