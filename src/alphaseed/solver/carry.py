"""The warm start's gradient carried over from the previous round's solution, instead of
LibSVM's initialisation from every nonzero alpha."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..errors import SolverInputError
from ..kernel import KernelMatrix, outside_row
from .penalty import upper_bounds
from .state import Rows, q_row, rows_apart, rows_together


# Where each instance stands between the two training sets (global index arrays are over all n
# instances; ``keys`` are solver positions): the alphas before and after, ``at_C_change`` (C times
# the change of being at the bound), ``changed`` (instances whose alpha or bound changed),
# ``position_before`` (in the previous set, -1 outside), ``carried`` and ``fresh`` (positions in
# the next set of instances in, and new to, the previous set), ``support`` (of alpha_next > 0),
# ``sources`` (each changed instance's key, or -1 - s for left[s]) and ``left`` (changed instances
# that left the training set).
_Carry = namedtuple("_Carry", ["keys", "alpha_before", "alpha_after", "at_C_change", "changed",
                               "position_before", "carried", "fresh", "support", "sources", "left"])


def carry_gradient(kernel: KernelMatrix, y, previous, next_index, alpha_next, C, rows: Rows):
    """(G, G_bar) at ``alpha_next`` over ``next_index``, carried over from a previous solution.

    An instance of both training sets keeps its gradient plus Q times the change of alpha; an
    instance new to the training set gets its gradient from the support vectors, summed in the
    order of ``next_index``. The rows of Q this needs, those of the changed and of the new
    instances, are requested at full length through ``rows``, as LibSVM's initialisation requests
    its rows, so SMO finds them there instead of computing them again. The rows of instances that
    left the training set are computed outside the cache, one at a time: a block of them held at
    once costs more in faulting in its fresh memory than in computing it.

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel, whose bit sets give the rows of instances that left the training set.
    y : ndarray
        All the labels, -1 or +1, by global index.
    previous : tuple
        ``(its training index, its SolveResult)``.
    next_index : ndarray
        The next training set (global indices).
    alpha_next : ndarray
        The start, aligned with ``next_index``.
    C : float or tuple of float
        The penalty, or the pair (C of +1, C of -1) (``class_bounds``).
    rows : Rows
        The solver's rows of Q over a permutation of ``next_index``, through its row cache.

    Returns
    -------
    tuple or None
        (G, G_bar) in the order of ``rows`` and the kernel values computed outside the cache, or
        None when carrying would cost more kernel values than LibSVM's initialisation.
    """
    prev_index, prev = previous
    y = np.asarray(y, dtype=np.float64)
    prev_index = np.asarray(prev_index, dtype=np.int64)
    next_index = np.asarray(next_index, dtype=np.int64)
    if prev_index.shape != np.shape(prev.alpha):
        raise SolverInputError(f"the previous solution has {np.size(prev.alpha)} alphas for "
                               f"{prev_index.size} training instances")
    # Each instance's bound, by global index: the classes' Cs may differ.
    C = upper_bounds(y, C)
    c = _where(y.size, (prev_index, prev.alpha), next_index, alpha_next, C, rows)
    l = next_index.size
    cached_rows = np.union1d(c.sources[c.sources >= 0], c.keys[c.fresh]).size
    # The rule counts the values the carry needs: of an instance that left, those against the
    # carried ones. Its row is computed over all positions (faster than picking them), but the
    # rule, which decides which gradient a round starts from, still counts only those.
    if cached_rows * l + c.left.size * c.carried.size >= c.support.size * l:
        return None
    return (*_carried(kernel, y, prev, next_index, C, rows, c), c.left.size * l)


def _where(n: int, before: tuple, next_index, alpha_next, C: np.ndarray, rows: Rows) -> _Carry:
    """Where each instance stands between ``before = (prev_index, prev_alpha)`` and the next set."""
    prev_index, prev_alpha = before
    key_after = np.full(n, -1, dtype=np.int64)
    key_after[rows.gidx] = np.arange(rows.gidx.size)
    keys = key_after[next_index]
    if rows.gidx.size != next_index.size or (keys < 0).any():
        raise SolverInputError("the row cache is not over the training instances")
    alpha_before = np.zeros(n)
    alpha_before[prev_index] = prev_alpha
    alpha_after = np.zeros(n)
    alpha_after[next_index] = alpha_next
    at_C_change = C * ((alpha_after >= C).astype(float) - (alpha_before >= C))
    changed = np.flatnonzero((alpha_after != alpha_before) | (at_C_change != 0))
    position_before = np.full(n, -1, dtype=np.int64)
    position_before[prev_index] = np.arange(prev_index.size)
    sources = key_after[changed]
    return _Carry(keys, alpha_before, alpha_after, at_C_change, changed, position_before,
                  np.flatnonzero(position_before[next_index] >= 0), np.flatnonzero(position_before[next_index] < 0),
                  np.flatnonzero(alpha_next > 0), sources, changed[sources < 0])


def _carried(kernel: KernelMatrix, y, prev, next_index, C: np.ndarray, rows: Rows, c: _Carry):
    """(G, G_bar) in the order of ``rows``, summed by ``_carry_sums``."""
    l = next_index.size
    G = np.empty(l)
    G_bar = np.empty(l)
    # A source that left the training set, left[-1 - s], is marked by -1 - s.
    sources = c.sources.copy()
    sources[sources < 0] = -1 - np.arange(c.left.size)
    # Their bit sets one column per instance, as an IN_ORDER source holds them (else unused).
    bits = kernel.compact_rows.bits
    left_words = (np.ascontiguousarray(bits[c.left].T) if bits.size
                  else np.zeros((0, c.left.size), dtype=np.uint64))
    changed = c.changed
    delta = np.column_stack([y[changed] * (c.alpha_after - c.alpha_before)[changed],
                             y[changed] * c.at_C_change[changed]])
    sv = next_index[c.support]
    weights = np.column_stack([y[sv] * c.alpha_after[sv], y[sv] * C[sv] * (c.alpha_after[sv] >= C[sv])])
    moved, total = _carry_sums(*rows_apart(rows), sources, c.left, left_words, delta,
                               c.keys[c.carried], c.keys[c.fresh], c.keys[c.support], weights)
    kept = c.keys[c.carried]
    G[kept] = prev.gradient[c.position_before[next_index[c.carried]]] + moved[:, 0]
    G_bar[kept] = prev.gradient_bar[c.position_before[next_index[c.carried]]] + moved[:, 1]
    total *= y[next_index[c.fresh], None]
    G[c.keys[c.fresh]] = total[:, 0] - 1.0
    G_bar[c.keys[c.fresh]] = total[:, 1]
    return G, G_bar


# The carry's two sums add K[t, s] * weight_s over the sources s in their given order, in
# float64 from the float32 values, whichever way a value is read: a carried gradient is then
# the same in every kernel mode. A cached row holds Q_ts = y_t y_s K_ts, so multiplying by
# y_t y_s recovers K_ts exactly.


@njit(cache=True, nogil=True)
def _add_row_sum(total, a, q, y, t, sources, weights):
    """total[a] += sum_b K[t, sources[b]] * weights[b], from t's row q of Q, for the two columns
    of weights (G's and G_bar's). The sums are kept in locals, not in ``total``: each
    addition then waits on the one before only in a register, not on a store to memory."""
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
    too small to keep it between the two uses, which would otherwise compute it twice.
    """
    rows = rows_together(rows_rest, cache_rows, shared_rows)
    y = rows.y
    l = y.shape[0]
    fresh_slot = np.full(l, -1, dtype=np.int64)
    fresh_slot[fresh] = np.arange(fresh.shape[0])
    summed = np.zeros(fresh.shape[0], dtype=np.bool_)
    # moved is summed over every position, one delta column at a time, moved[m, :] contiguous
    # (a vectorised loop, where reading the carried positions out of each row is a gather),
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
            q = q_row(rows, c, l)
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
            _add_row_sum(total, a, q_row(rows, fresh[a], l), y, fresh[a], support, weights)
    return moved[:, carried].T, total
