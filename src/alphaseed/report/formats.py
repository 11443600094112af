"""How the tables look: the marks, the number formats, the wide tables of the paper's layout,
Markdown, LaTeX and HTML, the notes under a table, and atomic writing."""

from __future__ import annotations

import html
import os
from typing import Iterable

import numpy as np
import pandas as pd

from ..atomic import atomic_path
from ..cv import PAPER_KERNEL_MODE

ESTIMATED = "\u2020"  # dagger: time extrapolated from the first max_rounds rounds
CAP_HIT = "\u2021"  # double dagger: at least one round stopped at the solver's iteration cap
STAND_IN = "\u00a7"  # section sign: LibSVM did not run; our paper-faithful cold start stands in
TWO_CPUS = "\u00b6"  # pilcrow: a ratio whose two runs were made on different CPUs
NOT_AVAILABLE = "\u2014"

METHOD_ORDER = ["libsvm", "cold", "avg", "top", "ato", "mir", "sir", "full"]
DATASET_ORDER = ["adult", "heart", "madelon", "mnist", "webdata"]
SOURCES = ("this run", "paper")

MACHINE_NOTE = (
    "The paper's times were measured with its C++ code on a 6-core Intel Xeon E5-2620; this run's on "
    "{cpu}. Absolute seconds do not compare across machines: compare the ratios."
)
ESTIMATE_NOTE = (
    f"{ESTIMATED} estimated from the first R rounds (max_rounds), as the paper did for its longest runs: the rounds "
    "not run are counted at the mean of the rounds run like them (for ATO, MIR and SIR the seeded rounds 2..R, "
    "round 1 being cold; for the other methods every round run), the seconds and the iterations alike; accuracy "
    "is over the instances tested. Iterations and accuracy come from a complete run where one was made (below). "
    "Leave-one-out tests the instances in a seeded random order, so its first rounds are a random sample of them. "
    "Each estimate's 95 % interval (Student's t over the rounds run like those left) is given as \u00b1x % of the "
    "estimated seconds, beside its total in the tables; \u00b1? where fewer than two such rounds ran. A ratio "
    f"carries {ESTIMATED} when either of its figures is estimated."
)
COUNTS_NOTE = (
    "Iterations and accuracy are identical in every kernel mode, so where a paper-faithful run was estimated from "
    "its first rounds they are taken from the complete run of the same method in a fast kernel mode (LibSVM's from "
    "the complete cold run, which reproduces LibSVM's iterations step for step): {runs}."
)
KINDS_NOTE = (
    "Counted by kind, a round's kind being whether it took iterations: in MNIST's seeded leave-one-out a round "
    "that took none carried its gradient over from the round before in seconds, and one that took some started it "
    "afresh from every support vector, for minutes in the paper's setting, so a few rounds say little of how often "
    "each kind comes. For {runs}, each kind of round not run is counted at the mean of this run's rounds of that "
    "kind, in the share the longer run named beside it drew of them (the same rounds in the same order, taking the "
    "same iterations in every kernel mode): double sampling for stratification (Cochran, Sampling Techniques, "
    "section 12.2), the seconds and the iterations alike. The 95 % interval adds to the spread of each kind's "
    "rounds what the longer run leaves open of the shares, widened where neighbouring rounds' kinds go together "
    "(Student's t, Satterthwaite's degrees of freedom)."
)
CAP_NOTE = (
    f"{CAP_HIT} at least one round stopped at the solver's iteration cap (not converged); a ratio carries "
    f"{CAP_HIT} when either of its runs did."
)
CARRY_NOTE = (
    "Gradient carry-over, which the paper does not describe: this run's seeded rounds (ATO, MIR and SIR from "
    "round 2, AVG and TOP in every round), in the paper-faithful columns too, start from the gradient of the "
    "model they are seeded from, updated over the alphas that changed (G' = G + Q(alpha' - alpha)), instead of "
    "computing it anew from the seed. LibSVM and the cold start begin at alpha = 0 and need neither."
)

STAND_IN_NOTE = (
    f"{STAND_IN} LibSVM did not run here (one of its rounds outlasts a sitting on this machine): our cold start in "
    "the paper's setting (kernel mode cache) stands in. It takes LibSVM's steps, so its iterations and predictions "
    f"are LibSVM's; its seconds are ours, not LibSVM's. A ratio carries {STAND_IN} when either of its figures does: "
    "{runs}."
)

