"""LibSVM's working-set selection (second order, Fan, Chen and Lin 2005) and the gradient
update it is fused with: the two loops over the active set that every SMO step runs."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import intrinsic

from .state import INF, TAU, in_low, in_up, q_row

# The loops over the active set run in contiguous chunks, one per thread, when the set is
# large; each chunk keeps LibSVM's tie rule (the later index wins) and chunks are combined in
# index order with the same rule, so the chosen pair never depends on the thread count.
PARALLEL_ACTIVE = 8192


@njit(cache=True, nogil=True, inline="always")
def chunk_count(state, active):
    """One chunk per thread on a large active set."""
    return state.threads if active >= PARALLEL_ACTIVE else 1


@njit(cache=True, nogil=True)
def chunk_results(chunks):
    """Each chunk's best value and its index."""
    return np.empty(chunks), np.empty(chunks, dtype=np.int64)


@njit(cache=True, nogil=True)
def chunk_bounds(active, chunks, c):
    """[lo, hi) of chunk c of ``chunks`` contiguous chunks over ``active`` positions."""
    return c * active // chunks, (c + 1) * active // chunks


# The two loops of every step find the last index of a largest value under a condition,
# which the compiler cannot vectorise as one loop. Each is split in two loops it does
# vectorise: one writes every position's key (the value where the condition holds, else an
# infinity that never wins; -0.0 turned into 0.0 where the two could tie for the index, as
# they compare equal), one finds the best key, comparing the keys' bits as integers; the
# last position holding it is then looked for in the one block of KEY_BLOCK positions whose
# best it was. The values, comparisons and ties are LibSVM's: same pairs, same iterations.
# The look back is a scalar loop over half a block on average, so blocks are short: long
# ones make it a large part of an iteration over a small active set (the corners of a grid
# search), and on large active sets the extra blocks cost little.
KEY_BLOCK = 128
_SIGN_BITS = np.int64(0x7FFFFFFFFFFFFFFF)
_LOWEST_KEY = np.int64(-0x8000000000000000)
LARGEST, SMALLEST = np.int64(0), np.int64(-1)
# The key of -INF (negative, so its bits ^ _SIGN_BITS): gmax2 where I_low is empty
_KEY_OF_MINUS_INF = np.int64(np.float64(-np.inf).view(np.int64) ^ _SIGN_BITS)


@njit(cache=True, nogil=True)
def _ordered(bits, which):
    """A float64's bits as an int64 that orders as the float does (NaN aside); ``which`` =
    SMALLEST reverses the order (``~`` maps a < b to ~a > ~b, with no overflow)."""
    return (bits if bits >= 0 else bits ^ _SIGN_BITS) ^ which


@njit(cache=True, nogil=True)
def _best_bits(bits, which):
    """The largest ``_ordered`` key of ``bits``, by a loop the compiler vectorises."""
    best = _LOWEST_KEY
    for k in range(bits.shape[0]):
        key = _ordered(bits[k], which)
        best = key if key > best else best
    return best


@intrinsic
def _same_bits(typingctx, value):
    """The 64 bits of ``value`` read as the other of int64 and float64 (a bit cast; no memory)."""
    other = {types.int64: types.float64, types.float64: types.int64}.get(value)
    if other is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(other))

    return other(value), codegen


@njit(cache=True, nogil=True, inline="always")
def _low_key(y, status, g):
    """The ``_ordered`` key of y G where alpha may move down (I_low), else of -INF: the stopping
    test's gmax2 is the largest value, and needs no index, so the loops that compute G take it
    as an integer maximum, which the compiler vectorises (a float maximum it does not)."""
    return _ordered(_same_bits(y * g if in_low(y, status) else -INF), LARGEST)


@njit(cache=True, nogil=True, inline="always")
def _value_of_key(key):
    """The float64 whose ``_ordered`` key (LARGEST) is ``key``: the map is its own inverse."""
    return _same_bits(_ordered(key, LARGEST))


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
    return -y * g + 0.0 if in_up(y, status) else -INF


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
    """(max of -y_t G_t over I_up in [lo, hi), its last index (-1 if none), by keys, and gmax2,
    the max of y_t G_t over I_low there (-INF if none))."""
    up_keys = keys[0, lo:hi]
    values, signs, statuses = G[lo:hi], y[lo:hi], status[lo:hi]
    low_best = _KEY_OF_MINUS_INF
    for t in range(up_keys.shape[0]):
        up_keys[t] = _up_key(signs[t], statuses[t], values[t])
        low = _low_key(signs[t], statuses[t], values[t])
        low_best = low if low > low_best else low_best
    return (*_best_up(lo, y, G, up_keys), _value_of_key(low_best))


@njit(cache=True, nogil=True, inline="always")
def _update_and_max_up_over(lo, hi, G, qi, qj, deltas, y, status, keys):
    """The gradient update of one SMO step over [lo, hi), with the next step's _max_up_over."""
    dai, daj = deltas
    up_keys = keys[0, lo:hi]
    values, signs, statuses, qis, qjs = G[lo:hi], y[lo:hi], status[lo:hi], qi[lo:hi], qj[lo:hi]
    low_best = _KEY_OF_MINUS_INF
    for t in range(up_keys.shape[0]):
        g = values[t] + (qis[t] * dai + qjs[t] * daj)
        values[t] = g
        up_keys[t] = _up_key(signs[t], statuses[t], g)
        low = _low_key(signs[t], statuses[t], g)
        low_best = low if low > low_best else low_best
    return (*_best_up(lo, y, G, up_keys), _value_of_key(low_best))


