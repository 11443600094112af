"""Every Python example of the README and the documentation runs as it is written: the ```python
blocks of a page, in order, in one namespace, as a reader would paste them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def examples(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)], ids=lambda p: str(p.relative_to(REPO)))
def test_the_examples_of_a_page_run(page, tmp_path, monkeypatch):
    """Catches an example left behind by a change of the API (a renamed argument, a moved name),
    or one that never ran."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for number, code in enumerate(examples(page), start=1):
        exec(compile(code, f"{page.name}, example {number}", "exec"), namespace)


def test_the_readme_has_an_example():
    """Catches a README whose example was dropped (nothing would then be checked there)."""
    assert examples(REPO / "README.md")
