"""Figures where a person would rather look than read: the paper's leave-one-out figure, iterations per round,
speedup against k.

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
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

from ..atomic import atomic_path
from ..pipeline.summaries import read_run
from .formats import DATASET_ORDER, METHOD_ORDER, ordered
from .tables import comparison, load_runs, read_paper_results, record_row

FORMATS = ("png", "pdf")


def save(figure: Figure, out_dir: Path, stem: str, formats=FORMATS) -> list[Path]:
    """Save ``figure`` as ``out_dir/stem.<format>`` in each format, atomically (no half-written file is ever seen).

    Parameters
    ----------
    figure : Figure
        The figure to save.
    out_dir : Path
        The folder (created if missing).
    stem : str
        The file name without its extension.
    formats : sequence of str
        Matplotlib's format names, also the extensions (default PNG and PDF).

    Returns
    -------
    list of Path
        The files written.
    """
    paths = []
    for fmt in formats:
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


ESTIMATED_LABEL = "estimated from the first rounds"
HATCH = "//"


def _points(axes, x, y, estimated, marker: str, color, label: str | None = None, **style) -> None:
    """Markers at (x, y): filled where measured, hollow where ``estimated``; ``label`` names the filled ones."""
    x, y, estimated = (np.asarray(v) for v in (x, y, estimated))
    estimated = estimated.astype(bool)
    axes.plot(x[~estimated], y[~estimated], marker=marker, linestyle="none", color=color, label=label, **style)
    axes.plot(x[estimated], y[estimated], marker=marker, linestyle="none", color=color, markerfacecolor="none",
              **style)


def _legend(axes, extra: list, **options) -> None:
    """The axes' legend: the labelled artists, then ``extra`` handles that explain a marking."""
    handles, labels = axes.get_legend_handles_labels()
    axes.legend(handles + extra, labels + [h.get_label() for h in extra], numpoints=1, **options)


