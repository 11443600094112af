"""The published reproduction: a tracked folder rebuilt from run summaries alone.

A full-size run outlasts the machine it starts on, so each job commits its run summary
(``alphaseed.summaries``) to ``<folder>/runs/{dataset}/k{k}/{variant}.json`` as it lands, and
publishing reads nothing else: the tables (Markdown, CSV, LaTeX) beside the paper's, the
figures (PNG), ``runs.csv``, ``paper_vs_reproduced.md``, ``provenance.md`` and a ``README.md``
to link from the project's README. Every deviation from the paper is explained there with
numbers computed here from the summaries and from ``<folder>/kernel/{dataset}.json``, the
kernel facts of each dataset (``kernel_facts``: how far the Gaussian kernel with the config's
gamma is from the identity; ``training_class_counts``: the class counts of its Table 1 training
sets, on which a seeded round's start depends when the kernel is the identity).

Which table a run feeds is read from the runs themselves, as the paper lays its tables out:
leave-one-out runs feed the leave-one-out table, k = 10 runs Table 1, and every k-fold run of a
method that ran at more than one k Table 3.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures, tables
from .atomic import atomic_path
from .errors import AlphaseedError
from .folds import KFoldRounds, folds_sha256, stratified_folds
from .gaussian import blas_dots, dense_features, squared_norms
from .summaries import read_run

TABLE1_K = "10"
TABLE_FORMATS = ("md", "csv", "tex")
FIGURE_FORMATS = ("png",)
# Rows of the kernel computed at a time (rows x n float64 values) when looking for the nearest pair.
KERNEL_BLOCK_ROWS = 1024
# An iteration count differs from the paper's when the two ratios to LibSVM differ by more than this.
ITERATION_TOLERANCE = 0.10
# ATO, MIR and SIR start cold in round 1; AVG and TOP seed every round from the full model.
FIRST_SEEDED_ROUND = {"ato": 2, "mir": 2, "sir": 2, "avg": 1, "top": 1}
# A pause between jobs longer than this separates two sittings of the run (provenance.md).
SITTING_GAP = pd.Timedelta(minutes=30)


class PublishError(AlphaseedError, ValueError):
    """The folder to publish from is missing, empty or holds a file that is not a run."""


# ---------------------------------------------------------------- kernel facts


def kernel_facts(X, y, gamma: float) -> dict:
    """How close the Gaussian kernel of (X, gamma) is to the identity matrix.

    The largest off-diagonal value is exp(-gamma * d2) of the nearest pair of distinct indices,
    stored in float32 as the solver stores it (0 when the nearest pair is too far for float32);
    distances are ||x||^2 + ||z||^2 - 2 x.z in float64, as in the solver.
    """
    X = dense_features(X)
    sqnorm = squared_norms(X)
    n = X.shape[0]
    nearest, total, duplicates = np.inf, 0.0, 0
    for start in range(0, n, KERNEL_BLOCK_ROWS):
        rows = np.arange(start, min(n, start + KERNEL_BLOCK_ROWS))
        d2 = np.maximum(sqnorm[rows, None] + sqnorm[None, :] - 2.0 * blas_dots(X[rows], X), 0.0)
        d2[np.arange(rows.size), rows] = np.inf
        nearest = min(nearest, float(d2.min()))
        duplicates += int(np.count_nonzero(d2 == 0.0))
        total += float(np.exp(-gamma * d2).astype(np.float32).sum(dtype=np.float64))
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return {
        "n": int(n),
        "gamma": float(gamma),
        "nearest_squared_distance": nearest,
        "largest_off_diagonal": float(np.float32(np.exp(-gamma * nearest))),
        "mean_off_diagonal": total / max(n * (n - 1), 1),
        "duplicate_pairs": duplicates // 2,
        "majority_share": float(counts.max() / n) if n else 0.0,
        "majority_label": int(labels[counts.argmax()]) if n else 0,
    }


def training_class_counts(y, k: int, seed: int) -> dict:
    """The positives and size of each k-fold training set under the runs' folds (``stratified_folds`` with
    ``seed``), with the folds' sha256 so that a run's summary can be matched to them."""
    y = np.asarray(y)
    folds = stratified_folds(y, k, seed)
    rounds = KFoldRounds(folds, k)
    return {"k": k, "seed": seed, "folds_sha256": folds_sha256(folds),
            "train_positive": [int(np.count_nonzero(y[train] > 0)) for train, _ in rounds],
            "train_size": [int(train.size) for train, _ in rounds]}


def write_json(path: str | os.PathLike, content: dict) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(json.dumps(content, indent=1, allow_nan=False) + "\n", encoding="utf-8")


def read_kernel_facts(folder: Path) -> dict[str, dict]:
    if not folder.is_dir():
        return {}
    facts = {}
    for path in sorted(folder.glob("*.json")):
        try:
            facts[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise PublishError(f"kernel facts {path} are unreadable: {error}") from None
    return facts


# ---------------------------------------------------------------- the runs


def find_runs(folder: str | os.PathLike) -> list[Path]:
    """The run files {dataset}/k{k}/{variant}.json under ``folder``; an error when there are none."""
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
    ``gram`` or ``shared``), so only the method of the name is checked.
    """
    runs = []
    for path in paths:
        run = read_run(path)
        where = (path.parent.parent.name, path.parent.name, path.stem.partition("-")[0])
        found = (run["dataset"], f"k{tables.k_key(run['k'])}", run["method"])
        if where != found:
            raise PublishError(f"{path} holds the run of {'/'.join(found)}: it is misplaced or renamed")
        runs.append(run)
    return runs


