"""BLAS's thread count, set per call by the size of the work.

Small matrix products alternate with the compiled parallel loops, and BLAS's threads and
Numba's OpenMP threads then spin against each other for the cores; large ones pay for their
threads. So every product this package takes from BLAS or LAPACK runs inside ``blas_threads``.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads
from threadpoolctl import ThreadpoolController

# Matrix products with fewer multiply-adds run BLAS on one thread (see blas_dots).
PARALLEL_BLAS_WORK = 1 << 27
_BLAS_THREADS = ThreadpoolController()


def blas_threads(work: float):
    """A context in which BLAS and LAPACK run threaded only when the work is large.

    Parameters
    ----------
    work : float
        The multiply-adds of the calls the context will hold; at ``PARALLEL_BLAS_WORK`` or more
        BLAS gets Numba's thread count, below it one thread.

    Returns
    -------
    context manager
        ``threadpoolctl``'s limit, undone on exit.
    """
    threads = get_num_threads() if work >= PARALLEL_BLAS_WORK else 1
    return _BLAS_THREADS.limit(limits=threads, user_api="blas")


def blas_dots(A: np.ndarray, B: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``A @ B.T`` by BLAS, threaded only when the product is large (``blas_threads``).

    Parameters
    ----------
    A, B : ndarray
        Two row-major float arrays with the same number of columns.
    out : ndarray, optional
        A C-contiguous array of the product's shape and type to write it into.

    Returns
    -------
    ndarray
        The dot products of every row of ``A`` with every row of ``B`` (``out`` where given).
    """
    with blas_threads(A.shape[0] * B.shape[0] * A.shape[1]):
        return np.matmul(A, B.T, out=out)