def loocv_figure(frame: pd.DataFrame) -> Figure:
    """Elapsed time of each method relative to SIR, log scale, one group per dataset; the paper's as markers.

    A run in a fast kernel mode is divided by SIR's in the same mode, and drawn in its method's colour, lighter: a
    dataset whose SIR ran in a fast mode only (MNIST) still has its bars. A bar is hatched, a paper marker hollow,
    when its ratio is estimated: either its method's time or SIR's.

    Parameters
    ----------
    frame : DataFrame
        The leave-one-out comparison frame (``tables.comparison``).

    Returns
    -------
    Figure
        The figure, its legend beside the axes.
    """
    datasets = ordered(frame["dataset"], DATASET_ORDER)
    method_of = frame.drop_duplicates("label").set_index("label")["method"]
    labels = [label for label in ordered(frame["label"], METHOD_ORDER) if method_of[label] != "sir"]
    colors = _colors(list(dict.fromkeys(method_of[label] for label in labels)), METHOD_ORDER)
    figure = Figure(figsize=(max(6.0, 1.6 * len(datasets) + 2), 4.0))
    axes = figure.subplots()
    width = 0.8 / max(len(labels), 1)
    any_estimated = False
    for i, label in enumerate(labels):
        rows = frame[frame["label"] == label].set_index("dataset").reindex(datasets)
        x = np.arange(len(datasets)) + (i - (len(labels) - 1) / 2) * width
        estimated = rows["relative_to_sir_estimated"].fillna(False).to_numpy(dtype=bool)
        color = colors[method_of[label]]
        # A fast mode's light face is outlined (and hatched) in its method's colour; a solid bar keeps the default
        # edge, so that its hatching shows.
        style = {"color": color} if label == method_of[label] else {"facecolor": (*color[:3], 0.4), "edgecolor": color}
        bars = axes.bar(x, rows["relative_to_sir"].to_numpy(dtype=float), width, label=label, **style)
        for bar, hatched in zip(bars, estimated):
            bar.set_hatch(HATCH if hatched else "")
        paper_estimated = rows["paper_relative_to_sir_estimated"].fillna(False).to_numpy(dtype=bool)
        _points(axes, x, rows["paper_relative_to_sir"].to_numpy(dtype=float), paper_estimated, "D", "black",
                label="paper" if i == 0 else None, markersize=4, zorder=3)
        any_estimated |= bool(estimated.any() or paper_estimated.any())
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_yscale("log")
    axes.set_xticks(np.arange(len(datasets)), datasets)
    axes.set_ylabel("elapsed time / SIR's (log scale)")
    axes.set_title("Leave-one-out CV: time relative to SIR (bars: this run; \u25c6: paper)", fontsize=9)
    marker = Patch(facecolor="white", edgecolor="black", hatch=HATCH,
                   label=f"{ESTIMATED_LABEL} (hatched bar, hollow \u25c7)")
    # Beside the axes: inside, it hides the tallest bars.
    _legend(axes, [marker] if any_estimated else [], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure


def iterations_per_round_figure(records: list[dict]) -> Figure:
    """Iterations of each round for each method, one panel per dataset (seeding pays off after round 1).

    A method has one colour in every panel, solid in the paper's kernel mode and dashed in a fast one (the counts
    agree, so a dashed line under a solid one is hidden). The y axis is logarithmic; where a seeded round started at
    the optimum, it is linear below 1 so that the round shows at 0.

    Parameters
    ----------
    records : list of dict
        The run records (or summaries) of Table 1, read with ``pipeline.summaries.read_run``.

    Returns
    -------
    Figure
        The figure; rounds stopped at the iteration cap are marked with a red cross.
    """
    datasets = ordered([r["dataset"] for r in records], DATASET_ORDER)
    labels = ordered([record_row(r)["label"] for r in records], METHOD_ORDER)
    colors = _colors(ordered({label.partition(" (")[0] for label in labels}, METHOD_ORDER), METHOD_ORDER)

    def style(label: str) -> dict:
        method, _, mode = label.partition(" (")
        return dict(color=colors[method], linestyle="--" if mode else "-", marker=".")

    figure = Figure(figsize=(3.2 * len(datasets), 3.4), layout="constrained")
    panels = np.atleast_1d(figure.subplots(1, len(datasets), squeeze=False)[0])
    for axes, dataset in zip(panels, datasets):
        for record in records:
            if record["dataset"] != dataset:
                continue
            label = record_row(record)["label"]
            rounds = [r["round"] for r in record["rounds"]]
            axes.plot(rounds, [r["iterations"] for r in record["rounds"]], label=label, **style(label))
            capped = [(r["round"], r["iterations"]) for r in record["rounds"] if r["iteration_cap_hit"]]
            if capped:
                axes.scatter(*zip(*capped), marker="x", color="red", zorder=3)
        if any(r["iterations"] == 0 for record in records if record["dataset"] == dataset for r in record["rounds"]):
            axes.set_yscale("symlog", linthresh=1.0)
            axes.set_ylim(bottom=0)
        else:
            axes.set_yscale("log")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        for axis_ticks in (axes.yaxis.set_major_formatter, axes.yaxis.set_minor_formatter):
            axis_ticks(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        axes.set_title(f"{dataset} (k = {records[0]['k']})" if len(records) else dataset, fontsize=9)
        axes.set_xlabel("round")
    panels[0].set_ylabel("SMO iterations (\u00d7 = iteration cap)")
    handles = [Line2D([], [], label=label, **style(label)) for label in labels]
    figure.legend(handles=handles, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  ncol=min(len(handles), 8), frameon=False)
    return figure


def speedup_vs_k_figure(frame: pd.DataFrame) -> Figure:
    """LibSVM's time / SIR's against k per dataset: this run solid, the paper dashed.

    Hollow points are estimated (LibSVM's time, SIR's or both).

    Parameters
    ----------
    frame : DataFrame
        Table 3's comparison frame (``tables.comparison``); its SIR rows give the ratios.

    Returns
    -------
    Figure
        The figure, both axes logarithmic.
    """
    datasets = ordered(frame["dataset"], DATASET_ORDER)
    colors = _colors(datasets, DATASET_ORDER)
    sir = frame[(frame["label"] == "sir") & (frame["k"] != "loo")].copy()
    sir["k_value"] = sir["k"].astype(int)
    figure = Figure(figsize=(5.5, 4.0))
    axes = figure.subplots()
    any_estimated = False
    for dataset in datasets:
        rows = sir[sir["dataset"] == dataset].sort_values("k_value")
        for ratio, marker, linestyle, alpha in (("speedup_libsvm", "o", "-", 1.0),
                                                ("paper_speedup_libsvm", "D", "--", 0.7)):
            points = rows.dropna(subset=[ratio])
            ours = ratio == "speedup_libsvm"
            axes.plot(points["k_value"], points[ratio], linestyle=linestyle, color=colors[dataset], alpha=alpha,
                      label=dataset if ours else None)
            _points(axes, points["k_value"], points[ratio], points[f"{ratio}_estimated"], marker, colors[dataset],
                    alpha=alpha)
            any_estimated |= bool(points[f"{ratio}_estimated"].any())
    axes.set_xscale("log")
    axes.set_yscale("log")
    ks = sorted(sir["k_value"].unique())
    axes.set_xticks(ks, [str(k) for k in ks])
    axes.xaxis.set_minor_locator(NullLocator())
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_xlabel("k")
    axes.set_ylabel("LibSVM time / SIR time")
    axes.set_title("Speedup of SIR over LibSVM against k (solid \u25cf: this run, dashed \u25c6: paper)", fontsize=9)
    marker = Line2D([], [], marker="o", linestyle="none", color="black", markerfacecolor="none",
                    label=f"{ESTIMATED_LABEL} (hollow)")
    _legend(axes, [marker] if any_estimated else [], fontsize=8)
    return figure


def write_figures(groups: dict[str, list], paper_path: str | os.PathLike, out_dir: str | os.PathLike,
                  formats=FORMATS) -> list[Path]:
    """Write loocv, iterations_per_round and speedup_vs_k from the run records or summaries of each table kind.

    A figure whose table kind has no run is not written.

    Parameters
    ----------
    groups : dict
        Run record (or summary) paths per table kind: ``loo`` for loocv, ``table1`` for iterations_per_round,
        ``table3`` for speedup_vs_k.
    paper_path : str or os.PathLike
        The paper's numbers (``tables.read_paper_results``).
    out_dir : str or os.PathLike
        The folder the figures go to.
    formats : sequence of str
        The figures' formats (default PNG and PDF).

    Returns
    -------
    list of Path
        The files written.
    """
    out_dir = Path(out_dir)
    paper = read_paper_results(paper_path)
    written = []
    if groups.get("loo"):
        written += save(loocv_figure(comparison(load_runs(groups["loo"]), paper, "loo")), out_dir, "loocv", formats)
    if groups.get("table1"):
        records = [read_run(p) for p in groups["table1"]]
        written += save(iterations_per_round_figure(records), out_dir, "iterations_per_round", formats)
    if groups.get("table3"):
        written += save(speedup_vs_k_figure(comparison(load_runs(groups["table3"]), paper, "table3")), out_dir,
                        "speedup_vs_k", formats)
    return written