SHARED_NOTE = (
    "Round 1 of {runs} is the cold round 1 that another of the cold start, ATO, MIR and SIR of the same dataset, k "
    "and kernel mode ran on the same folds, code and CPU and left in its journal: the same training in every figure "
    "but the seconds, so it is timed once and counted, with those seconds, in each of them."
)

TWO_CPUS_NOTE = (
    f"{TWO_CPUS} the ratio's two runs were made on different CPUs (provenance.md names each run's), so it "
    "compares two machines as well as two methods: {groups}."
)

FLAGS = ("estimated", "iteration_cap_hit", "stand_in")
MARKS = (ESTIMATED, CAP_HIT, STAND_IN)
# Flags of a ratio alone, not of either of its figures (``tables.comparison``'s ``<ratio>_two_cpus``).
RATIO_FLAGS = ("two_cpus",)
RATIO_MARKS = (TWO_CPUS,)


def _listing(values: pd.Series) -> str:
    return ", ".join(dict.fromkeys(values))


def estimate_note(frame: pd.DataFrame) -> str:
    """The note on estimates under a table: how they are made, and which figures are, from how many rounds.

    Parameters
    ----------
    frame : DataFrame
        The table's comparison frame (``tables.comparison``): this run's and the paper's estimated rows.
    """
    note = [ESTIMATE_NOTE]
    ours = frame[frame["estimated"]]
    if len(ours):
        ours = ours.assign(label=[f"{label} ({interval_text(interval)})"
                                  for label, interval in zip(ours["label"], ours["interval"])])
        runs = ours.groupby(["dataset", "k", "rounds_run", "rounds_total"], sort=False)["label"].agg(_listing)
        note.append("This run estimated " + "; ".join(
            f"{labels} on {dataset} (k = {k}) from {rounds:.0f} of {total:.0f} rounds"
            for (dataset, k, rounds, total), labels in runs.items()) + ".")
    else:
        note.append("This run has no estimated figure here.")
    theirs = frame[frame["paper_estimated"]]
    if len(theirs):
        notes = theirs.groupby(["dataset", "k", "paper_note"], sort=False)["method"].agg(_listing)
        note.append("The paper's estimates: " + "; ".join(
            f"{methods} on {dataset} (k = {k}): {text}" for (dataset, k, text), methods in notes.items()) + ".")
    return " ".join(note)


def _naming_runs(frame: pd.DataFrame, source: str, note: str, how: str) -> list[str]:
    """``note`` naming each run whose ``source`` column names another run, as "<run> on <dataset> (k = <k>)"
    then ``how`` and that run; no note where none does."""
    named = frame[frame[source].notna()]
    runs = (f"{row['label']} on {row['dataset']} (k = {row['k']}){how}{row[source]}" for _, row in named.iterrows())
    return [note.format(runs="; ".join(dict.fromkeys(runs)))] if len(named) else []


def counts_note(frame: pd.DataFrame) -> list[str]:
    """The note naming the estimated runs whose iterations and accuracy come from a complete run (none: no note).

    Parameters
    ----------
    frame : DataFrame
        A comparison frame; ``counts_from`` (``tables.complete_counts``) names the complete run.
    """
    return _naming_runs(frame, "counts_from", COUNTS_NOTE, " from ")


def kinds_note(frame: pd.DataFrame) -> list[str]:
    """The note naming the estimated runs whose rounds left are counted by kind (none: no note).

    Parameters
    ----------
    frame : DataFrame
        A comparison frame; ``kinds_from`` (``tables.estimated_by_kind``) names the longer run.
    """
    return _naming_runs(frame, "kinds_from", KINDS_NOTE, ", the shares from ")


def table_notes(frame: pd.DataFrame, cpu: str) -> list[str]:
    """What a reader of a table of times must know: the machines, the markers, the gradient carry-over.

    Parameters
    ----------
    frame : DataFrame
        The table's comparison frame (``tables.comparison``).
    cpu : str
        This run's CPU(s), named beside the paper's machine.
    """
    return [MACHINE_NOTE.format(cpu=cpu), estimate_note(frame), *kinds_note(frame), *counts_note(frame),
            *stand_in_note(frame), *shared_note(frame), *two_cpus_note(frame), CAP_NOTE, CARRY_NOTE]


