"""The active-set solver (``SolverOptions(solver="active_set")``): its factor updates, its
optimum against SMO's and against a naive twin, feasibility, and the paths it takes on hard
problems (duplicates of either label, tiny and huge C, a free set too large)."""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import lapack, solve_triangular
from scipy.optimize import minimize

from alphaseed.cv import cross_validate
from alphaseed.kernel import KernelMatrix, lower_solves
from alphaseed.solver import SolverOptions, solve, upper_bounds
from alphaseed.solver import active_set
from alphaseed.solver.active_set import _leave, _rows_in_front, exact_gradient, finish, gap, reusing_memory
from alphaseed.solver.cholesky import (
    DEPENDENT, backward_solve, compact, cut, forward_pair, grow, grow_many, pivoted_factor, plain_factor, row_dot,
    shrink, solve_pair,
)

ACTIVE_SET = SolverOptions(solver="active_set")


def problem(n=80, d=4, seed=0, sep=1.0, duplicates=0, flip_duplicates=False):
    """Gaussian blobs, with the first ``duplicates`` rows repeated (their labels flipped if asked)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + sep * y[:, None]
    if duplicates:
        X = np.vstack([X, X[:duplicates]])
        y = np.concatenate([y, -y[:duplicates] if flip_duplicates else y[:duplicates]])
    return X, y


def objective64(km, y, alpha):
    """The dual objective with float64 kernel values."""
    exact = km.exact(np.arange(km.n))
    return 0.5 * (y * alpha) @ exact.times(np.arange(km.n), y * alpha) - alpha.sum()


def kkt_gap64(km, y, alpha, C):
    """The maximal violating pair's gap with float64 kernel values."""
    exact = km.exact(np.arange(km.n))
    return gap(y, alpha, upper_bounds(y, C), exact_gradient(exact, y, alpha))


def assert_feasible(alpha, y, C):
    bounds = upper_bounds(y, C)
    assert alpha.min() >= 0 and (alpha <= bounds).all()
    assert abs(y @ alpha) <= 1e-9 * max(1.0, alpha.sum())


# --- the factor's updates, against numpy -------------------------------------------------------

@pytest.mark.parametrize("m, p", [(1, 0), (2, 0), (6, 2), (6, 5), (13, 3), (20, 2), (50, 0), (50, 17),
                                  (50, 48), (90, 7)])
def test_leave_leaves_the_cholesky_factor_of_the_matrix_without_that_row_and_column(m, p):
    # catches a wrong Givens rotation, a row moved to the wrong place, or the blocks of 16 rows
    # applying a rotation twice or skipping one (m = 20, 50 and 90 cross block boundaries, all
    # but (50, 17) with a short block last); and, for the vectors L^-1 b carried along (the
    # Newton steps' u and w), a rotation skipped, applied from the wrong value on, with its sine's
    # sign or cosine and secant swapped, or a vector left unrotated or its value p kept
    rng = np.random.default_rng(m + p)
    A = rng.normal(size=(m, m))
    A = A @ A.T + np.eye(m)
    L = np.zeros((m + 2, m + 2))
    L[:m, :m] = np.linalg.cholesky(A)
    rowQ = np.arange(2.0 * (m + 2)).reshape(m + 2, 2)
    where, slots = np.arange(m + 2), np.arange(m + 2) + 100
    yF, gF, pend = rng.normal(size=(3, m + 2))
    b = rng.normal(size=(2, m))
    along = np.zeros((2, m + 2))
    along[:, :m] = solve_triangular(L[:m, :m], b.T, lower=True).T
    before = rowQ[where[:m]].copy(), slots[:m].copy(), yF[:m].copy(), gF[:m].copy(), pend[:m].copy()
    rows = np.arange(m + 2, dtype=np.int64)
    _leave(L, rows, rowQ, where, slots, yF, gF, pend, m, p, along)
    compact(L, rows, m - 1)
    keep = np.delete(np.arange(m), p)
    factor = np.tril(L[:m - 1, :m - 1])
    np.testing.assert_allclose(factor @ factor.T, A[np.ix_(keep, keep)], atol=1e-12 * np.abs(A).max())
    np.testing.assert_allclose(along[:, :m - 1], solve_triangular(factor, b[:, keep].T, lower=True).T,
                               rtol=1e-10, atol=1e-10 * np.abs(along).max())
    # every position keeps its column of Q (wherever it sits), index, label, gradient and change
    after = rowQ[where[:m - 1]], slots[:m - 1], yF[:m - 1], gF[:m - 1], pend[:m - 1]
    for kept, a in zip(before, after):
        np.testing.assert_array_equal(a, kept[keep])


@pytest.mark.parametrize("keep", [[0, 1, 2], [2, 0, 1], [4, 1], [3, 0, 5, 2], [5, 4, 3]])
def test_the_start_puts_the_kept_columns_in_the_front_rows(keep):
    # the start's pivoted factor may drop dependent columns (duplicates) and take the rest in any
    # order: catches a kept column left beyond the first len(keep) rows (the next _enter_many or
    # _leave would overwrite it), a front row given to two positions, or a column moved wrong
    keep = np.array(keep)
    rowQ = np.arange(24.0).reshape(6, 4)
    before = rowQ.copy()
    where = _rows_in_front(rowQ, keep)
    assert sorted(where) == list(range(keep.size))
    np.testing.assert_array_equal(rowQ[where], before[keep])


