"""An active-set finish for the C-SVC dual: exact Newton steps on the free set instead of SMO's tail.

Near the optimum SMO's two-variable steps converge linearly, and at large C with a flat kernel
they spend most of a run creeping towards an optimum whose free set is already right. With the
free set F known, the optimum is one linear solve: the bordered system

    Q_FF d + lambda y_F = -G_F,    y_F' d = 0,

for the step d of the free alphas (the bound ones fixed). This solver keeps the Cholesky factor of
Q_FF and moves one index per event, as primal active-set methods do (Scheinberg's SVM-QP;
Cauwenberghs and Poggio's incremental SVM): a Newton step goes to the face's optimum, or to the
first bound in its way, whose index then leaves F (the factor downdated by Givens rotations); at
the face's optimum, the bound indices that violate the optimality conditions most enter F (the
factor grown by one row each), and the whole gradient is brought up to date. (Updating Q_FF's
inverse instead drifts: at large C with a flat kernel Q_FF's condition number passes 1e10.)

Its kernel values are float64 (``ExactKernel``): at large C the small eigenvalues of a
flat kernel lie below float32's rounding of its values, so a float32 Q_FF would not even be
positive definite. It stops at LibSVM's rule, the maximal violating pair's gap at most eps,
measured on a gradient computed afresh from the kernel at the end.

A violator whose column lies in the span of F's (an instance that duplicates a free one with
the other label) cannot enter F: Q_FF with its column is singular. It slides instead (``_slide``):
its alpha moves with F following along the system's null direction, the objective falling
linearly, until an index of F meets a bound and leaves. Where a free set larger than
``max_free`` or a stalled loop stands in the way, ``finish`` gives up and says so, and the
caller runs SMO from the feasible point reached.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..kernel import ExactKernel, blas_threads, lower_solves
from .cholesky import (
    DEPENDENT, backward_solve, compact, cut, forward_pair, grow_many, pivoted_factor, plain_factor, solve_pair,
)
from .smo import calculate_rho
from .state import bound_statuses

# Violators entering F at each face optimum: one at a time would bring the whole gradient up to
# date once per index; all at once would let Newton steps pull many of them straight back out.
# Where F holds fewer than LARGE_FREE_SET indices (the Adult samples' finishes, |F| up to 1,300),
# 96 or 128 at once took 14-28 % more Newton steps than 64 and lost 1.03-1.16x.
ENTERING = 64
# ... and this many from LARGE_FREE_SET on, where 128 indices are a small share of F: the Newton
# steps then pull back no more of them than of 64 (4 % fewer steps), and half the rounds save
# half the passes over F's columns of Q. On full Adult's gamma = 2^-5 finishes (|F| of
# 2,500-6,600) 128 was 1.08-1.23x faster than 64, and 192 no faster overall than 128
# (docs/benchmarks/results.md, "More violators enter a large free set").
ENTERING_LARGE = 128
LARGE_FREE_SET = 2048
# Face optima visited (each ends with the whole gradient updated) before the finish gives up.
MAX_ROUNDS = 1000
# Gradients computed afresh at a claimed optimum before giving up: a fresh one that still shows a
# gap means the updates drifted, so the loop goes on from it.
MAX_FRESH = 3
# Newton passes over F from the true gradient, where the last left F off its optimum by rounding,
# before the finish gives up.
MAX_REFINEMENTS = 100
# Newton steps between forward solves of u and w afresh (each step and each downdate carry them
# along in O(m)): bounds the rounding that the updates gather.
FRESH_SOLVES = 50
# Bytes the finish may take for its columns of Q and its Cholesky factor, 8 (l + |F|) |F|, in
# each concurrent solve. On full Adult's large-C points (26,048 instances, |F| 5,500-8,400: up to
# 2.3 GB) the finish beat SMO's tail by 1.8-2.7x. A constant, not a share of the memory free:
# whether Newton steps or SMO finish a run changes its optimum within eps, and that must not vary
# from one run to the next.
MEMORY_BYTES = 3 << 30

# This thread's memory for the factor, the column store and the start's Q_FF while
# ``reusing_memory`` holds it.
_kept = threading.local()


@dataclass
class Finish:
    """What ``finish`` leaves: the point reached, its float64 gradient and what it took.

    Parameters
    ----------
    alpha : ndarray
        A feasible point; optimal to eps where ``optimal``.
    gradient : ndarray
        G = Q alpha - 1 at alpha, from float64 kernel values.
    optimal : bool
        Whether the maximal violating pair's gap is at most eps; else the finish gave up.
    steps : int
        Newton steps taken.
    entered, left : int
        Indices that entered and left the free set.
    gap : float
        The maximal violating pair's gap at alpha.
    why : str
        Why it gave up ('' where optimal).
    gradient_bar : ndarray or None
        LibSVM's G_bar at alpha, from float64 kernel values, where ``optimal``; else None.
    slope : ndarray or None
        Where ``optimal``, d alpha / d ln C along the regularisation path at alpha (``path_slope``):
        the solution at s C is alpha + (s - 1) slope for as long as the free set holds. Else None.
    """

    alpha: np.ndarray
    gradient: np.ndarray
    optimal: bool
    steps: int
    entered: int
    left: int
    gap: float
    why: str = ""
    gradient_bar: np.ndarray | None = None
    slope: np.ndarray | None = None


@njit(cache=True, nogil=True)
def _enter_many(L, rowQ, where, slots, yF, gF, pend, m, entering, columns, forward, y, G, tol):
    """Put the ``entering`` indices (their columns of Q, ``columns``; ``forward``, L^-1 times each
    one's entries against F) into F as positions m, m + 1, ...: one row more of the Cholesky factor
    L of Q_FF each (``grow_many``), except those whose column lies in the span of F's and of those
    entered before them. Returns how many entered; none where the first's column lies in F's span."""
    count = entering.size
    taken = np.empty(count, dtype=np.int64)
    diagonal = np.empty(count)
    for c in range(count):
        diagonal[c] = columns[c, entering[c]]
    added = grow_many(L, m, forward, columns[:, entering], diagonal, tol, taken)
    for t in range(added):
        # the columns of Q sit in rowQ's rows in any order: F's m positions use rows 0..m-1
        position = m + t
        k = entering[taken[t]]
        where[position] = position
        rowQ[position, :] = columns[taken[t]]
        slots[position] = k
        yF[position] = y[k]
        gF[position] = G[k]
        pend[position] = 0.0
    return added


@njit(cache=True, nogil=True)
def _leave(L, rows, rowQ, where, slots, yF, gF, pend, m, p, along):
    """Take position p out of F (m positions): its row and column out of L, whose row i lives in
    L's row rows[i] (``cholesky.cut``; the rows of ``along``, L^-1 times vectors over F,
    following), and its column of Q and its entries out of the bookkeeping."""
    cut(L, rows, m, p, along)
    # rowQ's last used row moves into the row p used
    freed = where[p]
    for i in range(m):
        if where[i] == m - 1:
            where[i] = freed
    rowQ[freed, :] = rowQ[m - 1, :]
    for i in range(p, m - 1):
        where[i] = where[i + 1]
        slots[i] = slots[i + 1]
        yF[i] = yF[i + 1]
        gF[i] = gF[i + 1]
        pend[i] = pend[i + 1]


@njit(cache=True, nogil=True)
def _combine(u, w, yF, D, m, offset):
    """D = u - mu w with mu chosen so that yF' D = -offset. For u = Q_FF^-1 b and w = Q_FF^-1 y_F,
    D = Q_FF^-1 (b - mu y_F) with y_F' D = -offset (y'alpha stays 0 when an index outside F moves
    too, by offset in y terms); for u = L^-1 b and w = L^-1 y_F, given w in yF's place, the same
    holds of L^-T D (y_F' Q_FF^-1 v = w' L^-1 v). Returns mu."""
    yu = 0.0
    yw = 0.0
    for i in range(m):
        yu += yF[i] * u[i]
        yw += yF[i] * w[i]
    mu = (yu + offset) / yw
    for i in range(m):
        D[i] = u[i] - mu * w[i]
    return mu


@njit(cache=True, nogil=True)
def _first_bound(D, m, alpha, bounds, slots, t):
    """The step length along D (at most t) at which F's first alpha meets a bound, and that
    alpha's position (-1 if none does before t)."""
    p = -1
    for i in range(m):
        a = alpha[slots[i]]
        if D[i] < 0.0 and -a / D[i] < t:
            t = -a / D[i]
            p = i
        elif D[i] > 0.0 and (bounds[slots[i]] - a) / D[i] < t:
            t = (bounds[slots[i]] - a) / D[i]
            p = i
    return t, p


