"""The package's layers, checked: no import circle, no import upwards, no module too long.

``python tools/layers.py`` reads every module of ``src/minigrad`` (its source,
not by importing it), collects every import it makes, at module level and
inside functions alike, and prints what breaks the architecture:

- a circle of imports between modules (Tarjan's strongly connected
  components over the import graph);
- a module that imports one from a layer above its own (:data:`LAYERS`);
- inside ``checking/``, a module that imports one from a room above its own
  (:data:`ROOMS`);
- a module of more than :data:`MAX_LINES` lines (:data:`ROOM_MAX_LINES` in
  ``checking/``).

An import under ``if TYPE_CHECKING:`` is for annotations only, runs never and
does not count. ``from minigrad.core import rules`` is an import of the
module ``minigrad.core.rules``; ``from minigrad.core import Value`` one of the
package ``minigrad.core`` (its ``__init__``). Exit status 1 when anything is
found, 0 otherwise; the tests run it too.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

#: The layers, bottom first: a module may import from its own layer and below.
#: A name not listed (the top-level modules: ``minigrad``, ``__main__``, the
#: public re-exports ``nn``, ``data``, ``ops``, ``testing``) is the top layer.
LAYERS = (
    "minigrad.core",
    "minigrad.checking",
    "minigrad.compiler",
    "minigrad.teach",
    "minigrad.cli",
)
#: No module longer than this (a module is one idea a reader can hold).
MAX_LINES = 600

#: The rooms of ``checking/``, bottom first: a module of ``checking/`` may import
#: from its own room and below. ``numeric`` (floats in, estimates out, no
#: verdicts) < ``verdicts`` (evidence, and the one function that convicts) <
#: ``run`` (settings, levels, the runner, fast mode, the report) < the public
#: face (``gradcheck.py``, ``strategies.py``, the package itself: what is in
#: no room listed) < ``lab`` (a student's engine, checked through the face).
ROOMS = (
    "minigrad.checking.numeric",
    "minigrad.checking.verdicts",
    "minigrad.checking.run",
    "minigrad.checking",
    "minigrad.checking.lab",
)
#: No module of ``checking/`` longer than this.
ROOM_MAX_LINES = 500

ROOT = Path(__file__).resolve().parent.parent / "src"


def module_name(path: Path, root: Path) -> str:
    """``src/minigrad/core/value.py`` -> ``minigrad.core.value``; a package is its ``__init__``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    """The index of ``module``'s layer in :data:`LAYERS`; ``len(LAYERS)`` for the top."""
    for i, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return i
    return len(LAYERS)


def room(module: str) -> int | None:
    """The index of ``module``'s room in :data:`ROOMS` (the longest that holds it); None
    outside ``checking/``."""
    found: tuple[int, int] | None = None
    for i, prefix in enumerate(ROOMS):
        if (module == prefix or module.startswith(prefix + ".")) and (
            found is None or len(prefix) > found[1]
        ):
            found = (i, len(prefix))
    return found[0] if found is not None else None


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all but those under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the else branch runs
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported(path: Path, name: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that the file at ``path`` (module ``name``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the module pkg.sub, else pkg itself.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        found.update(t for t in targets if t in modules and t != name)
    return found


def graph(root: Path = ROOT) -> tuple[dict[str, set[str]], dict[str, Path]]:
    """The import graph of the ``minigrad`` package under ``root``, and each module's file."""
    files = {module_name(p, root): p for p in sorted((root / "minigrad").rglob("*.py"))}
    modules = set(files)
    return {m: imported(p, m, modules) for m, p in files.items()}, files


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module.

    Tarjan's algorithm, iteratively (a package of any size and depth).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def problems(root: Path = ROOT) -> list[str]:
    """Everything that breaks the layers, in words; empty when the package is sound.

    Example:
        >>> problems()
        []
    """
    edges, files = graph(root)
    found = [f"import circle: {' -> '.join([*c, c[0]])}" for c in circles(edges)]
    for module in sorted(edges):
        for target in sorted(edges[module]):
            if layer(target) > layer(module):
                found.append(
                    f"{module} imports {target}, from a layer above its own "
                    f"({LAYERS[layer(module)]} below {_layer_name(target)})"
                )
            here, there = room(module), room(target)
            if here is not None and there is not None and there > here:
                found.append(
                    f"{module} imports {target}, from a room above its own "
                    f"({ROOMS[here]} below {ROOMS[there]})"
                )
    for module, path in sorted(files.items()):
        lines = len(path.read_text().splitlines())
        most = ROOM_MAX_LINES if room(module) is not None else MAX_LINES
        if lines > most:
            found.append(f"{module} has {lines} lines, more than {most}")
    return found


def _layer_name(module: str) -> str:
    i = layer(module)
    return LAYERS[i] if i < len(LAYERS) else "the top level"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT, help="the folder holding minigrad/")
    parser.add_argument("--graph", action="store_true", help="print every module's imports")
    args = parser.parse_args(argv)
    if args.graph:
        edges, _ = graph(args.src)
        for module in sorted(edges, key=lambda m: (layer(m), m)):
            print(f"{module}: {', '.join(sorted(edges[module])) or '-'}")
    found = problems(args.src)
    for line in found:
        print(line)
    if not found:
        print(
            "layers hold: no circle, no import upwards (nor among the rooms of checking/), "
            f"no module of checking/ over {ROOM_MAX_LINES} lines, no module over {MAX_LINES} lines"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