def test_plain_factor_is_cholesky_and_refuses_a_dependent_column():
    """Catches a plain factor written to the wrong triangle or rows of L, and one accepted where a
    column repeats another (a duplicate instance): Q = L L' on a positive definite Q, False on
    Q with a column equal to an earlier one, as dpstrf's test would drop it."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(30, 30))
    Q = A @ A.T + 30 * np.eye(30)
    L = np.full((31, 31), np.nan)
    assert plain_factor(Q.copy(), L)
    np.testing.assert_allclose(np.tril(L[:30, :30]), np.linalg.cholesky(Q), rtol=1e-12, atol=1e-12)
    A[7] = A[3]
    assert not plain_factor(A @ A.T, np.empty((31, 31)))


def test_the_factors_are_lapacks_bit_for_bit():
    """The factorisations call LAPACK through SciPy's Cython pointers, in place; SciPy's own
    wrappers of the same routines are the reference. Catches the wrong triangle, leading dimension
    or pivot base, and a copy into L that overwrites values not yet copied where Q is L's own
    buffer (as ATO's path calls it): the same factor, pivots and rank, bit for bit."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(40, 40))
    A[:, 9] = A[:, 2]   # a dependent column: the pivoted factor stops short of it
    Q = A.T @ A / 40
    factor, info = lapack.dpotrf(Q + np.eye(40), lower=0, clean=0)
    L = np.full((45, 45), np.nan)
    assert info == 0 and plain_factor(Q + np.eye(40), L)
    np.testing.assert_array_equal(np.tril(L[:40, :40]), np.tril(factor.T))
    factor, pivots, rank, info = lapack.dpstrf(Q, lower=0, tol=DEPENDENT)
    # L's rows as long as Q's, one longer (where a row copied left to right overwrites its own
    # diagonal before reading it), and longer still
    for width, shared in [(45, False), (40, True), (41, True), (45, True), (80, True)]:
        L = np.full((width, width), np.nan)
        square = L.reshape(-1)[:40 * 40].reshape(40, 40) if shared else np.empty((40, 40))
        square[:] = Q
        taken = pivoted_factor(square, L, DEPENDENT)
        assert taken.size == rank == 39
        np.testing.assert_array_equal(taken, pivots[:rank] - 1)
        np.testing.assert_array_equal(np.tril(L[:rank, :rank]), np.tril(factor.T[:rank, :rank]))


def test_a_factorisation_lets_other_threads_run():
    """A search's chains are threads of one process: one's factorisation must not hold Python's
    lock, or the others wait for it. Catches LAPACK called through ``scipy.linalg.lapack``, whose
    wrappers hold the lock: a thread that counts while a long factorisation runs must count in
    its middle too."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2000, 2000))
    Q = A @ A.T + np.eye(2000)
    # compiled code loaded before the clock: loading inside the timed call would stretch it past
    # the factorisation, and its middle could then fall outside a factorisation that holds the lock
    assert plain_factor(np.eye(3), np.empty((3, 3)))
    ticks, running = [], threading.Event()

    def count():
        running.set()
        while running.is_set():
            ticks.append(time.perf_counter())

    counter = threading.Thread(target=count)
    counter.start()
    running.wait()
    try:
        start = time.perf_counter()
        assert plain_factor(Q, np.empty((2000, 2000)))
        end = time.perf_counter()
    finally:
        running.clear()
        counter.join()
    middle = (start + 0.3 * (end - start), start + 0.7 * (end - start))
    assert any(middle[0] < t < middle[1] for t in ticks)


@pytest.mark.parametrize("bits", [False, True])
def test_distinct_takes_the_first_of_each_set_of_equal_instances(bits):
    """Catches duplicates told apart (a row compared with itself only) and a later twin taken for
    the first, on rows b, a, b, a, c in that order: positions 0, 1 and 4."""
    a, b, c = (np.array(v, dtype=float) for v in ([1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 1]))
    X = np.vstack([a, b, c] if bits else [a * 0.5, b * 0.25, c * 2.0])
    exact = KernelMatrix(X, 0.5).exact(np.arange(3))
    assert bool(exact.bits.size) == bits
    np.testing.assert_array_equal(exact.distinct(np.array([1, 0, 1, 0, 2])), [0, 1, 4])


@pytest.mark.parametrize("gamma, pivots", [(0.5, False), (1e-9, True)])
def test_the_start_pivots_only_where_more_than_duplicates_are_dependent(monkeypatch, gamma, pivots):
    """Duplicates are left out before the plain factorisation; the pivoted one runs only where a
    distinct column is dependent too (a kernel so flat that every column is nearly all ones). Catches
    a start that always pivots (the cost it saves) or never does (a factor of rounding noise: the
    finish would then not reach the optimum)."""
    X, y = problem(n=60, seed=7, sep=0.3, duplicates=20)
    km = KernelMatrix(X, gamma)
    pivoted = []
    real = active_set.pivoted_factor
    monkeypatch.setattr(active_set, "pivoted_factor", lambda *a: pivoted.append(1) or real(*a))
    C = 10.0
    # every alpha free: each class's sum C / 4, so that y'alpha = 0
    start = np.where(y > 0, C / 4 / (y > 0).sum(), C / 4 / (y < 0).sum())
    done = finish(km.exact(np.arange(km.n)), y, upper_bounds(y, C), start, 1e-5)
    assert bool(pivoted) == pivots
    assert done.optimal and done.gap <= 1e-5
    assert_feasible(done.alpha, y, C)


def _four_running_sums(a, b):
    """row_dot's sums written plainly: term j goes to sum j mod 4 while a block of four is whole,
    the tail to the first."""
    sums = [0.0, 0.0, 0.0, 0.0]
    whole = len(a) - len(a) % 4
    for j in range(len(a)):
        sums[j % 4 if j < whole else 0] += float(np.float64(a[j]) * np.float64(b[j]))
    return (sums[0] + sums[1]) + (sums[2] + sums[3])


@settings(deadline=None)
@given(n=st.integers(0, 41), start=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_row_dot_is_four_running_sums_bit_for_bit(n, start, seed):
    # catches vector lanes that sum in another order than the scalar sums (a lane per sum, each
    # in increasing j), a fused multiply-add, a tail added to the wrong sum or read past the
    # row's end (the rest of the row is NaN), and a slice that ignores ``start``
    rng = np.random.default_rng(seed)
    i = start + n
    L = np.full((i + 1, i + 3), np.nan)
    L[i, :i] = rng.normal(size=i) * 10.0 ** rng.integers(-8, 8, size=i)
    z = np.concatenate([rng.normal(size=i) * 10.0 ** rng.integers(-8, 8, size=i), [np.nan] * 3])
    expected = _four_running_sums(L[i, start:i], z[start:i])
    assert row_dot(L, i, z, start) == expected


def _shrunk_row_by_row(L, m, p):
    """shrink written plainly: each row below p, moved up one, through every rotation in turn,
    then its own."""
    L = L.copy()
    n = m - 1 - p
    x = L[p + 1:m, p].copy()
    cos, sin, secant = np.empty(n), np.empty(n), np.empty(n)
    L[p:m - 1, :p] = L[p + 1:m, :p]
    for i in range(n):
        r, xi = p + i, x[i]
        for c in range(i):
            v = (L[r + 1, p + c + 1] + sin[c] * xi) * secant[c]
            xi = cos[c] * xi - sin[c] * v
            L[r, p + c] = v
        diag = L[r + 1, r + 1]
        root = np.sqrt(diag * diag + xi * xi)
        cos[i], sin[i], secant[i] = root / diag, xi / diag, diag / root
        L[r, r] = root
    return L


@pytest.mark.parametrize("m, p", [(40, 3), (53, 0), (70, 21)])
def test_shrink_is_its_rotations_row_by_row_bit_for_bit(m, p):
    # catches the vector lanes of a block (``_rotations_in_lanes``) mixing rows, reading or writing a
    # column off by one or outside the rows below p (the buffer's NaN border and the upper
    # triangle are compared too), or rotating in another order or with a fused multiply-add: the
    # factor would still be a factor of the same matrix to rounding, so only bits show it
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, m + 2))
    L = np.full((m + 3, m + 3), np.nan)
    L[:m, :m] = np.linalg.cholesky(A @ A.T)
    expected = _shrunk_row_by_row(L, m, p)
    shrink(L, m, p, np.empty((0, 0)))
    np.testing.assert_array_equal(L, expected)


@pytest.mark.parametrize("m, cuts", [(40, [3, 17, 0, 30]), (53, [52, 0, 25, 25, 1]), (70, [21, 40, 5])])
def test_cuts_then_compact_are_shrinks_bit_for_bit(m, cuts):
    # cut leaves each row where it is and compact moves them once: catches a row map not passed
    # on (a position given the wrong row), the rotations reading the row below where the rows
    # stay in place, a compaction that copies the
    # wrong rows or too short a prefix or leaves the map as it was, and the solves through the map
    # reading a row by its position instead (the buffer's NaN border and the rows cut out show)
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, m + 2))
    moved = np.full((m + 3, m + 3), np.nan)
    moved[:m, :m] = np.linalg.cholesky(A @ A.T)
    kept, rows = moved.copy(), np.arange(m, dtype=np.int64)
    for k, p in enumerate(cuts):
        shrink(moved, m - k, p, np.empty((0, 0)))
        cut(kept, rows, m - k, p, np.empty((0, 0)))
    n = m - len(cuts)
    b1, b2 = rng.normal(size=(2, n))
    solved = [np.empty(n) for _ in range(4)]
    forward_pair(moved, n, b1, b2, solved[0], solved[1], np.arange(n, dtype=np.int64))
    forward_pair(kept, n, b1, b2, solved[2], solved[3], rows)
    np.testing.assert_array_equal(solved[2:], solved[:2])
    backward_solve(moved, n, solved[0], np.arange(n, dtype=np.int64))
    backward_solve(kept, n, solved[2], rows)
    np.testing.assert_array_equal(solved[2], solved[0])
    compact(kept, rows, n)
    np.testing.assert_array_equal(rows, np.arange(m))
    np.testing.assert_array_equal(np.tril(kept[:n, :n]), np.tril(moved[:n, :n]))


@pytest.mark.parametrize("m", [0, 1, 2, 3, 4, 5, 6, 7, 17])
def test_backward_solve_solves_with_the_factors_transpose(m):
    # catches the four-row sweep dropping one row's share, solving a value of its group before
    # those above it are taken out of it, leaving the first values unsolved where four do not
    # divide m (m = 5, 6, 7 leave one, two and three after a sweep), or reading a row by its
    # position instead of through the row map (the factor's rows sit apart in the buffer, the
    # rows between them NaN)
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, m))
    factor = np.linalg.cholesky(A @ A.T + np.eye(m))
    rows = np.sort(rng.choice(m + 3, size=m, replace=False))
    L = np.full((m + 3, m + 3), np.nan)     # a read of the upper triangle, beyond m or off the map shows
    for i, row in enumerate(rows):
        L[row, :i + 1] = factor[i, :i + 1]
    b = rng.normal(size=m)
    x = b.copy()
    backward_solve(L, m, x, rows)
    np.testing.assert_allclose(factor.T @ x, b, atol=1e-10)


@pytest.mark.parametrize("m", [1, 3, 4, 5, 17])
def test_solve_pair_solves_both_systems(m):
    # catches a forward sum that skips a term in its four-way split (m = 3, 5, 17 leave tails)
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, m))
    A = A @ A.T + np.eye(m)
    L = np.zeros((m + 1, m + 1))
    L[:m, :m] = np.linalg.cholesky(A)
    b1, b2 = rng.normal(size=(2, m))
    z1, z2 = np.empty(m), np.empty(m)
    solve_pair(L, m, b1, b2, z1, z2)
    np.testing.assert_allclose(A @ z1, b1, atol=1e-10)
    np.testing.assert_allclose(A @ z2, b2, atol=1e-10)


@pytest.mark.parametrize("m, count, dependent", [(0, 3, []), (5, 1, []), (6, 5, [2]), (13, 8, [1, 4, 7]),
                                                  (9, 4, [0])])
def test_grow_many_appends_the_rows_grow_would_one_by_one(m, count, dependent):
    # against grow called for each candidate in turn, to rounding (the entries against F come from
    # BLAS's triangular solve): catches a candidate's entries against F taken from another's, its
    # entries against the candidates appended before it read from a refused one, a refused candidate
    # appended, or anything appended after a refused first candidate (the caller slides it alone)
    rng = np.random.default_rng(m + count)
    total = m + count
    X = rng.normal(size=(total, 3))
    for c in dependent:
        X[m + c] = X[m + c - 1] if c else X[0]  # a duplicate: its column lies in the span
    Q = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    L = np.zeros((total + 1, total + 1))
    if m:
        L[:m, :m] = np.linalg.cholesky(Q[:m, :m])
    expected = L.copy()
    size = m
    appended = []
    for c in range(count):
        k = m + c
        if grow(expected, size, Q[k, [*range(m), *(m + a for a in appended)]], Q[k, k], DEPENDENT):
            size += 1
            appended.append(c)
        elif c == 0:
            expected, appended = L.copy(), []
            break
    candidates = np.arange(m, total)
    taken = np.empty(count, dtype=np.int64)
    forward = lower_solves(L, m, Q[np.ix_(candidates, np.arange(m))].copy())
    added = grow_many(L, m, forward, Q[np.ix_(candidates, candidates)].copy(), Q[candidates, candidates].copy(),
                      DEPENDENT, taken)
    assert added == len(appended)
    np.testing.assert_array_equal(taken[:added], appended)
    np.testing.assert_allclose(L, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("m, k", [(1, 1), (7, 3), (130, 64), (0, 4)])
def test_lower_solves_reads_the_factor_in_place(m, k):
    # the factor's block of a larger buffer, NaN above its diagonal and beyond it: catches a solve
    # that reads the upper triangle or past the block, takes the wrong leading dimension, solves
    # with L' instead of L, or leaves a row of B unsolved
    rng = np.random.default_rng(m + k)
    A = rng.normal(size=(m, m))
    factor = np.linalg.cholesky(A @ A.T / max(m, 1) + np.eye(m))
    L = np.full((m + 5, m + 9), np.nan)
    L[:m, :m] = np.where(np.tri(m, dtype=bool), factor, np.nan)
    B = rng.normal(size=(k, m))
    expected = np.linalg.solve(factor, B.T).T if m else B.copy()
    got = lower_solves(L, m, B)
    assert got is B
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


# --- the optimum -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed, C, gamma", [(0, 1.0, 0.5), (1, 10.0, 0.1), (2, 100.0, 0.05), (3, 0.1, 1.0)])
def test_reaches_smo_optimum_from_a_cold_start(seed, C, gamma):
    # catches a wrong Newton direction or multiplier (the objective would be off), and an
    # entering rule that stops early (the gap would be above eps)
    X, y = problem(seed=seed)
    km = KernelMatrix(X, gamma)
    smo = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-6))
    ours = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-6, solver="active_set"))
    assert_feasible(ours.alpha, y, C)
    assert ours.newton_steps > 0 and ours.iterations == ours.newton_steps  # no SMO fallback
    assert kkt_gap64(km, y, ours.alpha, C) <= 1e-6
    assert objective64(km, y, ours.alpha) <= objective64(km, y, smo.alpha) + 1e-9 * abs(smo.objective)
    assert objective64(km, y, ours.alpha) == pytest.approx(objective64(km, y, smo.alpha), rel=1e-6)
    # the problems are strictly convex (distinct points): one optimum, so one free set
    free = lambda a: set(np.flatnonzero((a > 1e-6 * C) & (a < C * (1 - 1e-6))))
    assert free(ours.alpha) == free(smo.alpha)
    assert ours.rho == pytest.approx(smo.rho, abs=1e-4)
    assert ours.objective == pytest.approx(objective64(km, y, ours.alpha), rel=1e-9)
    np.testing.assert_allclose(ours.gradient, exact_gradient(km.exact(np.arange(km.n)), y, ours.alpha), atol=1e-8)


def test_a_large_free_set_takes_more_violators_at_once(monkeypatch):
    # catches a finish that asks for a fixed count, one that sizes it by the training set instead
    # of F, a threshold the wrong way round or off by one, and _entering ignoring its count
    assert active_set._entering_count(active_set.LARGE_FREE_SET - 1) == active_set.ENTERING
    assert active_set._entering_count(active_set.LARGE_FREE_SET) == active_set.ENTERING_LARGE
    assert active_set.ENTERING_LARGE > active_set.ENTERING
    monkeypatch.setattr(active_set, "ENTERING", 2)
    monkeypatch.setattr(active_set, "ENTERING_LARGE", 5)
    monkeypatch.setattr(active_set, "LARGE_FREE_SET", 8)
    asked = []
    entering = active_set._entering

    def spy(y, alpha, bounds, G, lam, eps, excluded, count):
        chosen = entering(y, alpha, bounds, G, lam, eps, excluded, count)
        asked.append((int(excluded.sum()), count, chosen.size))
        return chosen

    monkeypatch.setattr(active_set, "_entering", spy)
    X, y = problem(n=120, seed=6)
    km = KernelMatrix(X, 0.5)
    ours = solve(km, y, np.arange(km.n), 10.0, options=SolverOptions(eps=1e-6, solver="active_set"))
    assert ours.finisher == "active_set" and kkt_gap64(km, y, ours.alpha, 10.0) <= 1e-6
    assert {count for _, count, _ in asked} == {2, 5}
    for free, count, chosen in asked:
        assert count == (5 if free >= 8 else 2)
        assert 0 < chosen <= count
    assert any(chosen > 2 for _, count, chosen in asked if count == 5)


def naive_twin(km, y, C):
    """The dual QP solved by SciPy's SLSQP on a dense float64 kernel: no factor, no active set."""
    exact = km.exact(np.arange(km.n))
    Q = np.outer(y, y) * exact.rows(np.arange(km.n))
    result = minimize(lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(y.size), jac=lambda a: Q @ a - 1,
                      bounds=[(0, C)] * y.size, constraints=[{"type": "eq", "fun": lambda a: y @ a, "jac": lambda a: y}],
                      method="SLSQP", options={"ftol": 1e-14, "maxiter": 2000})
    return result.x, result.fun


@pytest.mark.parametrize("seed, C", [(4, 1.0), (5, 30.0)])
def test_agrees_with_a_naive_twin(seed, C):
    X, y = problem(n=30, d=3, seed=seed)
    km = KernelMatrix(X, 0.4)
    ours = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-8, solver="active_set"))
    alpha, value = naive_twin(km, y, C)
    assert ours.objective == pytest.approx(value, rel=1e-7)
    np.testing.assert_allclose(ours.alpha, alpha, atol=1e-4 * C)