@njit(cache=True, nogil=True)
def _move(D, m, t, p, alpha, bounds, slots, pend):
    """F's alphas t D further (the one at position p exactly on its bound), each change kept in
    ``pend`` until G is brought up to date."""
    for i in range(m):
        k = slots[i]
        new = min(max(alpha[k] + t * D[i], 0.0), bounds[k])
        if i == p:
            new = 0.0 if D[i] < 0.0 else bounds[k]
        pend[i] += new - alpha[k]
        alpha[k] = new


@njit(cache=True, nogil=True)
def _drop(L, rows, rowQ, where, slots, yF, gF, pend, m, p, G, along):
    """Position p leaves F, its pending change of alpha applied to G first (``rows`` and
    ``along`` as for ``_leave``)."""
    row = rowQ[where[p]]
    for r in range(G.shape[0]):
        G[r] += pend[p] * row[r]
    _leave(L, rows, rowQ, where, slots, yF, gF, pend, m, p, along)


@njit(cache=True, nogil=True)
def _to_face_optimum(L, rowQ, where, slots, yF, gF, pend, m, alpha, bounds, G, max_steps):
    """Newton steps on F until one reaches the face's optimum (or F empties): each step stops at
    the first bound in its way, whose index leaves F with its pending change applied to G. G_F
    (``gF``) follows each step through the system's own equation; ``pend`` keeps each position's
    change of alpha since G was last brought up to date.

    A step's direction D = Q_FF^-1 (-G_F - lambda y_F) comes from u = L^-1 (-G_F) and
    w = L^-1 y_F, which the step and the factor's downdate carry along in O(m) (``cut``'s
    ``along``): y_F' Q_FF^-1 v = w' L^-1 v, so lambda comes from u and w, and D is one backward
    solve, the step's one pass over the factor beside the downdate's. The downdates leave the
    factor's rows where they are (``cholesky.cut``), and it is compacted once on the way out.

    Returns (m, steps, reached).
    """
    steps = 0
    reached = False
    rows = np.arange(m)
    along = np.empty((2, m))
    u, w = along[0], along[1]
    D = np.empty(m)
    fresh = 0
    while m > 0 and steps < max_steps:
        if fresh == 0:
            # u and w afresh; between, each step and each downdate carry them along
            for i in range(m):
                D[i] = -gF[i]
            forward_pair(L, m, D, yF, u, w, rows)
            fresh = FRESH_SOLVES
        fresh -= 1
        steps += 1
        # _combine with w in y_F's place: L^-T (u - lambda w) has y_F' D = w'(u - lambda w) = 0
        lam = _combine(u, w, w, D, m, 0.0)
        backward_solve(L, m, D, rows)
        t, p = _first_bound(D, m, alpha, bounds, slots, 1.0)
        _move(D, m, t, p, alpha, bounds, slots, pend)
        for i in range(m):
            # Q_FF D = -G_F - lambda y_F, so the step moves G_F to (1 - t) G_F - t lambda y_F,
            # and u = L^-1 (-G_F) to (1 - t) u + t lambda w
            gF[i] = (1.0 - t) * gF[i] - t * lam * yF[i]
            u[i] = (1.0 - t) * u[i] + t * lam * w[i]
        if p < 0:
            reached = True
            break
        _drop(L, rows, rowQ, where, slots, yF, gF, pend, m, p, G, along)
        m -= 1
    compact(L, rows, m)
    return m, steps, reached or m == 0


