"""The deviations from the paper, each explained with numbers measured on the runs: the
sections of ``paper_vs_reproduced.md`` after its tables.

Each ``*_section`` function returns its section's lines (heading, paragraphs, table) as a list of str.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.experiments import TABLE1_K
from . import formats
from .documents import SEEDED_COUNTS_MEASURED, markdown_table
from .runs import FIRST_SEEDED_ROUND, mean_of, mixed_cpu_groups, mixed_sitting_groups

# An iteration count differs from the paper's when the two ratios to LibSVM differ by more than this.
ITERATION_TOLERANCE = 0.10


def _prose(text: str) -> str:
    """A paragraph written over several source lines, as one line of markdown."""
    return " ".join(text.split())


IDENTITY_KERNEL_NOTE = _prose("""
With the paper's gamma on raw features, the Gaussian kernel of a dataset whose instances are far apart is close
to the identity matrix: every instance becomes a support vector, the decision value of a test instance is the
bias alone, and every test instance falls in one class, so the accuracy is the share of the majority class. The
kernel facts are computed on the data the runs used (after any subsample) with the config's gamma, in float32 as
the solver stores K; the shares come from this run's LibSVM run at k = 10 (mean over rounds), or where LibSVM
did not run from our cold start's, which repeats LibSVM's steps (column from).
""")

IDENTITY_OPTIMUM_NOTE = _prose("""
Where K is exactly the identity in float32 (largest off-diagonal K = 0 in the kernel facts), Q = I and the
dual's optimum depends on the training set's class counts alone: with every alpha free, alpha_i = 1 - y_i b with
b = (n+ - n-) / l; with every alpha at C, any such alpha is optimal once the classes balance (sum y alpha = 0).
Our folds are stratified, so consecutive training sets often have the same class counts; a seed that keeps the
shared instances' alpha and gives the added ones the removed ones' (SIR, ATO) then starts at the optimum, and
the round takes 0 iterations. A change of one instance per class moves b by about 2/l, under the stopping
tolerance on a large l, so some of those rounds take none either. The paper does not say how it assigned folds;
its seeded rounds' counts fit starts away from this optimum. Rounds from 2 on (round 1 is cold), class counts
from the kernel facts' fold assignment, matched to each run's by its sha256:
""")

CARRY_TABLE_NOTE = _prose("""
The table gives, for every seeded run in the paper's kernel mode, how many seeded rounds carried the gradient
(G' = G + Q delta-alpha; the others computed it from the seed, as LibSVM's warm start does), the time the seeded
rounds spent starting the gradient and its share of their time, and the kernel values computed for the
gradient's start (all rounds) among all the run computed. Computing the gradient anew from the seed takes one
kernel row per non-zero alpha of the seed: on a dataset where every instance is a support vector, the whole
matrix in every round.
""")

LOO_ESTIMATES_NOTE = _prose("""
A leave-one-out round trains on n - 1 instances, so one round of LibSVM or of a cold start costs a full
training. On the large datasets each run measured a sample of rounds and counted the others at the mean of those
like them (for ATO, MIR and SIR the seeded rounds, round 1 being cold). The rounds test the instances in a seeded
random order, so the rounds run are a random sample of them; a run stopped once its estimated iterations were
known to ±20 % at 95 % (until_interval), or at its cap of rounds (max_rounds), whichever came first, and the
interval columns say which. A seeded round differs from the previous one by one instance out and one back in:
where neither is a support vector the seed is already optimal and the round takes no iterations, and where they
are, the round repairs the model around them. So the seeded rounds' costs are skewed, a few rounds costing the
most, and an interval is wide where the sample drew few of those; the share of instances that are support
vectors (last column) says how often a swap touches the model.
""")
OVERLAYS_NOTE = _prose("""
These jobs ran with an overlay on config.yaml (make sitting ... --configfile), so their rounds or settings are
not those config.yaml gives; each overlay's header says why, and its settings show in the run's params. A run
that an overlay cut short is estimated from its rounds and marked like any other cut run.
""")


def _section(title: str, paragraphs: list[str], table: pd.DataFrame, after: tuple[str, ...] = ()) -> list[str]:
    """A section of paper_vs_reproduced.md: its heading, its paragraphs, its table, then ``after``."""
    return [f"## {title}", ""] + [line for paragraph in paragraphs for line in (paragraph, "")] + [
        markdown_table(table), ""] + [line for paragraph in after for line in (paragraph, "")]


def table1_baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each dataset's LibSVM run at k = 10, else our cold start's, indexed by dataset.

    The cold start repeats LibSVM's steps, so it stands in where LibSVM did not run (full MNIST runs it alone).

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).

    Returns
    -------
    DataFrame
        One row per dataset with such a run.
    """
    baseline = runs[(runs["k"] == TABLE1_K) & runs["method"].isin(["libsvm", "cold"])]
    return baseline.sort_values("method", key=lambda m: m != "libsvm").drop_duplicates("dataset").set_index(
        "dataset")


