"""BLAS's thread count, set per call by the size of the work.

Small matrix products alternate with the compiled parallel loops, and BLAS's threads and
Numba's OpenMP threads then spin against each other for the cores; large ones pay for their
threads. So every product this package takes from BLAS or LAPACK runs inside ``blas_threads``.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numba import get_num_threads
from scipy.linalg import cython_blas
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


def _blas_function(name: str, arguments: int):
    """SciPy's BLAS routine ``name`` (``scipy.linalg.cython_blas``), to be called with a pointer
    per argument as Fortran takes them: unlike ``scipy.linalg.blas``, it reads an array in place
    at any leading dimension, where f2py copies a block of a larger array first."""
    capsule = cython_blas.__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * arguments)(get_pointer(capsule, get_name(capsule)))


_DTRSM = _blas_function("dtrsm", 11)


def lower_solves(L: np.ndarray, m: int, B: np.ndarray) -> np.ndarray:
    """Each row b of ``B`` replaced by (L's leading m x m block)^-1 b, in place, by BLAS's
    triangular solve: L is a row-major array whose first m rows hold a lower triangular factor
    (what lies above its diagonal is never read), B a C-contiguous k x m float64 array.

    Parameters
    ----------
    L : ndarray
        C-contiguous float64, at least m x m.
    m : int
        The factor's rows.
    B : ndarray
        C-contiguous float64, k x m; overwritten.

    Returns
    -------
    ndarray
        ``B``, each row solved.
    """
    if not (L.flags.c_contiguous and B.flags.c_contiguous and L.dtype == B.dtype == np.float64
            and L.shape[0] >= m and L.shape[1] >= m and B.shape[1] == m):
        raise ValueError("lower_solves takes C-contiguous float64 arrays, L at least m x m and B k x m")
    k = B.shape[0]
    if m == 0 or k == 0:
        return B
    # Read as Fortran arrays, L's rows are the columns of U = L' (upper triangular, its leading
    # dimension L's row length) and B's rows those of B' (m x k): L X' = B' is U' X' = B'.
    with blas_threads(m * m * k / 2):
        _DTRSM(_char(b"L"), _char(b"U"), _char(b"T"), _char(b"N"), _int(m), _int(k),
               ctypes.byref(ctypes.c_double(1.0)), ctypes.c_void_p(L.ctypes.data), _int(L.shape[1]),
               ctypes.c_void_p(B.ctypes.data), _int(m))
    return B


def _char(c: bytes):
    """A Fortran CHARACTER argument."""
    return ctypes.byref(ctypes.c_char(c))


def _int(v: int):
    """A Fortran INTEGER argument (SciPy's BLAS takes 32 bits)."""
    return ctypes.byref(ctypes.c_int(v))
