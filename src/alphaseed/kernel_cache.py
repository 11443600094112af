"""LRU caches of kernel rows, and where their values come from.

The solver keeps, per training run, an LRU cache of rows of Q (Q_ij = y_i y_j K_ij) addressed
by solver position, as LibSVM does. A missing row is filled from the kernel's *row source*:

- ``COMPUTE``: evaluate K directly (the LibSVM-like ``cache`` mode);
- ``GRAM``: gather from the full n x n float32 kernel matrix (``gram`` mode);
- ``SHARED``: gather from a second LRU cache of full rows of K keyed by global instance index,
  which lives as long as the kernel and so serves every round of a cross-validation and the
  seeders (``shared`` mode).

Every source stores float32(kernel_value(...)), so a value never depends on the mode.

A cache is a tuple ``(data[slots, width] float32, slot_of_key, key_of_slot, valid_len, prev,
next, used)``. The LRU list is circular with a sentinel at index ``slots``: ``next[sentinel]``
is the least recently used slot, ``prev[sentinel]`` the most recently used. Rows have room for
``width`` values but hold only the prefix computed so far (``valid_len``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .gaussian import kernel_value

COMPUTE, GRAM, SHARED = 0, 1, 2
# Rows shorter than this many multiply-adds are filled serially: waking threads costs more.
PARALLEL_ROW_WORK = 1 << 16


def new_cache(keys: int, width: int, budget_bytes: float):
    """An empty cache for ``keys`` rows of ``width`` float32 values within ``budget_bytes``."""
    slots = int(budget_bytes // (4 * max(width, 1)))
    slots = max(min(2, keys), min(keys, slots))
    data = np.empty((slots, width), dtype=np.float32)
    slot_of_key = np.full(keys, -1, dtype=np.int64)
    key_of_slot = np.full(slots, -1, dtype=np.int64)
    valid_len = np.zeros(slots, dtype=np.int64)
    prev = np.empty(slots + 1, dtype=np.int64)
    nxt = np.empty(slots + 1, dtype=np.int64)
    prev[slots] = slots
    nxt[slots] = slots
    used = np.zeros(1, dtype=np.int64)
    return data, slot_of_key, key_of_slot, valid_len, prev, nxt, used


def compute_source():
    """The row source of the ``cache`` mode (the unused members keep one compiled signature)."""
    return (COMPUTE, np.empty((0, 0), np.float32), new_cache(0, 0, 0), np.empty(0, np.int64),
            np.empty(0))


def gram_source(gram):
    return (GRAM, gram, new_cache(0, 0, 0), np.empty(0, np.int64), np.empty(0))


def shared_source(n: int, budget_bytes: float):
    return (SHARED, np.empty((0, 0), np.float32), new_cache(n, n, budget_bytes),
            np.arange(n, dtype=np.int64), np.ones(n))


@njit(cache=True)
def _lru_unlink(prev, nxt, s):
    nxt[prev[s]] = nxt[s]
    prev[nxt[s]] = prev[s]


@njit(cache=True)
def _lru_push_mru(prev, nxt, s):
    head = prev.shape[0] - 1
    nxt[s] = head
    prev[s] = prev[head]
    nxt[prev[head]] = s
    prev[head] = s


@njit(cache=True)
def _acquire(cache, key):
    """The slot holding ``key``'s row, now most recently used; a new slot has no valid values."""
    data, slot_of_key, key_of_slot, valid_len, prev, nxt, used = cache
    slots = data.shape[0]
    s = slot_of_key[key]
    if s >= 0:
        _lru_unlink(prev, nxt, s)
    else:
        if used[0] < slots:
            s = used[0]
            used[0] += 1
        else:
            s = nxt[slots]
            _lru_unlink(prev, nxt, s)
            slot_of_key[key_of_slot[s]] = -1
        slot_of_key[key] = s
        key_of_slot[s] = key
        valid_len[s] = 0
    _lru_push_mru(prev, nxt, s)
    return s