def identity_kernel_section(runs: pd.DataFrame, facts: dict[str, dict]) -> list[str]:
    """Why an accuracy equals the majority class: K close to I, every instance a support vector, one class predicted.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    facts : dict of str to dict
        The kernel facts of each dataset (``pipeline.kernel_facts``).
    """
    table1 = table1_baselines(runs)
    rows = []
    for dataset in formats.ordered(runs["dataset"], formats.DATASET_ORDER):
        fact = facts.get(dataset)
        run = table1.loc[dataset] if dataset in table1.index else None
        predicted = None if run is None else max(run["predicted_positive"], run["predicted_negative"]) / max(
            run["predicted_positive"] + run["predicted_negative"], 1)
        rows.append({
            "dataset": dataset,
            "n (kernel facts)": formats.format_count(fact["n"]) if fact else formats.NOT_AVAILABLE,
            "gamma": formats.format_number(fact["gamma"]) if fact else formats.NOT_AVAILABLE,
            "largest off-diagonal K": f"{fact['largest_off_diagonal']:.3g}" if fact else formats.NOT_AVAILABLE,
            "mean off-diagonal K": f"{fact['mean_off_diagonal']:.3g}" if fact else formats.NOT_AVAILABLE,
            "duplicate pairs": formats.format_count(fact["duplicate_pairs"]) if fact else formats.NOT_AVAILABLE,
            "SVs / training set (k = 10)": _percent(None if run is None else run["sv_share"]),
            "from": formats.NOT_AVAILABLE if run is None else run["label"],
            "bounded SVs / training set": _percent(None if run is None else run["bounded_sv_share"]),
            "predictions in the larger class": _percent(predicted),
            "majority class": _percent(fact["majority_share"] if fact else None),
            "accuracy (this run)": _percent(None if run is None else run["accuracy"] / 100),
        })
    missing = sorted(set(runs["dataset"]) - set(facts))
    return _section("Where the kernel is (nearly) the identity", [
        IDENTITY_KERNEL_NOTE,
    ], pd.DataFrame(rows), after=(f"No kernel facts for {', '.join(missing)} (run `alphaseed kernel-facts`).",)
        if missing else ())


def _percent(value) -> str:
    """A share (0 to 1) as a percentage with "%"; NOT_AVAILABLE where there is none."""
    return formats.NOT_AVAILABLE if value is None or not np.isfinite(value) else f"{100 * value:.2f} %"


