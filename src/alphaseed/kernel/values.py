"""Gaussian kernel values, computed one way everywhere (compiled kernels over plain arrays).

K(x, z) = exp(-gamma * ||x - z||^2) with ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z evaluated in
float64 (raw Madelon and MNIST values cancel catastrophically in float32), then stored as
float32, as LibSVM's kernel cache stores them. The solver, the seeders and prediction all call
the functions of this module, so a kernel value never differs between two of them.

Dot products come from BLAS (a matrix product, threaded) only when that is exact: integer
features whose products and partial sums stay below 2**53 (binary Adult and Webdata, Madelon,
raw MNIST) give the same double in any summation order, so a GEMM there yields bit for bit the
values one dot product at a time would. Other data take the one-at-a-time path.

Rows computed on demand (the row caches of kernel modes ``cache`` and ``shared``) take their
values from a compact form of X where the data allow it exactly (``compact_rows``): binary
features (Adult, Webdata) as bit sets, where ||x_i - x_j||^2 is the number of bits in which two
rows differ and K is looked up by that number (the Gram matrix of binary data too); other
integers within int16 (raw MNIST, Madelon) as int16 rows, x_i.x_j summed in int64; other sparse
data as CSR, x_i.x_j summed over the non-zeros of x_j only, as LibSVM does. They skip zero
products or sum in another order than the dense loop, so they are used only where that cannot
change a value: on the same exact (integer) data as BLAS.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..errors import SolverInputError
from .native import popcount

# Exact data beyond int16 (see SMALL_INT_MAX) with at most this share of non-zero features take
# sparse rows (see compact_rows). A sparse product costs several dense (vectorised float64)
# multiply-adds per non-zero (an indirect load, a trip count that varies by row), so it pays
# only on rows this sparse.
SPARSE_DENSITY = 0.25
# Binary data of at most this many features take bit-set rows (see compact_rows): a distance
# is then d / 64 XOR-and-popcount steps with a fixed trip count, and K a table lookup instead
# of an exp.
BITSET_MAX_FEATURES = 1024
# Other integer data within int16 (raw MNIST's pixels, Madelon's 0-999) take int16 rows, their
# dot products summed in int64: a quarter of float64's bytes to stream, and integer SIMD.
SMALL_INT_MAX = 32767

CompactRows = namedtuple("CompactRows", ["indptr", "indices", "data", "bits", "by_distance", "small"])
CompactRows.__doc__ = """X's rows in the form its kernel rows are computed from (``compact_rows``).

The members a form does not use are empty, so every form has one compiled type.

Parameters
----------
indptr : ndarray
    The CSR row pointers (int64) of sparse data.
indices : ndarray
    The CSR column indices (int64) of sparse data, sorted within each row.
data : ndarray
    The CSR values (float64) of sparse data.
bits : ndarray
    Binary rows as uint64 words, one row of words per instance.
by_distance : ndarray
    The float64 kernel value at each squared distance of two binary rows (``kernel_by_distance``).
small : ndarray
    X as int16.
