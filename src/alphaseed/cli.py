"""The ``alphaseed`` command: ``alphaseed cv`` runs one cross-validation and writes its run
record (and its summary); ``alphaseed prepare`` fetches, verifies and converts named datasets;
``alphaseed search`` runs a grid search and ``alphaseed search-merge`` joins searches of one
grid's gamma columns; ``alphaseed kernel-facts`` measures how close a dataset's kernel is to the
identity; ``alphaseed publish`` rebuilds the published reproduction from run summaries,
``alphaseed compare`` says whether a rerun repeats the published runs and ``alphaseed sitting``
names the jobs one sitting of the full-size run should take.

Errors the user can fix (``AlphaseedError``) print one line and exit with status 2, as
argparse does for bad arguments.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import AlphaseedError, ConfigError
from .pipeline.grid import log2_range
from .pipeline.environment import pin_blas_kernels

METHODS = ("libsvm", "cold", "ato", "mir", "sir", "avg", "top", "full")
SEARCH_METHODS = ("cold", "ato", "mir", "sir")
# alphaseed.solver.SOLVERS, written out so that the command's help needs no import of the solver
SEARCH_SOLVERS = ("smo", "active_set", "auto")


def _k(text: str):
    """``--k``'s type: ``loo`` or an integer (the range is checked where the folds are made)."""
    if text == "loo":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2 or 'loo', not {text!r}") from None


def _log2_range(text: str) -> list[float]:
    """``--C`` and ``--gamma`` of ``search``: ``log2_range``, its error reported as argparse's."""
    try:
        return log2_range(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _data_arguments(command: argparse.ArgumentParser) -> None:
    """The data and solver options that `cv` and `search` share."""
    source = command.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", metavar="NAME", help="a dataset of the config file")
    source.add_argument("--data", metavar="FILE", type=Path,
                        help="a LibSVM-format file with labels +1/-1")
    command.add_argument("--config", metavar="FILE", type=Path,
                         help="config file (default: config.yaml of the checkout you are in)")
    command.add_argument("--seed", type=int,
                         help="seed of folds and subsample (default: config seed, or 0)")
    command.add_argument("--subsample", type=int, metavar="M",
                         help="use a stratified sample of M instances")
    command.add_argument("--eps", type=float, help="stopping tolerance (default: config, or 0.001)")
    command.add_argument("--cache-mb", type=float,
                         help="kernel row cache in MB (default: config, else the solver's: 2 where "
                              "rows are computed from bit sets, growing to 32 in SMO's tail, else 100)")
    command.add_argument("--no-shrinking", action="store_true",
                         help="switch LibSVM's shrinking off")
    command.add_argument("--kernel-mode", choices=("cache", "shared", "gram", "auto"),
                         default="auto",
                         help="how our solver keeps kernel values (default: auto; cache is the "
                              "paper's setting)")


def _negative_values_attached(argv: list[str]) -> list[str]:
    """``--C -5:15:2`` as ``--C=-5:15:2``: argparse takes a value starting with '-' (other than
    a plain negative number) for an option."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in ("--C", "--gamma") and arg.startswith("-"):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def _parser() -> argparse.ArgumentParser:
    """The parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="alphaseed",
        description="SVM k-fold cross-validation by alpha seeding (Wen et al., AAAI 2017).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (_cv_command, _search_command, _merge_command, _facts_command, _publish_command,
                _compare_command, _sitting_command, _prepare_command):
        add(commands)
    return parser