def iterations_section(frame: pd.DataFrame) -> list[str]:
    """Iterations beside the paper's, relative to LibSVM's on the same data, and where the two disagree.

    Counts agree across kernel modes: a fast-mode-only run (full MNIST's) stands in, a cold start for an absent LibSVM.

    Parameters
    ----------
    frame : DataFrame
        Table 1's comparison frame, with each run's ``iterations_round1`` (``runs.runs_frame``).
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
            "iterations (paper)": formats.format_count(row["paper_iterations"]),
            "iterations (this run)": formats.format_count(run["iterations"]) + (
                formats.ESTIMATED if run["iterations_estimated"] else ""),
            "this run / paper": f"{run['iterations'] / row['paper_iterations']:.3f}",
            "/ LibSVM (paper)": f"{paper_ratio:.3f}", "/ LibSVM (this run)": f"{ratio:.3f}",
            "round 1 (cold) iterations": formats.format_count(run["iterations_round1"]),
            # an estimated count is scaled to every round, as the paper's estimates are: it compares, marked
            "differs": " ".join(filter(None, (
                "yes" if abs(ratio / paper_ratio - 1) > ITERATION_TOLERANCE else "",
                f"({formats.ESTIMATED})" if run["iterations_estimated"] or base["iterations_estimated"] else ""))),
            "_gap": abs(np.log(ratio / paper_ratio)),
        })
    table = pd.DataFrame(rows)
    differing = table[table["differs"].str.startswith("yes")] if len(table) else table
    subsampled = frame.dropna(subset=["subsample"])["dataset"].unique()
    paragraphs = [
        "LibSVM's own iteration count on the same data is the yardstick: the ratio method / LibSVM is compared with "
        "the paper's, so a different fold assignment or sample moves both. A row differs when the two ratios are "
        f"more than {ITERATION_TOLERANCE:.0%} apart; {len(differing)} of {len(table)} rows do. Round 1 of ATO, MIR "
        "and SIR is a cold start, so its iterations bound how much a seeder can save over k rounds. A method run "
        "only in a fast kernel mode shows that run's counts (the same in every mode), and where LibSVM did not run "
        "our cold start's count stands for it (it reproduces LibSVM's step for step). Where the kernel is the "
        "identity, the next section explains the seeded counts; how the fold rule and SIR's K > 0 threshold, which "
        f"the paper leaves open, move them is [measured in the docs]({SEEDED_COUNTS_MEASURED}).",
    ]
    if len(subsampled):
        paragraphs.append(f"Runs on stratified subsamples ({', '.join(subsampled)}): their absolute counts do not "
                          "compare with the paper's full-size ones; the ratios to LibSVM do, roughly.")
    ordered = table.sort_values("_gap", ascending=False).drop(columns="_gap") if len(table) else table
    return _section("Iterations beside the paper's (Table 1, k = 10)", paragraphs, ordered)


def class_counts_section(summaries: list[dict], facts: dict[str, dict]) -> list[str]:
    """Seeded rounds on an exact identity kernel, by whether the training set kept the previous round's class counts.

    There the optimum depends on those counts alone, so a seed can start at it. Only runs where that holds are
    counted: k = 10, seeded from round 2, largest off-diagonal K exactly 0, and the kernel facts' fold
    assignment, which gives the class counts, the run's own (same sha256); no lines when no run qualifies.

    Parameters
    ----------
    summaries : list of dict
        The run summaries, as read (``runs.read_runs``).
    facts : dict of str to dict
        The kernel facts of each dataset (``pipeline.kernel_facts``).
    """
    rows = []
    for run in summaries:
        fact = facts.get(run["dataset"], {})
        counts = fact.get("training_class_counts", {})
        first = FIRST_SEEDED_ROUND.get(run["method"])
        if (formats.k_key(run["k"]) != TABLE1_K or first != 2 or fact.get("largest_off_diagonal") != 0.0
                or counts.get("folds_sha256") != run["folds_sha256"]):
            continue
        kept, changed = [], []
        for r in run["rounds"][1:]:
            h = r["round"] - 1
            same = all(counts[key][h] == counts[key][h - 1] for key in ("train_positive", "train_size"))
            (kept if same else changed).append(r["iterations"])
        rows.append({
            "dataset": run["dataset"], "method": formats.method_label(run["method"], run["kernel_mode"]),
            "seeded rounds run": f"{len(kept) + len(changed)}",
            "counts kept: rounds": f"{len(kept)}",
            "counts kept: at 0 iterations": f"{kept.count(0)}",
            "counts kept: iterations": formats.format_count(sum(kept)),
            "counts changed: rounds": f"{len(changed)}",
            "counts changed: at 0 iterations": f"{changed.count(0)}",
            "counts changed: iterations": formats.format_count(sum(changed)),
        })
    if not rows:
        return []
    datasets = formats.ordered({row["dataset"] for row in rows}, formats.DATASET_ORDER)
    labels = formats.ordered({row["method"] for row in rows}, formats.METHOD_ORDER)
    rows.sort(key=lambda row: (datasets.index(row["dataset"]), labels.index(row["method"])))
    return _section("Seeded rounds on an identity kernel", [
        IDENTITY_OPTIMUM_NOTE,
    ], pd.DataFrame(rows))


def carry_section(runs: pd.DataFrame) -> list[str]:
    """The gradient carry-over's share of the seeded rounds' time, per seeded run in the paper's kernel mode.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    """
    seeded = runs[(runs["seeded_rounds"] > 0) & (runs["kernel_mode"] == "cache")]
    rows = [{
        "dataset": row["dataset"], "k": row["k"], "method": row["label"],
        "seeded rounds": f"{row['seeded_rounds']}", "carried": f"{row['carried_rounds']}",
        "gradient start s": formats.format_seconds(row["seconds_gradient_init_seeded"]),
        "share of the seeded rounds' time": _percent(
            row["seconds_gradient_init_seeded"] / row["seconds_rounds_seeded"] if row["seconds_rounds_seeded"]
            else None),
        "kernel values for the gradient": formats.format_count(row["kernel_values_gradient"]),
        "kernel values in all": formats.format_count(row["kernel_values_computed"]),
    } for _, row in seeded.iterrows()]
    return _section("What the gradient carry-over costs", [
        formats.CARRY_NOTE + "\n" + CARRY_TABLE_NOTE,
    ], pd.DataFrame(rows))