def group_runs(paths: list[Path], runs: list[dict]) -> dict[str, list[Path]]:
    """Paths per table kind, laid out as the paper's tables (see the module's docstring)."""
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


def runs_frame(runs: list[dict]) -> pd.DataFrame:
    """One row per run: the tables' row, plus the job, its provenance and kernel work."""
    rows = []
    for run in runs:
        provenance, kernel = run["provenance"], run["kernel"] or {}
        seeded = [r for r in run["rounds"] if r["round"] >= FIRST_SEEDED_ROUND.get(run["method"], np.inf)]
        rows.append({
            **tables.record_row(run),
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
            "sv_share": _mean([r["n_sv"] / r["train_size"] for r in run["rounds"]]),
            "bounded_sv_share": _mean([r["n_bounded_sv"] / r["train_size"] for r in run["rounds"]]),
            "iterations_round1": run["rounds"][0]["iterations"] if run["rounds"] else None,
            "predicted_positive": run["predicted"]["1"],
            "predicted_negative": run["predicted"]["-1"],
            "git_commit": provenance.get("git_commit"),
            "git_dirty": provenance.get("git_dirty"),
            "hostname": provenance.get("hostname"),
            "started_utc": provenance.get("started_utc"),
            "finished_utc": provenance.get("finished_utc"),
            "folds_sha256": run["folds_sha256"],
        })
    return pd.DataFrame(rows)


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


# ---------------------------------------------------------------- deviations, measured


def _markdown(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False, disable_numparse=True) if len(frame) else "(none)"


def _section(title: str, paragraphs: list[str], table: pd.DataFrame, after: tuple[str, ...] = ()) -> list[str]:
    """A section of paper_vs_reproduced.md: its heading, its paragraphs, its table, then ``after``."""
    return [f"## {title}", ""] + [line for paragraph in paragraphs for line in (paragraph, "")] + [
        _markdown(table), ""] + [line for paragraph in after for line in (paragraph, "")]


