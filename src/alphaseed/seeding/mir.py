"""MIR, Multiple Instance Replacement (paper Section 3, Equations 13-14, Algorithm 2).

alpha'_S = alpha_S; alpha'_T is the least-squares solution of Equation 13,

    [ Q_{S,T} ]            [ y_S * Delta f_S + Q_{S,R} alpha_R ]
    [ y_T^T   ] alpha'_T = [ y_R^T alpha_R                     ]

with Delta f_i = 0 for the free SVs (I_m) and Delta f_i = b - f_i for I_u and I_l, where
f_i = y_i G_i (G = LibSVM's gradient of the previous optimum) and b = the previous rho. Then
AdjustAlpha makes the seed feasible.

Multiplying row i by y_i and substituting beta_T = y_T alpha'_T turns Q into the kernel
matrix K without changing the least-squares problem (both are sign flips), so the code solves
[K_{S,T}; 1^T] beta_T = [Delta f_S + K_{S,R} beta_R; 1^T beta_R].

Where the paper is ambiguous, chosen here:
- Rows: the paper writes Q_{X,T} over all of X but notes (in a commented-out remark) that rows
  of R need not be included, since those instances leave; only rows of S are used.
- Solver and memory: when the (|S|+1) x |T| system fits in MIR_DENSE_BYTES (1 GiB) of float64
  (Heart, Madelon, Adult at k = 10: 26k x 3.3k = 0.7 GB), it is solved directly with
  ``scipy.linalg.lstsq`` (LAPACK gelsy, rank-revealing QR: the minimum-norm solution when the
  kernel block is rank deficient). Otherwise (MNIST at k = 10: 48k x 6k = 2.3 GB), the paper's
  own route, Equation 14, is taken: the |T| x |T| normal equations are accumulated from float32
  kernel slabs into float64 (MNIST: 0.3 GB) and solved by least squares on that square
  system, i.e. with the pseudo-inverse the paper falls back to when the inverse does not exist.
- Both routes use gelsy, whose complete orthogonal factorization always finishes. The SVD driver
  gelsd does not: its divide-and-conquer step can fail to converge on tightly clustered spectra,
  depending on rounding (Reference-LAPACK/lapack#1138). Webdata's normal equations at k = 10 are
  such a spectrum (round 7's: rank 1,383 of 4,975, 3,959 eigenvalues under 1e-10 of the largest,
  814 of T's instances repeated), and gelsd stopped a full-size run there.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..kernel import blas_threads
from .adjust import adjust_added
from .context import SeedContext, carry_shared, kernel_matvec, layout

MIR_DENSE_BYTES = 1 << 30
ROW_SLAB_BYTES = 256 << 20


def least_squares_system(ctx: SeedContext, rows: np.ndarray, cols: np.ndarray, rhs: np.ndarray,
                         sum_target: float) -> np.ndarray:
    """Least-squares x for [K[rows][:, cols]; 1^T] x = [rhs; sum_target]."""
    m, t = rows.size, cols.size
    slab = max(1, ROW_SLAB_BYTES // (4 * t))
    if (m + 1) * t * 8 <= MIR_DENSE_BYTES:
        A = np.empty((m + 1, t))
        for start in range(0, m, slab):
            part = rows[start:start + slab]
            A[start:start + part.size] = ctx.kernel.block(part, cols)
        A[m] = 1.0
        with blas_threads(A.size * t):
            x, *_ = scipy.linalg.lstsq(A, np.append(rhs, sum_target), lapack_driver="gelsy",
                                       overwrite_a=True, check_finite=False)
        return x
    normal = np.ones((t, t))
    moment = np.full(t, sum_target)
    for start in range(0, m, slab):
        block = ctx.kernel.block(rows[start:start + slab], cols).astype(np.float64)
        normal += block.T @ block
        moment += block.T @ rhs[start:start + slab]
    with blas_threads(normal.size * t):
        x, *_ = scipy.linalg.lstsq(normal, moment, lapack_driver="gelsy", overwrite_a=True,
                                   check_finite=False)
    return x


def seed_mir(ctx: SeedContext) -> np.ndarray:
    """MIR's feasible seed for X' = ``ctx.next_index``, aligned with it.

    alpha_S is kept, alpha_T is the least-squares solution of Equation 13 over the rows of S
    (0 when S or T is empty), then AdjustAlpha (T, then free S, then all of S).

    Parameters
    ----------
    ctx : SeedContext
        Round h's optimum, with S, R and T of round h + 1.
    """
    lay = layout(ctx)
    alpha = carry_shared(ctx, lay)
    y_next = ctx.y[ctx.next_index]
    if ctx.added.size and ctx.shared.size:
        alpha_s = ctx.prev_alpha[lay.shared_prev]
        f_s = ctx.y[ctx.shared] * ctx.prev_gradient[lay.shared_prev]
        free = (alpha_s > 0) & (alpha_s < ctx.bounds(ctx.y[ctx.shared]))
        delta_f = np.where(free, 0.0, ctx.prev_rho - f_s)
        beta_r = ctx.y[ctx.removed] * ctx.prev_alpha[lay.removed_prev]
        rhs = delta_f + kernel_matvec(ctx, ctx.shared, ctx.removed, beta_r)
        beta_t = least_squares_system(ctx, ctx.shared, ctx.added, rhs, float(beta_r.sum()))
        alpha[lay.added_next] = ctx.y[ctx.added] * beta_t
    return adjust_added(alpha, y_next, ctx.bounds(y_next), lay.shared_next, lay.added_next)
