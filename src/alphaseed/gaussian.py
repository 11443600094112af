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

import mmap

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads, njit, prange, types
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic
from threadpoolctl import ThreadpoolController

from .errors import SolverInputError

# Rows of dot products computed by one matrix product; bounds its float64 block to ~128 MB.
DOT_BLOCK_BYTES = 128 << 20
# Rows of K(Xa, Xb) in float64 computed, then multiplied by the weights, at a time (prediction):
# a slab stays in the processor's cache for the product. Slabs of 128 MB went to memory and
# back, and paid the first touch of their pages at every call: full Adult's predictions took
# 1.56 s summed over 10 rounds so, 0.43 s in slabs of 8 MB (cache mode, 2 chains).
CROSS_SLAB_BYTES = 8 << 20
# Matrix products with fewer multiply-adds run BLAS on one thread (see blas_dots).
PARALLEL_BLAS_WORK = 1 << 27
_BLAS_THREADS = ThreadpoolController()
# Exact data beyond int16 (see SMALL_INT_MAX) with at most this share of non-zero features take
# sparse rows (see compact_rows). A sparse product costs 3-4 dense (vectorised float64)
# multiply-adds per non-zero: an indirect load, a trip count that varies by row. Measured
# break-even: 0.2 non-zeros at d = 123, 0.3 at 300 and 784.
SPARSE_DENSITY = 0.25
# Binary data of at most this many features take bit-set rows (see compact_rows): a distance
# is then d / 64 XOR-and-popcount steps with a fixed trip count, and K a table lookup. A whole
# kernel value took 1.4 ns on Adult (2 words) and 1.5 ns on Webdata (5 words; 8,000-row
# samples, one thread, an AMD EPYC), against 5.0 and 6.4 ns with a popcount of the shared bits
# and exp, and (another machine) 2.4 and 2.6 times that again with a CSR walk.
BITSET_MAX_FEATURES = 1024
# Other integer data within int16 (raw MNIST's pixels, Madelon's 0-999) take int16 rows, their
# dot products summed in int64: a quarter of float64's bytes to stream, and integer SIMD. A dot
# product of two 780-feature rows (MNIST-like, 19 % non-zero) took 30 ns so against 58 ns
# converting each product to float64; MNIST's CSR walk took 178 ns a kernel value.
SMALL_INT_MAX = 32767


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


