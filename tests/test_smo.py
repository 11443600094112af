"""The solver on its own: warm starts, degenerate problems, invalid input.

Equivalence with LibSVM itself is tested in test_solver_vs_libsvm.py.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphaseed.errors import SolverInputError
from alphaseed.kernel import KernelMatrix
from alphaseed.solver import SolverOptions, check_warm_start, solve, train_svm


def blobs(n=80, d=4, seed=0, sep=1.0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + sep * y[:, None]
    return X, y


def random_feasible_alpha(y, C, rng):
    """A random point of {0 <= a <= C, y.a = 0}: scale the larger class side down."""
    a = rng.uniform(0, C, size=y.size)
    pos, neg = a[y > 0].sum(), a[y < 0].sum()
    if pos > neg:
        a[y > 0] *= neg / pos
    else:
        a[y < 0] *= pos / neg
    return a


def dual_objective(km, y, alpha):
    K = km.block(np.arange(km.n), np.arange(km.n)).astype(np.float64)
    v = y * alpha
    return 0.5 * v @ K @ v - alpha.sum()


def test_solution_is_feasible_and_objective_matches_its_definition():
    X, y = blobs()
    km = KernelMatrix(X, 0.3)
    r = solve(km, y, np.arange(km.n), C=2.0)
    assert r.alpha.min() >= 0 and r.alpha.max() <= 2.0
    assert abs(y @ r.alpha) < 1e-10
    assert r.objective == pytest.approx(dual_objective(km, y, r.alpha), rel=1e-6)
    assert r.gradient == pytest.approx(
        km.block(np.arange(km.n), np.arange(km.n)).astype(np.float64) @ (y * r.alpha) * y - 1,
        abs=1e-5,
    )


def test_warm_start_from_the_optimum_stops_at_once():
    X, y = blobs(seed=1)
    km = KernelMatrix(X, 0.5)
    cold = solve(km, y, np.arange(km.n), C=1.0)
    warm = solve(km, y, np.arange(km.n), C=1.0, alpha0=cold.alpha)
    assert warm.iterations <= 2
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)


def test_a_start_an_ulp_inside_its_bound_is_on_it():
    """Catches a warm start's alpha one ulp below C counted as free: where every alpha is at C
    (near-identity kernel, small C), that one alone would set rho instead of the middle of the
    interval the bounded ones leave, and predictions would flip to one class."""
    X, _ = blobs(n=40, seed=2)
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    km = KernelMatrix(X, 1e3)
    C = 2.0**-5
    cold = solve(km, y, np.arange(km.n), C=C)
    assert (cold.alpha == C).all()
    inside = np.full(km.n, C)
    positive, negative = np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]
    inside[[positive, negative]] = np.nextafter(C, 0.0)
    assert (check_warm_start(inside, y, C) == C).all()
    warm = solve(km, y, np.arange(km.n), C=C, alpha0=inside)
    assert (warm.alpha == C).all()
    assert warm.rho == cold.rho


@pytest.mark.parametrize("seed", range(5))
def test_warm_start_from_a_random_feasible_point_reaches_the_cold_optimum(seed):
    X, y = blobs(seed=seed)
    km = KernelMatrix(X, 0.5)
    C = 3.0
    cold = solve(km, y, np.arange(km.n), C=C, options=SolverOptions(eps=1e-5))
    alpha0 = random_feasible_alpha(y, C, np.random.default_rng(seed))
    warm = solve(km, y, np.arange(km.n), C=C, alpha0=alpha0, options=SolverOptions(eps=1e-5))
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)


def test_training_order_and_subset_are_respected():
    X, y = blobs(n=60, seed=3)
    km = KernelMatrix(X, 0.5)
    index = np.random.default_rng(0).permutation(60)[:45]
    r = solve(km, y, index, C=1.0)
    alone = solve(KernelMatrix(X[index], 0.5), y[index], np.arange(45), C=1.0)
    assert r.iterations == alone.iterations
    np.testing.assert_allclose(r.alpha, alone.alpha, atol=1e-12)


def test_shrinking_changes_nothing_but_speed():
    X, y = blobs(n=300, seed=4, sep=0.3)
    km = KernelMatrix(X, 0.5)
    a = solve(km, y, np.arange(km.n), C=10.0, options=SolverOptions(shrinking=True))
    b = solve(km, y, np.arange(km.n), C=10.0, options=SolverOptions(shrinking=False))
    assert a.objective == pytest.approx(b.objective, rel=1e-5)


def test_a_tiny_cache_gives_the_same_run():
    X, y = blobs(n=200, seed=5, sep=0.3)
    km = KernelMatrix(X, 0.5)
    big = solve(km, y, np.arange(km.n), C=10.0)
    tiny = solve(km, y, np.arange(km.n), C=10.0, options=SolverOptions(cache_mb=1e-3))
    assert big.iterations == tiny.iterations
    np.testing.assert_array_equal(big.alpha, tiny.alpha)


def test_reaching_the_iteration_cap_is_reported():
    X, y = blobs(n=200, seed=6, sep=0.2)
    km = KernelMatrix(X, 0.5)
    r = solve(km, y, np.arange(km.n), C=100.0, options=SolverOptions(max_iter=5))
    assert r.iterations == 5 and r.iteration_cap_hit
    assert abs(y @ r.alpha) < 1e-10


def test_one_class_predicts_that_class():
    X = np.random.default_rng(0).normal(size=(10, 2))
    for label in (1.0, -1.0):
        model = train_svm(X, np.full(10, label), C=1.0, gamma=1.0)
        assert model.iterations == 0
        assert (model.predict(X + 5) == label).all()


def test_identity_kernel_duplicates_and_extreme_C_terminate():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 255, size=(40, 30)).astype(float)  # gamma makes K the identity
    X[20:] = X[:20]  # every instance duplicated, half with the opposite label
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    for C in (1e-6, 1.0, 1e6):
        model = train_svm(X, y, C=C, gamma=0.7)
        assert model.alpha.min() >= 0 and model.alpha.max() <= C
        assert abs(y @ model.alpha) <= 1e-9 * max(1.0, model.alpha.sum())
        assert not model.iteration_cap_hit


@given(
    n=st.integers(2, 30),
    d=st.integers(1, 5),
    C=st.floats(1e-3, 1e3),
    gamma=st.floats(1e-3, 1e2),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=40, deadline=None)
def test_any_small_problem_terminates_feasibly(n, d, C, gamma, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(1)  # rounding makes duplicates likely
    y = rng.choice([-1.0, 1.0], size=n)
    model = train_svm(X, y, C=C, gamma=gamma)
    assert not model.iteration_cap_hit
    assert model.alpha.min() >= 0 and model.alpha.max() <= C
    assert abs(y @ model.alpha) <= 1e-9 * max(1.0, model.alpha.sum())
    assert np.isfinite(model.rho)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"C": 0.0}, "C must be"),
        ({"C": -1.0}, "C must be"),
        ({"C": 1.0, "gamma": 0.0}, "gamma must be"),
        ({"C": 1.0, "alpha0": np.full(6, 2.0)}, "leaves"),
        ({"C": 1.0, "alpha0": np.r_[1.0, np.zeros(5)]}, "sum"),
        ({"C": 1.0, "alpha0": np.zeros(4)}, "alpha0 has 4"),
    ],
)
def test_invalid_input_is_rejected_with_a_named_reason(kwargs, message):
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([1.0, -1, 1, -1, 1, -1])
    kwargs = {"gamma": 0.5, **kwargs}
    with pytest.raises(SolverInputError, match=message):
        train_svm(X, y, **kwargs)


@pytest.mark.parametrize("index, labels, previous, message", [
    (np.array([0, 1, 6]), 6, None, r"indices must lie in \[0, 6\)"),
    (np.array([-1, 0, 1]), 6, None, r"indices must lie"),
    (np.arange(6), 5, None, "5 labels for a kernel over 6"),
    (np.arange(6), 6, (np.arange(3), np.zeros(4)), "4 alphas for 3 training instances"),
])
def test_solve_checks_indices_and_the_previous_solution_before_reading_them(index, labels,
                                                                            previous, message):
    """Would catch a negative index silently wrapping around, labels of another dataset, or a
    previous solution whose alphas do not match its index being read past its end."""
    from types import SimpleNamespace

    km = KernelMatrix(np.arange(12.0).reshape(6, 2), 0.5)
    y = np.array([1.0, -1, 1, -1, 1, -1])[:labels]
    if previous is not None:
        previous = (previous[0], SimpleNamespace(alpha=previous[1]))
    with pytest.raises(SolverInputError, match=message):
        solve(km, y, index, C=1.0, previous=previous)


@pytest.mark.parametrize("gradient0, previous, message", [
    ((np.full(7, -1.0), np.zeros(7)), None, "two arrays of 6 values"),
    ((np.full(6, -1.0),), None, "two arrays of 6 values"),
    ((np.full(6, -1.0), np.zeros(6)), "some", "not both"),
])
def test_solve_refuses_a_gradient0_that_does_not_fit(gradient0, previous, message):
    """Would catch a gradient0 longer than the training set being read up to its length, a
    lone G taken for (G, G_bar), or a given gradient silently overriding a carried one."""
    km = KernelMatrix(np.arange(12.0).reshape(6, 2), 0.5)
    y = np.array([1.0, -1, 1, -1, 1, -1])
    if previous is not None:
        previous = (np.arange(6), solve(km, y, np.arange(6), C=1.0))
    with pytest.raises(SolverInputError, match=message):
        solve(km, y, np.arange(6), C=1.0, gradient0=gradient0, previous=previous)


def test_a_given_gradient0_is_used_in_the_callers_order():
    """Would catch gradient0 read in the solver's class-grouped order instead of the caller's:
    the exact gradient at a warm start then gives a different run from LibSVM's own
    initialisation; given in the caller's order, the run is identical."""
    X, y = blobs(n=60, seed=3, sep=0.5)
    km = KernelMatrix(X, 0.5)
    index = np.random.default_rng(3).permutation(60)
    alpha0 = solve(km, y, index, C=1.0, options=SolverOptions(max_iter=40)).alpha
    warm = solve(km, y, index, C=1.0, alpha0=alpha0)
    # No iteration: the gradient LibSVM's initialisation builds at alpha0, in the caller's order.
    start = solve(km, y, index, C=1.0, alpha0=alpha0, options=SolverOptions(max_iter=0))
    given = solve(km, y, index, C=1.0, alpha0=alpha0,
                  gradient0=(start.gradient, start.gradient_bar))
    assert warm.iterations > 0
    assert given.iterations == warm.iterations
    np.testing.assert_array_equal(given.alpha, warm.alpha)
    assert given.rho == warm.rho


