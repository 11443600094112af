"""Compiling the solver's functions before anything is timed, one process at a time."""

from __future__ import annotations

import itertools
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from tqdm.auto import tqdm

from ..jit_cache import compile_lock, seal_package_code
from ..kernel import KernelMatrix
from .active_set import compile_slide
from .model import decision_values
from .options import SolverOptions
from .training import solve


def warmup(*, verbose: int = 0) -> float:
    """Compile every jitted function of the solver on a tiny problem; return the seconds.

    The processes of a machine compile or load one at a time, under ``compile_lock``, and the
    one that compiled seals Numba's cache as its own (``jit_cache.seal_package_code``).

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
        # This process now holds every function the warm-up reaches, compiled or loaded: the cache
        # is one process's (``jit_cache``).
        seal_package_code()
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
        km.decision_signs(np.arange(4), [(np.arange(24), first.alpha, first.rho)] * 2)
        km.times(np.arange(4), np.arange(24), np.ones((24, 2)))
        if mode == "gram":
            exact = solve(km, y, np.arange(24), 1.0, options=SolverOptions(solver="active_set"))
            solve(km, y, np.arange(24), 1.0, alpha0=exact.alpha, options=SolverOptions(solver="active_set"))
    compile_slide()