"""



def dense_features(X) -> np.ndarray:
    """Return X as a C-contiguous float64 dense array (CSR input is densified).

    Every kernel mode computes from the same dense float64 copy, so values never depend on the
    input's format.

    Parameters
    ----------
    X : array-like or sparse matrix
        The features, one row per instance.

    Returns
    -------
    ndarray
        The dense features.

    Raises
    ------
    SolverInputError
        When X is not 2-D or holds NaN or infinity.
    """
    if sp.issparse(X):
        X = X.toarray()
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise SolverInputError(f"features must be a 2-D array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise SolverInputError("features contain NaN or infinity")
    return X


@njit(cache=True, nogil=True)
def squared_norms(X):
    """||x_i||^2 of every row, summed in float64 in feature order.

    Kernel values computed from dot products take their distance ||x||^2 + ||z||^2 - 2 x.z with
    these, so every caller uses the same doubles.

    Parameters
    ----------
    X : ndarray
        A 2-D float64 array, one instance a row.

    Returns
    -------
    ndarray
        The n squared norms, float64.
    """
    n, d = X.shape
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for f in range(d):
            s += X[i, f] * X[i, f]
        out[i] = s
    return out


def blas_dots_are_exact(*arrays: np.ndarray) -> bool:
    """Whether every dot product between rows of these arrays is exact in any order.

    Only then may a BLAS product or a compact form stand in for the dense loop: integer values
    make every product and partial sum an integer; each is bounded by
    ``sum_f |x_f z_f| <= ||x|| ||z||`` <= the largest squared norm, so below 2**53 all are exact.

    Parameters
    ----------
    *arrays : ndarray
        2-D float64 arrays with the same number of columns.

    Returns
    -------
    bool
        True when every value is an integer and every squared norm is below 2**53.
    """
    largest = 0.0
    for A in arrays:
        if A.size and not np.array_equal(A, np.round(A)):
            return False
        largest = max(largest, float(np.max(squared_norms(A), initial=0.0)))
    return largest < 2.0**53


def compact_rows(X: np.ndarray, exact: bool, gamma: float) -> CompactRows:
    """X's rows in the form its kernel rows are computed from.

    Binary data fill ``bits`` and ``by_distance``, other integers within int16 fill ``small``,
    other sparse data the CSR arrays (sorted indices), the rest nothing (the dense loop).

    Parameters
    ----------
    X : ndarray
        Dense float64 features.
    exact : bool
        ``blas_dots_are_exact(X)``: only then does a compact form give bit for bit the dense
        loop's values, so only then is one made.
    gamma : float
        The kernel's gamma, for the table of values by distance.

    Returns
    -------
    CompactRows
    """
    dense = dense_rows()
    if not (exact and X.size):
        return dense
    if takes_bit_sets(X):
        packed = np.zeros((X.shape[0], 8 * -(-X.shape[1] // 64)), dtype=np.uint8)
        packed[:, :-(-X.shape[1] // 8)] = np.packbits(X.astype(bool), axis=1, bitorder="little")
        # Two rows are at most as far apart as their ones add up to: the table stops there.
        reach = min(X.shape[1], 2 * int(np.count_nonzero(X, axis=1).max()))
        return dense._replace(bits=packed.view(np.uint64),
                              by_distance=kernel_by_distance(reach, float(gamma)))
    if np.abs(X).max() <= SMALL_INT_MAX:
        return dense._replace(small=X.astype(np.int16))
    if np.count_nonzero(X) <= SPARSE_DENSITY * X.size:
        csr = sp.csr_matrix(X)
        csr.sort_indices()
        return dense._replace(indptr=csr.indptr.astype(np.int64), indices=csr.indices.astype(np.int64),
                              data=np.ascontiguousarray(csr.data, dtype=np.float64))
    return dense


def takes_bit_sets(X) -> bool:
    """Whether ``compact_rows`` holds X as bit sets: binary features, not too many of them.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The features; a sparse matrix is read without densifying it.

    Returns
    -------
    bool
    """
    values = X.data if sp.issparse(X) else X
    return (X.shape[0] * X.shape[1] > 0 and X.shape[1] <= BITSET_MAX_FEATURES
            and bool(np.all((values == 0.0) | (values == 1.0))))


def dense_rows() -> CompactRows:
    """The ``compact_rows`` of data whose rows are computed dense: every member empty."""
    return CompactRows(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                       np.zeros((0, 0), np.uint64), np.zeros(0), np.zeros((0, 0), np.int16))


@njit(cache=True, nogil=True)
def kernel_by_distance(features, gamma):
    """K at each squared distance 0..features of two binary rows, by ``gaussian_from_dot``.

    Between binary rows ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z is the number of features in
    which they differ, an integer every one of those terms computes exactly; the kernel takes
    at most d + 1 values, and looking them up gives each one bit for bit, without its exp.
    """
    out = np.empty(features + 1)
    for k in range(features + 1):
        out[k] = gaussian_from_dot(float(k), 0.0, 0.0, gamma)
    return out


# Reassociation lets LLVM vectorise the dot product; it is the only relaxed step, and the same
# compiled function serves every caller, so every caller sees identical kernel values.
@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def row_dot(A, i, B, j):
    """x_i.x_j of row i of A and row j of B, dense, in float64."""
    s = 0.0
    for f in range(A.shape[1]):
        s += A[i, f] * B[j, f]
    return s


@njit(cache=True, nogil=True)
def small_row_dot(small, i, j):
    """x_i.x_j of int16 rows, summed in int64: exact, and below 2**53 where
    ``blas_dots_are_exact``, so its double is the dense loop's."""
    s = 0
    for f in range(small.shape[1]):
        s += small[i, f] * small[j, f]
    return float(s)


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def sparse_row_dot(X, i, rows, j):
    """x_i.x_j over the non-zeros of x_j (CSR arrays of ``rows``), read against x_i's dense row:
    that row stays in the processor's cache while a kernel row is filled."""
    indptr, indices, data = rows.indptr, rows.indices, rows.data
    s = 0.0
    for t in range(indptr[j], indptr[j + 1]):
        s += data[t] * X[i, indices[t]]
    return s


