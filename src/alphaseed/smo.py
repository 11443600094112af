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
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import get_num_threads, njit, prange

from .errors import SolverInputError
from .kernel import KernelMatrix, blas_dots_are_exact, kernel_cross_times, squared_norms
from .kernel_cache import (
    EVICTIONS, GRAM, HITS, REQUESTS, ROWS_COMPUTED, ROWS_EXTENDED, VALUES_COMPUTED,
    cache_swap_columns, cache_swap_keys, get_q, new_cache,
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


@njit(cache=True)
def _status(a, C):
    if a >= C:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@njit(cache=True)
def init_gradient(X, sqnorm, gamma, gidx, y, alpha, C, cache, source):
    l = alpha.shape[0]
    G = np.full(l, -1.0)
    G_bar = np.zeros(l)
    for i in range(l):
        if alpha[i] > 0.0:
            q = get_q(i, l, X, sqnorm, gamma, gidx, y, cache, source)
            a = alpha[i]
            for j in range(l):
                G[j] += a * q[j]
            if alpha[i] >= C:
                for j in range(l):
                    G_bar[j] += C * q[j]
    return G, G_bar


@njit(cache=True)
def _swap(a, i, j):
    tmp = a[i]
    a[i] = a[j]
    a[j] = tmp


@njit(cache=True)
def _swap_index(i, j, gidx, y, alpha, status, G, G_bar, perm, cache):
    """LibSVM's swap_index, except for the cached rows' columns (see ``_shrink``)."""
    cache_swap_keys(cache, i, j)
    _swap(gidx, i, j)
    _swap(y, i, j)
    _swap(alpha, i, j)
    _swap(status, i, j)
    _swap(G, i, j)
    _swap(G_bar, i, j)
    _swap(perm, i, j)


@njit(cache=True)
def _in_up(y, status):
    """Whether alpha may move in the direction that raises y * alpha (LibSVM's I_up)."""
    return status != UPPER if y > 0 else status != LOWER


@njit(cache=True)
def _in_low(y, status):
    """Whether alpha may move in the direction that lowers y * alpha (LibSVM's I_low)."""
    return status != LOWER if y > 0 else status != UPPER


# The loops over the active set run in contiguous chunks, one per thread, when the set is
# large; each chunk keeps LibSVM's tie rule (the later index wins) and chunks are combined in
# index order with the same rule, so the chosen pair never depends on the thread count.
PARALLEL_ACTIVE = 8192


@njit(cache=True)
def _chunk_count(active, values):
    """One chunk per thread (``values`` holds a slot per thread) on a large active set."""
    return values.shape[0] if active >= PARALLEL_ACTIVE else 1


@njit(cache=True)
def _chunk_bounds(active, chunks, c):
    return c * active // chunks, (c + 1) * active // chunks


# LibSVM writes each loop below twice, once per label; multiplying by y = +-1 is exact, so
# one loop over y * G gives the same values, comparisons and ties.
@njit(cache=True)
def _max_up(lo, hi, y, status, G):
    """max of -y_t G_t over I_up in [lo, hi), and its last index (-1 if none)."""
    gmax = -INF
    gmax_idx = -1
    for t in range(lo, hi):
        if _in_up(y[t], status[t]) and -y[t] * G[t] >= gmax:
            gmax = -y[t] * G[t]
            gmax_idx = t
    return gmax, gmax_idx


@njit(cache=True)
def _update_and_max_up(lo, hi, G, qi, qj, dai, daj, y, status):
    """The gradient update of one SMO step over [lo, hi), fused with the next step's _max_up."""
    gmax = -INF
    gmax_idx = -1
    for t in range(lo, hi):
        G[t] += qi[t] * dai + qj[t] * daj
        if _in_up(y[t], status[t]) and -y[t] * G[t] >= gmax:
            gmax = -y[t] * G[t]
            gmax_idx = t
    return gmax, gmax_idx


@njit(cache=True)
def _min_low(lo, hi, gmax, y_i, qi, y, status, G):
    """Second-order choice of j over I_low in [lo, hi): (obj_diff_min, its last index, gmax2)."""
    gmax2 = -INF
    gmin_idx = -1
    obj_diff_min = INF
    for j in range(lo, hi):
        if _in_low(y[j], status[j]):
            yg = y[j] * G[j]
            grad_diff = gmax + yg
            if yg >= gmax2:
                gmax2 = yg
            if grad_diff > 0.0:
                quad = 2.0 - 2.0 * y_i * y[j] * qi[j]
                if quad <= 0.0:
                    quad = TAU
                obj_diff = -(grad_diff * grad_diff) / quad
                if obj_diff <= obj_diff_min:
                    gmin_idx = j
                    obj_diff_min = obj_diff
    return obj_diff_min, gmin_idx, gmax2


@njit(cache=True, parallel=True)
def _chunked_max_up(active, chunks, y, status, G, values, indices):
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c] = _max_up(lo, hi, y, status, G)