@njit(cache=True, nogil=True)
def _slide(L, rowQ, where, slots, yF, gF, pend, m, alpha, bounds, G, k, q, y_k, direction):
    """Move alpha_k (outside F, its column of Q ``q`` in F's span) by ``direction`` with F following
    so that F stays at its face's optimum, until an alpha meets a bound; an index of F that does
    leaves F. Returns F's new size.

    Along this path Q's products with the move cancel (the column lies in F's span), so the
    objective falls linearly, by k's violation: the step a Newton step cannot take where Q_FF plus
    k's column is singular (an instance that duplicates a free one with the other label).
    """
    b = np.empty(m)
    for i in range(m):
        b[i] = -direction * q[slots[i]]
    u = np.empty(m)
    w = np.empty(m)
    solve_pair(L, m, b, yF, u, w)
    D = np.empty(m)
    mu = _combine(u, w, yF, D, m, direction * y_k)
    t, p = _first_bound(D, m, alpha, bounds, slots, bounds[k] - alpha[k] if direction > 0 else alpha[k])
    _move(D, m, t, p, alpha, bounds, slots, pend)
    for i in range(m):
        # Q_FF D + direction q_F = -mu y_F: G_F moves by -t mu y_F
        gF[i] -= t * mu * yF[i]
    new_k = min(max(alpha[k] + direction * t, 0.0), bounds[k])
    if p < 0:
        new_k = bounds[k] if direction > 0 else 0.0
    change = new_k - alpha[k]
    alpha[k] = new_k
    for r in range(G.shape[0]):
        G[r] += change * q[r]
    if p >= 0:
        rows = np.arange(m)
        _drop(L, rows, rowQ, where, slots, yF, gF, pend, m, p, G, np.empty((0, 0)))
        m -= 1
        compact(L, rows, m)
    return m