@njit(cache=True, nogil=True)
def squared_norms(X):
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

    Integer values make every product and partial sum an integer; each is bounded by
    sum_f |x_f z_f| <= ||x|| ||z|| <= the largest squared norm, so below 2**53 all are exact.
    """
    largest = 0.0
    for A in arrays:
        if A.size and not np.array_equal(A, np.round(A)):
            return False
        largest = max(largest, float(np.max(squared_norms(A), initial=0.0)))
    return largest < 2.0**53


def compact_rows(X: np.ndarray, exact: bool, gamma: float) -> tuple:
    """X's rows in the form its kernel rows (for ``gamma``) are computed from:
    ``(indptr, indices, data, bits, by_distance, small)``.

    Binary data fill ``bits`` (row i's features as uint64 words) and ``by_distance``
    (``kernel_by_distance``), other integers within int16 fill ``small`` (X as int16), other
    sparse data the CSR arrays (sorted indices), the rest nothing (the dense loop); the members
    not used are empty, so every form has one array type and one compiled code. ``exact``
    (``blas_dots_are_exact``) makes every compact form give bit for bit the dense loop's values.
    """
    indptr, indices, data, bits, by_distance, small = dense_rows()
    if not (exact and X.size):
        return indptr, indices, data, bits, by_distance, small
    if takes_bit_sets(X):
        packed = np.zeros((X.shape[0], 8 * -(-X.shape[1] // 64)), dtype=np.uint8)
        packed[:, :-(-X.shape[1] // 8)] = np.packbits(X.astype(bool), axis=1, bitorder="little")
        # Two rows are at most as far apart as their ones add up to: the table stops there.
        reach = min(X.shape[1], 2 * int(np.count_nonzero(X, axis=1).max()))
        return (indptr, indices, data, packed.view(np.uint64),
                kernel_by_distance(reach, float(gamma)), small)
    if np.abs(X).max() <= SMALL_INT_MAX:
        return indptr, indices, data, bits, by_distance, X.astype(np.int16)
    if np.count_nonzero(X) <= SPARSE_DENSITY * X.size:
        csr = sp.csr_matrix(X)
        csr.sort_indices()
        indptr, indices = csr.indptr.astype(np.int64), csr.indices.astype(np.int64)
        data = np.ascontiguousarray(csr.data, dtype=np.float64)
    return indptr, indices, data, bits, by_distance, small


def takes_bit_sets(X: np.ndarray) -> bool:
    """Whether ``compact_rows`` holds X as bit sets: binary features, not too many of them."""
    return bool(X.size) and X.shape[1] <= BITSET_MAX_FEATURES and bool(np.all((X == 0.0) | (X == 1.0)))


def dense_rows() -> tuple:
    """The ``compact_rows`` of data whose rows are computed dense."""
    return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
            np.zeros((0, 0), np.uint64), np.zeros(0), np.zeros((0, 0), np.int16))


@njit(cache=True, nogil=True)
def kernel_by_distance(features, gamma):
    """K at each squared distance 0..features of two binary rows, by ``gaussian_from_dot``.

    Between binary rows ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z is the number of features in
    which they differ, an integer every one of those terms computes exactly; the kernel takes
    at most d + 1 values, and looking them up gives each one bit for bit, without its exp
    (which took most of a value's time on Adult and Webdata).
    """
    out = np.empty(features + 1)
    for k in range(features + 1):
        out[k] = gaussian_from_dot(float(k), 0.0, 0.0, gamma)
    return out


def blas_threads(work: float):
    """A context in which BLAS and LAPACK run threaded only when ``work`` (multiply-adds) is large.

    Small calls alternate with the compiled parallel loops, and BLAS's threads and Numba's
    OpenMP threads then spin against each other for the cores: Madelon, k = 100, SIR in auto
    mode took 1.7 s at 2 threads with BLAS threaded throughout and 0.64 s with it on one; MIR's
    least squares on 1,000 instances, k = 10, took 0.6-4.3 s threaded and 0.15 s on one.
    """
    threads = get_num_threads() if work >= PARALLEL_BLAS_WORK else 1
    return _BLAS_THREADS.limit(limits=threads, user_api="blas")


def blas_dots(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B.T by BLAS, threaded only when the product is large (``blas_threads``)."""
    with blas_threads(A.shape[0] * B.shape[0] * A.shape[1]):
        return A @ B.T


# Reassociation lets LLVM vectorise the dot product; it is the only relaxed step, and the same
# compiled function serves every caller, so every caller sees identical kernel values.
@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def row_dot(A, i, B, j):
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
    indptr, indices, data = rows[0], rows[1], rows[2]
    s = 0.0
    for t in range(indptr[j], indptr[j + 1]):
        s += data[t] * X[i, indices[t]]
    return s


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of a uint64, as one instruction (LLVM's ctpop)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


# A table of at most this many kernel values is looked up with AVX-512's two-register
# permutation, 16 values an instruction (vpermi2ps), where the processor has it: the compiler
# turns table[d[k]] into one scalar load a value (gathers are slow on AMD). Full Adult's rows
# (distances up to 28): 0.35 -> 0.07 ns a value for the lookup. So is a longer table whose
# float32 values are 0.0 from this many on (the kernel falls with the distance), distances
# clamped to its last entry: Webdata's 229 (gamma = 7.8125, 0.0 from distance 14 on).
PERMUTED_TABLE = 32


def _target_has_avx512() -> bool:
    """Whether Numba compiles for a processor with AVX-512 (its target's features, which
    NUMBA_CPU_NAME / NUMBA_CPU_FEATURES may set apart from the host's); False if this Numba
    does not say."""
    from numba.core.registry import cpu_target

    features = getattr(cpu_target.target_context.codegen(), "_tm_features", "")
    return "+avx512f" in features.split(",")


@intrinsic
def signed_lookup(typingctx, out, distance, table, y, sign):
    """out[k] = float32(sign * y[k]) * float32(table[distance[k]]) for k < len(out): int32
    distances, float64 y and sign, each +-1, and a nonincreasing float64 table which every
    distance indexes; 16 at a time by permutation where the target has AVX-512 and the table
    has at most PERMUTED_TABLE values or float32 0.0 from there on, the rest (all of them
    otherwise) one by one. The same float32 products either way, sign bits too."""
    vector = _target_has_avx512()

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, a)
                  for t, a in zip(signature.args[:4], args[:4])]
        out_, dist_, table_, y_ = (a.data for a in arrays)
        n = cgutils.unpack_tuple(builder, arrays[0].shape, 1)[0]
        entries = cgutils.unpack_tuple(builder, arrays[2].shape, 1)[0]
        f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
        sign32 = builder.fptrunc(args[4], f32)
        step = ir.Constant(i64, 16 if vector else 1)
        last = ir.Constant(i64, PERMUTED_TABLE - 1)
        short = builder.icmp_unsigned("<=", entries, ir.Constant(i64, PERMUTED_TABLE))
        zero_tail = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(1), 0))
        with builder.if_then(builder.not_(short)):
            value = builder.fptrunc(builder.load(builder.gep(table_, [last])), f32)
            builder.store(builder.fcmp_ordered("==", value, ir.Constant(f32, 0.0)), zero_tail)
        fits = builder.or_(short, builder.load(zero_tail))
        blocked = (builder.select(fits, builder.and_(n, ir.Constant(i64, -16)), ir.Constant(i64, 0))
                   if vector else ir.Constant(i64, 0))
        if vector:
            v16f, v16i = ir.VectorType(f32, 16), ir.VectorType(i32, 16)
            v16d = ir.VectorType(ir.DoubleType(), 16)
            permute = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(v16f, [v16f, v16i, v16f]),
                "llvm.x86.avx512.vpermi2var.ps.512")
            local = cgutils.alloca_once(builder, ir.ArrayType(f32, PERMUTED_TABLE))
            builder.store(ir.Constant(ir.ArrayType(f32, PERMUTED_TABLE), None), local)
            first = builder.gep(local, [ir.Constant(i32, 0), ir.Constant(i32, 0)])
            copied = builder.select(short, entries, ir.Constant(i64, PERMUTED_TABLE))
            with builder.if_then(fits), cgutils.for_range(builder, copied) as loop:
                value = builder.fptrunc(builder.load(builder.gep(table_, [loop.index])), f32)
                builder.store(value, builder.gep(first, [loop.index]))
            halves = builder.bitcast(first, v16f.as_pointer())
            low = builder.load(halves, align=4)
            high = builder.load(builder.gep(halves, [ir.Constant(i64, 1)]), align=4)
            signs = ir.Constant(v16f, None)
            for lane in range(16):
                signs = builder.insert_element(signs, sign32, ir.Constant(i32, lane))
            lasts = ir.Constant(v16i, [PERMUTED_TABLE - 1] * 16)
            with cgutils.for_range_slice(builder, ir.Constant(i64, 0), blocked, step) as (k, _):
                d = builder.load(builder.bitcast(builder.gep(dist_, [k]), v16i.as_pointer()),
                                 align=4)
                ys = builder.load(builder.bitcast(builder.gep(y_, [k]), v16d.as_pointer()),
                                  align=8)
                d = builder.select(builder.icmp_unsigned("<", d, lasts), d, lasts)
                values = builder.call(permute, [low, d, high])
                product = builder.fmul(builder.fmul(signs, builder.fptrunc(ys, v16f)), values)
                builder.store(product, builder.bitcast(builder.gep(out_, [k]), v16f.as_pointer()),
                              align=4)
        with cgutils.for_range_slice(builder, blocked, n, ir.Constant(i64, 1)) as (k, _):
            d = builder.sext(builder.load(builder.gep(dist_, [k])), i64)
            value = builder.fptrunc(builder.load(builder.gep(table_, [d])), f32)
            factor = builder.fptrunc(builder.fmul(args[4], builder.load(builder.gep(y_, [k]))), f32)
            builder.store(builder.fmul(factor, value), builder.gep(out_, [k]))
        return context.get_dummy_value()

    return types.void(out, distance, table, y, sign), codegen


