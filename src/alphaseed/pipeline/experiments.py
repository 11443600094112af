"""The config's ``experiments`` expanded into cross-validation jobs, for the pipeline and the notebooks.

An experiment is datasets x k x methods in one kernel mode, feeding one table kind (``table1``,
``table3`` or ``loo``). A job is identified by (dataset, k, method, kernel mode), which is also its
run record's path; its settings (stratified subsample size, max_rounds) come from the experiment.
The same job may serve several experiments (Table 1's k = 10 runs are Table 3's too), but only
with the same settings, or the config is refused. An experiment's ``study`` names the family of
tables it feeds: ``paper`` (the default) the paper's, any other its own tables beside them.

Each job also has an expected time (``expected_seconds``, Snakemake's ``runtime``) from a small
cost model: the seconds of one round measured at full size or on subsamples, grown as a power of
the training-set size, times the rounds the job runs (docs/benchmarks/measured/pipeline.md says
where each figure of ``COSTS`` comes from); ``plan_summary`` adds them up for the dry run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..seeding import ato_memory_bytes

TABLE_KINDS = ("table1", "table3", "loo")
# Table 1 and the kernel facts' class counts are at k = 10, as the paper's Table 1.
TABLE1_K = "10"
PAPER_STUDY = "paper"


@dataclass(frozen=True)
class Job:
    """One cross-validation job: a dataset, k, method and kernel mode, with the settings it runs at.

    Parameters
    ----------
    dataset : str
        The dataset's name in the config.
    k : str
        The number of folds as text (``"10"``) or ``"loo"``, as the run record's path spells it.
    method : str
        ``libsvm``, ``cold`` or a seeder's name.
    kernel_mode : str
        Our solver's kernel mode (``cache``, ``gram``, ...); LibSVM has none of ours.
    subsample : int or None
        The size of the stratified subsample, or None for the whole dataset.
    max_rounds : int or None
        The rounds to run before the rest is estimated, or None for all.
    until_interval : float or None
        With ``max_rounds``, stop before it once the estimated iterations' 95 % interval is within
        +- this share of them; None: run ``max_rounds`` rounds.
    stands_in : bool
        A cold start in kernel mode cache that stands in for LibSVM in the tables.
    """

    dataset: str
    k: str  # "10" or "loo": the spelling of the run record's path
    method: str
    kernel_mode: str
    subsample: int | None
    max_rounds: int | None
    until_interval: float | None = None
    stands_in: bool = False

    @property
    def stem(self) -> str:
        """The run record's file name without ``.json``: the method and, but for ``libsvm``, its kernel mode."""
        return self.method if self.method == "libsvm" else f"{self.method}-{self.kernel_mode}"

    def record_path(self, run_dir: str | Path) -> Path:
        """Where the job's run record (or its summary) lives under ``run_dir``.

        Parameters
        ----------
        run_dir : str or Path
            The folder of a profile's run records, or of their summaries.

        Returns
        -------
        Path
            ``{run_dir}/{dataset}/k{k}/{stem}.json``.
        """
        return Path(run_dir) / self.dataset / f"k{self.k}" / f"{self.stem}.json"


def results_root(config: dict) -> Path:
    """``results_dir/profile``: every output of one profile lives under it.

    Parameters
    ----------
    config : dict
        The configuration (``results_dir``, default ``results``; ``profile``, default ``paper``).

    Returns
    -------
    Path
    """
    return Path(config.get("results_dir", "results")) / config.get("profile", "paper")


def _max_rounds(experiment: dict, dataset: str, k: str, method: str) -> int | None:
    """The rounds of the experiment's first ``max_rounds`` rule whose every key matches the job, if any."""
    for rule in experiment.get("max_rounds", []):
        if all(str(rule[key]) == value for key, value in (("dataset", dataset), ("k", k), ("method", method))
               if key in rule):
            return rule["rounds"]
    return None


def _subsample(config: dict, experiment: dict, dataset: str) -> int | None:
    """The experiment's own subsample size of ``dataset``, else the config's, else None."""
    own = experiment.get("subsample", {})
    return own[dataset] if dataset in own else config.get("subsample", {}).get(dataset)


def studies(config: dict) -> list[str]:
    """The studies of the config's experiments, in config order.

    Parameters
    ----------
    config : dict
        The validated configuration, whose experiments may name a ``study``.

    Returns
    -------
    list of str
        Each study once; an experiment without ``study`` is the paper's.
    """
    return list(dict.fromkeys(e.get("study", PAPER_STUDY) for e in config.get("experiments", {}).values()))


def study_datasets(config: dict) -> dict[str, set[str]]:
    """Each study beyond the paper and the datasets only it runs: their runs go to its tables, not the paper's.

    Parameters
    ----------
    config : dict
        The validated configuration.

    Returns
    -------
    dict of str to set of str
        Study name to the datasets of its experiments that no experiment of the paper runs.
    """
    datasets: dict[str, set] = {}
    for experiment in config.get("experiments", {}).values():
        datasets.setdefault(experiment.get("study", PAPER_STUDY), set()).update(experiment["datasets"])
    papers = datasets.pop(PAPER_STUDY, set())
    return {study: names - papers for study, names in datasets.items()}


