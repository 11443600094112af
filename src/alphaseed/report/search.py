"""A grid search's files: its JSON, CSV and heat map, the merge of a search run by gamma
column, and the methods of one search side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patheffects import withStroke

from ..atomic import atomic_path, write_json
from ..errors import ConfigError

# What every part of a search split by gamma column must share to be merged.
SEARCH_SETTINGS = ("dataset", "n", "dim", "k", "seed", "method", "solver", "kernel_mode", "eps", "shrinking",
                   "max_iter", "log2_C")


def merge_searches(parts, out) -> dict:
    """One search from searches of the same grid's gamma columns (e.g. one Snakemake job per column).

    The points of all, the best point as one search would choose it, the iterations and seconds
    summed, the first start and the last finish.

    Parameters
    ----------
    parts : list of path
        ``write_search`` outputs (JSON) of the columns.
    out : path
        Where to write the merged search, as ``write_search`` does.

    Returns
    -------
    dict
        What the JSON holds.
    """
    summaries = [json.loads(Path(part).read_text(encoding="utf-8")) for part in parts]
    if not summaries:
        raise ConfigError("merging a search needs at least one part")
    first = summaries[0]
    for part, summary in zip(parts, summaries):
        differing = [key for key in SEARCH_SETTINGS if summary.get(key) != first.get(key)]
        if differing:
            raise ConfigError(f"{part} is a part of another search: its {', '.join(differing)} differ from "
                              f"{parts[0]}'s")
        if any("iteration_cap_hits" not in point for point in summary["points"]):
            raise ConfigError(f"{part} comes from an older alphaseed that did not record which points stopped "
                              f"at the iteration cap: run its search again")
    gammas = [g for summary in summaries for g in summary["log2_gamma"]]
    if len(set(gammas)) != len(gammas):
        raise ConfigError(f"the parts share gamma columns: log2 gamma {sorted(gammas)}")
    merged = {key: first[key] for key in SEARCH_SETTINGS}
    merged.update(log2_gamma=sorted(gammas), seconds=sum(summary["seconds"] for summary in summaries),
                  started_utc=min(summary["started_utc"] for summary in summaries),
                  finished_utc=max(summary["finished_utc"] for summary in summaries))
    if "provenance" in first:
        merged["provenance"] = first["provenance"]
    points = pd.DataFrame([point for summary in summaries for point in summary["points"]])
    return write_search(merged, points, out)


def write_search(summary: dict, points: pd.DataFrame, out) -> dict:
    """Write a search: ``out`` (JSON), ``out``.csv (the points) and ``out``.png (the heat map).

    The points are put in GridSearchCV's candidate order (C, then gamma, each ascending), and the
    best is the first of the highest accuracy in it, as GridSearchCV's rank 1 is.

    Parameters
    ----------
    summary : dict
        The search's settings and times (``pipeline.searches.run_search``).
    points : DataFrame
        One row per point (``run_search``).
    out : path
        The JSON file; the CSV and PNG go beside it.

    Returns
    -------
    dict
        What the JSON holds: ``summary`` with the best point, the total iterations, the number of
        points where SMO stopped at the iteration cap in some split, and the points.
    """
    points = points.sort_values(["log2_C", "log2_gamma"], kind="stable").reset_index(drop=True)
    best = points.loc[points["accuracy"].idxmax()]
    summary = {**summary,
               "best": {key: float(best[key]) for key in ("log2_C", "log2_gamma", "C", "gamma", "accuracy")},
               "total_iterations": int(points["iterations"].sum()),
               "points_at_iteration_cap": int((points["iteration_cap_hits"] > 0).sum()),
               "points": points.to_dict(orient="records")}
    out = Path(out)
    write_json(out, summary)
    with atomic_path(out.with_suffix(".csv")) as temporary:
        points.to_csv(temporary, index=False)
    accuracy = points.pivot(index="log2_gamma", columns="log2_C", values="accuracy")
    capped = points[points["iteration_cap_hits"] > 0]
    heat_map(list(accuracy.columns), list(accuracy.index), accuracy.to_numpy(),
             (best["log2_C"], best["log2_gamma"]), list(zip(capped["log2_C"], capped["log2_gamma"])),
             f"{summary['dataset']}: {summary['k']}-fold CV accuracy ({summary['method']})", out.with_suffix(".png"))
    return summary


def heat_map(log2_C, log2_gamma, accuracy, best, capped, title: str, path) -> None:
    """Write the heat map of CV accuracy (percent) over (log2 C, log2 gamma) as PNG, atomically.

    The best point and the points where SMO stopped at the iteration cap are marked.

    Parameters
    ----------
    log2_C : list of float
        The columns' log2 C, ascending and evenly spaced.
    log2_gamma : list of float
        The rows' log2 gamma, ascending and evenly spaced.
    accuracy : ndarray
        ``accuracy[i, j]`` belongs to ``log2_gamma[i]`` and ``log2_C[j]``.
    best : tuple of float
        The best point, (log2 C, log2 gamma).
    capped : list of tuple of float
        The points, (log2 C, log2 gamma), where SMO stopped at the iteration cap.
    title : str
        The figure's title.
    path : path
        The PNG file.
    """
    figure = Figure(figsize=(1.2 + 0.55 * len(log2_C), 1.0 + 0.45 * len(log2_gamma)))
    axes = figure.add_subplot()
    image = axes.imshow(accuracy, origin="lower", aspect="auto", cmap="viridis",
                        extent=_extent(log2_C) + _extent(log2_gamma))
    figure.colorbar(image, ax=axes, label="CV accuracy (%)")
    if capped:  # under the best point's star
        # white with a black edge: visible on every colour of the map and on the legend's white
        axes.plot(*zip(*capped), marker="x", markersize=9, markeredgewidth=2, color="white",
                  linestyle="none", label="SMO stopped at the iteration cap (not converged)",
                  path_effects=[withStroke(linewidth=4, foreground="black")])
    axes.plot(*best, marker="*", markersize=16, color="red", markeredgecolor="white",
              linestyle="none", label=f"best: log2 C = {best[0]:g}, log2 gamma = {best[1]:g}")
    axes.set_xticks(log2_C)
    axes.set_yticks(log2_gamma)
    axes.set_xlabel("log2 C")
    axes.set_ylabel("log2 gamma")
    axes.set_title(title)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=150, bbox_inches="tight")


def _extent(values) -> list[float]:
    """Image bounds that centre each cell on its value (one cell: a unit-wide cell)."""
    low, high = min(values), max(values)
    half = (high - low) / (len(values) - 1) / 2 if len(values) > 1 else 0.5
    return [low - half, high + half]


def compare_methods(summaries: dict[str, dict]) -> pd.DataFrame:
    """One row per method of one search, beside ``cold`` when it ran.

    A row has the method's best point, iterations, time and points where SMO stopped at the iteration cap, and
    against ``cold`` its ratios and the points whose accuracy differs.

    Parameters
    ----------
    summaries : dict of str to dict
        ``write_search``'s summary of each method, by method; ``cold``'s must cover every point of the others.

    Returns
    -------
    DataFrame
        One row per method, in the order of ``summaries``.
    """
    cold = summaries.get("cold")
    rows = []
    for method, summary in summaries.items():
        row = {"method": method, "best log2 C": summary["best"]["log2_C"],
               "best log2 gamma": summary["best"]["log2_gamma"],
               "best accuracy (%)": summary["best"]["accuracy"],
               "iterations": summary["total_iterations"], "seconds": summary["seconds"],
               "points at the iteration cap": summary["points_at_iteration_cap"]}
        if cold is not None:
            accuracy = {(p["log2_C"], p["log2_gamma"]): p["accuracy"] for p in cold["points"]}
            row["cold / method iterations"] = cold["total_iterations"] / max(1, summary["total_iterations"])
            row["cold / method seconds"] = cold["seconds"] / summary["seconds"]
            row["points differing from cold"] = sum(
                p["accuracy"] != accuracy[(p["log2_C"], p["log2_gamma"])] for p in summary["points"])
        rows.append(row)
    return pd.DataFrame(rows)