def loo_estimates_section(summaries: list[dict], runs: pd.DataFrame) -> list[str]:
    """What each estimated leave-one-out time rests on: the rounds measured and their iterations.

    A seeded leave-one-out round swaps one instance, so its cost swings between nothing (the seed is
    already optimal) and a cold training's; the intervals say how far the sample pins the mean down.
    No lines when no leave-one-out run is estimated.

    Parameters
    ----------
    summaries : list of dict
        The run summaries, as read (``runs.read_runs``).
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    """
    sv_share = table1_baselines(runs)["sv_share"]
    rows, estimated = [], []
    for run, (_, figures) in zip(summaries, runs.iterrows()):
        if formats.k_key(run["k"]) != "loo" or not run["summary"]["estimated"]:
            continue
        estimated.append(figures)
        first = FIRST_SEEDED_ROUND.get(run["method"], np.inf)
        seeded = [r for r in run["rounds"] if r["round"] >= first]
        measured = seeded or run["rounds"]
        iterations = [r["iterations"] for r in measured]
        rows.append({
            "dataset": run["dataset"], "method": formats.method_label(run["method"], run["kernel_mode"]),
            "rounds measured": f"{run['summary']['rounds_run']} of {formats.format_count(run['summary']['rounds_total'])}",
            "seeded rounds measured": f"{len(seeded)}" if first != np.inf else formats.NOT_AVAILABLE,
            "iterations per round (measured, seeded where seeded)": (
                ", ".join(formats.format_count(i) for i in iterations) if len(iterations) <= 3 else
                f"{formats.format_count(np.median(iterations))} median, {formats.format_count(min(iterations))}"
                f"-{formats.format_count(max(iterations))}"),
            "rounds at 0 iterations": f"{iterations.count(0)} of {len(iterations)}",
            "s per round (mean)": formats.format_seconds(mean_of([sum(r["seconds"].values()) for r in measured])),
            "estimated total s": formats.format_seconds_scientific(figures["seconds_total"]),
            "interval, iterations": formats.interval_text(figures["interval_iterations"]),
            "interval, seconds": formats.interval_text(figures["interval"]),
            "SVs / training set (k = 10)": _percent(sv_share.get(run["dataset"])),
        })
    if not rows:
        return []
    return _section("Leave-one-out estimates: what they rest on", [
        LOO_ESTIMATES_NOTE, *formats.kinds_note(pd.DataFrame(estimated)),
    ], pd.DataFrame(rows))