def expand_experiments(config: dict, study: str = PAPER_STUDY) -> dict[str, list[Job]]:
    """Jobs of each table kind of one study, in config order, each job once per kind.

    Every experiment is checked, whatever its study: a job shared across studies needs the same settings.

    Parameters
    ----------
    config : dict
        The validated configuration.
    study : str, default ``"paper"``
        The study whose jobs are returned.

    Returns
    -------
    dict of str to list of Job
        ``table1``, ``table3`` and ``loo``, each to the jobs of that study's experiments of that kind.

    Raises
    ------
    ConfigError
        If an experiment names an unknown dataset, or two experiments give one job different settings.
    """
    jobs: dict[str, list[Job]] = {kind: [] for kind in TABLE_KINDS}
    seen: dict[tuple, tuple[str, Job]] = {}
    for name, experiment in config.get("experiments", {}).items():
        for dataset in experiment["datasets"]:
            if dataset not in config["datasets"]:
                raise ConfigError(f"config key 'experiments.{name}.datasets': no dataset named {dataset!r}")
            for k in map(str, experiment["k"]):
                for method in experiment["methods"]:
                    rounds = _max_rounds(experiment, dataset, k, method)
                    job = Job(dataset, k, method, experiment.get("kernel_mode", "cache"),
                              _subsample(config, experiment, dataset), rounds,
                              None if rounds is None else experiment.get("until_interval"),
                              experiment.get("stands_in_for_libsvm", False))
                    if job.stands_in and (job.method, job.kernel_mode) != ("cold", "cache"):
                        raise ConfigError(f"config key 'experiments.{name}': only a cold start in kernel mode "
                                          f"cache takes LibSVM's steps and can stand in for it, not {job.stem}")
                    identity = (job.dataset, job.k, job.stem)
                    if identity in seen and seen[identity][1] != job:
                        other, first = seen[identity]
                        raise ConfigError(
                            f"config key 'experiments.{name}': {job.stem} on {dataset} at k = {k} is also in "
                            f"experiment {other} with other settings (subsample {first.subsample} vs "
                            f"{job.subsample}, max_rounds {first.max_rounds} vs {job.max_rounds}, until_interval "
                            f"{first.until_interval} vs {job.until_interval}, stands in for LibSVM {first.stands_in} "
                            f"vs {job.stands_in}); make them agree"
                        )
                    seen.setdefault(identity, (name, job))
                    if experiment.get("study", PAPER_STUDY) == study and job not in jobs[experiment["table"]]:
                        jobs[experiment["table"]].append(job)
    return jobs


def all_jobs(config: dict, study: str | None = None) -> list[Job]:
    """Every job of one study, or of all studies (None), once.

    Parameters
    ----------
    config : dict
        The validated configuration.
    study : str, optional
        The study; None for all of them.

    Returns
    -------
    list of Job
        Each job once, though it may serve several tables or studies.
    """
    unique: dict[tuple, Job] = {}
    for name in studies(config) if study is None else [study]:
        for jobs in expand_experiments(config, name).values():
            for job in jobs:
                unique.setdefault((job.dataset, job.k, job.stem), job)
    return list(unique.values())


def job_size(config: dict, job: Job) -> tuple[int, int]:
    """(instances, features) of a job's data from its dataset entry; large defaults where the entry has none.

    Parameters
    ----------
    config : dict
        The validated configuration.
    job : Job
        The job; its subsample, if any, is its instance count.

    Returns
    -------
    tuple of (int, int)
    """
    return dataset_size(config, job.dataset, job.subsample)


def dataset_size(config: dict, dataset: str, subsample: int | None) -> tuple[int, int]:
    """(instances, features) of a dataset as a job sees it, for planning before the data is at hand.

    Parameters
    ----------
    config : dict
        The validated configuration.
    dataset : str
        The dataset's name.
    subsample : int or None
        The subsample size, which replaces the entry's ``n`` when given.

    Returns
    -------
    tuple of (int, int)
        The instances (``subsample``, else ``n``, else 100,000) and features (``dim``, else 1,000).
    """
    entry = config["datasets"][dataset]
    return subsample or entry.get("n", 100_000), entry.get("dim", 1_000)


def search_mem_mb(config: dict, dataset: str, k: int, kernel_mode: str, gammas: int) -> int:
    """Memory a grid-search job (``alphaseed search``) over ``gammas`` columns may take, in MB: one
    kernel at a time, as a cold cross-validation job, and for several gammas in ``gram`` or
    ``auto`` mode the float64 dot products they share, where ``kernel.shared_dots`` would keep
    them (binary data never do, but the features are not known here).

    Parameters
    ----------
    config : dict
        The validated configuration (the dataset's size, its subsample and the solver's ``cache_mb``).
    dataset : str
        The dataset searched.
    k : int
        The number of folds.
    kernel_mode : str
        The search's kernel mode.
    gammas : int
        The gamma columns the job runs.

    Returns
    -------
    int
    """
    from ..kernel import default_memory_budget, dots_fit_beside_gram

    n, dim = dataset_size(config, dataset, config.get("subsample", {}).get(dataset))
    memory = job_mem_mb(n, dim, str(k), "cold", kernel_mode, config["solver"]["cache_mb"])
    if gammas > 1 and kernel_mode in ("gram", "auto") and dots_fit_beside_gram(n, default_memory_budget()):
        memory += math.ceil(8 * n * n / 2**20)
    return memory