def compile_slide() -> None:
    """Slide once on a toy state (``warmup``): no tiny problem is sure to need a slide, and a
    slide's first call would otherwise compile inside a timed round."""
    L = np.ones((2, 2))
    rowQ = np.ones((2, 2))
    _slide(L, rowQ, np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64), np.ones(2), np.zeros(2),
           np.zeros(2), 1, np.array([0.5, 0.0]), np.ones(2), np.zeros(2), 1, np.array([-1.0, 1.0]), -1.0, -1.0)


def _violation_sets(y, alpha, bounds):
    """LibSVM's I_up and I_low: where y alpha may still grow, and where it may shrink."""
    below = alpha < bounds
    above = alpha > 0
    return np.where(y > 0, below, above), np.where(y > 0, above, below)


def gap(y, alpha, bounds, G) -> float:
    """The maximal violating pair's gap: max over I_up of -y G minus min over I_low of it."""
    up, low = _violation_sets(y, alpha, bounds)
    v = -y * G
    if not up.any() or not low.any():
        return 0.0
    return float(v[up].max() - v[low].min())


def libsvm_rho(y, alpha, bounds, G) -> float:
    """SMO's rho (``calculate_rho``) at alpha, bounds being each index's C."""
    C_positive, C_negative = bounds[y > 0].max(initial=0.0), bounds[y < 0].max(initial=0.0)
    return float(calculate_rho(y.size, y, bound_statuses(alpha, bounds), G, alpha, C_positive, C_negative))


def exact_gradient(kernel: ExactKernel, y, alpha) -> np.ndarray:
    """G = Q alpha - 1 from float64 kernel values, over the support vectors only."""
    sv = np.flatnonzero(alpha > 0)
    if sv.size == 0:
        return np.full(y.size, -1.0)
    return y * kernel.times(sv, y[sv] * alpha[sv]) - 1.0


