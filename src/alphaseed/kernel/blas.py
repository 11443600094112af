"""BLAS's thread count, set per call by the size of the work, and the BLAS and LAPACK routines
called in place.

Small matrix products alternate with the compiled parallel loops, and BLAS's threads and
Numba's OpenMP threads then spin against each other for the cores; large ones pay for their
threads. So every product this package takes from BLAS or LAPACK runs inside ``blas_threads``.

The routines called here go through SciPy's Cython BLAS and LAPACK by ctypes, which lets go of
Python's lock for the call: SciPy's ``scipy.linalg.lapack`` wrappers hold it, and a search's
chains, threads of one process, then wait on each other's factorisations.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numba import get_num_threads
from scipy.linalg import cython_blas, cython_lapack
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


def _routine(module, name: str, arguments: int):
    """SciPy's BLAS or LAPACK routine ``name`` (``module``: ``scipy.linalg.cython_blas`` or
    ``cython_lapack``), to be called with a pointer per argument as Fortran takes them: unlike
    ``scipy.linalg.blas``, it reads an array in place at any leading dimension, where f2py copies
    a block of a larger array first, and the call lets go of Python's lock."""
    capsule = module.__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * arguments)(get_pointer(capsule, get_name(capsule)))


_DTRSM = _routine(cython_blas, "dtrsm", 11)
_DPOTRF = _routine(cython_lapack, "dpotrf", 5)
_DPSTRF = _routine(cython_lapack, "dpstrf", 9)


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


def _square(Q: np.ndarray) -> int:
    """Q's order, after checking it is a square C-contiguous float64 array."""
    if not (Q.flags.c_contiguous and Q.dtype == np.float64 and Q.ndim == 2 and Q.shape[0] == Q.shape[1]):
        raise ValueError("the factorisations take a square C-contiguous float64 array")
    return Q.shape[0]


def cholesky_in_place(Q: np.ndarray) -> int:
    """LAPACK's dpotrf on the symmetric ``Q``, in place: its lower triangle becomes L (Q = L L'),
    what lies above the diagonal is left as it was.

    Parameters
    ----------
    Q : ndarray
        Square, C-contiguous float64; overwritten.

    Returns
    -------
    int
        LAPACK's info: 0 where Q was positive definite, else the order of the first leading minor
        that was not (the factor then holds only the rows before it); a refused argument raises.
    """
    m = _square(Q)
    info = ctypes.c_int(0)
    # Read as a Fortran array, Q's lower triangle is the upper one of Q' = Q: dpotrf's U, U' = L.
    with blas_threads(m**3 / 3):
        _DPOTRF(_char(b"U"), _int(m), ctypes.c_void_p(Q.ctypes.data), _int(max(m, 1)), ctypes.byref(info))
    _check_arguments("dpotrf", info)
    return info.value


def pivoted_cholesky_in_place(Q: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """LAPACK's dpstrf on the symmetric positive semi-definite ``Q``, in place: its lower
    triangle's first ``rank`` rows become L, the factor of Q's rows and columns in pivot order,
    stopped where the pivots left are at most ``tol``.

    Parameters
    ----------
    Q : ndarray
        Square, C-contiguous float64; overwritten.
    tol : float
        The pivot at or below which the factorisation stops.

    Returns
    -------
    tuple
        (the pivot order, 1-based as LAPACK gives it, int32; the rank).
    """
    m = _square(Q)
    pivots = np.zeros(m, dtype=np.int32)
    work = np.empty(2 * m)
    rank, info = ctypes.c_int(0), ctypes.c_int(0)
    with blas_threads(m**3 / 3):
        _DPSTRF(_char(b"U"), _int(m), ctypes.c_void_p(Q.ctypes.data), _int(max(m, 1)),
                ctypes.c_void_p(pivots.ctypes.data), ctypes.byref(rank), ctypes.byref(ctypes.c_double(tol)),
                ctypes.c_void_p(work.ctypes.data), ctypes.byref(info))
    _check_arguments("dpstrf", info)
    return pivots, rank.value


def _check_arguments(name: str, info) -> None:
    """Raise where LAPACK's ``name`` refused an argument (a negative info): a call built wrong."""
    if info.value < 0:
        raise ValueError(f"{name} refused argument {-info.value}")
