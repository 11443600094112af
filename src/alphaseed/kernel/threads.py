"""How many threads a call may use: scikit-learn's ``n_jobs``, held against Numba's pool."""

from __future__ import annotations

import numbers
from contextlib import contextmanager

import numba

from ..errors import ConfigError


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
