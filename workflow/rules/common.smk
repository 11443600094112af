# Settings and helpers of the cv, tables and figures rules, all derived from the config's experiments.
import sys
from pathlib import Path

from alphaseed.pipeline.grid import log2_range
from alphaseed.pipeline.experiments import (
    Job,
    all_jobs,
    expand_experiments,
    job_mem_mb,
    job_runtime_minutes,
    job_size,
    plan_summary,
    results_root,
    search_mem_mb,
)

RESULTS = str(results_root(config))
# Run summaries, kernel facts and the published folder: what a resumed run starts from.
PUBLISHED = config.get("publish_dir") or f"{RESULTS}/published"
JOBS = {(job.dataset, job.k, job.stem): job for job in all_jobs(config)}
TABLE_JOBS = expand_experiments(config)
KINDS = [kind for kind, jobs in TABLE_JOBS.items() if jobs]
PAPER_RESULTS = "workflow/resources/paper_results.csv"

TABLE_NAMES = (
    ["table1", "table2"] * ("table1" in KINDS)
    + ["table3"] * ("table3" in KINDS)
    + ["loocv"] * ("loo" in KINDS)
)
TABLE_OUTPUTS = [
    f"{RESULTS}/tables/{name}.{ext}"
    for name in TABLE_NAMES
    for ext in ("csv", "md", "tex", "html")
] + [f"{RESULTS}/tables/paper_vs_reproduced.{ext}" for ext in ("md", "html")]
FIGURE_NAMES = {
    "table1": "iterations_per_round",
    "table3": "speedup_vs_k",
    "loo": "loocv",
}
FIGURE_OUTPUTS = [
    f"{RESULTS}/figures/{FIGURE_NAMES[kind]}.{ext}"
    for kind in KINDS
    for ext in ("png", "pdf")
]


def run_summaries(kind):
    """The summaries of a table kind's jobs: the tables read these, never the full run records."""
    return [str(job.record_path(f"{PUBLISHED}/runs")) for job in TABLE_JOBS[kind]]


def dataset_unless_done(output):
    """Input function: the job's processed dataset (ancient), except when its ``output`` exists
    and the dataset does not.

    A clone holding the published summaries but no data must not plan their jobs again, and
    Snakemake reruns a job whose input is missing but producible (``ancient`` helps only once the
    file exists). Where the dataset exists it stays the input, so a finished job's recorded inputs
    never change.
    """

    def dataset(wildcards):
        path = f"{DATA_DIR}/processed/{wildcards.dataset}.npz"
        done = Path(output.format(**wildcards)).exists()
        return [] if done and not Path(path).exists() else ancient(path)

    return dataset


def kernel_facts_arguments(wildcards, output):
    """``alphaseed kernel-facts`` on the data of the dataset's Table 1 runs (its subsample, if any)."""
    job = next(job for job in TABLE_JOBS["table1"] if job.dataset == wildcards.dataset)
    gamma = config["datasets"][job.dataset]["gamma"]
    arguments = ["kernel-facts", "--dataset", job.dataset, "--gamma", str(gamma)]
    arguments += ["--seed", str(config["seed"]), "--out", output[0]]
    if job.subsample is not None:
        arguments += ["--subsample", str(job.subsample)]
    return arguments


def job_of(wildcards):
    """The configured job of an output path; a path outside the experiments runs with defaults."""
    key = (wildcards.dataset, wildcards.k, wildcards.variant)
    if key in JOBS:
        return JOBS[key]
    method, _, mode = wildcards.variant.partition("-")
    return Job(wildcards.dataset, wildcards.k, method, mode or "cache", None, None)


def cv_mem_mb(wildcards):
    job = job_of(wildcards)
    n, dim = job_size(config, job)
    return job_mem_mb(
        n, dim, job.k, job.method, job.kernel_mode, config["solver"]["cache_mb"]
    )


def cv_runtime(wildcards, attempt):
    """Expected minutes (alphaseed.pipeline.experiments' cost model; the dry run prints their sum), doubled
    at each retry: a cluster that killed a job at its estimate gives it more time."""
    return job_runtime_minutes(config, job_of(wildcards)) * 2 ** (attempt - 1)


# Timed jobs (cv, search) compute on TIMED_THREADS thread(s), the paper's single-threaded setting.
TIMED_THREADS = 1


def timed_job_cores(wildcards):
    """Cores a timed job reserves: with timed_jobs_alone, every core of this machine, so that no
    other job runs beside it and its seconds are its own; on a cluster, its own allocation.
    """
    if config["timed_jobs_alone"] and workflow.local_exec:
        return workflow.cores
    return TIMED_THREADS


def first_round_folder(wildcards):
    """Where the cold round 1 that a dataset and k's cold, ATO, MIR and SIR jobs share in one kernel mode is kept
    (``alphaseed cv --first-round``): on full MNIST it takes 1.5 hours a job in the paper's setting.
    """
    job = job_of(wildcards)
    return f"{PUBLISHED}/journal/{job.dataset}/k{job.k}/first-round-{job.kernel_mode}"


