"""LRU caches of kernel rows, as LibSVM's ``Cache``.

The solver keeps, per training run, an LRU cache of rows of Q (Q_ij = y_i y_j K_ij) addressed
by solver position: each row is allocated as long as it was last requested (shrinking makes
requests shorter), and the budget counts the values allocated, so the same budget holds as many
rows as LibSVM's. The ``shared`` kernel mode keeps a second such cache of full rows of K, keyed
by global instance index (``row_source``). What fills a missing row is the row source's job.

A cache is a ``RowCache``: ``rows[key]`` is the key's float32 row (empty when not cached), of
which the first ``valid_len[key]`` values are computed; the LRU list is circular, ``lru[PREV]``
and ``lru[NEXT]`` its links, with a sentinel at index ``keys``: ``lru[NEXT, sentinel]`` is the
least recently used key; ``counts`` holds the cache's running counts, indexed by the constants
below, and at ``BUDGET`` the budget left, in values. (Four members: every compiled call the
cache is passed through counts a reference to each, and the solver passes it several times an
iteration.)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.typed import List

# The counts a cache keeps (kernel values are the currency of the solver's cost): rows
# requested through get_q, requests answered without computing, requests that computed a row
# from scratch, requests that extended a row's computed prefix, values computed, rows evicted.
REQUESTS, HITS, ROWS_COMPUTED, ROWS_EXTENDED, VALUES_COMPUTED, EVICTIONS = range(6)
N_COUNTS = 6
BUDGET = N_COUNTS
PREV, NEXT = 0, 1

RowCache = namedtuple("RowCache", ["rows", "valid_len", "lru", "counts"])
RowCache.__doc__ = """An LRU cache of float32 kernel rows, as LibSVM's ``Cache`` (``new_cache`` makes one).

Four members, because every compiled call the cache is passed through counts a reference to
each (see the module doc).

Parameters
----------
rows : numba.typed.List
    Each key's float32 row, empty when not cached.
valid_len : ndarray
    How many of each key's first values are computed (int64).
lru : ndarray
    The circular LRU list's PREV and NEXT links (int64, 2 x (keys + 1)), the sentinel at index
    ``keys``.
counts : ndarray
    The running counts (int64: REQUESTS, HITS, ...) and, at ``BUDGET``, the budget left in values.
