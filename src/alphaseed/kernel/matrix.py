"""The kernel of one dataset, shared by the solver, the seeders and prediction.

Every round of a k-fold cross-validation trains on instances of the same dataset, so
K(x_i, x_j) never changes between rounds; LibSVM nevertheless rebuilds its cache in every
round. ``KernelMatrix`` offers four modes:

- ``cache``: LibSVM's behaviour, an LRU cache of rows per training run (the paper's setting);
- ``shared``: one LRU cache of full kernel rows keyed by global instance index, kept for the
  whole cross-validation and read by the seeders too;
- ``gram``: the whole n x n float32 matrix, computed once in parallel tiles;
- ``auto``: ``gram`` when it fits the memory budget, else ``shared``.

All modes store float32 values computed by the same compiled function (``kernel_values``), so
iterations, predictions and accuracy are identical across modes; only time and memory differ.
The Gram matrix takes its dot products from a BLAS matrix product only where that is exact
(integer features, see ``values``): elsewhere a GEMM would round them differently and break
that identity. Rows computed on demand (``cache``, ``shared``) take sparse dot products, as
LibSVM's do, on sparse data where the same exactness makes them bit for bit the dense ones.
"""

from __future__ import annotations

import numbers
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import psutil
import scipy.sparse as sp

from ..errors import SolverInputError
from .gram import dot_matrix, gram_matrix, new_gram
from .products import ExactKernel, gathered_sums, gathered_times, kernel_cross_sums
from .row_source import compute_source, gram_source, shared_block, shared_source
from .values import blas_dots_are_exact, compact_rows, dense_features, kernel_block, squared_norms, takes_bit_sets

GAMMA_RULES = ("scale", "auto")
KERNEL_MODES = ("cache", "shared", "gram", "auto")
# Share of the memory available at start-up that the kernel may take by default.
DEFAULT_MEMORY_FRACTION = 0.75
# Solver state, a round's LibSVM-size row cache and prediction blocks, beyond the matrix.
WORKING_BYTES = 512 << 20
# Largest float32 kernel block materialised at a time outside the Gram matrix.
BLOCK_BYTES = 256 << 20
# LibSVM's default row cache (svm-train -m), and the one rows computed from bit sets take.
LIBSVM_CACHE_MB = 100.0
SMALL_ROW_CACHE_MB = 2.0
# What the small cache grows to once a run turns out a tail: SMO then revisits the same violators'
# rows, which a few hundred cached rows serve; and its start where it holds a training set's whole
# Q, each row then computed once (docs: Kernel, "A small row cache").
TAIL_ROW_CACHE_MB = 32.0
# How far a float32 kernel value may lie from the double one prediction computes, relative to
# it: 2**-24 is float32's rounding of that double; the same again covers a few double rounding
# units by which the Gram's double value may differ (dot products summed in another order).
FLOAT32_SIGN_SLACK = 2.0**-23
# The largest absolute error of a float32 value below float32's normal range (a subnormal).
FLOAT32_SUBNORMAL_ERROR = 2.0**-149


def resolve_gamma(gamma, X) -> float:
    """The kernel's gamma: a positive number, or scikit-learn's "scale" or "auto" rule on X.

    Parameters
    ----------
    gamma : float or {"scale", "auto"}
        A positive number; ``"scale"`` = 1 / (n_features * X.var()) (1 where X.var() is 0),
        ``"auto"`` = 1 / n_features.
    X : ndarray or sparse matrix
        The training set the rule is applied to.

    Returns
    -------
    float
        The gamma.
    """
    if isinstance(gamma, str):
        if gamma not in GAMMA_RULES:
            raise SolverInputError(f"gamma must be a positive number, 'scale' or 'auto'; got {gamma!r}")
        if X.shape[1] == 0:
            raise SolverInputError(f"gamma={gamma!r} divides by the number of features, and X has none")
        if gamma == "auto":
            return 1.0 / X.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):
            # scikit-learn's formulas; E[x^2] - E[x]^2 can cancel below zero, where the variance is 0
            variance = max(X.multiply(X).mean() - X.mean() ** 2, 0.0) if sp.issparse(X) else X.var()
        if not np.isfinite(variance):
            raise SolverInputError("gamma='scale' takes 1 / (n_features * X.var()), and the variance of X "
                                   "is not finite (NaN in X, or beyond float64): scale the features, or give "
                                   "gamma as a number")
        return 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not (
            np.isfinite(gamma) and gamma > 0):
        # LibSVM itself accepts any gamma; the Gaussian kernel needs a positive one.
        raise SolverInputError(f"gamma must be a positive finite number, 'scale' or 'auto'; got {gamma!r}")
    return float(gamma)