def _cv_command(commands) -> None:
    cv = commands.add_parser("cv", help="run one cross-validation and write its run record")
    _data_arguments(cv)
    cv.add_argument("--C", type=float, help="penalty C (default: the dataset's config entry)")
    cv.add_argument("--gamma", type=float, help="kernel gamma (default: the dataset's config entry)")
    cv.add_argument("--k", type=_k, default=10, help="number of folds, or 'loo' (default 10)")
    cv.add_argument("--method", choices=METHODS, default="cold")
    cv.add_argument("--max-rounds", type=int, metavar="N",
                    help="run only the first N rounds and estimate the totals from them")
    cv.add_argument("--until-interval", type=float, metavar="SHARE",
                    help="with --max-rounds: stop sooner, once the estimated iterations' 95%% interval "
                         "is within +- SHARE of them (0.2: +-20%%)")
    cv.add_argument("--chains", type=int, default=1, metavar="N",
                    help="run the rounds as N chains of consecutive rounds, at once on the threads "
                         "(NUMBA_NUM_THREADS); each chain starts as round 1 does (default 1, the paper's)")
    cv.add_argument("--stands-in-for-libsvm", action="store_true",
                    help="mark the run (a cold start in kernel mode cache, which takes LibSVM's steps) as standing "
                         "in for LibSVM in the tables where LibSVM did not run")
    cv.add_argument("--journal", type=Path, metavar="DIR",
                    help="keep each finished round in DIR and resume at the first round it lacks (DIR is "
                         "removed once the record is written; a DIR of another run or commit is refused)")
    cv.add_argument("--first-round", type=Path, metavar="DIR",
                    help="with --journal: take round 1 (a cold training for cold, ATO, MIR and SIR) from DIR "
                         "where a run of another of those methods, of the same folds, data, settings, commit "
                         "and CPU, left it, with that run's seconds; else run it and leave it there")
    cv.add_argument("--out", type=Path, required=True, metavar="FILE", help="run record (JSON)")
    cv.add_argument("--summary", type=Path, metavar="FILE",
                    help="also write the run's summary (the record without predictions, with the "
                         "command's wall time) to FILE")


def _search_command(commands) -> None:
    search = commands.add_parser(
        "search", help="grid search over (C, gamma) by k-fold CV with alpha seeding",
        description="Cross-validate every (C, gamma) of a log2 grid (ranges as LIBSVM's grid.py "
                    "writes them, begin:end:step, end included) and write the results as JSON "
                    "and CSV and a heat map (PNG) beside --out.")
    _data_arguments(search)
    search.add_argument("--C", type=_log2_range, default=_log2_range("-5:15:2"), metavar="RANGE",
                        help="log2 C as begin:end:step (default -5:15:2, as grid.py)")
    search.add_argument("--gamma", type=_log2_range, default=_log2_range("3:-15:-2"),
                        metavar="RANGE", help="log2 gamma as begin:end:step (default 3:-15:-2)")
    search.add_argument("--k", type=int, default=5, help="number of folds (default 5)")
    search.add_argument("--method", choices=SEARCH_METHODS, default="sir")
    search.add_argument("--solver", choices=SEARCH_SOLVERS, default="smo",
                        help="smo (LibSVM's solver, the default here, as the published searches ran), or "
                             "auto and active_set as alphaseed.SVC takes them (SVC's default is auto)")
    search.add_argument("--jobs", type=int, default=1, help="gamma columns run in parallel")
    search.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="results (JSON); FILE.csv and FILE.png are written beside it")


def _merge_command(commands) -> None:
    merge = commands.add_parser(
        "search-merge", help="one grid search from searches of its gamma columns",
        description="Merge the results of `alphaseed search` runs over the same grid's gamma columns "
                    "(e.g. one cluster job per column) into one search: the points of all, the best "
                    "point as one search would choose it, JSON, CSV and heat map as `search` writes them.")
    merge.add_argument("parts", nargs="+", type=Path, metavar="PART", help="a column's results (JSON)")
    merge.add_argument("--out", type=Path, required=True, metavar="FILE",
                       help="results (JSON); FILE.csv and FILE.png are written beside it")


def _facts_command(commands) -> None:
    facts = commands.add_parser(
        "kernel-facts", help="how close a dataset's Gaussian kernel is to the identity (JSON)",
        description="The largest and mean off-diagonal kernel value, duplicate pairs and the "
                    "majority class share of a dataset with its gamma, and the class counts of "
                    "its k = 10 training sets under the runs' folds (--seed), for the published "
                    "explanation of the paper's majority-class accuracies and seeded iterations.")
    _data_arguments(facts)
    facts.add_argument("--gamma", type=float, help="kernel gamma (default: the dataset's config entry)")
    facts.set_defaults(C=None)
    facts.add_argument("--out", type=Path, required=True, metavar="FILE")