def test_the_free_alphas_solve_the_bordered_system():
    # the optimum on its own free set is one dense linear solve: catches a factor that drifted
    X, y = problem(n=60, seed=6)
    km = KernelMatrix(X, 0.3)
    C = 5.0
    a = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-9, solver="active_set")).alpha
    exact = km.exact(np.arange(km.n))
    Q = np.outer(y, y) * exact.rows(np.arange(km.n))
    F = np.flatnonzero((a > 0) & (a < C))
    B = np.flatnonzero(a >= C)
    system = np.block([[Q[np.ix_(F, F)], y[F, None]], [y[None, F], np.zeros((1, 1))]])
    rhs = np.concatenate([1 - Q[np.ix_(F, B)] @ a[B], [-y[B] @ a[B]]])
    np.testing.assert_allclose(np.linalg.solve(system, rhs)[:-1], a[F], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed, C, weight", [(0, 2.0, 1.0), (1, 5.0, 1.0), (2, 1.0, 3.0)])
def test_the_slope_is_the_paths_direction(seed, C, weight):
    """Against the path's finite difference, the optimum at C and at C (1 + 1e-4) on the same free
    set: catches a slope that leaves out what the bounded alphas add as C grows (G_bar), has the
    multiplier's share or a sign wrong, moves the bounded alphas other than with their bounds (C
    of their class), or is the scaled solution's."""
    X, y = problem(n=120, d=5, seed=seed, sep=0.2)
    exact = KernelMatrix(X, 0.5, mode="gram").exact(np.arange(y.size))
    bounds = np.where(y > 0, weight * C, C)
    here = finish(exact, y, bounds, np.zeros(y.size), 1e-10)
    step = 1e-4
    there = finish(exact, y, (1 + step) * bounds, (1 + step) * here.alpha, 1e-10)
    free = (here.alpha > 0) & (here.alpha < bounds)
    assert here.optimal and there.optimal and free.sum() > 5 and (here.alpha >= bounds).sum() > 5
    np.testing.assert_array_equal(free, (there.alpha > 0) & (there.alpha < (1 + step) * bounds))
    np.testing.assert_allclose(here.slope, (there.alpha - here.alpha) / step, atol=1e-6 * C)
    assert np.abs(here.slope - here.alpha).max() > 0.1 * C


def test_the_slope_moves_an_alpha_of_f_left_at_its_bound_with_f():
    """A naive twin of ``path_slope`` (the bordered system solved densely) where rounding left a
    member of F exactly at its upper bound, so that G_bar counts it: catches a slope that takes
    G_bar on F as it is, which moves that alpha both with F and with C; and, with F empty, one
    that leaves the bounded alphas where they are."""
    X, y = problem(n=40, seed=3)
    exact = KernelMatrix(X, 0.5, mode="gram").exact(np.arange(y.size))
    Q = np.outer(y, y) * exact.rows(np.arange(y.size))
    bounds = np.full(y.size, 2.0)
    F = np.arange(10)
    alpha = np.where(np.arange(y.size) < 20, 1.0, 0.0)
    alpha[20:25] = 2.0   # U
    alpha[3] = 2.0       # a member of F at its bound
    m = F.size
    L = np.zeros((m + 1, m + 1))
    L[:m, :m] = np.linalg.cholesky(Q[np.ix_(F, F)])
    G_bar = Q[:, alpha >= bounds] @ bounds[alpha >= bounds]
    slope = active_set.path_slope(L, Q[F].copy(), np.arange(m), F.copy(), y[F].copy(), m, alpha, bounds, y, G_bar)
    U = np.arange(20, 25)
    system = np.block([[Q[np.ix_(F, F)], y[F, None]], [y[None, F], np.zeros((1, 1))]])
    rhs = np.concatenate([-Q[np.ix_(F, U)] @ bounds[U], [-y[U] @ bounds[U]]])
    expected = np.zeros(y.size)
    expected[F] = np.linalg.solve(system, rhs)[:m]
    expected[U] = bounds[U]
    np.testing.assert_allclose(slope, expected, rtol=1e-9, atol=1e-9)
    # with F empty, only the bounded alphas move, each with its bound
    empty = active_set.path_slope(L, Q[F].copy(), np.arange(m), F.copy(), y[F].copy(), 0, alpha, bounds, y, G_bar)
    np.testing.assert_array_equal(empty, np.where(alpha >= bounds, bounds, 0.0))


# --- hard cases --------------------------------------------------------------------------------

@pytest.mark.parametrize("flip", [False, True])
def test_duplicates_of_either_label(flip):
    # duplicates make Q_FF singular; with the other label they must slide: catches a slide whose
    # multiplier or direction is wrong (the gap would stay open, or y'alpha drift from 0)
    X, y = problem(n=60, seed=7, sep=0.3, duplicates=20, flip_duplicates=flip)
    km = KernelMatrix(X, 0.5)
    C = 10.0
    ours = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-5, solver="active_set"))
    smo = solve(km, y, np.arange(km.n), C, options=SolverOptions(eps=1e-6))
    assert_feasible(ours.alpha, y, C)
    assert ours.iterations == ours.newton_steps  # finished without SMO
    assert kkt_gap64(km, y, ours.alpha, C) <= 1e-5
    assert objective64(km, y, ours.alpha) == pytest.approx(objective64(km, y, smo.alpha), rel=1e-6)