def shared_note(frame: pd.DataFrame) -> list[str]:
    """The note naming the runs whose round 1 another run trained (none: no note).

    Parameters
    ----------
    frame : DataFrame
        A comparison frame; ``rounds_shared`` counts such rounds (``tables.record_row``).
    """
    shared = frame[frame.get("rounds_shared", pd.Series(0, index=frame.index)).fillna(0).astype(int) > 0]
    if not len(shared):
        return []
    runs = (f"{row['label']} on {row['dataset']} (k = {row['k']})" for _, row in shared.iterrows())
    return [SHARED_NOTE.format(runs="; ".join(dict.fromkeys(runs)))]


def stand_in_note(frame: pd.DataFrame) -> list[str]:
    """The note naming the LibSVM cells our cold start stands in for (none: no note).

    Parameters
    ----------
    frame : DataFrame
        A comparison frame; ``stand_in`` marks the rows (``tables.comparison``).
    """
    standing = frame[frame.get("stand_in", pd.Series(False, index=frame.index)).fillna(False).astype(bool)]
    if not len(standing):
        return []
    runs = (f"{row['dataset']} (k = {row['k']})" for _, row in standing.iterrows())
    return [STAND_IN_NOTE.format(runs="LibSVM on " + ", ".join(dict.fromkeys(runs)))]


