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

Linear algebra and memory: with |M| <= DIRECT_MAX_FREE (500) the bordered system is solved
directly (symmetric solve; least squares when it is singular or ill-conditioned: the paper's
pseudo-inverse). Above that a direct solve at every one of up to 100 steps costs O(|M|^3) each,
and more where duplicate instances make K_MM singular and the least-squares fallback takes
over, so MINRES is used instead, started from the previous step's direction scaled by
(1 - eta) (the path scales every pushed coefficient by that factor, so only the one set change
is new): with K_MM held in float64 while |M| <= DENSE_MAX_FREE (3000, 72 MB), and over a
LinearOperator of kernel columns beyond that (raw MNIST with the paper's gamma makes nearly
every instance a free SV). Columns K(X', j) are cached in a float32 store of at most
COLUMN_CACHE_BYTES (2 GiB); columns that do not fit are recomputed in slabs of at most 256 MiB
whenever they are needed, so memory stays bounded (about 3 GiB on full MNIST) at the price of
time.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator, minres

from ..kernel import blas_threads
from .adjust import adjust_added
from .context import SeedContext, carry_shared, kernel_matvec, layout

MAX_STEPS = 100
DIRECT_MAX_FREE = 500
DENSE_MAX_FREE = 3000
COLUMN_CACHE_BYTES = 2 << 30
SLAB_BYTES = 256 << 20
MINRES_RTOL = 1e-10
MINRES_MAXITER = 1000
ZERO_STEP = 1e-12
# The path's statuses: FREE (in M), BOUND (alpha at 0 or C) and ADDING (an instance of T whose
# alpha is still rising from 0).
FREE, BOUND, ADDING = 0, 1, 2


class KernelColumns:
    """Columns K(X', j) over the rows X' = ``rows``, cached up to a byte budget."""

    def __init__(self, kernel, rows: np.ndarray, max_columns: int, budget_bytes: int):
        self.kernel = kernel
        self.rows = rows
        self.capacity = int(min(max_columns, budget_bytes // (4 * max(1, rows.size))))
        self.store = np.empty((self.capacity, rows.size), dtype=np.float32)
        self.slot: dict[int, int] = {}

    def _slots(self, cols: np.ndarray) -> np.ndarray:
        """Slots of ``cols`` in the store, computing and storing missing ones while room lasts."""
        missing = [c for c in cols.tolist() if c not in self.slot]
        fit = missing[: self.capacity - len(self.slot)]
        chunk = max(1, SLAB_BYTES // (4 * max(1, self.rows.size)))
        for start in range(0, len(fit), chunk):
            part = np.asarray(fit[start:start + chunk], dtype=np.int64)
            first = len(self.slot)
            self.store[first:first + part.size] = self.kernel.block(part, self.rows)
            self.slot.update(zip(part.tolist(), range(first, first + part.size)))
        return np.fromiter((self.slot.get(c, -1) for c in cols.tolist()), dtype=np.int64,
                           count=cols.size)

    def matvec(self, cols: np.ndarray, coef: np.ndarray, row_pos: np.ndarray | None = None) -> np.ndarray:
        """K[rows[row_pos]][:, cols] @ coef (all rows when ``row_pos`` is None)."""
        n_out = self.rows.size if row_pos is None else row_pos.size
        out = np.zeros(n_out)
        keep = coef != 0
        cols, coef = cols[keep], coef[keep]
        if cols.size == 0 or n_out == 0:
            return out
        slots = self._slots(cols)
        cached = slots >= 0
        chunk = max(1, SLAB_BYTES // (8 * self.rows.size))
        s, c = slots[cached], coef[cached]
        for start in range(0, s.size, chunk):
            part = self.store[s[start:start + chunk]]
            if row_pos is not None:
                part = part[:, row_pos]
            out += c[start:start + chunk] @ part
        target_rows = self.rows if row_pos is None else self.rows[row_pos]
        u, c = cols[~cached], coef[~cached]
        chunk = max(1, SLAB_BYTES // (4 * n_out))
        for start in range(0, u.size, chunk):
            out += c[start:start + chunk] @ self.kernel.block(u[start:start + chunk], target_rows)
        return out

    def square(self, pos: np.ndarray) -> np.ndarray:
        """K[rows[pos]][:, rows[pos]] in float64."""
        cols = self.rows[pos]
        slots = self._slots(cols)
        if (slots < 0).any():
            return self.kernel.block(cols, cols).astype(np.float64)
        out = np.empty((pos.size, pos.size))
        chunk = max(1, SLAB_BYTES // (4 * self.rows.size))
        for start in range(0, pos.size, chunk):
            out[start:start + chunk] = self.store[slots[start:start + chunk]][:, pos]
        return out


def solve_bordered(columns: KernelColumns, free: np.ndarray, rhs_free: np.ndarray,
                   rhs_sum: float, guess: np.ndarray) -> tuple[np.ndarray, float]:
    """Delta beta_M and Delta b per unit eta from the bordered system (module docstring).

    ``guess`` = [-Delta b; Delta beta_M] expected from the previous step, MINRES's start.
    """
    m = free.size
    rhs = np.concatenate(([rhs_sum], rhs_free))
    if m <= DIRECT_MAX_FREE:
        B = np.zeros((m + 1, m + 1))
        B[0, 1:] = 1.0
        B[1:, 0] = 1.0
        B[1:, 1:] = columns.square(free)
        with blas_threads(B.size * m):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                    z = scipy.linalg.solve(B, rhs, assume_a="sym", check_finite=False)
            except (scipy.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
                z = scipy.linalg.lstsq(B, rhs, check_finite=False)[0]
        return z[1:], -float(z[0])
    if m <= DENSE_MAX_FREE:
        K_free = columns.square(free)

        def apply_K(v):
            return K_free @ v
    else:
        cols = columns.rows[free]

        def apply_K(v):
            return columns.matvec(cols, v, row_pos=free)

    def apply(v):
        v = np.ravel(v)
        return np.concatenate(([v[1:].sum()], v[0] + apply_K(v[1:])))

    op = LinearOperator((m + 1, m + 1), matvec=apply, dtype=np.float64)
    z, _ = minres(op, rhs, x0=guess, rtol=MINRES_RTOL, maxiter=MINRES_MAXITER)
    return z[1:], -float(z[0])


@dataclass
class _Path:
    """The path's state over X' = ``rows``: alpha, each index's status, f = y G and b, the alphas
    of R still to remove (as beta = y alpha), the last step's direction per unit eta (0 outside M)
    and its Delta b, and the index that changed set last (-1: none)."""

    rows: np.ndarray
    y: np.ndarray
    C: np.ndarray
    alpha: np.ndarray
    status: np.ndarray
    f: np.ndarray
    b: float
    removed: np.ndarray
    beta_removed: np.ndarray
    direction: np.ndarray
    db: float = 0.0
    last: int = -1


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
    path = _start(ctx, lay)
    columns = KernelColumns(ctx.kernel, path.rows, path.rows.size + path.removed.size, COLUMN_CACHE_BYTES)
    for _ in range(MAX_STEPS):
        if path.removed.size == 0 or not _step(path, columns):
            break
    return adjust_added(path.alpha, path.y, path.C, lay.shared_next, lay.added_next)


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
    return _Path(rows, y, C, alpha, status, f, b, ctx.removed[moving], beta_removed[moving],
                 np.zeros(rows.size))


def _step(path: _Path, columns: KernelColumns) -> bool:
    """Move along the path to its next event; False when R was emptied (eta = 1)."""
    alpha, y, C, status, rows = path.alpha, path.y, path.C, path.status, path.rows
    free = np.flatnonzero(status == FREE)
    adding = np.flatnonzero(status == ADDING)
    push_cols = np.concatenate((rows[adding], path.removed))
    push_coef = np.concatenate((y[adding] * (C[adding] - alpha[adding]), -path.beta_removed))
    push = columns.matvec(push_cols, push_coef)
    # Moving along the path scales every pushed coefficient by (1 - eta), so the last
    # direction, scaled alike, is a close start for MINRES; only the set change differs.
    guess = np.concatenate(([-path.db], path.direction[free]))
    dbeta_free, path.db = solve_bordered(columns, free, -push[free], -float(push_coef.sum()), guess)
    path.direction[:] = 0.0
    path.direction[free] = dbeta_free
    df = push + columns.matvec(rows[free], dbeta_free)
    eta, who = next_event(path, path.f - path.b, df - path.db, free, dbeta_free, adding)

    alpha[free] = np.clip(alpha[free] + eta * y[free] * dbeta_free, 0.0, C[free])
    alpha[adding] += eta * (C[adding] - alpha[adding])
    path.beta_removed = (1.0 - eta) * path.beta_removed
    path.f += eta * df
    path.b += eta * path.db
    path.direction *= 1.0 - eta
    path.db *= 1.0 - eta
    if who < 0:
        alpha[adding] = C[adding]
        status[adding] = BOUND
        path.removed = path.removed[:0]
        return False
    if status[who] == FREE:
        alpha[who] = 0.0 if alpha[who] < 0.5 * C[who] else C[who]
        status[who] = BOUND
    else:
        status[who] = FREE
    path.last = who
    return True