@njit(cache=True, parallel=True)
def _chunked_update_and_max_up(active, chunks, G, qi, qj, dai, daj, y, status, values, indices):
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c] = _update_and_max_up(lo, hi, G, qi, qj, dai, daj, y, status)


@njit(cache=True, parallel=True)
def _chunked_min_low(active, chunks, gmax, y_i, qi, y, status, G, values, indices, maxima):
    for c in prange(chunks):
        lo, hi = _chunk_bounds(active, chunks, c)
        values[c], indices[c], maxima[c] = _min_low(lo, hi, gmax, y_i, qi, y, status, G)


@njit(cache=True)
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


@njit(cache=True)
def max_up(active, y, status, G, values, indices):
    chunks = _chunk_count(active, values)
    if chunks == 1:
        return _max_up(0, active, y, status, G)
    _chunked_max_up(active, chunks, y, status, G, values, indices)
    return _last_best(values, indices, chunks, 1.0)


@njit(cache=True)
def update_and_max_up(active, G, qi, qj, dai, daj, y, status, values, indices):
    chunks = _chunk_count(active, values)
    if chunks == 1:
        return _update_and_max_up(0, active, G, qi, qj, dai, daj, y, status)
    _chunked_update_and_max_up(active, chunks, G, qi, qj, dai, daj, y, status, values, indices)
    return _last_best(values, indices, chunks, 1.0)


@njit(cache=True)
def _select_working_set(active, eps, gmax, gmax_idx, X, sqnorm, gamma, gidx, y, status, G, cache,
                        source, values, indices, maxima):
    """(i, j) of LibSVM's second-order selection given i's _max_up, or (-1, -1) when the gap
    is below eps."""
    i = gmax_idx
    if i == -1:
        return -1, -1
    qi = get_q(i, active, X, sqnorm, gamma, gidx, y, cache, source)
    chunks = _chunk_count(active, values)
    if chunks == 1:
        obj_diff_min, gmin_idx, gmax2 = _min_low(0, active, gmax, y[i], qi, y, status, G)
    else:
        _chunked_min_low(active, chunks, gmax, y[i], qi, y, status, G, values, indices, maxima)
        obj_diff_min, gmin_idx = _last_best(values, indices, chunks, -1.0)
        gmax2 = -INF
        for c in range(chunks):
            gmax2 = max(gmax2, maxima[c])
    if gmax + gmax2 < eps or gmin_idx == -1:
        return -1, -1
    return gmax_idx, gmin_idx


@njit(cache=True, parallel=True)
def _reconstruct_from_gram(active, gram, gidx, y, alpha, status, G, walk_inactive, chunks):
    """_reconstruct_gradient's sums read straight from the Gram matrix, in parallel.

    Going through the row cache would stretch every row it touches to full length and evict
    the rows the next iterations need. Each G[j] adds the same terms in the same order as the
    cached walk does, so the result is identical.
    """
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