def test_labels_other_than_plus_minus_one_are_rejected():
    with pytest.raises(SolverInputError, match="labels"):
        train_svm(np.zeros((3, 1)), np.array([0.0, 1.0, 2.0]), C=1.0, gamma=1.0)


@pytest.mark.parametrize("C", [1.0, (1.0, 4.0), (3.0, 0.5)])
def test_a_carried_gradient_equals_the_one_built_from_scratch(C):
    """Catches a carried G or G_bar off the initialised one, also with a C per class (class
    weights), where G_bar must count each alpha at its own class's bound."""
    from alphaseed.kernel import new_cache
    from alphaseed.seeding.adjust import adjust_added
    from alphaseed.solver import carry_gradient, class_bounds, upper_bounds
    from alphaseed.solver.state import init_gradient, kernel_rows, rows_apart

    X, y = blobs(n=120, seed=8, sep=0.4)
    km = KernelMatrix(X, 0.5)
    rng = np.random.default_rng(8)
    before = rng.permutation(120)[:90]
    prev = solve(km, y, before, C=C)
    after = np.concatenate([before[:60], rng.permutation(np.setdiff1d(np.arange(120), before))])
    # A seed as the k-fold seeders build it: shared alphas kept, new instances balancing them.
    alpha = np.zeros(after.size)
    alpha[:60] = prev.alpha[:60]
    alpha = adjust_added(alpha, y[after], upper_bounds(y[after], C), np.arange(60), np.arange(60, after.size))
    def rows():
        return kernel_rows(km, after, y[after], new_cache(after.size, 1 << 20))

    carried = carry_gradient(km, y, (before, prev), after, alpha, C, rows())
    assert carried is not None
    scratch = init_gradient(*rows_apart(rows()), alpha, *class_bounds(C))
    np.testing.assert_allclose(carried[0], scratch[0], atol=1e-9)
    np.testing.assert_allclose(carried[1], scratch[1], atol=1e-9)
    warm = solve(km, y, after, C=C, alpha0=alpha, previous=(before, prev))
    assert warm.kernel.carried
    cold = solve(km, y, after, C=C)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)