def job_mem_mb(n: int, dim: int, k: str, method: str, kernel_mode: str, cache_mb: float) -> int:
    """Memory a job may take, in MB, so that Snakemake never starts jobs that together exceed the machine.

    Interpreter and compiled code, the dense float64 features, the kernel (LibSVM's nodes and
    cache, our per-round cache, or the float32 Gram matrix), and the seeders' dense blocks: MIR's
    least-squares system (at most 1 GiB, or the ``|T| x |T|`` normal equations), ATO's column store and
    factor (``ato_memory_bytes``), 256 MB kernel slabs.

    Parameters
    ----------
    n, dim : int
        Instances and features of the job's data.
    k : str
        The number of folds as text, or ``"loo"``.
    method : str
        ``libsvm``, ``cold`` or a seeder's name.
    kernel_mode : str
        Our solver's kernel mode; ``gram`` and ``auto`` count a float32 Gram matrix.
    cache_mb : float
        The kernel cache's size in MB (LibSVM's, and ours outside ``gram`` and ``auto``).

    Returns
    -------
    int
    """
    mib = 2**20
    features = 8 * n * dim
    if method == "libsvm":
        return math.ceil((300 * mib + 3 * features + cache_mb * mib) / mib)
    n_folds = n if k == "loo" else int(k)
    added = math.ceil(n / n_folds)
    kernel = 4 * n * n if kernel_mode in ("gram", "auto") else cache_mb * mib
    seeding = {
        "mir": min(1 << 30, 8 * (n + 1) * added) * 2 + 8 * added * added,
        "ato": ato_memory_bytes(n),
        "sir": 256 * mib,
        "avg": 256 * mib,
        "top": 256 * mib,
        "full": 256 * mib,
    }.get(method, 0)
    return math.ceil((500 * mib + features + kernel + seeding) / mib)


# ---------------------------------------------------------------- expected time


@dataclass(frozen=True)
class RoundCost:
    """Seconds of one cross-validation round on 1 thread, measured at training-set size ``n_train``.

    A round on m training instances costs (m / n_train) ** exponent as much.

    Parameters
    ----------
    n_train : int
        The training-set size the seconds were measured at.
    exponent : float
        The power of the training-set size a round's time grows as.
    libsvm : float
        LibSVM's round.
    cache : float
        Our cold round in kernel mode cache.
    auto : float
        Our cold round on the Gram matrix.
    gram : float
        Computing the Gram matrix, once per job (at ``n_train`` instances, growing as their square).
    ato : float
        One seeded ATO round in cache mode: its path, not SMO, is its cost.
    mir : float, default 0.0
        MIR's seeding at k = 10 (its least squares, in any kernel mode), on top of its SMO.
    loo_seeded : dict, default {}
        A seeded leave-one-out round of AVG, TOP, MIR or SIR (by method) over the cold round, the mean of
        the rounds measured (1 for a method not given): most rounds leave out an instance whose removal
        moves no alpha and take no iteration, so it depends on the data and the method.
    """

    n_train: int
    exponent: float
    libsvm: float
    cache: float
    auto: float
    gram: float
    ato: float
    mir: float = 0.0
    loo_seeded: dict = field(default_factory=dict)