def finish(kernel: ExactKernel, y, bounds, alpha, eps, *, max_free: int | None = None) -> Finish:
    """Solve the C-SVC dual to LibSVM's eps from a feasible ``alpha`` by active-set Newton steps.

    Parameters
    ----------
    kernel : ExactKernel
        The float64 kernel among the training instances (``KernelMatrix.exact``).
    y : ndarray
        Their labels, -1 or +1.
    bounds : ndarray
        Each alpha's upper bound (C times its class's weight).
    alpha : ndarray
        A feasible start (0 <= alpha <= bounds, y'alpha = 0); not changed.
    eps : float
        LibSVM's tolerance on the maximal violating pair's gap.
    max_free : int, optional
        The largest free set it may hold; None: what ``MEMORY_BYTES`` allows.

    Returns
    -------
    Finish
        The point reached and whether it is optimal.
    """
    l = y.size
    alpha = alpha.copy()
    cap = min(l, _capacity(l) if max_free is None else max_free)
    # Only L's lower triangle, each row written before it is read, and the rows of Q that F's
    # positions hold are ever read: neither needs clearing.
    L = _memory(0, (cap + 1) ** 2).reshape(cap + 1, cap + 1)
    rowQ = _memory(1, (cap + 1) * l).reshape(cap + 1, l)
    where, slots = np.empty(cap + 1, dtype=np.int64), np.empty(cap + 1, dtype=np.int64)
    yF, gF, pend = np.empty(cap + 1), np.empty(cap + 1), np.zeros(cap + 1)
    in_free = np.zeros(l, dtype=bool)
    free = np.flatnonzero((alpha > 0) & (alpha < bounds))
    if free.size > cap:
        G = exact_gradient(kernel, y, alpha)
        return Finish(alpha, G, False, 0, 0, 0, gap(y, alpha, bounds, G), "the free set outgrew max_free")
    columns = _signed_rows(kernel, y, free, out=rowQ[:free.size])
    G, upper = _gradient_with_rows(kernel, y, alpha, bounds, free, columns, alpha[free])
    m = _start(kernel, y, free, columns, G, L, rowQ, where, slots, yF, gF, in_free)
    steps = entered = left = fresh = refinements = 0
    for _ in range(MAX_ROUNDS):
        m_before = m
        m, taken, reached = _to_face_optimum(L, rowQ, where, slots, yF, gF, pend, m, alpha, bounds, G, 10 * l)
        steps += taken
        left += m_before - m
        in_free[:] = False
        in_free[slots[:m]] = True
        if not reached:
            return Finish(alpha, G, False, steps, entered, left, gap(y, alpha, bounds, G), "Newton steps stalled")
        by_row = np.empty(m)
        by_row[where[:m]] = pend[:m]
        with blas_threads(m * l):
            G += rowQ[:m].T @ by_row
        pend[:m] = 0.0
        current = gap(y, alpha, bounds, G)
        if current <= eps:
            # an alpha of F that a step's rounding left exactly at its bound is summed in T instead
            a = alpha[slots[:m]]
            by_row[where[:m]] = np.where(a >= bounds[slots[:m]], 0.0, a)
            G, upper = _gradient_with_rows(kernel, y, alpha, bounds, slots[:m], rowQ[:m], by_row, upper)
            current = gap(y, alpha, bounds, G)
            if current <= eps:
                G_bar = y * upper[1]
                slope = path_slope(L, rowQ, where, slots, yF, m, alpha, bounds, y, G_bar)
                return Finish(alpha, G, True, steps, entered, left, current, gradient_bar=G_bar, slope=slope)
            fresh += 1
            if fresh > MAX_FRESH:
                break
        gF[:m] = G[slots[:m]]
        lam = _multiplier(y, alpha, bounds, G, slots[:m])
        if np.abs(gF[:m] + lam * yF[:m]).max(initial=0.0) > eps / 4:
            # F is off its optimum by the rounding of the steps' solves (Q_FF is ill-conditioned
            # at large C with a flat kernel): Newton steps again from the true G_F
            refinements += 1
            if refinements > MAX_REFINEMENTS:
                break
            continue
        entering = _entering(y, alpha, bounds, G, lam, eps, in_free, _entering_count(m))
        if entering.size == 0:
            return Finish(alpha, G, False, steps, entered, left, current, "F off its optimum")
        if m + entering.size > cap:
            return Finish(alpha, G, False, steps, entered, left, current, "the free set outgrew max_free")
        columns = _signed_rows(kernel, y, entering)
        forward = lower_solves(L, m, np.ascontiguousarray(columns[:, slots[:m]]))
        added = _enter_many(L, rowQ, where, slots, yF, gF, pend, m, entering, columns, forward, y, G, DEPENDENT)
        if added:
            in_free[slots[m:m + added]] = True
            m += added
            entered += added
        else:
            # the worst violator's column lies in F's span: it slides, from F's optimum
            k = entering[0]
            direction = y[k] if -y[k] * G[k] > lam else -y[k]
            m_before = m
            m = _slide(L, rowQ, where, slots, yF, gF, pend, m, alpha, bounds, G, k, columns[0], y[k], direction)
            steps += 1
            left += m_before - m
            in_free[:] = False
            in_free[slots[:m]] = True
    return Finish(alpha, G, False, steps, entered, left, gap(y, alpha, bounds, G), "too many face optima")


