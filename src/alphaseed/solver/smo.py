"""SMO for the C-SVC dual with the Gaussian kernel, the algorithm of LibSVM 3.x's ``Solver``.

Same working-set selection (second order, Fan, Chen and Lin 2005; TAU for non-positive
curvature; ties go to the later index, as LibSVM's ``>=`` and ``<=`` do), same shrinking
(every min(l, 1000) iterations, one unshrink with gradient reconstruction when the gap first
falls below 10 eps), same stopping rule, rho and objective, and the same iteration count, so
iterations and accuracies can be compared with LibSVM's one for one.

The kernel row cache is LibSVM's too (``alphaseed.kernel``'s ``RowCache``): rows as long as last requested,
least recently used evicted first, the budget counted in values, so a 100 MB cache holds the
rows LibSVM's holds.

This module holds the pair update and the loop; ``selection`` chooses the pair, ``shrinking``
shrinks and reconstructs, ``state`` holds what they share. Every compiled function of the
solver and the kernel releases the GIL (``nogil``), so that ``cross_validate``'s chains of
rounds can run their solvers on several cores at once.
"""

from __future__ import annotations

from numba import njit

from ..kernel import VALUES_COMPUTED, raise_budget
from .selection import max_up, select_working_set, update_gradient
from .shrinking import do_shrinking, unshrink
from .state import (
    ACTIVE_SUM, FREE, G_BAR_ROWS, G_BAR_VALUES, INF, LOWER, TAU, UPPER, borrowed_loop_inputs, bound_status,
    q_row, rounded_status, rows_together,
)


@njit(cache=True, nogil=True)
def _pair_of_different_labels(ai, aj, gi, gj, qij, Ci, Cj):
    """LibSVM's new (alpha_i, alpha_j) when y_i != y_j, clipped in its order (Ci, Cj: their bounds)."""
    quad = 2.0 + 2.0 * qij
    if quad <= 0.0:
        quad = TAU
    delta = (-gi - gj) / quad
    diff = ai - aj
    ai += delta
    aj += delta
    if diff > 0.0:
        if aj < 0.0:
            aj = 0.0
            ai = diff
    else:
        if ai < 0.0:
            ai = 0.0
            aj = -diff
    if diff > Ci - Cj:
        if ai > Ci:
            ai = Ci
            aj = Ci - diff
    else:
        if aj > Cj:
            aj = Cj
            ai = Cj + diff
    return ai, aj


@njit(cache=True, nogil=True)
def _pair_of_same_label(ai, aj, gi, gj, qij, Ci, Cj):
    """LibSVM's new (alpha_i, alpha_j) when y_i == y_j, clipped in its order (Ci, Cj: their bounds)."""
    quad = 2.0 - 2.0 * qij
    if quad <= 0.0:
        quad = TAU
    delta = (gi - gj) / quad
    total = ai + aj
    ai -= delta
    aj += delta
    if total > Ci:
        if ai > Ci:
            ai = Ci
            aj = total - Ci
    else:
        if aj < 0.0:
            aj = 0.0
            ai = total
    if total > Cj:
        if aj > Cj:
            aj = Cj
            ai = total - Cj
    else:
        if ai < 0.0:
            ai = 0.0
            aj = total
    return ai, aj


@njit(cache=True, nogil=True, inline="always")
def _update_g_bar(state, rows, p, was_upper, C):
    """G_bar after alpha_p crossed its bound C (upwards unless ``was_upper``): a full-length row of Q."""
    G_bar, events, counts = state.G_bar, state.events, rows.cache.counts
    l = G_bar.shape[0]
    computed = counts[VALUES_COMPUTED]
    q = q_row(rows, p, l)
    events[G_BAR_ROWS] += 1
    events[G_BAR_VALUES] += counts[VALUES_COMPUTED] - computed
    sign = -C if was_upper else C
    for t in range(l):
        G_bar[t] += sign * q[t]