# Each figure is measured on 1 thread, at full size or on a sample (docs/benchmarks/measured/pipeline.md
# gives each one's source, size and machine). Adult's exponent comes from its full-size rounds and a
# 3,000-sample; Heart, Madelon and Webdata take it. MNIST's rounds are measured on a sample past the size
# at which LibSVM's 100 MB cache stops holding every row: below it a round is far cheaper, beyond it every
# row is computed anew and a round grows about as n^2.2. Adult's and Webdata's cache rounds are those of
# kernel rows kept as bit sets (their features are binary). ATO's Adult and Webdata rounds are the mean
# seeded round of a full k = 10 run on 2 threads (a timed job takes every core); MNIST's is estimated at full
# size: its seed measured (82 s), SMO's 51,075 iterations after it at the rate of MIR's measured round in cache
# mode, 2,830 s in all (34.0 at 7,200, rounded up).
# loo_seeded is the top of the mean seeded leave-one-out rounds of the runs published from cfe322fb03
# (Adult: AVG 0.21, TOP 0.07, MIR and SIR 0.44 of the cold round; Webdata: AVG 0.21, the others under 0.01),
# rounded up;
# Heart, Madelon and MNIST, whose kernel is (nearly) the identity, are planned at a cold round's cost.
COSTS = {
    "heart": RoundCost(243, 2.39, libsvm=0.004, cache=0.007, auto=0.004, gram=0.001, ato=0.06),
    "madelon": RoundCost(1800, 2.39, libsvm=1.6, cache=0.6, auto=0.03, gram=0.2, ato=0.33),
    "adult": RoundCost(29305, 2.39, libsvm=180.0, cache=41.0, auto=11.0, gram=13.0, ato=86.0, mir=180.0,
                       loo_seeded={"avg": 0.25, "top": 0.1, "mir": 0.45, "sir": 0.45}),
    "webdata": RoundCost(44774, 2.39, libsvm=1080.0, cache=240.0, auto=79.0, gram=36.0, ato=272.0, mir=84.0,
                         loo_seeded={"avg": 0.25, "top": 0.01, "mir": 0.01, "sir": 0.01}),
    "mnist": RoundCost(7200, 2.2, libsvm=140.0, cache=80.0, auto=1.1, gram=1.9, ato=34.0, mir=17.0),
}
# The informative study's datasets are the paper's with other features (svm-scale) but the same
# instances: planned at the paper's figures, not measured apart.
COSTS.update(heart_scale=COSTS["heart"], madelon_scale=COSTS["madelon"], mnist_scale=COSTS["mnist"])
# A dataset the model has no measurement of is planned at Adult's cost per round.
FALLBACK_COST = "adult"
# A seeded round's time over the cold round's in the same kernel mode, from the quick profile's run
# records at k = 10 and in leave-one-out, each at the top of the ratios seen there or above (the ratios:
# docs/benchmarks/measured/pipeline.md); ATO's k-fold round has its own figure.
SEEDED_ROUND = {"sir": 1.1, "mir": 1.3, "avg": 1.0, "top": 1.0, "ato": 5.0}
# ATO's seeded leave-one-out round over its k-fold one at the same size, as full Adult's runs give it
# (docs/benchmarks/measured/pipeline.md). Its cost is the factor of the free support vectors' kernel, which
# one instance barely shrinks, so it is ATO's k-fold figure, not the cold round, that it follows.
ATO_LOO_SHARE = 0.57
# Starting the job, loading the data and Numba's cached code, writing the record, as the quick profile's
# Snakemake benchmarks show it.
JOB_OVERHEAD_SECONDS = 3.0


def _rounds(job: Job, n: int) -> tuple[int, int]:
    """(training-set size of a round, rounds the job runs)."""
    n_folds = n if job.k == "loo" else int(job.k)
    run = n_folds if job.max_rounds is None else min(job.max_rounds, n_folds)
    return n - math.ceil(n / n_folds), run


def expected_seconds(job: Job, n: int) -> float:
    """The job's expected wall time on 1 thread (see ``RoundCost``); ``n`` is its data's size after any subsample.

    Parameters
    ----------
    job : Job
        The job; its dataset's ``COSTS`` entry (else Adult's), k, method, kernel mode and max_rounds count.
    n : int
        Instances of the job's data.

    Returns
    -------
    float
        Seconds: the job's overhead, the Gram matrix outside cache mode, and its rounds.
    """
    cost = COSTS.get(job.dataset, COSTS[FALLBACK_COST])
    n_train, rounds = _rounds(job, n)

    def scaled(seconds: float, size: int = n_train) -> float:
        return seconds * (size / cost.n_train) ** cost.exponent

    if job.method == "libsvm":
        return JOB_OVERHEAD_SECONDS + rounds * scaled(cost.libsvm)
    fast = job.kernel_mode != "cache"
    cold_round = cost.auto if fast else cost.cache
    cold = scaled(cold_round)
    setup = cost.gram * (n / cost.n_train) ** 2 if fast else 0.0
    if job.method == "cold":
        work = rounds * cold
    elif job.method in ("avg", "top"):
        # every round is seeded from a model of all n instances, trained first
        seeded = cost.loo_seeded.get(job.method, 1.0) if job.k == "loo" else SEEDED_ROUND[job.method]
        work = scaled(cold_round, n) + rounds * seeded * cold
    else:
        seeded = (cost.loo_seeded.get(job.method, 1.0) if job.k == "loo" and job.method != "ato"
                  else SEEDED_ROUND[job.method]) * cold
        if job.method == "ato":
            # ATO's path, not SMO, is its cost: one fold's path, or a share of it in leave-one-out
            seeded = scaled(cost.ato) if job.k != "loo" else max(seeded, ATO_LOO_SHARE * scaled(cost.ato))
        elif job.method == "mir" and job.k != "loo":
            # its least squares over the |T| = n_train / (k - 1) columns added: m |T|^2 work
            seeded += scaled(cost.mir) * (9 / (int(job.k) - 1)) ** 2
        work = cold + (rounds - 1) * seeded
    return JOB_OVERHEAD_SECONDS + setup + work


def job_runtime_minutes(config: dict, job: Job) -> int:
    """Snakemake's ``runtime`` of a job: its expected time in whole minutes.

    Parameters
    ----------
    config : dict
        The validated configuration.
    job : Job
        The job.

    Returns
    -------
    int
        ``expected_seconds`` rounded up to minutes, at least 1.
    """
    return max(1, math.ceil(expected_seconds(job, job_size(config, job)[0]) / 60))