@njit(cache=True)
def _reconstruct_gradient(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar, cache,
                          source, chunks):
    l = alpha.shape[0]
    if active == l:
        return
    for j in range(active, l):
        G[j] = G_bar[j] - 1.0
    n_free = 0
    for j in range(active):
        if status[j] == FREE:
            n_free += 1
    # Walk whichever side needs fewer kernel evaluations, as LibSVM does.
    walk_inactive = n_free * l > 2 * active * (l - active)
    if source[0] == GRAM:
        _reconstruct_from_gram(active, source[1], gidx, y, alpha, status, G, walk_inactive,
                               chunks)
    elif walk_inactive:
        for i in range(active, l):
            q = get_q(i, active, X, sqnorm, gamma, gidx, y, cache, source)
            for j in range(active):
                if status[j] == FREE:
                    G[i] += alpha[j] * q[j]
    else:
        for i in range(active):
            if status[i] == FREE:
                q = get_q(i, l, X, sqnorm, gamma, gidx, y, cache, source)
                a = alpha[i]
                for j in range(active, l):
                    G[j] += a * q[j]


@njit(cache=True)
def _unshrink(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar, cache, source, chunks,
              events):
    """Reconstruct the inactive gradients and counts the event; returns the new active size, l."""
    l = alpha.shape[0]
    if active < l:
        computed = cache[5][VALUES_COMPUTED]
        _reconstruct_gradient(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar, cache,
                              source, chunks)
        events[RECONSTRUCTIONS] += 1
        events[RECONSTRUCTION_VALUES] += cache[5][VALUES_COMPUTED] - computed
    return l


@njit(cache=True)
def _update_g_bar(p, was_upper, C, X, sqnorm, gamma, gidx, y, G_bar, cache, source, events):
    """G_bar after alpha_p crossed C (upwards unless ``was_upper``): a full-length row of Q."""
    l = G_bar.shape[0]
    computed = cache[5][VALUES_COMPUTED]
    q = get_q(p, l, X, sqnorm, gamma, gidx, y, cache, source)
    events[G_BAR_ROWS] += 1
    events[G_BAR_VALUES] += cache[5][VALUES_COMPUTED] - computed
    sign = -C if was_upper else C
    for t in range(l):
        G_bar[t] += sign * q[t]


@njit(cache=True)
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


@njit(cache=True)
def _shrink(active, gmax1, gmax2, gidx, y, alpha, status, G, G_bar, perm, cache, swapped_lo,
            swapped_hi):
    """LibSVM's do_shrinking after its unshrink step: the new active size.

    The cached rows' columns are exchanged once at the end, for all swaps together.
    """
    swaps = 0
    t = 0
    while t < active:
        if _be_shrunk(t, gmax1, gmax2, y, status, G):
            active -= 1
            while active > t:
                if not _be_shrunk(active, gmax1, gmax2, y, status, G):
                    _swap_index(t, active, gidx, y, alpha, status, G, G_bar, perm, cache)
                    swapped_lo[swaps] = t
                    swapped_hi[swaps] = active
                    swaps += 1
                    break
                active -= 1
        t += 1
    cache_swap_columns(cache, swapped_lo, swapped_hi, swaps)
    return active


@njit(cache=True)
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