@njit(cache=True, nogil=True)
def bit_distance(bits_a, i, bits_b, j):
    """||a_i - b_j||^2 of binary rows: the features one has and the other not."""
    differ = 0
    for w in range(bits_a.shape[1]):
        differ += popcount(bits_a[i, w] ^ bits_b[j, w])
    return differ


@njit(cache=True, nogil=True)
def gaussian_from_dot(sq_a, sq_b, dot, gamma):
    dist = sq_a + sq_b - 2.0 * dot
    if dist < 0.0:
        dist = 0.0
    return np.exp(-gamma * dist)


# Rows of K are computed a segment per call: a function called once per value was not inlined
# (its inlined dot product made it too large) and its arrays were reference-counted at every
# call, which cost twice the value itself (Adult rows took 3x the time of this loop).
@njit(cache=True, nogil=True)
def kernel_values(out, X, sqnorm, gamma, i, cols, rows):
    """out[b] = K(x_i, x_cols[b]), computed in float64 and stored in out's dtype; from the
    compact form ``rows`` (``compact_rows``) when it holds one: binary rows look the value up
    by their distance, int16 rows sum their dot products in int64, sparse ones take them over
    the non-zeros."""
    bitset = rows[3].shape[0] > 0
    small = rows[5].shape[0] > 0
    sparse = rows[0].shape[0] > 0
    if bitset:
        by_distance = rows[4]
        for b in range(cols.shape[0]):
            out[b] = by_distance[bit_distance(rows[3], i, rows[3], cols[b])]
        return
    for b in range(cols.shape[0]):
        j = cols[b]
        if i == j:
            value = 1.0
        else:
            if small:
                dot = small_row_dot(rows[5], i, j)
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