def wall_minutes(minutes: list[float], cores: int) -> float:
    """Wall time of jobs on ``cores`` single-thread workers, each job started longest first on the first free one.

    Memory limits, which can keep a Gram-matrix job from sharing the machine, are not modelled.

    Parameters
    ----------
    minutes : list of float
        Each job's expected minutes.
    cores : int
        The workers.

    Returns
    -------
    float
        Minutes until the last worker is free.
    """
    free = [0.0] * cores
    for m in sorted(minutes, reverse=True):
        free[free.index(min(free))] += m
    return max(free)


def plan_summary(config: dict, cores: tuple[int, ...] = (2, 6), summaries: str | Path | None = None,
                 measured: str | Path | None = None) -> str:
    """The plan's expected time, for the dry run: the total, the wall time on ``cores``, and each job longest first.

    A cold round 1 that a cold start, ATO, MIR and SIR share (``RoundJournal``) counts once in a total, and not
    at all in the time still to run where a finished job left it in its journal; so the whole run's total is
    the same however many of its jobs have finished.

    Parameters
    ----------
    config : dict
        The validated configuration; every study's jobs are planned.
    cores : tuple of int, default (2, 6)
        The machine sizes to give the wall time for, where jobs may share the machine (not ``timed_jobs_alone``).
    summaries : str or Path, optional
        The folder of finished jobs' run summaries; the jobs found there are marked done and the time
        still to run is given apart (a resumed full-size run).
    measured : str or Path, optional
        An earlier full-size run's summaries, whose seconds plan its jobs (``planned_minutes``).

    Returns
    -------
    str
        The report, one line per job after the totals: a finished job at its whole minutes, one still to run
        less a round 1 journalled for it.
    """
    jobs = all_jobs(config)
    done = {job for job in jobs if summaries is not None and job.record_path(summaries).exists()}
    whole = _planned_jobs(config, jobs, set(), measured)
    left = _planned_jobs(config, [job for job in jobs if job not in done], first_rounds_left(jobs, summaries),
                         measured)

    def totals(planned: list[PlannedJob]) -> str:
        minutes = _added_minutes(planned)
        if config.get("timed_jobs_alone", False):   # every timed job takes the machine: one after another
            return f"{sum(minutes) / 60:.1f} h in total, one job at a time (timed_jobs_alone) on any number of cores"
        walls = ", ".join(f"{wall_minutes(minutes, c) / 60:.1f} h on {c} cores" for c in cores)
        return f"{sum(minutes) / 60:.1f} h in total; wall {walls}"

    shown = [planned_job for planned_job in whole if planned_job.job in done] + left
    lines = [f"  {p.minutes:7.1f} min  {p.job.dataset} k={p.job.k} {p.job.stem}"
             + (f" (first {p.job.max_rounds} rounds)" if p.job.max_rounds else "") + (" done" if p.job in done else "")
             for p in sorted(shown, key=lambda p: -p.minutes)]
    source = (f"as the run in {measured} took them, else alphaseed.pipeline.experiments.COSTS" if measured
              else "alphaseed.pipeline.experiments.COSTS")
    header = [f"Expected time of the {len(jobs)} cross-validation jobs (profile {config.get('profile', 'paper')}, "
              f"1 thread each, {source}, each cold round 1 that jobs share trained once): {totals(whole)}"]
    if done:
        header.append(f"{len(done)} done (summaries in {summaries}); {len(left)} still to run: {totals(left)}")
    return "\n".join(header + lines)


@dataclass(frozen=True)
class PlannedJob:
    """A job still to run as a sitting plans it.

    Parameters
    ----------
    minutes : float
        Its expected minutes, a cold round 1 that it would train itself included.
    group : tuple
        Its dataset and k: the runs that one ratio of the tables pairs.
    job : object
        The job.
    first_round : float
        The part of ``minutes`` that its cold round 1 takes, which the first job of ``shares`` to run
        trains for the others (``RoundJournal``'s first round); 0 where it has none to share.
    shares : tuple or None
        Its dataset, k and kernel mode where it shares a cold round 1, else None.
    """

    minutes: float
    group: tuple
    job: object
    first_round: float = 0.0
    shares: tuple | None = None


def _sitting_minutes(jobs: list[PlannedJob]) -> float:
    """The minutes of ``jobs`` run in one sitting: each shared cold round 1 once, at its longest estimate."""
    first_rounds: dict[tuple, float] = {}
    own = 0.0
    for planned in jobs:
        if planned.shares is None:
            own += planned.minutes
        else:
            own += planned.minutes - planned.first_round
            first_rounds[planned.shares] = max(first_rounds.get(planned.shares, 0.0), planned.first_round)
    return own + sum(first_rounds.values())


