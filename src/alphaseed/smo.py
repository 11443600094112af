"""SMO for the C-SVC dual with the Gaussian kernel, the algorithm of LibSVM 3.x's ``Solver``.

Same working-set selection (second order, Fan, Chen and Lin 2005; TAU for non-positive
curvature; ties go to the later index, as LibSVM's ``>=`` and ``<=`` do), same shrinking
(every min(l, 1000) iterations, one unshrink with gradient reconstruction when the gap first
falls below 10 eps), same stopping rule, rho and objective, and the same iteration count, so
iterations and accuracies can be compared with LibSVM's one for one.

The kernel row cache is LibSVM's too (``kernel_cache``): rows as long as last requested,
least recently used evicted first, the budget counted in values, so a 100 MB cache holds the
rows LibSVM's holds.

A warm start (``alpha0``) builds the initial gradient from the nonzero alphas, as LibSVM's
``Solve`` does, or carries it over from a previous solution (``carry_gradient``); the seeders
of ``alphaseed.seeding`` produce such starts. Every run counts its kernel work
(``KernelCounts``).

Every compiled function here, in ``kernel_cache`` and in ``gaussian`` releases the GIL (``nogil``), so
that ``cross_validate``'s chains of rounds can run their solvers on several cores at once.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections import namedtuple
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import get_num_threads, njit, prange
from numba.typed import List

from .errors import SolverInputError
from .kernel import KernelMatrix, blas_dots_are_exact, kernel_cross_times, squared_norms
from .kernel_cache import (
    COUNTS, EVICTIONS, GRAM, HITS, REQUESTS, ROWS_COMPUTED, ROWS_EXTENDED, VALUES_COMPUTED,
    cache_apart, cache_swap_columns, cache_swap_keys, cache_together, cached_q, get_q, new_cache,
    outside_row, solver_source, source_apart, source_swap, source_together,
)

TAU = 1e-12
LOWER, UPPER, FREE = 0, 1, 2
INF = np.inf
# What smo_loop counts beyond its cache's counts: gradient reconstructions (the unshrink and
# the final check's) and the kernel values they computed, the full-length rows the G_bar
# updates requested and their computed values, and the active-set sizes summed over the
# iterations (their mean is the length of a typical step's loops).
RECONSTRUCTIONS, RECONSTRUCTION_VALUES, G_BAR_ROWS, G_BAR_VALUES, ACTIVE_SUM = range(5)
N_EVENTS = 5


@dataclass
class KernelCounts:
    """The kernel work of one training run, counted at the round's row cache (``kernel_cache``).

    In ``cache`` mode each computed value is one kernel evaluation; in ``shared`` and ``gram``
    modes it is a value copied from the shared rows or the Gram matrix (and ``gram`` mode's
    reconstruction reads the matrix directly, outside the cache). A miss either computes a row
    from scratch or extends the computed prefix of a cached row.
    """
    requests: int = 0               # rows of Q requested through the cache
    hits: int = 0                   # requests answered without computing a value
    rows_computed: int = 0          # misses that computed a row from scratch
    rows_extended: int = 0          # misses that extended a cached row
    values_computed: int = 0        # total length computed by the misses
    evictions: int = 0
    init_values: int = 0            # of values_computed: the gradient's initialisation
    reconstructions: int = 0        # gradient reconstructions (unshrinking)
    reconstruction_values: int = 0  # of values_computed: by the reconstructions
    g_bar_rows: int = 0             # full-length rows requested as an alpha crossed C
    g_bar_values: int = 0           # of values_computed: by those requests
    active_sum: int = 0             # active-set size summed over the iterations
    carried: bool = False           # the gradient was carried over (else LibSVM's initialisation)
    carry_values_outside: int = 0   # kernel values the carry computed outside the cache


@dataclass
class SolveResult:
    alpha: np.ndarray
    gradient: np.ndarray      # G = Q alpha - 1, aligned with the training index
    gradient_bar: np.ndarray  # LibSVM's G_bar = C * sum of Q[:, j] over alpha_j = C
    rho: float
    objective: float
    iterations: int
    iteration_cap_hit: bool
    seconds_gradient_init: float
    seconds_train: float
    n_sv: int
    n_bounded_sv: int
    kernel: KernelCounts = field(default_factory=KernelCounts)


# ---------------------------------------------------------------------------------------
# The solver proper. State arrays are indexed by position; positions are permuted by
# shrinking (active instances first), ``perm`` maps a position back to the caller's order.
# ---------------------------------------------------------------------------------------

# Where the solver's rows of Q come from: the kernel's data, the solver's position order
# (``gidx``, ``y``: permuted by shrinking) and its row cache with the cache's row source.
Rows = namedtuple("Rows", ["X", "sqnorm", "gamma", "gidx", "y", "cache", "source"])
# Rows as the compiled solver holds them: what only a cache miss reads (X, its squared norms
# and the row source) sits behind one reference, ``fill``, a typed List of that one tuple.
# Numba counts a reference to each array of a tuple at every call the tuple is passed
# through, the source alone holds a dozen, and the solver's steps pass their rows on about
# five times an iteration: on Heart, reference counting took 40% of the time of a run.
# The steps of an iteration (``inline="always"``) are inlined into ``smo_loop`` for the same
# reason: each call still counted references to the arrays it passed (an atomic add and
# subtract each), half the time of an iteration over a few hundred active instances (Adult
# 2,000-sample fold at C = 2**15, gamma = 2**-9: 2.15 -> 1.64 us an iteration).
SolverRows = namedtuple("SolverRows", ["gamma", "gidx", "y", "cache", "fill"])
# The solver's state, indexed by position: alpha, the gradient G, LibSVM's G_bar, each
# alpha's bound status, ``perm`` and the event counts (RECONSTRUCTIONS, ...), and the number
# of chunks the loops over a large active set run in (a thread each), and ``keys``, two rows
# of scratch for the selection's keys (``_keyed_best``), which every step writes. Other scratch
# arrays (the chunks' results, shrinking's swaps) are allocated where they are used, next to
# loops that cost far more: every array in the state costs reference counts at each step it
# goes through.
State = namedtuple("State", ["alpha", "G", "G_bar", "status", "perm", "events", "threads", "keys"])


def kernel_rows(kernel: KernelMatrix, gidx, y, cache) -> Rows:
    """The rows of Q over the instances ``gidx`` (global indices) with labels ``y``."""
    gidx = np.ascontiguousarray(gidx, np.int64)
    return Rows(kernel.X, kernel.sqnorm, kernel.gamma, gidx, np.ascontiguousarray(y, np.float64),
                cache, solver_source(kernel.source, gidx))


# The compiled functions called from Python take their Rows as ``rows_apart`` gives them,
# ``f(*rows_apart(rows), ...)``: Rows holds typed Lists (the row caches), and Numba would type
# it in Python on every call (0.3-0.4 ms, against 5 ms for a whole Heart training run).
def rows_apart(rows: Rows) -> tuple:
    """(``rows`` without its Lists, its cache's List, its source's shared cache's List)."""
    cache_rows, cache_rest = cache_apart(rows.cache)
    shared_rows, source_rest = source_apart(rows.source)
    return rows._replace(cache=cache_rest, source=source_rest), cache_rows, shared_rows


@njit(cache=True, nogil=True)
def _rows_together(rest, cache_rows, shared_rows):
    """The SolverRows of ``rows_apart``'s parts."""
    fill = List()
    fill.append((rest.X, rest.sqnorm, source_together(shared_rows, rest.source)))
    return SolverRows(rest.gamma, rest.gidx, rest.y, cache_together(cache_rows, rest.cache), fill)


def new_state(alpha, G, G_bar, C: float, threads: int) -> State:
    l = alpha.shape[0]
    status = np.where(alpha >= C, UPPER, np.where(alpha <= 0.0, LOWER, FREE)).astype(np.int8)
    return State(alpha, G, G_bar, status, np.arange(l), np.zeros(N_EVENTS, dtype=np.int64),
                 int(threads), np.empty((2, l)))


@njit(cache=True, nogil=True, inline="always")
def _row(rows, p, length):
    """Row p of Q through the solver's cache, its first ``length`` values computed."""
    hit, q = cached_q(p, length, rows.cache)
    if not hit:
        X, sqnorm, source = rows.fill[0]
        q = get_q(p, length, X, sqnorm, rows.gamma, rows.gidx, rows.y, rows.cache, source)
    return q


@njit(cache=True, nogil=True)
def _source(rows):
    return rows.fill[0][2]


@njit(cache=True, nogil=True)
def _status(a, C):
    if a >= C:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@njit(cache=True, nogil=True)
def init_gradient(rows_rest, cache_rows, shared_rows, alpha, C):
    """LibSVM's (G, G_bar) at ``alpha``: a full row of Q per nonzero alpha, through the cache."""
    rows = _rows_together(rows_rest, cache_rows, shared_rows)
    l = alpha.shape[0]
    G = np.full(l, -1.0)
    G_bar = np.zeros(l)
    for i in range(l):
        if alpha[i] > 0.0:
            q = _row(rows, i, l)
            a = alpha[i]
            for j in range(l):
                G[j] += a * q[j]
            if alpha[i] >= C:
                for j in range(l):
                    G_bar[j] += C * q[j]
    return G, G_bar


@njit(cache=True, nogil=True)
def _swap(a, i, j):
    tmp = a[i]
    a[i] = a[j]
    a[j] = tmp


@njit(cache=True, nogil=True)
def _swap_index(state, rows, i, j):
    """LibSVM's swap_index, except for the cached rows' columns (see ``_shrink``)."""
    cache_swap_keys(rows.cache, i, j)
    source_swap(_source(rows), i, j)
    _swap(rows.gidx, i, j)
    _swap(rows.y, i, j)
    _swap(state.alpha, i, j)
    _swap(state.status, i, j)
    _swap(state.G, i, j)
    _swap(state.G_bar, i, j)
    _swap(state.perm, i, j)


@njit(cache=True, nogil=True)
def _in_up(y, status):
    """Whether alpha may move in the direction that raises y * alpha (LibSVM's I_up)."""
    return status != UPPER if y > 0 else status != LOWER


@njit(cache=True, nogil=True)
def _in_low(y, status):
    """Whether alpha may move in the direction that lowers y * alpha (LibSVM's I_low)."""
    return status != LOWER if y > 0 else status != UPPER


# The loops over the active set run in contiguous chunks, one per thread, when the set is
# large; each chunk keeps LibSVM's tie rule (the later index wins) and chunks are combined in
# index order with the same rule, so the chosen pair never depends on the thread count.
PARALLEL_ACTIVE = 8192


@njit(cache=True, nogil=True, inline="always")
def _chunk_count(state, active):
    """One chunk per thread on a large active set."""
    return state.threads if active >= PARALLEL_ACTIVE else 1


@njit(cache=True, nogil=True)
def _chunk_results(chunks):
    """Each chunk's best value and its index."""
    return np.empty(chunks), np.empty(chunks, dtype=np.int64)


@njit(cache=True, nogil=True)
def _chunk_bounds(active, chunks, c):
    return c * active // chunks, (c + 1) * active // chunks


# The two loops of every step find the last index of a largest value under a condition,
# which the compiler cannot vectorise as one loop. Each is split in two loops it does
# vectorise: one writes every position's key (the value where the condition holds, else an
# infinity that never wins; -0.0 turned into 0.0 where the two could tie for the index, as
# they compare equal), one finds the best key, comparing the keys' bits as integers; the
# last position holding it is then looked for in the one block of KEY_BLOCK positions whose
# best it was. The values, comparisons and ties are LibSVM's: same pairs, same iterations.
# 3 to 4 times faster than one loop with branches on full Webdata's 44,500 active instances
# (one thread). The look back is a scalar loop over half a block on average, so blocks are
# short: at 2,048 it was a sixth of an iteration over a few hundred active instances (the
# corners of a grid search: Adult 2,000-sample fold at C = 2**15, gamma = 2**-9, 2.45 -> 2.15 us
# an iteration at 256), and on large active sets the extra blocks cost little.
KEY_BLOCK = 256
_SIGN_BITS = np.int64(0x7FFFFFFFFFFFFFFF)
_LOWEST_KEY = np.int64(-0x8000000000000000)
LARGEST, SMALLEST = np.int64(0), np.int64(-1)


@njit(cache=True, nogil=True)
def _ordered(bits, which):
    """A float64's bits as an int64 that orders as the float does (NaN aside); ``which`` =
    SMALLEST reverses the order (``~`` maps a < b to ~a > ~b, with no overflow)."""
    return (bits if bits >= 0 else bits ^ _SIGN_BITS) ^ which


@njit(cache=True, nogil=True)
def _best_bits(bits, which):
    best = _LOWEST_KEY
    for k in range(bits.shape[0]):
        key = _ordered(bits[k], which)
        best = key if key > best else best
    return best


@njit(cache=True, nogil=True, inline="always")
def _keyed_best(keys, which):
    """The last index of the largest (``which`` = LARGEST) or smallest value in ``keys``, a
    float64 array without NaN, ranking 0.0 above -0.0; -1 if it is empty."""
    bits = keys.view(np.int64)
    best = _LOWEST_KEY
    best_block = -1
    for start in range(0, bits.shape[0], KEY_BLOCK):
        block_best = _best_bits(bits[start:start + KEY_BLOCK], which)
        if block_best >= best:
            best = block_best
            best_block = start
    if best_block == -1:
        return -1
    for k in range(min(bits.shape[0], best_block + KEY_BLOCK) - 1, best_block - 1, -1):
        if _ordered(bits[k], which) == best:
            return k
    return -1


@njit(cache=True, nogil=True)
def _up_key(y, status, g):
    """-y G where alpha may move up (I_up), else -INF; -0.0 made 0.0, which it ties with."""
    return -y * g + 0.0 if _in_up(y, status) else -INF


@njit(cache=True, nogil=True, inline="always")
def _best_up(lo, y, G, up_keys):
    """(max of -y_t G_t over I_up, its last index) from the keys of [lo, lo + len(up_keys))."""
    t = _keyed_best(up_keys, LARGEST)
    if t == -1 or up_keys[t] == -INF:
        return -INF, -1
    t += lo
    return -y[t] * G[t], t


# LibSVM writes each loop below twice, once per label; multiplying by y = +-1 is exact, so
# one loop over y * G gives the same values, comparisons and ties.
@njit(cache=True, nogil=True, inline="always")
def _max_up_over(lo, hi, y, status, G, keys):
    """max of -y_t G_t over I_up in [lo, hi), and its last index (-1 if none), by keys."""
    up_keys = keys[0, lo:hi]
    values, signs, statuses = G[lo:hi], y[lo:hi], status[lo:hi]
    for t in range(up_keys.shape[0]):
        up_keys[t] = _up_key(signs[t], statuses[t], values[t])
    return _best_up(lo, y, G, up_keys)


@njit(cache=True, nogil=True, inline="always")
def _update_and_max_up_over(lo, hi, G, qi, qj, deltas, y, status, keys):
    """The gradient update of one SMO step over [lo, hi), with the next step's _max_up_over."""
    dai, daj = deltas
    up_keys = keys[0, lo:hi]
    values, signs, statuses, qis, qjs = G[lo:hi], y[lo:hi], status[lo:hi], qi[lo:hi], qj[lo:hi]
    for t in range(up_keys.shape[0]):
        g = values[t] + (qis[t] * dai + qjs[t] * daj)
        values[t] = g
        up_keys[t] = _up_key(signs[t], statuses[t], g)
    return _best_up(lo, y, G, up_keys)


@njit(cache=True, nogil=True, inline="always")
def _low_keys(gmax, qi, y_i, y, status, G, keys, low_keys):
    for j in range(G.shape[0]):
        low = _in_low(y[j], status[j])
        yg = y[j] * G[j]
        grad_diff = gmax + yg
        quad = 2.0 - 2.0 * y_i * y[j] * qi[j]
        quad = quad if quad > 0.0 else TAU
        # No +0.0 here: an obj_diff is never above -0.0, and gmax2 needs only the value.
        keys[j] = -(grad_diff * grad_diff) / quad if low and grad_diff > 0.0 else INF
        low_keys[j] = yg if low else -INF


@njit(cache=True, nogil=True, inline="always")
def _min_low_over(lo, hi, gmax, qi, i, y, status, G, keys):
    """Second-order choice of j over I_low in [lo, hi) given i: (obj_diff_min, its last index,
    gmax2), by keys (see KEY_BLOCK)."""
    obj_diffs = keys[0, lo:hi]
    low_yg = keys[1, lo:hi]
    _low_keys(gmax, qi[lo:hi], y[i], y[lo:hi], status[lo:hi], G[lo:hi], obj_diffs, low_yg)
    j = _keyed_best(obj_diffs, SMALLEST)
    largest = _keyed_best(low_yg, LARGEST)
    gmax2 = -INF if largest == -1 else low_yg[largest]
    if j == -1 or obj_diffs[j] == INF:
        return INF, -1, gmax2
    return obj_diffs[j], j + lo, gmax2


# In the parallel functions each array is taken from the state on a line of its own: with
# several unpacked in one statement, Numba 0.68's parfor pass let the chunks' writes be lost.
@njit(cache=True, nogil=True, parallel=True)
def _chunked_max_up(state, y, active, chunks, values, indices):
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c] = _max_up_over(lo, hi, y, status, G, keys)