def cv_arguments(wildcards):
    """Arguments of ``alphaseed cv``: every setting explicit, so that changing one reruns the job."""
    job = job_of(wildcards)
    entry, solver = config["datasets"][job.dataset], config["solver"]
    arguments = ["cv", "--dataset", job.dataset, "--k", job.k, "--method", job.method]
    arguments += ["--kernel-mode", job.kernel_mode, "--seed", str(config["seed"])]
    arguments += ["--C", str(entry["C"]), "--gamma", str(entry["gamma"])]
    arguments += ["--eps", str(solver["eps"]), "--cache-mb", str(solver["cache_mb"])]
    if not solver["shrinking"]:
        arguments.append("--no-shrinking")
    if job.subsample is not None:
        arguments += ["--subsample", str(job.subsample)]
    if job.max_rounds is not None:
        arguments += ["--max-rounds", str(job.max_rounds)]
    if job.until_interval is not None:
        arguments += ["--until-interval", str(job.until_interval)]
    if job.stands_in:
        arguments.append("--stands-in-for-libsvm")
    return arguments


def with_report(path, category):
    """HTML tables and PNG figures go in the report (it shows only those inline)."""
    if Path(path).suffix not in (".html", ".png"):
        return path
    caption = f"../report/{category.lower()}/{Path(path).stem}.rst"
    return report(path, caption=caption, category=category)


# Without --resources mem_mb, limit the jobs' declared memory to what this machine has free, so
# that parallel jobs never exceed it together (cluster profiles set their own limit).
if "mem_mb" not in workflow.global_resources:
    import psutil

    workflow.register_resource("mem_mb", psutil.virtual_memory().available // 2**20)


# The plan's expected time, before the DAG (a dry run too: its executor is chosen only after
# parsing); cluster and subprocess jobs parse the workflow again and stay quiet.
# The paper profile's jobs are planned at the seconds the published full-size run took them, where it has
# them: the cost model's figures date from older, slower code.
if workflow.is_main_process:
    measured = (
        "reproduction/runs"
        if config.get("profile") == "paper" and Path("reproduction/runs").is_dir()
        else None
    )
    print(
        plan_summary(config, summaries=f"{PUBLISHED}/runs", measured=measured),
        file=sys.stderr,
    )


# ---- grid searches (rules/search.smk) ----
SEARCHES = config.get("searches", {})
SEARCH_DEFAULTS = {
    "C": "-5:15:2",
    "gamma": "3:-15:-2",
    "k": 5,
    "methods": ["cold", "sir"],
    "kernel_mode": "auto",
    "solver": "smo",
    "gamma_jobs": False,
}


def search_setting(name, key):
    return SEARCHES[name].get(key, SEARCH_DEFAULTS[key])


SEARCH_TABLES = [
    f"{RESULTS}/tables/search_{name}.{ext}"
    for name in SEARCHES
    for ext in ("csv", "md", "html")
]


def search_columns(name):
    """The log2 gamma of each column of a search, as its job's wildcard writes it."""
    return [f"{value:g}" for value in log2_range(search_setting(name, "gamma"))]


def search_job_mem_mb(wildcards):
    """A column job's or a whole search's memory; merging the columns' results takes little."""
    name = wildcards.search
    column = "gamma" in wildcards.keys()
    if not column and search_setting(name, "gamma_jobs"):
        return 1000
    return search_mem_mb(
        config,
        SEARCHES[name]["dataset"],
        search_setting(name, "k"),
        search_setting(name, "kernel_mode"),
        1 if column else len(search_columns(name)),
    )


def search_inputs(wildcards):
    """A search job reads the dataset, or with gamma_jobs the results of its columns' jobs."""
    name = wildcards.search
    if search_setting(name, "gamma_jobs"):
        return [
            f"{RESULTS}/search/{name}/{wildcards.method}/gamma{gamma}.json"
            for gamma in search_columns(name)
        ]
    return f"{DATA_DIR}/processed/{SEARCHES[name]['dataset']}.npz"


def search_arguments(wildcards, input):
    """Arguments of ``alphaseed search`` (every setting explicit, so that changing one reruns it),
    for a column job (wildcard gamma) or a whole search; with gamma_jobs, ``alphaseed search-merge``.
    """
    name, solver = wildcards.search, config["solver"]
    if "gamma" not in wildcards.keys() and search_setting(name, "gamma_jobs"):
        return ["search-merge", *input]
    dataset = SEARCHES[name]["dataset"]
    gamma = (
        wildcards.gamma
        if "gamma" in wildcards.keys()
        else search_setting(name, "gamma")
    )
    arguments = [
        "search",
        "--dataset",
        dataset,
        "--method",
        wildcards.method,
        f"--C={search_setting(name, 'C')}",
        f"--gamma={gamma}",
        "--k",
        str(search_setting(name, "k")),
        "--seed",
        str(config["seed"]),
        "--kernel-mode",
        search_setting(name, "kernel_mode"),
        "--solver",
        search_setting(name, "solver"),
        "--eps",
        str(solver["eps"]),
        "--cache-mb",
        str(solver["cache_mb"]),
    ]
    if not solver["shrinking"]:
        arguments.append("--no-shrinking")
    subsample = config.get("subsample", {}).get(dataset)
    if subsample is not None:
        arguments += ["--subsample", str(subsample)]
    return arguments