def test_a_free_set_beyond_max_free_goes_on_with_smo():
    X, y = problem(n=80, seed=8)
    km = KernelMatrix(X, 0.5)
    exact = km.exact(np.arange(km.n))
    done = finish(exact, y, upper_bounds(y, 100.0), np.zeros(y.size), 1e-3, max_free=3)
    assert not done.optimal and "max_free" in done.why
    assert_feasible(done.alpha, y, 100.0)
    # solve runs SMO from the point reached: SMO's optimum, to eps
    smo = solve(km, y, np.arange(km.n), 100.0)
    rest = solve(km, y, np.arange(km.n), 100.0, alpha0=done.alpha)
    assert rest.objective == pytest.approx(smo.objective, rel=1e-5)


def test_a_finish_on_kept_memory_reads_nothing_left_there():
    # catches a finish that reads L's upper triangle, a row of L before writing it, or a row of Q
    # no position holds, once its memory is no longer fresh: the kept arrays are poisoned with
    # NaN between two finishes (one on a larger problem, so that the second fits in its memory),
    # and the second must be the fresh one's bit for bit
    def one(n, seed, C):
        X, y = problem(n=n, seed=seed, sep=0.5)
        exact = KernelMatrix(X, 0.5).exact(np.arange(y.size))
        return finish(exact, y, upper_bounds(y, C), np.zeros(y.size), 1e-6)

    fresh = one(60, 12, 50.0)
    with reusing_memory():
        one(90, 11, 50.0)
        kept = active_set._kept.arrays
        for array in kept:
            array[:] = np.nan
        again = one(60, 12, 50.0)
        assert not np.isnan(kept[1]).all()   # the finish wrote its rows of Q into the poisoned memory
    assert again.optimal and again.steps == fresh.steps > 0
    np.testing.assert_array_equal(again.alpha, fresh.alpha)
    np.testing.assert_array_equal(again.gradient, fresh.gradient)