def choose_sitting(planned: list[PlannedJob], minutes: float) -> list[tuple[float, object]]:
    """What one sitting of ``minutes`` runs of the jobs still to run.

    A ratio of the tables pairs runs of one group (dataset and k), and sittings land on different
    machines, so whole groups go first, each only where it fits the time left: every ratio of such a
    group is one machine's. They go largest first, as in first-fit-decreasing bin packing: a small group
    fills what any later sitting leaves, a large one left to the end needs a sitting of its own. Then, in
    the time left, the jobs of groups too long for this sitting, which are split anyway, largest first by
    what each adds (a seeder whose cold round 1 a chosen job trains adds only its later rounds). Where
    nothing fits, the shortest job alone: a job cut short resumes at its first unfinished round in the
    next sitting.

    Parameters
    ----------
    planned : list of PlannedJob
        Each job still to run.
    minutes : float
        The sitting's time.

    Returns
    -------
    list of (float, object)
        The jobs, group by group, each group's shortest first, each with the minutes it adds to the
        sitting after the jobs before it: a shared cold round 1 falls to the first of them, and where a
        later one's estimate of that round is longer, the difference to that one.
    """
    groups: dict[tuple, list[PlannedJob]] = {}
    for planned_job in planned:
        groups.setdefault(planned_job.group, []).append(planned_job)
    by_size = sorted(groups.values(), key=_sitting_minutes, reverse=True)
    chosen: list[PlannedJob] = []
    for jobs in by_size:
        if _sitting_minutes(chosen + jobs) <= minutes:
            chosen += jobs
    split = [planned_job for jobs in by_size if _sitting_minutes(jobs) > minutes for planned_job in jobs]
    while True:
        fitting = [i for i, planned_job in enumerate(split) if _sitting_minutes(chosen + [planned_job]) <= minutes]
        if not fitting:
            break
        chosen.append(split.pop(max(fitting, key=lambda i: _sitting_minutes(chosen + [split[i]]))))
    if not chosen and planned:
        chosen = [min(planned, key=lambda planned_job: planned_job.minutes)]
    group_order: dict[tuple, int] = {}
    for planned_job in chosen:
        group_order.setdefault(planned_job.group, len(group_order))
    in_order = sorted(chosen, key=lambda planned_job: (group_order[planned_job.group], planned_job.minutes))
    return [(_sitting_minutes(in_order[:i + 1]) - _sitting_minutes(in_order[:i]), planned_job.job)
            for i, planned_job in enumerate(in_order)]


# The methods whose round 1 is the same cold training of our solver, kept for one another (``RoundJournal``).
COLD_FIRST_ROUND = ("cold", "ato", "mir", "sir")


def first_round_seconds(job: Job, n: int) -> float:
    """The expected seconds of a job's cold round 1, which a cold start, ATO, MIR and SIR of one dataset, k and
    kernel mode share (``RoundJournal``'s first round): 0 for the other methods, whose round 1 is not cold.

    Parameters
    ----------
    job : Job
        The job.
    n : int
        Instances of the job's data.

    Returns
    -------
    float
    """
    if job.method not in COLD_FIRST_ROUND:
        return 0.0
    cost = COSTS.get(job.dataset, COSTS[FALLBACK_COST])
    n_train, _ = _rounds(job, n)
    return (cost.auto if job.kernel_mode != "cache" else cost.cache) * (n_train / cost.n_train) ** cost.exponent


def measured_seconds(job: Job, summary: dict, first_round_shared: bool) -> float:
    """A job's seconds as an earlier run of it took them (its run summary), for the rounds the job runs.

    The rounds that run took are taken as they were, and rounds beyond them at the mean of its rounds after
    the first (a seeder's round 1 is cold and its later ones much shorter), plus what that run spent
    outside its rounds (loading, compiling): its wall time less the rounds it trained itself, which leaves
    out a round 1 it took from another job's journal and rounds it resumed, whose seconds are another run's.
    A run that stopped before its cap (``until_interval``) stops at the same round again: the rule reads
    iterations, which the code's speed does not change.

    Parameters
    ----------
    job : Job
        The job.
    summary : dict
        The earlier run's summary (``alphaseed cv --summary``).
    first_round_shared : bool
        Whether the job takes its cold round 1 from another job's journal: that round's seconds are left out.

    Returns
    -------
    float
    """
    facts = summary["summary"]
    ran, total = facts["rounds_run"], facts["rounds_total"]
    cap_then = summary["params"]["max_rounds"]
    stopped_early = cap_then is not None and ran < min(cap_then, total)
    rounds = ran if stopped_early else min(job.max_rounds or total, total)
    each = [sum(r["seconds"].values()) for r in summary["rounds"]]
    not_trained_then = facts.get("rounds_shared", 0) + facts.get("rounds_resumed", 0)
    outside_rounds = max(summary["job"]["wall_seconds"] - sum(each[not_trained_then:]), 0.0)
    later = each[1:] or each
    seconds = outside_rounds + sum(each[:rounds]) + max(rounds - len(each), 0) * sum(later) / len(later)
    if first_round_shared and job.method in COLD_FIRST_ROUND:
        seconds -= each[0]
    return max(seconds, 0.0)


def planned_minutes(config: dict, summaries: str | Path | None = None,
                    measured: str | Path | None = None) -> dict[Job, float]:
    """Each job's expected minutes: as an earlier run's summary in ``measured`` gives them
    (``measured_seconds``), else the cost model's (``expected_seconds``), in either case less the cold
    round 1 where a finished job in ``summaries`` of the same dataset, k and kernel mode left it
    (``first_round_seconds``).

    Parameters
    ----------
    config : dict
        The validated configuration; every study's jobs are planned.
    summaries : str or Path, optional
        The folder of finished jobs' run summaries.
    measured : str or Path, optional
        The run summaries of an earlier full-size run (the published one): its jobs' seconds plan
        the same jobs better than the cost model, whose figures date from older code.

    Returns
    -------
    dict
        Minutes by job, finished ones included.
    """
    jobs = all_jobs(config)
    left = first_rounds_left(jobs, summaries)
    return {job: job_minutes(config, job, shared=(job.dataset, job.k, job.kernel_mode) in left, measured=measured)
            for job in jobs}


