"""The published reproduction: a tracked folder rebuilt from run summaries alone.

A full-size run outlasts the machine it starts on, so each job commits its run summary
(``pipeline.summaries``) to ``<folder>/runs/{dataset}/k{k}/{variant}.json`` as it lands, and
publishing reads nothing else: the tables (Markdown, CSV, LaTeX) beside the paper's, the
figures (PNG), ``runs.csv``, ``paper_vs_reproduced.md``, ``provenance.md`` and a ``README.md``
that the project's README links to. Every deviation from the paper is explained there with
numbers computed from the summaries and from ``<folder>/kernel/{dataset}.json``, the kernel
facts of each dataset (``pipeline.kernel_facts``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..pipeline.kernel_facts import read_kernel_facts
from . import figures, formats, tables
from .deviations import (
    carry_section,
    class_counts_section,
    estimates_section,
    identity_kernel_section,
    iterations_section,
    loo_estimates_section,
    machines_section,
    overlays_section,
)
from .documents import provenance_document, readme_document
from .runs import PublishError, find_runs, group_runs, read_runs, refuse_uncommitted, runs_frame

TABLE_FORMATS = ("md", "csv", "tex")
FIGURE_FORMATS = ("png",)


def publish_folder(runs_folder: str | os.PathLike, out: str | os.PathLike, paper_path: str | os.PathLike, *,
                   kernel_folder: str | os.PathLike | None = None,
                   studies: dict[str, set[str]] | None = None, allow_dirty: bool = False) -> list[Path]:
    """Rebuild the published folder ``out`` from the run summaries (or records) under ``runs_folder``.

    Parameters
    ----------
    runs_folder : path
        ``{dataset}/k{k}/{variant}.json`` run summaries (or records).
    out : path
        The published folder.
    paper_path : path
        The paper's numbers (``workflow/resources/paper_results.csv``).
    kernel_folder : path, optional
        The kernel facts, ``{dataset}.json`` (default ``out/kernel``).
    studies : dict, optional
        Each study beyond the paper and the datasets only it runs: their runs go to that study's
        own tables in ``out/tables`` (as rule study_tables writes them), never into the paper's.
    allow_dirty : bool, default False
        Publish runs made in a checkout with uncommitted changes (``publish`` marks them);
        refused otherwise.

    Returns
    -------
    list of Path
        The files written.
    """
    studies = studies or {}
    paths = find_runs(runs_folder)
    of_study = {study: [path for path in paths if path.parts[-3] in names] for study, names in studies.items()}
    beyond = {path for study_paths in of_study.values() for path in study_paths}
    paper_paths = [path for path in paths if path not in beyond]
    refuse_uncommitted(sorted(beyond), read_runs(sorted(beyond)), allow_dirty=allow_dirty)
    if not paper_paths:
        raise PublishError(f"{runs_folder}: no run summary outside the studies beyond the paper "
                           f"({', '.join(sorted(studies))})")
    study_table1 = {study: group_runs(study_paths, read_runs(study_paths))["table1"]
                    for study, study_paths in of_study.items() if study_paths}
    written = publish(group_runs(paper_paths, read_runs(paper_paths)), out, paper_path, kernel_folder=kernel_folder,
                      studies=study_table1, allow_dirty=allow_dirty)
    for study, study_paths in of_study.items():
        if study_paths:
            written += tables.write_tables(group_runs(study_paths, read_runs(study_paths)), paper_path,
                                           Path(out) / "tables", formats=TABLE_FORMATS, study=study)
    return written


def publish(groups: dict[str, list], out: str | os.PathLike, paper_path: str | os.PathLike, *,
            kernel_folder: str | os.PathLike | None = None, studies: dict | None = None,
            allow_dirty: bool = False) -> list[Path]:
    """Rebuild the published folder ``out`` from the run summaries (or records) of each table kind.

    Parameters
    ----------
    groups : dict
        The run files of each table kind (``table1``, ``table3``, ``loo``).
    out : path
        The published folder.
    paper_path : path
        The paper's numbers.
    kernel_folder : path, optional
        The kernel facts, ``{dataset}.json`` (default ``out/kernel``).
    studies : dict, optional
        Each study beyond the paper whose tables the folder holds too, to the run files of its Table 1:
        linked from the README, and their seeding beside the paper's in its findings.
    allow_dirty : bool, default False
        Publish runs made in a checkout with uncommitted changes, whose code no commit holds:
        refused unless allowed, and then counted in the README and ``provenance.md``.

    Returns
    -------
    list of Path
        The files written.
    """
    out = Path(out)
    paths = list(dict.fromkeys(Path(path) for group in groups.values() for path in group))
    groups = {kind: [Path(path) for path in group] for kind, group in groups.items()}
    summaries = read_runs(paths)
    refuse_uncommitted(paths, summaries, allow_dirty=allow_dirty)
    runs = runs_frame(summaries)
    facts = read_kernel_facts(Path(kernel_folder) if kernel_folder is not None else out / "kernel")
    written = tables.write_tables(groups, paper_path, out / "tables", formats=TABLE_FORMATS, with_comparison=False)
    written += figures.write_figures(groups, paper_path, out / "figures", formats=FIGURE_FORMATS)

    runs.insert(0, "tables", [", ".join(kind for kind, group in groups.items() if path in group) for path in paths])
    formats.write_csv(out / "runs.csv", runs)
    paper = tables.read_paper_results(paper_path)
    frames = {kind: tables.comparison(tables.load_runs(group), paper, kind) for kind, group in groups.items()}
    extra = runs[["dataset", "k", "label", "iterations_round1"]]
    frames_table1 = frames["table1"].merge(extra, on=["dataset", "k", "label"], how="left")
    notes, sections = formats.comparison_document(frames, tables.table2(tables.load_runs(groups["table1"]), paper))
    overlays = sorted((out / "configs").glob("*.yaml"))
    deviations = (identity_kernel_section(runs, facts) + iterations_section(frames_table1)
                  + class_counts_section(summaries, facts) + carry_section(runs)
                  + loo_estimates_section(summaries, runs) + machines_section(runs) + estimates_section(runs)
                  + overlays_section(overlays))
    document = formats.document_markdown("Paper vs this reproduction", notes, sections)
    document += "\n# Deviations from the paper, measured\n\n" + "\n".join(deviations)
    formats.write_text(out / "paper_vs_reproduced.md", document)
    formats.write_text(out / "provenance.md", provenance_document(runs, summaries))
    study_frames = {study: tables.comparison(tables.load_runs(paths), paper, "table1")
                    for study, paths in (studies or {}).items()}
    beyond = {kind: frame for kind, frame in frames.items() if kind != "table1"}
    formats.write_text(out / "README.md", readme_document(frames["table1"], runs, studies=study_frames, facts=facts,
                                                             overlays=[path.name for path in overlays], beyond=beyond))
    written += [out / name for name in ("runs.csv", "paper_vs_reproduced.md", "provenance.md", "README.md")]
    return written
