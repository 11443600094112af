"""The package's layers: imports run one way (cli -> report -> pipeline -> sklearn -> cv -> seeding
-> solver -> kernel), a library layer is entered through its package only, and no module imports
itself back through another. Read from the source (ast), so a lazy import inside a function counts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "alphaseed"
# Lowest first; errors, atomic and jit_cache are the base every layer may use.
LAYERS = ["errors", "atomic", "jit_cache", "kernel", "solver", "seeding", "cv", "sklearn", "pipeline", "report", "cli"]
# The package itself (``from alphaseed import SVC``) re-exports the library, so it ranks just above it.
PACKAGE_RANK = LAYERS.index("sklearn") + 0.5
# Layers other layers enter through their package (its __init__) only.
LIBRARY = {"kernel", "solver", "seeding", "cv", "sklearn"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> list[tuple[str, int]]:
    """(module imported, line) of every import of the package in ``path``, relative ones resolved; a
    ``from X import y`` names X.y where that is a module, else X."""
    known = modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("alphaseed")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("alphaseed"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in known else target, node.lineno))
    return found


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def rank(module: str) -> float | None:
    """Where ``module`` stands among the layers: its layer's place, the package's own for ``alphaseed``."""
    return LAYERS.index(layer(module)) if layer(module) else PACKAGE_RANK if module == "alphaseed" else None


IMPORTS = {name: imported(name, path) for name, path in modules().items()}


def test_the_layers_cover_every_module():
    """Catches a module added beside the layers, which no rule below would then hold."""
    assert {layer(name) for name in IMPORTS} - {None} <= set(LAYERS)


@pytest.mark.parametrize("name", sorted(name for name in IMPORTS if layer(name)))
def test_no_module_imports_a_higher_layer(name):
    """Catches an upward import, e.g. the config taking a helper from the command line, the solver
    reaching into the cross-validation, or the kernel taking ``cross_validate`` from the package."""
    own = rank(name)
    upward = [(target, line) for target, line in IMPORTS[name]
              if rank(target) is not None and rank(target) > own]
    assert not upward, f"{name} imports a higher layer: {upward}"


@pytest.mark.parametrize("name", sorted(name for name in IMPORTS if layer(name)))
def test_library_layers_are_entered_through_their_package(name):
    """Catches a module that reaches past a layer's public face into one of its modules (the
    seeders taking the kernel's BLAS helper from its values module, say)."""
    own = layer(name)
    inside = [(target, line) for target, line in IMPORTS[name]
              if layer(target) in LIBRARY and layer(target) != own and target.count(".") > 1]
    assert not inside, f"{name} imports modules inside another layer: {inside}"


def test_no_import_circle():
    """Catches a circle of imports between modules (the package importing its own modules is the
    one way in, not a circle)."""
    graph = {name: {target for target, _ in targets if target in IMPORTS and target != name
                    and not name.startswith(target + ".")}
             for name, targets in IMPORTS.items()}
    done, path = set(), []

    def visit(node):
        if node in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(node):] + [node]))
        if node in done:
            return
        path.append(node)
        for target in sorted(graph[node]):
            visit(target)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        visit(node)
