"""The analysis notebooks run headlessly on the results of the ci or quick profile."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PROFILES = ("ci", "quick")


def _profile_with_results() -> str | None:
    for profile in PROFILES:
        if (REPO / "results" / profile / "tables" / "paper_vs_reproduced.md").exists():
            return profile
    return None


def test_notebooks_are_stored_without_outputs():
    assert len(NOTEBOOKS) >= 2
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name} is stored with outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    profile = _profile_with_results()
    if profile is None:
        pytest.skip("no pipeline results under results/ci or results/quick: run "
                    "`make results PROFILE=ci` (CI does) or `make results` first")
    monkeypatch.setenv("ALPHASEED_PROFILE", profile)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