def table1_baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each dataset's LibSVM run at k = 10, else our cold start's (which repeats LibSVM's steps: full MNIST runs
    it alone), indexed by dataset."""
    baseline = runs[(runs["k"] == TABLE1_K) & runs["method"].isin(["libsvm", "cold"])]
    return baseline.sort_values("method", key=lambda m: m != "libsvm").drop_duplicates("dataset").set_index(
        "dataset")


def identity_kernel_section(runs: pd.DataFrame, facts: dict[str, dict]) -> list[str]:
    """Why an accuracy equals the majority class: K close to I, every instance a support vector, one class predicted."""
    table1 = table1_baselines(runs)
    rows = []
    for dataset in tables._order(runs["dataset"], tables.DATASET_ORDER):
        fact = facts.get(dataset)
        run = table1.loc[dataset] if dataset in table1.index else None
        predicted = None if run is None else max(run["predicted_positive"], run["predicted_negative"]) / max(
            run["predicted_positive"] + run["predicted_negative"], 1)
        rows.append({
            "dataset": dataset,
            "n (kernel facts)": tables.format_count(fact["n"]) if fact else tables.NOT_AVAILABLE,
            "gamma": tables.format_number(fact["gamma"]) if fact else tables.NOT_AVAILABLE,
            "largest off-diagonal K": f"{fact['largest_off_diagonal']:.3g}" if fact else tables.NOT_AVAILABLE,
            "mean off-diagonal K": f"{fact['mean_off_diagonal']:.3g}" if fact else tables.NOT_AVAILABLE,
            "duplicate pairs": tables.format_count(fact["duplicate_pairs"]) if fact else tables.NOT_AVAILABLE,
            "SVs / training set (k = 10)": _percent(None if run is None else run["sv_share"]),
            "from": tables.NOT_AVAILABLE if run is None else run["label"],
            "bounded SVs / training set": _percent(None if run is None else run["bounded_sv_share"]),
            "predictions in the larger class": _percent(predicted),
            "majority class": _percent(fact["majority_share"] if fact else None),
            "accuracy (this run)": _percent(None if run is None else run["accuracy"] / 100),
        })
    missing = sorted(set(runs["dataset"]) - set(facts))
    return _section("Where the kernel is (nearly) the identity", [
        "With the paper's gamma on raw features, the Gaussian kernel of a dataset whose instances are far apart is "
        "close to the identity matrix: every instance becomes a support vector, the decision value of a test "
        "instance is the bias alone, and every test instance falls in one class, so the accuracy is the share of "
        "the majority class. The kernel facts are computed on the data the runs used (after any subsample) with "
        "the config's gamma, in float32 as the solver stores K; the shares come from this run's LibSVM run at "
        "k = 10 (mean over rounds), or where LibSVM did not run from our cold start's, which repeats LibSVM's "
        "steps (column from).",
    ], pd.DataFrame(rows), after=(f"No kernel facts for {', '.join(missing)} (run `alphaseed kernel-facts`).",)
        if missing else ())


def _percent(value) -> str:
    return tables.NOT_AVAILABLE if value is None or not np.isfinite(value) else f"{100 * value:.2f} %"


def iterations_section(frame: pd.DataFrame) -> list[str]:
    """Iterations beside the paper's, relative to LibSVM's on the same data, where the two disagree.

    Counts are the same in every kernel mode, so a method run only in a fast mode (full MNIST's) stands in with
    that run's, and LibSVM's count is our cold start's where LibSVM itself did not run.
    """
    ours = {}  # (dataset, method) -> the run whose counts stand: the paper-faithful one where there is one
    for _, row in frame.dropna(subset=["iterations"]).iterrows():
        key = (row["dataset"], row["method"])
        if key not in ours or pd.isna(row["kernel_mode"]) or row["kernel_mode"] == "cache":
            ours[key] = row
    paper = frame.dropna(subset=["paper_iterations"]).drop_duplicates(["dataset", "method"])
    rows = []
    for _, row in paper.iterrows():
        run = ours.get((row["dataset"], row["method"]))
        base = ours.get((row["dataset"], "libsvm"), ours.get((row["dataset"], "cold")))
        paper_base = paper[(paper["dataset"] == row["dataset"]) & (paper["method"] == "libsvm")]
        if run is None or base is None or paper_base.empty:
            continue
        ratio, paper_ratio = run["iterations"] / base["iterations"], row["paper_iterations"] / paper_base.iloc[0][
            "paper_iterations"]
        rows.append({
            "dataset": row["dataset"], "method": run["label"],
            "iterations (paper)": tables.format_count(row["paper_iterations"]),
            "iterations (this run)": tables.format_count(run["iterations"]) + (
                tables.ESTIMATED if run["iterations_estimated"] else ""),
            "this run / paper": f"{run['iterations'] / row['paper_iterations']:.3f}",
            "/ LibSVM (paper)": f"{paper_ratio:.3f}", "/ LibSVM (this run)": f"{ratio:.3f}",
            "round 1 (cold) iterations": tables.format_count(run["iterations_round1"]),
            # counts over the first rounds only do not compare with the paper's totals
            "differs": ("first rounds only" if run["iterations_estimated"] or base["iterations_estimated"]
                        else "yes" if abs(ratio / paper_ratio - 1) > ITERATION_TOLERANCE else ""),
            "_gap": abs(np.log(ratio / paper_ratio)),
        })
    table = pd.DataFrame(rows)
    differing = table[table["differs"] == "yes"] if len(table) else table
    subsampled = frame.dropna(subset=["subsample"])["dataset"].unique()
    paragraphs = [
        "LibSVM's own iteration count on the same data is the yardstick: the ratio method / LibSVM is compared with "
        "the paper's, so a different fold assignment or sample moves both. A row differs when the two ratios are "
        f"more than {ITERATION_TOLERANCE:.0%} apart; {len(differing)} of {len(table)} rows do. Round 1 of ATO, MIR "
        "and SIR is a cold start, so its iterations bound how much a seeder can save over k rounds. A method run "
        "only in a fast kernel mode shows that run's counts (the same in every mode), and where LibSVM did not run "
        "our cold start's count stands for it (it reproduces LibSVM's step for step). Where the kernel is the "
        "identity, the next section explains the seeded counts.",
    ]
    if len(subsampled):
        paragraphs.append(f"Runs on stratified subsamples ({', '.join(subsampled)}): their absolute counts do not "
                          "compare with the paper's full-size ones; the ratios to LibSVM do, roughly.")
    ordered = table.sort_values("_gap", ascending=False).drop(columns="_gap") if len(table) else table
    return _section("Iterations beside the paper's (Table 1, k = 10)", paragraphs, ordered)


def class_counts_section(summaries: list[dict], facts: dict[str, dict]) -> list[str]:
    """Seeded rounds on an exact identity kernel, by whether the training set kept the previous round's class
    counts: there the optimum depends on those counts alone, so a seed can start at it."""
    rows = []
    for run in summaries:
        fact = facts.get(run["dataset"], {})
        counts = fact.get("training_class_counts", {})
        first = FIRST_SEEDED_ROUND.get(run["method"])
        if (tables.k_key(run["k"]) != TABLE1_K or first != 2 or fact.get("largest_off_diagonal") != 0.0
                or counts.get("folds_sha256") != run["folds_sha256"]):
            continue
        kept, changed = [], []
        for r in run["rounds"][1:]:
            h = r["round"] - 1
            same = all(counts[key][h] == counts[key][h - 1] for key in ("train_positive", "train_size"))
            (kept if same else changed).append(r["iterations"])
        rows.append({
            "dataset": run["dataset"], "method": tables.method_label(run["method"], run["kernel_mode"]),
            "seeded rounds run": f"{len(kept) + len(changed)}",
            "counts kept: rounds": f"{len(kept)}",
            "counts kept: at 0 iterations": f"{kept.count(0)}",
            "counts kept: iterations": tables.format_count(sum(kept)),
            "counts changed: rounds": f"{len(changed)}",
            "counts changed: at 0 iterations": f"{changed.count(0)}",
            "counts changed: iterations": tables.format_count(sum(changed)),
        })
    if not rows:
        return []
    datasets = tables._order({row["dataset"] for row in rows}, tables.DATASET_ORDER)
    labels = tables._order({row["method"] for row in rows}, tables.METHOD_ORDER)
    rows.sort(key=lambda row: (datasets.index(row["dataset"]), labels.index(row["method"])))
    return _section("Seeded rounds on an identity kernel", [
        "Where K is exactly the identity in float32 (largest off-diagonal K = 0 in the kernel facts), Q = I and the "
        "dual's optimum depends on the training set's class counts alone: with every alpha free, "
        "alpha_i = 1 - y_i b with b = (n+ - n-) / l; with every alpha at C, any such alpha is optimal once the classes "
        "balance (sum y alpha = 0). Our folds are stratified, so consecutive training sets often have the same class "
        "counts; a seed that keeps the shared instances' alpha and gives the added ones the removed ones' (SIR, ATO) "
        "then starts at the optimum, and the round takes 0 iterations. A change of one instance per class moves b by "
        "about 2/l, under the stopping tolerance on a large l, so some of those rounds take none either. The paper "
        "does not say how it assigned folds; its seeded rounds' counts fit starts away from this optimum. Rounds "
        "from 2 on (round 1 is cold), class counts from the kernel facts' fold assignment, matched to each run's by "
        "its sha256:",
    ], pd.DataFrame(rows))


def carry_section(runs: pd.DataFrame) -> list[str]:
    """The gradient carry-over's share of the seeded rounds' time, per seeded run in the paper's kernel mode."""
    seeded = runs[(runs["seeded_rounds"] > 0) & (runs["kernel_mode"] == "cache")]
    rows = [{
        "dataset": row["dataset"], "k": row["k"], "method": row["label"],
        "seeded rounds": f"{row['seeded_rounds']}", "carried": f"{row['carried_rounds']}",
        "gradient start s": tables.format_seconds(row["seconds_gradient_init_seeded"]),
        "share of the seeded rounds' time": _percent(
            row["seconds_gradient_init_seeded"] / row["seconds_rounds_seeded"] if row["seconds_rounds_seeded"]
            else None),
        "kernel values for the gradient": tables.format_count(row["kernel_values_gradient"]),
        "kernel values in all": tables.format_count(row["kernel_values_computed"]),
    } for _, row in seeded.iterrows()]
    return _section("What the gradient carry-over costs", [
        tables.CARRY_NOTE + "\n"
        "The table gives, for every seeded run in the paper's kernel mode, how many seeded rounds carried the "
        "gradient (G' = G + Q delta-alpha; the others computed it from the seed, as LibSVM's warm start does), the "
        "time the seeded rounds spent starting the gradient and its share of their time, and the kernel values "
        "computed for the gradient's start (all rounds) among all the run computed. Computing the gradient anew "
        "from the seed takes one kernel row per non-zero alpha of the seed: on a dataset where every instance is "
        "a support vector, the whole matrix in every round.",
    ], pd.DataFrame(rows))


def loo_estimates_section(summaries: list[dict], runs: pd.DataFrame) -> list[str]:
    """What each estimated leave-one-out time rests on: the rounds measured and their iterations.

    A seeded leave-one-out round swaps one instance, so its cost swings between nothing (the seed is
    already optimal) and a cold training's; an estimate from one or two such rounds says how cheap
    a round can be, not how cheap the average one is.
    """
    sv_share = table1_baselines(runs)["sv_share"]
    rows = []
    for run in summaries:
        if tables.k_key(run["k"]) != "loo" or not run["summary"]["estimated"]:
            continue
        first = FIRST_SEEDED_ROUND.get(run["method"], np.inf)
        seeded = [r for r in run["rounds"] if r["round"] >= first]
        measured = seeded or run["rounds"]
        iterations = [r["iterations"] for r in measured]
        rows.append({
            "dataset": run["dataset"], "method": tables.method_label(run["method"], run["kernel_mode"]),
            "rounds measured": f"{run['summary']['rounds_run']} of {tables.format_count(run['summary']['rounds_total'])}",
            "seeded rounds measured": f"{len(seeded)}" if first != np.inf else tables.NOT_AVAILABLE,
            "iterations per round (measured, seeded where seeded)": (
                ", ".join(tables.format_count(i) for i in iterations) if len(iterations) <= 3 else
                f"{tables.format_count(np.median(iterations))} median, {tables.format_count(min(iterations))}"
                f"-{tables.format_count(max(iterations))}"),
            "rounds at 0 iterations": f"{iterations.count(0)} of {len(iterations)}",
            "s per round (mean)": tables.format_seconds(_mean([sum(r["seconds"].values()) for r in measured])),
            "estimated total s": tables.format_seconds_scientific(run["summary"]["seconds"]["total"]),
            "SVs / training set (k = 10)": _percent(sv_share.get(run["dataset"])),
        })
    if not rows:
        return []
    return _section("Leave-one-out estimates: what they rest on", [
        "A leave-one-out round trains on n - 1 instances, so one round of LibSVM or of a cold start costs a full "
        "training; on Adult and Webdata this run measured one or two rounds per method (the paper 100 and 30) and "
        "counted the others at the mean of those measured (for ATO, MIR and SIR the seeded rounds, round 1 being "
        "cold). A seeded round differs from the previous one by one instance out and one back in: where neither "
        "is a support vector the seed is already optimal and the round takes no iterations, and where they are, "
        "the round repairs the model around them. So an estimate resting on one or two seeded rounds measures "
        "how cheap a round can be, not the average round; the share of instances that are support vectors (last "
        "column) says how often a swap touches the model. Read the Adult and Webdata leave-one-out ratios as "
        "orders of magnitude, and compare the methods on Heart (complete) and Madelon (100-200 rounds).",
    ], pd.DataFrame(rows))


def machines_section(runs: pd.DataFrame) -> list[str]:
    """Which CPU ran which runs, when the run moved between machines: a ratio is only sound between two runs of
    one CPU, and every ratio in the tables pairs runs of one dataset and one k."""
    cpus = runs["cpu"].fillna("unknown CPU")
    if cpus.nunique() < 2:
        return []
    groups = runs.assign(cpu=cpus).groupby(["dataset", "k"])["cpu"].nunique()
    mixed = [f"{dataset} (k = {k})" for (dataset, k), count in groups.items() if count > 1]
    rows = [{"CPU": cpu, "runs": f"{len(group)}",
             "datasets and k": "; ".join(f"{dataset} k = {', '.join(sorted(ks['k'].unique(), key=tables._k_sort))}"
                                         for dataset, ks in group.groupby("dataset"))}
            for cpu, group in runs.assign(cpu=cpus).groupby("cpu")]
    return _section("Machines", [
        "The run moved between machines, each sitting on the one it was given. Every ratio in the tables "
        "(libsvm/method, cold/method, method/SIR) pairs runs of one dataset at one k; "
        + (f"these mix CPUs, so read their ratios with care: {', '.join(mixed)}." if mixed else
           "no such pair mixes CPUs, so the ratios hold, while absolute seconds of different CPUs do not compare."),
    ], pd.DataFrame(rows))


def estimates_section(runs: pd.DataFrame) -> list[str]:
    """Every estimated run and every run with a capped round, with the rounds measured."""
    flagged = runs[runs["estimated"] | runs["iteration_cap_hit"]]
    rows = [{
        "table": row["tables"], "dataset": row["dataset"], "k": row["k"], "method": row["label"],
        "rounds measured": f"{row['rounds_run']} of {row['rounds_total']}",
        "estimated": tables.ESTIMATED if row["estimated"] else "",
        "rounds at the iteration cap": f"{row['rounds_capped']}" if row["rounds_capped"] else "",
    } for _, row in flagged.iterrows()]
    return _section("Estimated rows and capped rounds", [
        tables.ESTIMATE_NOTE,
        f"{int(runs['estimated'].sum())} of {len(runs)} runs are estimated; "
        f"{int(runs['iteration_cap_hit'].sum())} hit the iteration cap in some round.",
    ], pd.DataFrame(rows))


# ---------------------------------------------------------------- a rerun against the published runs

# What a run repeats exactly on the same commit and BLAS kernels: per round, and for the whole run. Not the kernel
# mode: ``auto`` takes the Gram matrix or the shared cache by the memory free, and every mode gives the same figures.
REPEATED_ROUND_FIELDS = ("iterations", "n_correct", "n_sv", "n_bounded_sv", "objective", "rho")
REPEATED_RUN_FIELDS = ("folds_sha256", "n", "k", "method", "params")


def compare_with_published(published: str | os.PathLike, rerun: str | os.PathLike) -> pd.DataFrame:
    """One row per run under ``rerun``: whether it repeats the run of the same name under ``published`` in every
    deterministic figure (folds, every round's iterations, support vectors, objective, rho and correct
    predictions), and where it differs first. Timings and provenance may differ and are not compared."""
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
            "iterations": tables.format_count(sum(r["iterations"] for r in again["rounds"])),
            "accuracy %": f"{again['summary']['accuracy']:.2f}",
            "published accuracy %": f"{first['summary']['accuracy']:.2f}",
            "commit": str(again["provenance"].get("git_commit"))[:10],
            "blas": str(again["provenance"].get("blas", "not recorded")),
            "same": "yes" if not differences else "no",
            "first differences": ", ".join(differences),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the documents


def sittings(runs: pd.DataFrame) -> pd.DataFrame:
    """The stretches of time in which the jobs ran: a pause longer than SITTING_GAP between one job's end and
    the next one's start (the machine given back, the run resumed elsewhere) starts a new sitting."""
    spans = runs.dropna(subset=["started_utc", "finished_utc"])
    spans = pd.DataFrame({"start": pd.to_datetime(spans["started_utc"]), "end": pd.to_datetime(spans["finished_utc"])})
    rows = []
    for start, end in spans.sort_values("start").itertuples(index=False):
        if rows and start <= rows[-1]["end"] + SITTING_GAP:
            rows[-1]["end"] = max(rows[-1]["end"], end)
            rows[-1]["jobs"] += 1
        else:
            rows.append({"start": start, "end": end, "jobs": 1})
    frame = pd.DataFrame(rows, columns=["start", "end", "jobs"])
    frame["elapsed_seconds"] = (frame["end"] - frame["start"]).dt.total_seconds()
    return frame


def provenance_document(runs: pd.DataFrame, summaries: list[dict]) -> str:
    commits = runs.groupby(["git_commit", "git_dirty"], dropna=False).size()
    libraries = {key: sorted({str(s["provenance"].get(key, "not recorded")) for s in summaries})
                 for key in ("python", "numpy", "scipy", "numba", "libsvm", "sklearn", "blas")}
    walls = runs["wall_seconds"].dropna()
    jobs = runs.sort_values("finished_utc")[
        ["dataset", "k", "label", "wall_seconds", "seconds_measured_total", "rounds_run", "rounds_total", "threads",
         "cpu", "hostname", "git_commit", "finished_utc"]].copy()
    jobs["git_commit"] = jobs["git_commit"].str[:10]
    stretches = sittings(runs)
    per_experiment = runs.groupby(["tables", "dataset"], sort=True).agg(
        jobs=("wall_seconds", "size"), wall=("wall_seconds", "sum")).reset_index()
    per_experiment["wall"] = per_experiment["wall"].map(lambda v: f"{v / 60:,.1f}")
    per_experiment = per_experiment.rename(columns={"tables": "table", "wall": "job wall min"})
    per_experiment["jobs"] = per_experiment["jobs"].astype(str)
    jobs["wall_seconds"] = jobs["wall_seconds"].map(lambda v: tables.NOT_AVAILABLE if pd.isna(v) else f"{v:.1f}")
    jobs["seconds_measured_total"] = jobs["seconds_measured_total"].map(tables.format_seconds)
    lines = [
        "# Provenance of the published runs",
        "",
        f"- runs: {len(runs)}, run between {runs['started_utc'].min()} and {runs['finished_utc'].max()} (UTC)",
        "- commits: " + "; ".join(f"{commit} ({'dirty' if dirty else 'clean'}): {count} run(s)"
                                  for (commit, dirty), count in commits.items()),
        "- CPUs: " + "; ".join(sorted(runs["cpu"].dropna().unique())),
        "- hosts: " + "; ".join(sorted(runs["hostname"].dropna().unique())),
        "- threads per job: " + ", ".join(str(int(t)) for t in sorted(runs["threads"].dropna().unique())),
        "- libraries: " + "; ".join(f"{key} {', '.join(values)}" for key, values in libraries.items()),
        f"- wall time of the jobs: {walls.sum():,.0f} s summed over {len(walls)} job(s) that recorded it "
        f"({walls.sum() / 3600:.2f} h)",
        f"- elapsed time of the run: {stretches['elapsed_seconds'].sum() / 3600:.2f} h summed over "
        f"{len(stretches)} sitting(s) (first job's start to last job's end; a pause over "
        f"{SITTING_GAP.total_seconds() / 60:.0f} minutes starts a new sitting)",
        "",
        "## Sittings",
        "",
        _markdown(pd.DataFrame({
            "started (UTC)": stretches["start"].dt.strftime("%Y-%m-%d %H:%M"),
            "ended (UTC)": stretches["end"].dt.strftime("%Y-%m-%d %H:%M"),
            "jobs": stretches["jobs"].astype(str),
            "elapsed h": stretches["elapsed_seconds"].map(lambda v: f"{v / 3600:.2f}"),
        })),
        "",
        "## Wall time per experiment",
        "",
        "Summed over the jobs of each table and dataset.",
        "",
        _markdown(per_experiment),
        "",
        "## Wall time per job",
        "",
        "Wall time is the whole job (loading, compilation, writing); measured seconds are the cross-validation's "
        "own rounds.",
        "",
        _markdown(jobs.rename(columns={"label": "method", "seconds_measured_total": "measured s",
                                       "wall_seconds": "wall s"})),
        "",
    ]
    return "\n".join(lines)


README_BEGIN = "<!-- reproduction: begin (written by alphaseed publish --readme) -->"
README_END = "<!-- reproduction: end -->"


def readme_document(table1: pd.DataFrame, runs: pd.DataFrame, prefix: str = "", studies=()) -> str:
    """The published folder's README (links relative to it), or with the folder's path as ``prefix`` the section
    under the project's README's own heading. ``table1`` is Table 1's comparison frame; ``studies``, the studies
    beyond the paper whose tables the folder holds too (linked)."""
    subsampled = sorted(runs.dropna(subset=["subsample"])["dataset"].unique())
    size = f"on stratified subsamples of {', '.join(subsampled)}" if subsampled else "at full size"
    dirty_runs = runs.assign(dirty=runs["git_dirty"].fillna(False).astype(bool)).groupby("git_commit")["dirty"].sum()
    commits = ", ".join(f"`{commit[:10]}`" + (f" ({dirty} in a checkout with uncommitted changes)" if dirty else "")
                        for commit, dirty in dirty_runs.items())
    walls = runs["wall_seconds"].dropna()
    elapsed = sittings(runs)["elapsed_seconds"].sum()
    sub = "###" if prefix else "##"
    return "\n".join([
        *([] if prefix else ["# The paper, reproduced", ""]),
        f"{len(runs)} runs {size}, from commit(s) {commits or 'unknown'} on {'; '.join(runs['cpu'].dropna().unique())}, "
        f"{walls.sum() / 3600:.2f} h of job wall time in {elapsed / 3600:.2f} h elapsed, finished "
        f"{runs['finished_utc'].max()} (UTC). `alphaseed publish` built this from the run summaries in "
        f"[{prefix}runs/]({prefix}runs/) alone, each job having written its summary as it finished.",
        "",
        f"{sub} Table 1, beside the paper's",
        "",
        _markdown(tables.table1_at_a_glance(table1)),
        "",
        f"k = 10, seconds summed over the rounds. {tables.ESTIMATED} estimated from the first rounds, as the paper "
        f"did for its longest runs; {tables.CAP_HIT} a round stopped at the iteration cap. The paper's seconds are "
        "from its 6-core Xeon E5-2620, so compare the ratios. Fast engine: the same method in this project's "
        "`auto` kernel mode (the Gram matrix where it fits), one thread. Every kernel mode, init and rest "
        f"seconds, and which rounds were run: [tables/table1.md]({prefix}tables/table1.md); every deviation, "
        f"measured: [paper_vs_reproduced.md]({prefix}paper_vs_reproduced.md).",
        "",
        f"{sub} Leave-one-out: time relative to SIR",
        "",
        f"![leave-one-out]({prefix}figures/loocv.png)" if (runs["k"] == "loo").any() else "(no leave-one-out run yet)",
        "",
        f"{sub} Everything else",
        "",
        f"- [paper_vs_reproduced.md]({prefix}paper_vs_reproduced.md): every figure beside the paper's, and every "
        "deviation explained with measured numbers",
        f"- [tables/]({prefix}tables/): Tables 1-3 and the leave-one-out table (Markdown, CSV, LaTeX)",
        f"- [figures/]({prefix}figures/): iterations per round, speedup against k, leave-one-out",
        f"- [runs.csv]({prefix}runs.csv): one row per run; [provenance.md]({prefix}provenance.md): commit, CPU, "
        "threads, wall time per job",
        *[f"- beyond the paper, the study `{study}` (its own tables, never mixed into the paper's rows): "
          f"[tables/{tables.study_names(study)['comparison']}.md]({prefix}tables/"
          f"{tables.study_names(study)['comparison']}.md) and the `*_{study}` tables beside it" for study in studies],
        "",
    ])


def _readme_around(readme: Path) -> tuple[str, str]:
    """The project's README before and after its reproduction markers; an error without them."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError as error:
        raise PublishError(f"cannot read {readme}: {error.strerror}") from None
    if text.count(README_BEGIN) != 1 or text.count(README_END) != 1 or text.index(README_BEGIN) > text.index(
            README_END):
        raise PublishError(f"{readme} needs one line {README_BEGIN!r} and, after it, one line {README_END!r}")
    before, rest = text.split(README_BEGIN)
    return before, rest.split(README_END)[1]


def embed_in_readme(readme: str | os.PathLike, section: str) -> None:
    """Replace the text between the reproduction markers of the project's README with ``section``."""
    before, after = _readme_around(Path(readme))
    tables.write_text(readme, f"{before}{README_BEGIN}\n{section}{README_END}{after}")


def publish_folder(runs_folder: str | os.PathLike, out: str | os.PathLike, paper_path: str | os.PathLike,
                   kernel_folder: str | os.PathLike | None = None, readme: str | os.PathLike | None = None,
                   studies: dict[str, set[str]] | None = None) -> list[Path]:
    """Rebuild the published folder ``out`` from the run summaries (or records) under ``runs_folder``.

    ``studies`` maps each study beyond the paper to the datasets only it runs: their runs go to that study's
    own tables in ``out/tables`` (as rule study_tables writes them), never into the paper's.
    """
    studies = studies or {}
    paths = find_runs(runs_folder)
    of_study = {study: [path for path in paths if path.parts[-3] in names] for study, names in studies.items()}
    beyond = {path for study_paths in of_study.values() for path in study_paths}
    paper_paths = [path for path in paths if path not in beyond]
    if not paper_paths:
        raise PublishError(f"{runs_folder}: no run summary outside the studies beyond the paper "
                           f"({', '.join(sorted(studies))})")
    written = publish(group_runs(paper_paths, read_runs(paper_paths)), out, paper_path, kernel_folder, readme,
                      [study for study, study_paths in of_study.items() if study_paths])
    for study, study_paths in of_study.items():
        if study_paths:
            written += tables.write_tables(group_runs(study_paths, read_runs(study_paths)), paper_path,
                                           Path(out) / "tables", formats=TABLE_FORMATS, study=study)
    return written


def publish(groups: dict[str, list], out: str | os.PathLike, paper_path: str | os.PathLike,
            kernel_folder: str | os.PathLike | None = None, readme: str | os.PathLike | None = None,
            studies=()) -> list[Path]:
    """Rebuild the published folder ``out`` from the run summaries (or records) of each table kind.

    ``kernel_folder`` (default ``out/kernel``) holds the kernel facts, ``{dataset}.json``; ``readme``, the
    project's README, gets Table 1, the leave-one-out figure and the links between its reproduction markers;
    ``studies``, the studies beyond the paper whose tables go in the folder too, are linked from both READMEs.
    """
    out = Path(out)
    if readme is not None:
        _readme_around(Path(readme))  # refuse before writing anything
    paths = list(dict.fromkeys(Path(path) for group in groups.values() for path in group))
    groups = {kind: [Path(path) for path in group] for kind, group in groups.items()}
    summaries = read_runs(paths)
    facts = read_kernel_facts(Path(kernel_folder) if kernel_folder is not None else out / "kernel")
    written = tables.write_tables(groups, paper_path, out / "tables", formats=TABLE_FORMATS, with_comparison=False)
    written += figures.write_figures(groups, paper_path, out / "figures", formats=FIGURE_FORMATS)

    runs = runs_frame(summaries)
    runs.insert(0, "tables", [", ".join(kind for kind, group in groups.items() if path in group) for path in paths])
    tables.write_csv(out / "runs.csv", runs)
    paper = tables.read_paper_results(paper_path)
    frames = {kind: tables.comparison(tables.load_runs(group), paper, kind) for kind, group in groups.items()}
    extra = runs[["dataset", "k", "label", "iterations_round1"]]
    frames_table1 = frames["table1"].merge(extra, on=["dataset", "k", "label"], how="left")
    notes, sections = tables.comparison_document(frames, tables.table2(tables.load_runs(groups["table1"]), paper))
    deviations = (identity_kernel_section(runs, facts) + iterations_section(frames_table1)
                  + class_counts_section(summaries, facts) + carry_section(runs)
                  + loo_estimates_section(summaries, runs) + machines_section(runs) + estimates_section(runs))
    document = tables.document_markdown("Paper vs this reproduction", notes, sections)
    document += "\n# Deviations from the paper, measured\n\n" + "\n".join(deviations)
    tables.write_text(out / "paper_vs_reproduced.md", document)
    tables.write_text(out / "provenance.md", provenance_document(runs, summaries))
    tables.write_text(out / "README.md", readme_document(frames["table1"], runs, studies=studies))
    written += [out / name for name in ("runs.csv", "paper_vs_reproduced.md", "provenance.md", "README.md")]
    if readme is not None:
        prefix = os.path.relpath(out, Path(readme).parent).replace(os.sep, "/") + "/"
        embed_in_readme(readme, readme_document(frames["table1"], runs, prefix=prefix, studies=studies))
        written.append(Path(readme))
    return written