@njit(cache=True, nogil=True, parallel=True)
def _chunked_update_and_max_up(state, y, active, chunks, qi, qj, deltas, values, indices):
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c] = _update_and_max_up_over(lo, hi, G, qi, qj, deltas, y, status,
                                                        keys)


@njit(cache=True, nogil=True, parallel=True)
def _chunked_min_low(state, y, active, chunks, gmax, qi, i, values, indices, maxima):
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c], maxima[c] = _min_low_over(lo, hi, gmax, qi, i, y, status, G,
                                                         keys)


@njit(cache=True, nogil=True)
def _last_best(values, indices, chunks, sign):
    """The chunks' winner under LibSVM's rule: largest (sign 1) or smallest (sign -1) value,
    the later index on ties."""
    best = -INF
    best_idx = -1
    for c in range(chunks):
        if indices[c] != -1 and sign * values[c] >= best:
            best = sign * values[c]
            best_idx = indices[c]
    return sign * best, best_idx


@njit(cache=True, nogil=True, inline="always")
def _max_up(state, y, active):
    """max of -y_t G_t over the active I_up, and its last index (-1 if none)."""
    chunks = _chunk_count(state, active)
    if chunks == 1:
        return _max_up_over(0, active, y, state.status, state.G, state.keys)
    values, indices = _chunk_results(chunks)
    _chunked_max_up(state, y, active, chunks, values, indices)
    return _last_best(values, indices, chunks, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _update_gradient(state, y, active, qi, qj, deltas):
    """G += Q_i dalpha_i + Q_j dalpha_j over the active set; returns the new _max_up."""
    chunks = _chunk_count(state, active)
    if chunks == 1:
        return _update_and_max_up_over(0, active, state.G, qi, qj, deltas, y, state.status,
                                       state.keys)
    values, indices = _chunk_results(chunks)
    _chunked_update_and_max_up(state, y, active, chunks, qi, qj, deltas, values, indices)
    return _last_best(values, indices, chunks, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _select_working_set(state, rows, active, eps, gmax, gmax_idx):
    """(i, j) of LibSVM's second-order selection given i's _max_up, or (-1, -1) when the gap
    is below eps."""
    i = gmax_idx
    if i == -1:
        return -1, -1
    qi = _row(rows, i, active)
    chunks = _chunk_count(state, active)
    if chunks == 1:
        obj_diff_min, gmin_idx, gmax2 = _min_low_over(0, active, gmax, qi, i, rows.y,
                                                      state.status, state.G, state.keys)
    else:
        values, indices = _chunk_results(chunks)
        maxima = np.empty(chunks)
        _chunked_min_low(state, rows.y, active, chunks, gmax, qi, i, values, indices, maxima)
        obj_diff_min, gmin_idx = _last_best(values, indices, chunks, -1.0)
        gmax2 = maxima.max()
    if gmax + gmax2 < eps or gmin_idx == -1:
        return -1, -1
    return gmax_idx, gmin_idx


@njit(cache=True, nogil=True)
def _pair_of_different_labels(ai, aj, gi, gj, qij, C):
    """LibSVM's new (alpha_i, alpha_j) when y_i != y_j, clipped in its order."""
    quad = 2.0 + 2.0 * qij
    if quad <= 0.0:
        quad = TAU
    delta = (-gi - gj) / quad
    diff = ai - aj
    ai += delta
    aj += delta
    # LibSVM's two clipping tests, in its order; with one C both branch on diff > 0.
    if diff > 0.0:
        if aj < 0.0:
            aj = 0.0
            ai = diff
        if ai > C:
            ai = C
            aj = C - diff
    else:
        if ai < 0.0:
            ai = 0.0
            aj = -diff
        if aj > C:
            aj = C
            ai = C + diff
    return ai, aj


@njit(cache=True, nogil=True)
def _pair_of_same_label(ai, aj, gi, gj, qij, C):
    """LibSVM's new (alpha_i, alpha_j) when y_i == y_j, clipped in its order."""
    quad = 2.0 - 2.0 * qij
    if quad <= 0.0:
        quad = TAU
    delta = (gi - gj) / quad
    total = ai + aj
    ai -= delta
    aj += delta
    if total > C:
        if ai > C:
            ai = C
            aj = total - C
        if aj > C:
            aj = C
            ai = total - C
    else:
        if aj < 0.0:
            aj = 0.0
            ai = total
        if ai < 0.0:
            ai = 0.0
            aj = total
    return ai, aj


@njit(cache=True, nogil=True, inline="always")
def _update_g_bar(state, rows, p, was_upper, C):
    """G_bar after alpha_p crossed C (upwards unless ``was_upper``): a full-length row of Q."""
    G_bar, events, counts = state.G_bar, state.events, rows.cache[COUNTS]
    l = G_bar.shape[0]
    computed = counts[VALUES_COMPUTED]
    q = _row(rows, p, l)
    events[G_BAR_ROWS] += 1
    events[G_BAR_VALUES] += counts[VALUES_COMPUTED] - computed
    sign = -C if was_upper else C
    for t in range(l):
        G_bar[t] += sign * q[t]


@njit(cache=True, nogil=True, inline="always")
def _update(state, rows, active, i, j, C):
    """LibSVM's update of the pair (i, j): alpha, status, G and G_bar. Returns the next
    _max_up, which the gradient update computes on the way."""
    alpha, status, G, y = state.alpha, state.status, state.G, rows.y
    qi = _row(rows, i, active)
    qj = _row(rows, j, active)
    old_ai = alpha[i]
    old_aj = alpha[j]
    if y[i] != y[j]:
        alpha[i], alpha[j] = _pair_of_different_labels(old_ai, old_aj, G[i], G[j], qi[j], C)
    else:
        alpha[i], alpha[j] = _pair_of_same_label(old_ai, old_aj, G[i], G[j], qi[j], C)
    ui = status[i] == UPPER
    uj = status[j] == UPPER
    status[i] = _status(alpha[i], C)
    status[j] = _status(alpha[j], C)
    up = _update_gradient(state, y, active, qi, qj, (alpha[i] - old_ai, alpha[j] - old_aj))
    if ui != (status[i] == UPPER):
        _update_g_bar(state, rows, i, ui, C)
    if uj != (status[j] == UPPER):
        _update_g_bar(state, rows, j, uj, C)
    return up


@njit(cache=True, nogil=True, parallel=True)
def _reconstruct_from_gram(state, rows, active, walk_inactive):
    """_reconstruct_gradient's sums read straight from the Gram matrix, in parallel.

    Going through the row cache would stretch every row it touches to full length and evict
    the rows the next iterations need. Each G[j] adds the same terms in the same order as the
    cached walk does, so the result is identical.
    """
    alpha = state.alpha
    status = state.status
    G = state.G
    gram = _source(rows)[1]
    gidx = rows.gidx
    y = rows.y
    chunks = state.threads
    l = alpha.shape[0]
    inactive = l - active
    for c in prange(chunks):
        lo, hi = _chunk_bounds(inactive, chunks, c)
        if walk_inactive:
            for i in range(active + lo, active + hi):
                row = gram[gidx[i]]
                for j in range(active):
                    if status[j] == FREE:
                        G[i] += alpha[j] * (np.float32(y[i] * y[j]) * row[gidx[j]])
        else:
            for i in range(active):
                if status[i] == FREE:
                    row = gram[gidx[i]]
                    a = alpha[i]
                    for j in range(active + lo, active + hi):
                        G[j] += a * (np.float32(y[i] * y[j]) * row[gidx[j]])


# Rows of inactive instances, taken four at a time: each G[i] is still summed over the free
# alphas in LibSVM's order, but four independent sums hide the latency of each addition (one
# sum at a time waited on the one before: the reconstructions were 38 % of full Adult's first
# round in cache mode). The rows are requested in LibSVM's order; a row evicted by the next
# request stays valid while it is held.
@njit(cache=True, nogil=True)
def _walk_inactive(state, rows, active):
    """G[i] += sum of alpha_j Q_ij over the free j, for each inactive i (LibSVM's walk)."""
    alpha, status, G = state.alpha, state.status, state.G
    l = alpha.shape[0]
    free = np.flatnonzero(status[:active] == FREE)
    free_alpha = alpha[free]
    for i in range(active, l, 4):
        count = min(4, l - i)
        q0 = _row(rows, i, active)
        q1 = _row(rows, i + 1, active) if count > 1 else q0
        q2 = _row(rows, i + 2, active) if count > 2 else q0
        q3 = _row(rows, i + 3, active) if count > 3 else q0
        s0 = G[i]
        s1 = G[i + 1] if count > 1 else 0.0
        s2 = G[i + 2] if count > 2 else 0.0
        s3 = G[i + 3] if count > 3 else 0.0
        for f in range(free.shape[0]):
            j = free[f]
            a = free_alpha[f]
            s0 += a * q0[j]
            s1 += a * q1[j]
            s2 += a * q2[j]
            s3 += a * q3[j]
        G[i] = s0
        if count > 1:
            G[i + 1] = s1
        if count > 2:
            G[i + 2] = s2
        if count > 3:
            G[i + 3] = s3


@njit(cache=True, nogil=True)
def _reconstruct_gradient(state, rows, active):
    """LibSVM's reconstruct_gradient: G of the inactive positions from G_bar and the free
    alphas."""
    alpha, status, G = state.alpha, state.status, state.G
    l = alpha.shape[0]
    if active == l:
        return
    for j in range(active, l):
        G[j] = state.G_bar[j] - 1.0
    n_free = 0
    for j in range(active):
        if status[j] == FREE:
            n_free += 1
    # Walk whichever side needs fewer kernel evaluations, as LibSVM does.
    walk_inactive = n_free * l > 2 * active * (l - active)
    if _source(rows)[0] == GRAM:
        _reconstruct_from_gram(state, rows, active, walk_inactive)
    elif walk_inactive:
        _walk_inactive(state, rows, active)
    else:
        inactive_G = G[active:l]
        for i in range(active):
            if status[i] == FREE:
                inactive_q = _row(rows, i, l)[active:l]
                a = alpha[i]
                for k in range(inactive_G.shape[0]):
                    inactive_G[k] += a * inactive_q[k]


@njit(cache=True, nogil=True)
def _unshrink(state, rows, active):
    """Reconstruct the inactive gradients, counting the event; returns the new active size."""
    l = state.alpha.shape[0]
    if active < l:
        counts = rows.cache[COUNTS]
        computed = counts[VALUES_COMPUTED]
        _reconstruct_gradient(state, rows, active)
        state.events[RECONSTRUCTIONS] += 1
        state.events[RECONSTRUCTION_VALUES] += counts[VALUES_COMPUTED] - computed
    return l


@njit(cache=True, nogil=True)
def _be_shrunk(i, gmax1, gmax2, y, status, G):
    if status[i] == UPPER:
        if y[i] > 0:
            return -G[i] > gmax1
        return -G[i] > gmax2
    if status[i] == LOWER:
        if y[i] > 0:
            return G[i] > gmax2
        return G[i] > gmax1
    return False


@njit(cache=True, nogil=True)
def _shrink(state, rows, active, gmax1, gmax2):
    """Move the instances _be_shrunk picks behind the active set: the new active size.

    The cached rows' columns are exchanged once at the end, for all swaps together.
    """
    y, status, G = rows.y, state.status, state.G
    swapped_lo = np.empty(active, dtype=np.int64)
    swapped_hi = np.empty(active, dtype=np.int64)
    swaps = 0
    t = 0
    while t < active:
        if _be_shrunk(t, gmax1, gmax2, y, status, G):
            active -= 1
            while active > t:
                if not _be_shrunk(active, gmax1, gmax2, y, status, G):
                    _swap_index(state, rows, t, active)
                    swapped_lo[swaps] = t
                    swapped_hi[swaps] = active
                    swaps += 1
                    break
                active -= 1
        t += 1
    cache_swap_columns(rows.cache, swapped_lo, swapped_hi, swaps)
    return active


@njit(cache=True, nogil=True)
def _do_shrinking(state, rows, active, eps, unshrunk):
    """LibSVM's do_shrinking: unshrink once when the gap first falls below 10 eps, then
    shrink. Returns (active size, unshrunk)."""
    y, status, G = rows.y, state.status, state.G
    gmax1 = -INF
    gmax2 = -INF
    for t in range(active):
        yg = y[t] * G[t]
        if _in_up(y[t], status[t]) and -yg >= gmax1:
            gmax1 = -yg
        if _in_low(y[t], status[t]) and yg >= gmax2:
            gmax2 = yg
    if not unshrunk and gmax1 + gmax2 <= eps * 10.0:
        unshrunk = True
        active = _unshrink(state, rows, active)
    return _shrink(state, rows, active, gmax1, gmax2), unshrunk


@njit(cache=True, nogil=True)
def _calculate_rho(active, y, status, G):
    n_free = 0
    ub = INF
    lb = -INF
    sum_free = 0.0
    for i in range(active):
        yg = y[i] * G[i]
        if status[i] == UPPER:
            if y[i] < 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
        elif status[i] == LOWER:
            if y[i] > 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
        else:
            n_free += 1
            sum_free += yg
    if n_free > 0:
        return sum_free / n_free
    return (ub + lb) / 2.0


@njit(cache=True, nogil=True)
def smo_loop(state, rows_rest, cache_rows, shared_rows, C, eps, shrinking, max_iter):
    """Run SMO from a state whose gradient is initialised; arrays are permuted in place.

    Returns (rho, objective, iterations, cap_hit); ``state.perm[p]`` is the caller's position
    of the instance now at position p.
    """
    rows = _rows_together(rows_rest, cache_rows, shared_rows)
    l = state.alpha.shape[0]
    # _max_up of the current state, once the previous step's gradient update has computed it.
    up_known = False
    gmax = -INF
    gmax_idx = -1
    active = l
    unshrunk = False
    it = 0
    counter = min(l, 1000) + 1
    while it < max_iter:
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            if shrinking:
                active, unshrunk = _do_shrinking(state, rows, active, eps, unshrunk)
                up_known = False
        if not up_known:
            gmax, gmax_idx = _max_up(state, rows.y, active)
        i, j = _select_working_set(state, rows, active, eps, gmax, gmax_idx)
        if i < 0:
            active = _unshrink(state, rows, active)
            gmax, gmax_idx = _max_up(state, rows.y, active)
            i, j = _select_working_set(state, rows, active, eps, gmax, gmax_idx)
            if i < 0:
                break
            counter = 1
        it += 1
        state.events[ACTIVE_SUM] += active
        gmax, gmax_idx = _update(state, rows, active, i, j, C)
        up_known = True

    cap_hit = it >= max_iter
    if cap_hit:
        active = _unshrink(state, rows, active)
    rho = _calculate_rho(active, rows.y, state.status, state.G)
    v = 0.0
    for t in range(l):
        v += state.alpha[t] * (state.G[t] - 1.0)
    return rho, v / 2.0, it, cap_hit


def check_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size and not ((y == 1.0) | (y == -1.0)).all():
        bad = np.unique(y[~np.isin(y, (-1.0, 1.0))])[:5]
        raise SolverInputError(f"labels must be -1 or +1; found {bad.tolist()}")
    return y


def check_C(C: float) -> float:
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise SolverInputError(f"C must be a positive finite number, got {C!r}")
    return C


def check_warm_start(alpha0, y_train: np.ndarray, C: float) -> np.ndarray:
    """Validate a feasible start and return it clipped exactly into [0, C]."""
    a = np.asarray(alpha0, dtype=np.float64).ravel()
    if a.shape != y_train.shape:
        raise SolverInputError(f"alpha0 has {a.size} values for {y_train.size} training instances")
    if not np.isfinite(a).all():
        raise SolverInputError("alpha0 contains NaN or infinity")
    tol = 1e-9 * C
    if a.min(initial=0.0) < -tol or a.max(initial=0.0) > C + tol:
        raise SolverInputError(
            f"alpha0 leaves [0, C={C:g}]: min {a.min():.6g}, max {a.max():.6g}"
        )
    a = np.clip(a, 0.0, C)
    residual = float(y_train @ a)
    if abs(residual) > 1e-9 * max(1.0, float(a.sum())):
        raise SolverInputError(
            f"alpha0 violates sum(y * alpha) = 0: the sum is {residual:.3g} "
            f"(tolerance {1e-9 * max(1.0, float(a.sum())):.3g})"
        )
    return a


def solve(
    kernel: KernelMatrix,
    y: np.ndarray,
    index: np.ndarray,
    C: float,
    alpha0=None,
    eps: float = 1e-3,
    cache_mb: float = 100.0,
    shrinking: bool = True,
    max_iter: int | None = None,
    previous: tuple[np.ndarray, SolveResult] | None = None,
    gradient0: tuple[np.ndarray, np.ndarray] | None = None,
) -> SolveResult:
    """Train on the instances ``index`` of ``kernel`` (global indices, in this order).

    ``previous = (its training index, its result)``, a solution on an overlapping training set,
    lets the gradient at ``alpha0`` be carried over from it (``carry_gradient``) instead of
    LibSVM's initialisation from every nonzero alpha, whenever that costs fewer kernel values.
    ``gradient0 = (G, G_bar)`` at ``alpha0``, in the order of ``index``, is for a caller who
    knows them without kernel values (the grid search's closed form along C); it replaces both.
    """
    C = check_C(C)
    if not eps > 0:
        raise SolverInputError(f"eps must be positive, got {eps!r}")
    if not cache_mb > 0:
        raise SolverInputError(f"cache_mb must be positive, got {cache_mb!r}")
    y = check_labels(y)
    if y.size != kernel.n:
        raise SolverInputError(f"y has {y.size} labels for a kernel over {kernel.n} instances")
    index = np.ascontiguousarray(index, dtype=np.int64)
    if index.size and not (0 <= index.min() and index.max() < kernel.n):
        raise SolverInputError(f"training indices must lie in [0, {kernel.n})")
    l = index.size
    y_train = np.ascontiguousarray(y[index])
    alpha = np.zeros(l) if alpha0 is None else check_warm_start(alpha0, y_train, C)
    if l == 0:
        raise SolverInputError("the training set is empty")
    if gradient0 is not None:
        if previous is not None:
            raise SolverInputError("give previous or gradient0, not both")
        gradient0 = tuple(np.asarray(g, dtype=np.float64) for g in gradient0)
        if len(gradient0) != 2 or any(g.shape != (l,) for g in gradient0):
            raise SolverInputError(f"gradient0 must hold two arrays of {l} values")
    if max_iter is None:
        max_iter = max(10_000_000, 100 * l)
    if y_train.min() == y_train.max():
        # One class only: nothing to separate. LibSVM then predicts that class; a zero
        # solution with rho = -y does the same through the usual decision rule.
        return SolveResult(alpha=alpha, gradient=np.full(l, -1.0), gradient_bar=np.zeros(l),
                           rho=-float(y_train[0]),
                           objective=0.0, iterations=0, iteration_cap_hit=False,
                           seconds_gradient_init=0.0, seconds_train=0.0,
                           n_sv=0, n_bounded_sv=0)
    # LibSVM's svm_train groups a -1/+1 training set by class, the +1 instances first, each
    # class in its given order; solving in that order keeps ties and iteration counts equal.
    order = np.concatenate([np.flatnonzero(y_train > 0), np.flatnonzero(y_train < 0)])
    rows = kernel_rows(kernel, index[order], y_train[order], new_cache(l, cache_mb * (1 << 20)))

    t0 = time.perf_counter()
    carried = None
    if previous is not None:
        carried = carry_gradient(kernel, y, previous, index, alpha, C, rows)
    alpha = alpha[order]
    if gradient0 is not None:
        G, G_bar = (g[order] for g in gradient0)
        values_outside = 0
    elif carried is None:
        G, G_bar = init_gradient(*rows_apart(rows), alpha, C)
        values_outside = 0
    else:
        G, G_bar, values_outside = carried
    t1 = time.perf_counter()
    counts = rows.cache[COUNTS]
    init_values = int(counts[VALUES_COMPUTED])
    state = new_state(alpha, G, G_bar, C, get_num_threads())
    rho, objective, iterations, cap_hit = smo_loop(state, *rows_apart(rows), C, float(eps),
                                                   bool(shrinking), int(max_iter))
    t2 = time.perf_counter()
    events = state.events
    perm = state.perm

    alpha_out = np.empty(l)
    grad_out = np.empty(l)
    alpha_out[order[perm]] = alpha
    grad_out[order[perm]] = G
    grad_bar_out = np.empty(l)
    grad_bar_out[order[perm]] = G_bar
    return SolveResult(
        alpha=alpha_out,
        gradient=grad_out,
        gradient_bar=grad_bar_out,
        rho=float(rho),
        objective=float(objective),
        iterations=int(iterations),
        iteration_cap_hit=bool(cap_hit),
        seconds_gradient_init=t1 - t0,
        seconds_train=t2 - t1,
        n_sv=int(np.count_nonzero(alpha_out > 0)),
        n_bounded_sv=int(np.count_nonzero(alpha_out >= C)),
        kernel=KernelCounts(
            requests=int(counts[REQUESTS]), hits=int(counts[HITS]),
            rows_computed=int(counts[ROWS_COMPUTED]), rows_extended=int(counts[ROWS_EXTENDED]),
            values_computed=int(counts[VALUES_COMPUTED]), evictions=int(counts[EVICTIONS]),
            init_values=init_values, reconstructions=int(events[RECONSTRUCTIONS]),
            reconstruction_values=int(events[RECONSTRUCTION_VALUES]),
            g_bar_rows=int(events[G_BAR_ROWS]), g_bar_values=int(events[G_BAR_VALUES]),
            active_sum=int(events[ACTIVE_SUM]), carried=carried is not None,
            carry_values_outside=int(values_outside),
        ),
    )


def carry_gradient(kernel: KernelMatrix, y, previous, next_index, alpha_next, C: float,
                   rows: Rows):
    """(G, G_bar) at ``alpha_next`` over ``next_index``, carried over from ``previous = (its
    training index, its SolveResult)``.

    An instance of both training sets keeps its gradient plus Q times the change of alpha; an
    instance new to the training set gets its gradient from the support vectors, summed in the
    order of ``next_index``. The rows of Q this needs, those of the changed and of the new
    instances, are requested at full length through ``rows``, the solver's row cache over a
    permutation of ``next_index``, as LibSVM's initialisation requests its rows, so SMO finds
    them there instead of computing them again. The rows of instances that left the training
    set are computed outside it, one at a time over the solver's positions: a block of them
    held at once was the larger part of the carry's time (3,111 x 39,800 values on full
    Webdata, most of the 1.0 s spent faulting in its fresh memory).

    Returns (G, G_bar) in the order of ``rows`` and the kernel values computed outside the
    cache, or None when carrying would cost more kernel values than LibSVM's initialisation.
    """
    prev_index, prev = previous
    y = np.asarray(y, dtype=np.float64)
    prev_index = np.asarray(prev_index, dtype=np.int64)
    next_index = np.asarray(next_index, dtype=np.int64)
    n, l = y.size, next_index.size
    if prev_index.shape != np.shape(prev.alpha):
        raise SolverInputError(f"the previous solution has {np.size(prev.alpha)} alphas for "
                               f"{prev_index.size} training instances")
    key_after = np.full(n, -1, dtype=np.int64)
    key_after[rows.gidx] = np.arange(rows.gidx.size)
    keys = key_after[next_index]
    if rows.gidx.size != l or (keys < 0).any():
        raise SolverInputError("the row cache is not over the training instances")
    alpha_before = np.zeros(n)
    alpha_before[prev_index] = prev.alpha
    alpha_after = np.zeros(n)
    alpha_after[next_index] = alpha_next
    at_C_change = C * ((alpha_after >= C).astype(float) - (alpha_before >= C))
    changed = np.flatnonzero((alpha_after != alpha_before) | (at_C_change != 0))
    position_before = np.full(n, -1, dtype=np.int64)
    position_before[prev_index] = np.arange(prev_index.size)
    carried = np.flatnonzero(position_before[next_index] >= 0)
    fresh = np.flatnonzero(position_before[next_index] < 0)
    support = np.flatnonzero(alpha_next > 0)
    sources = key_after[changed]
    left = changed[sources < 0]
    cached_rows = np.union1d(sources[sources >= 0], keys[fresh]).size
    # The rule counts the values the carry needs: of an instance that left, those against the
    # carried ones. Its row is computed over all positions (faster than picking them), but the
    # rule, which decides which gradient a round starts from, stays as it was.
    if cached_rows * l + left.size * carried.size >= support.size * l:
        return None

    G = np.empty(l)
    G_bar = np.empty(l)
    # A source that left the training set, left[-1 - s], is marked by -1 - s.
    sources[sources < 0] = -1 - np.arange(left.size)
    # Their bit sets one column per instance, as an IN_ORDER source holds them (else unused).
    bits = kernel.compact_rows[3]
    left_words = (np.ascontiguousarray(bits[left].T) if bits.size
                  else np.zeros((0, left.size), dtype=np.uint64))
    delta = np.column_stack([y[changed] * (alpha_after - alpha_before)[changed],
                             y[changed] * at_C_change[changed]])
    sv = next_index[support]
    weights = np.column_stack([y[sv] * alpha_after[sv], y[sv] * C * (alpha_after[sv] >= C)])
    moved, total = _carry_sums(*rows_apart(rows), sources, left, left_words, delta,
                               keys[carried], keys[fresh], keys[support], weights)
    kept = keys[carried]
    G[kept] = prev.gradient[position_before[next_index[carried]]] + moved[:, 0]
    G_bar[kept] = prev.gradient_bar[position_before[next_index[carried]]] + moved[:, 1]
    total *= y[next_index[fresh], None]
    G[keys[fresh]] = total[:, 0] - 1.0
    G_bar[keys[fresh]] = total[:, 1]
    return G, G_bar, left.size * l


# The carry's two sums add K[t, s] * weight_s over the sources s in their given order, in
# float64 from the float32 values, whichever way a value is read: a carried gradient is then
# the same in every kernel mode. A cached row holds Q_ts = y_t y_s K_ts, so multiplying by
# y_t y_s recovers K_ts exactly.


@njit(cache=True, nogil=True)
def _add_row_sum(total, a, q, y, t, sources, weights):
    """total[a] += sum_b K[t, sources[b]] * weights[b], from t's row q of Q, for the two columns
    of weights (G's and G_bar's). The sums are kept in locals, not in ``total``: each
    addition then waits on the one before only in a register (0.49 -> 0.15 s a round on full
    Webdata, one thread)."""
    g = total[a, 0]
    g_bar = total[a, 1]
    yt = y[t]
    for b in range(sources.shape[0]):
        s = sources[b]
        k = np.float64(q[s]) * (yt * y[s])
        g += k * weights[b, 0]
        g_bar += k * weights[b, 1]
    total[a, 0] = g
    total[a, 1] = g_bar


@njit(cache=True, nogil=True)
def _carry_sums(rows_rest, cache_rows, shared_rows, changed, left, left_words, deltas, carried,
                fresh, support, weights):
    """(moved, total), each full row of Q read once through the cache:

    moved[a] = y_t sum_b K[t, changed_b] * deltas[b] for t = carried[a] (the change of Q's
    gradient), with K's symmetry: the column of a changed key c >= 0 is its row of Q, else the
    row of ``left[-1 - c]``, an instance that left, computed by ``outside_row`` (its bit set in
    ``left_words``'s column);
    total[a] = sum_b K[fresh[a], support[b]] * weights[b], from fresh[a]'s row. A new instance
    with alpha > 0 is both changed and fresh: reading its row once matters when the cache is
    too small to keep it between the two uses (at a full data set's cache pressure it was
    computed twice).
    """
    rows = _rows_together(rows_rest, cache_rows, shared_rows)
    y = rows.y
    l = y.shape[0]
    fresh_slot = np.full(l, -1, dtype=np.int64)
    fresh_slot[fresh] = np.arange(fresh.shape[0])
    summed = np.zeros(fresh.shape[0], dtype=np.bool_)
    # moved is summed over every position, one delta column at a time, moved[m, :] contiguous
    # (a vectorised loop; reading the carried positions out of each row took 4 times as long),
    # and a zero delta (G_bar's, unless alpha_b reached or left C) skipped: adding 0.0 to a sum
    # that started at 0.0 leaves it unchanged. A row of Q holds y_t y_c K[t, c], so its value
    # times y_c delta is y_t K[t, c] delta exactly (multiplying by +-1 commutes with rounding),
    # and each position sums y_t times the terms of K's sum, in the same order: y_t times that
    # sum, bit for bit.
    moved = np.zeros((deltas.shape[1], l))
    total = np.zeros((fresh.shape[0], weights.shape[1]))
    outside = np.empty(l, dtype=np.float32)
    X, sqnorm, source = rows.fill[0]
    for b in range(changed.shape[0]):
        c = changed[b]
        if c >= 0:
            q = _row(rows, c, l)
            sign = y[c]
            if fresh_slot[c] >= 0:
                _add_row_sum(total, fresh_slot[c], q, y, c, support, weights)
                summed[fresh_slot[c]] = True
        else:
            # Any sign does, as long as the same one is undone below: K is what is summed.
            q = outside
            sign = 1.0
            outside_row(q, left[-1 - c], left_words[:, -1 - c], sign, X, sqnorm, rows.gamma,
                        rows.gidx, y, source)
        for m in range(deltas.shape[1]):
            delta = sign * deltas[b, m]
            if delta != 0.0:
                sums = moved[m]
                for t in range(l):
                    sums[t] += np.float64(q[t]) * delta
    for a in range(fresh.shape[0]):
        if not summed[a]:
            _add_row_sum(total, a, _row(rows, fresh[a], l), y, fresh[a], support, weights)
    return moved[:, carried].T, total


def support_coefficients(y, train_index, alpha) -> tuple[np.ndarray, np.ndarray]:
    """(global indices of the support vectors, y_j alpha_j of each)."""
    train_index = np.asarray(train_index, dtype=np.int64)
    sv = alpha > 0
    return train_index[sv], (np.asarray(y, dtype=np.float64)[train_index] * alpha)[sv]


def decision_values(kernel: KernelMatrix, y, train_index, alpha, rho, test_index) -> np.ndarray:
    """sum_j y_j alpha_j K(x_j, x_t) - rho for each test instance (global indices)."""
    support, coef = support_coefficients(y, train_index, alpha)
    return kernel.times_float64(test_index, support, coef) - rho


def warmup() -> float:
    """Compile every jitted function of the solver on a tiny problem; return the seconds.

    Numba's on-disk cache is not safe for processes that compile the same functions at once (two
    of them number their entries alike and one's index then points at the other's code: a fresh
    clone's parallel pipeline jobs crashed so). So the processes of a machine compile or load one
    at a time, under a file lock beside the cache.
    """
    t0 = time.perf_counter()
    with _compile_lock():
        _compile()
    return time.perf_counter() - t0


@contextmanager
def _compile_lock():
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, as before
        yield
        return
    folder = Path(__file__).with_name("__pycache__")
    try:
        folder.mkdir(exist_ok=True)
        lock = open(folder / "numba-compile.lock", "w")
    except OSError:  # a read-only install: Numba caches elsewhere, so lock in the temporary folder
        lock = open(Path(tempfile.gettempdir()) / "alphaseed-numba-compile.lock", "w")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _compile() -> None:
    rng = np.random.default_rng(0)
    # Float features, and binary ones: their bit sets take functions of their own (prediction's
    # lookup by distance first ran, and compiled, inside a timed round).
    features = (rng.normal(size=(24, 3)), (rng.random((24, 70)) < 0.3).astype(float))
    y = np.where(np.arange(24) % 2 == 0, 1.0, -1.0)
    for X, mode in itertools.product(features, ("cache", "shared", "gram")):
        km = KernelMatrix(X, 0.5, mode=mode, memory_budget=1 << 30)
        first = solve(km, y, np.arange(24), 1.0, cache_mb=1e-3)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, cache_mb=1e-3)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, cache_mb=1e-3,
              previous=(np.arange(24), first))
        decision_values(km, y, np.arange(24), first.alpha, first.rho, np.arange(4))
        km.decision_signs(np.arange(4), np.arange(24), first.alpha, first.rho)
        km.times(np.arange(4), np.arange(24), np.ones((24, 2)))


