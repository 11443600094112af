"""How many threads a call may use (scikit-learn's ``n_jobs``, held against Numba's pool), and
chains of rounds run as threads of this process."""

from __future__ import annotations

import numbers
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import numba

from ..errors import ConfigError
from .blas import blas_threads


def resolve_n_jobs(n_jobs) -> int:
    """The cores ``n_jobs`` asks for, scikit-learn's way: None is 1, -1 every core Numba may use,
    -2 all but one, and so on.

    Parameters
    ----------
    n_jobs : int or None
        None, a positive count, or a negative one counted from Numba's thread pool
        (``NUMBA_NUM_THREADS``, the machine's cores unless set).

    Returns
    -------
    int
        At least 1. A positive count is returned as it is, even beyond the pool: what depends on
        ``n_jobs`` (the chains of a cross-validation) then does not depend on the machine.
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ConfigError(f"n_jobs must be None, a positive integer or a negative one; got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max(1, numba.config.NUMBA_NUM_THREADS + 1 + int(n_jobs))


@contextmanager
def numba_threads(threads: int):
    """Numba's parallel loops launched from this thread use ``threads`` (at most the pool), and
    the count from before is put back on exit.

    Parameters
    ----------
    threads : int
        The threads wanted.

    Yields
    ------
    int
        The threads set.
    """
    before = numba.get_num_threads()
    used = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(used)
    try:
        yield used
    finally:
        numba.set_num_threads(before)


# Numba's threading layers that let two threads launch parallel loops at once; its own
# ``workqueue`` aborts the process when they do.
THREAD_SAFE_LAYERS = ("omp", "tbb")


def concurrent_launches_are_safe() -> bool:
    """Whether two threads of this process may run Numba's parallel loops at the same time.

    Returns
    -------
    bool
        True where the threading layer is OpenMP or TBB; False under ``workqueue``, and before any
        parallel loop has run (the layer is not chosen yet).
    """
    try:
        return numba.threading_layer() in THREAD_SAFE_LAYERS
    except ValueError:
        return False


@contextmanager
def chain_threads(workers: int):
    """A context in which independent chains of rounds run as threads of this process.

    Each thread launches Numba's parallel loops on its share of the threads the caller may use,
    and shares the process's kernel and compiled code. Where ``workers`` is 1 or the threading
    layer cannot launch from two threads at once (``concurrent_launches_are_safe``, asked at each
    submission, since the layer is chosen at the first parallel loop), a chain runs at once in the
    caller's thread: the same rounds either way.

    Parameters
    ----------
    workers : int
        The chains to run at once, at most the Numba threads the caller may use.

    Yields
    ------
    callable
        ``submit(fn, *args, **kwargs) -> concurrent.futures.Future``.
    """
    threads = numba.get_num_threads()
    workers = max(1, min(int(workers), threads))
    executor = None
    # The columns of a search share one submit from their own threads: two first submissions at
    # once must not each start a pool (the second would hold chains the first's bound did not count).
    starting = threading.Lock()

    def submit(fn, *args, **kwargs) -> Future:
        nonlocal executor
        with starting:
            if executor is None and workers > 1 and concurrent_launches_are_safe():
                executor = ThreadPoolExecutor(workers, thread_name_prefix="alphaseed-chain",
                                              initializer=numba.set_num_threads, initargs=(threads // workers,))
        if executor is not None:
            return executor.submit(fn, *args, **kwargs)
        return finished_future(fn, *args, **kwargs)

    # The chains' BLAS calls set the process's one BLAS thread count in turn, each restoring what it
    # found; this outer context puts back the count from before the chains, whatever order they end in.
    with blas_threads(0):
        try:
            yield submit
        finally:
            if executor is not None:
                executor.shutdown(wait=True, cancel_futures=True)


def finished_future(fn, *args, **kwargs) -> Future:
    """``fn(*args, **kwargs)`` run now in this thread, as a finished future (``chain_threads``'s
    submission where chains cannot run as threads).

    Parameters
    ----------
    fn : callable
        The function.
    *args, **kwargs
        Its arguments.

    Returns
    -------
    concurrent.futures.Future
        Holding what ``fn`` returned; an exception it raised propagates at once.
    """
    finished = Future()
    finished.set_result(fn(*args, **kwargs))
    return finished