def threads_may_share(mode: str) -> bool:
    """Whether rounds on several threads may train at once on a kernel kept in ``mode``.

    In every mode but ``shared``, whose one cache of rows they would all write, a solver reads
    the kernel and writes only its own row cache.

    Parameters
    ----------
    mode : str
        A resolved kernel mode (``resolve_mode``).

    Returns
    -------
    bool
        False for ``shared`` only.
    """
    return mode != "shared"


def default_memory_budget() -> int:
    """The memory the kernel may take when none is given: a share of what is available now.

    Returns
    -------
    int
        ``DEFAULT_MEMORY_FRACTION`` of the memory available, in bytes.
    """
    return int(psutil.virtual_memory().available * DEFAULT_MEMORY_FRACTION)


def gram_bytes(n: int) -> int:
    """The bytes of the float32 Gram matrix of n instances: 4 n^2.

    Parameters
    ----------
    n : int
        The matrix's rows (and columns).
    """
    return 4 * n * n


def dots_fit_beside_gram(n: int, memory_budget: int) -> bool:
    """Whether X's n x n float64 dot products fit the memory budget beside one Gram matrix.

    ``shared_dots`` keeps them while the Gram matrix of each gamma is built from them.

    Parameters
    ----------
    n : int
        The number of instances.
    memory_budget : int
        The bytes the kernel may take.

    Returns
    -------
    bool
        True when the dot products, one Gram matrix and the working memory fit.
    """
    return 8 * n * n + gram_bytes(n) + WORKING_BYTES <= memory_budget


def resolve_mode(mode: str, n: int, memory_budget: int, *, bit_sets: bool = False) -> str:
    """The mode a kernel of n instances will use; ``gram`` is refused past the budget.

    ``auto`` takes ``cache`` for data held as bit sets: a row computed from them in the solver's
    position order costs less than one gathered from a Gram matrix, and no n x n matrix is built
    (docs: Kernel modes and threads). Other data take the Gram matrix where it fits, else ``shared``.

    Parameters
    ----------
    mode : {"cache", "shared", "gram", "auto"}
        The mode asked for.
    n : int
        The number of instances.
    memory_budget : int
        The bytes the kernel may take, the Gram matrix and ``WORKING_BYTES`` together.
    bit_sets : bool, default False
        Whether the data are held as bit sets (``takes_bit_sets``).

    Returns
    -------
    str
        ``cache``, ``shared`` or ``gram``.

    Raises
    ------
    SolverInputError
        For an unknown mode, or ``gram`` past the budget.
    """
    if mode not in KERNEL_MODES:
        raise SolverInputError(f"kernel mode must be one of {', '.join(KERNEL_MODES)}; got {mode!r}")
    fits = gram_bytes(n) + WORKING_BYTES <= memory_budget
    if mode == "auto":
        return "cache" if bit_sets else "gram" if fits else "shared"
    if mode == "gram" and not fits:
        raise SolverInputError(
            f"the Gram matrix of {n} instances needs {gram_bytes(n) / 2**30:.1f} GiB plus "
            f"{WORKING_BYTES / 2**30:.1f} GiB working memory, over the memory budget of "
            f"{memory_budget / 2**30:.1f} GiB; use kernel mode 'auto' or 'shared'"
        )
    return mode


def memory_mb(n: int, dim: int, mode: str, cache_mb: float = 100.0,
              memory_budget: int | None = None) -> int:
    """Peak memory (MB) of a cross-validation job, for a scheduler's resource request.

    Parameters
    ----------
    n : int
        The number of instances.
    dim : int
        The number of features.
    mode : {"cache", "shared", "gram", "auto"}
        The kernel mode (``resolve_mode``).
    cache_mb : float, default 100.0
        The solver's row cache per training run, in MB.
    memory_budget : int, optional
        The bytes the kernel may take; ``default_memory_budget()`` if None.

    Returns
    -------
    int
        The features' copies, the kernel, the working memory and the row cache, in MB.
    """
    budget = default_memory_budget() if memory_budget is None else memory_budget
    resolved = resolve_mode(mode, n, budget)
    # The dense copy, the sparse input it came from and the compact rows (sparse ones at most
    # 25 % non-zero, or int16: a quarter of the dense copy).
    features = 8 * n * dim * 2
    kernel = {"cache": 0, "gram": gram_bytes(n), "shared": min(gram_bytes(n), budget)}[resolved]
    return int((features + kernel + WORKING_BYTES) / 2**20 + cache_mb)


