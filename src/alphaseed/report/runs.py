"""The runs of a published reproduction: found, checked against where they sit, grouped into the
paper's tables, tabulated, and a rerun compared with them.

Which table a run feeds is read from the runs themselves, as the paper lays its tables out:
leave-one-out runs feed the leave-one-out table, k = 10 runs Table 1, and every k-fold run of a
method that ran at more than one k Table 3.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import AlphaseedError
from ..pipeline.experiments import TABLE1_K
from ..pipeline.summaries import read_run
from . import formats, tables

# ATO, MIR and SIR start cold in round 1; AVG and TOP seed every round from the full model.
FIRST_SEEDED_ROUND = {"ato": 2, "mir": 2, "sir": 2, "avg": 1, "top": 1}

# A pause between jobs longer than this separates two sittings of the run (provenance.md).
SITTING_GAP = pd.Timedelta(minutes=30)


class PublishError(AlphaseedError, ValueError):
    """The folder to publish from is missing, empty or holds a file that is not a run."""


def find_runs(folder: str | os.PathLike) -> list[Path]:
    """The run files {dataset}/k{k}/{variant}.json under ``folder``; an error when there are none.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder of run summaries (or records).

    Returns
    -------
    list of Path
        The files, sorted.

    Raises
    ------
    PublishError
        When ``folder`` is not a folder or holds no run file.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise PublishError(f"no folder of run summaries at {folder}")
    paths = sorted(folder.glob("*/k*/*.json"))
    if not paths:
        raise PublishError(f"{folder} holds no run summaries ({{dataset}}/k{{k}}/{{variant}}.json)")
    return paths


def read_runs(paths: list[Path]) -> list[dict]:
    """Every run, each file checked against the place it sits in (a misplaced file is refused).

    The file name has the kernel mode asked for, the run the one used (``auto`` resolves to
    ``gram``, ``shared`` or ``cache``), so only the method of the name is checked.

    Parameters
    ----------
    paths : list of Path
        The run files (``find_runs``).

    Returns
    -------
    list of dict
        The runs, in the order of ``paths``.
    """
    runs = []
    for path in paths:
        run = read_run(path)
        where = (path.parent.parent.name, path.parent.name, path.stem.partition("-")[0])
        found = (run["dataset"], f"k{formats.k_key(run['k'])}", run["method"])
        if where != found:
            raise PublishError(f"{path} holds the run of {'/'.join(found)}: it is misplaced or renamed")
        runs.append(run)
    return runs


def group_runs(paths: list[Path], runs: list[dict]) -> dict[str, list[Path]]:
    """Paths per table kind, laid out as the paper's tables (see the module's docstring).

    Parameters
    ----------
    paths : list of Path
        The run files.
    runs : list of dict
        Their runs, in the same order (``read_runs``).

    Returns
    -------
    dict of str to list of Path
        The paths of each kind (``table1``, ``table3``, ``loo``) that has any; ``table1`` always does.
    """
    rows = [tables.record_row(run) for run in runs]
    ks_of: dict[tuple, set] = {}
    for row in rows:
        if row["k"] != "loo":
            ks_of.setdefault((row["dataset"], row["label"]), set()).add(row["k"])
    groups: dict[str, list[Path]] = {"table1": [], "table3": [], "loo": []}
    for path, row in zip(paths, rows):
        if row["k"] == "loo":
            groups["loo"].append(path)
            continue
        if row["k"] == TABLE1_K:
            groups["table1"].append(path)
        if len(ks_of[(row["dataset"], row["label"])]) > 1:
            groups["table3"].append(path)
    if not groups["table1"]:
        raise PublishError(f"no k = {TABLE1_K} run among the summaries: Table 1 cannot be built yet")
    return {kind: group for kind, group in groups.items() if group}