def test_the_chunk_count_changes_nothing(monkeypatch):
    """Above PARALLEL_ACTIVE the active-set loops run in one chunk per thread, the chunk count
    being the thread count Numba reports when the solve starts. Faking that count runs the
    chunked path with 2, 3 and 7 chunks even on a one-thread machine. Catches a combination
    rule that depends on the chunk count: the first chunk winning a tie instead of the later
    index (at the start every I_up instance ties, and with 7 chunks they span three), gmax2
    taken from one chunk, or chunk bounds that drop or repeat an index; with more than one
    thread, also chunks that interfere when they really run in parallel."""
    from numba import get_num_threads, set_num_threads

    from alphaseed.solver import selection, training

    X, y = blobs(n=selection.PARALLEL_ACTIVE + 1000, seed=9, sep=0.2)
    km = KernelMatrix(X, 0.5, mode="gram", memory_budget=2 << 30)
    threads = get_num_threads()

    def run(chunks, numba_threads):
        monkeypatch.setattr(training, "get_num_threads", lambda: chunks)
        set_num_threads(numba_threads)
        try:
            # LibSVM first shrinks after 1000 iterations: all 300 steps go through the chunks.
            return solve(km, y, np.arange(km.n), C=10.0, options=SolverOptions(max_iter=300))
        finally:
            set_num_threads(threads)

    # One Numba thread runs the chunks one after another: quick even on a busy machine, where
    # waking threads for every step of 300 takes seconds.
    runs = {f"{chunks} chunks": run(chunks, 1) for chunks in (1, 2, 3, 7)}
    if threads > 1:
        runs[f"7 chunks on {threads} threads"] = run(7, threads)
    first = runs["1 chunks"]
    for label, result in runs.items():
        assert result.iterations == first.iterations == 300
        np.testing.assert_array_equal(result.alpha, first.alpha, err_msg=label)
        np.testing.assert_array_equal(result.gradient, first.gradient, err_msg=label)
        assert result.rho == first.rho


