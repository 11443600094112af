"""LibSVM's shrinking: instances that cannot move leave the active set, and their gradients
are reconstructed when they are let back in (the unshrink, and the final check)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernel import GRAM, VALUES_COMPUTED, cache_swap_columns
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
    inactive = l - active
    for c in prange(chunks):
        lo, hi = chunk_bounds(inactive, chunks, c)
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
