"""Numba's cached code follows the sources: a compiled function whose callee in another module
changed is compiled again, unchanged sources load from the cache once a process has sealed it, and
a cache no process sealed is compiled again."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from alphaseed.jit_cache import COMPILED_PACKAGES, STAMP, discard_stale_compiled_code, seal_compiled_code

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "alphaseed"

CALLEE = """
from numba import njit

@njit(cache=True)
def value():
    return {value}
"""
CALLER = """
from numba import njit
from pkg.callee import value

@njit(cache=True)
def twice():
    return 2 * value()
"""
RUN = """
import sys
from alphaseed.jit_cache import discard_stale_compiled_code, seal_compiled_code
{guard}
from pkg.caller import twice
print(twice(), twice.stats.cache_hits.get(twice.signatures[0], 0))
{seal}
"""


def run_caller(root: Path, guard: bool, seal: bool = True) -> tuple[int, int]:
    """(twice(), cache hits) in a fresh process, with or without the guard over ``root/pkg``; with
    the guard, ``seal`` seals the cache afterwards as the solver's warm-up does."""
    folders = f"[{str(root / 'pkg')!r}]"
    code = RUN.format(guard=f"discard_stale_compiled_code({folders})" if guard else "",
                      seal=f"seal_compiled_code({folders})" if guard and seal else "")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(PACKAGE.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1])


def write_package(root: Path, value: int) -> None:
    """The package with the callee returning ``value``; the caller's file is written once only, so
    that Numba sees it unchanged (older Numbas stamp a file by its time of change, not its bytes)."""
    package = root / "pkg"
    package.mkdir(exist_ok=True)
    (package / "callee.py").write_text(textwrap.dedent(CALLEE.format(value=value)))
    for name, text in (("__init__.py", ""), ("caller.py", textwrap.dedent(CALLER))):
        if not (package / name).exists():
            (package / name).write_text(text)


@pytest.mark.parametrize("guard", [True, False])
def test_a_caller_sees_its_changed_callee_only_with_the_guard(tmp_path, guard):
    """Catches the stale code Numba loads by itself (the unguarded run gives the old callee's answer: this
    is the failure the guard exists for) and a guard that misses a change in another module."""
    write_package(tmp_path, 1)
    assert run_caller(tmp_path, guard) == (2, 0)
    write_package(tmp_path, 5)
    answer, _ = run_caller(tmp_path, guard)
    assert answer == (10 if guard else 2)


def test_unchanged_sources_load_from_the_cache(tmp_path):
    """Catches a guard that discards the cache on every import (each process would compile the solver
    again, minutes on a fresh machine)."""
    write_package(tmp_path, 1)
    assert run_caller(tmp_path, guard=True) == (2, 0)
    assert run_caller(tmp_path, guard=True) == (2, 1)
    assert (tmp_path / "pkg" / "__pycache__" / STAMP).exists()


def test_a_cache_no_process_sealed_is_compiled_again(tmp_path):
    """Processes that each compile part of a package and never seal it leave entries that may not
    load together (Numba's issues 8578 and 10128: a search crashed after two partial test runs).
    Catches a guard that seals whatever cache it finds (the next process would load the unsealed
    entries), and a seal that does not let the next process load."""
    write_package(tmp_path, 1)
    assert run_caller(tmp_path, guard=True, seal=False) == (2, 0)
    assert not (tmp_path / "pkg" / "__pycache__" / STAMP).exists()
    assert run_caller(tmp_path, guard=True) == (2, 0)
    assert run_caller(tmp_path, guard=True) == (2, 1)


def test_the_guard_reports_what_it_discarded(tmp_path):
    """Catches a guard that says nothing changed after deleting, or deletes files of other kinds."""
    write_package(tmp_path, 1)
    run_caller(tmp_path, guard=False)
    cache = tmp_path / "pkg" / "__pycache__"
    (cache / "keep.txt").write_text("not Numba's")
    assert discard_stale_compiled_code([tmp_path / "pkg"])
    assert not list(cache.glob("*.nb[ic]")) and (cache / "keep.txt").exists()
    assert not discard_stale_compiled_code([tmp_path / "pkg"])


def test_every_cached_function_lies_in_a_fingerprinted_package():
    """Catches a compiled module added outside COMPILED_PACKAGES, whose callees' changes the guard would
    not see."""
    cached = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "cache" and getattr(node.value, "value", None) is True:
                cached.add(path.relative_to(PACKAGE).parts[0])
    assert cached and cached <= set(COMPILED_PACKAGES)
