"""The published folder's documents beside its tables: ``provenance.md`` and its ``README.md``."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..cv import PAPER_KERNEL_MODE
from ..pipeline.provenance import SHARED_MACHINE_CORES
from . import formats, tables
from .runs import SITTING_GAP, mixed_cpu_groups, mixed_sitting_groups, sitting_numbers


def markdown_table(frame: pd.DataFrame) -> str:
    """A frame of formatted cells as a Markdown table, or "(none)" when it has no row.

    Parameters
    ----------
    frame : DataFrame
        The rows, every cell formatted text, kept as it is (not reparsed as a number).

    Returns
    -------
    str
        The table, without the frame's index.
    """
    return formats.markdown(frame) if len(frame) else "(none)"


def sittings(runs: pd.DataFrame) -> pd.DataFrame:
    """The stretches of time in which the jobs ran.

    The sittings of ``runs.sitting_numbers``: a pause longer than SITTING_GAP between one job's end and the next
    one's start (the machine given back, the run resumed elsewhere) starts a new one.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``); runs without both times are left out.

    Returns
    -------
    DataFrame
        One row per sitting: ``start``, ``end``, ``jobs`` and ``elapsed_seconds``.
    """
    spans = pd.DataFrame({"sitting": sitting_numbers(runs), "start": pd.to_datetime(runs["started_utc"]),
                          "end": pd.to_datetime(runs["finished_utc"])}).dropna(subset=["sitting"])
    rows = [{"start": group["start"].min(), "end": group["end"].max(), "jobs": len(group)}
            for _, group in spans.groupby("sitting")]
    frame = pd.DataFrame(rows, columns=["start", "end", "jobs"])
    frame["elapsed_seconds"] = (frame["end"] - frame["start"]).dt.total_seconds()
    return frame


def provenance_document(runs: pd.DataFrame, summaries: list[dict]) -> str:
    """The published provenance.md: commits, CPUs, hosts, threads, libraries, sittings, and wall time per
    experiment and per job.

    Parameters
    ----------
    runs : DataFrame
        One row per run (``runs.runs_frame``), with the ``tables`` each feeds.
    summaries : list of dict
        The run summaries, for the library versions.

    Returns
    -------
    str
        The Markdown document.
    """
    commits = runs.groupby(["git_commit", "git_dirty"], dropna=False).size()
    libraries = {key: sorted({str(s["provenance"].get(key, "not recorded")) for s in summaries})
                 for key in ("python", "numpy", "scipy", "numba", "libsvm", "sklearn", "blas")}
    walls = runs["wall_seconds"].dropna()
    stretches = sittings(runs)
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
        _machine_shares(runs),
        "",
        "## Sittings",
        "",
        markdown_table(pd.DataFrame({
            "started (UTC)": stretches["start"].dt.strftime("%Y-%m-%d %H:%M"),
            "ended (UTC)": stretches["end"].dt.strftime("%Y-%m-%d %H:%M"),
            "jobs": stretches["jobs"].astype(str),
            "elapsed h": stretches["elapsed_seconds"].map(lambda v: f"{v / 3600:.2f}"),
        })),
        "",
    ]
    return "\n".join(lines + _wall_times(runs))


def _machine_shares(runs: pd.DataFrame) -> str:
    """provenance.md's line on whether the timed jobs had the machine to themselves."""
    watched = runs.dropna(subset=["others_cpu_per_wall"]) if "others_cpu_per_wall" in runs else runs.iloc[:0]
    unwatched = len(runs) - len(watched)
    if watched.empty:
        return f"- other work beside the jobs: not recorded ({unwatched} run(s) predate the record)"
    shared = int((watched["others_cpu_per_wall"] > SHARED_MACHINE_CORES).sum())
    return (f"- other work beside the jobs: {shared} of {len(watched)} run(s) shared the machine (other "
            f"processes kept over {SHARED_MACHINE_CORES} cores busy on average; the most "
            f"{watched['others_cpu_per_wall'].max():.2f}); the host took up to "
            f"{watched['steal_per_wall'].max():.2f} cores (steal)"
            + (f"; not recorded for {unwatched} older run(s)" if unwatched else ""))