def shared_dots(X, mode: str, memory_budget: int | None = None) -> np.ndarray | None:
    """X's dot products, computed once for the Gram matrices of several gammas (a grid search).

    Returns None where each kernel is better off computing its own: when it would not be a Gram
    matrix, when X is binary (each value is then looked up by distance, faster than reading
    its dot product), or the n x n float64 dot products beside one Gram matrix exceed the
    memory budget.

    Parameters
    ----------
    X : array-like or sparse matrix
        The features, one row per instance.
    mode : {"cache", "shared", "gram", "auto"}
        The kernel mode the Gram matrices will be asked for.
    memory_budget : int, optional
        The bytes the kernel may take; ``default_memory_budget()`` if None.

    Returns
    -------
    ndarray or None
        The n x n float64 dot products (``KernelMatrix``'s ``dots``), or None.
    """
    X = dense_features(X)
    n = X.shape[0]
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    if (resolve_mode(mode, n, budget) != "gram" or not dots_fit_beside_gram(n, budget)
            or takes_bit_sets(X)):
        return None
    return dot_matrix(X, blas_dots_are_exact(X))


def prefaulted_gram(n: int) -> Future:
    """An n x n float32 array, allocated and its pages faulted in on another thread.

    A fresh Gram matrix pays the operating system's first touch of every page (mapping and
    zeroing 4 n^2 bytes) inside its timed construction. Started before the solver compiles,
    the faults overlap that (``cross_validate`` does so); whatever is not done by the time the
    matrix is built is waited for inside its time.

    Parameters
    ----------
    n : int
        The number of instances.

    Returns
    -------
    Future
        Its result is the array, to pass as ``KernelMatrix``'s ``gram_buffer``.
    """
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(new_gram, n)
    finally:
        pool.shutdown(wait=False)


