"""Kernel matrix products in double precision (prediction) and from stored float32 values
(seeding, carried gradients), each summed in one order whatever the kernel mode and threads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .blas import blas_dots, blas_threads
from .native import popcount
from .values import gaussian_from_dot, row_dot

# Rows of K(Xa, Xb) in float64 computed, then multiplied by the weights, at a time (prediction):
# a slab stays in the processor's cache for the product, and one slab's memory is reused rather
# than paying the first touch of fresh pages at every call.
CROSS_SLAB_BYTES = 8 << 20
# Every row, as an index of ExactKernel's rows.
ALL = slice(None)


def cross_slab_rows(n_cols: int) -> int:
    """The rows of K(Xa, Xb) that ``kernel_cross_sums`` computes, then sums, at a time, for an
    Xb of ``n_cols`` rows."""
    return max(1, CROSS_SLAB_BYTES // (8 * max(n_cols, 1)))


@njit(cache=True, nogil=True, parallel=True)
def _cross_rows(out, Xa, sqa, Xb, sqb, gamma, have_dots, signs_a=None, signs_b=None):
    """out[i, j] = K(Xa[i], Xb[j]) in float64, times signs_a[i] signs_b[j] (each +-1, so exactly)
    where given; ``out`` holds the dot products when ``have_dots``."""
    for i in prange(Xa.shape[0]):
        for j in range(Xb.shape[0]):
            dot = out[i, j] if have_dots else row_dot(Xa, i, Xb, j)
            value = gaussian_from_dot(sqa[i], sqb[j], dot, gamma)
            out[i, j] = value if signs_a is None else signs_a[i] * signs_b[j] * value


@njit(cache=True, nogil=True, parallel=True)
def _cross_by_distance(out, bits_a, bits_b, by_distance, signs_a=None, signs_b=None):
    """out[i, j] = K(a_i, b_j) of binary rows, looked up by distance (``kernel_by_distance``),
    times signs_a[i] signs_b[j] (each +-1, so exactly) where given.

    Each row's distances are summed one word at a time over a copy of b's bit sets laid out word
    by word: the loop over b then reads one contiguous array, and the compiler vectorises it,
    where a loop over one pair's few words at a time stayed scalar."""
    columns = np.ascontiguousarray(bits_b.T)
    for i in prange(bits_a.shape[0]):
        distances = np.zeros(columns.shape[1], dtype=np.int64)
        for w in range(columns.shape[0]):
            word = bits_a[i, w]
            column = columns[w]
            for j in range(column.shape[0]):
                distances[j] += popcount(word ^ column[j])
        if signs_a is None:
            for j in range(distances.shape[0]):
                out[i, j] = by_distance[distances[j]]
        else:
            for j in range(distances.shape[0]):
                out[i, j] = signs_a[i] * signs_b[j] * by_distance[distances[j]]