def _wall_times(runs: pd.DataFrame) -> list[str]:
    """provenance.md's wall time per experiment and per job."""
    jobs = runs.sort_values("finished_utc")[
        ["dataset", "k", "label", "wall_seconds", "seconds_measured_total", "rounds_run", "rounds_total", "threads",
         "cpu", "hostname", "git_commit", "finished_utc"]
        + [c for c in ("others_cpu_per_wall",) if c in runs]].copy()
    jobs["git_commit"] = jobs["git_commit"].str[:10]
    per_experiment = runs.groupby(["tables", "dataset"], sort=True).agg(
        jobs=("wall_seconds", "size"), wall=("wall_seconds", "sum")).reset_index()
    per_experiment["wall"] = per_experiment["wall"].map(lambda v: f"{v / 60:,.1f}")
    per_experiment = per_experiment.rename(columns={"tables": "table", "wall": "job wall min"})
    per_experiment["jobs"] = per_experiment["jobs"].astype(str)
    jobs["wall_seconds"] = jobs["wall_seconds"].map(lambda v: formats.NOT_AVAILABLE if pd.isna(v) else f"{v:.1f}")
    jobs["seconds_measured_total"] = jobs["seconds_measured_total"].map(formats.format_seconds)
    if "others_cpu_per_wall" in jobs:
        jobs["others_cpu_per_wall"] = jobs["others_cpu_per_wall"].map(
            lambda v: formats.NOT_AVAILABLE if pd.isna(v) else f"{v:.2f}")
    return [
        "## Wall time per experiment",
        "",
        "Summed over the jobs of each table and dataset.",
        "",
        markdown_table(per_experiment),
        "",
        "## Wall time per job",
        "",
        "Wall time is the whole job (loading, compilation, writing); measured seconds are the cross-validation's "
        "own rounds; other cores: the cores other processes kept busy on average while it ran.",
        "",
        markdown_table(jobs.rename(columns={"label": "method", "seconds_measured_total": "measured s",
                                            "wall_seconds": "wall s", "others_cpu_per_wall": "other cores"})),
        "",
    ]


# A kernel whose largest off-diagonal value is below this is (nearly) the identity: a test instance's
# decision value is then about -rho, and every instance a support vector (deviations.IDENTITY_KERNEL_NOTE).
NEAR_IDENTITY = 0.01


# The leave-one-out runs draw rounds until their estimate is known to this share at 95 % (config.yaml's
# until_interval); an estimate wider than it is named among the figures that rest on least.
TARGET_INTERVAL = 0.2

# The sections of paper_vs_reproduced.md that detail the figures resting on least, by the name of their link.
THIN_SECTIONS = {"estimates": "estimated-rows-and-capped-rounds",
                 "leave-one-out estimates": "leave-one-out-estimates-what-they-rest-on",
                 "machines": "machines", "overlays": "jobs-run-with-a-config-overlay"}

# Where the docs measure what moves the seeded iteration counts away from the paper's (benchmarks/paper_counts.py).
SEEDED_COUNTS_MEASURED = "../docs/design/seeding.md#the-papers-seeded-counts-what-moves-them"


