"""LRU caches of kernel rows, and where their values come from.

The solver keeps, per training run, an LRU cache of rows of Q (Q_ij = y_i y_j K_ij) addressed
by solver position, as LibSVM's ``Cache`` does: each row is allocated as long as it was last
requested (shrinking makes requests shorter), and the budget counts the values allocated, so
the same budget holds as many rows as LibSVM's. A missing part of a row is filled from the
kernel's *row source*:

- ``COMPUTE``: evaluate K directly (the LibSVM-like ``cache`` mode);
- ``GRAM``: gather from the full n x n float32 kernel matrix (``gram`` mode);
- ``SHARED``: gather from a second LRU cache of full rows of K keyed by global instance index,
  which lives as long as the kernel and so serves every round of a cross-validation and the
  seeders (``shared`` mode);
- ``IN_ORDER``: evaluate K from bit sets copied into one solver's position order
  (``solver_source``: binary data in ``cache`` mode).

Every source stores float32 values of ``kernel_values``, so a value never depends on the mode. A
source's last member is the data's ``compact_rows``: rows computed here take their dot products
from it where it holds X (bit sets or non-zeros).

A cache is a tuple ``(rows, valid_len, lru, counts)``: ``rows[key]`` is the key's float32 row
(empty when not cached), of which the first ``valid_len[key]`` values are computed; the LRU
list is circular, ``lru[PREV]`` and ``lru[NEXT]`` its links, with a sentinel at index ``keys``:
``lru[NEXT, sentinel]`` is the least recently used key; ``counts`` holds the cache's running
counts, indexed by the constants below, and at ``BUDGET`` the budget left, in values. (Four
members rather than six: every compiled call the cache is passed through counts a reference to
each, and the solver passes it several times an iteration.)
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.typed import List

from .gaussian import dense_rows, kernel_values, popcount, signed_lookup

COMPUTE, GRAM, SHARED, IN_ORDER = 0, 1, 2, 3
# The counts a cache keeps (kernel values are the currency of the solver's cost): rows
# requested through get_q, requests answered without computing, requests that computed a row
# from scratch, requests that extended a row's computed prefix, values computed, rows evicted.
REQUESTS, HITS, ROWS_COMPUTED, ROWS_EXTENDED, VALUES_COMPUTED, EVICTIONS = range(6)
N_COUNTS = 6
BUDGET = N_COUNTS
COUNTS = 3   # the counts' place in a cache tuple
PREV, NEXT = 0, 1
# Rows shorter than this many multiply-adds are filled serially: waking threads costs more.
PARALLEL_ROW_WORK = 1 << 16
# Columns of a row filled by one parallel task: many tasks per row, for an even share.
PARALLEL_ROW_CHUNK = 256


@njit(cache=True, nogil=True)
def _empty_rows(keys):
    rows = List()
    empty = np.empty(0, dtype=np.float32)   # never written: one serves every key
    for _ in range(keys):
        rows.append(empty)
    return rows


def new_cache(keys: int, budget_bytes: float):
    """An empty cache for ``keys`` rows of up to ``keys`` values within ``budget_bytes``.

    Like LibSVM, the budget is raised to two full rows, so a working pair always fits.
    """
    counts = np.zeros(N_COUNTS + 1, dtype=np.int64)
    counts[BUDGET] = max(int(budget_bytes // 4), 2 * keys)
    lru = np.full((2, keys + 1), keys, dtype=np.int64)
    return _empty_rows(keys), np.zeros(keys, dtype=np.int64), lru, counts


# Numba types a tuple argument that holds a typed List in Python, on every call from Python
# (0.05-0.1 ms for a cache or a source here), but a typed List alone, or a tuple of arrays, at
# C speed. So caches and sources cross from Python into compiled code with their Lists apart
# (``cache_apart``, ``source_apart``) and are put back together there.
def cache_apart(cache):
    """(the cache's List of rows, the rest of it)."""
    return cache[0], cache[1:]


@njit(cache=True, nogil=True)
def cache_together(rows, rest):
    return (rows,) + rest


def source_apart(source):
    """(the List of rows of the source's shared cache, the rest of the source)."""
    rows, rest = cache_apart(source[2])
    return rows, source[:2] + (rest,) + source[3:]


@njit(cache=True, nogil=True)
def source_together(rows, rest):
    return rest[:2] + (cache_together(rows, rest[2]),) + rest[3:]


def compute_source(compact):
    """The row source of the ``cache`` mode (the unused members keep one compiled signature)."""
    return (COMPUTE, np.empty((0, 0), np.float32), new_cache(0, 0), np.empty(0, np.int64),
            np.empty(0), compact)


def solver_source(source, gidx: np.ndarray):
    """``source`` as one solver over the instances ``gidx`` reads it, with scratch of its own:
    where it computes rows from bit sets, an ``IN_ORDER`` source holding a copy of them in the
    solver's position order; from the Gram matrix, room for a copy of one of its rows (see
    ``_gathered``); otherwise ``source`` itself.

    The bit sets' copy is word-major (word w of position c at ``[w, c]``), so a row's distances
    are summed two words at a time over consecutive positions, a loop the compiler vectorises
    (AVX-512's vector popcount where the processor has it), and the solver swaps the copy's
    columns as it swaps positions, as LibSVM's ``Kernel::swap_index`` swaps its rows' pointers.
    The source's fourth member is its scratch, int64 for one signature: room for an int32
    distance per position, or for a float32 Gram value per instance.
    A row of 29,304 values, one thread: 0.50 ns a value on full Adult against 2.25 ns gathered
    through ``gidx`` by ``_compute``; 44,774 values of full Webdata (5 words): 1.16 against 3.40 ns.
    """
    if source[0] == GRAM:
        return source[:3] + (np.empty((source[1].shape[0] + 1) // 2, dtype=np.int64),) + source[4:]
    compact = source[5]
    if source[0] != COMPUTE or compact[3].shape[0] == 0:
        return source
    bits = np.ascontiguousarray(compact[3][gidx].T)
    return ((IN_ORDER,) + source[1:3] + (np.empty((gidx.size + 1) // 2, dtype=np.int64), source[4])
            + (compact[:3] + (bits,) + compact[4:],))


@njit(cache=True, nogil=True)
def source_swap(source, i, j):
    """Positions i and j exchanged in an ``IN_ORDER`` source; nothing for another."""
    if source[0] != IN_ORDER:
        return
    bits = source[5][3]
    for w in range(bits.shape[0]):
        tmp = bits[w, i]
        bits[w, i] = bits[w, j]
        bits[w, j] = tmp


# The loops run over slices from 0: over range(start, stop) Numba must allow a negative index,
# and that check kept LLVM from vectorising them (2.6 against 0.7 ns a value on full Adult).
# Words are summed two to a pass into int32 distances: half the passes over the distances,
# twice the lanes (rows of full Webdata, 5 words: 1.38 -> 1.16 ns a value; Adult, 2: 0.63 -> 0.50).
@njit(cache=True, nogil=True)
def _bits_in_order_serial(out, bits, by_distance, distance, row_words, sign, y, start, stop):
    d = distance[start:stop]
    words = bits.shape[0]
    if words % 2:
        word = row_words[0]
        column = bits[0, start:stop]
        for k in range(d.shape[0]):
            d[k] = np.int32(popcount(column[k] ^ word))
    else:
        d[:] = 0
    for w in range(words % 2, words, 2):
        first_word = row_words[w]
        second_word = row_words[w + 1]
        first = bits[w, start:stop]
        second = bits[w + 1, start:stop]
        for k in range(d.shape[0]):
            d[k] += np.int32(popcount(first[k] ^ first_word) + popcount(second[k] ^ second_word))
    signed_lookup(out[start:stop], d, by_distance, y[start:stop], sign)


@njit(cache=True, nogil=True, parallel=True)
def _bits_in_order_parallel(out, bits, by_distance, distance, row_words, sign, y, start, stop):
    for t in prange((stop - start + PARALLEL_ROW_CHUNK - 1) // PARALLEL_ROW_CHUNK):
        first = start + t * PARALLEL_ROW_CHUNK
        _bits_in_order_serial(out, bits, by_distance, distance, row_words, sign, y, first,
                              min(stop, first + PARALLEL_ROW_CHUNK))


@njit(cache=True, nogil=True)
def _bits_in_order(out, source, row_words, sign, y, start, stop):
    """``_compute``'s values of bit-set rows held in position order (``solver_source``):
    out[c] = sign y_c K(x, c), the float32 value of the distance's kernel times the sign, for
    the instance x whose bit set is ``row_words`` (a column of the copy, or of an instance
    outside it)."""
    # The distances are int32 in the int64 scratch's memory, which keeps every source's types.
    bits, by_distance, distance = source[5][3], source[5][4], source[3].view(np.int32)
    if (stop - start) * bits.shape[0] >= PARALLEL_ROW_WORK:
        _bits_in_order_parallel(out, bits, by_distance, distance, row_words, sign, y, start, stop)
    else:
        _bits_in_order_serial(out, bits, by_distance, distance, row_words, sign, y, start, stop)


def gram_source(gram):
    return (GRAM, gram, new_cache(0, 0), np.empty(0, np.int64), np.empty(0), dense_rows())


def shared_source(n: int, budget_bytes: float, compact):
    return (SHARED, np.empty((0, 0), np.float32), new_cache(n, budget_bytes),
            np.arange(n, dtype=np.int64), np.ones(n), compact)


@njit(cache=True, nogil=True)
def _lru_unlink(lru, s):
    lru[NEXT, lru[PREV, s]] = lru[NEXT, s]
    lru[PREV, lru[NEXT, s]] = lru[PREV, s]


@njit(cache=True, nogil=True)
def _lru_push_mru(lru, s):
    head = lru.shape[1] - 1
    lru[NEXT, s] = head
    lru[PREV, s] = lru[PREV, head]
    lru[NEXT, lru[PREV, head]] = s
    lru[PREV, head] = s


@njit(cache=True, nogil=True)
def _acquire(cache, key, length):
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
def _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    """out[c] = sign y_c K(x_g, x_gidx[c]) for start <= c < stop. The sign is applied to the
    float32 value, exactly as to the float64 one."""
    kernel_values(out[start:stop], X, sqnorm, gamma, g, gidx[start:stop], compact)
    for c in range(start, stop):
        out[c] = np.float32(sign * y[c]) * out[c]


@njit(cache=True, nogil=True, parallel=True)
def _fill_parallel(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    for t in prange((stop - start + PARALLEL_ROW_CHUNK - 1) // PARALLEL_ROW_CHUNK):
        first = start + t * PARALLEL_ROW_CHUNK
        _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, first,
                     min(stop, first + PARALLEL_ROW_CHUNK), compact)


@njit(cache=True, nogil=True)
def _compute(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    # Multiply-adds per value: a row's words or non-zeros (on average) in a compact form, else
    # its features (dense, or int16 rows at about the same cost).
    if compact[3].shape[0]:
        per_value = compact[3].shape[1]
    elif compact[0].shape[0]:
        per_value = compact[2].shape[0] // max(X.shape[0], 1) + 1
    else:
        per_value = X.shape[1]
    if (stop - start) * per_value >= PARALLEL_ROW_WORK:
        _fill_parallel(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact)
    else:
        _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact)


@njit(cache=True, nogil=True)
def global_row(g, X, sqnorm, gamma, source):
    """The shared cache's row K[g, :] over all instances."""
    shared = source[2]
    n = shared[1].shape[0]
    row = _acquire(shared, g, n)
    if shared[1][g] < n:
        _compute(row, X, sqnorm, gamma, source[3], source[4], g, 1.0, 0, n, source[5])
        shared[1][g] = n
    return row


@njit(cache=True, nogil=True)
def _count_request(counts, start, length):
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
    than through ``_acquire`` (each call passing the cache costs its reference counts)."""
    rows, valid_len, lru, counts = cache
    row = rows[p]
    # An empty row is not in the LRU list to be moved: left to get_q, as any length-0 request.
    if valid_len[p] < length or row.size == 0:
        return False, row
    _lru_unlink(lru, p)
    _lru_push_mru(lru, p)
    _count_request(counts, valid_len[p], length)
    return True, row


@njit(cache=True, nogil=True)
def _gathered(out, g, sign, X, sqnorm, gamma, gidx, y, source, start, stop):
    """out[c] = sign y_c K(x_g, x_gidx[c]) for start <= c < stop, gathered from a full row of K
    over all instances: the Gram matrix's or the shared cache's.

    A Gram row is first copied into the solver's scratch (``solver_source``): read in order, it
    streams from memory, while gathered in the order of ``gidx`` (shuffled by shrinking) each
    value waited for a cache line of its own. A first round at one thread, Gram rows of 20,000
    values (the MNIST sample): 2.46-2.61 -> 2.21-2.28 s; of 32,561 (full Adult): 6.8 -> 4.6 s.
    (The copy is a loop: through a slice of the scratch's float32 view it took as long as no
    copy.)"""
    if source[0] == GRAM:
        row = source[3].view(np.float32)
        gram_row = source[1][g]
        for k in range(gram_row.shape[0]):
            row[k] = gram_row[k]
    else:
        row = global_row(g, X, sqnorm, gamma, source)
    for c in range(start, stop):
        out[c] = np.float32(sign * y[c]) * row[gidx[c]]


@njit(cache=True, nogil=True)
def get_q(p, length, X, sqnorm, gamma, gidx, y, cache, source):
    """Row p of Q in ``cache``, its first ``length`` values computed (filling the missing tail)."""
    out = _acquire(cache, p, length)
    valid_len = cache[1]
    start = valid_len[p]
    _count_request(cache[COUNTS], start, length)
    if start < length:
        mode = source[0]
        if mode == COMPUTE:
            _compute(out, X, sqnorm, gamma, gidx, y, gidx[p], y[p], start, length, source[5])
        elif mode == IN_ORDER:
            _bits_in_order(out, source, source[5][3][:, p], y[p], y, start, length)
        else:
            _gathered(out, gidx[p], y[p], X, sqnorm, gamma, gidx, y, source, start, length)
        valid_len[p] = length
    return out


@njit(cache=True, nogil=True)
def outside_row(out, g, row_words, sign, X, sqnorm, gamma, gidx, y, source):
    """out[c] = sign y_c K(x_g, x_gidx[c]) at every position c for an instance g that is not
    among them (the gradient carry's instances that left the training set), computed or read
    as a row of Q is but kept out of the row cache. ``row_words`` is g's bit set where the
    source is ``IN_ORDER``."""
    l = gidx.shape[0]
    mode = source[0]
    if mode == COMPUTE:
        _compute(out, X, sqnorm, gamma, gidx, y, g, sign, 0, l, source[5])
    elif mode == IN_ORDER:
        _bits_in_order(out, source, row_words, sign, y, 0, l)
    else:
        _gathered(out, g, sign, X, sqnorm, gamma, gidx, y, source, 0, l)


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


@njit(cache=True, nogil=True)
def _shared_block(X, sqnorm, gamma, shared_rows, source_rest, rows, cols):
    source = source_together(shared_rows, source_rest)
    out = np.empty((rows.shape[0], cols.shape[0]), dtype=np.float32)
    for a in range(rows.shape[0]):
        row = global_row(rows[a], X, sqnorm, gamma, source)
        for b in range(cols.shape[0]):
            out[a, b] = row[cols[b]]
    return out


def shared_block(X, sqnorm, gamma, source, rows, cols):
    """K[rows][:, cols] read through the shared cache (computing missing rows once)."""
    return _shared_block(X, sqnorm, gamma, *source_apart(source), rows, cols)