@njit(cache=True)
def _fill_serial(out, X, sqnorm, gamma, gidx, y, p, start, stop):
    gi = gidx[p]
    yi = y[p]
    for c in range(start, stop):
        out[c] = np.float32(yi * y[c] * kernel_value(X, sqnorm, gamma, gi, gidx[c]))


@njit(cache=True, parallel=True)
def _fill_parallel(out, X, sqnorm, gamma, gidx, y, p, start, stop):
    gi = gidx[p]
    yi = y[p]
    for c in prange(start, stop):
        out[c] = np.float32(yi * y[c] * kernel_value(X, sqnorm, gamma, gi, gidx[c]))


@njit(cache=True)
def _compute(out, X, sqnorm, gamma, gidx, y, p, start, stop):
    if (stop - start) * X.shape[1] >= PARALLEL_ROW_WORK:
        _fill_parallel(out, X, sqnorm, gamma, gidx, y, p, start, stop)
    else:
        _fill_serial(out, X, sqnorm, gamma, gidx, y, p, start, stop)


@njit(cache=True)
def global_row(g, X, sqnorm, gamma, source):
    """Slot of the shared cache whose row holds K[g, :] over all instances."""
    shared = source[2]
    n = shared[1].shape[0]
    s = _acquire(shared, g)
    if shared[3][s] < n:
        _compute(shared[0][s], X, sqnorm, gamma, source[3], source[4], g, 0, n)
        shared[3][s] = n
    return s


@njit(cache=True)
def get_q(p, length, X, sqnorm, gamma, gidx, y, cache, source):
    """Slot of ``cache`` whose row holds Q[p, 0:length] (filling the missing tail)."""
    s = _acquire(cache, p)
    start = cache[3][s]
    if start < length:
        out = cache[0][s]
        mode = source[0]
        if mode == GRAM:
            row = source[1][gidx[p]]
            yp = y[p]
            for c in range(start, length):
                out[c] = np.float32(yp * y[c]) * row[gidx[c]]
        elif mode == SHARED:
            row = source[2][0][global_row(gidx[p], X, sqnorm, gamma, source)]
            yp = y[p]
            for c in range(start, length):
                out[c] = np.float32(yp * y[c]) * row[gidx[c]]
        else:
            _compute(out, X, sqnorm, gamma, gidx, y, p, start, length)
        cache[3][s] = length
    return s


@njit(cache=True)
def cache_swap(cache, i, j):
    """Exchange the keys i and j, as LibSVM's Cache::swap_index does for shrinking."""
    data, slot_of_key, key_of_slot, valid_len, prev, nxt, used = cache
    si = slot_of_key[i]
    sj = slot_of_key[j]
    slot_of_key[i] = sj
    slot_of_key[j] = si
    if sj >= 0:
        key_of_slot[sj] = i
    if si >= 0:
        key_of_slot[si] = j
    lo = min(i, j)
    hi = max(i, j)
    for s in range(used[0]):
        if valid_len[s] > hi:
            tmp = data[s, lo]
            data[s, lo] = data[s, hi]
            data[s, hi] = tmp
        elif valid_len[s] > lo:
            # Column hi was never computed for this row, so the swapped-in value is unknown:
            # keep the prefix that is still valid (LibSVM drops the whole row here).
            valid_len[s] = lo


@njit(cache=True)
def shared_block(X, sqnorm, gamma, source, rows, cols):
    """K[rows][:, cols] read through the shared cache (computing missing rows once)."""
    out = np.empty((rows.shape[0], cols.shape[0]), dtype=np.float32)
    data = source[2][0]
    for a in range(rows.shape[0]):
        row = data[global_row(rows[a], X, sqnorm, gamma, source)]
        for b in range(cols.shape[0]):
            out[a, b] = row[cols[b]]
    return out
