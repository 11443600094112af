"""The seeders of alphaseed.seeding: AdjustAlpha, SIR, MIR, ATO, AVG, TOP (paper Section 3)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.linalg

from alphaseed.cv import cross_validate
from alphaseed.errors import SeedingError
from alphaseed.kernel import KernelMatrix
from alphaseed.seeding import (FROM_FULL_MODEL, LOO_ONLY, SEEDERS, SeedContext, adjust_alpha, ato,
                               mir, water_fill)
from alphaseed.seeding.adjust import signed_bounds
from alphaseed.seeding.context import layout
from alphaseed.solver import solve, upper_bounds

# The seeders that chain the rounds: round h seeded from round h - 1.
KFOLD_SEEDERS = sorted(set(SEEDERS) - FROM_FULL_MODEL)


def assert_feasible(alpha: np.ndarray, y: np.ndarray, C) -> None:
    """0 <= alpha <= C of each instance's class (C: one, or the pair of class weights), balanced."""
    assert np.isfinite(alpha).all()
    assert alpha.min(initial=0.0) >= 0.0 and (alpha <= upper_bounds(y, C)).all()
    assert abs(float(y @ alpha)) <= 1e-10 * max(1.0, float(alpha.sum()))


def training_set(order: list[np.ndarray], h: int) -> np.ndarray:
    """Round h (1-based) trains on every fold but fold h."""
    return np.concatenate([f for j, f in enumerate(order) if j != h - 1])


def kfold_context(kernel, y, C, order, h, prev) -> SeedContext:
    """Context seeding round h >= 2 from ``prev``, the SolveResult of round h - 1."""
    shared = np.concatenate([f for j, f in enumerate(order) if j not in (h - 2, h - 1)])
    return SeedContext(kernel=kernel, y=y, C=C, prev_index=training_set(order, h - 1),
                       prev_alpha=prev.alpha, prev_gradient=prev.gradient,
                       prev_rho=float(prev.rho), shared=shared, removed=order[h - 1],
                       added=order[h - 2], next_index=training_set(order, h))


def loo_context(kernel, y, C, full, t) -> SeedContext:
    """Context of the leave-one-out round without ``t``, from ``full`` trained on 0..n-1."""
    n = y.size
    rest = np.delete(np.arange(n), t)
    return SeedContext(kernel=kernel, y=y, C=C, prev_index=np.arange(n), prev_alpha=full.alpha,
                       prev_gradient=full.gradient, prev_rho=float(full.rho), shared=rest,
                       removed=np.array([t]), added=np.empty(0, dtype=np.int64), next_index=rest)


def manual_context(X, y, C, alpha_prev, shared, removed, added, gamma=1.0) -> SeedContext:
    """A context from a hand-made (feasible, not necessarily optimal) previous alpha."""
    kernel = KernelMatrix(np.asarray(X, dtype=float).reshape(len(y), -1), gamma)
    prev_index = np.concatenate((shared, removed)).astype(np.int64)
    Q = kernel.block(prev_index, prev_index).astype(np.float64) * np.outer(y[prev_index], y[prev_index])
    gradient = Q @ alpha_prev - 1.0
    return SeedContext(kernel=kernel, y=y, C=C, prev_index=prev_index, prev_alpha=alpha_prev,
                       prev_gradient=gradient, prev_rho=0.0,
                       shared=np.asarray(shared, dtype=np.int64),
                       removed=np.asarray(removed, dtype=np.int64),
                       added=np.asarray(added, dtype=np.int64),
                       next_index=np.concatenate((shared, added)).astype(np.int64))


@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(7)
    n = 120
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    folds = rng.permutation(n) % 5
    order = [np.flatnonzero(folds == h) for h in range(5)]
    return KernelMatrix(X, 0.4), y, 5.0, order


# --- AdjustAlpha ---------------------------------------------------------------------------

