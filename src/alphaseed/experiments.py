"""The config's ``experiments`` expanded into cross-validation jobs, for the pipeline and the notebooks.

An experiment is datasets x k x methods in one kernel mode, feeding one table kind (``table1``,
``table3`` or ``loo``). A job is identified by (dataset, k, method, kernel mode), which is also its
run record's path; its settings (stratified subsample size, max_rounds) come from the experiment.
The same job may serve several experiments (Table 1's k = 10 runs are Table 3's too), but only
with the same settings, or the config is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

TABLE_KINDS = ("table1", "table3", "loo")


@dataclass(frozen=True)
class Job:
    dataset: str
    k: str  # "10" or "loo": the spelling of the run record's path
    method: str
    kernel_mode: str
    subsample: int | None
    max_rounds: int | None

    @property
    def stem(self) -> str:
        # LibSVM has no kernel mode of ours; every other method names its mode.
        return self.method if self.method == "libsvm" else f"{self.method}-{self.kernel_mode}"

    def record_path(self, run_dir: str | Path) -> Path:
        return Path(run_dir) / self.dataset / f"k{self.k}" / f"{self.stem}.json"


def results_root(config: dict) -> Path:
    """``results_dir/profile``: every output of one profile lives under it."""
    return Path(config.get("results_dir", "results")) / config.get("profile", "paper")


def _max_rounds(experiment: dict, dataset: str, k: str, method: str) -> int | None:
    for rule in experiment.get("max_rounds", []):
        if all(str(rule[key]) == value for key, value in (("dataset", dataset), ("k", k), ("method", method))
               if key in rule):
            return rule["rounds"]
    return None


def _subsample(config: dict, experiment: dict, dataset: str) -> int | None:
    own = experiment.get("subsample", {})
    return own[dataset] if dataset in own else config.get("subsample", {}).get(dataset)


def expand_experiments(config: dict) -> dict[str, list[Job]]:
    """Jobs of each table kind, in config order, each job once per kind."""
    jobs: dict[str, list[Job]] = {kind: [] for kind in TABLE_KINDS}
    seen: dict[tuple, tuple[str, Job]] = {}
    for name, experiment in config.get("experiments", {}).items():
        for dataset in experiment["datasets"]:
            if dataset not in config["datasets"]:
                raise ConfigError(f"config key 'experiments.{name}.datasets': no dataset named {dataset!r}")
            for k in map(str, experiment["k"]):
                for method in experiment["methods"]:
                    job = Job(dataset, k, method, experiment.get("kernel_mode", "cache"),
                              _subsample(config, experiment, dataset), _max_rounds(experiment, dataset, k, method))
                    identity = (job.dataset, job.k, job.stem)
                    if identity in seen and seen[identity][1] != job:
                        other, first = seen[identity]
                        raise ConfigError(
                            f"config key 'experiments.{name}': {job.stem} on {dataset} at k = {k} is also in "
                            f"experiment {other} with other settings (subsample {first.subsample} vs "
                            f"{job.subsample}, max_rounds {first.max_rounds} vs {job.max_rounds}); make them agree"
                        )
                    seen.setdefault(identity, (name, job))
                    if job not in jobs[experiment["table"]]:
                        jobs[experiment["table"]].append(job)
    return jobs


def all_jobs(config: dict) -> list[Job]:
    unique: dict[tuple, Job] = {}
    for jobs in expand_experiments(config).values():
        for job in jobs:
            unique.setdefault((job.dataset, job.k, job.stem), job)
    return list(unique.values())


def job_mem_mb(n: int, dim: int, k: str, method: str, kernel_mode: str, cache_mb: float) -> int:
    """Memory a job may take, in MB, so that Snakemake never starts jobs that together exceed the machine.

    Interpreter and compiled code, the dense float64 features, the kernel (LibSVM's nodes and
    cache, our per-round cache, or the float32 Gram matrix), and the seeders' dense blocks: MIR's
    least-squares system (at most 1 GiB, or the |T| x |T| normal equations), ATO's bordered system
    and 2 GiB column store, 256 MB kernel slabs.
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
        "ato": min(2 << 30, 4 * n * n) + 2 * 8 * min(n, 3000) ** 2,
        "sir": 256 * mib,
        "avg": 256 * mib,
        "top": 256 * mib,
        "full": 256 * mib,
    }.get(method, 0)
    return math.ceil((500 * mib + features + kernel + seeding) / mib)