def test_memory_is_kept_within_the_scope_only():
    # catches a scope that keeps nothing (each finish would take fresh pages) or keeps its memory
    # after it ends (a search's gigabytes held for good), and a nested scope that drops the outer's
    assert getattr(active_set._kept, "arrays", None) is None
    with reusing_memory():
        first = active_set._memory(1, 1000)
        with reusing_memory():
            assert np.shares_memory(active_set._memory(1, 800), first)
        assert np.shares_memory(active_set._memory(1, 1000), first)
        assert not np.shares_memory(active_set._memory(1, 2000), first)   # grown: taken afresh
    assert active_set._kept.arrays is None
    assert not np.shares_memory(active_set._memory(1, 1000), active_set._memory(1, 1000))


def test_seeded_cross_validation_matches_cold_and_is_deterministic():
    # every round from a seed (SIR) or from zero reaches the same optimum: same predictions
    X, y = problem(n=150, seed=9, sep=0.6)
    runs = [cross_validate(X, y, 20.0, 0.3, k=5, method=method, options=ACTIVE_SET)
            for method in ("cold", "sir", "sir")]
    assert [r.n_correct for r in runs[0].rounds] == [r.n_correct for r in runs[1].rounds]
    for a, b in zip(runs[1].rounds, runs[2].rounds):
        assert (a.iterations, a.n_sv, a.objective) == (b.iterations, b.n_sv, b.objective)
    smo = cross_validate(X, y, 20.0, 0.3, k=5, method="cold")
    assert abs(smo.accuracy - runs[0].accuracy) <= 100 / 150


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), log_C=st.floats(-3, 6), log_gamma=st.floats(-4, 1),
       duplicates=st.integers(0, 8), flip=st.booleans(), weight=st.floats(0.1, 10))
def test_property_feasible_and_optimal(seed, log_C, log_gamma, duplicates, flip, weight):
    # C from 1e-3 (every alpha at C) to 1e6 (every alpha free on separable data), duplicates of
    # either label, a C per class; whatever the path (slides, SMO's fallback), the result is
    # feasible and eps-optimal in float64
    X, y = problem(n=40, d=3, seed=seed, sep=1.5, duplicates=duplicates, flip_duplicates=flip)
    km = KernelMatrix(X, 10.0**log_gamma)
    C = (10.0**log_C, 10.0**log_C * weight)
    ours = solve(km, y, np.arange(km.n), C, options=ACTIVE_SET)
    assert_feasible(ours.alpha, y, C)
    if ours.iterations == ours.newton_steps:        # the finish was optimal on its own
        assert kkt_gap64(km, y, ours.alpha, C) <= 1e-3


# --- the invariants the loop keeps between its syncs ----------------------------------------

def free_state(n=40, seed=10, flip_duplicates=False):
    """A feasible point with every alpha free, and the finish's state on it (``_start``)."""
    from alphaseed.solver.active_set import _start

    X, y = problem(n=n, d=3, seed=seed, duplicates=10 if flip_duplicates else 0, flip_duplicates=flip_duplicates)
    km = KernelMatrix(X, 0.5)
    exact = km.exact(np.arange(km.n))
    C = 1.0
    alpha = np.full(y.size, 0.5 * C)
    alpha[y > 0] *= (y < 0).sum() / (y > 0).sum()       # y'alpha = 0, everything free
    l = y.size
    state = dict(L=np.zeros((l + 1, l + 1)), rowQ=np.empty((l + 1, l)), where=np.empty(l + 1, dtype=np.int64),
                 slots=np.empty(l + 1, dtype=np.int64), yF=np.empty(l + 1), gF=np.empty(l + 1), pend=np.zeros(l + 1))
    G = exact_gradient(exact, y, alpha)
    free = np.flatnonzero(alpha > 0)
    columns = active_set._signed_rows(exact, y, free, out=state["rowQ"][:free.size])
    m = _start(exact, y, free, columns, G, *list(state.values())[:-1], np.zeros(l, dtype=bool))
    return exact, y, upper_bounds(y, C), alpha, G, state, m


def synced(state, m, G):
    """G with the pending changes of F's positions applied, as ``finish`` brings it up to date."""
    by_row = np.empty(m)
    by_row[state["where"][:m]] = state["pend"][:m]
    return G + state["rowQ"][:m].T @ by_row


@pytest.mark.parametrize("n", [40, 150])
def test_newton_steps_keep_the_gradient_of_f_and_of_the_rest(n):
    # catches a step that forgets G_F's change (gF), or a leaving index whose pending change never
    # reaches G: both gradients must equal the ones computed afresh at the point reached. At 150
    # one call takes more than twice FRESH_SOLVES steps, so u and w are solved afresh mid-call:
    # a refresh that solves for a stale right-hand side there (the last direction left in D
    # instead of -G_F) fails at 150 and passes at 40
    from alphaseed.solver.active_set import _to_face_optimum

    exact, y, bounds, alpha, G, state, m = free_state(n=n)
    m_after, steps, reached = _to_face_optimum(*state.values(), m, alpha, bounds, G, 1000)
    assert reached and steps > 1 and m_after < m          # some indices met their bounds
    assert n < 150 or steps > 2 * active_set.FRESH_SOLVES
    G = synced(state, m_after, G)
    fresh = exact_gradient(exact, y, alpha)
    np.testing.assert_allclose(G, fresh, atol=1e-9)
    np.testing.assert_allclose(state["gF"][:m_after], fresh[state["slots"][:m_after]], atol=1e-9)
    assert_feasible(alpha, y, (1.0, 1.0))


