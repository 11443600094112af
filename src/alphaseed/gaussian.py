"""Gaussian kernel values, computed one way everywhere (compiled kernels over plain arrays).

K(x, z) = exp(-gamma * ||x - z||^2) with ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z evaluated in
float64 (raw Madelon and MNIST values cancel catastrophically in float32), then stored as
float32, as LibSVM's kernel cache stores them. The solver, the seeders and prediction all call
the functions of this module, so a kernel value never differs between two of them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from .errors import SolverInputError


def dense_features(X) -> np.ndarray:
    """Return X as a C-contiguous float64 dense array (CSR input is densified)."""
    if sp.issparse(X):
        X = X.toarray()
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise SolverInputError(f"features must be a 2-D array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise SolverInputError("features contain NaN or infinity")
    return X


@njit(cache=True)
def squared_norms(X):
    n, d = X.shape
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for f in range(d):
            s += X[i, f] * X[i, f]
        out[i] = s
    return out


# Reassociation lets LLVM vectorise the dot product; it is the only relaxed step, and the same
# compiled function serves every caller, so every caller sees identical kernel values.
@njit(cache=True, fastmath={"reassoc", "contract"})
def row_dot(A, i, B, j):
    s = 0.0
    for f in range(A.shape[1]):
        s += A[i, f] * B[j, f]
    return s


@njit(cache=True)
def kernel_value(X, sqnorm, gamma, i, j):
    """K(x_i, x_j) in float64; callers round it to float32 when they store it."""
    if i == j:
        return 1.0
    dist = sqnorm[i] + sqnorm[j] - 2.0 * row_dot(X, i, X, j)
    if dist < 0.0:
        dist = 0.0
    return np.exp(-gamma * dist)


@njit(cache=True, parallel=True)
def fill_block(out, X, sqnorm, gamma, rows, cols):
    """out[a, b] = K(x_rows[a], x_cols[b]); the dtype of ``out`` decides the stored precision."""
    for a in prange(rows.shape[0]):
        i = rows[a]
        for b in range(cols.shape[0]):
            out[a, b] = kernel_value(X, sqnorm, gamma, i, cols[b])


def kernel_block(X, sqnorm, gamma, rows, cols, dtype=np.float32):
    """Matrix K[rows][:, cols] over instances of X given by global indices."""
    out = np.empty((rows.shape[0], cols.shape[0]), dtype=dtype)
    fill_block(out, X, sqnorm, gamma, rows, cols)
    return out


# Tiles of the Gram matrix: a block of rows against a block of columns stays in cache.
GRAM_TILE_ROWS = 32
GRAM_TILE_COLS = 512


@njit(cache=True)
def _gram_tile_row(K, X, sqnorm, gamma, t):
    """Rows of tile t against every column at or right of the diagonal, mirrored below it."""
    n = X.shape[0]
    i0 = t * GRAM_TILE_ROWS
    i1 = min(n, i0 + GRAM_TILE_ROWS)
    for j0 in range(i0, n, GRAM_TILE_COLS):
        j1 = min(n, j0 + GRAM_TILE_COLS)
        for i in range(i0, i1):
            for j in range(max(i, j0), j1):
                v = np.float32(kernel_value(X, sqnorm, gamma, i, j))
                K[i, j] = v
                K[j, i] = v


@njit(cache=True, parallel=True)
def gram_matrix(X, sqnorm, gamma):
    """The full float32 kernel matrix, each value computed once by kernel_value and mirrored."""
    n = X.shape[0]
    K = np.empty((n, n), dtype=np.float32)
    n_tiles = (n + GRAM_TILE_ROWS - 1) // GRAM_TILE_ROWS
    # Tile t has a triangle of work shrinking with t: pairing t with n_tiles-1-t gives every
    # parallel task the same amount.
    for pair in prange((n_tiles + 1) // 2):
        _gram_tile_row(K, X, sqnorm, gamma, pair)
        other = n_tiles - 1 - pair
        if other != pair:
            _gram_tile_row(K, X, sqnorm, gamma, other)
    return K


@njit(cache=True, parallel=True)
def kernel_cross(Xa, sqa, Xb, sqb, gamma):
    """float64 matrix K(Xa[i], Xb[j]) between two separate feature arrays (prediction).

    Prediction keeps double precision, as LibSVM's svm_predict does: with K close to 1
    everywhere, float32 values would collapse every decision value onto -rho.
    """
    out = np.empty((Xa.shape[0], Xb.shape[0]))
    for i in prange(Xa.shape[0]):
        for j in range(Xb.shape[0]):
            dist = sqa[i] + sqb[j] - 2.0 * row_dot(Xa, i, Xb, j)
            if dist < 0.0:
                dist = 0.0
            out[i, j] = np.exp(-gamma * dist)
    return out