@njit(cache=True, nogil=True, inline="always")
def _low_keys(gmax, qi, y_i, y, status, G, keys):
    """Each position's key for ``_min_low_over``: its obj_diff where j is in I_low and the gap
    is positive, else INF."""
    for j in range(G.shape[0]):
        grad_diff = gmax + y[j] * G[j]
        quad = 2.0 - 2.0 * y_i * y[j] * qi[j]
        quad = quad if quad > 0.0 else TAU
        # No +0.0 here: an obj_diff is never above -0.0.
        keys[j] = -(grad_diff * grad_diff) / quad if in_low(y[j], status[j]) and grad_diff > 0.0 else INF


@njit(cache=True, nogil=True, inline="always")
def _min_low_over(lo, hi, gmax, qi, i, y, status, G, keys):
    """Second-order choice of j over I_low in [lo, hi) given i: (obj_diff_min, its last index),
    by keys (see KEY_BLOCK)."""
    obj_diffs = keys[0, lo:hi]
    _low_keys(gmax, qi[lo:hi], y[i], y[lo:hi], status[lo:hi], G[lo:hi], obj_diffs)
    j = _keyed_best(obj_diffs, SMALLEST)
    if j == -1 or obj_diffs[j] == INF:
        return INF, -1
    return obj_diffs[j], j + lo


# In the parallel functions each array is taken from the state on a line of its own: with
# several unpacked in one statement, Numba 0.68's parfor pass let the chunks' writes be lost.
@njit(cache=True, nogil=True, parallel=True)
def _chunked_max_up(state, y, active, chunks, values, indices, maxima):
    """Each chunk's ``_max_up_over``, a thread each, into ``values``, ``indices`` and ``maxima``."""
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = chunk_bounds(active, chunks, c)
        values[c], indices[c], maxima[c] = _max_up_over(lo, hi, y, status, G, keys)


@njit(cache=True, nogil=True, parallel=True)
def _chunked_update_and_max_up(state, y, active, chunks, qi, qj, deltas, values, indices, maxima):
    """Each chunk's ``_update_and_max_up_over``, a thread each, into ``values``, ``indices`` and
    ``maxima``."""
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = chunk_bounds(active, chunks, c)
        values[c], indices[c], maxima[c] = _update_and_max_up_over(lo, hi, G, qi, qj, deltas, y,
                                                                   status, keys)


@njit(cache=True, nogil=True, parallel=True)
def _chunked_min_low(state, y, active, chunks, gmax, qi, i, values, indices):
    """Each chunk's ``_min_low_over``, a thread each, into ``values`` and ``indices``."""
    status = state.status
    G = state.G
    keys = state.keys
    for c in prange(chunks):
        lo, hi = chunk_bounds(active, chunks, c)
        values[c], indices[c] = _min_low_over(lo, hi, gmax, qi, i, y, status, G, keys)


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
def max_up(state, y, active):
    """(max of -y_t G_t over the active I_up, its last index (-1 if none), and gmax2, the max of
    y_t G_t over the active I_low)."""
    chunks = chunk_count(state, active)
    if chunks == 1:
        return _max_up_over(0, active, y, state.status, state.G, state.keys)
    values, indices = chunk_results(chunks)
    maxima = np.empty(chunks)
    _chunked_max_up(state, y, active, chunks, values, indices, maxima)
    return (*_last_best(values, indices, chunks, 1.0), maxima.max())


@njit(cache=True, nogil=True, inline="always")
def update_gradient(state, y, active, qi, qj, deltas):
    """G += Q_i dalpha_i + Q_j dalpha_j over the active set; returns the new ``max_up``."""
    chunks = chunk_count(state, active)
    if chunks == 1:
        return _update_and_max_up_over(0, active, state.G, qi, qj, deltas, y, state.status,
                                       state.keys)
    values, indices = chunk_results(chunks)
    maxima = np.empty(chunks)
    _chunked_update_and_max_up(state, y, active, chunks, qi, qj, deltas, values, indices, maxima)
    return (*_last_best(values, indices, chunks, 1.0), maxima.max())


@njit(cache=True, nogil=True, inline="always")
def select_working_set(state, rows, active, eps, gmax, gmax_idx, gmax2):
    """(i, j) of LibSVM's second-order selection given ``max_up``'s three values, or (-1, -1)
    when the gap is below eps."""
    i = gmax_idx
    if i == -1:
        return -1, -1
    # LibSVM fetches row i before its stopping test: the row cache's counts and order stay its
    qi = q_row(rows, i, active)
    if gmax + gmax2 < eps:
        return -1, -1
    chunks = chunk_count(state, active)
    if chunks == 1:
        obj_diff_min, gmin_idx = _min_low_over(0, active, gmax, qi, i, rows.y, state.status,
                                               state.G, state.keys)
    else:
        values, indices = chunk_results(chunks)
        _chunked_min_low(state, rows.y, active, chunks, gmax, qi, i, values, indices)
        obj_diff_min, gmin_idx = _last_best(values, indices, chunks, -1.0)
    if gmin_idx == -1:
        return -1, -1
    return gmax_idx, gmin_idx