@pytest.mark.parametrize("chunks", [2, 3, 7])
def test_chunked_loops_combine_libsvm_s_values(chunks):
    """max_up and update_gradient over more than PARALLEL_ACTIVE positions, in chunks, against
    LibSVM's loops written plainly: catches a chunk's i, or gmax2, lost in the combination (the
    I_low maximum sits in the last chunk only, the I_up one in the first), and a chunk's gradient
    update skipped. One Numba thread runs the chunks in turn."""
    from numba import get_num_threads, set_num_threads

    from alphaseed.solver import selection, state

    rng = np.random.default_rng(chunks)
    l = selection.PARALLEL_ACTIVE + 1000
    y = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    G = rng.normal(size=l)
    G[:50] = -5.0 * y[:50]          # the largest -y G, where alpha may move up
    G[-50:] = 5.0 * y[-50:]         # the largest y G, where alpha may move down
    alpha = np.where(rng.random(l) < 0.5, 0.5, 0.0)
    alpha[:50], alpha[-50:] = 0.5, 0.5
    s = state.new_state(alpha, G.copy(), np.zeros(l), 1.0, chunks)
    qi, qj = rng.uniform(-1, 1, (2, l)).astype(np.float32)
    threads = get_num_threads()
    set_num_threads(1)
    try:
        assert selection.max_up(s, y, l) == _libsvm_max_up(0, l, y, s.status, G)
        got = selection.update_gradient(s, y, l, qi, qj, (0.25, -0.5))
    finally:
        set_num_threads(threads)
    expected_G = G.copy()
    assert got == _libsvm_update_and_max_up(0, l, expected_G, qi, qj, (0.25, -0.5), y, s.status)
    np.testing.assert_array_equal(s.G, expected_G)


def _libsvm_max_up(lo, hi, y, status, G):
    """LibSVM's loops as written there: the largest -y G over I_up, the later index winning ties,
    and the stopping test's Gmax2, the largest y G over I_low."""
    from alphaseed.solver import LOWER, UPPER

    gmax, gmax_idx, gmax2 = -np.inf, -1, -np.inf
    for t in range(lo, hi):
        if (status[t] != UPPER if y[t] > 0 else status[t] != LOWER) and -y[t] * G[t] >= gmax:
            gmax, gmax_idx = -y[t] * G[t], t
        if status[t] != LOWER if y[t] > 0 else status[t] != UPPER:
            gmax2 = max(gmax2, y[t] * G[t])
    return gmax, gmax_idx, gmax2


def _libsvm_update_and_max_up(lo, hi, G, qi, qj, deltas, y, status):
    """LibSVM's gradient update, then its _libsvm_max_up."""
    for t in range(lo, hi):
        G[t] += float(qi[t]) * deltas[0] + float(qj[t]) * deltas[1]
    return _libsvm_max_up(lo, hi, y, status, G)


def _libsvm_min_low(lo, hi, gmax, qi, i, y, status, G):
    from alphaseed.solver import LOWER, TAU, UPPER

    gmin_idx, obj_diff_min = -1, np.inf
    for j in range(lo, hi):
        if status[j] != LOWER if y[j] > 0 else status[j] != UPPER:
            grad_diff = gmax + y[j] * G[j]
            if grad_diff > 0.0:
                quad = 2.0 - 2.0 * y[i] * y[j] * float(qi[j])
                obj_diff = -(grad_diff * grad_diff) / (quad if quad > 0.0 else TAU)
                if obj_diff <= obj_diff_min:
                    gmin_idx, obj_diff_min = j, obj_diff
    return obj_diff_min, gmin_idx


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(1, 5000),
       distinct=st.sampled_from([1, 2, 3, 1000]), signed_zeros=st.booleans(),
       deltas=st.sampled_from([(0.0, 0.0), (0.5, 0.25), (-1e-3, 0.0)]))