def findings(table1: pd.DataFrame, facts: dict[str, dict] | None = None,
             studies: dict[str, pd.DataFrame] | None = None, *, runs: pd.DataFrame | None = None,
             overlays: Sequence[str] = (), beyond: dict[str, pd.DataFrame] | None = None) -> list[str]:
    """The README's first section: what Table 1 shows a reader first, each line with its figures and
    where to look.

    Parameters
    ----------
    table1 : DataFrame
        Table 1's comparison frame (``tables.comparison``).
    facts : dict of str to dict, optional
        The kernel facts of each dataset (``pipeline.kernel_facts``), for the datasets whose kernel is
        (nearly) the identity.
    studies : dict of str to DataFrame, optional
        Each study beyond the paper's Table 1 comparison frame, for what seeding saves there.
    runs : DataFrame, optional
        One row per run of every table (``runs.runs_frame``), for the figures that rest on least.
    overlays : sequence of str, optional
        The config overlays some jobs ran with (their file names in the folder's ``configs``).
    beyond : dict of str to DataFrame, optional
        The other tables' comparison frames by kind (Table 3, leave-one-out), for their paper cells not run here.

    Returns
    -------
    list of str
        Markdown bullets: LibSVM's iterations against the paper's, the datasets where the paper's gamma
        makes the kernel (nearly) the identity, what seeding itself buys in one engine (cold/method),
        seeding and engine together against LibSVM beside the paper's ratio, the same on each study's
        informative kernels, the paper's rows not run here, where the seeded counts' deviations are measured,
        and the figures that rest on least (stand-ins, thin or wide estimates, ratios of two CPUs, overlays).
    """
    mode = table1["kernel_mode"].fillna(PAPER_KERNEL_MODE)
    faithful = table1[mode == PAPER_KERNEL_MODE]
    ran = faithful[faithful["seconds_total"].notna()]
    datasets = formats.ordered(ran["dataset"], formats.DATASET_ORDER)
    methods = [m for m in formats.ordered(ran["method"], formats.METHOD_ORDER) if m not in ("libsvm", "cold")]

    def rows(method: str):
        for dataset in datasets:
            match = ran[(ran["dataset"] == dataset) & (ran["method"] == method)]
            if len(match):
                yield dataset, match.iloc[0]

    def ratio(row, metric: str, source: str = "this run") -> str:
        return formats.figure_cell(metric, formats.format_ratio)(row, source)

    iterations = [f"{dataset} {formats.figure_cell('iterations', formats.format_count)(row, 'this run')} against "
                  f"{formats.format_count(row['paper_iterations'])} "
                  f"({100 * (row['iterations'] / row['paper_iterations'] - 1):+.1f} %)"
                  for dataset, row in rows("libsvm")
                  if pd.notna(row.get("iterations")) and pd.notna(row.get("paper_iterations"))]
    own = [f"{method.upper()} " + ", ".join(f"{ratio(row, 'speedup_cold')} on {dataset}"
                                            for dataset, row in rows(method) if pd.notna(row.get("speedup_cold")))
           for method in methods]
    against = [f"{method.upper()} " + ", ".join(
        f"{ratio(row, 'speedup_libsvm')} on {dataset} (paper {ratio(row, 'speedup_libsvm', 'paper')})"
        for dataset, row in rows(method) if pd.notna(row.get("speedup_libsvm"))) for method in methods]
    table = "[Table 1](#table-1-beside-the-papers)"
    lines = [
        f"- **LibSVM's iterations against the paper's** (one algorithm, two implementations): "
        f"{'; '.join(iterations) or 'no LibSVM run with the paper beside it'}. {table}.",
        *_identity_finding(dict(rows("libsvm")), facts or {}),
        f"- **What seeding itself buys**, cold/method with both in the paper's setting (one engine, "
        f"`{PAPER_KERNEL_MODE}` mode): {'; '.join(o for o in own if ' on ' in o) or 'no seeded run'}. {table}.",
        f"- **Against LibSVM**, engine and seeding together (libsvm/method; the paper's ratio credits its "
        f"seeding alone): {'; '.join(a for a in against if ' on ' in a) or 'no seeded run'}. {table}.",
        *(line for study, frame in (studies or {}).items() for line in _study_finding(study, frame)),
    ]
    cells = _not_run_in_the_papers_setting([table1, *(beyond or {}).values()])
    if cells:
        lines.append(f"- **Not run in the paper's setting**, the paper's figure standing alone: {', '.join(cells)}. "
                     "Why: [the time budget](../docs/user_guide/reproducing.md#the-time-budget).")
    if len(ran[ran["method"].isin(methods)]):
        lines.append(f"- **Seeded counts unlike the paper's** ([the rows](paper_vs_reproduced.md#iterations-beside-the-"
                     f"papers-table-1-k--10)) move with what the paper leaves open, its fold rule and SIR's K > 0 "
                     f"threshold: [measured]({SEEDED_COUNTS_MEASURED}).")
    return lines + _thin_finding(runs, overlays)