def path_slope(L, rowQ, where, slots, yF, m, alpha, bounds, y, G_bar) -> np.ndarray:
    """d alpha / d ln C at the optimum alpha, its free set F (m positions, Q_FF's factor L) held.

    With F free and the rest U at their bounds C_j (linear in C) or at 0, the optimality
    conditions Q_FF alpha_F + Q_FU C_U + lambda y_F = 1 and y_F' alpha_F + y_U' C_U = 0 are
    linear in C, so the solution moves along a line until an alpha of F meets a bound or one
    outside F turns violating (the regularisation path of Hastie et al.). Its direction per unit
    of ln C is C_U on U and, on F, the b of the bordered system
        Q_FF b + mu y_F = -Q_FU C_U,    y_F' b = -y_U' C_U,
    one solve with the factor at hand. Q_FU C_U is G_bar on F, less what an alpha of F left
    exactly at its upper bound put into G_bar (that one moves with F here). Free alphas outside F
    (duplicates of its members) keep their values: slope 0.
    """
    slope = np.where((alpha >= bounds), bounds, 0.0)
    if m == 0:
        return slope
    members = slots[:m]
    slope[members] = 0.0
    on_F = G_bar[members].copy()
    for position in np.flatnonzero(alpha[members] >= bounds[members]):
        on_F -= bounds[members[position]] * rowQ[where[position], members]
    u, w, b = np.empty(m), np.empty(m), np.empty(m)
    solve_pair(L, m, -on_F, yF, u, w)
    _combine(u, w, yF, b, m, float(y @ slope))
    slope[members] = b
    return slope


@contextmanager
def reusing_memory():
    """Within it, ``finish`` keeps the memory of its factor, its column store and its start's Q_FF
    on this thread for its next call there. A chain of solves on one training set (a search along C, the rounds of a
    cross-validation) would otherwise take fresh pages at each finish, tens of MB at a few thousand
    instances, and on a virtual machine the first touch of a fresh page costs about as much as
    computing the kernel values written into it. The memory is given back when the outermost
    context ends."""
    outer = getattr(_kept, "arrays", None)
    if outer is None:
        _kept.arrays = [np.empty(0), np.empty(0), np.empty(0)]
    try:
        yield
    finally:
        if outer is None:
            _kept.arrays = None


def _memory(which: int, size: int) -> np.ndarray:
    """``size`` float64 values, uninitialised: the thread's kept array ``which`` (grown where too
    small) within ``reusing_memory``, else fresh."""
    arrays = getattr(_kept, "arrays", None)
    if arrays is None:
        return np.empty(size)
    if arrays[which].size < size:
        arrays[which] = np.empty(0)   # the old one goes before the new one is taken
        arrays[which] = np.empty(size)
    return arrays[which][:size]


def _capacity(l: int) -> int:
    """The largest free set whose columns of Q and Cholesky factor fit ``MEMORY_BYTES``."""
    # 8 (l + m) m bytes <= MEMORY_BYTES
    return int((-l + np.sqrt(l * l + MEMORY_BYTES / 2)) / 2)


def _gradient_with_rows(kernel: ExactKernel, y, alpha, bounds, cols, rows, weights, upper=None):
    """G = Q alpha - 1 from float64 kernel values, where Q's rows of the instances ``cols`` are
    at hand (``rows``, with ``weights`` their alphas in the rows' order, zero for those at their
    upper bound, which T sums): only the other support vectors' columns of K are computed (the
    finish's free set holds most of them).

    Returns (G, (U, T)): U the indices at their upper bound and T = sum over U of y_j C_j K(:, j),
    their share of y G, which is also LibSVM's G_bar times y. Given the (U, T) of an earlier call
    as ``upper``, only the columns of the indices that reached or left a bound since are
    computed, T brought up to date by them: the finish's start and its confirmed optimum share
    most of their bounded support vectors, and their columns are a large part of the work."""
    at_upper = np.flatnonzero(alpha >= bounds)
    rest = np.setdiff1d(np.setdiff1d(np.flatnonzero(alpha > 0), cols), at_upper, assume_unique=True)
    if upper is None:
        entered, left, T = at_upper, np.zeros(0, dtype=np.int64), np.zeros(y.size)
    else:
        entered = np.setdiff1d(at_upper, upper[0], assume_unique=True)
        left = np.setdiff1d(upper[0], at_upper, assume_unique=True)
        T = upper[1]
    # one pass over the kernel for both sums: the bounded ones' change of T, the rest's share of G
    others = np.concatenate([entered, left, rest])
    both = np.zeros((others.size, 2))
    both[:entered.size, 0] = y[entered] * bounds[entered]
    both[entered.size:entered.size + left.size, 0] = -y[left] * bounds[left]
    both[entered.size + left.size:, 1] = y[rest] * alpha[rest]
    with blas_threads(rows.size):
        G = rows.T @ weights - 1.0
    if others.size:
        sums = kernel.times(others, both)
        T = T + sums[:, 0]
        G += y * (T + sums[:, 1])
    else:
        G += y * T
    return G, (at_upper, T)