class SVMModel:
    """A trained C-SVC: its support vectors, dual coefficients and rho, as LibSVM keeps them."""

    def __init__(self, support_vectors, dual_coef, alpha, rho, gamma, result: SolveResult):
        self.support_vectors = support_vectors
        self.dual_coef = dual_coef  # y_i * alpha_i of each support vector
        self.alpha = alpha
        self.rho = rho
        self.gamma = gamma
        self.iterations = result.iterations
        self.objective = result.objective
        self.iteration_cap_hit = result.iteration_cap_hit
        self.n_sv = result.n_sv
        self.n_bounded_sv = result.n_bounded_sv
        self.solve_result = result
        self._sv_sqnorm = squared_norms(support_vectors)

    def decision_function(self, X) -> np.ndarray:
        from .kernel import dense_features

        Xd = dense_features(X)
        if Xd.shape[1] != self.support_vectors.shape[1]:
            raise SolverInputError(
                f"X has {Xd.shape[1]} features, the model was trained on "
                f"{self.support_vectors.shape[1]}"
            )
        return kernel_cross_times(Xd, squared_norms(Xd), self.support_vectors, self._sv_sqnorm,
                                  self.gamma, self.dual_coef,
                                  blas_dots_are_exact(Xd, self.support_vectors)) - self.rho

    def predict(self, X) -> np.ndarray:
        return np.where(self.decision_function(X) > 0, 1, -1)


def train_svm(X, y, C, gamma, alpha0=None, eps=1e-3, cache_mb=100, shrinking=True) -> SVMModel:
    """Train a C-SVC with the Gaussian kernel K(x, z) = exp(-gamma ||x - z||^2)."""
    km = KernelMatrix(X, gamma)
    y = check_labels(y)
    if y.size != km.n:
        raise SolverInputError(f"X has {km.n} rows but y has {y.size} labels")
    result = solve(km, y, np.arange(km.n), C, alpha0=alpha0, eps=eps, cache_mb=cache_mb,
                   shrinking=shrinking)
    sv = result.alpha > 0
    return SVMModel(
        support_vectors=km.X[sv],
        dual_coef=(y * result.alpha)[sv],
        alpha=result.alpha,
        rho=result.rho,
        gamma=km.gamma,
        result=result,
    )