def _not_run_in_the_papers_setting(frames: list[pd.DataFrame]) -> list[str]:
    """The paper's cells of these comparison frames with no paper-faithful run here, each saying whether the
    fast engine ran it at that dataset and k; a cell in two tables (k = 10 is in Tables 1 and 3) named once."""
    cells = []
    for frame in frames:
        faithful = frame[frame["kernel_mode"].fillna(PAPER_KERNEL_MODE) == PAPER_KERNEL_MODE]
        missing = faithful[faithful["seconds_total"].isna() & faithful["paper_seconds_total"].notna()]
        ran = frame[frame["seconds_total"].notna()].groupby(["dataset", "k"])["method"].agg(set)
        cells += [f"{row['dataset']} {row['method']} at k = {row['k']}"
                  + (" (run in the fast engine only)" if row["method"] in ran.get((row["dataset"], row["k"]), ())
                     else " (not run)") for _, row in missing.iterrows()]
    return list(dict.fromkeys(cells))


def _thin_finding(runs: pd.DataFrame | None, overlays: Sequence[str]) -> list[str]:
    """The line on the figures that rest on least: LibSVM's stand-ins, estimates from one round (no interval)
    or with an interval wider than the leave-one-out runs aim for, ratios pairing two CPUs or two sittings, and jobs run
    under a config overlay, each with the section of ``paper_vs_reproduced.md`` that details it. No line
    when there is none."""
    if runs is None:
        runs = pd.DataFrame(columns=["dataset", "k", "label", "cpu", "estimated", "interval", "stands_in_for_libsvm",
                                     "started_utc", "finished_utc"])

    def named(frame: pd.DataFrame, interval: bool = False) -> str:
        return ", ".join(f"{row['dataset']} {row['label']} (k = {row['k']})"
                         + (f" {formats.interval_text(row['interval'])}" if interval else "")
                         for _, row in frame.iterrows())

    estimated = runs[runs["estimated"].fillna(False).astype(bool)]
    stand_ins = runs[runs["stands_in_for_libsvm"].fillna(False).astype(bool)]
    one_round, wide = estimated[estimated["interval"].isna()], estimated[estimated["interval"] > TARGET_INTERVAL]
    mixed = mixed_cpu_groups(runs) if runs["cpu"].nunique() > 1 else []
    over_sittings = mixed_sitting_groups(runs)
    parts = []  # (what rests on least, the THIN_SECTIONS link that details it)
    if len(stand_ins):
        parts.append((f"LibSVM did not run on {', '.join(dict.fromkeys(stand_ins['dataset']))}, where our cold start "
                      f"in the paper's setting stands in ({formats.STAND_IN}: LibSVM's iterations and predictions, "
                      "our seconds)", "estimates"))
    if len(one_round):
        parts.append((f"estimates from one round, so with no interval ({formats.interval_text(None)}): "
                      f"{named(one_round)}", "estimates"))
    if len(wide):
        parts.append((f"estimates whose 95 % interval is wider than {formats.interval_text(TARGET_INTERVAL)} of their "
                      f"seconds: {named(wide, interval=True)}", "leave-one-out estimates"))
    if mixed:
        parts.append((f"the ratios of {', '.join(mixed)} pair runs of two CPUs", "machines"))
    if over_sittings:
        parts.append((f"the ratios of {', '.join(over_sittings)} pair runs of two sittings, between which the "
                      "machine's speed can change", "machines"))
    if overlays:
        parts.append((f"ran under a config overlay: {', '.join(overlays)}", "overlays"))
    if not parts:
        return []
    links = ", ".join(f"[{name}](paper_vs_reproduced.md#{THIN_SECTIONS[name]})"
                      for name in dict.fromkeys(name for _, name in parts))
    return [f"- **Where the figures rest on least**: {'; '.join(text for text, _ in parts)}. Details: {links}."]