def _publish_command(commands) -> None:
    publish = commands.add_parser(
        "publish", help="rebuild the published reproduction from run summaries",
        description="Tables, figures, runs.csv, paper_vs_reproduced.md, provenance.md and "
                    "README.md in --out, from the run summaries (or run records) under --from "
                    "and the kernel facts in --kernel.")
    publish.add_argument("--from", dest="runs", type=Path, default=Path("reproduction/runs"),
                         metavar="DIR", help="{dataset}/k{k}/{variant}.json files "
                                             "(default: reproduction/runs)")
    publish.add_argument("--out", type=Path, default=Path("reproduction"), metavar="DIR",
                         help="the published folder (default: reproduction)")
    publish.add_argument("--kernel", type=Path, metavar="DIR",
                         help="kernel facts {dataset}.json (default: OUT/kernel)")
    publish.add_argument("--paper", type=Path,
                         default=Path("workflow/resources/paper_results.csv"), metavar="CSV",
                         help="the paper's numbers (default: workflow/resources/paper_results.csv)")
    publish.add_argument("--config", type=Path, default=Path("config.yaml"), metavar="FILE",
                         help="datasets that only its studies beyond the paper run go to those studies' "
                              "own tables, not the paper's (default: config.yaml, when there is one)")
    publish.add_argument("--allow-dirty", action="store_true",
                         help="publish runs made in a checkout with uncommitted changes, marked as such "
                              "(refused by default: no commit reproduces them)")


def _compare_command(commands) -> None:
    compare = commands.add_parser(
        "compare", help="does a rerun repeat the published runs exactly?",
        description="For every run summary (or record) under RERUN, whether it repeats the published run of "
                    "the same name in every deterministic figure: the folds, every round's iterations, "
                    "support vectors, objective, rho and correct predictions. Prints a table; exits with 2 "
                    "when any run differs or has no published counterpart.")
    compare.add_argument("rerun", type=Path, metavar="RERUN", help="{dataset}/k{k}/{variant}.json files of the rerun")
    compare.add_argument("--published", type=Path, default=Path("reproduction/runs"), metavar="DIR",
                         help="the published run summaries (default: reproduction/runs)")


def _sitting_command(commands) -> None:
    sitting = commands.add_parser(
        "sitting", help="the jobs one sitting of the full-size run should take",
        description="The run summaries still missing under --summaries that one sitting of --minutes "
                    "should make, at the minutes an earlier run took them (--measured) or else the cost "
                    "model's: whole groups of one dataset and k first, largest first, so that each of "
                    "their ratios pairs runs of one machine, then jobs of groups too long for the "
                    "sitting; a cold round 1 that jobs share counts once. Leaves to another machine "
                    "the jobs whose closest pairs ran on another CPU model only. Prints their paths, one "
                    "a line, for Snakemake's targets, and what they add up to on stderr.")
    sitting.add_argument("--minutes", type=float, required=True, help="the sitting's time")
    sitting.add_argument("--summaries", type=Path, required=True, metavar="DIR",
                         help="the run's summaries, {dataset}/k{k}/{variant}.json (publish_dir/runs)")
    sitting.add_argument("--measured", type=Path, metavar="DIR",
                         help="an earlier full-size run's summaries (reproduction/runs): its jobs' seconds for "
                              "the rounds planned, in place of the cost model's")
    sitting.add_argument("--config", type=Path, metavar="FILE",
                         help="the tagged commit's config file (default: config.yaml of the checkout you are in)")
    sitting.add_argument("--any-cpu", action="store_true",
                         help="plan every job whatever CPU model its pairs ran on")


def _prepare_command(commands) -> None:
    prepare = commands.add_parser("prepare", help="fetch, verify and convert named datasets")
    prepare.add_argument("names", nargs="+", metavar="NAME")
    prepare.add_argument("--config", metavar="FILE", type=Path)


def main(argv: list[str] | None = None) -> int:
    """Run the ``alphaseed`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0, or 2 after printing an ``AlphaseedError`` on one line. Bad arguments
        exit with status 2 from argparse itself (``SystemExit``).
    """
    pin_blas_kernels()  # before NumPy loads, so that a run by hand repeats a pipeline job's
    args = _parser().parse_args(_negative_values_attached(sys.argv[1:] if argv is None else argv))
    commands = {"cv": _cv, "search": _search, "search-merge": _search_merge, "kernel-facts": _kernel_facts,
                "publish": _publish, "compare": _compare, "sitting": _sitting, "prepare": _prepare}
    try:
        commands[args.command](args)
    except AlphaseedError as error:
        print(f"alphaseed: error: {error}", file=sys.stderr)
        return 2
    return 0