def two_cpus_note(frame: pd.DataFrame) -> list[str]:
    """The note naming the datasets and k whose ratios pair runs of two CPUs (none: no note).

    Parameters
    ----------
    frame : DataFrame
        A comparison frame; ``<ratio>_two_cpus`` marks the ratios (``tables.comparison``).
    """
    columns = [column for column in frame.columns if column.endswith(RATIO_FLAGS)]
    mixed = frame[frame[columns].fillna(False).astype(bool).any(axis=1)] if columns else frame.iloc[:0]
    if not len(mixed):
        return []
    groups = (f"{row['dataset']} (k = {row['k']})" for _, row in mixed.iterrows())
    return [TWO_CPUS_NOTE.format(groups=", ".join(dict.fromkeys(groups)))]


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8), atomically, so that no reader sees a half-written file.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    text : str
        Its content.
    """
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    """Write ``frame`` as CSV to ``path`` without its index, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    frame : DataFrame
        The rows to write.
    """
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def method_label(method: str, kernel_mode: str | None) -> str:
    """Column label: paper-faithful runs keep the bare method name, fast kernel modes say which.

    Parameters
    ----------
    method : str
        The method (``libsvm``, ``cold``, ``sir``, ...); LibSVM's runs always keep the bare name.
    kernel_mode : str or None
        The kernel mode the run used; None or the paper's mode is paper-faithful.
    """
    if method == "libsvm" or kernel_mode in (None, PAPER_KERNEL_MODE):
        return method
    return f"{method} ({kernel_mode})"


def k_key(k) -> str:
    """k as the tables key it: "loo" or the integer's digits.

    Parameters
    ----------
    k : int or str
        A number of folds, as a run records it, or ``"loo"``.
    """
    return "loo" if str(k) == "loo" else str(int(k))


def k_order(k: str) -> float:
    """The sort key of a k: its number, leave-one-out last.

    Parameters
    ----------
    k : str
        A k as ``k_key`` gives it.
    """
    return np.inf if k == "loo" else int(k)


def ordered(values: Iterable[str], order: list[str]) -> list[str]:
    """The distinct ``values`` in ``order`` of their first word, the others after, each group sorted.

    Keying on the first word sorts a fast mode's label (``"sir (gram)"``) beside its method's.

    Parameters
    ----------
    values : iterable of str
        Labels, duplicates allowed.
    order : list of str
        The known first words in their order (``METHOD_ORDER``, ``DATASET_ORDER``).
    """
    def key(v: str):
        base = v.split(" ")[0]
        return (order.index(base) if base in order else len(order), v)

    return sorted(set(values), key=key)


def format_seconds(value: float) -> str:
    """Seconds as the paper prints them in Tables 1 and 3: whole seconds from 100 up, else 3 significant digits.

    Parameters
    ----------
    value : float or None
        Seconds; None or a value that is not finite prints as NOT_AVAILABLE.
    """
    if value is None or not np.isfinite(value):
        return NOT_AVAILABLE
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def format_seconds_scientific(value: float) -> str:
    """Seconds as the paper's leave-one-out table prints them: 2.4e7 from 10,000 up.

    Parameters
    ----------
    value : float or None
        Seconds; below 10,000 (or missing) printed as ``format_seconds`` prints them.
    """
    if value is None or not np.isfinite(value) or value < 1e4:
        return format_seconds(value)
    return f"{value:.1e}".replace("e+0", "e").replace("e+", "e")


def _formatter(spec: str, suffix: str, what: str):
    """A formatter of one kind of figure: ``format(value, spec) + suffix``, NOT_AVAILABLE where there is
    none; ``what`` is the start of its docstring."""
    def render(value: float) -> str:
        return NOT_AVAILABLE if value is None or not np.isfinite(value) else format(value, spec) + suffix

    render.__doc__ = (f"{what}; NOT_AVAILABLE where there is none.\n\nParameters\n----------\n"
                      "value : float or None\n    The figure; None or a value that is not finite prints as "
                      "NOT_AVAILABLE.\n\nReturns\n-------\nstr\n    The cell's text.\n")
    return render


format_count = _formatter(",.0f", "", "A count, whole, with thousands separators")
format_percent = _formatter(".2f", "", 'A percentage with two decimals, without "%" (the column\'s heading has it)')
format_ratio = _formatter(".2f", "\u00d7", "A ratio with two decimals and a times sign")
format_number = _formatter("g", "", "A number in its shortest general form (``g``), as C and gamma print")


def _markers(row: pd.Series, metric: str, source: str) -> str:
    """The markers of one figure: its own flags, or for a ratio the flags of either of its figures and its own
    (``RATIO_FLAGS``)."""
    prefix = "paper_" if source == "paper" else ""

    def flagged(flag: str) -> bool:
        own = f"{prefix}{metric}_{flag}"
        return bool(row.get(own if own in row.index else f"{prefix}{flag}", False))

    figures = "".join(mark for flag, mark in zip(FLAGS, MARKS) if flagged(flag))
    return figures + "".join(mark for flag, mark in zip(RATIO_FLAGS, RATIO_MARKS)
                             if bool(row.get(f"{prefix}{metric}_{flag}", False)))


def interval_text(interval) -> str:
    """An estimate's 95 % interval as a share of it: "+-12 %", or "+-?" where there is none.

    Parameters
    ----------
    interval : float or None
        Half the interval over the estimate (``CVResult.interval``); None or NaN where fewer than two
        rounds like those left ran.
    """
    if interval is None or pd.isna(interval):
        return "\u00b1?"
    return f"\u00b1{100 * interval:.0f} %"


def figure_cell(metric: str, formatter):
    """Render one figure of a row for a source: the paper's value, or this run's, with its markers.

    Parameters
    ----------
    metric : str
        The row's column of this run's figure; the paper's is ``paper_<metric>``.
    formatter : callable
        Formats the value (``format_seconds``, ``format_ratio``, ...).

    Returns
    -------
    callable
        ``render(row, source)``, source "this run" or "paper": the text, or NOT_AVAILABLE.
    """

    def render(row: pd.Series, source: str) -> str:
        value = row.get(f"paper_{metric}" if source == "paper" else metric)
        if value is None or pd.isna(value):
            return NOT_AVAILABLE
        text = formatter(value) + _markers(row, metric, source)
        if metric == "seconds_total" and source != "paper" and row.get("estimated", False):
            text += " " + interval_text(row.get("interval"))
        return text

    return render


def _seeded(label: str) -> bool:
    return label.split(" ")[0] not in ("libsvm", "cold")


def _always(label: str) -> bool:
    return True


def _wide(frame: pd.DataFrame, groups: list[tuple[str, list]], by_k: bool) -> pd.DataFrame:
    """Rows (dataset, source) with this run above the paper; columns (group or k, method, part).

    ``groups`` lists (group, [(part, applies(label), render(row, source))]) in column order.
    """
    labels = ordered(frame["label"], METHOD_ORDER)
    ks = sorted(frame["k"].unique(), key=k_order) if by_k else [None]
    columns = [
        ((f"k = {k}" if by_k else group), label, part, k, render)
        for k in ks
        for group, parts in groups
        for label in labels
        for part, applies, render in parts
        if applies(label)
    ]
    rows_by_key = {(r["dataset"], r["k"], r["label"]): r for _, r in frame.iterrows()}
    single_k = frame["k"].iloc[0] if len(frame) else None
    index = [(d, s) for d in ordered(frame["dataset"], DATASET_ORDER) for s in SOURCES]
    cells = []
    for dataset, source in index:
        line = []
        for _, label, _, k, render in columns:
            row = rows_by_key.get((dataset, k if by_k else single_k, label))
            line.append(NOT_AVAILABLE if row is None else render(row, source))
        cells.append(line)
    header = [c[:3] for c in columns]
    if all(part == "" for _, _, part in header):
        header = [c[:2] for c in header]
    return without_empty_paper_rows(pd.DataFrame(
        cells,
        index=pd.MultiIndex.from_tuples(index, names=["dataset", "source"]),
        columns=pd.MultiIndex.from_tuples(header),
    ))


def without_empty_paper_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The table without the paper's row of a dataset the paper has no figure of (one beyond the paper).

    Parameters
    ----------
    table : DataFrame
        A wide table indexed by (dataset, source), its cells formatted.
    """
    empty = (table == NOT_AVAILABLE).all(axis=1) & (table.index.get_level_values("source") == "paper")
    return table[~empty]