def test_a_slide_keeps_f_optimal_feasible_and_lowers_the_objective():
    # an instance duplicated with the other label: its column is minus its twin's, in F's span.
    # Catches a slide with the wrong multiplier (y'alpha drifts) or a gF left behind
    from alphaseed.solver.active_set import _slide, _to_face_optimum

    exact, y, bounds, alpha, G, state, m = free_state(flip_duplicates=True)
    m, _, reached = _to_face_optimum(*state.values(), m, alpha, bounds, G, 1000)
    G = synced(state, m, G)
    state["pend"][:m] = 0.0
    state["gF"][:m] = G[state["slots"][:m]]
    n = y.size - 10
    free = set(state["slots"][:m])
    twins = [(k, t) for k, t in zip(range(n, y.size), range(10)) if (k in free) != (t in free)]
    assert reached and twins
    k = next(t if k in free else k for k, t in twins)
    q = y * y[k] * exact.rows([k])[0]
    lam = np.mean(-y[state["slots"][:m]] * G[state["slots"][:m]])
    direction = y[k] if -y[k] * G[k] > lam else -y[k]
    value = lambda a: 0.5 * (y * a) @ exact.times(np.arange(y.size), y * a) - a.sum()
    before = value(alpha)
    m = _slide(*state.values(), m, alpha, bounds, G, k, q, y[k], direction)
    G = synced(state, m, G)
    fresh = exact_gradient(exact, y, alpha)
    np.testing.assert_allclose(G, fresh, atol=1e-9)
    np.testing.assert_allclose(state["gF"][:m], fresh[state["slots"][:m]], atol=1e-9)
    assert_feasible(alpha, y, (1.0, 1.0))
    assert value(alpha) < before


def test_svc_and_grid_search_take_the_solver():
    # the estimator's parameter reaches the solver: the same model as SMO's on a well-conditioned
    # three-class problem, found by Newton steps
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from alphaseed import SVC, GridSearchCV

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    smo = SVC(C=3.0, gamma=0.1).fit(X, y)
    ours = SVC(C=3.0, gamma=0.1, solver="active_set").fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), smo.predict(X))
    np.testing.assert_array_equal(ours.n_support_, smo.n_support_)
    np.testing.assert_allclose(ours.decision_function(X), smo.decision_function(X), atol=1e-3)
    grid = {"C": [1.0, 10.0], "gamma": [0.05, 0.2]}
    searches = [GridSearchCV(SVC(solver=solver), grid, cv=3).fit(X, y) for solver in ("smo", "active_set")]
    np.testing.assert_allclose(searches[1].cv_results_["mean_test_score"], searches[0].cv_results_["mean_test_score"])


def test_an_unknown_solver_is_refused():
    from alphaseed.errors import SolverInputError

    X, y = problem(n=20)
    with pytest.raises(SolverInputError, match="solver must be one of"):
        solve(KernelMatrix(X, 0.5), y, np.arange(20), 1.0, options=SolverOptions(solver="newton"))


def test_auto_is_smo_wherever_smo_converges_within_its_budget():
    # catches an auto that always finishes with the active set (its optimum differs from SMO's)
    X, y = problem(n=80, seed=11)
    km = KernelMatrix(X, 0.5)
    smo = solve(km, y, np.arange(km.n), 3.0)
    auto = solve(km, y, np.arange(km.n), 3.0, options=SolverOptions(solver="auto"))
    assert smo.iterations < 20 * km.n
    assert auto.newton_steps == 0 and auto.iterations == smo.iterations
    np.testing.assert_array_equal(auto.alpha, smo.alpha)


def every_run_a_tail(monkeypatch):
    """SMO's budget under auto a tenth of an iteration per instance, and the finish's start priced
    at nothing: every run SMO does not end at once goes on to the active set from there."""
    import alphaseed.solver.training as training

    monkeypatch.setattr(training, "AUTO_SMO_ITERATIONS", 0.1)
    monkeypatch.setattr(training, "AUTO_SMO_MIN_ITERATIONS", 1)
    monkeypatch.setattr(training, "AUTO_FINISH_ROW_VALUE", 0.0)
    monkeypatch.setattr(training, "AUTO_FINISH_FACTOR_FLOP", 0.0)


def test_auto_lets_smo_go_on_while_the_finishs_start_would_cost_more(monkeypatch):
    # SMO's budget 8 iterations and the start priced at 20: SMO's 8, 12 more, then Newton steps;
    # under a cap of 15, SMO's 15 alone; priced past SMO's whole run: SMO's run alone, to SMO's
    # optimum. Catches an auto that finishes at the budget whatever the start costs, lets SMO go
    # on past the start's price or the caller's cap, or counts only one of SMO's two runs
    import alphaseed.solver.training as training

    every_run_a_tail(monkeypatch)
    X, y = problem(n=80, seed=12)
    km = KernelMatrix(X, 0.5)
    smo = solve(km, y, np.arange(km.n), 30.0)
    monkeypatch.setattr(training, "_finish_start_iterations", lambda free, l: 20)
    priced = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(solver="auto"))
    assert priced.newton_steps > 0 and priced.iterations - priced.newton_steps == 20
    assert kkt_gap64(km, y, priced.alpha, 30.0) <= 1e-3
    capped = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(solver="auto", max_iter=15))
    assert capped.iterations == 15 and capped.iteration_cap_hit and capped.newton_steps == 0
    monkeypatch.setattr(training, "_finish_start_iterations", lambda free, l: 10 * smo.iterations)
    dear = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(solver="auto"))
    assert dear.newton_steps == 0 and dear.finisher == "smo" and not dear.iteration_cap_hit
    assert 20 < dear.iterations < 10 * smo.iterations
    assert objective64(km, y, dear.alpha) == pytest.approx(objective64(km, y, smo.alpha), rel=1e-3)


def test_the_finishs_start_outprices_smos_budget_only_on_a_large_free_set():
    # full Adult at gamma = 2^-3, C = 2^9 (8,379 free of 26,048 at the budget; options.py), where
    # SMO converged 27,000 iterations past its budget, goes on to there; the Adult samples' grids,
    # free sets up to 0.34 of their 2,400 and 4,000 training instances, keep the runs measured
    # before. Catches a price without the factor's cube, or with the rows priced per instance
    from alphaseed.solver.training import _auto_budget, _finish_start_iterations

    assert _finish_start_iterations(8379, 26048) > _auto_budget(26048) + 27_000
    for l in (2400, 4000):
        assert _finish_start_iterations(int(0.34 * l), l) < _auto_budget(l)