def _prepare(args) -> None:
    """``alphaseed prepare``: each named dataset's processed file, printed as it is made."""
    from .pipeline.config import load_config
    from .pipeline.data import prepare_dataset

    config = load_config(args.config)
    for name in args.names:
        print(prepare_dataset(name, config))


def _setting(given, section: dict, key: str, default):
    """The command line's value if given, else the config section's, else ``default``."""
    return given if given is not None else section.get(key, default)


@dataclass
class _Loaded:
    """The data of --dataset or --data, and what the command needs to know of it."""

    X: object
    y: object
    name: str
    C: float | None
    gamma: float | None
    config: dict
    seed: int
    described: dict
    fingerprint: str | None


def _load(args, need_C_gamma: bool) -> _Loaded:
    """The data of --dataset (with its config entry's C and gamma) or of --data, subsampled if asked."""
    from .cv import stratified_subsample
    from .pipeline import data

    if args.dataset is not None:
        from .pipeline.config import dataset_entry, load_config

        config = load_config(args.config)
        entry = dataset_entry(config, args.dataset)
        X, y = data.load_dataset(args.dataset, config)
        name, fingerprint = args.dataset, entry.get("fingerprint")
        C = _setting(args.C, entry, "C", None)
        gamma = _setting(args.gamma, entry, "gamma", None)
        described = {"file": str(args.config or "config.yaml"), "dataset": entry,
                     "solver": config.get("solver", {}), "seed": config.get("seed", 0)}
    else:
        if need_C_gamma and (args.C is None or args.gamma is None):
            raise ConfigError("--data needs --C and --gamma (no config entry gives them)")
        config = {}
        X, y = data.load_dataset(args.data)
        name, C, gamma = args.data.stem, args.C, args.gamma
        fingerprint = data.fingerprint(y, X)
        described = {"file": None, "data": str(args.data)}
    seed = _setting(args.seed, config, "seed", 0)
    if args.subsample is not None:
        keep = stratified_subsample(y, args.subsample, seed)
        X, y = X[keep], y[keep]
    return _Loaded(X, y, name, C, gamma, config, seed, described, fingerprint)


def _solver_options(args, config: dict):
    """The SolverOptions of the command line, else of the config's solver section."""
    from .solver import SolverOptions

    solver = config.get("solver", {})
    return SolverOptions(eps=_setting(args.eps, solver, "eps", 1e-3),
                         cache_mb=_setting(args.cache_mb, solver, "cache_mb", None),
                         shrinking=False if args.no_shrinking else solver.get("shrinking", True),
                         kernel_mode=args.kernel_mode)


def _cv(args) -> None:
    """``alphaseed cv``: one cross-validation, its run record and, if asked, its summary."""
    from .cv import cross_validate
    from .pipeline.provenance import MachineWatch, collect_provenance
    from .pipeline.records import build_run_record, write_run_record

    start = time.perf_counter()
    data = _load(args, need_C_gamma=True)
    watch = MachineWatch()
    if args.first_round is not None and args.journal is None:
        raise ConfigError("--first-round needs --journal")
    journal = None if args.journal is None else _journal(args.journal, args.first_round)

    def progress(done: int, rounds: int, iterations: int, elapsed: float) -> None:
        print(f"{data.name} k={args.k} {args.method}: round {done}/{rounds}, {iterations} iterations, "
              f"{elapsed:.2f} s elapsed", file=sys.stderr, flush=True)

    result = cross_validate(data.X, data.y, data.C, data.gamma, args.k, args.method, seed=data.seed,
                            max_rounds=args.max_rounds, until_interval=args.until_interval, journal=journal,
                            progress=progress, n_jobs=-1, chains=args.chains,
                            options=_solver_options(args, data.config))
    provenance = collect_provenance(data.described, data.fingerprint, result.started_utc, result.finished_utc,
                                    watch.shares())
    if args.stands_in_for_libsvm and (result.method, result.kernel_mode) != ("cold", "cache"):
        raise ConfigError("--stands-in-for-libsvm: only a cold start in kernel mode cache takes LibSVM's steps")
    record = build_run_record(result, data.name, provenance, subsample=args.subsample,
                              stands_in_for="libsvm" if args.stands_in_for_libsvm else None)
    write_run_record(args.out, record)
    if args.summary is not None:
        from .pipeline.summaries import summarise, write_summary

        write_summary(args.summary, summarise(record, time.perf_counter() - start))
    if journal is not None:
        journal.remove()
    estimated = ""
    if result.estimated:
        interval = "" if result.interval is None else f", +-{100 * result.interval:.0f}% at 95%"
        estimated = f" (estimated from {result.rounds_run} rounds{interval})"
    print(f"{data.name} k={args.k} {args.method}: accuracy {result.accuracy:.2f}%, "
          f"{result.iterations} iterations, {result.seconds:.3f} s{estimated} -> {args.out}")


