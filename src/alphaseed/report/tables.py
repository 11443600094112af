"""The paper's Tables 1-3 and its leave-one-out results, rebuilt from run records beside the paper's numbers.

Run records (one per dataset, k, method and kernel mode) become one tidy frame; each table is that
frame filtered to one experiment kind and joined with ``workflow/resources/paper_results.csv``.
Every table is written three ways (CSV for programs, Markdown for people, LaTeX for papers), and
``paper_vs_reproduced.md`` puts every figure next to the paper's with the speedup ratios, because
the paper's absolute seconds come from another machine and only ratios compare.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..cv import PAPER_KERNEL_MODE, double_sampled, like_rounds
from ..errors import AlphaseedError
from ..pipeline.experiments import PAPER_STUDY, TABLE_KINDS
from ..pipeline.summaries import read_run
from .formats import (
    DATASET_ORDER,
    FLAGS,
    METHOD_ORDER,
    RATIO_FLAGS,
    comparison_document,
    document_html,
    document_markdown,
    format_seconds_scientific,
    k_key,
    k_order,
    method_label,
    ordered,
    seconds_wide,
    table1_wide,
    table2_wide,
    table_notes,
    to_latex,
    to_markdown,
    write_csv,
    write_text,
)

# ---------------------------------------------------------------- inputs


def read_paper_results(path: str | os.PathLike) -> pd.DataFrame:
    """The paper's numbers, one row per (table, dataset, k, method, metric).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV of the paper's numbers (``workflow/resources/paper_results.csv``).

    Returns
    -------
    DataFrame
        Its rows, ``k`` and ``note`` as text, ``value`` as float.
    """
    paper = pd.read_csv(path, dtype={"k": str, "note": str}, keep_default_na=False)
    paper["value"] = paper["value"].astype(float)
    return paper


RUN_COLUMNS = [
    "dataset", "k", "n_folds", "method", "kernel_mode", "label", "n", "dim", "C", "gamma", "subsample",
    "max_rounds", "seconds_init", "seconds_rest", "seconds_total", "seconds_measured_total", "iterations",
    "accuracy", "rounds_run", "rounds_total", "rounds_capped", "rounds_shared", "estimated", "interval",
    "interval_iterations", "stand_in", "stands_in_for_libsvm", "iteration_cap_hit", "kinds_from", "sv_share",
    "free_sv_share", "cpu", "threads",
]


def engine_label(record: dict) -> str:
    """The kernel mode a run's row is known by: the one it ran in, except that a run asking for a fast mode
    (``auto``) that resolved to LibSVM's ``cache`` (data held as bit sets) is ``"auto: cache"``, so that it is
    never taken for a paper-faithful run.

    Parameters
    ----------
    record : dict
        A run record or summary; one written before ``requested_kernel_mode`` was recorded counts as
        having asked for the mode it ran in.

    Returns
    -------
    str
    """
    resolved = record.get("kernel_mode")
    requested = record.get("requested_kernel_mode", resolved)
    return f"{requested}: {resolved}" if resolved == PAPER_KERNEL_MODE != requested else resolved


def record_row(record: dict) -> dict:
    """One run (its record or its summary, ``pipeline.summaries``) as a flat row of the runs frame.

    Parameters
    ----------
    record : dict
        The run record or summary, as ``pipeline.summaries.read_run`` reads it.

    Returns
    -------
    dict
        The row, keyed by ``RUN_COLUMNS``.
    """
    summary, params, seconds = record["summary"], record["params"], record["summary"]["seconds"]
    kernel_mode = None if record["method"] == "libsvm" else engine_label(record)
    # Shares of the training instances over the rounds run: with K (nearly) the identity every
    # instance is a support vector; the free ones (0 < alpha < C) are what seeding has to place.
    trained = sum(r["train_size"] for r in record["rounds"])
    support = sum(r["n_sv"] for r in record["rounds"])
    bounded = sum(r["n_bounded_sv"] for r in record["rounds"])
    return {
        "dataset": record["dataset"],
        "k": k_key(record["k"]),
        "n_folds": record["n_folds"],
        "method": record["method"],
        "kernel_mode": kernel_mode,
        "label": method_label(record["method"], kernel_mode),
        "n": record["n"],
        "dim": record["dim"],
        "C": params["C"],
        "gamma": params["gamma"],
        "subsample": params.get("subsample"),
        "max_rounds": params.get("max_rounds"),
        "seconds_init": seconds["init"],
        "seconds_rest": seconds["rest"],
        "seconds_total": seconds["total"],
        "seconds_measured_total": summary["seconds_measured_total"],
        "iterations": summary["iterations"],
        "accuracy": summary["accuracy"],
        "rounds_run": summary["rounds_run"],
        "rounds_total": summary["rounds_total"],
        "rounds_capped": sum(bool(r["iteration_cap_hit"]) for r in record["rounds"]),
        "rounds_shared": summary.get("rounds_shared", 0),
        "estimated": bool(summary["estimated"]),
        "interval": summary.get("interval"),
        "interval_iterations": summary.get("interval_iterations"),
        "stand_in": False,   # set by comparison on the copy of a run that stands in for LibSVM
        "stands_in_for_libsvm": record.get("stands_in_for") == "libsvm",
        "iteration_cap_hit": bool(summary["iteration_cap_hit"]),
        "kinds_from": None,
        "sv_share": 100 * support / trained,
        "free_sv_share": 100 * (support - bounded) / trained,
        "cpu": record.get("provenance", {}).get("cpu", "unknown CPU"),
        "threads": record.get("provenance", {}).get("threads"),
    }


def load_runs(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """The runs frame of run records or run summaries (they give the same rows).

    Parameters
    ----------
    paths : iterable of path
        The run record or summary files.

    Returns
    -------
    DataFrame
        One row per run (``record_row``), columns ``RUN_COLUMNS`` even when there is no run.
    """
    records = [read_run(p) for p in paths]
    return pd.DataFrame([record_row(r) | estimated_by_kind(r, records) for r in records], columns=RUN_COLUMNS)


def _took_iterations(rounds: list[dict]) -> list[bool]:
    return [r["iterations"] > 0 for r in rounds]


# What makes two runs' rounds the same rounds, but for their kernel mode.
SAME_ROUNDS_PARAMS = ("C", "gamma", "eps", "shrinking", "seed", "subsample")


def _same_rounds(one: dict, other: dict) -> bool:
    return ((one["dataset"], one["k"], one["method"], one["n"], one["folds_sha256"])
            == (other["dataset"], other["k"], other["method"], other["n"], other["folds_sha256"])
            and all(one["params"].get(p) == other["params"].get(p) for p in SAME_ROUNDS_PARAMS))


def estimated_by_kind(record: dict, records: list[dict]) -> dict:
    """A cut run's estimated figures again, its rounds left counted by kind (``estimate.double_sampled``).

    For a cut leave-one-out run. A round's kind is whether it took iterations. Its shares come from the longest
    run of the same rounds (dataset, k, method, folds and solver settings) in another kernel mode, whose first
    rounds took this run's iterations (every mode takes the same), where its rounds are of two kinds or more:
    in MNIST's seeded leave-one-out a round that took none carried its gradient over in seconds, and one that
    took some restarted it from every support vector, for minutes in the paper's setting, so a handful of rounds
    says little of how often each comes. Elsewhere (one kind, no such run, a kind this run did not draw)
    nothing changes.

    Parameters
    ----------
    record : dict
        A run summary (``read_run``).
    records : list of dict
        Every run summary published beside it.

    Returns
    -------
    dict
        The row's ``seconds_init``, ``seconds_rest``, ``seconds_total``, ``iterations``, ``interval``,
        ``interval_iterations`` and ``kinds_from`` (the other run's label) so estimated; empty where nothing
        changes.
    """
    summary, rounds, method = record["summary"], record["rounds"], record["method"]
    if not summary["estimated"] or method == "libsvm" or k_key(record["k"]) != "loo":
        return {}
    ran = [r["iterations"] for r in rounds]
    longer = [other for other in records
              if _same_rounds(other, record) and engine_label(other) != engine_label(record)
              and len(other["rounds"]) > len(rounds)
              and [r["iterations"] for r in other["rounds"][:len(rounds)]] == ran]
    if not longer:
        return {}
    other = max(longer, key=lambda r: len(r["rounds"]))
    first = _took_iterations(other["rounds"])
    if len(set(first[like_rounds(method)])) < 2:
        return {}
    kinds, left = _took_iterations(rounds), summary["rounds_total"] - len(rounds)
    seeds = [r["seconds"]["seed"] for r in rounds]
    totals = [sum(r["seconds"].values()) for r in rounds]
    estimates = [double_sampled(values, kinds, first, left, method)
                 for values in (seeds, np.subtract(totals, seeds), totals, ran)]
    if estimates[0] is None:
        return {}
    (seed, _), (rest, _), (_, width), (iterations, iterations_width) = estimates
    seconds = summary["seconds"]
    init = seconds.get("full_model", 0.0) + seed
    total = seconds["kernel"] + init + rest
    iterations += summary.get("iterations_full_model", summary["iterations_measured"] - sum(ran))
    return {
        "seconds_init": init,
        "seconds_rest": rest,
        "seconds_total": total,
        "iterations": round(iterations),
        "interval": None if width is None else (width / total if total > 0 else 0.0),
        "interval_iterations": (None if iterations_width is None
                                else iterations_width / iterations if iterations > 0 else 0.0),
        "kinds_from": method_label(method, engine_label(other)),
    }


# ---------------------------------------------------------------- comparison frames


def _paper_wide(paper: pd.DataFrame, table: str) -> pd.DataFrame:
    """Paper values of one table as columns ``paper_<metric>`` per (dataset, k, method)."""
    part = paper[paper["table"] == table]
    wide = part.pivot_table(index=["dataset", "k", "method"], columns="metric", values="value", aggfunc="first")
    wide = wide.reindex(columns=["seconds_init", "seconds_rest", "seconds_total", "iterations", "accuracy"])
    # The paper prints only init and rest for its seeded methods; their total is the sum.
    wide["seconds_total"] = wide["seconds_total"].fillna(wide["seconds_init"] + wide["seconds_rest"])
    wide = wide.add_prefix("paper_")
    notes = part.groupby(["dataset", "k", "method"])["note"].agg(lambda s: "; ".join(sorted({n for n in s if n})))
    wide["paper_estimated"] = notes.str.contains("estimated")
    wide["paper_note"] = notes
    return wide.reset_index()


COUNTS = ("iterations", "accuracy")


def complete_counts(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs whose estimated iterations and accuracy are replaced by those of a complete fast-mode run.

    A paper-faithful run estimated from its first rounds (``max_rounds``) takes the iterations and
    accuracy of the complete run of the same dataset, k and method in another kernel mode, and
    LibSVM's those of the complete cold run: every mode gives the same iterations and predictions,
    and our cold start gives LibSVM's.

    Parameters
    ----------
    runs : DataFrame
        The runs frame (``load_runs``).

    Returns
    -------
    DataFrame
        A copy with ``counts_from`` naming the source run, and ``iterations_<flag>`` and ``accuracy_<flag>``,
        the flags of the figures shown, so that counts taken from a complete run are not marked estimated.
    """
    frame = runs.copy()
    faithful = frame["kernel_mode"].isna() | (frame["kernel_mode"] == PAPER_KERNEL_MODE)
    complete = frame[~faithful & ~frame["estimated"]]
    sources = {(r["dataset"], r["k"], r["method"]): r for _, r in complete.iterrows()}
    frame["counts_from"] = None
    for flag in FLAGS:
        for metric in COUNTS:
            frame[f"{metric}_{flag}"] = frame[flag]
    for index, row in frame[faithful & frame["estimated"]].iterrows():
        method = "cold" if row["method"] == "libsvm" else row["method"]
        source = sources.get((row["dataset"], row["k"], method))
        if source is None:
            continue
        frame.loc[index, "counts_from"] = source["label"]
        for metric in COUNTS:
            frame.loc[index, metric] = source[metric]
            for flag in FLAGS:
                frame.loc[index, f"{metric}_{flag}"] = source[flag]
    return frame


def _with_stand_ins(frame: pd.DataFrame) -> pd.DataFrame:
    """LibSVM's row, flagged ``stand_in``, at each dataset and k where LibSVM did not run and a run marked to stand
    in for it (``stands_in_for_libsvm``: a cold start in kernel mode cache, which takes LibSVM's steps) did."""
    ran = set(zip(frame.loc[frame["method"] == "libsvm", "dataset"], frame.loc[frame["method"] == "libsvm", "k"]))
    marked = frame[frame["stands_in_for_libsvm"].fillna(False).astype(bool)]
    standing = marked[[(d, k) not in ran for d, k in zip(marked["dataset"], marked["k"])]]
    if not len(standing):
        return frame
    flags = {column: True for column in frame.columns if column == "stand_in" or column.endswith("_stand_in")}
    standing = standing.assign(method="libsvm", label="libsvm", kernel_mode=None, stands_in_for_libsvm=False, **flags)
    return pd.concat([frame, standing], ignore_index=True)


def _add_ratio(frame: pd.DataFrame, name: str, reference: pd.DataFrame, keys: list[str], *, paper: bool = False,
               inverse: bool = False) -> None:
    """``frame[name]`` = the reference's total seconds / this row's (``inverse``: this row's / the reference's),
    the reference matched on ``keys``; ``frame[name + "_" + flag]`` is true when either figure has the flag.

    The flags are the markers of the ratio's cell: a ratio over an estimated figure is an estimate, whichever
    side of the division that figure is on. ``frame[name + "_two_cpus"]`` is true where the two runs' CPUs differ
    (as recorded). ``paper`` takes the paper's figures and flags instead of this run's.
    """
    prefix = "paper_" if paper else ""
    value, flags = f"{prefix}seconds_total", [f"{prefix}{flag}" for flag in FLAGS if f"{prefix}{flag}" in frame]
    machine = ["cpu"] if not paper and "cpu" in frame and "cpu" in reference else []
    columns = [value, *flags, *machine]
    ref = reference[keys + columns].rename(columns={c: f"_ref_{c}" for c in columns})
    merged = frame[keys + columns].merge(ref, on=keys, how="left")
    ratio = merged[f"_ref_{value}"] / merged[value]
    frame[name] = (1.0 / ratio if inverse else ratio).to_numpy()
    for flag in flags:
        either = merged[flag].fillna(False).astype(bool) | merged[f"_ref_{flag}"].fillna(False).astype(bool)
        frame[f"{name}_{flag.removeprefix(prefix)}"] = either.to_numpy()
    if machine:
        ours, theirs = merged["cpu"], merged["_ref_cpu"]
        frame[f"{name}_two_cpus"] = (ours.notna() & theirs.notna() & (ours != theirs)).to_numpy()


def comparison(runs: pd.DataFrame, paper: pd.DataFrame, table: str) -> pd.DataFrame:
    """One row per run with its speedups and, for paper-faithful runs, the paper's figures beside.

    ``speedup_libsvm`` = libsvm seconds / this method's (same dataset and k), ``speedup_cold`` =
    cold seconds (same kernel mode; paper-faithful cold for libsvm) / this method's, and
    ``relative_to_sir`` = this method's seconds / SIR's (same kernel mode; paper-faithful SIR for libsvm), as in
    the LOO figure; the paper's
    ratios are ``paper_speedup_libsvm`` and ``paper_relative_to_sir``. Each ratio has its own
    ``<ratio>_estimated`` and ``<ratio>_iteration_cap_hit``, true when either of its figures has the flag, and
    each of this run's its ``<ratio>_two_cpus``, true where its two runs were made on different CPUs.

    Parameters
    ----------
    runs : DataFrame
        The runs frame of the table's runs (``load_runs``).
    paper : DataFrame
        The paper's numbers (``read_paper_results``).
    table : str
        The table kind (``TABLE_KINDS``), which picks the paper's rows.

    Returns
    -------
    DataFrame
        A row per run, and per paper row of these datasets that no paper-faithful run matches; sorted by
        dataset, k and method.
    """
    if table not in TABLE_KINDS:
        raise AlphaseedError(f"unknown table kind {table!r}; expected one of {TABLE_KINDS}")
    frame = _with_stand_ins(complete_counts(runs))
    keys = ["dataset", "k"]
    # LibSVM and its stand-in pair with the paper-faithful runs; every other run with its own kernel mode's.
    frame["_mode"] = frame["kernel_mode"].fillna(PAPER_KERNEL_MODE)
    libsvm = frame[frame["method"] == "libsvm"]
    cold = frame[frame["method"] == "cold"].assign(_mode=lambda f: f["kernel_mode"])
    sir = frame[frame["method"] == "sir"].assign(_mode=lambda f: f["kernel_mode"])
    _add_ratio(frame, "speedup_libsvm", libsvm, keys)
    _add_ratio(frame, "speedup_cold", cold, keys + ["_mode"])
    frame.loc[frame["stand_in"].fillna(False).astype(bool), "speedup_cold"] = np.nan  # the cold run over itself
    _add_ratio(frame, "relative_to_sir", sir, keys + ["_mode"], inverse=True)
    frame = frame.drop(columns="_mode")

    paper_wide = _paper_wide(paper, table)
    faithful = frame["kernel_mode"].isna() | (frame["kernel_mode"] == PAPER_KERNEL_MODE)
    frame["_join"] = np.where(faithful, frame["method"], None)
    ran_faithful = frame.loc[faithful, ["dataset", "k", "method"]]
    frame = frame.merge(
        paper_wide.rename(columns={"method": "_join"}), on=["dataset", "k", "_join"], how="left"
    ).drop(columns="_join")
    # Paper rows without a paper-faithful run here still belong beside ours (e.g. the paper's k = 100 in a quick
    # profile, or MNIST's SIR where only the fast engine ran it).
    paper_only = paper_wide.merge(ran_faithful, how="left", indicator=True)
    paper_only = paper_only[paper_only["_merge"] == "left_only"].drop(columns="_merge")
    paper_only = paper_only[paper_only["dataset"].isin(frame["dataset"])]
    paper_only = paper_only.assign(label=paper_only["method"], estimated=False, iteration_cap_hit=False)
    frame = pd.concat([frame, paper_only], ignore_index=True) if len(paper_only) else frame
    frame["paper_estimated"] = frame["paper_estimated"].fillna(False).astype(bool)

    _add_ratio(frame, "paper_speedup_libsvm", paper_wide[paper_wide["method"] == "libsvm"], keys, paper=True)
    _add_ratio(frame, "paper_relative_to_sir", paper_wide[paper_wide["method"] == "sir"], keys, paper=True,
               inverse=True)
    flag_columns = [c for c in frame.columns if c.endswith(FLAGS + RATIO_FLAGS)]
    frame[flag_columns] = frame[flag_columns].fillna(False).astype(bool)
    return _sorted(frame)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows by dataset, k and label, each in the tables' order (``ordered``, ``k_order``)."""
    dataset_rank = {d: i for i, d in enumerate(ordered(frame["dataset"], DATASET_ORDER))}
    label_rank = {m: i for i, m in enumerate(ordered(frame["label"], METHOD_ORDER))}
    ranks = pd.DataFrame(
        {
            "d": frame["dataset"].map(dataset_rank),
            "k": frame["k"].map(k_order),
            "m": frame["label"].map(label_rank),
        }
    )
    return frame.loc[ranks.sort_values(["d", "k", "m"]).index].reset_index(drop=True)


def table2(runs: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """The datasets as measured (after any subsample) with C and gamma, beside the paper's Table 2.

    Parameters
    ----------
    runs : DataFrame
        The runs frame (``load_runs``); a dataset's value of each column is the first one given.
    paper : DataFrame
        The paper's numbers (``read_paper_results``).

    Returns
    -------
    DataFrame
        One row per dataset: ``n``, ``dim``, ``C``, ``gamma``, ``subsample`` and their ``paper_`` columns.
    """
    measured = runs.groupby("dataset", sort=False)[["n", "dim", "C", "gamma", "subsample"]].first()
    reference = paper[paper["table"] == "table2"].pivot_table(index="dataset", columns="metric", values="value")
    reference = reference.reindex(columns=["n", "dim", "C", "gamma"]).add_prefix("paper_")
    frame = measured.join(reference, how="left").reset_index()
    frame = frame.set_index("dataset").loc[ordered(frame["dataset"], DATASET_ORDER)].reset_index()
    return frame


# ---------------------------------------------------------------- writing


# Each caption, and what it adds where the paper has figures to show beside this run's.
CAPTIONS = {
    "table1": ("Efficiency comparison (k = 10): elapsed time (s), iterations and accuracy", ", this run above the paper's"),
    "table2": ("Datasets and kernel parameters, as measured in this run", " and as printed in the paper"),
    "table3": ("Effect of k on total elapsed time (s)", ", this run above the paper's"),
    "loocv": ("Total elapsed time (s) of leave-one-out cross-validation", ", this run above the paper's"),
}


def table_caption(name: str, study: str) -> str:
    """The caption of a table, saying that the paper's figures sit beside this run's where they do.

    Parameters
    ----------
    name : str
        The table (a key of ``CAPTIONS``).
    study : str
        The study the table belongs to; only the paper's has the paper's figures.

    Returns
    -------
    str
        The caption, ending in a full stop.
    """
    base, beside_paper = CAPTIONS[name]
    return base + (beside_paper if study == PAPER_STUDY else "") + "."


TABLE_FORMATS = ("csv", "md", "tex", "html")
WIDE = {
    "table1": ("table1", table1_wide),
    "table3": ("table3", lambda frame: seconds_wide(frame, by_k=True)),
    "loocv": ("loo", lambda frame: seconds_wide(frame, by_k=False, formatter=format_seconds_scientific)),
}


def study_names(study: str) -> dict[str, str]:
    """File stem of each table of a study: the paper's own names, another study's with its name appended.

    Distinct names keep a study's runs out of the paper's tables when both are written to one folder.

    Parameters
    ----------
    study : str
        The study (``PAPER_STUDY`` for the paper's).

    Returns
    -------
    dict of str to str
        The stem of ``table1``, ``table2``, ``table3``, ``loocv`` and ``comparison``.
    """
    suffix = "" if study == PAPER_STUDY else f"_{study}"
    names = {name: f"{name}{suffix}" for name in ("table1", "table2", "table3", "loocv")}
    names["comparison"] = "paper_vs_reproduced" if study == PAPER_STUDY else f"speedups{suffix}"
    return names


def write_tables(groups: dict[str, list], paper_path: str | os.PathLike, out_dir: str | os.PathLike,
                 formats=TABLE_FORMATS, with_comparison: bool = True, study: str = PAPER_STUDY) -> list[Path]:
    """Write table1/2/3 and loocv, and paper_vs_reproduced (Markdown, HTML) unless not ``with_comparison``.

    Parameters
    ----------
    groups : dict
        Run record (or summary) paths per table kind (``table1``, ``table3``, ``loo``); Table 2 describes Table 1's.
    paper_path : str or os.PathLike
        The paper's numbers (``read_paper_results``).
    out_dir : str or os.PathLike
        The folder the files go to.
    formats : sequence of str
        The tables' formats, among ``csv``, ``md``, ``tex`` and ``html`` (default all four).
    with_comparison : bool
        Whether to write the comparison document too.
    study : str
        The study; another than the paper's writes under its own names (``study_names``), apart from the paper's.

    Returns
    -------
    list of Path
        The files written.
    """
    if not groups.get("table1"):
        raise AlphaseedError("Table 1 needs at least one run record: add a table1 experiment to the config")
    out_dir = Path(out_dir)
    paper = read_paper_results(paper_path)
    runs = {kind: load_runs(paths) for kind, paths in groups.items() if paths}
    frames = {kind: comparison(frame, paper, kind) for kind, frame in runs.items()}
    datasets = table2(runs["table1"], paper)
    cpu = ", ".join(sorted(runs["table1"]["cpu"].dropna().unique())) or "an unknown CPU"
    beyond = [] if study == PAPER_STUDY else [f"Beyond the paper (study {study}; the paper has no figure of its datasets)."]
    outputs = {"table2": (datasets, table2_wide(datasets), " ".join([*beyond, table_caption("table2", study)]))}
    for name, (kind, wide) in WIDE.items():
        if kind in frames:
            text = " ".join([*beyond, table_caption(name, study), *table_notes(frames[kind], cpu)])
            outputs[name] = (frames[kind], wide(frames[kind]), text)
    names = study_names(study)
    outputs = {names[name]: output for name, output in outputs.items()}
    written = []
    for name, (frame, wide, caption) in outputs.items():
        renderings = {
            "csv": lambda path: write_csv(path, frame),
            "md": lambda path: write_text(path, to_markdown(wide, caption)),
            "tex": lambda path: write_text(path, to_latex(wide, caption, f"tbl:{name}")),
            "html": lambda path: write_text(path, document_html(name, [caption], [("", wide)])),
        }
        for ext in formats:
            renderings[ext](out_dir / f"{name}.{ext}")
            written.append(out_dir / f"{name}.{ext}")
    if not with_comparison:
        return written
    notes, sections = comparison_document(frames, datasets)
    title = "Paper vs this run" if study == PAPER_STUDY else f"Beyond the paper, study {study}: figures and speedups"
    for ext, render in (("md", document_markdown), ("html", document_html)):
        write_text(out_dir / f"{names['comparison']}.{ext}", render(title, [*beyond, *notes], sections))
        written.append(out_dir / f"{names['comparison']}.{ext}")
    return written
