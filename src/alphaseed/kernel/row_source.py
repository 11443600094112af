"""Where a row cache's missing values come from: the kernel's *row source*.

- ``COMPUTE``: evaluate K directly (the LibSVM-like ``cache`` mode);
- ``GRAM``: gather from the full n x n float32 kernel matrix (``gram`` mode);
- ``SHARED``: gather from a second LRU cache of full rows of K keyed by global instance index,
  which lives as long as the kernel and so serves every round of a cross-validation and the
  seeders (``shared`` mode);
- ``IN_ORDER``: evaluate K from bit sets copied into one solver's position order
  (``solver_source``: binary data in ``cache`` mode).

Every source stores float32 values of ``values.kernel_values``, so a value never depends on
the mode. Rows computed here take their dot products from the data's ``compact`` rows where
they hold X (bit sets or non-zeros).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from .native import popcount, signed_lookup, times_sign
from .row_cache import acquire, cache_apart, cache_together, count_request, new_cache
from .values import dense_rows, kernel_values

COMPUTE, GRAM, SHARED, IN_ORDER = 0, 1, 2, 3
# Rows shorter than this many multiply-adds are filled serially: waking threads costs more.
PARALLEL_ROW_WORK = 1 << 16
# Columns of a row filled by one parallel task: many tasks per row, for an even share.
PARALLEL_ROW_CHUNK = 256

# Columns of a Gram row between two of a solver's instances that its copy reads anyway rather
# than start another run: a 64-byte line holds 16 float32, a run restarts the prefetcher.
SPAN_GAP = 64

RowSource = namedtuple("RowSource", ["kind", "gram", "shared", "every", "ones", "scratch", "compact", "spans"])
RowSource.__doc__ = """Where a row cache's missing values come from (``KernelMatrix.source``).

The members a kind does not use are empty, so every kind has one compiled type.

Parameters
----------
kind : int
    COMPUTE, GRAM, SHARED or IN_ORDER.
gram : ndarray
    The float32 Gram matrix (GRAM).
shared : RowCache
    The cache of full rows of K, keyed by global instance index (SHARED).
every : ndarray
    The positions 0..n-1 (int64) the shared cache's rows are computed over (SHARED).
ones : ndarray
    The signs, all 1.0, the shared cache's rows are computed with (SHARED).
scratch : ndarray
    One solver's room for a row's int32 distances (IN_ORDER) or a copied Gram row (GRAM),
    int64 so that every kind has one type.
compact : CompactRows
    X's compact rows, in the solver's position order for IN_ORDER.
spans : ndarray
    (start, stop) of the runs of columns a solver reads from a Gram row (GRAM, ``solver_source``),
    int64, (m, 2).