def table1_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 in the paper's layout: seconds (total, or init and rest of a seeded method), iterations, accuracy.

    Parameters
    ----------
    frame : DataFrame
        Table 1's comparison frame (``tables.comparison``).
    """
    groups = [
        (
            "seconds",
            [
                ("total", lambda label: not _seeded(label), figure_cell("seconds_total", format_seconds)),
                ("init", _seeded, figure_cell("seconds_init", format_seconds)),
                ("rest", _seeded, figure_cell("seconds_rest", format_seconds)),
            ],
        ),
        ("iterations", [("", _always, figure_cell("iterations", format_count))]),
        ("accuracy %", [("", _always, figure_cell("accuracy", format_percent))]),
    ]
    return _wide(frame, groups, by_k=False)


def seconds_wide(frame: pd.DataFrame, by_k: bool, formatter=format_seconds) -> pd.DataFrame:
    """Total seconds per method in the paper's layout: Table 3's or the leave-one-out table's.

    Parameters
    ----------
    frame : DataFrame
        The table's comparison frame (``tables.comparison``).
    by_k : bool
        One group of columns per k (Table 3); else every row is taken at the first row's k.
    formatter : callable
        Seconds to text: ``format_seconds``, or ``format_seconds_scientific`` for leave-one-out.
    """
    return _wide(frame, [("seconds", [("", _always, figure_cell("seconds_total", formatter))])], by_k=by_k)


def table2_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2 in the paper's layout, this run's n, dim, C and gamma above the paper's; a subsampled n says so.

    Parameters
    ----------
    frame : DataFrame
        The datasets beside the paper's (``tables.table2``).
    """
    rows = []
    for _, row in frame.iterrows():
        subsample = " (stratified subsample)" if pd.notna(row.get("subsample")) else ""
        rows.append([row["dataset"], "this run", format_count(row["n"]) + subsample, format_count(row["dim"]),
                     format_number(row["C"]), format_number(row["gamma"])])
        rows.append([row["dataset"], "paper", format_count(row["paper_n"]), format_count(row["paper_dim"]),
                     format_number(row["paper_C"]), format_number(row["paper_gamma"])])
    table = pd.DataFrame(rows, columns=["dataset", "source", "n", "dim", "C", "gamma"])
    return without_empty_paper_rows(table.set_index(["dataset", "source"]))


def _flat(table: pd.DataFrame) -> pd.DataFrame:
    flat = table.reset_index()
    flat.columns = [" ".join(str(p) for p in c if p).strip() if isinstance(c, tuple) else c for c in flat.columns]
    return flat


def to_markdown(table: pd.DataFrame, caption: str) -> str:
    """A wide table as Markdown under its caption, its index as columns and its header levels joined.

    Parameters
    ----------
    table : DataFrame
        A wide table, its cells formatted.
    caption : str
        The text above the table (caption and notes).
    """
    return f"{caption}\n\n{markdown(_flat(table))}\n"


def markdown(frame: pd.DataFrame) -> str:
    """A table of formatted cells as Markdown, without the frame's index.

    Parameters
    ----------
    frame : DataFrame
        The table; its cells are text already, which tabulate must not reparse ("75.00" into 75).

    Returns
    -------
    str
        The Markdown table.
    """
    return frame.to_markdown(index=False, disable_numparse=True)