def machines_section(runs: pd.DataFrame) -> list[str]:
    """Which CPU ran which runs, when the run moved between machines, and which ratios pair two sittings.

    A ratio is only sound between two runs of one CPU, and of one machine's speed, and every ratio in the tables
    pairs runs of one dataset and one k. No lines when every run had one CPU and every such pair one sitting.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    """
    cpus = runs["cpu"].fillna("unknown CPU")
    mixed = mixed_cpu_groups(runs) if cpus.nunique() > 1 else []
    over_sittings = mixed_sitting_groups(runs)
    if cpus.nunique() < 2 and not over_sittings:
        return []
    lines = []
    if cpus.nunique() > 1:
        lines.append(
            "The run moved between machines, each sitting on the one it was given. Every ratio in the tables "
            "(libsvm/method, cold/method, method/SIR) pairs runs of one dataset at one k; "
            + (f"these mix CPUs, so read their ratios with care: {', '.join(mixed)}." if mixed else
               "no such pair mixes CPUs, so the ratios hold, while absolute seconds of different CPUs do not "
               "compare."))
    if over_sittings:
        lines.append(
            "A virtual machine's speed can change between sittings, on one CPU model too (its host's other "
            "tenants), and these groups' runs come from more than one sitting (provenance.md lists them), so "
            f"read their ratios with care too: {', '.join(over_sittings)}.")
    rows = [{"CPU": cpu, "runs": f"{len(group)}",
             "datasets and k": "; ".join(f"{dataset} k = {', '.join(sorted(ks['k'].unique(), key=formats.k_order))}"
                                         for dataset, ks in group.groupby("dataset"))}
            for cpu, group in runs.assign(cpu=cpus).groupby("cpu")]
    return _section("Machines", lines, pd.DataFrame(rows))


def estimates_section(runs: pd.DataFrame) -> list[str]:
    """Every estimated run and every run with a capped round, with the rounds measured.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``), with the ``tables`` each feeds.
    """
    flagged = runs[runs["estimated"] | runs["iteration_cap_hit"]]
    rows = [{
        "table": row["tables"], "dataset": row["dataset"], "k": row["k"], "method": row["label"],
        "rounds measured": f"{row['rounds_run']} of {row['rounds_total']}",
        "estimated": formats.ESTIMATED if row["estimated"] else "",
        "rounds at the iteration cap": f"{row['rounds_capped']}" if row["rounds_capped"] else "",
    } for _, row in flagged.iterrows()]
    return _section("Estimated rows and capped rounds", [
        formats.ESTIMATE_NOTE,
        f"{int(runs['estimated'].sum())} of {len(runs)} runs are estimated; "
        f"{int(runs['iteration_cap_hit'].sum())} hit the iteration cap in some round.",
    ], pd.DataFrame(rows))


def overlays_section(overlays: list[Path]) -> list[str]:
    """The config overlays some jobs ran with, each with the reason its header comment gives.

    Parameters
    ----------
    overlays : list of Path
        The ``*.yaml`` overlays in the published folder's ``configs``, each opening with comment lines that
        say which job it served and why. No lines when there is none.
    """
    if not overlays:
        return []
    lines = ["## Jobs run with a config overlay", "", OVERLAYS_NOTE, ""]
    for path in overlays:
        header = [line.lstrip("#").strip() for line in path.read_text().splitlines() if line.startswith("#")]
        lines += [f"- [configs/{path.name}](configs/{path.name}): {' '.join(header)}", ""]
    return lines