def kernel_cross_block(Xa, sqa, Xb, sqb, gamma, *, binary: tuple | None = None,
                       signs: tuple | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """K(Xa, Xb) in float64, its dot products from BLAS: the values an exact solve on a few
    columns needs (the active-set solver's), where float32 values would leave its linear systems
    wrong by more than their smallest eigenvalues.

    Parameters
    ----------
    Xa, Xb : ndarray
        Dense float64 rows.
    sqa, sqb : ndarray
        Their squared norms (``squared_norms``).
    gamma : float
        The kernel's gamma.
    binary : tuple, optional
        (bit sets of Xa, bit sets of Xb, ``kernel_by_distance``'s table): look the values up
        instead, as ``kernel_cross_times`` does.
    signs : tuple, optional
        (a +-1 per row of Xa, a +-1 per row of Xb), float64: each value times its row's and its
        column's (the rows of Q, y_i y_j K, in the same pass as K's).
    out : ndarray, optional
        A C-contiguous len(Xa) x len(Xb) float64 array to write into: a caller that keeps its
        memory (the active-set finish's columns) pays no first touch of fresh pages.

    Returns
    -------
    ndarray
        A len(Xa) x len(Xb) float64 array, ``out`` where given.
    """
    K = np.empty((Xa.shape[0], Xb.shape[0])) if out is None else out
    signs = () if signs is None else tuple(np.ascontiguousarray(v, dtype=np.float64) for v in signs)
    if binary is not None:
        _cross_by_distance(K, *binary, *signs)
        return K
    blas_dots(Xa, Xb, out=K)
    _cross_rows(K, Xa, sqa, Xb, sqb, gamma, True, *signs)
    return K


def kernel_cross_sums(Xa, sqa, Xb, sqb, gamma, cols, starts, weights, use_blas: bool, *,
                      binary: tuple | None = None) -> np.ndarray:
    """Each model's K(Xa, its rows of Xb) @ its weights with K in float64, in row slabs of bounded
    memory (prediction): model p takes the rows ``cols[starts[p]:starts[p + 1]]`` of Xb and the
    same rows of ``weights``.

    Prediction keeps double precision, as LibSVM's svm_predict does: with K close to 1
    everywhere, float32 values would collapse every decision value onto -rho. K(Xa, Xb) is
    computed once for all the models, and each sum is taken in its model's column order
    (``gathered_sums``) whatever the rows and models beside it: a model predicted alone, among
    others, or in another slab sums the same doubles in the same order.

    Parameters
    ----------
    Xa : ndarray or None
        Dense float64 rows: the instances to predict (None with ``binary``).
    sqa : ndarray or None
        Their squared norms (``squared_norms``).
    Xb : ndarray or None
        Dense float64 rows: the support vectors of every model (None with ``binary``).
    sqb : ndarray or None
        Their squared norms.
    gamma : float
        The kernel's gamma.
    cols : ndarray
        The int64 rows of Xb each model takes, the models one after the other.
    starts : ndarray
        Where each model's columns start in ``cols``, and their end: one more than the models.
    weights : ndarray
        The float64 weights, one row per entry of ``cols``, one column per output column.
    use_blas : bool
        Take the dot products from BLAS: where that is exact (``blas_dots_are_exact``), the same
        values as the dense loop; elsewhere values within a few units of the last bit, which
        predictions that feed no solver accept (``SVC``'s).
    binary : tuple, optional
        (bit sets of Xa, bit sets of Xb, ``kernel_by_distance``'s table): look the values up
        instead, the same doubles, so the same sums.

    Returns
    -------
    ndarray
        len(Xa) x models x weights.shape[1] sums.
    """
    out = np.empty((_cross_shape(Xa, Xb, binary)[0], starts.shape[0] - 1, weights.shape[1]))
    for rows, K in _cross_slabs(Xa, sqa, Xb, sqb, gamma, use_blas, binary):
        out[rows] = gathered_sums(K, np.arange(K.shape[0]), cols, starts, weights)
    return out


def _cross_shape(Xa, Xb, binary) -> tuple[int, int]:
    """The shape of K(Xa, Xb), from the bit sets where ``binary`` holds them."""
    return (binary[0].shape[0], binary[1].shape[0]) if binary is not None else (Xa.shape[0], Xb.shape[0])


def _cross_slabs(Xa, sqa, Xb, sqb, gamma, use_blas: bool, binary):
    """(rows of Xa, K(those rows, Xb) in float64) in turn, slabs of ``cross_slab_rows`` rows, as
    ``kernel_cross_sums`` takes its arguments. A slab is overwritten by the next."""
    n_a, n_b = _cross_shape(Xa, Xb, binary)
    slab = cross_slab_rows(n_b)
    # One slab's memory serves every slab that is not a BLAS product: a fresh one each time would
    # pay the first touch of its pages again.
    buffer = None if use_blas and binary is None else np.empty((min(slab, n_a), n_b))
    for start in range(0, n_a, slab):
        rows = slice(start, start + slab)
        if binary is not None:
            bits_a, bits_b, by_distance = binary
            K = buffer[:bits_a[rows].shape[0]]
            _cross_by_distance(K, bits_a[rows], bits_b, by_distance)
        else:
            K = blas_dots(Xa[rows], Xb) if use_blas else buffer[:Xa[rows].shape[0]]
            _cross_rows(K, Xa[rows], sqa[rows], Xb, sqb, gamma, use_blas)
        yield rows, K


def kernel_cross_times(Xa, sqa, Xb, sqb, gamma, weights, use_blas: bool, *,
                       binary: tuple | None = None) -> np.ndarray:
    """K(Xa, Xb) @ weights with K in float64: ``kernel_cross_sums`` of one model that takes every
    row of Xb.

    Parameters
    ----------
    Xa, sqa, Xb, sqb, gamma, use_blas, binary
        As ``kernel_cross_sums``'s.
    weights : ndarray
        The float64 weights, a vector or columns aligned with the rows of Xb.

    Returns
    -------
    ndarray
        One value, or one row of values, per row of Xa.
    """
    n_a, n_b = _cross_shape(Xa, Xb, binary)
    columns = np.ascontiguousarray(weights[:, None] if weights.ndim == 1 else weights, dtype=np.float64)
    sums = kernel_cross_sums(Xa, sqa, Xb, sqb, gamma, np.arange(n_b), np.array([0, n_b]), columns, use_blas,
                             binary=binary)
    return sums[:, 0, :].reshape((n_a,) + weights.shape[1:])


# Rows gathered_times sums at once: each sum waits on its last addition (and summed into out,
# on its last store), so four independent sums, kept in registers, keep the processor busy
# where one would leave it waiting.
GATHER_ROWS = 4


def gathered_times(K, rows, cols, weights):
    """K[rows][:, cols] @ weights accumulated in float64, each row summed in column order.

    One summation order for every kernel mode (the Gram matrix, or a block read from a cache),
    so carried gradients and seeds are identical across modes and thread counts.

    Parameters
    ----------
    K : ndarray
        The float32 kernel values: the Gram matrix, or a block of it.
    rows : ndarray
        The int64 indices of K's rows to sum.
    cols : ndarray
        The int64 indices of K's columns, aligned with the rows of ``weights``.
    weights : ndarray
        The float64 columns of weights, one row per column index.

    Returns
    -------
    ndarray
        len(rows) x weights.shape[1] float64 sums.
    """
    return gathered_sums(K, rows, cols, np.array([0, cols.shape[0]]), weights)[:, 0, :]


@njit(cache=True, nogil=True, parallel=True)
def gathered_sums(K, rows, cols, starts, weights):
    """``gathered_times`` of several models at once: model p's columns are
    ``cols[starts[p]:starts[p + 1]]``, with the same rows of ``weights``; each sum in column order.

    All the models' sums over a group of rows are taken while those rows are in the processor's
    cache: where models share rows of a large K (the pairs of classes predicting one test fold),
    each row then comes from memory once instead of once per model.

    Returns
    -------
    ndarray
        len(rows) x (len(starts) - 1) x weights.shape[1] float64 sums.
    """
    n = rows.shape[0]
    out = np.zeros((n, starts.shape[0] - 1, weights.shape[1]))
    for g in prange((n + GATHER_ROWS - 1) // GATHER_ROWS):
        # A last group short of rows repeats its last one, whose sums are then written twice.
        first = g * GATHER_ROWS
        r0 = K[rows[first]]
        r1 = K[rows[min(first + 1, n - 1)]]
        r2 = K[rows[min(first + 2, n - 1)]]
        r3 = K[rows[min(first + 3, n - 1)]]
        for p in range(starts.shape[0] - 1):
            for m in range(weights.shape[1]):
                s0 = s1 = s2 = s3 = 0.0
                for b in range(starts[p], starts[p + 1]):
                    c = cols[b]
                    w = weights[b, m]
                    s0 += np.float64(r0[c]) * w
                    s1 += np.float64(r1[c]) * w
                    s2 += np.float64(r2[c]) * w
                    s3 += np.float64(r3[c]) * w
                out[first, p, m] = s0
                out[min(first + 1, n - 1), p, m] = s1
                out[min(first + 2, n - 1), p, m] = s2
                out[min(first + 3, n - 1), p, m] = s3
    return out


@dataclass
class ExactKernel:
    """The float64 kernel among a set of instances (a training set), for solvers that need its
    values exact to double precision (the active-set finish): ``rows(cols)`` is K(cols, all),
    ``times(cols, weights)`` is K(all, cols) @ weights, with cols indexing the set.

    Parameters
    ----------
    X : ndarray
        The instances' dense float64 features.
    sqnorm : ndarray
        Their squared norms.
    gamma : float
        The kernel's gamma.
    bits : ndarray
        Their bit sets (binary data), or an empty array: values are then looked up by distance.
    by_distance : ndarray
        ``kernel_by_distance``'s table, with ``bits``.
    """

    X: np.ndarray
    sqnorm: np.ndarray
    gamma: float
    bits: np.ndarray
    by_distance: np.ndarray

    def _binary(self, rows_a, rows_b):
        """The lookup's arguments for K(rows_a, rows_b) of binary data (each an index or
        ``ALL``), else None."""
        return (self.bits[rows_a], self.bits[rows_b], self.by_distance) if self.bits.size else None

    def rows(self, cols, *, y=None, out: np.ndarray | None = None) -> np.ndarray:
        """K(cols, all) in float64, a len(cols) x len(X) array: a row per column of the kernel
        (it is symmetric), each contiguous; with ``y``, Q's rows, y_c y_j K(c, j).

        Parameters
        ----------
        cols : array-like of int
            Positions in the set.
        y : ndarray, optional
            The set's labels, -1 or +1.
        out : ndarray, optional
            A C-contiguous len(cols) x len(X) float64 array to write the rows into.

        Returns
        -------
        ndarray
            The rows, ``out`` where given.
        """
        return kernel_cross_block(self.X[cols], self.sqnorm[cols], self.X, self.sqnorm, self.gamma,
                                  binary=self._binary(cols, ALL), signs=None if y is None else (y[cols], y),
                                  out=out)

    def distinct(self, cols) -> np.ndarray:
        """The positions in ``cols`` of the first of each set of equal instances, in cols' order:
        equal instances have equal columns of K, which no factor of theirs can hold together.

        Parameters
        ----------
        cols : ndarray
            Positions in the set.

        Returns
        -------
        ndarray
            int64 positions into ``cols``, ascending.
        """
        rows = self.bits[cols] if self.bits.size else self.X[cols]
        if rows.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.unique(rows, axis=0, return_index=True)[1]).astype(np.int64)

    def times(self, cols, weights) -> np.ndarray:
        """K(all, cols) @ weights in float64.

        Parameters
        ----------
        cols : array-like of int
            Positions in the set.
        weights : array-like
            One weight per column, or a column of weights per output column.
        """
        weights = np.asarray(weights, dtype=np.float64)
        out = np.empty((self.X.shape[0],) + weights.shape[1:])
        # BLAS's matrix-vector products, faster than prediction's ordered sums: the finish compares
        # no sum with another taken elsewhere. A slab's product is small (below PARALLEL_BLAS_WORK):
        # on one thread, where BLAS's threads would spin against the solver's.
        for rows, K in _cross_slabs(self.X, self.sqnorm, self.X[cols], self.sqnorm[cols], self.gamma, True,
                                    self._binary(ALL, cols)):
            with blas_threads(K.size):
                out[rows] = K @ weights
        return out