def _start(kernel: ExactKernel, y, free, columns, G, L, rowQ, where, slots, yF, gF, in_free) -> int:
    """Fill F with the start's free indices whose columns are independent; the others keep their
    alphas, and enter later as violators. Returns F's size.

    Duplicate instances are the usual dependence (Adult holds many), so F first takes one of each
    set of equal instances and factors them without pivoting; only where that leaves a dependent
    column does the pivoted factorisation choose among all of them. ``columns``: Q's rows of the
    free set, in rowQ's first rows."""
    if free.size == 0:
        return 0
    keep = kernel.distinct(free)
    among = _memory(2, keep.size**2).reshape(keep.size, keep.size)
    among[:] = columns[keep[:, None], free[keep]]
    if not plain_factor(among, L, DEPENDENT):
        among = np.take(columns, free, axis=1, out=_memory(2, free.size**2).reshape(free.size, free.size))
        keep = pivoted_factor(among, L, DEPENDENT)
    rank = keep.size
    where[:rank] = _rows_in_front(rowQ, keep)
    slots[:rank] = free[keep]
    yF[:rank] = y[free[keep]]
    gF[:rank] = G[free[keep]]
    in_free[free[keep]] = True
    return rank


def _signed_rows(kernel: ExactKernel, y, cols, out=None) -> np.ndarray:
    """Q's columns of ``cols`` as rows, y_c y K(c, all) (Q is symmetric), written into ``out``
    where given."""
    return kernel.rows(cols, y=y, out=out)


def _rows_in_front(rowQ, keep) -> np.ndarray:
    """The rowQ row of each position of F, given the rows ``keep`` its positions take in turn,
    after those beyond the first len(keep) rows moved into the front rows no position takes:
    F's m positions must use rows 0..m-1 (``_enter_many`` and ``_leave`` rely on it)."""
    rank = keep.size
    where = keep.copy()
    unused = np.setdiff1d(np.arange(rank), keep, assume_unique=True)
    for position, row in zip(np.flatnonzero(keep >= rank), unused):
        rowQ[row] = rowQ[keep[position]]
        where[position] = row
    return where


def _multiplier(y, alpha, bounds, G, free) -> float:
    """lambda, the multiplier of y'alpha = 0: the mean of -y G over F, else the middle of the
    interval the bound indices leave."""
    v = -y * G
    if free.size:
        return float(v[free].mean())
    up, low = _violation_sets(y, alpha, bounds)
    return float((v[up].max(initial=-np.inf) + v[low].min(initial=np.inf)) / 2)


def _entering_count(m: int) -> int:
    """How many violators enter a free set of m indices at once: ``ENTERING``, or
    ``ENTERING_LARGE`` from ``LARGE_FREE_SET`` indices on."""
    return ENTERING_LARGE if m >= LARGE_FREE_SET else ENTERING


def _entering(y, alpha, bounds, G, lam, eps, excluded, count: int) -> np.ndarray:
    """The ``count`` bound indices that violate the optimality conditions at multiplier lam by
    more than eps / 2, most violating first (those within eps / 2 keep the gap within eps)."""
    up, low = _violation_sets(y, alpha, bounds)
    v = -y * G
    violation = np.maximum(np.where(up, v - lam, 0.0), np.where(low, lam - v, 0.0))
    violation[excluded] = 0.0
    candidates = np.flatnonzero(violation > eps / 2)
    return candidates[np.argsort(-violation[candidates], kind="stable")[:count]]
