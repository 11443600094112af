"""The Gram matrix: every float32 kernel value of a dataset, computed once.

Computed in panels of the upper triangle (dot products from a matrix product: exact for integer
data, see ``values``, and for float data kept only where certified to store ``row_dot``'s float32,
see ``_certified_values``), each value once and mirrored below the diagonal, or, where the norms
spread beyond the kernel's reach, only in the band of pairs close enough in norm to store a
non-zero value. Every way stores the values ``values.kernel_values`` computes, bit for bit.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit, prange

from ..errors import SolverInputError
from .blas import blas_dots, blas_threads
from .values import dense_rows, gaussian_from_dot, kernel_values, row_dot

# A panel of the upper triangle: one thread takes its dot products by one single-threaded matrix
# product, then their kernel values while they are still in cache, and the threads take panels in
# turn. Threaded BLAS products of whole row blocks, each followed by a parallel loop over its values,
# lose twice: the products come back from memory, and OpenBLAS's threads, spinning for work after
# each product, hold the cores the values' loop wants (figures in docs/benchmarks/results.md).
GRAM_PANEL_ROWS = 512
GRAM_PANEL_COLS = 2048

# Columns of a Gram tile: a panel's rows against this many columns (1 MB of float32 at most) stay
# in cache while their mirror image below the diagonal is written.
GRAM_TILE_COLS = 512
# The mirror is written in squares of this many rows and columns: each line read from the tile
# serves a whole line of every row it writes into, and those rows are written in a run of lines
# each. Written one value at a time down a column, the mirror would touch a new cache line with
# every value, a whole row's length from the last.
GRAM_MIRROR_SQUARE = 32
# Above this gamma * ||x - z||^2, exp's value is below half float32's smallest subnormal
# (2**-150, e**-103.97) and its float32 is 0.0 whatever the double's last bits: the Gram matrix
# stores 0.0 without calling exp, which is most values where the data lie far apart for gamma.
FLOAT32_ZERO_EXPONENT = 105.0


@njit(cache=True, nogil=True)
def _stored_gaussian(sq_a, sq_b, dot, gamma):
    """``gaussian_from_dot`` as float32 stores it."""
    dist = sq_a + sq_b - 2.0 * dot
    if gamma * dist > FLOAT32_ZERO_EXPONENT:
        return np.float32(0.0)
    return np.float32(gaussian_from_dot(sq_a, sq_b, dot, gamma))


# Float data: a BLAS product sums a dot product in another order than ``row_dot``, which every
# kernel mode shares, and differs from it by at most 2 (d + 2) u ||x|| ||z|| (u = 2**-53, the
# error bound of any order of summation, doubled). A value computed from the BLAS product is kept
# where that difference cannot move its float32 across a rounding boundary (nor its distance
# across 0, nor past FLOAT32_ZERO_EXPONENT); the few others are computed again from ``row_dot``.
# So the Gram matrix holds row_dot's float32 values bit for bit, at a matrix product's speed.
UNIT_ROUNDOFF = 2.0**-53
# float32's smallest normal value: below it the rounding steps are fixed, and values there are
# computed again rather than certified.
FLOAT32_MIN_NORMAL = 2.0**-126


# exp(-x) for 0 <= x <= FLOAT32_ZERO_EXPONENT in a loop the compiler vectorises (libm's exp is
# one call per value): x = m ln(2) / 64 + r with |r| <= ln(2) / 128 (Cody and Waite's two-part
# ln 2, whose high part times any m here is exact), exp(-r) by its Taylor series to the 5th power
# (truncation below 4e-17), times 2**(-m / 64) from a table. Its relative error stays below 1e-15
# (the series' and the table's roundings); EXP_ERROR, far above, is what a certification allows
# for it.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
EXP_STEPS = 64
STEPS_PER_UNIT = EXP_STEPS / math.log(2.0)
EXP_TABLE = np.array([2.0 ** (-m / EXP_STEPS) for m in range(int(FLOAT32_ZERO_EXPONENT * STEPS_PER_UNIT) + 2)])
EXP_ERROR = 2.0**-40


@njit(cache=True, nogil=True)
def _approximate_gaussians(out, sq_a, sq_b, dots, gamma):
    """out[k] = exp(-gamma (sq_a + sq_b[k] - 2 dots[k])) within EXP_ERROR, its exponent clamped to
    [0, FLOAT32_ZERO_EXPONENT]; the same distance and exponent as ``_certified_values`` computes."""
    for k in range(out.shape[0]):
        x = gamma * (sq_a + sq_b[k] - 2.0 * dots[k])
        x = min(max(x, 0.0), FLOAT32_ZERO_EXPONENT)
        m = np.floor(x * STEPS_PER_UNIT + 0.5)
        r = m * (LN2_LO / EXP_STEPS) - (x - m * (LN2_HI / EXP_STEPS))
        series = (((((1.0 / 120.0) * r + 1.0 / 24.0) * r + 1.0 / 6.0) * r + 0.5) * r + 1.0) * r + 1.0
        out[k] = series * EXP_TABLE[int(m)]


@njit(cache=True, nogil=True)
def _certified_values(out, sq_a, sq_b, norm_a, norms_b, dots, gamma, features, certify, approximate):
    """out[k]: the float32 ``_stored_gaussian`` stores from ``dots[k]`` where any dot product
    within the summation bound of it (the comment above UNIT_ROUNDOFF) stores the same, else NaN.
    The bound scales with ``norm_a`` ``norms_b[k]`` where ``certify`` (0 for exact dots);
    ``approximate`` holds ``_approximate_gaussians``' values. Every case is a select, not a
    branch, so the loop is vectorised."""
    bound = 2.0 * (features + 2) * UNIT_ROUNDOFF * 1.01 if certify else 0.0
    for k in range(out.shape[0]):
        dot = dots[k]
        dist = sq_a + sq_b[k] - 2.0 * dot
        dist_slack = 2.0 * bound * norm_a * norms_b[k] + 4.0 * UNIT_ROUNDOFF * (sq_a + sq_b[k] + 2.0 * abs(dot))
        x = gamma * dist
        x_slack = gamma * dist_slack + 4.0 * UNIT_ROUNDOFF * x
        # exp moves by at most a factor e^(x_slack) ~ 1 + x_slack; libm's exp, the approximation
        # and the two sums below round within the rest. Rounding to float32 is monotonic: where
        # both ends of the reach round to one float32, every value between them does.
        reach = approximate[k] * (1.01 * x_slack + EXP_ERROR + 8.0 * UNIT_ROUNDOFF)
        low = np.float32(approximate[k] - reach)
        certain = ((dist - dist_slack > 0.0) & (x + x_slack <= FLOAT32_ZERO_EXPONENT)
                   & (approximate[k] >= 2.0 * FLOAT32_MIN_NORMAL) & (low == np.float32(approximate[k] + reach)))
        zero = (dist - dist_slack > 0.0) & (x - x_slack > FLOAT32_ZERO_EXPONENT)
        out[k] = np.float32(0.0) if zero else (low if certain else np.float32(np.nan))


@njit(cache=True, nogil=True)
def _gram_panel(K, X, sqnorm, norms, gamma, i0, i1, j0, j1, dots, have_dots, compact, every, certify):
    """K[i, j] for i0 <= i < i1 and max(i, j0) <= j < j1, mirrored below the diagonal;
    ``dots[a, b]`` holds x_{i0+a}.x_{j0+b} when ``have_dots``, else each value is computed here
    (from ``compact``). Each value from ``dots`` is certified by ``_certified_values`` from
    ``_approximate_gaussians``, or else computed by libm's exp, from ``row_dot`` where ``certify``
    (a BLAS product's float dots; ``norms`` are the rows' norms), else from ``dots`` (exact)."""
    features = X.shape[1]
    approximate = np.empty(GRAM_TILE_COLS)
    for t0 in range(j0, j1, GRAM_TILE_COLS):
        t1 = min(j1, t0 + GRAM_TILE_COLS)
        r1 = min(i1, t1)
        for i in range(i0, r1):
            lo = max(i, t0)
            if not have_dots:
                kernel_values(K[i, lo:t1], X, sqnorm, gamma, i, every[lo:t1], compact)
                continue
            row_dots = dots[i - i0, lo - j0:t1 - j0]
            _approximate_gaussians(approximate[:t1 - lo], sqnorm[i], sqnorm[lo:t1], row_dots, gamma)
            _certified_values(K[i, lo:t1], sqnorm[i], sqnorm[lo:t1], norms[i], norms[lo:t1], row_dots, gamma,
                              features, certify, approximate[:t1 - lo])
            for j in range(lo, t1):
                if i == j:
                    K[i, j] = 1.0
                elif np.isnan(K[i, j]):
                    K[i, j] = _stored_gaussian(sqnorm[i], sqnorm[j],
                                               row_dot(X, i, X, j) if certify else row_dots[j - lo], gamma)
        for jb in range(t0, t1, GRAM_MIRROR_SQUARE):
            for ib in range(i0, min(r1, jb + GRAM_MIRROR_SQUARE), GRAM_MIRROR_SQUARE):
                for j in range(jb, min(t1, jb + GRAM_MIRROR_SQUARE)):
                    for i in range(ib, min(ib + GRAM_MIRROR_SQUARE, r1, j)):
                        K[j, i] = K[i, j]


def _fill_panels(K, X, sqnorm, norms, gamma, gemm_rows, dots, compact, certify) -> None:
    """Every panel of K's upper triangle by ``_gram_panel``, mirrored, on Numba's thread count of
    threads: its dot products from ``dots`` (n x n) where given, else by BLAS from ``gemm_rows``
    where given, else none (each value computed from ``compact``)."""
    n = K.shape[0]
    have_dots = dots is not None or gemm_rows is not None
    dtype = dots.dtype if dots is not None else gemm_rows.dtype if gemm_rows is not None else np.float64
    panels = [(i0, j0) for i0 in range(0, n, GRAM_PANEL_ROWS) for j0 in range(i0, n, GRAM_PANEL_COLS)]
    remaining = iter(panels)
    taking = threading.Lock()
    every = np.arange(n)

    def fill() -> None:
        buffer = np.empty(GRAM_PANEL_ROWS * GRAM_PANEL_COLS if have_dots else 0, dtype=dtype)
        while True:
            with taking:
                panel = next(remaining, None)
            if panel is None:
                return
            i0, j0 = panel
            i1, j1 = min(n, i0 + GRAM_PANEL_ROWS), min(n, j0 + GRAM_PANEL_COLS)
            panel_dots = buffer[:(i1 - i0) * (j1 - j0) if have_dots else 0].reshape(-1, j1 - j0)
            if dots is not None:
                panel_dots[...] = dots[i0:i1, j0:j1]
            elif gemm_rows is not None:
                np.matmul(gemm_rows[i0:i1], gemm_rows[j0:j1].T, out=panel_dots)
            _gram_panel(K, X, sqnorm, norms, gamma, i0, i1, j0, j1, panel_dots, have_dots, compact, every,
                        certify)

    workers = min(numba.get_num_threads(), len(panels))
    with blas_threads(0):
        if workers <= 1:
            fill()
            return
        with ThreadPoolExecutor(workers, thread_name_prefix="alphaseed-gram") as pool:
            for done in [pool.submit(fill) for _ in range(workers)]:
                done.result()


# float32 holds every integer up to 2**24: where two rows' squared norms stay within it, every
# product and partial sum of their dot product does too (bounded as in blas_dots_are_exact), so
# a float32 GEMM gives the same doubles at half a float64 one's time and bytes. The values of
# the few rows beyond it are then computed again from float64 dots; with more than this share
# of rows beyond, the whole matrix takes float64 GEMMs.
FLOAT32_EXACT_NORM = 2.0**24
FLOAT32_GEMM_MAX_BEYOND = 1 / 16


@njit(cache=True, nogil=True)
def _gram_redo_rows(K, sqnorm, gamma, rows, dots):
    """Row and column rows[a] of K from ``dots[a, j]`` = x_rows[a].x_j."""
    for a in range(rows.shape[0]):
        i = rows[a]
        for j in range(K.shape[0]):
            value = 1.0 if i == j else _stored_gaussian(sqnorm[i], sqnorm[j], dots[a, j], gamma)
            K[i, j] = value
            K[j, i] = value


# ||x - z|| >= | ||x|| - ||z|| |: pairs whose norms differ by more than sqrt(105 / gamma) store
# 0.0, found without a dot product. Sorted by norm, the rows a row can reach form a band, a
# small part of the matrix where the norms spread far beyond the kernel's reach.
# The band is computed where it is at most this share of the triangle: its non-zero values land
# in rows and columns scattered across the matrix, where the panels above write whole lines, so
# a band's value costs more than a panel's. Half the triangle is where the band breaks even in
# the worst case, every value non-zero.
GRAM_BAND_MAX_SHARE = 0.5
# Norm-sorted rows of a band tile: one GEMM against the tile's reach.
GRAM_BAND_TILE_ROWS = 512
# Slack on the reach for the rounding of square roots and their difference, far below the
# margin FLOAT32_ZERO_EXPONENT keeps above exp's last non-zero float32.
GRAM_BAND_SLACK = 1e-6


def norm_reach(gamma: float, max_sqnorm: float, dim: int) -> float:
    """The largest | ||x|| - ||z|| | at which a stored kernel value may be non-zero, for data of
    ``dim`` features whose squared norms are at most ``max_sqnorm``.

    The distance is computed as ||x||^2 + ||z||^2 - 2 x.z from sums over the features, which fall
    short of the true one by at most 4 (dim + 2) u max_sqnorm each (u = 2**-53, the error bound of
    any order of summation): far below the margin FLOAT32_ZERO_EXPONENT keeps on ordinary data,
    but not where the features carry a large offset.
    """
    rounding = 16.0 * (dim + 2) * UNIT_ROUNDOFF * max_sqnorm
    return np.sqrt(FLOAT32_ZERO_EXPONENT / gamma + rounding) * (1.0 + GRAM_BAND_SLACK)


def norm_band(sqnorm, gamma, dim):
    """(order, tiles): rows by increasing norm, and tiles (a0, a1, b1) whose sorted rows a0..a1
    against sorted columns a0..b1 cover every pair that may store a non-zero value; None where
    they exceed GRAM_BAND_MAX_SHARE of the triangle."""
    n = sqnorm.shape[0]
    order = np.argsort(sqnorm, kind="stable")
    norms = np.sqrt(sqnorm[order])
    width = norm_reach(gamma, float(sqnorm.max(initial=0.0)), dim)
    reach = np.searchsorted(norms, norms + width, side="right")
    tiles = [(a0, min(n, a0 + GRAM_BAND_TILE_ROWS), int(reach[min(n, a0 + GRAM_BAND_TILE_ROWS) - 1]))
             for a0 in range(0, n, GRAM_BAND_TILE_ROWS)]
    if sum((a1 - a0) * (b1 - a0) for a0, a1, b1 in tiles) > GRAM_BAND_MAX_SHARE * n * n / 2:
        return None
    return order, tiles


@njit(cache=True, nogil=True, parallel=True)
def _gram_band_tile(K, sqnorm, gamma, order, a0, a1, b1, dots):
    """K[i, j] = K[j, i] for i = order[a], j = order[b], a0 <= a < a1, a <= b < b1, from
    ``dots[a - a0, b - a0]`` = x_i.x_j, into a K of zeros. Zeros are not written again: each
    write lands on a page of its own, and most values even in the band are 0.0."""
    for a in prange(a0, a1):
        i = order[a]
        K[i, i] = 1.0
        for b in range(a + 1, b1):
            value = _stored_gaussian(sqnorm[i], sqnorm[order[b]], dots[a - a0, b - a0], gamma)
            if value != 0.0:
                K[i, order[b]] = value
                K[order[b], i] = value


@njit(cache=True, nogil=True, parallel=True)
def _zero_rows(K):
    """K = 0 on every thread: K may be a used matrix (``gram_matrix``'s ``out``), and a fresh one
    pays its page faults here, spread over the threads."""
    for i in prange(K.shape[0]):
        K[i, :] = 0.0


def mapped_array(shape: tuple, dtype=np.float32) -> np.ndarray:
    """An uninitialised array, its pages mapped as they are first touched, huge pages not asked for.

    NumPy asks Linux for huge pages on every large array (madvise), and Linux then compacts
    memory to find them when it is fragmented: a stall at the first touch that a buffer mostly
    left unused (the seeders') need not pay. Reading random rows costs the same in either.
    """
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if size == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS),
                         dtype=dtype).reshape(shape)


def new_gram(n: int) -> np.ndarray:
    """An uninitialised n x n float32 array in huge pages where Linux offers them, every page
    mapped up front.

    The Gram matrix is written whole, so each page is mapped and zeroed at once (one fault per
    page inside the loops that first write it costs more), and a 2 MB page is zeroed at about
    twice the rate of 4 KB ones.
    """
    K = mapped_array((n, n))
    if K.size == 0:
        return K
    _madvise(K, "MADV_HUGEPAGE")   # refused where Linux has no huge pages: 4 KB ones then
    if not _madvise(K, "MADV_POPULATE_WRITE"):   # Linux before 5.14
        K.reshape(-1)[::PAGE_BYTES // K.itemsize] = 0.0   # one write per page maps it
    return K


# Linux's advice numbers (<sys/mman.h>); MADV_POPULATE_WRITE (Linux 5.14) is not in Python's mmap.
MADVISE_ADVICE = {"MADV_HUGEPAGE": 14, "MADV_POPULATE_WRITE": 23}
# The smallest page the operating system maps (huge pages are multiples of it).
PAGE_BYTES = mmap.PAGESIZE


def _madvise(array: np.ndarray, advice: str) -> bool:
    """Linux's madvise over ``array``'s memory; False where the system has no such call or
    refuses the advice. By ctypes, which lets other threads run while it maps pages."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc.madvise(array.ctypes.data, array.nbytes, MADVISE_ADVICE[advice]) == 0


def product_features(X) -> np.ndarray:
    """X without its features that are 0 in every row, for the matrix products of dot products.

    Such a feature adds an exact 0 to every dot product, in any order of summation, so the
    products are the same (exact ones bit for bit, float ones within the bound the certification
    allows for any order), at that share less work: 63 of MNIST's 780 pixels.
    """
    used = X.any(axis=0)
    # compress copies the kept columns of a row at once, where a fancy index copies value by value.
    return X if used.all() else X.compress(used, axis=1)


def gram_matrix(X, sqnorm, gamma, use_blas: bool, dots=None, out: np.ndarray | None = None,
                compact: tuple | None = None):
    """The full float32 kernel matrix in panels, each value computed once and mirrored.

    Binary data whose ``compact`` rows (``compact_rows``) are bit sets look every value up by
    distance. Otherwise a panel's dot products come from one matrix product: with ``use_blas``
    (see ``blas_dots_are_exact``) exact ones (in float32 where that is exact, see
    FLOAT32_EXACT_NORM), without it float64 ones, each value certified by ``_certified_values`` or
    computed again by ``row_dot``;
    ``dots`` (``dot_matrix``), when given, holds all of them already, for several gammas over
    the same data. Where the products come from BLAS and the norms spread beyond the kernel's
    reach (``norm_band``), only the band of pairs close enough in norm is computed, the rest
    stores 0.0 as the panels would. The values are the same every way.
    ``out``: an n x n float32 array to fill (every value is written, whatever it held), else a
    new one.
    """
    n = X.shape[0]
    if out is not None and (out.shape != (n, n) or out.dtype != np.float32
                            or not out.flags.c_contiguous):
        raise SolverInputError(f"the Gram matrix of {n} instances needs a C-contiguous "
                               f"({n}, {n}) float32 array, got {out.dtype} {out.shape}")
    K = new_gram(n) if out is None else out
    by_distance = compact is not None and compact.bits.size > 0
    beyond = np.flatnonzero(sqnorm > FLOAT32_EXACT_NORM)
    single = (use_blas and not by_distance and dots is None
              and beyond.size <= n * FLOAT32_GEMM_MAX_BEYOND)
    used = product_features(X) if dots is None and not by_distance else X
    gemm_rows = used.astype(np.float32) if single else used
    # Dense rows that are not exact for BLAS still take its products, certified value by value.
    certify = not use_blas and not by_distance and X.shape[1] > 0
    norms = np.sqrt(sqnorm)
    band = norm_band(sqnorm, gamma, X.shape[1]) if use_blas and not by_distance and dots is None else None
    if band is not None:
        order, tiles = band
        _zero_rows(K)
        for a0, a1, b1 in tiles:
            _gram_band_tile(K, sqnorm, gamma, order, a0, a1, b1,
                            blas_dots(gemm_rows[order[a0:a1]], gemm_rows[order[a0:b1]]))
    else:
        products = gemm_rows if dots is None and not by_distance and (use_blas or certify) else None
        _fill_panels(K, X, sqnorm, norms, gamma, products, None if by_distance else dots,
                     compact if by_distance else dense_rows(), certify and dots is None)
    if single and beyond.size:
        _gram_redo_rows(K, sqnorm, gamma, beyond, blas_dots(used[beyond], used))
    return K


@njit(cache=True, nogil=True, parallel=True)
def _row_dots(D, X):
    """D[i, j] = D[j, i] = row_dot(X, i, X, j): the dot products the Gram matrix would compute
    one at a time."""
    for i in prange(X.shape[0]):
        for j in range(i, X.shape[0]):
            D[i, j] = row_dot(X, i, X, j)
            D[j, i] = D[i, j]


def dot_matrix(X, use_blas: bool) -> np.ndarray:
    """Every dot product x_i.x_j in float64, as ``gram_matrix`` computes them (by BLAS where
    that is exact, else one at a time), so Gram matrices built from them are bit for bit
    its own."""
    D = np.empty((X.shape[0], X.shape[0]))
    if use_blas:
        # Never X times itself in one product: NumPy takes that to BLAS's syrk, which OpenBLAS 0.3.31
        # (NumPy 2.4's) kills the process in on two threads from 16,000 rows of 717 features.
        used = product_features(X)
        for i0 in range(0, used.shape[0], GRAM_PANEL_COLS):
            upper = blas_dots(used[i0:i0 + GRAM_PANEL_COLS], used[i0:])
            D[i0:i0 + GRAM_PANEL_COLS, i0:] = upper
            D[i0:, i0:i0 + GRAM_PANEL_COLS] = upper.T
        return D
    _row_dots(D, X)
    return D