def test_water_fill_shifts_uniformly_and_hits_the_target():
    """Catches a water filling that misses its target, leaves the bounds, or shifts the entries
    by different amounts (e.g. proportionally instead of uniformly)."""
    rng = np.random.default_rng(0)
    y = rng.choice([-1.0, 1.0], size=50)
    lo, hi = signed_bounds(y, 2.0)
    beta = y * rng.uniform(0, 2.0, size=50)
    target = float(beta.sum()) + 7.3
    out = water_fill(beta, lo, hi, target)
    assert out.sum() == pytest.approx(target, rel=1e-13)
    assert (out >= lo).all() and (out <= hi).all()
    moved = out - beta
    unclipped = out < hi
    assert np.ptp(moved[unclipped]) < 1e-12          # one common shift...
    assert (moved[~unclipped] <= moved[unclipped].max() + 1e-12).all()  # ...cut at the bounds


def test_water_fill_out_of_reach_goes_to_the_bounds():
    """Catches an unreachable target handled by stopping early or overshooting the bounds
    instead of putting every entry on the bound it is pushed towards."""
    y = np.array([1.0, 1.0, -1.0])
    lo, hi = signed_bounds(y, 1.0)
    beta = np.array([0.2, 0.5, -0.5])
    np.testing.assert_array_equal(water_fill(beta, lo, hi, 100.0), hi)
    np.testing.assert_array_equal(water_fill(beta, lo, hi, -100.0), lo)


def test_adjust_moves_t_first_then_free_s():
    """Catches AdjustAlpha moving S before T, skipping T, not clipping T to [0, C] first, or
    moving bounded S instances before the free ones."""
    y = np.array([1.0, -1.0, 1.0, 1.0])
    alpha = np.array([0.5, 1.0, 0.0, 3.0])  # positions 2, 3 are T; T's 3.0 gets clipped to C = 1
    out = adjust_alpha(alpha, y, 1.0, [np.array([2, 3]), np.array([0])])
    np.testing.assert_allclose(out, [0.5, 1.0, 0.0, 0.5])
    # T already at 0 and asked to go lower: the free S instance 0 moves instead.
    alpha = np.array([0.8, 0.5, 0.0, 0.0])
    out = adjust_alpha(alpha, y, 1.0, [np.array([2, 3]), np.array([0])])
    np.testing.assert_allclose(out, [0.5, 0.5, 0.0, 0.0])


def test_adjust_with_one_label_falls_back_to_the_cold_start():
    """Catches AdjustAlpha returning an unbalanced seed (which the solver would refuse) when one
    label cannot be balanced, instead of the documented cold start."""
    y = np.ones(3)
    out = adjust_alpha(np.array([0.3, 0.2, 0.0]), y, 1.0, [np.arange(3)])
    np.testing.assert_array_equal(out, 0.0)


# --- SIR -------------------------------------------------------------------------------------

def test_sir_hands_each_alpha_to_the_most_similar_same_label_instance():
    """Catches SIR matching by the wrong similarity (least similar, ignoring labels), reusing a t
    twice, or moving the alphas of S."""
    # Instances on a line: S = {0, 1}, R = {2, 3}, T = {4, 5, 6, 7}.
    X = [20.0, 30.0, 0.0, 10.0, 9.0, 0.1, 10.2, 5.0]
    y = np.array([1, -1, 1, -1, -1, 1, -1, 1], dtype=float)
    ctx = manual_context(X, y, 1.0, np.array([1.0, 1.0, 0.5, 0.5]), [0, 1], [2, 3], [4, 5, 6, 7],
                         gamma=0.1)
    seed = SEEDERS["sir"](ctx)
    np.testing.assert_allclose(seed, [1.0, 1.0, 0.0, 0.5, 0.5, 0.0])


def test_sir_drops_a_removed_instance_without_a_same_label_partner():
    """Catches SIR giving a removed instance's alpha to an instance of the other label (the
    paper's random pick) instead of dropping it and letting AdjustAlpha balance."""
    X = [20.0, 30.0, 0.0, 10.0, 0.1, 5.0]
    y = np.array([1, -1, 1, -1, 1, 1], dtype=float)
    ctx = manual_context(X, y, 1.0, np.array([1.0, 1.0, 0.5, 0.5]), [0, 1], [2, 3], [4, 5])
    seed = SEEDERS["sir"](ctx)
    assert_feasible(seed, y[ctx.next_index], 1.0)
    # r = 3 (label -1) has no partner; T's +1 share must shrink to balance: nothing left.
    np.testing.assert_allclose(seed, [1.0, 1.0, 0.0, 0.0])


