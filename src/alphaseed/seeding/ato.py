"""ATO, Adjusting alpha Towards Optimum (paper Section 3, Equations 6-10, Algorithm 1).

Karasuyama and Takeuchi's multiple incremental-decremental path: starting from the previous
optimum with alpha'_T = 0, move along

    Delta alpha_T = eta (C 1 - alpha_T),   Delta alpha_R = -eta alpha_R,

and let the free SVs M follow so that sum y alpha stays 0 and f_i = b holds for every i in M.
With beta = y * alpha, that is the bordered system

    [ 0   1^T    ] [ -Delta b     ]   [ -1^T (Delta beta_T + Delta beta_R)       ]
    [ 1   K_{MM} ] [ Delta beta_M ] = [ -K_{M,T} Delta beta_T - K_{M,R} Delta beta_R ],

linear in eta. The step eta is the largest in (0, 1] at which no alpha_M leaves [0, C], no f_i
of I_u or I_l crosses b, and no instance of T reaches the margin. At that event the index
changes set (M -> bound, bound -> M, T -> M), and the path continues, until R is empty
(eta = 1 zeroes every alpha_R at once) or MAX_STEPS = 100 steps (the paper's cap). The alpha_R
still left are then dropped (R is not in X') and AdjustAlpha makes the seed feasible.

Where the paper is ambiguous, chosen here:
- b: the paper's Equation 9 keeps b fixed and solves the overdetermined [y_M^T; Q_MM] system
  with a pseudo-inverse; here b moves with the path (the bordered system above, as in
  Karasuyama and Takeuchi), which is the exact version of that least-squares problem.
- T: an added instance that already satisfies the optimality condition at alpha = 0 (f_t on
  its correct side of b) joins X' directly as a non-SV and is not pushed, as the paper's
  "once the alpha value of an instance in T satisfies the optimal condition, we move the
  instance from T to X'" and Karasuyama-Takeuchi do. One that reaches f_t = b joins M.
- Instances of I_u / I_l already violating their condition at the start (the previous optimum
  is only eps-optimal) are not events: they can only move further, and SMO fixes them.
- Degenerate zero steps: the index that just changed set cannot trigger a zero-length event at
  the next step (that would bounce it back and forth); clipping and AdjustAlpha absorb the
  rounding this leaves.
- M empty: the bordered matrix is singular; its least-squares (pseudo-inverse) solution moves
  nothing but alpha_T and alpha_R, and AdjustAlpha restores the balance at the end.

Linear algebra and memory: the bordered system changes by one index of M per event, so a
Cholesky factor of K_MM is kept across the events (``solver.cholesky``): factored once with
pivoting at the start, one row appended when an index joins M, one row cut out and the rest
rotated back when one leaves, each solve then O(|M|^2) instead of a factorization's O(|M|^3).
The border is eliminated through K_MM^-1 1: with u = K_MM^-1 r and w = K_MM^-1 1,
-Delta b = (1'u - r_0) / 1'w and Delta beta_M = u + Delta b w. A free index whose column
lies in the span of M's (a duplicate instance; the start's pivoting or the Schur complement
of a join finds it) cannot enter the factor: it is held where it is (status HELD), its f
following b as its twin's does. Where the factor would not fit FACTOR_BYTES (4 GiB, a free
set of about 23,000: Webdata's 31,600, and raw MNIST with the paper's gamma, where nearly every
instance is a free SV), MINRES solves the bordered system over kernel columns instead, started from the previous
step's direction scaled by (1 - eta) (the path scales every pushed coefficient by that
factor, so only the one set change is new). Columns K(X', j) are cached in a float32 store of
at most COLUMN_CACHE_BYTES (8 GiB: every column Webdata's path reads, where MINRES reads them
all at each of its iterations); columns that do not fit are recomputed in slabs of at most
256 MiB whenever they are needed, so memory stays bounded at the price of time. Where the dense
store would not hold every column and at most SPARSE_STORE_DENSITY of the kernel's values are
non-zero (a Gaussian kernel close to the identity: float32 rounds exp(-gamma d^2) to 0 for all
but near neighbours; raw MNIST with the paper's gamma has one non-zero a column), the store
keeps the non-zeros alone, so that every column fits and each product costs its non-zeros; it
computes only the values that the norms' bound | |x| - |z| | <= d leaves possibly non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange
from scipy.sparse import csc_matrix
from scipy.sparse.linalg import LinearOperator, minres

from ..kernel import blas_threads, gathered_times, mapped_array, norm_reach
from ..solver import DEPENDENT, grow, pivoted_factor, shrink, solve_pair
from .adjust import adjust_added
from .context import SeedContext, carry_shared, kernel_matvec, layout

MAX_STEPS = 100
FACTOR_BYTES = 4 << 30
COLUMN_CACHE_BYTES = 8 << 30
SLAB_BYTES = 256 << 20
# The sparse store takes 8 bytes a non-zero against the dense store's 4 a value: kept only where
# it is at most a quarter of the dense one's size. The density is probed on PROBE_COLUMNS.
SPARSE_STORE_DENSITY = 1 / 8
PROBE_COLUMNS = 256
# Columns of the sparse store computed together against the rows within reach of their norms:
# the group's spread of norms widens its window, its size the calls to the kernel.
NORM_GROUP = 64
MINRES_RTOL = 1e-10
MINRES_MAXITER = 1000
ZERO_STEP = 1e-12
# The path's statuses: FREE (in M), BOUND (alpha at 0 or C), ADDING (an instance of T whose
# alpha is still rising from 0) and HELD (on f = b, but its column in the span of M's).
FREE, BOUND, ADDING, HELD = 0, 1, 2, 3


def ato_memory_bytes(n: int) -> int:
    """The most ATO's path takes over a training set of n instances: its column store and the
    factor of its free set.

    Parameters
    ----------
    n : int
        The training set's size.
    """
    return min(COLUMN_CACHE_BYTES, 4 * n * n) + min(FACTOR_BYTES, 8 * (n + MAX_STEPS) ** 2)


class KernelColumns:
    """Columns K(X', j) over the rows X' = ``rows``, cached up to a byte budget.

    ``values[:, slot]`` holds a column: rows by columns, so that a product with some columns
    sums each row's gathered values (``gathered_times``), in one order on any thread count.
    The columns a path needs first (R's and T's, then M's) take the first slots, so that each
    product reads a contiguous share of every row.
    """

    def __init__(self, kernel, rows: np.ndarray, max_columns: int, budget_bytes: int):
        self.kernel = kernel
        self.rows = rows
        self.slot_of = np.full(kernel.n, -1, dtype=np.int64)   # by global index; -1: not stored
        self.used = 0
        self.capacity = self._allocate(int(max_columns), budget_bytes)

    def _allocate(self, max_columns: int, budget_bytes: int) -> int:
        """Take the store's memory; the columns it may hold."""
        capacity = min(max_columns, budget_bytes // (4 * max(1, self.rows.size)))
        self.values = mapped_array((self.rows.size, capacity))
        self.slab_columns = max(1, SLAB_BYTES // (4 * max(1, self.rows.size)))
        return capacity

    def _slots(self, cols: np.ndarray) -> np.ndarray:
        """Slots of ``cols`` in the store, computing and storing missing ones while room lasts."""
        missing = cols[self.slot_of[cols] < 0]
        _, first_seen = np.unique(missing, return_index=True)
        fit = missing[np.sort(first_seen)][: self.capacity - self.used]
        for start in range(0, fit.size, self.slab_columns):
            part = fit[start:start + self.slab_columns]
            stored = self._store(part)
            self.slot_of[stored] = np.arange(self.used, self.used + stored.size)
            self.used += stored.size
            if stored.size < part.size:
                self.capacity = self.used   # full: no column is computed again to be turned away
                break
        return self.slot_of[cols]

    def _store(self, cols: np.ndarray) -> np.ndarray:
        """Compute columns ``cols`` into the next slots; those stored, in slot order."""
        self.values[:, self.used:self.used + cols.size] = self.kernel.block(self.rows, cols)
        return cols

    def _stored_times(self, target: np.ndarray, slots: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """The stored columns ``slots`` times ``coef``, at the rows ``target``."""
        return gathered_times(self.values, target, slots, coef[:, None])[:, 0]

    def _stored_column(self, slot: int) -> np.ndarray:
        """The stored column ``slot`` in float64."""
        return self.values[:, slot].astype(np.float64)

    def _stored_square(self, pos: np.ndarray, slots: np.ndarray, out: np.ndarray) -> None:
        """out = the stored columns ``slots`` at the rows ``pos``, in float64."""
        _gather(self.values, pos, slots, out)

    def matvec(self, cols: np.ndarray, coef: np.ndarray, row_pos: np.ndarray | None = None) -> np.ndarray:
        """K[rows[row_pos]][:, cols] @ coef (all rows when ``row_pos`` is None)."""
        target = np.arange(self.rows.size) if row_pos is None else row_pos
        keep = coef != 0
        cols, coef = cols[keep], coef[keep]
        if cols.size == 0 or target.size == 0:
            return np.zeros(target.size)
        slots = self._slots(cols)
        cached = slots >= 0
        out = self._stored_times(target, slots[cached], coef[cached])
        u, c = cols[~cached], coef[~cached]
        chunk = max(1, SLAB_BYTES // (4 * target.size))
        for start in range(0, u.size, chunk):
            block = self.kernel.block(self.rows[target], u[start:start + chunk])
            with blas_threads(block.size):
                out += block @ c[start:start + chunk]
        return out

    def column(self, pos: int) -> np.ndarray:
        """K(X', rows[pos]) over every row, in float64."""
        slot = self._slots(self.rows[pos:pos + 1])[0]
        if slot < 0:
            return self.kernel.block(self.rows, self.rows[pos:pos + 1])[:, 0].astype(np.float64)
        return self._stored_column(slot)

    def square(self, pos: np.ndarray, out: np.ndarray) -> np.ndarray:
        """K[rows[pos]][:, rows[pos]] in float64, into ``out``."""
        cols = self.rows[pos]
        slots = self._slots(cols)
        if (slots < 0).any():
            out[:] = self.kernel.block(cols, cols)
            return out
        self._stored_square(pos, slots, out)
        return out


class SparseKernelColumns(KernelColumns):
    """``KernelColumns`` that keeps the columns' non-zeros alone (compressed sparse columns), as
    many columns as their non-zeros fit the byte budget.

    Only the values that can be non-zero are computed: ||x - z|| >= | ||x|| - ||z|| |, so a
    column's value is 0 at every row whose norm lies farther than ``norm_reach`` from its own.
    Columns are taken NORM_GROUP at a time in the order of their norms, each group against the
    rows within reach of it, and stored group by group while their non-zeros fit.
    """

    def _allocate(self, max_columns: int, budget_bytes: int) -> int:
        index_dtype = np.int32 if max(budget_bytes // 8, self.rows.size) < 2**31 else np.int64
        room = budget_bytes // (4 + np.dtype(index_dtype).itemsize)
        self.data = mapped_array((room,), np.float32)
        self.indices = mapped_array((room,), index_dtype)
        self.indptr = np.zeros(max_columns + 1, dtype=index_dtype)
        sqnorm = self.kernel.sqnorm
        norms = np.sqrt(sqnorm[self.rows])
        self.by_norm = np.argsort(norms, kind="stable")
        self.sorted_norms = norms[self.by_norm]
        self.reach = norm_reach(self.kernel.gamma, float(sqnorm.max(initial=0.0)), self.kernel.X.shape[1])
        # one slab: a group's block is what takes memory, and the more columns sorted together,
        # the closer the norms of each group
        self.slab_columns = max_columns
        return max_columns

    def _store(self, cols: np.ndarray) -> np.ndarray:
        norms = np.sqrt(self.kernel.sqnorm[cols])
        order = np.argsort(norms, kind="stable")
        done = 0
        for start in range(0, cols.size, NORM_GROUP):
            group = order[start:start + NORM_GROUP]
            lo = np.searchsorted(self.sorted_norms, norms[group[0]] - self.reach)
            hi = np.searchsorted(self.sorted_norms, norms[group[-1]] + self.reach, side="right")
            near = self.by_norm[lo:hi]
            # transposed, so that np.nonzero lists the non-zeros column by column
            values = self.kernel.block(self.rows[near], cols[group]).T
            col_pos, row_pos = np.nonzero(values)
            first = int(self.indptr[self.used + done])
            if first + col_pos.size > self.data.size:
                break
            self.data[first:first + col_pos.size] = values[col_pos, row_pos]
            self.indices[first:first + col_pos.size] = near[row_pos]
            counts = np.bincount(col_pos, minlength=group.size)
            self.indptr[self.used + done + 1:self.used + done + 1 + group.size] = first + np.cumsum(counts)
            done += group.size
        return cols[order[:done]]

    def _view(self) -> csc_matrix:
        """The stored columns as one sparse matrix, over the store's buffers (no copy)."""
        nnz = int(self.indptr[self.used])
        return csc_matrix((self.data[:nnz], self.indices[:nnz], self.indptr[:self.used + 1]),
                          shape=(self.rows.size, self.used))

    def _stored_times(self, target, slots, coef):
        return (self._view()[:, slots] @ coef)[target]

    def _stored_column(self, slot):
        lo, hi = self.indptr[slot], self.indptr[slot + 1]
        out = np.zeros(self.rows.size)
        out[self.indices[lo:hi]] = self.data[lo:hi]
        return out

    def _stored_square(self, pos, slots, out):
        out[:] = self._view()[:, slots][pos].toarray()


def kernel_columns(kernel, rows: np.ndarray, max_columns: int) -> KernelColumns:
    """The column store over ``rows`` for up to ``max_columns`` columns: dense, but where it
    would not hold them all and the kernel's values are mostly zeros (``kernel_density``)."""
    if 4 * rows.size * max_columns > COLUMN_CACHE_BYTES and kernel_density(kernel, rows) <= SPARSE_STORE_DENSITY:
        return SparseKernelColumns(kernel, rows, max_columns, COLUMN_CACHE_BYTES)
    return KernelColumns(kernel, rows, max_columns, COLUMN_CACHE_BYTES)


def kernel_density(kernel, rows: np.ndarray) -> float:
    """The share of non-zero float32 values in PROBE_COLUMNS columns K(X', j) spread evenly over
    X' = ``rows``."""
    probe = rows[np.linspace(0, rows.size - 1, min(PROBE_COLUMNS, rows.size)).astype(np.int64)]
    return np.count_nonzero(kernel.block(rows, probe)) / max(1, rows.size * probe.size)


@njit(cache=True, nogil=True, parallel=True)
def _gather(values, rows, cols, out):
    """out[a, b] = values[rows[a], cols[b]] in float64."""
    for a in prange(rows.shape[0]):
        row = values[rows[a]]
        for b in range(cols.shape[0]):
            out[a, b] = row[cols[b]]


class FactoredSystem:
    """The bordered system over M through a Cholesky factor of K_MM kept across the events.

    ``members`` are M's positions in X', in the factor's order; ``held`` the free positions whose
    columns lie in the span of M's, left out of the factor.
    """

    def __init__(self, columns: KernelColumns, free: np.ndarray):
        self.columns = columns
        capacity = free.size + MAX_STEPS
        self.L = mapped_array((capacity, capacity), np.float64)
        # K_MM is factored in the factor's own buffer, which then takes its rows in place.
        square = self.L.reshape(-1)[:free.size**2].reshape(free.size, free.size)
        taken = pivoted_factor(columns.square(free, square), self.L, DEPENDENT)
        self.members = free[taken]
        self.held = np.setdiff1d(free, self.members)

    def solve(self, rhs_free: np.ndarray, rhs_sum: float) -> tuple[np.ndarray, float]:
        """(Delta beta_M per unit eta, aligned with ``members``; Delta b) for the right-hand side
        [rhs_sum; rhs_free] of the bordered system."""
        m = self.members.size
        if m == 0:
            return np.zeros(0), 0.0
        u, w = np.empty(m), np.empty(m)
        solve_pair(self.L, m, rhs_free, np.ones(m), u, w)
        db = (rhs_sum - u.sum()) / w.sum()
        return u + db * w, db

    def moved(self, eta: float) -> None:
        """The path moved by eta: nothing to follow, the factor depends on M alone."""

    def join(self, pos: int) -> bool:
        """Put position ``pos`` into M; False where its column lies in the span of M's."""
        column = self.columns.column(pos)
        if not grow(self.L, self.members.size, column[self.members], column[pos], DEPENDENT):
            return False
        self.members = np.append(self.members, pos)
        return True

    def leave(self, pos: int) -> None:
        """Take position ``pos`` out of M."""
        p = int(np.flatnonzero(self.members == pos)[0])
        shrink(self.L, self.members.size, p, np.empty((0, 0)))
        self.members = np.delete(self.members, p)


class IterativeSystem:
    """The bordered system over M by MINRES over kernel columns, for a free set whose factor
    would not fit FACTOR_BYTES. ``members`` are M's positions in X', ascending."""

    def __init__(self, columns: KernelColumns, free: np.ndarray):
        self.columns = columns
        self.members = free
        self.held = free[:0]
        # The last direction per unit eta (0 outside M) and its Delta b: MINRES's next start.
        self.direction = np.zeros(columns.rows.size)
        self.db = 0.0

    def solve(self, rhs_free: np.ndarray, rhs_sum: float) -> tuple[np.ndarray, float]:
        """As ``FactoredSystem.solve``, ``members`` ascending."""
        free, m = self.members, self.members.size
        cols = self.columns.rows[free]

        def apply(v):
            v = np.ravel(v)
            return np.concatenate(([v[1:].sum()], v[0] + self.columns.matvec(cols, v[1:], row_pos=free)))

        op = LinearOperator((m + 1, m + 1), matvec=apply, dtype=np.float64)
        guess = np.concatenate(([-self.db], self.direction[free]))
        z, _ = minres(op, np.concatenate(([rhs_sum], rhs_free)), x0=guess, rtol=MINRES_RTOL,
                      maxiter=MINRES_MAXITER)
        self.direction[:] = 0.0
        self.direction[free] = z[1:]
        self.db = -float(z[0])
        return z[1:], self.db

    def moved(self, eta: float) -> None:
        """The path moved by eta, which scales every pushed coefficient, and so the next
        direction but for the set change, by 1 - eta."""
        self.direction *= 1.0 - eta
        self.db *= 1.0 - eta

    def join(self, pos: int) -> bool:
        """Put position ``pos`` into M (MINRES takes any column)."""
        self.members = np.sort(np.append(self.members, pos))
        return True

    def leave(self, pos: int) -> None:
        """Take position ``pos`` out of M."""
        self.members = self.members[self.members != pos]
        self.direction[pos] = 0.0


def free_set_system(columns: KernelColumns, free: np.ndarray):
    """The bordered system over the free positions ``free``: factored where it fits FACTOR_BYTES."""
    if 8 * (free.size + MAX_STEPS) ** 2 <= FACTOR_BYTES:
        return FactoredSystem(columns, free)
    return IterativeSystem(columns, free)


@dataclass
class _Path:
    """The path's state over X' = ``rows``: alpha, each index's status, f = y G and b, the alphas
    of R still to remove (as beta = y alpha), the index that changed set last (-1: none) and the
    events so far, (eta, position) each (position -1: R emptied)."""

    rows: np.ndarray
    y: np.ndarray
    C: np.ndarray
    alpha: np.ndarray
    status: np.ndarray
    f: np.ndarray
    b: float
    removed: np.ndarray
    beta_removed: np.ndarray
    last: int = -1
    events: list = field(default_factory=list)


def next_event(path: _Path, g, dg, free, dbeta_free, adding) -> tuple[float, int]:
    """(eta, index of the instance whose event comes first), or (1, -1) when none before 1.

    Parameters
    ----------
    path : _Path
        The path's state.
    g, dg : ndarray
        f - b and its change per unit eta, over X'.
    free : ndarray
        Positions of M.
    dbeta_free : ndarray
        Delta beta_M per unit eta.
    adding : ndarray
        Positions of T still rising from 0.

    Returns
    -------
    tuple
        (eta, position), or (1.0, -1).
    """
    alpha, y, C, status = path.alpha, path.y, path.C, path.status
    eta = np.full(alpha.size, np.inf)
    dalpha = y[free] * dbeta_free
    up, down = dalpha > 0, dalpha < 0
    eta[free[up]] = (C[free[up]] - alpha[free[up]]) / dalpha[up]
    eta[free[down]] = -alpha[free[down]] / dalpha[down]

    bound = np.flatnonzero(status == BOUND)
    # +1 where the condition is f_i >= b (I_u), -1 where it is f_i <= b (I_l).
    side = np.where(alpha[bound] < 0.5 * C[bound], y[bound], -y[bound])
    sg, sdg = side * g[bound], side * dg[bound]
    crossing = (sg >= 0) & (sdg < 0)
    eta[bound[crossing]] = sg[crossing] / -sdg[crossing]

    yg, ydg = y[adding] * g[adding], y[adding] * dg[adding]
    reaching = ydg > 0
    eta[adding[reaching]] = -yg[reaching] / ydg[reaching]

    if path.last >= 0 and eta[path.last] <= ZERO_STEP:
        eta[path.last] = np.inf
    np.maximum(eta, 0.0, out=eta)
    who = int(np.argmin(eta))
    if not eta[who] < 1.0:
        return 1.0, -1
    return float(eta[who]), who


def seed_ato(ctx: SeedContext) -> np.ndarray:
    """ATO's feasible seed for X' = ``ctx.next_index``, aligned with it.

    Follows the path of the module docstring from the previous optimum (alpha_T = 0) until R is
    empty or MAX_STEPS events, then AdjustAlpha.

    Parameters
    ----------
    ctx : SeedContext
        Where the path starts: the previous round's optimum, and S, R and T.
    """
    lay = layout(ctx)
    path = follow_path(ctx, lay)
    return adjust_added(path.alpha, path.y, path.C, lay.shared_next, lay.added_next)


def follow_path(ctx: SeedContext, lay) -> _Path:
    """The path from the previous optimum to its last event, before AdjustAlpha."""
    path = _start(ctx, lay)
    if path.removed.size == 0:
        return path
    columns = kernel_columns(ctx.kernel, path.rows, path.rows.size + path.removed.size)
    system = free_set_system(columns, np.flatnonzero(path.status == FREE))
    path.status[system.held] = HELD
    for _ in range(MAX_STEPS):
        if path.removed.size == 0 or not _step(path, columns, system):
            break
    return path


def _start(ctx: SeedContext, lay) -> _Path:
    """The path at the previous optimum: alpha_S kept, alpha_T = 0, the instances of T on the
    wrong side of b rising."""
    rows = ctx.next_index
    y = ctx.y[rows]
    C = ctx.bounds(y)
    alpha = carry_shared(ctx, lay)
    shared, added = lay.shared_next, lay.added_next

    beta_removed = ctx.y[ctx.removed] * ctx.prev_alpha[lay.removed_prev]
    moving = beta_removed != 0

    f = np.empty(rows.size)
    f[shared] = ctx.y[ctx.shared] * ctx.prev_gradient[lay.shared_prev]
    prev_beta = ctx.y[ctx.prev_index] * ctx.prev_alpha
    f[added] = kernel_matvec(ctx, ctx.added, ctx.prev_index, prev_beta) - ctx.y[ctx.added]
    b = ctx.prev_rho

    status = np.full(rows.size, BOUND, dtype=np.int8)
    a_s = alpha[shared]
    status[shared[(a_s > 0) & (a_s < C[shared])]] = FREE
    status[added[y[added] * (f[added] - b) < 0]] = ADDING
    return _Path(rows, y, C, alpha, status, f, b, ctx.removed[moving], beta_removed[moving])


def _step(path: _Path, columns: KernelColumns, system) -> bool:
    """Move along the path to its next event; False when R was emptied (eta = 1)."""
    alpha, y, C, status, rows = path.alpha, path.y, path.C, path.status, path.rows
    free = system.members
    adding = np.flatnonzero(status == ADDING)
    push_cols = np.concatenate((rows[adding], path.removed))
    push_coef = np.concatenate((y[adding] * (C[adding] - alpha[adding]), -path.beta_removed))
    push = columns.matvec(push_cols, push_coef)
    dbeta_free, db = system.solve(-push[free], -float(push_coef.sum()))
    # f - b stays put on M by construction, so only the other rows' f is summed (half the
    # work where most SVs are free)
    df = push.copy()
    df[free] = db
    others = np.flatnonzero(status != FREE)
    df[others] += columns.matvec(rows[free], dbeta_free, row_pos=others)
    eta, who = next_event(path, path.f - path.b, df - db, free, dbeta_free, adding)
    path.events.append((eta, who))

    alpha[free] = np.clip(alpha[free] + eta * y[free] * dbeta_free, 0.0, C[free])
    alpha[adding] += eta * (C[adding] - alpha[adding])
    path.beta_removed = (1.0 - eta) * path.beta_removed
    path.f += eta * df
    path.b += eta * db
    system.moved(eta)
    if who < 0:
        alpha[adding] = C[adding]
        status[adding] = BOUND
        path.removed = path.removed[:0]
        return False
    if status[who] == FREE:
        alpha[who] = 0.0 if alpha[who] < 0.5 * C[who] else C[who]
        status[who] = BOUND
        system.leave(who)
    else:
        status[who] = FREE if system.join(who) else HELD
    path.last = who
    return True
