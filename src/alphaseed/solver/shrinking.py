"""LibSVM's shrinking: instances that cannot move leave the active set, and their gradients
are reconstructed when they are let back in (the unshrink, and the final check)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernel import GRAM, VALUES_COMPUTED, cache_swap_columns, times_sign
from .selection import chunk_bounds
from .state import (
    FREE, INF, LOWER, RECONSTRUCTION_VALUES, RECONSTRUCTIONS, UPPER, in_low, in_up, q_row,
    row_source_of, swap_index,
)


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
    gram = row_source_of(rows).gram
    gidx = rows.gidx
    y = rows.y
    chunks = state.threads
    l = alpha.shape[0]
    free = np.flatnonzero(status[:active] == FREE)
    # Each thread's inactive positions, by column: the walk over free rows then reads each row
    # forward (the walk over inactive rows must read the free columns in position order).
    inactive = active + np.argsort(gidx[active:l])
    for c in prange(chunks):
        lo, hi = chunk_bounds(l - active, chunks, c)
        if walk_inactive:
            _gram_rows_of_inactive(G, gram, gidx, y, alpha, free, inactive[lo:hi])
        else:
            _gram_rows_of_free(G, gram, gidx, y, alpha, free, inactive[lo:hi])


# Both walks take four Gram rows at a time: each G[j] still adds its terms in LibSVM's order,
# but a row's values are read once for four sums and four rows stream from memory at once,
# where one row at a time waited on each of its cache lines (the walks were most of an SMO
# run on an MNIST pair, whose Gram rows do not fit in cache).
@njit(cache=True, nogil=True)
def _gram_rows_of_free(G, gram, gidx, y, alpha, free, targets):
    """G[t] += alpha_i Q_it for each target t, over the free i in order, four rows of them at
    a time."""
    columns = gidx[targets]
    signs = y[targets]
    sums = G[targets]
    for f in range(0, free.shape[0], 4):
        count = min(4, free.shape[0] - f)
        i0, i1, i2, i3 = free[f], free[f + min(1, count - 1)], free[f + min(2, count - 1)], free[f + count - 1]
        r0, r1, r2, r3 = gram[gidx[i0]], gram[gidx[i1]], gram[gidx[i2]], gram[gidx[i3]]
        for k in range(targets.shape[0]):
            c = columns[k]
            s = signs[k]
            g = sums[k] + alpha[i0] * times_sign(np.float32(y[i0] * s), r0[c])
            if count > 1:
                g += alpha[i1] * times_sign(np.float32(y[i1] * s), r1[c])
            if count > 2:
                g += alpha[i2] * times_sign(np.float32(y[i2] * s), r2[c])
            if count > 3:
                g += alpha[i3] * times_sign(np.float32(y[i3] * s), r3[c])
            sums[k] = g
    G[targets] = sums


@njit(cache=True, nogil=True)
def _gram_rows_of_inactive(G, gram, gidx, y, alpha, free, targets):
    """G[t] += the sum of alpha_j Q_tj over the free j in order, for each target t, four
    targets' rows at a time."""
    columns = gidx[free]
    for k in range(0, targets.shape[0], 4):
        count = min(4, targets.shape[0] - k)
        t0, t1, t2, t3 = (targets[k], targets[k + min(1, count - 1)], targets[k + min(2, count - 1)],
                          targets[k + count - 1])
        r0, r1, r2, r3 = gram[gidx[t0]], gram[gidx[t1]], gram[gidx[t2]], gram[gidx[t3]]
        s0, s1, s2, s3 = G[t0], G[t1], G[t2], G[t3]
        for f in range(free.shape[0]):
            j = free[f]
            c = columns[f]
            a = alpha[j]
            s0 += a * times_sign(np.float32(y[t0] * y[j]), r0[c])
            s1 += a * times_sign(np.float32(y[t1] * y[j]), r1[c])
            s2 += a * times_sign(np.float32(y[t2] * y[j]), r2[c])
            s3 += a * times_sign(np.float32(y[t3] * y[j]), r3[c])
        # A short group repeats its last target: its sum is the same, stored last.
        G[t0] = s0
        G[t1] = s1
        G[t2] = s2
        G[t3] = s3


# Rows of inactive instances, taken four at a time: each G[i] is still summed over the free
# alphas in LibSVM's order, but four independent sums hide the latency of each addition, where
# one sum at a time waits on the one before. The rows are requested in LibSVM's order; a row
# evicted by the next request stays valid while it is held.
@njit(cache=True, nogil=True)
def _walk_inactive(state, rows, active):
    """G[i] += sum of alpha_j Q_ij over the free j, for each inactive i (LibSVM's walk)."""
    alpha, status, G = state.alpha, state.status, state.G
    l = alpha.shape[0]
    free = np.flatnonzero(status[:active] == FREE)
    free_alpha = alpha[free]
    for i in range(active, l, 4):
        count = min(4, l - i)
        q0 = q_row(rows, i, active)
        q1 = q_row(rows, i + 1, active) if count > 1 else q0
        q2 = q_row(rows, i + 2, active) if count > 2 else q0
        q3 = q_row(rows, i + 3, active) if count > 3 else q0
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
    if row_source_of(rows).kind == GRAM:
        _reconstruct_from_gram(state, rows, active, walk_inactive)
    elif walk_inactive:
        _walk_inactive(state, rows, active)
    else:
        inactive_G = G[active:l]
        for i in range(active):
            if status[i] == FREE:
                inactive_q = q_row(rows, i, l)[active:l]
                a = alpha[i]
                for k in range(inactive_G.shape[0]):
                    inactive_G[k] += a * inactive_q[k]


@njit(cache=True, nogil=True)
def unshrink(state, rows, active):
    """Reconstruct the inactive gradients, counting the event; returns the new active size."""
    l = state.alpha.shape[0]
    if active < l:
        counts = rows.cache.counts
        computed = counts[VALUES_COMPUTED]
        _reconstruct_gradient(state, rows, active)
        state.events[RECONSTRUCTIONS] += 1
        state.events[RECONSTRUCTION_VALUES] += counts[VALUES_COMPUTED] - computed
    return l


@njit(cache=True, nogil=True)
def _be_shrunk(i, gmax1, gmax2, y, status, G):
    """LibSVM's be_shrunk: whether position i sits at a bound it is unlikely to leave, given
    gmax1 (the largest -y G over I_up) and gmax2 (the largest y G over I_low)."""
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
                    swap_index(state, rows, t, active)
                    swapped_lo[swaps] = t
                    swapped_hi[swaps] = active
                    swaps += 1
                    break
                active -= 1
        t += 1
    cache_swap_columns(rows.cache, swapped_lo, swapped_hi, swaps)
    return active


@njit(cache=True, nogil=True)
def do_shrinking(state, rows, active, eps, unshrunk):
    """LibSVM's do_shrinking: unshrink once when the gap first falls below 10 eps, then
    shrink. Returns (active size, unshrunk)."""
    y, status, G = rows.y, state.status, state.G
    gmax1 = -INF
    gmax2 = -INF
    for t in range(active):
        yg = y[t] * G[t]
        if in_up(y[t], status[t]) and -yg >= gmax1:
            gmax1 = -yg
        if in_low(y[t], status[t]) and yg >= gmax2:
            gmax2 = yg
    if not unshrunk and gmax1 + gmax2 <= eps * 10.0:
        unshrunk = True
        active = unshrink(state, rows, active)
    return _shrink(state, rows, active, gmax1, gmax2), unshrunk