def _identity_finding(libsvm: dict, facts: dict[str, dict]) -> list[str]:
    """The line on the datasets whose kernel the paper's gamma makes (nearly) the identity, if any."""
    near = [dataset for dataset, fact in facts.items() if fact["largest_off_diagonal"] < NEAR_IDENTITY]
    if not near:
        return []
    cells = []
    for dataset in formats.ordered(near, formats.DATASET_ORDER):
        fact, run = facts[dataset], libsvm.get(dataset)
        accuracy = "" if run is None or pd.isna(run.get("accuracy")) else (
            f", accuracy {run['accuracy']:.2f} % against a majority class of {100 * fact['majority_share']:.2f} %")
        cells.append(f"{dataset} (largest off-diagonal K {fact['largest_off_diagonal']:.2g}{accuracy})")
    return [f"- **With the paper's gamma the kernel is (nearly) the identity** on {'; '.join(cells)}: every "
            "instance is a support vector and every test instance falls in one class, so what seeding saves there "
            "says little about an informative kernel. [Why](paper_vs_reproduced.md#where-the-kernel-is-nearly-the-"
            "identity); the informative-kernel study asks it on scaled data."]


def _study_finding(study: str, table1: pd.DataFrame) -> list[str]:
    """What SIR saves over the cold start on a study's datasets, both in one kernel mode: the paper's where it
    ran, else the fast one. A dataset whose cold start leaves no free SV is marked: at its C every alpha sits at
    a bound, where a seed is already optimal, so its saving says little about an informative kernel."""
    cells = []
    for dataset in formats.ordered(table1["dataset"], formats.DATASET_ORDER):
        runs = table1[(table1["dataset"] == dataset) & table1["seconds_total"].notna()]
        mode = runs["kernel_mode"].fillna(PAPER_KERNEL_MODE)
        for kernel_mode in dict.fromkeys([PAPER_KERNEL_MODE, *mode]):
            sir, cold = runs[(runs["method"] == "sir") & (mode == kernel_mode)], runs[(runs["method"] == "cold")
                                                                                      & (mode == kernel_mode)]
            if len(sir) and len(cold):
                sir, cold = sir.iloc[0], cold.iloc[0]
                saved = 1 - sir["iterations"] / cold["iterations"]
                all_bounded = cold.get("free_sv_share") == 0
                cells.append(f"{dataset} {100 * saved:.0f} % of the iterations, cold/SIR "
                             f"{formats.figure_cell('speedup_cold', formats.format_ratio)(sir, 'this run')}"
                             f" (`{kernel_mode}`"
                             + (f"; no free SV at C = {cold['C']:g}: every alpha at a bound, where a seed is "
                                "already optimal" if all_bounded else "") + ")")
                break
    if not cells:
        return []
    name = tables.study_names(study)["comparison"]
    return [f"- **On informative kernels** (study `{study}`, C and gamma from a grid search), SIR saves "
            f"{'; '.join(cells)}. [tables/{name}.md](tables/{name}.md)."]