"""


def _no_rows():
    """(an empty Gram matrix, an empty cache, an empty int64 and float64 array)."""
    return np.empty((0, 0), np.float32), new_cache(0, 0), np.empty(0, np.int64), np.empty(0)


def _no_spans():
    return np.empty((0, 2), np.int64)


def compute_source(compact) -> RowSource:
    """The row source of the ``cache`` mode: rows computed from X (``compact``: its compact rows)."""
    gram, cache, no_index, no_signs = _no_rows()
    return RowSource(COMPUTE, gram, cache, no_index, no_signs, no_index, compact, _no_spans())


def gram_source(gram) -> RowSource:
    """The row source of the ``gram`` mode: rows gathered from ``gram``."""
    _, cache, no_index, no_signs = _no_rows()
    return RowSource(GRAM, gram, cache, no_index, no_signs, no_index, dense_rows(), _no_spans())


def shared_source(n: int, budget_bytes: float, compact) -> RowSource:
    """The row source of the ``shared`` mode: full rows of n values kept within ``budget_bytes``."""
    gram, _, no_index, _ = _no_rows()
    return RowSource(SHARED, gram, new_cache(n, budget_bytes), np.arange(n, dtype=np.int64),
                     np.ones(n), no_index, compact, _no_spans())


def source_apart(source: RowSource) -> tuple:
    """(the List of rows of the source's shared cache, the rest of the source), for
    ``source_together``."""
    rows, rest = cache_apart(source.shared)
    return rows, source._replace(shared=rest)


@njit(cache=True, nogil=True)
def source_together(rows, rest):
    """The RowSource of ``source_apart``'s parts."""
    return RowSource(rest.kind, rest.gram, cache_together(rows, rest.shared), rest.every, rest.ones,
                     rest.scratch, rest.compact, rest.spans)


def solver_source(source: RowSource, gidx: np.ndarray) -> RowSource:
    """``source`` as one solver over the instances ``gidx`` reads it, with scratch of its own:
    where it computes rows from bit sets, an ``IN_ORDER`` source holding a copy of them in the
    solver's position order; from the Gram matrix, room for a copy of one of its rows and the
    runs of columns the copy takes (``column_spans``, see ``_gathered``); otherwise ``source``
    itself.

    The bit sets' copy is word-major (word w of position c at ``[w, c]``), so a row's distances
    are summed two words at a time over consecutive positions, a loop the compiler vectorises
    (AVX-512's vector popcount where the processor has it), and the solver swaps the copy's
    columns as it swaps positions, as LibSVM's ``Kernel::swap_index`` swaps its rows' pointers.

    Parameters
    ----------
    source : RowSource
        A kernel's source (``KernelMatrix.source``).
    gidx : ndarray
        The solver's instances (global indices) in its position order.

    Returns
    -------
    RowSource
    """
    if source.kind == GRAM:
        return source._replace(scratch=np.empty((source.gram.shape[0] + 1) // 2, dtype=np.int64),
                               spans=column_spans(gidx))
    compact = source.compact
    if source.kind != COMPUTE or compact.bits.shape[0] == 0:
        return source
    return source._replace(kind=IN_ORDER, scratch=np.empty((gidx.size + 1) // 2, dtype=np.int64),
                           compact=compact._replace(bits=np.ascontiguousarray(compact.bits[gidx].T)))


def column_spans(columns: np.ndarray, gap: int = SPAN_GAP) -> np.ndarray:
    """The runs (start, stop) that cover ``columns``, two runs apart only where more than
    ``gap`` columns lie between them: where a Gram row's copy must read.

    Parameters
    ----------
    columns : ndarray
        Column indices, in any order.
    gap : int, default SPAN_GAP
        The most columns between two of them that one run takes in.

    Returns
    -------
    ndarray
        int64, (m, 2), in increasing order; (0, 2) for no columns.
    """
    cols = np.unique(columns).astype(np.int64)
    if cols.size == 0:
        return _no_spans()
    breaks = np.flatnonzero(np.diff(cols) > gap + 1)
    starts = np.concatenate([cols[:1], cols[breaks + 1]])
    stops = np.concatenate([cols[breaks], cols[-1:]]) + 1
    return np.column_stack([starts, stops])


@njit(cache=True, nogil=True)
def source_swap(source, i, j):
    """Positions i and j exchanged in an ``IN_ORDER`` source; nothing for another."""
    if source.kind != IN_ORDER:
        return
    bits = source.compact.bits
    for w in range(bits.shape[0]):
        tmp = bits[w, i]
        bits[w, i] = bits[w, j]
        bits[w, j] = tmp


# The loops run over slices from 0: over range(start, stop) Numba must allow a negative index,
# and that check keeps LLVM from vectorising them. Words are summed two to a pass into int32
# distances: half the passes over the distances, twice the lanes.
@njit(cache=True, nogil=True)
def _bits_in_order_serial(out, bits, by_distance, distance, row_words, sign, y, start, stop):
    """``_bits_in_order`` over positions [start, stop) on one thread."""
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
    """``_bits_in_order_serial`` in chunks of PARALLEL_ROW_CHUNK positions, in parallel."""
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
    bits, by_distance, distance = source.compact.bits, source.compact.by_distance, source.scratch.view(np.int32)
    if (stop - start) * bits.shape[0] >= PARALLEL_ROW_WORK:
        _bits_in_order_parallel(out, bits, by_distance, distance, row_words, sign, y, start, stop)
    else:
        _bits_in_order_serial(out, bits, by_distance, distance, row_words, sign, y, start, stop)


@njit(cache=True, nogil=True)
def _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    """out[c] = sign y_c K(x_g, x_gidx[c]) for start <= c < stop. The sign is applied to the
    float32 value, exactly as to the float64 one."""
    kernel_values(out[start:stop], X, sqnorm, gamma, g, gidx[start:stop], compact)
    for c in range(start, stop):
        out[c] = times_sign(np.float32(sign * y[c]), out[c])


@njit(cache=True, nogil=True, parallel=True)
def _fill_parallel(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    """``_fill_serial`` in chunks of PARALLEL_ROW_CHUNK positions, in parallel."""
    for t in prange((stop - start + PARALLEL_ROW_CHUNK - 1) // PARALLEL_ROW_CHUNK):
        first = start + t * PARALLEL_ROW_CHUNK
        _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, first,
                     min(stop, first + PARALLEL_ROW_CHUNK), compact)


@njit(cache=True, nogil=True)
def _compute(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact):
    """``_fill_serial``'s values, in parallel where the row is long enough to pay for threads."""
    # Multiply-adds per value: a row's words or non-zeros (on average) in a compact form, else
    # its features (dense, or int16 rows at about the same cost).
    if compact.bits.shape[0]:
        per_value = compact.bits.shape[1]
    elif compact.indptr.shape[0]:
        per_value = compact.data.shape[0] // max(X.shape[0], 1) + 1
    else:
        per_value = X.shape[1]
    if (stop - start) * per_value >= PARALLEL_ROW_WORK:
        _fill_parallel(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact)
    else:
        _fill_serial(out, X, sqnorm, gamma, gidx, y, g, sign, start, stop, compact)


@njit(cache=True, nogil=True)
def global_row(g, X, sqnorm, gamma, source):
    """The shared cache's row K[g, :] over all instances."""
    shared = source.shared
    n = shared.valid_len.shape[0]
    row = acquire(shared, g, n)
    if shared.valid_len[g] < n:
        _compute(row, X, sqnorm, gamma, source.every, source.ones, g, 1.0, 0, n, source.compact)
        shared.valid_len[g] = n
    return row


@njit(cache=True, nogil=True)
def _gathered(out, g, sign, X, sqnorm, gamma, gidx, y, source, start, stop):
    """out[c] = sign y_c K(x_g, x_gidx[c]) for start <= c < stop, gathered from a full row of K
    over all instances: the Gram matrix's or the shared cache's.

    A Gram row's runs of the solver's columns (``source.spans``) are first copied into the solver's
    scratch (``solver_source``): read in order, they stream from memory, while gathered in the
    order of ``gidx`` (shuffled by shrinking) each value waits for a cache line of its own. The
    copy is an explicit loop: a slice assignment through the scratch's float32 view gains nothing
    over no copy."""
    if source.kind == GRAM:
        row = source.scratch.view(np.float32)
        gram_row = source.gram[g]
        for s in range(source.spans.shape[0]):
            for k in range(source.spans[s, 0], source.spans[s, 1]):
                row[k] = gram_row[k]
    else:
        row = global_row(g, X, sqnorm, gamma, source)
    for c in range(start, stop):
        out[c] = times_sign(np.float32(sign * y[c]), row[gidx[c]])


@njit(cache=True, nogil=True)
def get_q(p, length, X, sqnorm, gamma, gidx, y, cache, source):
    """Row p of Q in ``cache``, its first ``length`` values computed (filling the missing tail)."""
    out = acquire(cache, p, length)
    valid_len = cache.valid_len
    start = valid_len[p]
    count_request(cache.counts, start, length)
    if start < length:
        mode = source.kind
        if mode == COMPUTE:
            _compute(out, X, sqnorm, gamma, gidx, y, gidx[p], y[p], start, length, source.compact)
        elif mode == IN_ORDER:
            _bits_in_order(out, source, source.compact.bits[:, p], y[p], y, start, length)
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
    mode = source.kind
    if mode == COMPUTE:
        _compute(out, X, sqnorm, gamma, gidx, y, g, sign, 0, l, source.compact)
    elif mode == IN_ORDER:
        _bits_in_order(out, source, row_words, sign, y, 0, l)
    else:
        _gathered(out, g, sign, X, sqnorm, gamma, gidx, y, source, 0, l)


@njit(cache=True, nogil=True)
def _shared_block(X, sqnorm, gamma, shared_rows, source_rest, rows, cols):
    """``shared_block`` in compiled code, the source taken apart (``source_apart``)."""
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
