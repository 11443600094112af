"""Compiling the solver's functions before anything is timed, one process at a time."""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..kernel import KernelMatrix
from .active_set import compile_slide
from .model import decision_values
from .options import SolverOptions
from .training import solve


def warmup(*, verbose: int = 0) -> float:
    """Compile every jitted function of the solver on a tiny problem; return the seconds.

    Numba's on-disk cache is not safe for processes that compile the same functions at once (two
    of them number their entries alike and one's index then points at the other's code, which
    crashes parallel jobs in a fresh clone). So the processes of a machine compile or load one
    at a time, under a file lock beside the cache.

    Parameters
    ----------
    verbose : int, default 0
        Show the seconds going by on stderr while it takes more than one (the first call in an
        environment compiles; later processes load the compiled code from Numba's cache).

    Returns
    -------
    float
        The seconds spent compiling or loading, the wait for the lock included.
    """
    t0 = time.perf_counter()
    with compile_lock():
        if not verbose:
            _compile()
        else:
            _with_a_clock(_compile, "alphaseed: compiling the solver (the first call in an environment)")
    return time.perf_counter() - t0


def _with_a_clock(work, description: str) -> None:
    """Run ``work`` on another thread, showing the seconds it takes on stderr once it takes more than one."""
    with ThreadPoolExecutor(max_workers=1) as pool, tqdm(desc=description, bar_format="{desc}: {elapsed}",
                                                           delay=1.0, file=sys.stderr) as clock:
        done = pool.submit(work)
        while not done.done():
            time.sleep(0.2)
            clock.refresh()
        done.result()


@contextmanager
def compile_lock():
    """Hold the machine's lock on Numba's on-disk cache of this package (see ``warmup``)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: compile without a lock
        yield
        return
    folder = Path(__file__).with_name("__pycache__")
    try:
        folder.mkdir(exist_ok=True)
        lock = open(folder / "numba-compile.lock", "w")
    except OSError:  # a read-only install: Numba caches elsewhere, so lock in the temporary folder
        lock = open(Path(tempfile.gettempdir()) / "alphaseed-numba-compile.lock", "w")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _compile() -> None:
    """Train cold, warm and carried, and predict, on tiny float and binary data in every mode."""
    rng = np.random.default_rng(0)
    # Float features, and binary ones: their bit sets take functions of their own (else
    # prediction's lookup by distance would compile inside a timed round).
    features = (rng.normal(size=(24, 3)), (rng.random((24, 70)) < 0.3).astype(float))
    y = np.where(np.arange(24) % 2 == 0, 1.0, -1.0)
    for X, mode in itertools.product(features, ("cache", "shared", "gram")):
        km = KernelMatrix(X, 0.5, mode=mode, memory_budget=1 << 30)
        tiny_cache = SolverOptions(cache_mb=1e-3)
        first = solve(km, y, np.arange(24), 1.0, options=tiny_cache)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, options=tiny_cache)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, options=tiny_cache,
              previous=(np.arange(24), first))
        decision_values(km, y, np.arange(24), first.alpha, first.rho, np.arange(4))
        km.decision_signs(np.arange(4), np.arange(24), first.alpha, first.rho)
        km.times(np.arange(4), np.arange(24), np.ones((24, 2)))
        if mode == "gram":
            exact = solve(km, y, np.arange(24), 1.0, options=SolverOptions(solver="active_set"))
            solve(km, y, np.arange(24), 1.0, alpha0=exact.alpha, options=SolverOptions(solver="active_set"))
    compile_slide()