def refuse_uncommitted(paths: list[Path], runs: list[dict], *, allow_dirty: bool) -> None:
    """Refuse runs made in a checkout with uncommitted changes, whose code no commit holds, unless allowed.

    Parameters
    ----------
    paths : list of Path
        The run files.
    runs : list of dict
        Their runs (``read_runs``).
    allow_dirty : bool
        Let them through (the published documents then count them).

    Raises
    ------
    PublishError
        Naming the first of them, when there are any and ``allow_dirty`` is false.
    """
    dirty = [str(path) for path, run in zip(paths, runs) if run.get("provenance", {}).get("git_dirty") is True]
    if dirty and not allow_dirty:
        raise PublishError(f"{len(dirty)} of {len(paths)} runs were made in a checkout with uncommitted "
                           f"changes, which no commit reproduces ({', '.join(dirty[:3])}"
                           f"{', ...' if len(dirty) > 3 else ''}): rerun them from a commit, or publish "
                           f"with --allow-dirty (config: publish_allow_dirty) to mark them")


def runs_frame(runs: list[dict]) -> pd.DataFrame:
    """One row per run: the tables' row, plus the job, its provenance and kernel work.

    Parameters
    ----------
    runs : list of dict
        The run summaries (``read_runs``).

    Returns
    -------
    DataFrame
        The rows, in the order of ``runs``.
    """
    rows = []
    for run in runs:
        provenance, kernel = run["provenance"], run["kernel"] or {}
        seeded = [r for r in run["rounds"] if r["round"] >= FIRST_SEEDED_ROUND.get(run["method"], np.inf)]
        rows.append({
            **tables.record_row(run),
            **tables.estimated_by_kind(run, runs),
            "wall_seconds": run["job"]["wall_seconds"],
            "seconds_gradient_init_seeded": sum(r["seconds"]["gradient_init"] for r in seeded),
            "seconds_rounds_seeded": sum(sum(r["seconds"].values()) for r in seeded),
            "seeded_rounds": len(seeded),
            "carried_rounds": kernel.get("carried", 0),
            # the carry's values outside the round's cache are not among the cache's values_computed
            "kernel_values_computed": (kernel.get("values_computed", 0) + kernel.get("carry_values_outside", 0)
                                       if kernel else None),
            # the gradient's start in every round: the carry where it ran, else LibSVM's initialisation
            "kernel_values_gradient": (kernel.get("init_values", 0) + kernel.get("carry_values_outside", 0)
                                       if kernel else None),
            "sv_share": mean_of([r["n_sv"] / r["train_size"] for r in run["rounds"]]),
            "bounded_sv_share": mean_of([r["n_bounded_sv"] / r["train_size"] for r in run["rounds"]]),
            "iterations_round1": run["rounds"][0]["iterations"] if run["rounds"] else None,
            "predicted_positive": run["predicted"]["1"],
            "predicted_negative": run["predicted"]["-1"],
            "git_commit": provenance.get("git_commit"),
            "git_dirty": provenance.get("git_dirty"),
            "hostname": provenance.get("hostname"),
            "started_utc": provenance.get("started_utc"),
            "finished_utc": provenance.get("finished_utc"),
            "others_cpu_per_wall": provenance.get("others_cpu_per_wall"),
            "steal_per_wall": provenance.get("steal_per_wall"),
            "folds_sha256": run["folds_sha256"],
        })
    return pd.DataFrame(rows)


def mean_of(values: list[float]) -> float:
    """The mean of ``values``, NaN when there are none.

    Parameters
    ----------
    values : list of float
        The values, perhaps none.

    Returns
    -------
    float
        The mean, as a Python float.
    """
    return float(np.mean(values)) if values else float("nan")


# ---------------------------------------------------------------- a rerun against the published runs

# What a run repeats exactly on the same commit and BLAS kernels: per round, and for the whole run. Not the kernel
# mode: ``auto`` takes the Gram matrix or the shared cache by the memory free, and every mode gives the same figures.
REPEATED_ROUND_FIELDS = ("iterations", "n_correct", "n_sv", "n_bounded_sv", "objective", "rho")
REPEATED_RUN_FIELDS = ("folds_sha256", "n", "k", "method", "params")