# --- MIR -------------------------------------------------------------------------------------

def test_mir_normal_equations_agree_with_direct_least_squares(small_problem, monkeypatch):
    """Catches the normal-equation route (Equation 14, used above MIR_DENSE_BYTES) solving a
    different least-squares problem than the direct one: a missing 1^T row, a wrong slab."""
    kernel, y, C, order = small_problem
    full = solve(kernel, y, training_set(order, 1), C)
    ctx = kfold_context(kernel, y, C, order, 2, full)
    rows, cols = ctx.shared, ctx.added
    rhs = np.random.default_rng(1).normal(size=rows.size)
    direct = mir.least_squares_system(ctx, rows, cols, rhs, 0.3)
    monkeypatch.setattr(mir, "MIR_DENSE_BYTES", 0)
    normal = mir.least_squares_system(ctx, rows, cols, rhs, 0.3)
    A = np.vstack((kernel.block(rows, cols).astype(float), np.ones(cols.size)))
    b = np.append(rhs, 0.3)
    # Both minimise the same residual (the solutions may differ along near-null directions).
    assert np.linalg.norm(A @ normal - b) == pytest.approx(np.linalg.norm(A @ direct - b), rel=1e-4)


@pytest.mark.parametrize("dense_bytes", [mir.MIR_DENSE_BYTES, 0], ids=["direct", "normal"])
def test_mir_least_squares_avoid_the_svd_driver_that_can_fail(small_problem, monkeypatch, dense_bytes):
    """Catches a route solving with LAPACK gelsd, whose SVD fails to converge on some clustered
    spectra (Reference-LAPACK/lapack#1138): the normal equations of full Webdata at k = 10 made
    the seeded round stop with "SVD did not converge". Here gelsd always fails."""
    kernel, y, C, order = small_problem
    ctx = kfold_context(kernel, y, C, order, 2, solve(kernel, y, training_set(order, 1), C))
    lstsq = scipy.linalg.lstsq

    def gelsd_fails(*args, lapack_driver=None, **kwargs):
        if lapack_driver in (None, "gelsd"):
            raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")
        return lstsq(*args, lapack_driver=lapack_driver, **kwargs)

    monkeypatch.setattr(mir.scipy.linalg, "lstsq", gelsd_fails)
    monkeypatch.setattr(mir, "MIR_DENSE_BYTES", dense_bytes)
    rhs = np.random.default_rng(2).normal(size=ctx.shared.size)
    assert np.isfinite(mir.least_squares_system(ctx, ctx.shared, ctx.added, rhs, 0.3)).all()