def test_auto_finishes_smos_tail_with_the_active_set(monkeypatch):
    # a budget of a tenth of an iteration per instance makes any run a tail: SMO's iterations,
    # then Newton steps from where SMO stopped, to the exact optimum
    every_run_a_tail(monkeypatch)
    X, y = problem(n=80, seed=12)
    km = KernelMatrix(X, 0.5)
    auto = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(solver="auto"))
    smo = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(eps=1e-6))
    assert auto.newton_steps > 0 and auto.iterations - auto.newton_steps == 8
    assert kkt_gap64(km, y, auto.alpha, 30.0) <= 1e-3
    assert objective64(km, y, auto.alpha) == pytest.approx(objective64(km, y, smo.alpha), rel=1e-6)


def test_auto_keeps_smos_iteration_cap_where_the_finish_gives_up(monkeypatch):
    # a finish with no memory gives up, and SMO goes on: catches an auto whose SMO starts a fresh
    # cap after the finish (8 + 20 iterations where one SMO run stops at 20)
    import alphaseed.solver.active_set as active_set

    every_run_a_tail(monkeypatch)
    monkeypatch.setattr(active_set, "MEMORY_BYTES", 0)
    X, y = problem(n=80, seed=12)
    km = KernelMatrix(X, 0.5)
    auto = solve(km, y, np.arange(km.n), 30.0, options=SolverOptions(solver="auto", max_iter=20))
    assert auto.finisher == "smo" and auto.iteration_cap_hit
    assert auto.iterations == 20
    assert_feasible(auto.alpha, y, 30.0)


def test_svc_defaults_to_auto_and_the_pipeline_to_smo(monkeypatch):
    # the scikit-learn layer takes auto by default; the reproduction's searches keep LibSVM's SMO:
    # catches run_search building its SVC without the options' solver (it would take auto)
    import alphaseed.pipeline.searches as searches
    from alphaseed import SVC

    assert SVC().solver == "auto" and SolverOptions().solver == "smo"
    seen = []

    class Stop(Exception):
        pass

    def capture(estimator, *args, **kwargs):
        seen.append(estimator.get_params()["solver"])
        raise Stop

    monkeypatch.setattr(searches, "GridSearchCV", capture)
    X, y = problem(n=30)
    spec = searches.SearchSpec(name="t", log2_C=[0.0], log2_gamma=[0.0], k=3, seed=0, method="sir")
    with pytest.raises(Stop):
        searches.run_search(X, y, spec)
    assert seen == ["smo"]


def test_a_larger_C_goes_on_as_the_smaller_showed():
    # catches a rule that moves smo or active_set off what the caller asked for, keeps auto spending
    # SMO's budget where the smaller C was a tail on a small free set (finished by the active set,
    # or SMO's own run that, grown by the step in C, passes AUTO_DIRECT_ITERATIONS an instance),
    # sends a large free set or a short SMO run straight to the active set, ignores the step in C
    # or takes a run under one iteration an instance for a tail at a large step, sends a run with
    # no seed straight to the active set, or retries an active set that gave up
    from dataclasses import replace

    from alphaseed.solver import options_at_larger_C

    X, y = problem(n=100)
    base = solve(KernelMatrix(X, 0.5), y, np.arange(100), 1.0)
    auto, smo = SolverOptions(solver="auto"), SolverOptions()
    small = replace(base, n_sv=40, n_bounded_sv=20, newton_steps=12, finisher="active_set")   # 20 % free
    large = replace(small, n_sv=60, n_bounded_sv=20)                                           # 40 % free
    gave_up = replace(small, finisher="smo")
    smo_run = replace(small, iterations=160, newton_steps=0, finisher="smo")   # 1.6 an instance

    def after(result, step=4.0, asked=auto, options=auto, seeded=True):
        return options_at_larger_C(options, asked, result, C=1.0, step=step, seeded=seeded)

    assert after(replace(smo_run, iterations=2_000, iteration_cap_hit=True), step=16.0) is auto  # the caller's cap
    assert after(small, asked=smo, options=smo) is smo
    assert after(gave_up, asked=ACTIVE_SET, options=ACTIVE_SET) is ACTIVE_SET
    assert after(smo_run) is auto                                   # 6.4 an instance at the next C
    assert after(smo_run, step=16.0).solver == "active_set"         # 25.6: a tail
    assert after(replace(smo_run, iterations=290)) is auto          # 11.6
    assert after(replace(smo_run, iterations=300)).solver == "active_set"   # 12
    assert after(replace(smo_run, n_sv=60), step=16.0) is auto      # ... on a large free set
    assert after(replace(smo_run, iterations=90), step=128.0) is auto  # 0.9 an instance, however far
    assert after(replace(smo_run, iterations=100), step=16.0).solver == "active_set"   # one is enough
    assert after(small).solver == "active_set"
    assert after(large) is auto
    assert after(gave_up).solver == "smo"
    # no seed at the larger C (a cold chain): never straight to the active set, which would start
    # from zero, but SMO still for the rest of a chain whose active set gave up
    assert after(small, seeded=False) is auto
    assert after(smo_run, step=16.0, seeded=False) is auto
    assert after(gave_up, seeded=False).solver == "smo"
    # a finish that gave up before its first step: catches a chain that takes it for SMO's own run
    gave_up_at_once = replace(base, iterations=150_000)                                        # past the budget
    assert after(gave_up_at_once).solver == "smo"
    direct = after(small)
    assert after(replace(small, newton_steps=0), asked=direct).solver == "active_set"
    assert after(large, asked=direct) is auto
    stuck = after(gave_up)
    assert after(base, asked=stuck) is stuck                        # SMO for the rest of the chain


def turning_result(turning_up=3, C=1.0):
    """A run the active set finished at C (1 unless given) on 100 instances: 40 free at C / 2, 20
    at C, 40 at 0, and its path's slope, along which at the next C, 4 C (line C (0.5 + 3 slope'),
    box [0, 4 C]), 4 free alphas fall below 0 and ``turning_up`` pass 4 C. The other free ones stay
    inside: 10 that only a line of step times the slope would carry past 4 C, 10 that only the
    smaller C's box would see leave, and the rest; the bounded ones' slope is their C, so their
    line ends on the box's edge. At the next C = 2 C none leaves."""
    from dataclasses import replace

    X, y = problem(n=100)
    base = solve(KernelMatrix(X, 0.5), y, np.arange(100), 1.0)
    alpha = C * np.r_[np.full(40, 0.5), np.ones(20), np.zeros(40)]
    free_slopes = np.r_[np.full(4, -0.2), np.full(turning_up, 1.2), np.full(10, 1.0), np.full(10, 0.2),
                        np.full(16 - turning_up, 0.1)]
    slope = C * np.r_[free_slopes, np.ones(20), np.zeros(40)]
    return replace(base, alpha=alpha, slope=slope, n_sv=60, n_bounded_sv=20, newton_steps=12,
                   finisher="active_set")


def test_the_path_s_turns_are_the_free_alphas_its_line_carries_out_of_the_box():
    # catches turns counted against the smaller C's box or a box that ignores C, a line of step
    # rather than step - 1 times the slope or one that ignores the step, a bound alpha (whose line
    # ends on the edge) or one at 0 counted, a lower or an upper edge left out, and a run without a
    # slope given turns
    from dataclasses import replace

    from alphaseed.solver.training import path_turns

    result = turning_result()
    assert path_turns(result, 1.0, 4.0) == pytest.approx(7 / 40)
    assert path_turns(turning_result(turning_up=0), 1.0, 4.0) == pytest.approx(4 / 40)
    assert path_turns(turning_result(C=3.0), 3.0, 4.0) == pytest.approx(7 / 40)
    assert path_turns(result, 1.0, 2.0) == 0.0
    assert path_turns(replace(result, slope=None), 1.0, 4.0) == 0.0
    no_free = replace(result, alpha=np.r_[np.zeros(40), np.ones(20), np.zeros(40)])
    assert path_turns(no_free, 1.0, 4.0) == 0.0


