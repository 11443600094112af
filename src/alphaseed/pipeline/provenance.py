"""Where a result came from: code version, library versions, machine and threads.

Every run record carries this block so that a number in a table can be traced to the commit,
the libraries and the hardware that produced it.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# Distribution names of the libraries whose versions change results or timings.
_LIBRARIES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "numba": "numba",
    "libsvm": "libsvm-official",
    "sklearn": "scikit-learn",
}


def _distribution_version(name: str) -> str:
    """The installed version of distribution ``name``, or "unknown"."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def git_state(folder: str | os.PathLike | None = None) -> tuple[str, bool | None]:
    """(commit, dirty) of the checkout holding ``folder``; ("unknown", None) outside one.

    Parameters
    ----------
    folder : str or os.PathLike, optional
        A folder of the checkout; defaults to this package's, so the record names the code that ran.

    Returns
    -------
    tuple of (str, bool or None)
        The commit hash and whether tracked files differ from it; ("unknown", None) where git is
        missing, fails or takes over 10 s.
    """
    folder = Path(folder) if folder is not None else Path(__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        # Untracked files (other outputs, scratch) do not change the code that ran.
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "unknown", None
    return commit, dirty


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows of it, else "unknown".

    Returns
    -------
    str
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def openmp_threads() -> int | None:
    """Threads the loaded OpenMP runtime (LibSVM's) will use, as threadpoolctl reports them."""
    from threadpoolctl import threadpool_info

    import libsvm.svm  # noqa: F401  (loads LibSVM's OpenMP runtime, so threadpoolctl sees it)

    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "openmp"]
    return counts[0] if counts else None


def blas_kernels() -> str:
    """The BLAS libraries loaded and the kernels each picked for this CPU (MIR's and ATO's seeds depend on them:
    see ``alphaseed.pipeline.environment``)."""
    from threadpoolctl import threadpool_info

    import numpy  # noqa: F401  (loads NumPy's BLAS, so threadpoolctl sees it)

    found = {f"{info['internal_api']} {info.get('version')} {info.get('architecture')}"
             for info in threadpool_info() if info["user_api"] == "blas"}
    return "; ".join(sorted(found)) or "unknown"


def python_environment() -> str:
    """The kind of Python environment that ran (not its path, which names the machine's folders)."""
    if os.environ.get("CONDA_PREFIX") and Path(sys.prefix) == Path(os.environ["CONDA_PREFIX"]):
        return "conda"
    return "venv" if sys.prefix != sys.base_prefix else "system"


# Above this many cores kept busy on average by other processes, a timed run shared its machine.
SHARED_MACHINE_CORES = 0.25


class MachineWatch:
    """What else the machine did while a timed run ran, from its creation to ``shares()``.

    A job's seconds are only its own where nothing else ran beside it: memory bandwidth is what
    an SMO iteration spends, and another job, or another tenant of a virtual machine's host,
    takes its share.
    """

    def __init__(self):
        self._start = self._snapshot()

    @staticmethod
    def _snapshot() -> tuple[float, float, float, float]:
        import psutil

        machine, process = psutil.cpu_times(), psutil.Process()
        own = process.cpu_times()
        # guest time is counted in user time on Linux, so it is not added again
        busy = sum(getattr(machine, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq"))
        # The run's own worker processes (joblib's, which live until the run ends) are not others;
        # those it, or they, have waited for are in children_*.
        mine = own.user + own.system + own.children_user + own.children_system
        for child in process.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:   # ended since it was listed: its time is its parent's to count
                continue
            mine += times.user + times.system + times.children_user + times.children_system
        return time.perf_counter(), busy, mine, getattr(machine, "steal", 0.0)

    def shares(self) -> dict:
        """Cores kept busy on average since the watch began, by other processes and by the host.

        Returns
        -------
        dict
            ``others_cpu_per_wall``: CPU seconds of every other process of the machine over the
            wall seconds (0: the run had the machine to itself; 1: one other core was busy
            throughout); ``steal_per_wall``: CPU seconds the hypervisor gave other guests while
            this one wanted them, over the wall seconds (0 where not reported).
        """
        wall, busy, mine, steal = (end - start for end, start in zip(self._snapshot(), self._start))
        if wall <= 0:
            return {"others_cpu_per_wall": 0.0, "steal_per_wall": 0.0}
        return {"others_cpu_per_wall": max(0.0, (busy - mine) / wall), "steal_per_wall": steal / wall}


def collect_provenance(
    config: dict | None = None,
    dataset_fingerprint: str | None = None,
    started_utc: str | None = None,
    finished_utc: str | None = None,
    machine: dict | None = None,
) -> dict:
    """The run record's ``provenance`` block.

    Parameters
    ----------
    config : dict, optional
        What the run was configured with, recorded as given.
    dataset_fingerprint : str, optional
        The fingerprint of the data the run read.
    started_utc, finished_utc : str, optional
        When the run started and finished (ISO 8601, UTC).
    machine : dict, optional
        ``MachineWatch.shares()`` over the run: what else kept the machine busy meanwhile.

    Returns
    -------
    dict
        Those, with the package and library versions, the git commit, CPU, threads, BLAS kernels,
        platform, kind of Python environment and host name.
    """
    import numba

    commit, dirty = git_state()
    versions = {key: _distribution_version(dist) for key, dist in _LIBRARIES.items()}
    return {
        "config": config,
        "dataset_fingerprint": dataset_fingerprint,
        "package_version": _distribution_version("alphaseed"),
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        **versions,
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": numba.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "openmp_threads": openmp_threads(),
        "blas": blas_kernels(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "platform": platform.platform(),
        "environment": python_environment(),
        "hostname": socket.gethostname(),
        "started_utc": started_utc,
        "finished_utc": finished_utc,
        **(machine or {"others_cpu_per_wall": None, "steal_per_wall": None}),
    }