class KernelMatrix:
    """Kernel values over one dataset, addressed by global instance index.

    ``block(rows, cols)`` returns the float32 matrix K[rows][:, cols]. The solver reads ``X``,
    ``sqnorm``, ``gamma`` and ``source`` (where its row cache gets missing rows, with
    ``compact_rows``: X as bit sets or non-zeros, where rows are computed from those) directly in
    its compiled loop. ``seconds`` is the time spent building the kernel (the Gram matrix).

    Parameters
    ----------
    X : array-like or sparse matrix
        The features, one row per instance (kept as ``dense_features(X)``).
    gamma : float
        The Gaussian kernel's gamma, positive and finite.
    mode : {"cache", "shared", "gram", "auto"}, default "cache"
        How the values are kept (``resolve_mode``); time and memory only, never the values.
    memory_budget : int, optional
        The bytes the kernel may take; ``default_memory_budget()`` if None.
    dots : ndarray, optional
        In mode ``gram``, X's n x n dot products (``shared_dots``), so the Gram matrix skips
        computing them.
    gram_buffer : ndarray, optional
        In mode ``gram``, a C-contiguous n x n float32 array to hold the Gram matrix (e.g. from
        ``prefaulted_gram``).
    """

    def __init__(self, X, gamma: float, mode: str = "cache", memory_budget: int | None = None,
                 dots: np.ndarray | None = None, gram_buffer: np.ndarray | None = None):
        if not np.isfinite(gamma) or gamma <= 0:
            raise SolverInputError(f"gamma must be a positive finite number, got {gamma!r}")
        self.X = dense_features(X)
        self.sqnorm = squared_norms(self.X)
        self.gamma = float(gamma)
        self.blas_dots = blas_dots_are_exact(self.X)
        self.compact_rows = compact_rows(self.X, self.blas_dots, self.gamma)
        budget = default_memory_budget() if memory_budget is None else int(memory_budget)
        self.mode = resolve_mode(mode, self.n, budget, bit_sets=self.compact_rows.bits.size > 0)
        start = time.perf_counter()
        self.gram = None
        if self.mode == "gram":
            if dots is not None and dots.shape != (self.n, self.n):
                raise SolverInputError(f"dots must be {self.n} x {self.n}, got {dots.shape}")
            self.gram = gram_matrix(self.X, self.sqnorm, self.gamma, self.blas_dots, dots,
                                    gram_buffer, self.compact_rows)
            self.source = gram_source(self.gram)
        elif self.mode == "shared":
            self.source = shared_source(self.n, max(0, budget - WORKING_BYTES), self.compact_rows)
        else:
            self.source = compute_source(self.compact_rows)
        self.seconds = time.perf_counter() - start

    @property
    def n(self) -> int:
        """The number of instances."""
        return self.X.shape[0]

    @property
    def row_cache_mb(self) -> float:
        """The row cache a training run on this kernel takes by default, in MB: a small one where rows
        are computed from bit sets (a row costs less to compute again than to read back from a large
        cache; docs: Kernel modes and threads), else LibSVM's 100."""
        return SMALL_ROW_CACHE_MB if self._rows_from_bit_sets else LIBSVM_CACHE_MB

    @property
    def tail_row_cache_mb(self) -> float:
        """What the default row cache grows to, in MB, once a run has made ``TAIL_ITERATIONS`` per
        instance, or starts at where it holds the training set's whole Q (``solve``):
        ``TAIL_ROW_CACHE_MB`` where rows are computed from bit sets, else ``row_cache_mb``."""
        return TAIL_ROW_CACHE_MB if self._rows_from_bit_sets else self.row_cache_mb

    @property
    def _rows_from_bit_sets(self) -> bool:
        return self.mode == "cache" and self.compact_rows.bits.size > 0

    def block(self, rows, cols) -> np.ndarray:
        """The float32 matrix K[rows][:, cols], read or computed as the mode keeps it.

        Parameters
        ----------
        rows, cols : array-like of int
            Global instance indices.

        Returns
        -------
        ndarray
            A len(rows) x len(cols) float32 array.
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        if self.gram is not None:
            return self.gram[np.ix_(rows, cols)]
        if self.mode == "shared":
            return shared_block(self.X, self.sqnorm, self.gamma, self.source, rows, cols)
        return kernel_block(self.X, self.sqnorm, self.gamma, rows, cols, self.compact_rows)

    def times(self, rows, cols, weights) -> np.ndarray:
        """K[rows][:, cols] @ weights (a vector or columns) in float64, from the float32 values.

        Read straight from the Gram matrix, else in row slabs of bounded memory; each row is
        summed in column order (``gathered_times``) in every mode.

        Parameters
        ----------
        rows, cols : array-like of int
            Global instance indices.
        weights : array-like
            A vector, or columns, aligned with ``cols``.

        Returns
        -------
        ndarray
            One value, or one row of values, per row.
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        columns = np.ascontiguousarray(weights[:, None] if weights.ndim == 1 else weights)
        if self.gram is not None:
            out = gathered_times(self.gram, rows, cols, columns)
        else:
            out = np.empty((rows.size, columns.shape[1]))
            slab = max(1, BLOCK_BYTES // (4 * max(cols.size, 1)))
            every_col = np.arange(cols.size)
            for start in range(0, rows.size, slab):
                block = self.block(rows[start:start + slab], cols)
                out[start:start + slab] = gathered_times(block, np.arange(block.shape[0]),
                                                         every_col, columns)
        return out.reshape((rows.size,) + weights.shape[1:])

    def decision_signs(self, rows, models) -> np.ndarray:
        """The sign of K[rows][:, cols] @ weights - offset of each model, with K in double
        precision as ``times_float64``.

        +1 where the sum is > 0, else -1. Without a Gram matrix, K over the models' columns
        together is computed once for all of them (``kernel_cross_sums``): the C values of a
        search's split share most of their support vectors.

        With a Gram matrix, the sums are first taken over its float32 values, which already
        hold every test-versus-train value: a round's prediction then reads memory instead of
        recomputing n_test x n_sv kernel values, and the models' sums over a few rows are taken
        together (``gathered_sums``), so that the models predicting one test fold read each of
        its rows once. A sign taken from float32 values is kept only where it is certain: the
        float32 values differ from the double ones by at most ``FLOAT32_SIGN_SLACK`` of their sum
        of ``|weight| x K``, and each double sum by len(cols) + 2 rounding units. Where a row's
        sum lies within that of zero, that row alone is summed in double precision: each double
        value and each sum's order is the row's own, so it is ``times_float64``'s bit for bit.

        Parameters
        ----------
        rows : array-like of int
            Global instance indices (in prediction, the test instances).
        models : sequence of tuple
            ``(cols, weights, offset)`` of each model: global instance indices (the support
            vectors), a weight per column (y_j alpha_j) and the value subtracted from each sum
            (rho).

        Returns
        -------
        ndarray
            +1 or -1 (int8), one row per row and one column per model.
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        models = [(np.ascontiguousarray(cols, dtype=np.int64), np.asarray(weights, dtype=np.float64), float(offset))
                  for cols, weights, offset in models]
        if not models:
            return np.empty((rows.size, 0), dtype=np.int8)
        offsets = np.array([offset for _, _, offset in models])
        every_weight = np.concatenate([weights for _, weights, _ in models])
        if self.gram is None:
            decision = self._sums_float64(rows, [cols for cols, _, _ in models], every_weight[:, None])[:, :, 0]
            return np.where(decision - offsets > 0, 1, -1).astype(np.int8)
        starts = np.cumsum([0] + [cols.size for cols, _, _ in models])
        # K >= 0, so K @ |weights| is the sum of |weight| x K each bound scales.
        sums = gathered_sums(self.gram, rows, np.concatenate([cols for cols, _, _ in models]), starts,
                             np.column_stack([every_weight, np.abs(every_weight)]))
        decision = sums[:, :, 0] - offsets
        for p, (cols, weights, offset) in enumerate(models):
            relative = FLOAT32_SIGN_SLACK + (cols.size + 2) * 2.0**-52
            bound = (relative * (sums[:, p, 1] + abs(offset))
                     + FLOAT32_SUBNORMAL_ERROR * float(np.abs(weights).sum()))
            uncertain = np.flatnonzero(np.abs(decision[:, p]) <= bound)
            if uncertain.size:
                decision[uncertain, p] = self.times_float64(rows[uncertain], cols, weights) - offset
        return np.where(decision > 0, 1, -1).astype(np.int8)

    def times_float64(self, rows, cols, weights) -> np.ndarray:
        """K[rows][:, cols] @ weights with K in double precision, as LibSVM predicts
        (``kernel_cross_sums``): one value, or a row of values, per row.

        Parameters
        ----------
        rows, cols : array-like of int
            The instances (global indices) of the product's rows and of its columns.
        weights : array-like
            One weight per column, or a column of weights per output column.

        Returns
        -------
        ndarray
            One value, or one row of values, per row.
        """
        rows = np.asarray(rows, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        columns = weights[:, None] if weights.ndim == 1 else weights
        sums = self._sums_float64(rows, [np.asarray(cols, dtype=np.int64)], columns)
        return sums[:, 0, :].reshape((rows.size,) + weights.shape[1:])

    def _sums_float64(self, rows, cols_of_models, weights) -> np.ndarray:
        """Each model's K[rows][:, its cols] @ its rows of ``weights`` (the models' one after the
        other), K in double precision over the models' columns together: rows x models x columns
        of weights. Binary data's values are looked up from their bit sets, with no features."""
        every_col, positions = np.unique(np.concatenate(cols_of_models), return_inverse=True)
        starts = np.cumsum([0] + [cols.size for cols in cols_of_models])
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        bits = self.compact_rows.bits
        if bits.size:
            operands = (None, None, None, None)
            binary = (bits[rows], bits[every_col], self.compact_rows.by_distance)
        else:
            operands = (self.X[rows], self.sqnorm[rows], self.X[every_col], self.sqnorm[every_col])
            binary = None
        return kernel_cross_sums(*operands, self.gamma, positions.astype(np.int64), starts, weights,
                                 self.blas_dots, binary=binary)

    def exact(self, index) -> ExactKernel:
        """The float64 kernel among the instances ``index`` (``ExactKernel``), from their features.

        Parameters
        ----------
        index : array-like of int
            Global instance indices: a training set.
        """
        index = np.asarray(index, dtype=np.int64)
        bits = self.compact_rows.bits
        return ExactKernel(self.X[index], self.sqnorm[index], self.gamma,
                           bits[index] if bits.size else bits, self.compact_rows.by_distance)