@njit(cache=True, nogil=True, inline="always")
def _update(state, rows, active, i, j, C_positive, C_negative):
    """LibSVM's update of the pair (i, j): alpha, status, G and G_bar. Returns the next
    ``max_up``, which the gradient update computes on the way."""
    alpha, status, G, y = state.alpha, state.status, state.G, rows.y
    qi = q_row(rows, i, active)
    qj = q_row(rows, j, active)
    old_ai = alpha[i]
    old_aj = alpha[j]
    Ci = C_positive if y[i] > 0 else C_negative
    Cj = C_positive if y[j] > 0 else C_negative
    if y[i] != y[j]:
        alpha[i], alpha[j] = _pair_of_different_labels(old_ai, old_aj, G[i], G[j], qi[j], Ci, Cj)
    else:
        alpha[i], alpha[j] = _pair_of_same_label(old_ai, old_aj, G[i], G[j], qi[j], Ci, Cj)
    ui = status[i] == UPPER
    uj = status[j] == UPPER
    status[i] = bound_status(alpha[i], Ci)
    status[j] = bound_status(alpha[j], Cj)
    up = update_gradient(state, y, active, qi, qj, (alpha[i] - old_ai, alpha[j] - old_aj))
    if ui != (status[i] == UPPER):
        _update_g_bar(state, rows, i, ui, Ci)
    if uj != (status[j] == UPPER):
        _update_g_bar(state, rows, j, uj, Cj)
    return up


@njit(cache=True, nogil=True)
def calculate_rho(active, y, status, G, alpha, C_positive, C_negative):
    """LibSVM's rho: the mean of y G over the free positions, else the middle of the interval
    the positions at a bound leave for it. Where every free alpha lies within rounding of its
    bound (``rounded_status``), those count as at it and rho is the middle: LibSVM's rule would
    take one end of the interval."""
    n_free = 0
    n_truly_free = 0
    ub = INF
    lb = -INF
    sum_free = 0.0
    for i in range(active):
        yg = y[i] * G[i]
        s = status[i]
        if s == FREE:
            n_free += 1
            sum_free += yg
            s = rounded_status(alpha[i], C_positive if y[i] > 0 else C_negative)
            if s == FREE:
                n_truly_free += 1
        if s == UPPER:
            if y[i] < 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
        elif s == LOWER:
            if y[i] > 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
    if n_truly_free > 0:
        return sum_free / n_free
    return (ub + lb) / 2.0


@njit(cache=True, nogil=True)
def smo_loop(state, rows_rest, cache_rows, shared_rows, C_positive, C_negative, eps, shrinking, max_iter,
             growth_after, growth_values):
    """Run SMO from a state whose gradient is initialised; arrays are permuted in place.

    ``C_positive`` and ``C_negative`` bound the alphas of the +1 and the -1 instances (LibSVM's
    Cp and Cn: C times each class's weight). Once ``growth_after`` iterations are done, the row
    cache's budget grows by ``growth_values`` kernel values (0: never); the cache changes which
    rows are computed again, never the values or the steps.

    Returns (rho, objective, iterations, cap_hit); ``state.perm[p]`` is the caller's position
    of the instance now at position p.
    """
    state, rows = borrowed_loop_inputs(state, rows_together(rows_rest, cache_rows, shared_rows))
    l = state.alpha.shape[0]
    # max_up of the current state, once the previous step's gradient update has computed it.
    up_known = False
    gmax = -INF
    gmax_idx = -1
    gmax2 = -INF
    active = l
    unshrunk = False
    it = 0
    counter = min(l, 1000) + 1
    while it < max_iter:
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            if growth_values > 0 and it >= growth_after:
                raise_budget(rows.cache, growth_values)
                growth_values = 0
            if shrinking:
                active, unshrunk = do_shrinking(state, rows, active, eps, unshrunk)
                up_known = False
        if not up_known:
            gmax, gmax_idx, gmax2 = max_up(state, rows.y, active)
        i, j = select_working_set(state, rows, active, eps, gmax, gmax_idx, gmax2)
        if i < 0:
            active = unshrink(state, rows, active)
            gmax, gmax_idx, gmax2 = max_up(state, rows.y, active)
            i, j = select_working_set(state, rows, active, eps, gmax, gmax_idx, gmax2)
            if i < 0:
                break
            counter = 1
        it += 1
        state.events[ACTIVE_SUM] += active
        gmax, gmax_idx, gmax2 = _update(state, rows, active, i, j, C_positive, C_negative)
        up_known = True

    cap_hit = it >= max_iter
    if cap_hit:
        active = unshrink(state, rows, active)
    rho = calculate_rho(active, rows.y, state.status, state.G, state.alpha, C_positive, C_negative)
    v = 0.0
    for t in range(l):
        v += state.alpha[t] * (state.G[t] - 1.0)
    return rho, v / 2.0, it, cap_hit
