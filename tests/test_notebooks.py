"""The analysis notebooks run headlessly on the results of the ci or quick profile and show those results."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from alphaseed.pipeline.records import read_run_record
from alphaseed.report.formats import method_label
from alphaseed.report.tables import engine_label

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PROFILES = ("ci", "quick")


def _profile_with_results() -> str | None:
    for profile in PROFILES:
        if (REPO / "results" / profile / "tables" / "paper_vs_reproduced.md").exists():
            return profile
    return None


def test_notebooks_are_stored_without_outputs():
    """Catches a notebook committed with outputs (stale results in the repository)."""
    assert len(NOTEBOOKS) >= 2
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name} is stored with outputs"


@pytest.fixture(scope="module")
def results() -> Path:
    profile = _profile_with_results()
    if profile is None:
        pytest.skip("no pipeline results under results/ci or results/quick: run "
                    "`make results PROFILE=ci` (CI does) or `make results` first")
    return REPO / "results" / profile


def execute(name: str, results: Path) -> list[dict]:
    """Run notebook ``name`` on ``results``; the outputs of its code cells, one list per cell."""
    path = REPO / "notebooks" / f"{name}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALPHASEED_PROFILE", results.name)
        # Figures go to the cell's outputs, as in Jupyter, where the test can see them.
        patch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        NotebookClient(notebook, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    return [cell.outputs for cell in notebook.cells if cell.cell_type == "code"]


def shown(outputs: list, mime: str) -> list[str]:
    return [o["data"][mime] for o in outputs if o["output_type"] in ("display_data", "execute_result")
            and mime in o.get("data", {})]


def body_rows(html: str) -> int:
    return html.split("<tbody>", 1)[1].count("<tr")


@pytest.mark.slow
def test_tables_vs_paper_shows_the_tables_figures_and_speedups(results):
    """Catches the notebook showing nothing, a table or figure other than the pipeline's (stale or from
    another profile), a speedup table that drops or adds runs, or one without the estimate flags."""
    cells = execute("tables_vs_paper", results)
    everything = [o for outputs in cells for o in outputs]
    assert not [o for o in everything if o["output_type"] == "error"]

    markdown = shown(everything, "text/markdown")
    for name in ("table1", "table2", "table3", "loocv", "paper_vs_reproduced"):
        path = results / "tables" / f"{name}.md"
        if path.exists():
            assert path.read_text() in markdown, name

    pngs = [base64.b64decode(data) for data in shown(everything, "image/png")]
    figures = sorted((results / "figures").glob("*.png"))
    assert figures and all(path.read_bytes() in pngs for path in figures)
    assert len(pngs) == len(figures) + 1  # and the speedup scatter

    frames = [pd.read_csv(results / "tables" / f"{name}.csv", dtype={"k": str})
              for name in ("table1", "table3", "loocv") if (results / "tables" / f"{name}.csv").exists()]
    runs = pd.concat(frames)
    expected = runs.dropna(subset=["speedup_libsvm", "paper_speedup_libsvm"])
    expected = expected[expected["method"] != "libsvm"]
    [speedups] = [html for html in shown(everything, "text/html") if "paper_speedup_libsvm_estimated" in html]
    assert "speedup_libsvm_estimated" in speedups and body_rows(speedups) == len(expected) > 0


@pytest.mark.slow
def test_rounds_study_shows_every_run_and_its_rounds(results):
    """Catches the notebook reading no run records (an empty count table), missing a dataset or method,
    or leaving out its figures or its seeding-quality table."""
    cells = execute("rounds_study", results)
    everything = [o for outputs in cells for o in outputs]
    assert not [o for o in everything if o["output_type"] == "error"]

    records = [read_run_record(p) for p in sorted((results / "runs").glob("*/k*/*.json"))]
    assert records
    labels = {method_label(r["method"], None if r["method"] == "libsvm" else engine_label(r)) for r in records}
    runs = {(r["dataset"], str(r["k"])) for r in records}

    [counts] = shown(cells[0], "text/html")
    header = counts.split("<tbody>", 1)[0]
    assert set(re.findall(r"<th[^>]*>([^<]+)</th>", header)) >= labels
    assert body_rows(counts) == len(runs)
    assert {dataset for dataset, _ in runs} <= set(re.findall(r"<th[^>]*>([^<]+)</th>", counts))

    assert len(shown(everything, "image/png")) == 2  # iterations per round, iteration ratio box plot
    [quality] = [html for html in shown(everything, "text/html") if "iteration_ratio" in html]
    seeded = {(r["dataset"], str(r["k"]), method_label(r["method"], engine_label(r))) for r in records
              if r["method"] not in ("libsvm", "cold") and len(r["rounds"]) > 1}
    assert body_rows(quality) == len(seeded)