@njit(cache=True)
def smo_loop(X, sqnorm, gamma, gidx, y, alpha, G, G_bar, C, eps, shrinking, max_iter, cache,
             source, threads):
    """Run SMO from a state whose gradient is initialised; arrays are permuted in place.

    Returns (perm, rho, objective, iterations, cap_hit, events); ``perm[p]`` is the caller's
    position of the instance now at position p; ``events`` is indexed by RECONSTRUCTIONS etc.
    """
    l = alpha.shape[0]
    events = np.zeros(N_EVENTS, dtype=np.int64)
    status = np.empty(l, dtype=np.int8)
    for t in range(l):
        status[t] = _status(alpha[t], C)
    perm = np.arange(l)
    swapped_lo = np.empty(l, dtype=np.int64)
    swapped_hi = np.empty(l, dtype=np.int64)
    # Per-chunk partial results of the parallel loops, a chunk per thread.
    values = np.empty(threads)
    indices = np.empty(threads, dtype=np.int64)
    maxima = np.empty(threads)
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
                    active = _unshrink(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar,
                                       cache, source, threads, events)
                active = _shrink(active, gmax1, gmax2, gidx, y, alpha, status, G, G_bar, perm,
                                 cache, swapped_lo, swapped_hi)
                up_known = False

        if not up_known:
            gmax, gmax_idx = max_up(active, y, status, G, values, indices)
        i, j = _select_working_set(active, eps, gmax, gmax_idx, X, sqnorm, gamma, gidx, y, status,
                                   G, cache, source, values, indices, maxima)
        if i < 0:
            active = _unshrink(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar, cache,
                               source, threads, events)
            gmax, gmax_idx = max_up(active, y, status, G, values, indices)
            i, j = _select_working_set(active, eps, gmax, gmax_idx, X, sqnorm, gamma, gidx, y,
                                       status, G, cache, source, values, indices, maxima)
            if i < 0:
                break
            counter = 1
        it += 1
        events[ACTIVE_SUM] += active

        qi = get_q(i, active, X, sqnorm, gamma, gidx, y, cache, source)
        qj = get_q(j, active, X, sqnorm, gamma, gidx, y, cache, source)
        qij = qi[j]
        old_ai = alpha[i]
        old_aj = alpha[j]
        if y[i] != y[j]:
            quad = 2.0 + 2.0 * qij
            if quad <= 0.0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            # LibSVM's two clipping tests, in its order; with one C both branch on diff > 0.
            if diff > 0.0:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = diff
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = C - diff
            else:
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = -diff
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = C + diff
        else:
            quad = 2.0 - 2.0 * qij
            if quad <= 0.0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > C:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = total - C
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = total - C
            else:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = total
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = total

        ui = status[i] == UPPER
        uj = status[j] == UPPER
        status[i] = _status(alpha[i], C)
        status[j] = _status(alpha[j], C)
        gmax, gmax_idx = update_and_max_up(active, G, qi, qj, alpha[i] - old_ai, alpha[j] - old_aj,
                                           y, status, values, indices)
        up_known = True
        if ui != (status[i] == UPPER):
            _update_g_bar(i, ui, C, X, sqnorm, gamma, gidx, y, G_bar, cache, source, events)
        if uj != (status[j] == UPPER):
            _update_g_bar(j, uj, C, X, sqnorm, gamma, gidx, y, G_bar, cache, source, events)

    cap_hit = it >= max_iter
    if cap_hit:
        active = _unshrink(active, X, sqnorm, gamma, gidx, y, alpha, status, G, G_bar, cache,
                           source, threads, events)
    rho = _calculate_rho(active, y, status, G)
    v = 0.0
    for t in range(l):
        v += alpha[t] * (G[t] - 1.0)
    return perm, rho, v / 2.0, it, cap_hit, events


def check_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size and not np.isin(y, (-1.0, 1.0)).all():
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
) -> SolveResult:
    """Train on the instances ``index`` of ``kernel`` (global indices, in this order).

    ``previous = (its training index, its result)``, a solution on an overlapping training set,
    lets the gradient at ``alpha0`` be carried over from it (``carry_gradient``) instead of
    LibSVM's initialisation from every nonzero alpha, whenever that costs fewer kernel values.
    """
    C = check_C(C)
    if not eps > 0:
        raise SolverInputError(f"eps must be positive, got {eps!r}")
    if not cache_mb > 0:
        raise SolverInputError(f"cache_mb must be positive, got {cache_mb!r}")
    y = check_labels(y)
    index = np.ascontiguousarray(index, dtype=np.int64)
    l = index.size
    y_train = np.ascontiguousarray(y[index])
    alpha = np.zeros(l) if alpha0 is None else check_warm_start(alpha0, y_train, C)
    if l == 0:
        raise SolverInputError("the training set is empty")
    if max_iter is None:
        max_iter = max(10_000_000, 100 * l)
    if np.unique(y_train).size == 1:
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
    gidx = index[order]
    y_inner = y_train[order]
    alpha = alpha[order]
    cache = new_cache(l, cache_mb * (1 << 20))
    source = kernel.source

    t0 = time.perf_counter()
    carried = None
    if previous is not None:
        prev_index, prev = previous
        if np.shape(prev_index) != np.shape(prev.alpha):
            raise SolverInputError(f"the previous solution has {np.size(prev.alpha)} alphas for "
                                   f"{np.size(prev_index)} training instances")
        keys = np.empty(l, dtype=np.int64)
        keys[order] = np.arange(l)
        carried = carry_gradient(kernel, y, prev_index, prev, index, alpha[keys], C, cache, keys)
    if carried is None:
        G, G_bar = init_gradient(kernel.X, kernel.sqnorm, kernel.gamma, gidx, y_inner, alpha, C,
                                 cache, source)
        values_outside = 0
    else:
        G, G_bar = carried[0][order], carried[1][order]
        values_outside = carried[2]
    t1 = time.perf_counter()
    init_values = int(cache[5][VALUES_COMPUTED])
    perm, rho, objective, iterations, cap_hit, events = smo_loop(
        kernel.X, kernel.sqnorm, kernel.gamma, gidx, y_inner, alpha, G, G_bar,
        C, float(eps), bool(shrinking), int(max_iter), cache, source, get_num_threads(),
    )
    t2 = time.perf_counter()
    counts = cache[5]

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


