"""The solver's state and its rows of Q: what every step of SMO reads and writes.

State arrays are indexed by position; positions are permuted by shrinking (active instances
first), and ``perm`` maps a position back to the caller's order.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.typed import List

from ..kernel import (
    KernelMatrix, cache_apart, cache_swap_keys, cache_together, cached_q, get_q, solver_source,
    source_apart, source_swap, source_together,
)

TAU = 1e-12
# An alpha this close to its bound (relative to C) is on it, for rho and for a warm start.
# LibSVM's clipping (alpha_j = C - diff, total - C) and a seeder's arithmetic can leave an
# alpha an ulp inside its bound, where LibSVM counts it free: where every other alpha is at a
# bound it alone sets rho, one end of the interval the bounded ones leave instead of its
# middle, and the model may predict one class (MIR's seeded rounds on madelon_scale did).
BOUND_ROUNDING = 1e-12
LOWER, UPPER, FREE = 0, 1, 2
# Each step's loops compare the statuses lane by lane beside float64 arrays (G, y): statuses
# as wide as those lanes compare in place, where int8 ones must be widened four at a time,
# which made the selection's loop over I_low about 1.4 times as long on AVX2.
STATUS_DTYPE = np.int64
INF = np.inf
# What smo_loop counts beyond its cache's counts: gradient reconstructions (the unshrink and
# the final check's) and the kernel values they computed, the full-length rows the G_bar
# updates requested and their computed values, and the active-set sizes summed over the
# iterations (their mean is the length of a typical step's loops).
RECONSTRUCTIONS, RECONSTRUCTION_VALUES, G_BAR_ROWS, G_BAR_VALUES, ACTIVE_SUM = range(5)
N_EVENTS = 5

# Where the solver's rows of Q come from: the kernel's data, the solver's position order
# (``gidx``, ``y``: permuted by shrinking) and its row cache with the cache's row source.
Rows = namedtuple("Rows", ["X", "sqnorm", "gamma", "gidx", "y", "cache", "source"])
# Rows as the compiled solver holds them: what only a cache miss reads (X, its squared norms
# and the row source) sits behind one reference, ``fill``, a typed List of that one tuple.
# Numba counts a reference to each array of a tuple at every call the tuple is passed
# through, the source alone holds a dozen, and the solver's steps pass their rows on about
# five times an iteration. The steps of an iteration (``inline="always"``) are inlined into
# ``smo_loop`` for the same reason: each call still counted references to the arrays it
# passed (an atomic add and subtract each). ``smo_loop`` also borrows the arrays and the List
# it reaches every step (``borrowed``), whose counts become tests of a null pointer; the rows
# read from the cache keep theirs.
SolverRows = namedtuple("SolverRows", ["gamma", "gidx", "y", "cache", "fill"])
# The solver's state, indexed by position: alpha, the gradient G, LibSVM's G_bar, each
# alpha's bound status, ``perm`` and the event counts (RECONSTRUCTIONS, ...), and the number
# of chunks the loops over a large active set run in (a thread each), and ``keys``, two rows
# of scratch for the selection's keys (``selection._keyed_best``), which every step writes.
# Other scratch arrays (the chunks' results, shrinking's swaps) are allocated where they are
# used, next to loops that cost far more: every array in the state is one more reference
# counted at each step it goes through, where it is not ``borrowed``.
State = namedtuple("State", ["alpha", "G", "G_bar", "status", "perm", "events", "threads", "keys"])


def kernel_rows(kernel: KernelMatrix, gidx, y, cache) -> Rows:
    """The rows of Q over the instances ``gidx`` (global indices) with labels ``y``, through
    ``cache``."""
    gidx = np.ascontiguousarray(gidx, np.int64)
    return Rows(kernel.X, kernel.sqnorm, kernel.gamma, gidx, np.ascontiguousarray(y, np.float64),
                cache, solver_source(kernel.source, gidx))


# The compiled functions called from Python take their Rows as ``rows_apart`` gives them,
# ``f(*rows_apart(rows), ...)``: Rows holds typed Lists (the row caches), and Numba would type
# it in Python on every call, slowly next to a small data set's whole training run.
def rows_apart(rows: Rows) -> tuple:
    """(``rows`` without its Lists, its cache's List, its source's shared cache's List)."""
    cache_rows, cache_rest = cache_apart(rows.cache)
    shared_rows, source_rest = source_apart(rows.source)
    return rows._replace(cache=cache_rest, source=source_rest), cache_rows, shared_rows


@njit(cache=True, nogil=True)
def rows_together(rest, cache_rows, shared_rows):
    """The SolverRows of ``rows_apart``'s parts."""
    fill = List()
    fill.append((rest.X, rest.sqnorm, source_together(shared_rows, rest.source)))
    return SolverRows(rest.gamma, rest.gidx, rest.y, cache_together(cache_rows, rest.cache), fill)


def bound_statuses(alpha, C) -> np.ndarray:
    """``bound_status`` of every alpha (C: each alpha's bound, or one for all)."""
    return np.where(alpha >= C, UPPER, np.where(alpha <= 0.0, LOWER, FREE)).astype(STATUS_DTYPE)


def new_state(alpha, G, G_bar, C, threads: int) -> State:
    """The State at ``alpha`` with its gradients: bound statuses from alpha and C (each alpha's
    bound, or one for all), positions in the caller's order, no events, and ``threads`` chunks
    for the loops over large active sets."""
    l = alpha.shape[0]
    return State(alpha, G, G_bar, bound_statuses(alpha, C), np.arange(l), np.zeros(N_EVENTS, dtype=np.int64),
                 int(threads), np.empty((2, l)))


@intrinsic
def borrowed(typingctx, array):
    """``array`` (or a typed List) as a view Numba does not count references to: the same data,
    shape and strides, no owner. Numba adds and subtracts a reference (an atomic instruction
    each) wherever a tuple of arrays is bound or passed, and its pruning pass cannot pair them
    up across the loops and branches of an SMO step: about 190 a step, a third of a step's time
    over about 1,000 active instances. On a view with no owner each is a test of a null
    pointer. It is safe only while the owner outlives every use of the view: ``smo_loop``'s
    caller holds the arrays for the whole call, and nothing borrowed is stored or returned."""
    if not isinstance(array, (types.Array, types.ListType)):
        return None

    def codegen(context, builder, signature, args):
        view = cgutils.create_struct_proxy(array)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        if isinstance(array, types.Array):
            view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    return array(array), codegen


@njit(cache=True, nogil=True)
def borrowed_loop_inputs(state, rows):
    """``state`` and ``rows`` with their arrays and the row cache's List ``borrowed``: all owned
    by ``smo_loop``'s caller. The rows in the cache keep their counts (an evicted row is freed),
    and so does ``fill``, which ``rows_together`` builds and nothing else holds."""
    cache = rows.cache
    return (State(borrowed(state.alpha), borrowed(state.G), borrowed(state.G_bar), borrowed(state.status),
                  borrowed(state.perm), borrowed(state.events), state.threads, borrowed(state.keys)),
            SolverRows(rows.gamma, borrowed(rows.gidx), borrowed(rows.y),
                       cache_together(borrowed(cache.rows), (borrowed(cache.valid_len), borrowed(cache.lru),
                                                             borrowed(cache.counts))), rows.fill))


@njit(cache=True, nogil=True, inline="always")
def q_row(rows, p, length):
    """Row p of Q through the solver's cache, its first ``length`` values computed."""
    hit, q = cached_q(p, length, rows.cache)
    if not hit:
        X, sqnorm, source = rows.fill[0]
        q = get_q(p, length, X, sqnorm, rows.gamma, rows.gidx, rows.y, rows.cache, source)
    return q


@njit(cache=True, nogil=True)
def row_source_of(rows):
    """The solver's row source, behind ``fill``."""
    return rows.fill[0][2]


@njit(cache=True, nogil=True)
def rounded_status(a, C):
    """``bound_status`` with an alpha within BOUND_ROUNDING of a bound on it."""
    if a >= C - BOUND_ROUNDING * C:
        return UPPER
    if a <= BOUND_ROUNDING * C:
        return LOWER
    return FREE


@njit(cache=True, nogil=True)
def bound_status(a, C):
    """UPPER, LOWER or FREE for an alpha at C, at 0 or between."""
    if a >= C:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@njit(cache=True, nogil=True)
def init_gradient(rows_rest, cache_rows, shared_rows, alpha, C_positive, C_negative):
    """LibSVM's (G, G_bar) at ``alpha``: a full row of Q per nonzero alpha, through the cache."""
    rows = rows_together(rows_rest, cache_rows, shared_rows)
    l = alpha.shape[0]
    G = np.full(l, -1.0)
    G_bar = np.zeros(l)
    for i in range(l):
        if alpha[i] > 0.0:
            q = q_row(rows, i, l)
            a = alpha[i]
            for j in range(l):
                G[j] += a * q[j]
            C = C_positive if rows.y[i] > 0 else C_negative
            if alpha[i] >= C:
                for j in range(l):
                    G_bar[j] += C * q[j]
    return G, G_bar


@njit(cache=True, nogil=True)
def _swap(a, i, j):
    """Exchange a[i] and a[j]."""
    tmp = a[i]
    a[i] = a[j]
    a[j] = tmp


@njit(cache=True, nogil=True)
def swap_index(state, rows, i, j):
    """LibSVM's swap_index, except for the cached rows' columns (see ``_shrink``)."""
    cache_swap_keys(rows.cache, i, j)
    source_swap(row_source_of(rows), i, j)
    _swap(rows.gidx, i, j)
    _swap(rows.y, i, j)
    _swap(state.alpha, i, j)
    _swap(state.status, i, j)
    _swap(state.G, i, j)
    _swap(state.G_bar, i, j)
    _swap(state.perm, i, j)


@njit(cache=True, nogil=True)
def in_up(y, status):
    """Whether alpha may move in the direction that raises y * alpha (LibSVM's I_up)."""
    return status != UPPER if y > 0 else status != LOWER


@njit(cache=True, nogil=True)
def in_low(y, status):
    """Whether alpha may move in the direction that lowers y * alpha (LibSVM's I_low)."""
    return status != LOWER if y > 0 else status != UPPER