def _journal(folder: Path, first_round: Path | None = None):
    """The run's journal, stamped with the commit (a resumed run of other code is refused) and the CPU: rounds
    timed on another kind of CPU are dropped, so that one record's seconds come from one machine."""
    from .cv import RoundJournal
    from .pipeline.provenance import cpu_model, git_state

    journal = RoundJournal(folder, stamp={"git": git_state(), "cpu": cpu_model()}, first_round=first_round)
    written = journal.written_stamp()
    if written is not None and written.get("cpu") != journal.stamp["cpu"]:
        print(f"{folder}: its rounds were timed on {written.get('cpu')}, this machine's CPU is "
              f"{journal.stamp['cpu']}: the job starts afresh", file=sys.stderr)
        journal.remove()
    return journal


def _search(args) -> None:
    """``alphaseed search``: one grid search, written as JSON, CSV and heat map."""
    from .pipeline.provenance import MachineWatch, collect_provenance
    from .pipeline.searches import SearchSpec, run_search
    from .report.search import write_search

    data = _load(args, need_C_gamma=False)
    spec = SearchSpec(data.name, args.C, args.gamma, args.k, data.seed, args.method)
    watch = MachineWatch()
    options = replace(_solver_options(args, data.config), solver=args.solver)
    summary, points = run_search(data.X, data.y, spec, n_jobs=args.jobs, options=options,
                                 provenance=lambda started, finished: collect_provenance(
                                     data.described, data.fingerprint, started, finished, watch.shares()))
    written = write_search(summary, points, args.out)
    best, capped = written["best"], written["points_at_iteration_cap"]
    at_cap = f", {capped} points stopped at the iteration cap (not converged)" if capped else ""
    print(f"{data.name} {len(args.C)}x{len(args.gamma)} grid, k={args.k} {args.method}: best "
          f"log2 C = {best['log2_C']:g}, log2 gamma = {best['log2_gamma']:g}, accuracy "
          f"{best['accuracy']:.2f}%, {written['total_iterations']} iterations, "
          f"{written['seconds']:.2f} s{at_cap} -> {args.out}")


def _search_merge(args) -> None:
    """``alphaseed search-merge``: searches of one grid's gamma columns as one search."""
    from .report.search import merge_searches

    merged = merge_searches(args.parts, args.out)
    best = merged["best"]
    print(f"{merged['dataset']}: {len(args.parts)} gamma column(s) merged, best log2 C = {best['log2_C']:g}, "
          f"log2 gamma = {best['log2_gamma']:g}, accuracy {best['accuracy']:.2f}% -> {args.out}")


def _kernel_facts(args) -> None:
    """``alphaseed kernel-facts``: the kernel facts and Table 1's training-set class counts (k = 10)."""
    from .atomic import write_json
    from .pipeline.experiments import TABLE1_K
    from .pipeline.kernel_facts import kernel_facts, training_class_counts

    data = _load(args, need_C_gamma=False)
    if data.gamma is None:
        raise ConfigError("--data needs --gamma (no config entry gives it)")
    facts = {"dataset": data.name, "subsample": args.subsample, **kernel_facts(data.X, data.y, data.gamma),
             "training_class_counts": training_class_counts(data.y, int(TABLE1_K), data.seed)}
    write_json(args.out, facts)
    print(f"{data.name}: largest off-diagonal kernel value {facts['largest_off_diagonal']:.3g} "
          f"(gamma {data.gamma:g}, n {facts['n']}) -> {args.out}")