def _latex_escape(text: str) -> str:
    return "".join(r"\textbackslash{}" if c == "\\" else "\\" + c if c in "&%$#_{}" else c for c in text)


def to_latex(table: pd.DataFrame, caption: str, label: str) -> str:
    """A wide table as LaTeX with horizontal rules, its markers and signs as LaTeX symbols.

    Parameters
    ----------
    table : DataFrame
        A wide table, its cells formatted.
    caption : str
        The caption (caption and notes), escaped here.
    label : str
        The table's label for cross-references (``tbl:<name>``).
    """
    latex = table.style.format(escape="latex").format_index(escape="latex", axis=0).format_index(
        escape="latex", axis=1
    ).to_latex(
        caption=_latex_escape(caption), label=label, hrules=True, multicol_align="c", clines="skip-last;data"
    )
    return (
        latex.replace(ESTIMATED, r"\textsuperscript{\dag}")
        .replace(CAP_HIT, r"\textsuperscript{\ddag}")
        .replace(STAND_IN, r"\textsuperscript{\S}")
        .replace("\u00b1", r"$\pm$")
        .replace(NOT_AVAILABLE, "--")
        .replace("\u00d7", r"$\times$")
    )


# ---------------------------------------------------------------- paper_vs_reproduced.md


def _long_columns(frame: pd.DataFrame, with_split: bool, with_iterations: bool, relative: bool,
                  seconds_format=format_seconds) -> pd.DataFrame:
    rows = [row for _, row in frame.iterrows()]

    def pair(metric: str, formatter, name: str) -> dict:
        render = figure_cell(metric, formatter)
        return {f"{name} ({source})": [render(row, source) for row in rows] for source in ("paper", "this run")}

    columns = {"dataset": frame["dataset"], "k": frame["k"], "method": frame["label"]}
    columns |= pair("seconds_total", seconds_format, "seconds")
    if with_split:
        columns |= pair("seconds_init", seconds_format, "init s")
        columns |= pair("seconds_rest", seconds_format, "rest s")
    columns |= pair("speedup_libsvm", format_ratio, "libsvm/method")
    columns["cold/method (this run)"] = [figure_cell("speedup_cold", format_ratio)(row, "this run") for row in rows]
    if relative:
        columns |= pair("relative_to_sir", format_ratio, "method/SIR")
    if with_iterations:
        columns |= pair("iterations", format_count, "iterations")
        columns |= pair("accuracy", format_percent, "accuracy %")
        for metric, name in (("sv_share", "SVs %"), ("free_sv_share", "free SVs %")):
            columns[f"{name} (this run)"] = [figure_cell(metric, format_percent)(row, "this run") for row in rows]
    return pd.DataFrame(columns)