def carry_gradient(kernel: KernelMatrix, y, prev_index, prev: SolveResult, next_index, alpha_next,
                   C: float, cache, keys=None):
    """(G, G_bar) at ``alpha_next`` over ``next_index``, carried over from a previous solution.

    An instance of both training sets keeps its gradient plus Q times the change of alpha; an
    instance new to the training set gets its gradient from the support vectors. The rows of Q
    this needs, those of the changed and of the new instances, are requested at full length
    through ``cache``, the solver's row cache (``keys[p]`` is the cache key of ``next_index[p]``,
    ``p`` by default), as LibSVM's initialisation requests its rows, so SMO finds them there
    instead of computing them again. Only the columns of instances that left the training set
    are computed outside it.

    Returns (G, G_bar, kernel values computed outside the cache), or None when carrying would
    cost more kernel values than LibSVM's initialisation from scratch.
    """
    y = np.asarray(y, dtype=np.float64)
    prev_index = np.asarray(prev_index, dtype=np.int64)
    next_index = np.asarray(next_index, dtype=np.int64)
    n, l = y.size, next_index.size
    keys = np.arange(l) if keys is None else np.asarray(keys, dtype=np.int64)
    alpha_before = np.zeros(n)
    alpha_before[prev_index] = prev.alpha
    alpha_after = np.zeros(n)
    alpha_after[next_index] = alpha_next
    at_C_change = C * ((alpha_after >= C).astype(float) - (alpha_before >= C))
    changed = np.flatnonzero((alpha_after != alpha_before) | (at_C_change != 0))
    position_before = np.full(n, -1, dtype=np.int64)
    position_before[prev_index] = np.arange(prev_index.size)
    key_after = np.full(n, -1, dtype=np.int64)
    key_after[next_index] = keys
    carried = np.flatnonzero(position_before[next_index] >= 0)
    fresh = np.flatnonzero(position_before[next_index] < 0)
    support = np.flatnonzero(alpha_next > 0)
    sources = key_after[changed]
    left = changed[sources < 0]
    rows = np.union1d(sources[sources >= 0], keys[fresh]).size
    if rows * l + left.size * carried.size >= support.size * l:
        return None

    # The solver's position order: the cache's rows and columns are keyed by it.
    gidx = np.empty(l, dtype=np.int64)
    gidx[keys] = next_index
    y_keyed = np.ascontiguousarray(y[gidx])
    G = np.empty(l)
    G_bar = np.empty(l)
    # A source that left the training set is read from row -1 - s of its block.
    sources[sources < 0] = -1 - np.arange(left.size)
    left_block = kernel.block(left, next_index[carried])
    delta = np.column_stack([y[changed] * (alpha_after - alpha_before)[changed],
                             y[changed] * at_C_change[changed]])
    moved = _column_sums(sources, left_block, delta, keys[carried], kernel.X, kernel.sqnorm,
                         kernel.gamma, gidx, y_keyed, cache, kernel.source)
    moved *= y[next_index[carried], None]
    G[carried] = prev.gradient[position_before[next_index[carried]]] + moved[:, 0]
    G_bar[carried] = prev.gradient_bar[position_before[next_index[carried]]] + moved[:, 1]
    sv = next_index[support]
    weights = np.column_stack([y[sv] * alpha_after[sv], y[sv] * C * (alpha_after[sv] >= C)])
    total = _row_sums(keys[fresh], keys[support], weights, kernel.X, kernel.sqnorm, kernel.gamma,
                      gidx, y_keyed, cache, kernel.source)
    total *= y[next_index[fresh], None]
    G[fresh] = total[:, 0] - 1.0
    G_bar[fresh] = total[:, 1]
    return G, G_bar, left_block.size