def test_a_path_that_turns_often_sends_a_large_free_set_straight_to_the_active_set(monkeypatch):
    # 40 % free is past AUTO_DIRECT_FREE_SHARE: catches a rule that leaves such a run with SMO's
    # budget whatever its path, one that sends it straight on at few turns, from another seed than
    # the path's, or after a finish that gave up, one that reads the share of turns but not its
    # constant, and one that counts the turns at another C than the run's
    from dataclasses import replace

    import alphaseed.solver.training as training
    from alphaseed.solver import options_at_larger_C

    auto = SolverOptions(solver="auto")

    def after(result, path_seed=True, C=1.0):
        return options_at_larger_C(auto, auto, result, C=C, step=4.0, seeded=True, path_seed=path_seed)

    often, seldom = turning_result(), turning_result(turning_up=0)   # 17.5 % and 10 % of F turn
    assert after(often).solver == "active_set"
    assert after(seldom) is auto
    assert after(often, path_seed=False) is auto
    assert after(turning_result(C=3.0), C=3.0).solver == "active_set"
    assert after(turning_result(turning_up=0, C=3.0), C=3.0) is auto
    assert after(replace(often, slope=None)) is auto
    assert after(replace(often, finisher="smo")).solver == "smo"
    monkeypatch.setattr(training, "AUTO_DIRECT_PATH_TURNS", 0.1)
    assert after(seldom).solver == "active_set"


def test_a_search_column_hands_each_larger_C_to_the_solver_the_smaller_showed(monkeypatch):
    # SMO's budget of a tenth of an iteration per instance makes every run a tail, and any free set
    # counts as small: each split's smallest C goes through auto (SMO, then the active set), every
    # larger C straight to the active set; catches a search that forgets the chain's finisher, or
    # carries it over to the next split
    import alphaseed.sklearn.grid_search as grid_search
    import alphaseed.solver.training as training
    from alphaseed import SVC, GridSearchCV

    every_run_a_tail(monkeypatch)
    monkeypatch.setattr(training, "AUTO_DIRECT_FREE_SHARE", 1.0)
    asked = []
    original = grid_search.run_round

    def spy(kernel, y, split, C, *, options, **kwargs):
        asked.append((split[1][0], C, options.solver))   # a split by its first test instance
        return original(kernel, y, split, C, options=options, **kwargs)

    monkeypatch.setattr(grid_search, "run_round", spy)
    X, y = problem(n=60, seed=12)
    Cs = [10.0, 30.0, 100.0]
    search = GridSearchCV(SVC(), {"C": Cs, "gamma": [0.5]}, cv=3, refit=False).fit(X, y)
    # the splits' chains run at once, so their rounds interleave; each chain's run in order
    chains: dict = {}
    for split, C, solver in asked:
        chains.setdefault(split, []).append((C, solver))
    assert len(chains) == 3
    assert all(chain == [(C, "auto" if C == Cs[0] else "active_set") for C in Cs] for chain in chains.values())
    exact = GridSearchCV(SVC(solver="active_set"), {"C": Cs, "gamma": [0.5]}, cv=3, refit=False).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], exact.cv_results_["mean_test_score"])


@pytest.mark.parametrize("seed, C", [(1, 10.0), (2, 100.0)])
def test_the_fresh_gradients_from_f_s_rows_are_the_kernel_s(seed, C):
    """The finish computes its start's gradient and the one that confirms an optimum from F's rows
    of Q, at hand, and the other support vectors' columns: both must be exact_gradient's to
    rounding, and the G_bar it returns LibSVM's. Catches F's alphas matched to the wrong rows (rowQ's
    rows are in ``where``'s order, shuffled by the indices that left) and a support vector counted
    twice or left out."""
    from alphaseed.solver.active_set import _gradient_with_rows

    exact, y, bounds, alpha, G, state, m = free_state(seed=seed)
    by_row = np.empty(m)
    by_row[state["where"][:m]] = alpha[state["slots"][:m]]
    cols, rows = state["slots"][:m], state["rowQ"][:m]
    np.testing.assert_allclose(_gradient_with_rows(exact, y, alpha, bounds, cols, rows, by_row)[0],
                               G, rtol=0, atol=1e-12 * np.abs(G).max())
    # three of each label at the bound: F's rows at hand are the free ones'
    positive, negative = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    alpha[np.r_[positive[:3], negative[:3]]] = bounds[0]
    free = np.flatnonzero((alpha > 0) & (alpha < bounds))
    G = exact_gradient(exact, y, alpha)
    fresh, (upper, T) = _gradient_with_rows(exact, y, alpha, bounds, free, exact.rows(free, y=y), alpha[free])
    np.testing.assert_allclose(fresh, G, rtol=0, atol=1e-12 * np.abs(G).max())
    np.testing.assert_array_equal(upper, np.sort(np.r_[positive[:3], negative[:3]]))
    # from an earlier call's bounded set, since which two indices reached the bound and one left it:
    # catches a change of the bounded set missed or counted with the wrong sign
    earlier = np.sort(np.append(upper[2:], free[0]))
    earlier_T = exact.times(earlier, y[earlier] * bounds[earlier])
    again, (_, T_again) = _gradient_with_rows(exact, y, alpha, bounds, free, exact.rows(free, y=y), alpha[free],
                                              (earlier, earlier_T))
    np.testing.assert_allclose(again, G, rtol=0, atol=1e-12 * np.abs(G).max())
    np.testing.assert_allclose(T_again, T, rtol=0, atol=1e-12 * np.abs(T).max())
    # a row at hand whose alpha sits at its bound (a step's rounding can leave one in F), weighted
    # zero there as the finish weights it: summed once, in T; catches T leaving out the indices of
    # cols, which would then be summed nowhere
    cols = np.append(free, upper[0])
    weights = np.append(alpha[free], 0.0)
    twice, _ = _gradient_with_rows(exact, y, alpha, bounds, cols, exact.rows(cols, y=y), weights)
    np.testing.assert_allclose(twice, G, rtol=0, atol=1e-12 * np.abs(G).max())
    X, y = problem(n=70, seed=seed, sep=0.3, duplicates=10)
    exact = KernelMatrix(X, 0.5).exact(np.arange(y.size))
    start = np.where(y > 0, C / 4 / (y > 0).sum(), C / 4 / (y < 0).sum())
    done = finish(exact, y, upper_bounds(y, C), start, 1e-6)
    assert done.optimal and done.left > 0      # indices left F, so its rows were shuffled
    fresh = exact_gradient(exact, y, done.alpha)
    np.testing.assert_allclose(done.gradient, fresh, rtol=0, atol=1e-10 * np.abs(fresh).max())
    bounds = upper_bounds(y, C)
    upper = np.flatnonzero(done.alpha >= bounds)   # 9 at C = 10, none at C = 100
    G_bar = y * exact.times(upper, y[upper] * bounds[upper])
    np.testing.assert_allclose(done.gradient_bar, G_bar, rtol=0, atol=1e-10 * np.abs(G_bar).max())