def table1_at_a_glance(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 for a reader: one row per (dataset, method), each figure beside the paper's.

    Seconds and ratios are the paper-faithful run's; the fast kernel engine's seconds for the same method sit
    in a column of their own, and its iterations and accuracy stand in where no paper-faithful run was made
    (they are the same in every kernel mode). What seeding itself buys is cold/method, each method against our
    cold start in its own kernel mode: the paper's setting beside the paper's libsvm/method (which also
    credits seeding with the engine's speed), and the fast engine's, where cold ran in the same mode.

    Parameters
    ----------
    frame : DataFrame
        Table 1's comparison frame (``tables.comparison``).
    """
    faithful, fast = {}, {}
    for _, row in frame.iterrows():
        method, _, mode = row["label"].partition(" (")
        (fast if mode else faithful)[(row["dataset"], method)] = row
    present = faithful.keys() | fast.keys()
    keys = [(dataset, method) for dataset in ordered(frame["dataset"], DATASET_ORDER)
            for method in ordered({method for _, method in present}, METHOD_ORDER) if (dataset, method) in present]

    def cell(metric: str, formatter, source: str, rows: tuple) -> str:
        row = next((r for r in rows if r is not None and pd.notna(r.get(metric if source == "this run"
                                                                           else f"paper_{metric}"))), None)
        return NOT_AVAILABLE if row is None else figure_cell(metric, formatter)(row, source)

    lines = []
    for dataset, method in keys:
        own, quick = faithful.get((dataset, method)), fast.get((dataset, method))
        lines.append({
            "dataset": dataset, "method": method,
            "seconds (paper)": cell("seconds_total", format_seconds, "paper", (own,)),
            "seconds (this run)": cell("seconds_total", format_seconds, "this run", (own,)),
            "fast engine s (this run)": cell("seconds_total", format_seconds, "this run", (quick,)),
            "libsvm/method (paper)": cell("speedup_libsvm", format_ratio, "paper", (own,)),
            "libsvm/method (this run)": cell("speedup_libsvm", format_ratio, "this run", (own,)),
            "cold/method (this run)": cell("speedup_cold", format_ratio, "this run", (own,)),
            "fast engine cold/method (this run)": cell("speedup_cold", format_ratio, "this run", (quick,)),
            "iterations (paper)": cell("iterations", format_count, "paper", (own,)),
            "iterations (this run)": cell("iterations", format_count, "this run", (own, quick)),
            "accuracy % (paper)": cell("accuracy", format_percent, "paper", (own,)),
            "accuracy % (this run)": cell("accuracy", format_percent, "this run", (own, quick)),
        })
    return pd.DataFrame(lines)


def comparison_document(frames: dict[str, pd.DataFrame], datasets: pd.DataFrame) -> tuple[list[str], list]:
    """The notes and the (title, table) sections of paper_vs_reproduced, whatever the output format.

    Parameters
    ----------
    frames : dict of str to DataFrame
        The comparison frame of each table kind there is (``table1``, ``table3``, ``loo``).
    datasets : DataFrame
        The datasets beside the paper's (``tables.table2``).

    Returns
    -------
    notes : list of str
        The notes under the title.
    sections : list of (str, DataFrame)
        Each title and its table, each figure beside the paper's: Table 1, Table 3 and leave-one-out a row per
        run, then Table 2.
    """
    cpus = sorted({c for f in frames.values() for c in f["cpu"].dropna().unique()})
    threads = sorted({int(t) for f in frames.values() for t in f["threads"].dropna().unique()})
    machine = ", ".join(cpus) or "an unknown CPU"
    if threads:
        machine += f" ({'/'.join(map(str, threads))} thread(s) per job)"
    notes = table_notes(pd.concat(frames.values(), ignore_index=True), machine) + [
        "The paper has no cold-start run of its own solver (its baseline is LibSVM), so cold/method exists for "
        "this run only.",
        "Fast kernel modes appear as `method (mode)` and are never compared with the paper's figures.",
    ]
    layouts = [
        ("table1", "Table 1: efficiency at k = 10", dict(with_split=True, with_iterations=True, relative=False)),
        ("table3", "Table 3: effect of k on total elapsed time", dict(with_split=False, with_iterations=False,
                                                                       relative=False)),
        ("loo", "Leave-one-out (the paper's supplementary figure)",
         dict(with_split=False, with_iterations=False, relative=True, seconds_format=format_seconds_scientific)),
    ]
    sections = [(title, _long_columns(frames[kind], **options)) for kind, title, options in layouts if kind in frames]
    sections.append(("Table 2: datasets and kernel parameters", _flat(table2_wide(datasets))))
    return notes, sections


def document_markdown(title: str, notes: list[str], sections: list) -> str:
    """A Markdown document: the title, the notes, then each section's heading and table.

    Parameters
    ----------
    title : str
        The document's heading.
    notes : list of str
        The paragraphs under it.
    sections : list of (str, DataFrame)
        Each heading and its table of formatted cells (the index left out).
    """
    parts = [f"# {title}", "", *notes, ""]
    for heading, table in sections:
        parts += [f"## {heading}", "", markdown(table), ""]
    return "\n".join(parts)


def document_html(title: str, notes: list[str], sections: list) -> str:
    """A self-contained page (Snakemake's report shows HTML inline, Markdown only as a download).

    Parameters
    ----------
    title : str
        The page's heading, escaped.
    notes : list of str
        Paragraphs of plain text, each escaped.
    sections : list of (str, DataFrame)
        Each heading (an empty one is left out) and its table; an index other than a plain range is shown.
    """
    body = [f"<h1>{html.escape(title)}</h1>", *(f"<p>{html.escape(note)}</p>" for note in notes)]
    for heading, table in sections:
        body += [f"<h2>{html.escape(heading)}</h2>"] if heading else []
        body.append(table.to_html(index=not isinstance(table.index, pd.RangeIndex)))
    style = "table{border-collapse:collapse;font:13px sans-serif}td,th{border:1px solid #ccc;padding:2px 6px}"
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{style}</style></head><body>{''.join(body)}</body></html>\n"
