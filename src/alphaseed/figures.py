"""Figures where a person would rather look than read: the paper's leave-one-out figure, iterations per round, speedup against k.

Built with ``matplotlib.figure.Figure`` (no pyplot state, no display needed) from the same
comparison frames as the tables, and saved as PNG and PDF atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure

from .atomic import atomic_path
from .records import read_run_record
from .tables import (
    DATASET_ORDER,
    METHOD_ORDER,
    _order,
    comparison,
    load_runs,
    read_paper_results,
    record_row,
)

FORMATS = ("png", "pdf")


def save(figure: Figure, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for fmt in FORMATS:
        path = out_dir / f"{stem}.{fmt}"
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight")
        paths.append(path)
    return paths


def _colors(labels: list[str], order: list[str]) -> dict[str, tuple]:
    """One colour per method (or dataset) in every figure; fast kernel modes get the next free ones."""
    palette = colormaps["tab10"]
    extra = iter(range(len(order), 10 * len(labels) + len(order)))
    return {
        label: palette((order.index(label) if label in order else next(extra)) % 10) for label in labels
    }


def loocv_figure(frame: pd.DataFrame) -> Figure:
    """Elapsed time of each method relative to SIR, log scale, one group per dataset; the paper's as markers."""
    datasets = _order(frame["dataset"], DATASET_ORDER)
    labels = [label for label in _order(frame["label"], METHOD_ORDER) if label != "sir"]
    colors = _colors(labels, METHOD_ORDER)
    figure = Figure(figsize=(max(6.0, 1.6 * len(datasets) + 2), 4.0))
    axes = figure.subplots()
    width = 0.8 / max(len(labels), 1)
    for i, label in enumerate(labels):
        rows = frame[frame["label"] == label].set_index("dataset").reindex(datasets)
        x = np.arange(len(datasets)) + (i - (len(labels) - 1) / 2) * width
        ours = rows["relative_to_sir"].to_numpy(dtype=float)
        hatches = ["//" if estimated is True else "" for estimated in rows["estimated"]]
        bars = axes.bar(x, ours, width, color=colors[label], label=label)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        paper = rows["paper_relative_to_sir"].to_numpy(dtype=float)
        axes.scatter(x, paper, marker="D", s=18, color="black", zorder=3, label="paper" if i == 0 else None)
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_yscale("log")
    axes.set_xticks(np.arange(len(datasets)), datasets)
    axes.set_ylabel("elapsed time / SIR's (log scale)")
    axes.set_title("Leave-one-out CV: time relative to SIR (bars: this run, hatched = estimated; \u25c6: paper)",
                   fontsize=9)
    axes.legend(fontsize=8, ncol=2)
    return figure


def iterations_per_round_figure(records: list[dict]) -> Figure:
    """Iterations of each round for each method, one panel per dataset (seeding pays off after round 1)."""
    datasets = _order([r["dataset"] for r in records], DATASET_ORDER)
    labels = _order([record_row(r)["label"] for r in records], METHOD_ORDER)
    colors = _colors(labels, METHOD_ORDER)
    figure = Figure(figsize=(3.2 * len(datasets), 3.2))
    panels = np.atleast_1d(figure.subplots(1, len(datasets), squeeze=False)[0])
    for axes, dataset in zip(panels, datasets):
        for record in records:
            if record["dataset"] != dataset:
                continue
            label = record_row(record)["label"]
            rounds = [r["round"] for r in record["rounds"]]
            iterations = [max(r["iterations"], 1) for r in record["rounds"]]
            axes.plot(rounds, iterations, marker=".", color=colors[label], label=label)
            capped = [(r["round"], max(r["iterations"], 1)) for r in record["rounds"] if r["iteration_cap_hit"]]
            if capped:
                axes.scatter(*zip(*capped), marker="x", color="red", zorder=3)
        axes.set_yscale("log")
        axes.set_title(f"{dataset} (k = {records[0]['k']})" if len(records) else dataset, fontsize=9)
        axes.set_xlabel("round")
    panels[0].set_ylabel("SMO iterations (log; \u00d7 = iteration cap)")
    panels[-1].legend(fontsize=7)
    return figure


def speedup_vs_k_figure(frame: pd.DataFrame) -> Figure:
    """LibSVM's time / SIR's against k per dataset: this run solid, the paper dashed."""
    datasets = _order(frame["dataset"], DATASET_ORDER)
    colors = _colors(datasets, DATASET_ORDER)
    sir = frame[(frame["label"] == "sir") & (frame["k"] != "loo")].copy()
    sir["k_value"] = sir["k"].astype(int)
    figure = Figure(figsize=(5.5, 4.0))
    axes = figure.subplots()
    for dataset in datasets:
        rows = sir[sir["dataset"] == dataset].sort_values("k_value")
        ours = rows.dropna(subset=["speedup_libsvm"])
        paper = rows.dropna(subset=["paper_speedup_libsvm"])
        axes.plot(ours["k_value"], ours["speedup_libsvm"], marker="o", color=colors[dataset], label=dataset)
        axes.plot(paper["k_value"], paper["paper_speedup_libsvm"], marker="D", linestyle="--",
                  color=colors[dataset], alpha=0.7)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_xlabel("k")
    axes.set_ylabel("LibSVM time / SIR time")
    axes.set_title("Speedup of SIR over LibSVM against k (solid: this run, dashed: paper)", fontsize=9)
    axes.legend(fontsize=8)
    return figure


def write_figures(groups: dict[str, list], paper_path: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:
    """Write loocv, iterations_per_round and speedup_vs_k (PNG and PDF) from the run records of each table kind."""
    out_dir = Path(out_dir)
    paper = read_paper_results(paper_path)
    written = []
    if groups.get("loo"):
        written += save(loocv_figure(comparison(load_runs(groups["loo"]), paper, "loo")), out_dir, "loocv")
    if groups.get("table1"):
        records = [read_run_record(p) for p in groups["table1"]]
        written += save(iterations_per_round_figure(records), out_dir, "iterations_per_round")
    if groups.get("table3"):
        written += save(speedup_vs_k_figure(comparison(load_runs(groups["table3"]), paper, "table3")), out_dir,
                        "speedup_vs_k")
    return written