def _sitting(args) -> None:
    """``alphaseed sitting``: the target files of one sitting on stdout, their expected minutes on stderr."""
    from .pipeline.config import load_config
    from .pipeline.experiments import all_jobs, cpus_that_ran, held_for_other_cpus, sitting_jobs, taken_of_planned
    from .pipeline.provenance import cpu_model

    if args.minutes <= 0:
        raise ConfigError(f"--minutes must be positive, not {args.minutes:g}")
    config = load_config(args.config)
    this_cpu = cpu_model()
    held = set() if args.any_cpu else held_for_other_cpus(all_jobs(config), args.summaries, this_cpu)
    jobs = sitting_jobs(config, args.minutes, args.summaries, measured=args.measured, cpu=this_cpu, held=held)
    expected = sum(minutes for minutes, _ in jobs)
    for _, job in jobs:
        print(job.record_path(args.summaries.resolve()))
    source = "as the earlier run's took them" if args.measured else "at the cost model's estimates"
    print(f"{len(jobs)} jobs, {expected:.1f} min expected ({source}), for a sitting of {args.minutes:g} min",
          file=sys.stderr)
    if held:
        print(f"{len(held)} jobs held for another CPU model: the runs they pair with most closely ran only on "
              f"CPUs other than this one ({this_cpu}); --any-cpu plans them here", file=sys.stderr)
    if args.measured:
        paces = [("this run's", taken_of_planned(config, args.summaries, args.measured)),
                 (f"on this CPU ({this_cpu}), its", taken_of_planned(config, args.summaries, args.measured,
                                                                      cpu=this_cpu))]
        paces += [(f"of those, planned by runs on {plan_cpu}, the",
                   taken_of_planned(config, args.summaries, args.measured, cpu=this_cpu, planned_on=plan_cpu))
                  for plan_cpu in cpus_that_ran(all_jobs(config), args.measured)]
        for whose, ratios in paces:
            if len(ratios) >= 2:
                print(f"{whose} {len(ratios)} finished jobs of a minute or more took {statistics.median(ratios):.2f} "
                      f"of their planned time (median; 90th percentile "
                      f"{statistics.quantiles(ratios, n=10, method='inclusive')[-1]:.2f}): a sitting's length "
                      f"divided by that as --minutes plans it at that pace", file=sys.stderr)
    if not jobs and held:
        print("alphaseed: warning: every job still to run is held for another CPU model: run the next "
              "sitting on one, or plan these with --any-cpu", file=sys.stderr)
    if expected > args.minutes:
        print("alphaseed: warning: no job still to run fits the sitting; this one resumes at its first "
              "unfinished round in the next, so a single round longer than a sitting never finishes: "
              "give such a job a longer sitting", file=sys.stderr)


def _publish(args) -> None:
    """``alphaseed publish``: the published folder, each study beyond the paper in tables of its own."""
    from .pipeline.config import load_config
    from .pipeline.experiments import study_datasets
    from .report.publish import publish_folder

    studies = study_datasets(load_config(args.config)) if args.config.is_file() else {}
    written = publish_folder(args.runs, args.out, args.paper, kernel_folder=args.kernel, studies=studies,
                             allow_dirty=args.allow_dirty)
    print(f"{len(written)} files -> {args.out}")


def _compare(args) -> None:
    """``alphaseed compare``: the table of runs that repeat the published ones; ``PublishError`` if any does not."""
    from .report.formats import markdown
    from .report.runs import PublishError, compare_with_published

    rows = compare_with_published(args.published, args.rerun)
    print(markdown(rows))
    differing = int((rows["same"] == "no").sum())
    print(f"{len(rows) - differing} of {len(rows)} runs repeat the published ones exactly")
    if differing:
        raise PublishError(f"{differing} of {len(rows)} runs differ from the published ones (see the table)")


if __name__ == "__main__":
    sys.exit(main())