"""


@njit(cache=True, nogil=True)
def _empty_rows(keys):
    """A typed List of ``keys`` empty float32 rows."""
    rows = List()
    empty = np.empty(0, dtype=np.float32)   # never written: one serves every key
    for _ in range(keys):
        rows.append(empty)
    return rows


def new_cache(keys: int, budget_bytes: float) -> RowCache:
    """An empty cache for ``keys`` rows of up to ``keys`` values within ``budget_bytes``.

    Like LibSVM, the budget is raised to two full rows, so a working pair always fits.

    Parameters
    ----------
    keys : int
        The number of rows it may hold, and the length of the longest.
    budget_bytes : float
        The memory its rows may take.

    Returns
    -------
    RowCache
    """
    counts = np.zeros(N_COUNTS + 1, dtype=np.int64)
    counts[BUDGET] = budget_values(keys, budget_bytes)
    lru = np.full((2, keys + 1), keys, dtype=np.int64)
    return RowCache(_empty_rows(keys), np.zeros(keys, dtype=np.int64), lru, counts)


def budget_values(keys: int, budget_bytes: float) -> int:
    """The float32 values a cache of ``keys`` rows holds within ``budget_bytes``: at least two
    full rows, as LibSVM raises it, so that a working pair always fits."""
    return max(int(budget_bytes // 4), 2 * keys)


# Numba types a tuple argument that holds a typed List in Python, on every call from Python,
# but a typed List alone, or a tuple of arrays, at C speed. So caches and sources cross from
# Python into compiled code with their Lists apart (``cache_apart``, ``source_apart``) and are
# put back together there.
def cache_apart(cache: RowCache) -> tuple:
    """(the cache's List of rows, a tuple of the rest of it), for ``cache_together``."""
    return cache.rows, tuple(cache[1:])


@njit(cache=True, nogil=True)
def cache_together(rows, rest):
    """The RowCache of ``cache_apart``'s parts."""
    return RowCache(rows, rest[0], rest[1], rest[2])


@njit(cache=True, nogil=True)
def _lru_unlink(lru, s):
    """Take key s out of the LRU list."""
    lru[NEXT, lru[PREV, s]] = lru[NEXT, s]
    lru[PREV, lru[NEXT, s]] = lru[PREV, s]


@njit(cache=True, nogil=True)
def _lru_push_mru(lru, s):
    """Put key s at the most recently used end of the LRU list, just before the sentinel."""
    head = lru.shape[1] - 1
    lru[NEXT, s] = head
    lru[PREV, s] = lru[PREV, head]
    lru[NEXT, lru[PREV, head]] = s
    lru[PREV, head] = s


@njit(cache=True, nogil=True)
def acquire(cache, key, length):
    """``key``'s row, now most recently used and allocated for at least ``length`` values.

    A row too short is reallocated (keeping its computed prefix) after evicting least recently
    used rows until the budget allows it, as LibSVM's ``Cache::get_data`` does.
    """
    rows, valid_len, lru, counts = cache
    sentinel = lru.shape[1] - 1
    row = rows[key]
    if row.size > 0:
        _lru_unlink(lru, key)
    if row.size < length:
        more = length - row.size
        while counts[BUDGET] < more and lru[NEXT, sentinel] != sentinel:
            old = lru[NEXT, sentinel]
            _lru_unlink(lru, old)
            counts[BUDGET] += rows[old].size
            rows[old] = np.empty(0, dtype=np.float32)
            valid_len[old] = 0
            counts[EVICTIONS] += 1
        grown = np.empty(length, dtype=np.float32)
        grown[:valid_len[key]] = row[:valid_len[key]]
        rows[key] = grown
        counts[BUDGET] -= more
        row = grown
    _lru_push_mru(lru, key)
    return row


@njit(cache=True, nogil=True)
def raise_budget(cache, values):
    """Let ``cache`` hold ``values`` more kernel values than its budget did."""
    cache.counts[BUDGET] += values


@njit(cache=True, nogil=True)
def count_request(counts, start, length):
    """Count a request for a row's first ``length`` values, of which ``start`` are computed."""
    counts[REQUESTS] += 1
    if start >= length:
        counts[HITS] += 1
    else:
        counts[ROWS_COMPUTED if start == 0 else ROWS_EXTENDED] += 1
        counts[VALUES_COMPUTED] += length - start


@njit(cache=True, nogil=True)
def cached_q(p, length, cache):
    """(True, row p of Q) when ``cache`` holds its first ``length`` values, the request counted
    and the row made most recently used as ``get_q`` would; else (False, any array) and nothing
    changes. A hit needs nothing of the kernel: callers try it before gathering get_q's
    arguments, and it touches the LRU list itself, as LibSVM's ``Cache::get_data`` does, rather
    than through ``acquire`` (each call passing the cache costs its reference counts)."""
    rows, valid_len, lru, counts = cache
    row = rows[p]
    # An empty row is not in the LRU list to be moved: left to get_q, as any length-0 request.
    if valid_len[p] < length or row.size == 0:
        return False, row
    _lru_unlink(lru, p)
    _lru_push_mru(lru, p)
    count_request(counts, valid_len[p], length)
    return True, row


@njit(cache=True, nogil=True)
def cache_swap_keys(cache, i, j):
    """Exchange the rows of keys i and j, re-inserted as most recently used as LibSVM's
    ``Cache::swap_index`` does (it keeps the eviction order the same). The rows' columns i and
    j are exchanged apart, by ``cache_swap_columns``."""
    if i == j:
        return
    rows, valid_len, lru, counts = cache
    if rows[i].size > 0:
        _lru_unlink(lru, i)
    if rows[j].size > 0:
        _lru_unlink(lru, j)
    row_i = rows[i]
    rows[i] = rows[j]
    rows[j] = row_i
    len_i = valid_len[i]
    valid_len[i] = valid_len[j]
    valid_len[j] = len_i
    if rows[i].size > 0:
        _lru_push_mru(lru, i)
    if rows[j].size > 0:
        _lru_push_mru(lru, j)


@njit(cache=True, nogil=True)
def cache_swap_columns(cache, first, second, count):
    """Exchange columns first[k] and second[k] of every cached row, for k = 0..count-1 in order.

    Shrinking swaps many positions at once; exchanging them row by row, rather than every row
    per swap, keeps each row in cache while it is permuted.
    """
    rows, valid_len, lru, counts = cache
    sentinel = lru.shape[1] - 1
    key = lru[NEXT, sentinel]
    while key != sentinel:
        row = rows[key]
        length = valid_len[key]
        for k in range(count):
            lo = min(first[k], second[k])
            hi = max(first[k], second[k])
            if length > hi:
                tmp = row[lo]
                row[lo] = row[hi]
                row[hi] = tmp
            elif length > lo:
                # Column hi was never computed for this row, so the swapped-in value is
                # unknown: keep the prefix that is still valid (LibSVM drops the whole row).
                length = lo
        valid_len[key] = length
        key = lru[NEXT, key]