def compare_with_published(published: str | os.PathLike, rerun: str | os.PathLike) -> pd.DataFrame:
    """One row per run under ``rerun``: whether it repeats the run of the same name under ``published``.

    Every deterministic figure is compared (folds, every round's iterations, support vectors, objective, rho
    and correct predictions), and the first differences are named. Timings and provenance may differ and are
    not compared.

    Parameters
    ----------
    published : str or os.PathLike
        The published folder of run summaries.
    rerun : str or os.PathLike
        The folder of the rerun's summaries; each must have a published run of the same name.

    Returns
    -------
    DataFrame
        One row per rerun run, ``same`` yes or no.
    """
    published, rerun = Path(published), Path(rerun)
    rows = []
    for path in find_runs(rerun):
        name = path.relative_to(rerun)
        if not (published / name).is_file():
            raise PublishError(f"{name}: no published run of that name under {published}")
        again, first = read_run(path), read_run(published / name)
        differences = [field for field in REPEATED_RUN_FIELDS if again.get(field) != first.get(field)]
        if len(again["rounds"]) != len(first["rounds"]):
            differences.append(f"rounds run ({len(again['rounds'])} against {len(first['rounds'])})")
        differences += [f"round {a['round']} {field}" for a, b in zip(again["rounds"], first["rounds"])
                        for field in REPEATED_ROUND_FIELDS if a[field] != b[field]][:3]
        rows.append({
            "run": str(name.with_suffix("")), "kernel mode (published)": f"{again['kernel_mode']} ({first['kernel_mode']})",
            "rounds": f"{len(again['rounds'])}",
            "iterations": formats.format_count(sum(r["iterations"] for r in again["rounds"])),
            "accuracy %": f"{again['summary']['accuracy']:.2f}",
            "published accuracy %": f"{first['summary']['accuracy']:.2f}",
            "commit": str(again["provenance"].get("git_commit"))[:10],
            "blas": str(again["provenance"].get("blas", "not recorded")),
            "same": "yes" if not differences else "no",
            "first differences": ", ".join(differences),
        })
    return pd.DataFrame(rows)


def sitting_numbers(runs: pd.DataFrame) -> pd.Series:
    """The sitting each run ran in, numbered from 0 in time order.

    A pause longer than SITTING_GAP between the end of every job before and the next one's start (the machine
    given back, the run resumed on another or the same one later) starts a new sitting.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).

    Returns
    -------
    Series
        The sitting's number by the index of ``runs``; missing for runs without both times.
    """
    spans = runs.dropna(subset=["started_utc", "finished_utc"])
    starts, ends = pd.to_datetime(spans["started_utc"]), pd.to_datetime(spans["finished_utc"])
    numbers = pd.Series(pd.NA, index=runs.index, dtype="Int64")
    sitting, last_end = -1, None
    for index in starts.sort_values(kind="stable").index:
        if last_end is not None and starts[index] <= last_end + SITTING_GAP:
            last_end = max(last_end, ends[index])
        else:
            sitting, last_end = sitting + 1, ends[index]
        numbers[index] = sitting
    return numbers


def mixed_sitting_groups(runs: pd.DataFrame) -> list[str]:
    """The (dataset, k) groups of one CPU whose runs come from more than one sitting, as "adult (k = 10)": the
    machine's speed may differ between sittings (a virtual machine's from day to day), and every ratio in the
    tables pairs two runs of one group. Groups of two CPUs are ``mixed_cpu_groups``'.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    """
    groups = runs.assign(sitting=sitting_numbers(runs), cpu=runs["cpu"].fillna("unknown CPU")).groupby(
        ["dataset", "k"])[["sitting", "cpu"]].nunique()
    return [f"{dataset} (k = {k})" for (dataset, k), counts in groups.iterrows()
            if counts["sitting"] > 1 and counts["cpu"] == 1]


def mixed_cpu_groups(runs: pd.DataFrame) -> list[str]:
    """The (dataset, k) groups whose runs come from more than one CPU, as "adult (k = 10)": every ratio in
    the tables pairs two runs of one group, so these are the ratios that compare two machines.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    """
    groups = runs.assign(cpu=runs["cpu"].fillna("unknown CPU")).groupby(["dataset", "k"])["cpu"].nunique()
    return [f"{dataset} (k = {k})" for (dataset, k), count in groups.items() if count > 1]