def test_mir_recovers_alpha_t_when_equation_13_is_exact():
    """Catches a wrong right-hand side of Equation 13: Delta f = f - b instead of b - f, y * Delta f
    without the y, Q_{S,R} alpha_R dropped or subtracted, rows of R included, or Delta f not zero
    on the free SVs. The previous round is built so that Equation 13 has the exact solution
    alpha_T*, which MIR must then return (AdjustAlpha has nothing left to do)."""
    X = np.random.default_rng(48).normal(size=(19, 2))  # a seed where alpha_T* is inside (0, C)
    y = np.array([1, -1] * 6 + [1, -1, 1, -1] + [1, 1, -1], dtype=float)
    S, R, T = np.arange(12), np.arange(12, 16), np.arange(16, 19)
    C, b = 1.0, 0.3
    alpha_S = np.array([1.0, 1.0, 0.0, 0.0, 0.4, 0.4, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # 4, 5 free
    alpha_R = np.array([0.5, 0.2, 0.3, 0.6])  # sum y alpha = 0 over S, and over R
    kernel = KernelMatrix(X, 0.8)
    Q = kernel.block(np.arange(19), np.arange(19)).astype(float) * np.outer(y, y)
    free = (alpha_S > 0) & (alpha_S < C)
    # Equation 13 is exact when y_S * Delta f_S = Q_{S,T} alpha_T* - Q_{S,R} alpha_R. On the free
    # rows Delta f = 0: with y_T alpha_T* = y_R alpha_R that fixes alpha_T* (3 equations, 3
    # unknowns). On the bounded rows Delta f = b - f: the previous f is set to match.
    A = np.vstack((Q[np.ix_(S[free], T)], y[T]))
    alpha_T = np.linalg.solve(A, np.append(Q[np.ix_(S[free], R)] @ alpha_R, y[R] @ alpha_R))
    assert ((alpha_T > 0.1) & (alpha_T < 0.9)).all()
    delta_f = y[S] * (Q[np.ix_(S, T)] @ alpha_T - Q[np.ix_(S, R)] @ alpha_R)
    np.testing.assert_allclose(delta_f[free], 0.0, atol=1e-12)
    f_S = b - delta_f
    prev_alpha = np.concatenate((alpha_S, alpha_R))
    assert abs(y[S] @ alpha_S + y[R] @ alpha_R) < 1e-12
    ctx = SeedContext(kernel=kernel, y=y, C=C, prev_index=np.concatenate((S, R)),
                      prev_alpha=prev_alpha, prev_gradient=np.append(y[S] * f_S, np.zeros(R.size)),
                      prev_rho=b, shared=S, removed=R, added=T, next_index=np.concatenate((S, T)))
    seed = SEEDERS["mir"](ctx)
    np.testing.assert_allclose(seed, np.concatenate((alpha_S, alpha_T)), rtol=0, atol=1e-9)


# --- ATO -------------------------------------------------------------------------------------

def test_ato_path_ends_at_the_next_optimum(small_problem):
    """Catches an ATO path that ends far from the next optimum (wrong direction, b held fixed,
    events missed): SMO then needs more than a quarter of the cold iterations. The objective
    check alone would pass for any feasible seed."""
    kernel, y, C, order = small_problem
    prev = solve(kernel, y, training_set(order, 1), C)
    ctx = kfold_context(kernel, y, C, order, 2, prev)
    seed = SEEDERS["ato"](ctx)
    cold = solve(kernel, y, ctx.next_index, C)
    warm = solve(kernel, y, ctx.next_index, C, alpha0=seed)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-4)
    assert warm.iterations <= cold.iterations // 4


class DirectSystem:
    """The bordered system solved afresh at every step, as ATO did before its factor was kept:
    a symmetric solve, least squares where it is singular (the reference for the updates)."""

    def __init__(self, columns, free):
        self.columns, self.members, self.held = columns, free, free[:0]
        self.joined, self.left = [], []
        DirectSystem.last = self

    def solve(self, rhs_free, rhs_sum):
        m = self.members.size
        if m == 0:
            return np.zeros(0), 0.0
        B = np.zeros((m + 1, m + 1))
        B[0, 1:] = B[1:, 0] = 1.0
        B[1:, 1:] = self.columns.square(self.members, np.empty((m, m)))
        rhs = np.concatenate(([rhs_sum], rhs_free))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                z = scipy.linalg.solve(B, rhs, assume_a="sym")
        except (scipy.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
            z = scipy.linalg.lstsq(B, rhs)[0]
        return z[1:], -float(z[0])

    def moved(self, eta):
        pass

    def join(self, pos):
        self.members = np.append(self.members, pos)
        self.joined.append(pos)
        return True

    def leave(self, pos):
        self.members = self.members[self.members != pos]
        self.left.append(pos)


def many_free_problem(seed=3, n=400, clusters=0):
    """A k-fold context whose previous optimum has a few hundred free SVs, so that the path meets
    many events of every kind (an index leaving M, a bound one and an added one joining).
    ``clusters``: the instances in that many clusters far apart, so that the kernel's values
    across clusters are 0 in float32 and its columns sparse."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    if clusters:
        X += 20 * rng.normal(size=(clusters, 6))[np.arange(n) % clusters]
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    folds = rng.permutation(n) % 4
    order = [np.flatnonzero(folds == h) for h in range(4)]
    kernel, C = KernelMatrix(X, 0.3), 10.0
    prev = solve(kernel, y, training_set(order, 1), C)
    return kfold_context(kernel, y, C, order, 2, prev), y, C


def assert_same_path(path, reference, C, eta_rtol=1e-8, alpha_tol=1e-8):
    """The same events, their steps equal to ``eta_rtol`` and the alphas reached to ``alpha_tol`` C."""
    assert [who for _, who in path.events] == [who for _, who in reference.events]
    np.testing.assert_allclose([eta for eta, _ in path.events], [eta for eta, _ in reference.events],
                               rtol=eta_rtol, atol=1e-12)
    np.testing.assert_allclose(path.alpha, reference.alpha, atol=alpha_tol * C)


def test_ato_factor_updates_follow_the_direct_solves_path(monkeypatch):
    """Catches a factor update that drifts from K_MM (a wrong Givens rotation, a row appended in
    the wrong order, the border eliminated with the wrong sign): the path would take other events
    than the bordered system solved afresh at every step, or reach other alphas."""
    ctx, y, C = many_free_problem()
    factored = ato.follow_path(ctx, layout(ctx))
    monkeypatch.setattr(ato, "free_set_system", DirectSystem)
    direct = ato.follow_path(ctx, layout(ctx))
    added = set(layout(ctx).added_next.tolist())
    joined = DirectSystem.last.joined
    assert DirectSystem.last.left and {pos in added for pos in joined} == {True, False}
    assert_same_path(factored, direct, C)


@pytest.mark.parametrize("factor_bytes, cache_bytes", [(0, 3 << 30), (0, 0), (4 << 30, 0)])
def test_ato_routes_give_the_same_path(monkeypatch, factor_bytes, cache_bytes):
    """Catches the MINRES route (a free set whose factor would not fit FACTOR_BYTES) or the
    uncached kernel columns (past the column budget) taking other events or reaching another
    seed than the factored route."""
    ctx, y, C = many_free_problem()
    factored = ato.follow_path(ctx, layout(ctx))
    monkeypatch.setattr(ato, "FACTOR_BYTES", factor_bytes)
    monkeypatch.setattr(ato, "COLUMN_CACHE_BYTES", cache_bytes)
    other = ato.follow_path(ctx, layout(ctx))
    if factor_bytes:
        assert_same_path(other, factored, C)
    else:
        # MINRES stops at a relative residual of 1e-10, which the system's condition widens
        assert_same_path(other, factored, C, eta_rtol=1e-4, alpha_tol=1e-7)
    assert_feasible(SEEDERS["ato"](ctx), y[ctx.next_index], C)


# The sparse column store's budget: below the dense store's 4 x 300 rows x 400 columns, above the
# clustered problem's non-zeros (SPARSE_ALL), or short of them (SPARSE_SOME).
SPARSE_ALL, SPARSE_SOME = 100_000, 8_000


@pytest.mark.parametrize("factor_bytes", [4 << 30, 0], ids=["factored", "minres"])
@pytest.mark.parametrize("cache_bytes", [SPARSE_ALL, SPARSE_SOME], ids=["all-stored", "some-stored"])
def test_ato_sparse_column_store_gives_the_dense_stores_path(monkeypatch, factor_bytes, cache_bytes):
    """Catches a sparse store whose non-zeros land in the wrong rows or columns, that loses the
    columns past its budget, or that is not taken where the dense store would not hold every
    column of a kernel that is mostly zeros: the path would take other events or reach another
    seed than the dense store's."""
    ctx, y, C = many_free_problem(clusters=40)
    dense = ato.follow_path(ctx, layout(ctx))
    stores = []

    def recorded(*args):
        stores.append(real(*args))
        return stores[-1]

    real = ato.kernel_columns
    monkeypatch.setattr(ato, "kernel_columns", recorded)
    monkeypatch.setattr(ato, "FACTOR_BYTES", factor_bytes)
    monkeypatch.setattr(ato, "COLUMN_CACHE_BYTES", cache_bytes)
    sparse = ato.follow_path(ctx, layout(ctx))
    [store] = stores
    assert isinstance(store, ato.SparseKernelColumns)
    full = store.capacity == store.used
    assert full == (cache_bytes == SPARSE_SOME)
    if factor_bytes:
        assert_same_path(sparse, dense, C)
    else:
        assert_same_path(sparse, dense, C, eta_rtol=1e-4, alpha_tol=1e-7)
    assert len(dense.events) > 10


@pytest.mark.parametrize("budget", [1 << 20, 600], ids=["all-stored", "some-stored"])
def test_sparse_kernel_columns_hold_the_kernels_values(monkeypatch, budget):
    """Catches a sparse store that misplaces a non-zero's row, hands one column's values to
    another slot, serves a column past its budget from a slot it never filled, or skips a row
    whose value is not 0 (a norm window too narrow, or one group's window taken for another's):
    its products, columns and squares would differ from the dense store's. And one that computes
    every value, the norms' bound unused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6)) + 20 * rng.normal(size=(24, 6))[np.arange(120) % 24]
    kernel = KernelMatrix(X, 2.0)
    rows = rng.permutation(120)[:90]
    monkeypatch.setattr(ato, "NORM_GROUP", 4)
    dense = ato.KernelColumns(kernel, rows, 120, 1 << 30)
    assert ato.kernel_density(kernel, rows) < ato.SPARSE_STORE_DENSITY
    sparse = ato.SparseKernelColumns(kernel, rows, 120, budget)
    computed = []
    sparse.kernel = SimpleNamespace(gamma=kernel.gamma, sqnorm=kernel.sqnorm,
                                    block=lambda r, c: computed.append(len(r) * len(c)) or kernel.block(r, c))
    sparse._slots(rows)
    assert sum(computed) < 0.5 * rows.size**2   # the 90 columns asked for, in one slab
    cols, coef = rng.permutation(120)[:70], rng.normal(size=70)
    some = rng.permutation(90)[:40]
    for row_pos in (None, some):
        np.testing.assert_allclose(sparse.matvec(cols, coef, row_pos), dense.matvec(cols, coef, row_pos),
                                   rtol=1e-12, atol=1e-12)
    assert (sparse.used < 70) == (budget == 600)
    for pos in (0, 17, 89):
        np.testing.assert_array_equal(sparse.column(pos), dense.column(pos))
    np.testing.assert_array_equal(sparse.square(some, np.empty((40, 40))), dense.square(some, np.empty((40, 40))))


def test_sparse_kernel_columns_keep_the_values_at_the_edge_of_the_norms_reach(monkeypatch):
    """The sparse store computes only the rows within reach of a column's norm. Here the first
    feature is 0..299 in shuffled order, so pairs 10 apart in it store e**-100 or so (a float32
    subnormal) and pairs 11 apart 0.0. Catches a reach narrower than sqrt(105 / gamma) (those
    subnormals lost), a group's window ending at its first column's reach instead of its last's
    (groups of 16 here), and a non-zero stored at its row in the norms' order instead of X''s."""
    monkeypatch.setattr(ato, "NORM_GROUP", 16)
    rng = np.random.default_rng(12)
    X = np.column_stack([rng.permutation(300), rng.integers(0, 3, size=300)]).astype(np.float64)
    kernel = KernelMatrix(X, 1.0)
    rows = rng.permutation(300)[:250]
    dense = ato.KernelColumns(kernel, rows, 300, 1 << 30)
    sparse = ato.SparseKernelColumns(kernel, rows, 300, 1 << 30)
    sparse._slots(np.arange(300))
    assert sparse.used == 300
    subnormal = 0
    for pos in range(250):
        column = dense.column(pos)
        np.testing.assert_array_equal(sparse.column(pos), column)
        subnormal += np.count_nonzero((column > 0) & (column < np.finfo(np.float32).tiny))
    assert subnormal > 50


@pytest.mark.parametrize("clusters, cache_bytes, sparse", [(40, SPARSE_ALL, True), (40, 1 << 30, False),
                                                         (3, SPARSE_ALL, False), (0, SPARSE_ALL, False)])
def test_the_column_store_is_sparse_only_where_the_dense_one_falls_short_on_a_sparse_kernel(
        monkeypatch, clusters, cache_bytes, sparse):
    """Catches the sparse store taken where the dense one holds every column (the paths that
    fit, Adult's and the small problems', would change) or on a kernel a third non-zero or more
    (Webdata's: two thirds of the dense store's bytes or more), or not taken where it is the store
    that fits."""
    ctx, _, _ = many_free_problem(clusters=clusters)
    rows = ctx.next_index
    monkeypatch.setattr(ato, "COLUMN_CACHE_BYTES", cache_bytes)
    store = ato.kernel_columns(ctx.kernel, rows, rows.size + ctx.removed.size)
    assert isinstance(store, ato.SparseKernelColumns) == sparse


def test_ato_holds_a_duplicate_of_a_free_sv_out_of_the_factor():
    """Catches a factor that takes a duplicate instance's column (its pivot rounding noise, the
    solves then blown up to a seed far from the optimum or not finite)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    X[100:150] = X[:50]
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=200) > 0, 1.0, -1.0)
    y[100:150] = y[:50]
    folds = rng.permutation(200) % 4
    order = [np.flatnonzero(folds == h) for h in range(4)]
    kernel, C = KernelMatrix(X, 2.0), 100.0
    prev = solve(kernel, y, training_set(order, 1), C)
    ctx = kfold_context(kernel, y, C, order, 2, prev)
    path = ato.follow_path(ctx, layout(ctx))
    assert (path.status == ato.HELD).any()
    seed = SEEDERS["ato"](ctx)
    assert np.isfinite(seed).all()
    assert_feasible(seed, y[ctx.next_index], C)
    cold = solve(kernel, y, ctx.next_index, C)
    warm = solve(kernel, y, ctx.next_index, C, alpha0=seed)
    assert warm.iterations <= cold.iterations // 2


# --- AVG and TOP -----------------------------------------------------------------------------

def test_avg_spreads_y_t_alpha_t_uniformly_over_the_free_svs():
    # S = {0, 1, 2, 3}, t = 4 (label +1, alpha 0.5); free SVs 0, 1, 2; 3 is a non-SV.
    """Catches AVG spreading over non-SVs or bounded SVs too, ignoring the labels' signs, or
    not spreading what a bound cuts off over the instances still free."""
    y = np.array([1, -1, -1, 1, 1], dtype=float)
    ctx = manual_context(np.arange(5.0), y, 1.0, np.array([0.5, 0.9, 0.1, 0.0, 0.5]),
                         [0, 1, 2, 3], [4], [])
    seed = SEEDERS["avg"](ctx)
    # 0.5/3 each in y*alpha would push instance 2 (y alpha = -0.1) past 0: it stops at 0, and
    # the remaining 0.4 goes in halves to instances 0 and 1.
    np.testing.assert_allclose(seed, [0.7, 0.7, 0.0, 0.0])


def test_top_fills_the_most_similar_instances_first():
    """Catches TOP filling in the wrong order (reversed, by position), moving y_t alpha_t the
    wrong way, or not passing the excess on to the next most similar instance."""
    y = np.array([1, 1, -1, -1, 1], dtype=float)
    X = [4.05, 0.0, 3.9, 2.0, 4.0]  # t = 4 at 4.0; similarity order: 0, 2, 3, 1
    ctx = manual_context(X, y, 1.0, np.array([0.7, 0.3, 0.2, 1.0, 0.2]), [0, 1, 2, 3], [4], [])
    seed = SEEDERS["top"](ctx)
    # y_t alpha_t = 0.2 must be added to sum y alpha over S: instance 0 takes it all (0.7 -> 0.9).
    np.testing.assert_allclose(seed, [0.9, 0.3, 0.2, 1.0])
    ctx = manual_context(X, y, 1.0, np.array([0.9, 0.1, 0.5, 1.0, 0.5]), [0, 1, 2, 3], [4], [])
    # 0 takes 0.1 (to C), then 2 (label -1) drops by 0.4.
    np.testing.assert_allclose(SEEDERS["top"](ctx), [1.0, 0.1, 0.1, 1.0])


def test_leave_one_out_seeders_reject_a_kfold_context(small_problem):
    """Catches AVG or TOP silently seeding a k-fold round, where T would stay at zero."""
    kernel, y, C, order = small_problem
    prev = solve(kernel, y, training_set(order, 1), C)
    ctx = kfold_context(kernel, y, C, order, 2, prev)
    for name in sorted(LOO_ONLY):
        with pytest.raises(SeedingError, match="leave-one-out"):
            SEEDERS[name](ctx)


def test_the_full_model_seeder_rejects_a_chained_context(small_problem):
    """Catches FULL silently seeding a round that adds instances (round h from round h - 1),
    where their alphas would stay at zero."""
    kernel, y, C, order = small_problem
    prev = solve(kernel, y, training_set(order, 1), C)
    with pytest.raises(SeedingError, match="only removes"):
        SEEDERS["full"](kfold_context(kernel, y, C, order, 2, prev))


def test_inconsistent_index_sets_are_rejected(small_problem):
    """Catches a seeder trusting a context whose S, R and T do not fit the training sets."""
    kernel, y, C, order = small_problem
    prev = solve(kernel, y, training_set(order, 1), C)
    ctx = kfold_context(kernel, y, C, order, 2, prev)
    broken = SeedContext(**{**ctx.__dict__, "added": order[3]})
    with pytest.raises(SeedingError):
        SEEDERS["sir"](broken)


def test_registry_names_every_method():
    """Catches a seeder missing from the registry the CLI and the pipeline read."""
    assert set(SEEDERS) == {"ato", "mir", "sir", "avg", "top", "full"}
    assert set(LOO_ONLY) == {"avg", "top"}
    assert set(FROM_FULL_MODEL) == {"avg", "top", "full"}


# --- Warm starts reach the cold optimum -------------------------------------------------------

@pytest.mark.parametrize("method", KFOLD_SEEDERS)
def test_kfold_warm_start_reaches_the_cold_objective(small_problem, method):
    """Catches a seed that SMO cannot finish from: infeasible (the solver refuses it) or a
    warm start the solver mishandles. Any feasible seed passes, so this checks the seed's
    feasibility and the solver, not the seeder's formula (test_naive_twins does that)."""
    kernel, y, C, order = small_problem
    prev = solve(kernel, y, training_set(order, 1), C)
    for h in range(2, len(order) + 1):
        seed = SEEDERS[method](kfold_context(kernel, y, C, order, h, prev))
        cold = solve(kernel, y, training_set(order, h), C)
        prev = solve(kernel, y, training_set(order, h), C, alpha0=seed)
        assert prev.objective == pytest.approx(cold.objective, rel=1e-4)


@pytest.mark.parametrize("method", sorted(SEEDERS))
def test_leave_one_out_warm_start_reaches_the_cold_objective(small_problem, method):
    """Catches a leave-one-out seed that SMO cannot finish from. Like the k-fold version it
    checks feasibility and the solver, not the seeder's formula."""
    kernel, y, C, _ = small_problem
    full = solve(kernel, y, np.arange(y.size), C)
    for t in (0, 1, 2, 3, int(np.argmax(full.alpha))):
        ctx = loo_context(kernel, y, C, full, t)
        warm = solve(kernel, y, ctx.next_index, C, alpha0=SEEDERS[method](ctx))
        cold = solve(kernel, y, ctx.next_index, C)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-4)


# --- Heart (the paper's parameters) through cross_validate -----------------------------------

HEART = {"C": 2182.0, "gamma": 0.2}


@pytest.mark.mirror
@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 10])
def test_heart_kfold_seeders_match_cold_with_fewer_iterations(real_dataset, k):
    """Catches a k-fold seeder changing Heart's accuracy or objectives, or SIR/MIR saving no
    iterations on the paper's smallest dataset."""
    X, y = real_dataset("heart")
    cold = cross_validate(X, y, k=k, method="cold", **HEART)
    for method in KFOLD_SEEDERS:
        seeded = cross_validate(X, y, k=k, method=method, **HEART)
        assert seeded.accuracy == cold.accuracy
        for mine, ref in zip(seeded.rounds, cold.rounds):
            assert mine.objective == pytest.approx(ref.objective, rel=1e-4)
        if method in ("sir", "mir"):
            assert seeded.iterations < cold.iterations


@pytest.mark.mirror
@pytest.mark.slow
def test_heart_leave_one_out_seeders_match_cold(real_dataset):
    """Catches a seeder changing Heart's leave-one-out accuracy or round objectives."""
    X, y = real_dataset("heart")
    cold = cross_validate(X, y, k="loo", method="cold", **HEART)
    for method in sorted(SEEDERS):
        seeded = cross_validate(X, y, k="loo", method=method, **HEART)
        assert seeded.accuracy == cold.accuracy
        for mine, ref in zip(seeded.rounds, cold.rounds):
            assert mine.objective == pytest.approx(ref.objective, rel=1e-4)