def test_keyed_selection_picks_libsvm_s_pair(seed, length, distinct, signed_zeros, deltas):
    """The vectorised selection (selection.KEY_BLOCK: _max_up_over, _update_and_max_up_over and
    _min_low_over) against LibSVM's loops written plainly, on arrays of one to about forty
    blocks, with few distinct values so that ties abound, and with gradients of -0.0 and 0.0,
    which compare equal (-y G is -0.0 for y = 1 and G = 0.0). Catches the first of tied values
    winning (within a block or across blocks: the earlier block kept on a tie), -0.0 keyed
    apart from 0.0, the smallest and largest keys confused, an empty I_up or I_low not
    reported as -1, gmax2 taken from its key without the key's map undone (``_value_of_key``)
    or over I_up, an empty range's gmax2 not -inf, and a chunk's offset (lo) lost."""
    from alphaseed.solver import selection, state

    rng = np.random.default_rng(seed)
    pool = rng.normal(size=distinct)
    if signed_zeros:
        pool[: (distinct + 1) // 2] = np.where(rng.random((distinct + 1) // 2) < 0.5, -0.0, 0.0)
    G = pool[rng.integers(0, distinct, length)]
    y = np.where(rng.random(length) < 0.5, 1.0, -1.0)
    status = rng.choice(np.array([state.LOWER, state.UPPER, state.FREE], dtype=state.STATUS_DTYPE), length,
                        p=rng.dirichlet(np.ones(3)))
    qi = rng.choice(np.array([-1.0, -0.5, 0.25, 1.0], dtype=np.float32), length)
    qj = rng.uniform(-1, 1, length).astype(np.float32)
    lo = int(rng.integers(0, length))
    hi = int(rng.integers(lo, length + 1))
    keys = np.full((2, length), np.nan)

    assert selection._max_up_over(lo, hi, y, status, G, keys) == _libsvm_max_up(lo, hi, y, status, G)
    expected_G = G.copy()
    expected = _libsvm_update_and_max_up(lo, hi, expected_G, qi, qj, deltas, y, status)
    got = selection._update_and_max_up_over(lo, hi, G, qi, qj, deltas, y, status, keys)
    np.testing.assert_array_equal(G, expected_G)
    assert got == expected
    gmax, i = expected[:2] if expected[1] != -1 else (0.0, lo)
    assert selection._min_low_over(lo, hi, gmax, qi, i, y, status, G, keys) == _libsvm_min_low(
        lo, hi, gmax, qi, i, y, status, G)


def test_a_borrowed_array_is_the_same_memory_with_no_owner():
    """smo_loop works on borrowed views of the caller's arrays. A borrow that copied would lose
    the solver's writes (alpha, G, the permutation); one that returned the array as it is (its
    owner kept) would leave every atomic count in place: the view's meminfo must be null."""
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    from alphaseed.solver.state import borrowed

    @intrinsic
    def has_owner(typingctx, array):
        def codegen(context, builder, signature, args):
            view = cgutils.create_struct_proxy(array)(context, builder, value=args[0])
            return cgutils.is_not_null(builder, view.meminfo)

        return types.boolean(array), codegen

    @njit
    def write_through_a_borrow(a):
        view = borrowed(a)[1:]
        view[0] = 7.0
        return view.sum(), has_owner(view), has_owner(a)

    a = np.arange(4.0)
    total, view_owned, array_owned = write_through_a_borrow(a)
    assert a[1] == 7.0 and total == 7.0 + 2.0 + 3.0
    assert array_owned and not view_owned


def test_a_borrowed_list_reads_and_replaces_the_owners_items():
    """The row cache's List is borrowed too: a borrow that read or wrote another list would
    lose the rows the cache replaces."""
    from numba import njit
    from numba.typed import List

    from alphaseed.solver.state import borrowed

    @njit
    def replace_second(rows):
        view = borrowed(rows)
        view[1] = np.full(3, view[0][0] + 1.0, dtype=np.float32)
        return len(view)

    rows = List([np.ones(2, dtype=np.float32), np.zeros(0, dtype=np.float32)])
    assert replace_second(rows) == 2
    assert rows[1].tolist() == [2.0, 2.0, 2.0]