# Columns of a Gram tile: a stripe of its rows against this many columns stays in cache while
# their mirror image below the diagonal is written.
GRAM_TILE_COLS = 512
# Rows of a tile computed, then mirrored, together: a 64-byte line of float32 in every mirrored
# row. Written one value at a time down a column, the mirror took 3.5 of the 8.0 s of a 20,000
# MNIST-sample Gram matrix (each value a new cache line, 80 KB from the last).
GRAM_STRIPE_ROWS = 16
# Above this gamma * ||x - z||^2, exp's value is below half float32's smallest subnormal
# (2**-150, e**-103.97) and its float32 is 0.0 whatever the double's last bits: the Gram matrix
# stores 0.0 without calling exp (on raw MNIST at gamma = 0.125 nearly every value).
FLOAT32_ZERO_EXPONENT = 105.0


@njit(cache=True, nogil=True)
def _stored_gaussian(sq_a, sq_b, dot, gamma):
    """``gaussian_from_dot`` as float32 stores it."""
    dist = sq_a + sq_b - 2.0 * dot
    if gamma * dist > FLOAT32_ZERO_EXPONENT:
        return np.float32(0.0)
    return np.float32(gaussian_from_dot(sq_a, sq_b, dot, gamma))


@njit(cache=True, nogil=True, parallel=True)
def _gram_rows(K, X, sqnorm, gamma, i0, i1, dots, have_dots, compact, every):
    """K[i0:i1, j] for j >= i, mirrored below the diagonal; ``dots[a, j - i0]`` holds
    x_{i0+a}.x_j when ``have_dots``, else each value is computed here (from ``compact``)."""
    n = X.shape[0]
    for t in prange((n - i0 + GRAM_TILE_COLS - 1) // GRAM_TILE_COLS):
        j0 = i0 + t * GRAM_TILE_COLS
        j1 = min(n, j0 + GRAM_TILE_COLS)
        for s0 in range(i0, min(i1, j1), GRAM_STRIPE_ROWS):
            s1 = min(i1, j1, s0 + GRAM_STRIPE_ROWS)
            for i in range(s0, s1):
                lo = max(i, j0)
                if not have_dots:
                    kernel_values(K[i, lo:j1], X, sqnorm, gamma, i, every[lo:j1], compact)
                    continue
                for j in range(lo, j1):
                    K[i, j] = 1.0 if i == j else _stored_gaussian(
                        sqnorm[i], sqnorm[j], dots[i - i0, j - i0], gamma)
            for j in range(max(s0 + 1, j0), j1):
                for i in range(s0, min(s1, j)):
                    K[j, i] = K[i, j]


# float32 holds every integer up to 2**24: where two rows' squared norms stay within it, every
# product and partial sum of their dot product does too (bounded as in blas_dots_are_exact), so
# a float32 GEMM gives the same doubles at half a float64 one's time and bytes (a 20,000 MNIST
# sample's blocks: 1.4 against 2.9 s). The values of rows beyond it (3 of MNIST's 60,000) are
# then computed again from float64 dots; with more than this share of rows beyond (Madelon:
# all), the whole matrix takes float64 GEMMs.
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
# 0.0, found without a dot product. Sorted by norm, the rows a row can reach form a band; on a
# 20,000 MNIST sample at gamma = 0.125, 3.7 % of the matrix (norms 931 to 4,110, reach 29).
# The band is computed where it is at most this share of the triangle: its non-zero values land
# in rows and columns scattered across the matrix, where the blocks above write whole lines.
# Measured on that sample (2 threads), band against blocks: at a share of 0.45 and nearly all
# values 0.0 (gamma = 1e-3), 1.14 against 1.94 s; at 0.94, 2.04 against 2.02 s; over the whole
# triangle with every value non-zero (gamma = 1e-6), 4.95 against 2.67 s. Half of that is the
# break-even in the worst case.
GRAM_BAND_MAX_SHARE = 0.5
# Norm-sorted rows of a band tile: one GEMM against the tile's reach.
GRAM_BAND_TILE_ROWS = 512
# Slack on the reach for the rounding of square roots and their difference, far below the
# margin FLOAT32_ZERO_EXPONENT keeps above exp's last non-zero float32.
GRAM_BAND_SLACK = 1e-6


def norm_band(sqnorm, gamma):
    """(order, tiles): rows by increasing norm, and tiles (a0, a1, b1) whose sorted rows a0..a1
    against sorted columns a0..b1 cover every pair that may store a non-zero value; None where
    they exceed GRAM_BAND_MAX_SHARE of the triangle."""
    n = sqnorm.shape[0]
    order = np.argsort(sqnorm, kind="stable")
    norms = np.sqrt(sqnorm[order])
    width = np.sqrt(FLOAT32_ZERO_EXPONENT / gamma) * (1.0 + GRAM_BAND_SLACK)
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
    """K = 0 on every thread: ``out`` may be a used matrix, and a fresh one pays its page faults."""
    for i in prange(K.shape[0]):
        K[i, :] = 0.0


def new_gram(n: int) -> np.ndarray:
    """An uninitialised n x n float32 array in pages the operating system maps as it prefers.

    NumPy asks Linux for huge pages on every large array (madvise). Here, a virtual machine,
    faulting in a 20,000 MNIST sample's 1.6 GB so took 0.39-2.9 s (five fresh processes: 2.93,
    0.40, 2.68, 0.39, 1.96 s), in 4 KB pages 0.47-0.53 s (five: 0.53, 0.53, 0.48, 0.47, 0.48 s),
    and reading 20,000 random rows took 0.08 s either way.
    """
    if n == 0:
        return np.empty((0, 0), dtype=np.float32)
    return np.frombuffer(mmap.mmap(-1, 4 * n * n), dtype=np.float32).reshape(n, n)


def gram_matrix(X, sqnorm, gamma, use_blas: bool, dots=None, out: np.ndarray | None = None,
                compact: tuple | None = None):
    """The full float32 kernel matrix in row blocks, each value computed once and mirrored.

    Binary data whose ``compact`` rows (``compact_rows``) are bit sets look every value up by
    distance. Otherwise, with ``use_blas`` (see ``blas_dots_are_exact``) a block's dot products
    come from one matrix product (in float32 where that is exact, see FLOAT32_EXACT_NORM);
    ``dots`` (``dot_matrix``), when given, holds all of them already, for several gammas over
    the same data. Where the products come from BLAS and the norms spread beyond the kernel's
    reach (``norm_band``), only the band of pairs close enough in norm is computed, the rest
    stores 0.0 as the blocks would. The values are the same every way.
    ``out``: an n x n float32 array to fill (every value is written, whatever it held), else a
    new one.
    """
    n = X.shape[0]
    if out is not None and (out.shape != (n, n) or out.dtype != np.float32
                            or not out.flags.c_contiguous):
        raise SolverInputError(f"the Gram matrix of {n} instances needs a C-contiguous "
                               f"({n}, {n}) float32 array, got {out.dtype} {out.shape}")
    K = new_gram(n) if out is None else out
    block = max(1, min(n, DOT_BLOCK_BYTES // (8 * max(n, 1))))
    no_dots = np.empty((0, 0))
    by_distance = compact is not None and compact[3].size > 0
    rows = compact if by_distance else dense_rows()
    every = np.arange(n)
    beyond = np.flatnonzero(sqnorm > FLOAT32_EXACT_NORM)
    single = (use_blas and not by_distance and dots is None
              and beyond.size <= n * FLOAT32_GEMM_MAX_BEYOND)
    gemm_rows = X.astype(np.float32) if single else X
    band = norm_band(sqnorm, gamma) if use_blas and not by_distance and dots is None else None
    if band is not None:
        order, tiles = band
        _zero_rows(K)
        for a0, a1, b1 in tiles:
            _gram_band_tile(K, sqnorm, gamma, order, a0, a1, b1,
                            blas_dots(gemm_rows[order[a0:a1]], gemm_rows[order[a0:b1]]))
    else:
        for i0 in range(0, n, block):
            i1 = min(n, i0 + block)
            if by_distance:
                block_dots = no_dots
            elif dots is not None:
                block_dots = np.ascontiguousarray(dots[i0:i1, i0:])
            else:
                block_dots = blas_dots(gemm_rows[i0:i1], gemm_rows[i0:]) if use_blas else no_dots
            _gram_rows(K, X, sqnorm, gamma, i0, i1, block_dots, block_dots.size > 0, rows, every)
    if single and beyond.size:
        _gram_redo_rows(K, sqnorm, gamma, beyond, blas_dots(X[beyond], X))
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
    if use_blas:
        return blas_dots(X, X)
    D = np.empty((X.shape[0], X.shape[0]))
    _row_dots(D, X)
    return D


@njit(cache=True, nogil=True, parallel=True)
def _cross_rows(out, Xa, sqa, Xb, sqb, gamma, have_dots):
    """out[i, j] = K(Xa[i], Xb[j]) in float64; ``out`` holds the dot products when ``have_dots``."""
    for i in prange(Xa.shape[0]):
        for j in range(Xb.shape[0]):
            dot = out[i, j] if have_dots else row_dot(Xa, i, Xb, j)
            out[i, j] = gaussian_from_dot(sqa[i], sqb[j], dot, gamma)


@njit(cache=True, nogil=True, parallel=True)
def _cross_by_distance(out, bits_a, bits_b, by_distance):
    """out[i, j] = K(a_i, b_j) of binary rows, looked up by distance (``kernel_by_distance``)."""
    for i in prange(bits_a.shape[0]):
        for j in range(bits_b.shape[0]):
            out[i, j] = by_distance[bit_distance(bits_a, i, bits_b, j)]


def kernel_cross_times(Xa, sqa, Xb, sqb, gamma, weights, use_blas: bool,
                       binary: tuple | None = None) -> np.ndarray:
    """K(Xa, Xb) @ weights with K in float64, in row slabs of bounded memory (prediction).

    Prediction keeps double precision, as LibSVM's svm_predict does: with K close to 1
    everywhere, float32 values would collapse every decision value onto -rho. ``binary``
    (bit sets of Xa and Xb, and ``kernel_by_distance``) looks the values up instead: the same
    doubles, so the same sums.
    """
    out = np.zeros((Xa.shape[0],) + weights.shape[1:])
    slab = max(1, CROSS_SLAB_BYTES // (8 * max(Xb.shape[0], 1)))
    # One slab's memory serves every slab that is not a BLAS product: a fresh one each time paid
    # the first touch of its pages again (up to 128 MB a slab).
    buffer = None if use_blas and binary is None else np.empty((min(slab, Xa.shape[0]), Xb.shape[0]))
    for start in range(0, Xa.shape[0], slab):
        rows = slice(start, start + slab)
        if binary is not None:
            bits_a, bits_b, by_distance = binary
            K = buffer[:bits_a[rows].shape[0]]
            _cross_by_distance(K, bits_a[rows], bits_b, by_distance)
        else:
            K = blas_dots(Xa[rows], Xb) if use_blas else buffer[:Xa[rows].shape[0]]
            _cross_rows(K, Xa[rows], sqa[rows], Xb, sqb, gamma, use_blas)
        # On one thread: a slab's product is small (below PARALLEL_BLAS_WORK), and BLAS's threads
        # spun against the solver's (full Adult, 2 threads, 1 chain: prediction 4.6 s against
        # 0.39 s at 1 thread); it then sums each row the same way at any thread count.
        with blas_threads(K.size):
            out[rows] = K @ weights
    return out


# Rows gathered_times sums at once: each sum waits on its last addition (and summed into out,
# on its last store), so four independent sums keep the processor busy where one left it
# waiting. A round's prediction on a 20,000 MNIST sample (2,000 x 18,000 values from the Gram
# matrix): 108 -> 23 ms.
GATHER_ROWS = 4


@njit(cache=True, nogil=True, parallel=True)
def gathered_times(K, rows, cols, weights):
    """K[rows][:, cols] @ weights accumulated in float64, each row summed in column order.

    One summation order for every kernel mode (the Gram matrix, or a block read from a cache),
    so carried gradients and seeds are identical across modes and thread counts.
    """
    n = rows.shape[0]
    out = np.zeros((n, weights.shape[1]))
    for g in prange((n + GATHER_ROWS - 1) // GATHER_ROWS):
        # A last group short of rows repeats its last one, whose sums are then written twice.
        first = g * GATHER_ROWS
        r0 = K[rows[first]]
        r1 = K[rows[min(first + 1, n - 1)]]
        r2 = K[rows[min(first + 2, n - 1)]]
        r3 = K[rows[min(first + 3, n - 1)]]
        for m in range(weights.shape[1]):
            s0 = s1 = s2 = s3 = 0.0
            for b in range(cols.shape[0]):
                c = cols[b]
                w = weights[b, m]
                s0 += np.float64(r0[c]) * w
                s1 += np.float64(r1[c]) * w
                s2 += np.float64(r2[c]) * w
                s3 += np.float64(r3[c]) * w
            out[first, m] = s0
            out[min(first + 1, n - 1), m] = s1
            out[min(first + 2, n - 1), m] = s2
            out[min(first + 3, n - 1), m] = s3
    return out