def readme_document(table1: pd.DataFrame, runs: pd.DataFrame, studies: dict | None = None,
                    facts: dict | None = None, overlays: Sequence[str] = (),
                    beyond: dict[str, pd.DataFrame] | None = None) -> str:
    """The published folder's README, its links relative to the folder.

    Parameters
    ----------
    table1 : DataFrame
        Table 1's comparison frame (``tables.comparison``).
    runs : DataFrame
        One row per run (``runs.runs_frame``).
    studies : dict of str to DataFrame, optional
        The studies beyond the paper whose tables the folder holds too (linked), each to its Table 1
        comparison frame (``findings``).
    facts : dict of str to dict, optional
        The kernel facts of each dataset (``findings``).
    overlays : sequence of str, optional
        The config overlays some jobs ran with (``findings``).
    beyond : dict of str to DataFrame, optional
        The other tables' comparison frames (``findings``).

    Returns
    -------
    str
        The Markdown document.
    """
    subsampled = sorted(runs.dropna(subset=["subsample"])["dataset"].unique())
    size = f"on stratified subsamples of {', '.join(subsampled)}" if subsampled else "at full size"
    dirty_runs = runs.assign(dirty=runs["git_dirty"].fillna(False).astype(bool)).groupby("git_commit")["dirty"].sum()
    commits = ", ".join(f"`{commit[:10]}`" + (f" ({dirty} in a checkout with uncommitted changes)" if dirty else "")
                        for commit, dirty in dirty_runs.items())
    walls = runs["wall_seconds"].dropna()
    elapsed = sittings(runs)["elapsed_seconds"].sum()
    return "\n".join([
        "# The paper, reproduced",
        "",
        f"{len(runs)} runs {size}, from commit(s) {commits or 'unknown'} on {'; '.join(runs['cpu'].dropna().unique())}, "
        f"{walls.sum() / 3600:.2f} h of job wall time in {elapsed / 3600:.2f} h elapsed, finished "
        f"{runs['finished_utc'].max()} (UTC). `alphaseed publish` built this from the run summaries in "
        f"[runs/](runs/) alone, each job having written its summary as it finished.",
        "",
        "## What we found",
        "",
        *findings(table1, facts, studies, runs=runs, overlays=overlays, beyond=beyond),
        "",
        "## Table 1, beside the paper's",
        "",
        markdown_table(formats.table1_at_a_glance(table1)),
        "",
        f"k = 10, seconds summed over the rounds. {formats.ESTIMATED} estimated from the first rounds, as the paper "
        f"did for its longest runs, with the 95 % interval of the seconds ({formats.interval_text(None)} where one "
        f"round is all the estimate rests on); {formats.STAND_IN} our cold start standing in for LibSVM; "
        f"{formats.CAP_HIT} a round stopped at the iteration cap. The paper's seconds are "
        "from its 6-core Xeon E5-2620, so compare the ratios. Fast engine: the same method in this project's "
        "`auto` kernel mode (the Gram matrix where it fits), one thread. Every kernel mode, init and rest "
        f"seconds, and which rounds were run: [tables/table1.md](tables/table1.md); every deviation, "
        f"measured: [paper_vs_reproduced.md](paper_vs_reproduced.md).",
        "",
        "## Leave-one-out: time relative to SIR",
        "",
        "![leave-one-out](figures/loocv.png)" if (runs["k"] == "loo").any() else "(no leave-one-out run yet)",
        "",
        "## Everything else",
        "",
        "- [paper_vs_reproduced.md](paper_vs_reproduced.md): every figure beside the paper's, and every "
        "deviation explained with measured numbers",
        "- [tables/](tables/): Tables 1-3 and the leave-one-out table (Markdown, CSV, LaTeX)",
        "- [figures/](figures/): iterations per round, speedup against k, leave-one-out",
        "- [runs.csv](runs.csv): one row per run; [provenance.md](provenance.md): commit, CPU, "
        "threads, wall time per job",
        *[f"- beyond the paper, the study `{study}` (its own tables, never mixed into the paper's rows): "
          f"[tables/{tables.study_names(study)['comparison']}.md](tables/"
          f"{tables.study_names(study)['comparison']}.md) and the `*_{study}` tables beside it" for study in studies or {}],
        "",
    ])