def first_rounds_left(jobs: list[Job], summaries: str | Path | None, cpu: str | None = None) -> set[tuple]:
    """Where a finished job left its cold round 1 for the others (``RoundJournal``'s first round).

    Parameters
    ----------
    jobs : list of Job
        The run's jobs.
    summaries : str or Path or None
        The folder of finished jobs' run summaries; None: none finished.
    cpu : str, optional
        The CPU model of the machine that would take it up: a round 1 journalled on another is dropped
        there and trained again. None: any.

    Returns
    -------
    set of tuple
        The (dataset, k, kernel mode) of every finished cold start, ATO, MIR or SIR job (of those that ran
        on ``cpu`` or name no CPU).
    """
    if summaries is None:
        return set()
    return {(job.dataset, job.k, job.kernel_mode) for job, ran_on in _finished_on(jobs, summaries).items()
            if job.method in COLD_FIRST_ROUND and (cpu is None or ran_on in (cpu, None))}


def _finished_on(jobs: list[Job], summaries: str | Path) -> dict[Job, str | None]:
    """The CPU model each finished job of ``jobs`` ran on, as its summary's provenance names it (or None)."""
    ran_on: dict[Job, str | None] = {}
    for job in jobs:
        path = job.record_path(summaries)
        if path.exists():
            ran_on[job] = json.loads(path.read_text(encoding="utf-8")).get("provenance", {}).get("cpu")
    return ran_on


def cpus_that_ran(jobs: list[Job], summaries: str | Path) -> list[str]:
    """The CPU models the finished jobs of ``jobs`` in ``summaries`` ran on, as their provenance names them.

    Parameters
    ----------
    jobs : list of Job
        The run's jobs.
    summaries : str or Path
        The folder of finished jobs' run summaries.

    Returns
    -------
    list of str
        The CPU models, sorted; none where the summaries name no CPU.
    """
    return sorted({cpu for cpu in _finished_on(jobs, summaries).values() if cpu is not None})


def held_for_other_cpus(jobs: list[Job], summaries: str | Path, cpu: str) -> set[Job]:
    """The unfinished jobs whose ratios pair them most closely with finished runs of other CPU models only.

    The CPU models a run is lent differ in speed by as much as some ratios show, and a round 1 journalled
    on one is dropped on another (``RoundJournal``), so each job goes to the machine of the runs it pairs
    with most closely, the first of these that has finished: those of its dataset, k and kernel mode (its
    shared round 1, cold over seeded in one engine); else its dataset and k's LibSVM or the cold start
    that stands in for it (the speed-up over LibSVM); else any of its dataset and k (LibSVM's own
    partners, or a kernel mode none of whose runs has finished). A CPU model is the exact name that
    provenance records, so two generations of one vendor's are two.

    Parameters
    ----------
    jobs : list of Job
        The run's jobs.
    summaries : str or Path
        The folder of finished jobs' run summaries, whose provenance names their CPU model.
    cpu : str
        This machine's CPU model (``provenance.cpu_model``).

    Returns
    -------
    set of Job
        The jobs to leave to a machine of another CPU model; none where the runs name no CPU.
    """
    ran_on = _finished_on(jobs, summaries)
    held: set[Job] = set()
    for job in jobs:
        if job in ran_on:
            continue
        group = [other for other in ran_on if (other.dataset, other.k) == (job.dataset, job.k)]
        closest = ([other for other in group if "libsvm" not in (job.method, other.method)
                    and other.kernel_mode == job.kernel_mode],
                   [other for other in group if other.method == "libsvm" or other.stands_in],
                   group)
        partners = next((runs for runs in closest if runs), [])
        cpus = {ran_on[other] for other in partners} - {None}
        if cpus and cpu not in cpus:
            held.add(job)
    return held


def _earlier_summary(job: Job, measured: str | Path | None) -> dict | None:
    """The earlier run's summary of the same job (same subsample) in ``measured``, or None."""
    path = None if measured is None else job.record_path(measured)
    if path is None or not path.exists():
        return None
    summary = json.loads(path.read_text(encoding="utf-8"))
    same_job = summary["params"].get("subsample") == job.subsample and summary["job"].get("wall_seconds") is not None
    return summary if same_job else None


def job_minutes(config: dict, job: Job, *, shared: bool, measured: str | Path | None = None) -> float:
    """A job's expected minutes, as ``planned_minutes`` gives them.

    Parameters
    ----------
    config : dict
        The validated configuration.
    job : Job
        The job.
    shared : bool
        Whether it takes its cold round 1 from another job's journal (``first_rounds_left``).
    measured : str or Path, optional
        An earlier full-size run's summaries, whose seconds plan the jobs it ran (``measured_seconds``).

    Returns
    -------
    float
    """
    earlier = _earlier_summary(job, measured)
    if earlier is not None:
        return measured_seconds(job, earlier, shared) / 60
    n = job_size(config, job)[0]
    return (expected_seconds(job, n) - (first_round_seconds(job, n) if shared else 0.0)) / 60