# The two sums below add K[t, s] * weight_s over the sources s in their given order, in float64
# from the float32 values, whichever way a value is read: a carried gradient is then the same
# in every kernel mode. A cached row holds Q_ts = y_t y_s K_ts, so multiplying by y_t y_s
# recovers K_ts exactly.


@njit(cache=True)
def _column_sums(sources, left_block, weights, targets, X, sqnorm, gamma, gidx, y, cache,
                 source):
    """sum_b K[targets[a], s_b] * weights[b] for every a, with K's symmetry: the column of a
    source key s_b >= 0 is its full row of Q from the cache, else row -1 - s_b of
    ``left_block`` (K of a source outside the cache against every target)."""
    l = gidx.shape[0]
    out = np.zeros((targets.shape[0], weights.shape[1]))
    column = np.empty(targets.shape[0])
    for b in range(sources.shape[0]):
        s = sources[b]
        if s >= 0:
            q = get_q(s, l, X, sqnorm, gamma, gidx, y, cache, source)
            for a in range(targets.shape[0]):
                column[a] = np.float64(q[targets[a]]) * (y[s] * y[targets[a]])
        else:
            for a in range(targets.shape[0]):
                column[a] = np.float64(left_block[-1 - s, a])
        for a in range(targets.shape[0]):
            for m in range(weights.shape[1]):
                out[a, m] += column[a] * weights[b, m]
    return out


@njit(cache=True)
def _row_sums(targets, sources, weights, X, sqnorm, gamma, gidx, y, cache, source):
    """sum_b K[targets[a], sources[b]] * weights[b] for every a, each target's full row of Q
    read through the cache."""
    l = gidx.shape[0]
    out = np.zeros((targets.shape[0], weights.shape[1]))
    for a in range(targets.shape[0]):
        t = targets[a]
        q = get_q(t, l, X, sqnorm, gamma, gidx, y, cache, source)
        for b in range(sources.shape[0]):
            k = np.float64(q[sources[b]]) * (y[t] * y[sources[b]])
            for m in range(weights.shape[1]):
                out[a, m] += k * weights[b, m]
    return out


def decision_values(kernel: KernelMatrix, y, train_index, alpha, rho, test_index) -> np.ndarray:
    """sum_j y_j alpha_j K(x_j, x_t) - rho for each test instance (global indices)."""
    train_index = np.asarray(train_index, dtype=np.int64)
    sv = alpha > 0
    coef = (np.asarray(y, dtype=np.float64)[train_index] * alpha)[sv]
    return kernel.times_float64(test_index, train_index[sv], coef) - rho


def warmup() -> float:
    """Compile every jitted function of the solver on a tiny problem; return the seconds."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 3))
    y = np.where(np.arange(24) % 2 == 0, 1.0, -1.0)
    for mode in ("cache", "shared", "gram"):
        km = KernelMatrix(X, 0.5, mode=mode, memory_budget=1 << 30)
        first = solve(km, y, np.arange(24), 1.0, cache_mb=1e-3)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, cache_mb=1e-3)
        solve(km, y, np.arange(24), 1.0, alpha0=first.alpha, cache_mb=1e-3,
              previous=(np.arange(24), first))
        decision_values(km, y, np.arange(24), first.alpha, first.rho, np.arange(4))
        km.times(np.arange(4), np.arange(24), np.ones((24, 2)))
    return time.perf_counter() - t0


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