@njit(cache=True, nogil=True)
def bit_distance(bits_a, i, bits_b, j):
    """||a_i - b_j||^2 of binary rows: the features one has and the other not."""
    differ = 0
    for w in range(bits_a.shape[1]):
        differ += popcount(bits_a[i, w] ^ bits_b[j, w])
    return differ


@njit(cache=True, nogil=True)
def gaussian_from_dot(sq_a, sq_b, dot, gamma):
    """exp(-gamma ||a - b||^2) in float64 from the squared norms and the dot product; a distance
    that rounding leaves below 0 counts as 0."""
    dist = sq_a + sq_b - 2.0 * dot
    if dist < 0.0:
        dist = 0.0
    return np.exp(-gamma * dist)


# Rows of K are computed a segment per call: a function called once per value is not inlined
# (its inlined dot product makes it too large) and its arrays are reference-counted at every
# call, which costs more than the value itself.
@njit(cache=True, nogil=True)
def kernel_values(out, X, sqnorm, gamma, i, cols, rows):
    """out[b] = K(x_i, x_cols[b]), computed in float64 and stored in out's dtype; from the
    compact form ``rows`` (``compact_rows``) when it holds one: binary rows look the value up
    by their distance, int16 rows sum their dot products in int64, sparse ones take them over
    the non-zeros."""
    bitset = rows.bits.shape[0] > 0
    small = rows.small.shape[0] > 0
    sparse = rows.indptr.shape[0] > 0
    if bitset:
        by_distance = rows.by_distance
        for b in range(cols.shape[0]):
            out[b] = by_distance[bit_distance(rows.bits, i, rows.bits, cols[b])]
        return
    for b in range(cols.shape[0]):
        j = cols[b]
        if i == j:
            value = 1.0
        else:
            if small:
                dot = small_row_dot(rows.small, i, j)
            elif sparse:
                dot = sparse_row_dot(X, i, rows, j)
            else:
                dot = row_dot(X, i, X, j)
            value = gaussian_from_dot(sqnorm[i], sqnorm[j], dot, gamma)
        out[b] = value


@njit(cache=True, nogil=True, parallel=True)
def fill_block(out, X, sqnorm, gamma, rows, cols, compact):
    """out[a, b] = K(x_rows[a], x_cols[b]); the dtype of ``out`` decides the stored precision."""
    for a in prange(rows.shape[0]):
        kernel_values(out[a], X, sqnorm, gamma, rows[a], cols, compact)


def kernel_block(X, sqnorm, gamma, rows, cols, compact):
    """float32 matrix K[rows][:, cols] over instances of X given by global indices
    (``compact``: X's ``compact_rows``)."""
    out = np.empty((rows.shape[0], cols.shape[0]), dtype=np.float32)
    fill_block(out, X, sqnorm, gamma, rows, cols, compact)
    return out