def taken_of_planned(config: dict, summaries: str | Path, measured: str | Path, *,
                     cpu: str | None = None, planned_on: str | None = None) -> list[float]:
    """How much of its planned time each finished job of this run took: its wall seconds over the seconds
    the earlier run in ``measured`` plans it at (``measured_seconds``, less its round 1 where it took it
    from another job), for the jobs that ran in both, in one go and for a minute or more as planned.

    A sitting's length is chosen against the plan; this says how far the plan is from this run's machines.

    Parameters
    ----------
    config : dict
        The validated configuration of the run's tagged commit.
    summaries : str or Path
        The folder of this run's finished jobs' summaries.
    measured : str or Path
        The earlier full-size run's summaries that plan the jobs.
    cpu : str, optional
        Only the jobs that ran on this CPU model (their provenance's ``cpu``): the machines a run is lent
        differ by more than a sitting's margin, so a sitting is planned at its own machine's pace.
    planned_on : str, optional
        Only the jobs whose earlier run ran on this CPU model: a plan is that machine's time, so a
        machine's pace against plans from its own model and from another differ.

    Returns
    -------
    list of float
        One ratio per such job, sorted.
    """
    ratios = []
    for job in all_jobs(config):
        done, earlier = job.record_path(summaries), _earlier_summary(job, measured)
        if earlier is None or not done.exists():
            continue
        record = json.loads(done.read_text(encoding="utf-8"))
        if record["summary"].get("rounds_resumed", 0) or record["job"].get("wall_seconds") is None:
            continue
        if cpu is not None and record.get("provenance", {}).get("cpu") != cpu:
            continue
        if planned_on is not None and earlier.get("provenance", {}).get("cpu") != planned_on:
            continue
        planned = measured_seconds(job, earlier, first_round_shared=record["summary"].get("rounds_shared", 0) > 0)
        if planned >= 60:
            ratios.append(record["job"]["wall_seconds"] / planned)
    return sorted(ratios)


def sitting_jobs(config: dict, minutes: float, summaries: str | Path,
                 measured: str | Path | None = None, *, cpu: str | None = None,
                 held: set[Job] | frozenset = frozenset()) -> list[tuple[float, Job]]:
    """The jobs one sitting of the full-size run should take (``choose_sitting``) of those with no run
    summary in ``summaries`` yet, at their ``planned_minutes``, each cold round 1 that such jobs share
    counted once, less the jobs ``held`` for another machine (``held_for_other_cpus``); on a machine of
    CPU model ``cpu``, with the cold round 1 of those whose journalled one it would drop.

    Parameters
    ----------
    config : dict
        The validated configuration of the run's tagged commit.
    minutes : float
        The sitting's time.
    summaries : str or Path
        The folder of finished jobs' run summaries.
    measured : str or Path, optional
        An earlier full-size run's summaries (``planned_minutes``).
    cpu : str, optional
        The sitting's CPU model; None: plan as if every machine were of one.
    held : set of Job, optional
        The jobs to leave out (``held_for_other_cpus``).

    Returns
    -------
    list of (float, Job)
        Each job with the minutes it adds to the sitting (``choose_sitting``).
    """
    jobs = all_jobs(config)
    to_run = [job for job in jobs if job not in held and not job.record_path(summaries).exists()]
    return choose_sitting(_planned_jobs(config, to_run, first_rounds_left(jobs, summaries, cpu), measured), minutes)


def _planned_jobs(config: dict, jobs: list[Job], left: set[tuple], measured: str | Path | None) -> list[PlannedJob]:
    """``jobs`` at their ``job_minutes``, each cold round 1 marked as shared among them unless a finished job
    left it in its journal (``left``, from ``first_rounds_left``), in which case none of them trains it."""
    planned = []
    for job in jobs:
        key = (job.dataset, job.k, job.kernel_mode)
        own = job_minutes(config, job, shared=key in left, measured=measured)
        if job.method in COLD_FIRST_ROUND and key not in left:
            first_round = own - job_minutes(config, job, shared=True, measured=measured)
            planned.append(PlannedJob(own, (job.dataset, job.k), job, first_round, key))
        else:
            planned.append(PlannedJob(own, (job.dataset, job.k), job))
    return planned


def _added_minutes(planned: list[PlannedJob]) -> list[float]:
    """Each job's minutes with a shared cold round 1 counted on one of its sharers only, the one whose estimate
    of it is longest: they add up to ``_sitting_minutes``."""
    trained: set[tuple] = set()
    added = []
    for planned_job in sorted(planned, key=lambda planned_job: -planned_job.first_round):
        added.append(planned_job.minutes - (planned_job.first_round if planned_job.shares in trained else 0.0))
        if planned_job.shares is not None:
            trained.add(planned_job.shares)
    return added
