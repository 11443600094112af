"""alphaseed.GridSearchCV: scikit-learn's results when cold, the same accuracies when seeded."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV as ScikitGridSearchCV
from sklearn.model_selection import KFold, PredefinedSplit, ShuffleSplit
from sklearn.svm import SVC as ScikitSVC

from alphaseed import SVC, GridSearchCV
from alphaseed.kernel import KernelMatrix
from alphaseed.sklearn import C_SEEDS, search_column, seed_from_smaller_C
from alphaseed.sklearn.one_vs_one import grouped_by_class
from alphaseed.pipeline.searches import SearchSpec, run_search
from alphaseed.report.search import compare_methods, merge_searches, write_search
from alphaseed.solver import SolverOptions, check_warm_start, solve

GRID = {"C": [0.25, 2.0, 16.0, 128.0], "gamma": [0.05, 0.5, "scale"]}



def searched(X, y, log2_C, log2_gamma, method, out, options=SolverOptions()):
    """``alphaseed search``'s run and files: a 3-fold search of the moons, written to ``out``."""
    summary, points = run_search(X, y, SearchSpec("moons", log2_C, log2_gamma, 3, 0, method), options=options)
    return write_search(summary, points, out)

def two_moons(seed: int, n: int = 120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.4, "up", "down")
    return X, y


def assert_same_cv_results(ours, theirs, n_splits: int) -> None:
    for key in ["mean_test_score", "std_test_score", "rank_test_score",
                *(f"split{i}_test_score" for i in range(n_splits))]:
        np.testing.assert_array_equal(ours.cv_results_[key], theirs.cv_results_[key], err_msg=key)
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    for key in ("param_C", "param_gamma"):
        assert list(ours.cv_results_[key]) == list(theirs.cv_results_[key])
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_score_ == theirs.best_score_


@pytest.mark.parametrize("cv", [4, KFold(3, shuffle=True, random_state=1),
                                PredefinedSplit(np.arange(120) % 3)])
def test_cold_search_equals_scikit_learns_grid_search(cv):
    """Catches other folds than scikit-learn's for the same cv (an int must mean
    StratifiedKFold), a gamma="scale" resolved on all of X instead of each training set, and a
    cv_results_ layout or ranking that differs from scikit-learn's."""
    X, y = two_moons(0)
    ours = GridSearchCV(SVC(), GRID, cv=cv, method="cold").fit(X, y)
    theirs = ScikitGridSearchCV(ScikitSVC(), GRID, cv=cv).fit(X, y)
    assert_same_cv_results(ours, theirs, ours.n_splits_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("method, c_seed", [("sir", rule) for rule in C_SEEDS]
                         + [("mir", "keep"), ("ato", "keep")])
def test_seeded_search_has_the_cold_accuracy_at_every_point(method, c_seed):
    """Catches an infeasible or wrongly carried seed (a wrong gradient makes SMO stop at a
    non-optimal point and change accuracies) and seeds that are never used (no fewer
    iterations than cold)."""
    X, y = two_moons(1)
    y = np.where(y == "up", 0, 1)   # class codes, as GridSearchCV passes them
    splits = list(KFold(5, shuffle=True, random_state=0).split(X))
    Cs = [0.5, 2.0, 8.0, 32.0]
    cold_total = seeded_total = 0
    for gamma in (0.1, 0.6):
        cold = search_column(X, y, gamma, Cs, splits, method="cold", options=SolverOptions())
        seeded = search_column(X, y, gamma, Cs, splits, method=method, options=SolverOptions(), c_seed=c_seed)
        for C in Cs:
            np.testing.assert_array_equal(seeded[C].scores, cold[C].scores)
            cold_total += cold[C].iterations.sum()
            seeded_total += seeded[C].iterations.sum()
    assert seeded_total < cold_total


@pytest.mark.parametrize("rule", ["scale", "keep"])
def test_a_seed_from_a_smaller_C_carries_the_exact_gradient(rule):
    """Catches a closed-form gradient that is not Q alpha' - 1 at the new alpha (or a G_bar
    that ignores which alphas sit at the new bound), and an infeasible scaled seed."""
    X, y = two_moons(2, n=60)
    y = np.where(y == "up", 1.0, -1.0)
    kernel = KernelMatrix(X, 0.4, mode="gram")
    index = np.arange(60)
    below = solve(kernel, y, index, 1.0)
    alpha, (G, G_bar) = seed_from_smaller_C(below, 1.0, 4.0, rule)
    assert 0 <= alpha.min() and alpha.max() <= 4.0 and abs(y @ alpha) < 1e-9
    Q = kernel.block(index, index).astype(np.float64) * np.outer(y, y)
    np.testing.assert_allclose(G, Q @ alpha - 1.0, atol=1e-6)
    np.testing.assert_allclose(G_bar, 4.0 * Q[:, alpha >= 4.0].sum(axis=1), atol=1e-6)


def test_a_seed_along_the_path_is_the_optimum_until_the_free_set_changes():
    """Catches a path seed that does not follow the path: from the optimum at C = 1, the seed at
    C = 1.0001 is still optimal (its free set unchanged), where scaling's is not; and one that takes
    the path for a gradient or leaves the box or y'alpha = 0 once the line is clipped far along."""
    from alphaseed.solver.active_set import exact_gradient, gap

    X, y = two_moons(3, n=80)
    y = np.where(y == "up", 1.0, -1.0)
    kernel = KernelMatrix(X, 0.4, mode="gram")
    index = np.arange(y.size)
    exact = kernel.exact(index)
    below = solve(kernel, y, index, 1.0, options=SolverOptions(solver="active_set", eps=1e-9))

    def gap_at(alpha, C):
        return gap(y, alpha, np.full(y.size, C), exact_gradient(exact, y, alpha))

    path, gradient = seed_from_smaller_C(below, 1.0, 1.0001, "path", y)
    assert gradient is None
    assert gap_at(path, 1.0001) < 1e-7 < 1e-5 < gap_at(seed_from_smaller_C(below, 1.0, 1.0001, "scale")[0], 1.0001)
    for C in (4.0, 64.0, 1e4):
        far, _ = seed_from_smaller_C(below, 1.0, C, "path", y)
        assert 0 <= far.min() and far.max() <= C and abs(y @ far) <= 1e-9 * max(1.0, far.sum())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), log_C=st.floats(-3, 6), log_step=st.floats(0.01, 8), log_gamma=st.floats(-4, 1))
@example(seed=77, log_C=3.4003, log_step=7.457, log_gamma=-0.3276)
def test_property_a_seed_along_the_path_is_feasible(seed, log_C, log_step, log_gamma):
    """Catches a path seed that leaves [0, C] or y'alpha = 0 wherever its line is clipped, or that
    ``solve``'s check refuses (alphas within rounding of a bound, put on it, unbalance the sum: a
    hard-margin solution's free alphas stay tiny beside a far larger C), at any C and step: from
    1e-3 (every alpha at the bound) to 1e6 (every one free or zero), steps up to 1e8."""
    X, y = two_moons(seed, n=40)
    y = np.where(y == "up", 1.0, -1.0)
    kernel = KernelMatrix(X, 10.0**log_gamma, mode="gram")
    C = 10.0**log_C
    below = solve(kernel, y, np.arange(y.size), C, options=SolverOptions(solver="active_set"))
    larger = C * 10.0**log_step
    alpha, _ = seed_from_smaller_C(below, C, larger, "path", y)
    np.testing.assert_array_equal(check_warm_start(alpha, y, larger), alpha)


def test_a_seed_along_the_path_moves_only_the_free_set():
    """Catches a path seed that shifts the zeros or the bounded alphas to balance y'alpha: they
    stay at 0 and go to the new C, as on the path."""
    X, y = two_moons(4, n=80)
    y = np.where(y == "up", 1.0, -1.0)
    kernel = KernelMatrix(X, 0.4, mode="gram")
    for C in (1e-3, 2.0):
        below = solve(kernel, y, np.arange(y.size), C, options=SolverOptions(solver="active_set"))
        alpha, _ = seed_from_smaller_C(below, C, 16 * C, "path", y)
        assert (alpha[below.alpha == 0] == 0).all() and (alpha[below.alpha >= C] == 16 * C).all()
    assert (below.alpha == 0).any() and ((below.alpha > 0) & (below.alpha < C)).any()


def test_a_path_seed_that_cannot_be_balanced_scales(monkeypatch):
    """Catches a path seed that hands the solver the cold start (or nothing) where balancing fails."""
    from alphaseed.sklearn import grid_search

    X, y = two_moons(2, n=60)
    y = np.where(y == "up", 1.0, -1.0)
    below = solve(KernelMatrix(X, 0.4, mode="gram"), y, np.arange(60), 2.0,
                  options=SolverOptions(solver="active_set"))
    monkeypatch.setattr(grid_search, "adjust_alpha", lambda alpha, *args: np.zeros_like(alpha))
    np.testing.assert_array_equal(seed_from_smaller_C(below, 2.0, 8.0, "path", y)[0],
                                  seed_from_smaller_C(below, 2.0, 8.0, "scale")[0])


def test_a_path_seed_from_smo_s_solution_scales():
    """Catches a path seed that keeps or fails where the solution came from SMO, which has no slope."""
    X, y = two_moons(2, n=60)
    y = np.where(y == "up", 1.0, -1.0)
    kernel = KernelMatrix(X, 0.4, mode="gram")
    below = solve(kernel, y, np.arange(60), 1.0)
    assert below.slope is None
    alpha, (G, G_bar) = seed_from_smaller_C(below, 1.0, 4.0, "path", y)
    scaled, (G_scaled, _) = seed_from_smaller_C(below, 1.0, 4.0, "scale")
    np.testing.assert_array_equal(alpha, scaled)
    np.testing.assert_array_equal(G, G_scaled)


def test_any_folds_uneven_and_leave_one_out():
    """Catches splits assumed to be a partition of equal folds (ShuffleSplit overlaps and
    leaves instances out) and a "loo" that is not leave-one-out."""
    X, y = two_moons(3, n=40)
    grid = {"C": [1.0, 8.0], "gamma": [0.3]}
    shuffled = ShuffleSplit(4, test_size=0.25, random_state=0)
    for cv, n_splits in ((shuffled, 4), ("loo", 40), (list(shuffled.split(X))[:3], 3)):
        seeded = GridSearchCV(SVC(), grid, cv=cv).fit(X, y)
        cold = GridSearchCV(SVC(), grid, cv=cv, method="cold").fit(X, y)
        assert seeded.n_splits_ == n_splits
        np.testing.assert_array_equal(seeded.cv_results_["mean_test_score"],
                                      cold.cv_results_["mean_test_score"])


@pytest.mark.slow
@pytest.mark.parametrize("backend", [None, "loky"])
def test_parallel_columns_give_the_same_results(backend):
    """Catches results that depend on which thread (the default) or process ran a gamma column or in
    what order: the threads share X's dot products, which a column writing into them would spoil."""
    import joblib

    X, y = two_moons(4, n=80)
    one = GridSearchCV(SVC(), GRID, cv=3, n_jobs=1).fit(X, y)
    with joblib.parallel_backend(backend) if backend else contextlib.nullcontext():
        for n_jobs in (2, None):
            side_by_side = GridSearchCV(SVC(), GRID, cv=3, n_jobs=n_jobs).fit(X, y)
            for key in ("mean_test_score", "total_iterations"):
                np.testing.assert_array_equal(one.cv_results_[key], side_by_side.cv_results_[key])


@pytest.mark.parametrize("grid, n_jobs", [(GRID, 2), ({"C": GRID["C"], "gamma": [0.5]}, -1), (GRID, None),
                                          (GRID, 1)])
def test_parallel_columns_are_threads_of_this_process_by_default(monkeypatch, grid, n_jobs):
    """Catches n_jobs that starts processes when the caller chose no joblib backend (each imports and
    loads the compiled solver: a small grid took 2.2 times as long as on threads), columns that stay
    on the calling thread where Numba's threading layer lets them run side by side, more threads
    than columns (a single column would run on a share of the cores it has to itself), a default
    (None) that runs the columns in turn, and columns side by side that each take the whole memory
    budget (two Gram matrices where one fits)."""
    import threading

    import numba

    from alphaseed.kernel import concurrent_launches_are_safe, resolve_n_jobs
    from alphaseed.sklearn import grid_search

    ran_on, budgets = {}, set()
    column = grid_search.search_column

    def recorded(*args, **kwargs):
        ran_on[threading.get_ident()] = numba.get_num_threads()
        budgets.add(kwargs.get("memory_budget"))
        return column(*args, **kwargs)

    monkeypatch.setattr(grid_search, "search_column", recorded)
    monkeypatch.setattr(grid_search, "default_memory_budget", lambda: 6 << 30)
    X, y = two_moons(4, n=80)
    GridSearchCV(SVC(), grid, cv=3, n_jobs=n_jobs).fit(X, y)
    assert ran_on, "the columns ran in other processes"
    asked = numba.get_num_threads() if n_jobs is None else resolve_n_jobs(n_jobs)
    threads = min(asked, len(grid["gamma"])) if concurrent_launches_are_safe() else 1
    assert (set(ran_on) != {threading.get_ident()}) == (threads > 1)
    assert set(ran_on.values()) == {max(1, numba.get_num_threads() // threads)}
    assert budgets == {(6 << 30) // threads if threads > 1 else None}


def test_columns_side_by_side_send_their_chains_to_one_pool(monkeypatch):
    """Catches columns side by side whose chains run on the column's own thread, or on a pool of
    its own: a column that ends early then leaves its share of the cores idle while the last
    columns run (a 16-point grid's last column ran alone on one of two threads)."""
    import threading

    import numba

    from alphaseed.kernel import concurrent_launches_are_safe
    from alphaseed.sklearn import grid_search

    columns_on, chains_on, pools = set(), set(), []
    column, run = grid_search.search_column, grid_search._Chain.run

    def recorded_column(*args, **kwargs):
        columns_on.add(threading.get_ident())
        pools.append(kwargs.get("submit"))
        return column(*args, **kwargs)

    def recorded_chain(chain, along_splits, along_C):
        chains_on.add(threading.get_ident())
        return run(chain, along_splits, along_C)

    monkeypatch.setattr(grid_search, "search_column", recorded_column)
    monkeypatch.setattr(grid_search._Chain, "run", recorded_chain)
    X, y = two_moons(4, n=80)
    GridSearchCV(SVC(), GRID, cv=3, n_jobs=2).fit(X, y)
    if numba.get_num_threads() < 2 or not concurrent_launches_are_safe():
        pytest.skip("the columns run in turn here")
    assert len(columns_on) == 2
    assert len(pools) == 3 and pools[0] is not None and all(pool is pools[0] for pool in pools)
    assert chains_on and not chains_on & columns_on
    assert len(chains_on) <= numba.get_num_threads()


def test_a_chain_cancelled_before_it_began_releases_its_column():
    """Catches a column left waiting for ever on the first rounds of a chain that a pool, shut down
    after an error, cancelled before it ran: nothing else would ever settle them."""
    from concurrent.futures import CancelledError, Future

    from alphaseed.sklearn import grid_search

    chain = grid_search._Chain(None, (0, 1), None, None, options=SolverOptions(), seeder=None, c_seed="gap",
                               previous={})
    finished = Future()
    finished.set_result([])
    chain.cancel_if_cancelled(finished)
    assert not chain.along_splits.done()
    cancelled = Future()
    cancelled.cancel()
    chain.cancel_if_cancelled(cancelled)
    with pytest.raises(CancelledError):
        chain.along_splits.result(timeout=1)


def test_the_default_keeps_each_columns_gram_matrix(monkeypatch):
    """Catches a default that runs columns side by side where a share of the memory budget no longer
    holds the Gram matrix each would have alone: each would fall back to a cache of rows, several
    times slower on dense data."""
    import threading

    from alphaseed.kernel import gram_bytes
    from alphaseed.kernel.matrix import WORKING_BYTES
    from alphaseed.sklearn import grid_search

    ran_on, budgets = set(), set()
    column = grid_search.search_column

    def recorded(*args, **kwargs):
        ran_on.add(threading.get_ident())
        budgets.add(kwargs.get("memory_budget"))
        return column(*args, **kwargs)

    monkeypatch.setattr(grid_search, "search_column", recorded)
    monkeypatch.setattr(grid_search, "default_memory_budget", lambda: gram_bytes(80) + WORKING_BYTES)
    GridSearchCV(SVC(), GRID, cv=3).fit(*two_moons(4, n=80))
    assert ran_on == {threading.get_ident()} and budgets == {None}


def test_a_column_seeds_each_round_from_the_round_a_naive_loop_names():
    """A naive twin of ``search_column`` on two classes, written from its docstring: split h's
    round at the smallest C seeded by SIR from split h-1's at that C, each larger C from the
    same split's round at the C before by the gap rule. Catches a chain seeded from the wrong
    round (the previous split's round at another C, its own round two C back) or not at all,
    which the comparisons of a column with itself on more threads cannot see."""
    from alphaseed.cv import run_round
    from alphaseed.seeding import SEEDERS

    X, labels = two_moons(6, n=90)
    codes = (labels == "up").astype(int)
    y = np.where(codes == 0, 1.0, -1.0)   # +1 for the pair's first class
    splits = list(KFold(4, shuffle=True, random_state=1).split(X))
    Cs = [0.5, 4.0, 32.0]
    kernel = KernelMatrix(X, 0.5, mode="gram")
    expected = np.zeros((len(Cs), len(splits)), dtype=np.int64)
    previous = None
    for h, (train, test) in enumerate(splits):
        last = None
        for c, C in enumerate(Cs):
            start = None if last is None else seed_from_smaller_C(last, Cs[c - 1], C, "gap", y[train])
            done = run_round(kernel, y, (train, test), C, options=SolverOptions(kernel_mode="gram"),
                             seeder=SEEDERS["sir"], previous=previous if c == 0 else None, start=start)
            expected[c, h] = done.solution.iterations
            last = done.solution
            if c == 0:
                previous = (train, done.solution)
    found = search_column(X, codes, 0.5, Cs, splits, method="sir", options=SolverOptions(kernel_mode="gram"))
    np.testing.assert_array_equal([found[C].iterations for C in Cs], expected)


@pytest.mark.parametrize("c_seed, rules", [("gap", ["path", "gap"]), ("keep", ["keep", "keep"])])
def test_a_chain_seeds_a_direct_active_set_start_along_the_path(monkeypatch, c_seed, rules):
    """Catches a chain that seeds a C going straight to the active set by the gap rule, which may
    keep: every alpha at the smaller C's bound turns free, and each that must leave F takes a Newton
    step (1,171 steps against 390-416 on the other splits at the Adult 5,000 sample's (11, -7)); and
    one that overrides a rule the caller chose, or follows the path where SMO's budget comes first
    (SMO needs the gradient, which the path's seed does not carry)."""
    from types import SimpleNamespace

    from alphaseed.sklearn import grid_search

    asked = iter([SolverOptions(solver="active_set"), SolverOptions(solver="auto")])
    used = []
    monkeypatch.setattr(grid_search, "seed_from_smaller_C", lambda prev, C_prev, C, rule, y=None: used.append(rule))
    monkeypatch.setattr(grid_search, "run_round", lambda *args, **kwargs: SimpleNamespace(solution=None))
    monkeypatch.setattr(grid_search, "options_at_larger_C", lambda options, last, result, **kwargs: next(asked))
    chain = grid_search._Chain(None, None, np.ones(4), (np.arange(4), np.arange(0)),
                               options=SolverOptions(solver="auto"), seeder=object(), c_seed=c_seed, previous={})
    chain._rounds([1.0, 4.0, 16.0])
    assert used == rules


@pytest.mark.parametrize("seeder, c_seed, seeded", [(object(), "gap", True), (object(), "none", True),
                                                     (None, "gap", False)])
def test_a_chain_asks_the_rule_with_its_step_in_C_and_whether_it_seeds(monkeypatch, seeder, c_seed, seeded):
    """Catches a chain that hands the rule a wrong step (C itself, 1, the smaller over the larger)
    or the larger C as the smaller run's, one that tells the rule its start is the path's where it
    seeds along the splits only or not at all,
    one that stops asking where it does not seed along C (SMO for the rest of a chain whose active
    set gave up, the direct start from the splits' seed), one that tells the rule a cold chain is
    seeded (its direct start would start from zero), and one that runs other options than the
    rule's."""
    from types import SimpleNamespace

    from alphaseed.sklearn import grid_search

    answers = iter([SolverOptions(solver="active_set"), SolverOptions(solver="smo")])
    asked, ran = [], []

    def rule(options, last, result, *, C, step, seeded, path_seed):
        asked.append((C, step, seeded, path_seed))
        return next(answers)

    def run_round(*args, options, **kwargs):
        ran.append(options.solver)
        return SimpleNamespace(solution=None)

    monkeypatch.setattr(grid_search, "seed_from_smaller_C", lambda *args, **kwargs: (None, None))
    monkeypatch.setattr(grid_search, "run_round", run_round)
    monkeypatch.setattr(grid_search, "options_at_larger_C", rule)
    chain = grid_search._Chain(None, None, np.ones(4), (np.arange(4), np.arange(0)),
                               options=SolverOptions(solver="auto"), seeder=seeder, c_seed=c_seed, previous={})
    chain._rounds([1.0, 4.0, 64.0])
    path_seed = seeded and c_seed == "gap"
    assert asked == [(1.0, 4.0, seeded, path_seed), (4.0, 16.0, seeded, path_seed)]
    assert ran == ["auto", "active_set", "smo"]


@pytest.mark.parametrize("classes, gamma, c_seed, mode", [(2, 0.5, "gap", "gram"), (2, "scale", "gap", "gram"),
                                                          (3, 0.5, "keep", "cache"), (3, 0.5, "none", "gram"),
                                                          (2, 0.5, "gap", "shared"), (2, 0.5, "none", "gram")])
def test_chains_and_pairs_on_threads_give_the_rounds_one_after_the_other(monkeypatch, classes, gamma, c_seed, mode):
    """Catches state that chains running at once share (the options a chain carries, its last
    solution, a solver's or the kernel's buffers), and rounds that never leave the calling thread,
    or leave it where nothing can run beside them (one pair of classes whose every C seeds along the
    splits, c_seed="none") or where they would all write the kernel's one cache of rows (mode
    "shared")."""
    import threading

    from alphaseed.kernel import concurrent_launches_are_safe
    from alphaseed.sklearn import grid_search

    ran_on = set()
    run = grid_search._Chain.run

    def recorded(chain, along_splits, along_C):
        ran_on.add(threading.get_ident())
        return run(chain, along_splits, along_C)

    monkeypatch.setattr(grid_search._Chain, "run", recorded)
    X, labels = two_moons(5, n=90)
    y = (X[:, 2] > 0).astype(int) + (labels == "up") if classes == 3 else (labels == "up").astype(int)
    splits = list(KFold(4, shuffle=True, random_state=0).split(X))
    Cs = [0.5, 4.0, 32.0]
    options = SolverOptions(kernel_mode=mode)
    one = search_column(X, y, gamma, Cs, splits, method="sir", options=options, c_seed=c_seed, threads=1)
    assert ran_on == {threading.get_ident()}
    ran_on.clear()
    two = search_column(X, y, gamma, Cs, splits, method="sir", options=options, c_seed=c_seed, threads=2)
    for C in Cs:
        np.testing.assert_array_equal(two[C].scores, one[C].scores)
        np.testing.assert_array_equal(two[C].iterations, one[C].iterations)
    if (c_seed == "none" and classes == 2) or mode == "shared":
        assert ran_on == {threading.get_ident()}
    elif concurrent_launches_are_safe():
        assert ran_on and threading.get_ident() not in ran_on


@pytest.mark.slow
def test_a_search_under_dask_runs_on_the_cluster_and_gives_the_sequential_results():
    """Catches gamma columns run by a pool of the search's own, which a joblib backend never sees
    (the cluster would get no task), results that depend on where a column ran, and chains of
    cross_validate sent to the cluster (they must stay threads sharing this process's kernel)."""
    import joblib
    from distributed import Client, LocalCluster, get_task_stream

    from alphaseed import cross_validate

    X, y = two_moons(8, n=80)
    sequential = GridSearchCV(SVC(), GRID, cv=3).fit(X, y)
    # Two worker processes of one thread (joblib runs a cluster of one thread in this process; two
    # threads of one process would launch Numba's parallel loops at once, which its workqueue layer refuses).
    y_binary = (y == "up").astype(float)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client, joblib.parallel_backend("dask"):
        with get_task_stream(client) as search_tasks:
            on_cluster = GridSearchCV(SVC(), GRID, cv=3, n_jobs=-1).fit(X, y)
        with get_task_stream(client) as chain_tasks:
            chained = cross_validate(X, y_binary, 2.0, 0.3, 6, "sir", chains=2, n_jobs=2)
    assert len(search_tasks.data) >= len(GRID["gamma"]) and len(chain_tasks.data) == 0
    assert chained.iterations == cross_validate(X, y_binary, 2.0, 0.3, 6, "sir", chains=2).iterations
    for key in ("mean_test_score", "rank_test_score", "total_iterations",
                *(f"split{i}_test_score" for i in range(3))):
        np.testing.assert_array_equal(on_cluster.cv_results_[key], sequential.cv_results_[key], err_msg=key)


def test_clone_list_of_grids_and_refit():
    """Catches a search that keeps state across clone, drops one of several grids, or refits
    with other parameters than the best."""
    X, y = two_moons(5, n=80)
    grids = [{"C": [1.0], "gamma": [0.1, 1.0]}, {"C": [4.0]}]
    search = clone(GridSearchCV(SVC(gamma=0.5), grids, cv=3, method="sir"))
    search.fit(X, y)
    assert len(search.cv_results_["params"]) == 3
    assert bool(np.ma.is_masked(search.cv_results_["param_gamma"][2]))
    best = SVC(gamma=0.5).set_params(**search.best_params_).fit(X, y)
    np.testing.assert_array_equal(search.decision_function(X), best.decision_function(X))
    assert search.score(X, y) == best.score(X, y)
    assert "total_iterations" in search.cv_results_


@pytest.mark.parametrize("arguments, error, message", [
    (dict(estimator=ScikitSVC(), param_grid=GRID), TypeError, "alphaseed.SVC"),
    (dict(estimator=SVC(), param_grid={"C": [1.0], "tol": [0.1]}), ValueError, "C and gamma"),
    (dict(estimator=SVC(), param_grid=GRID, method="top"), ValueError, "method"),
    (dict(estimator=SVC(), param_grid=GRID, n_jobs=0), ValueError, "n_jobs"),
    (dict(estimator=SVC(class_weight="balanced"), param_grid=GRID), ValueError, "class_weight"),
    (dict(estimator=SVC(probability=True), param_grid=GRID), ValueError, "probability"),
])
def test_bad_arguments_are_refused(arguments, error, message):
    """Catches a search that silently ignores a grid key, an estimator or a method it cannot honour."""
    X, y = two_moons(6, n=30)
    with pytest.raises(error, match=message):
        GridSearchCV(**arguments).fit(X, y)


def three_blobs(seed: int, n: int = 150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    codes = rng.integers(0, 3, n)
    X[:, :2] += 1.2 * np.column_stack([np.cos(2.1 * codes), np.sin(2.1 * codes)])
    return X, np.array(["left", "middle", "right"])[codes]


@pytest.mark.parametrize("method", ["cold", "sir"])
def test_many_classes_give_scikit_learns_search(method):
    """Catches a pair trained on instances of other classes, a pair that predicts only its own
    classes' test instances, votes counted for the wrong class of a pair or with ties not going
    to the first class, and iterations of one pair only: cold, scikit-learn's GridSearchCV with its
    SVC must give the same cv_results_; seeded (along the splits and C, per pair), the same
    accuracies with fewer iterations."""
    X, y = three_blobs(7)
    grid = {"C": [0.5, 4.0, 32.0], "gamma": [0.2, "scale"]}
    ours = GridSearchCV(SVC(), grid, cv=4, method=method).fit(X, y)
    theirs = ScikitGridSearchCV(ScikitSVC(), grid, cv=4).fit(X, y)
    assert_same_cv_results(ours, theirs, 4)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    if method == "cold":
        pairs_iterations = [sum(ScikitSVC(**params).fit(X[train], y[train]).n_iter_.sum()
                                for train, _ in ours._splits(X, y)) for params in ours.cv_results_["params"]]
        np.testing.assert_array_equal(ours.cv_results_["total_iterations"], pairs_iterations)
    else:
        cold = GridSearchCV(SVC(), grid, cv=4, method="cold").fit(X, y)
        assert ours.cv_results_["total_iterations"].sum() < cold.cv_results_["total_iterations"].sum()


def test_grouping_by_class_keeps_each_training_set_s_instances_in_their_order():
    """Catches a training set moved through the grouping's order instead of its inverse (other
    instances) and an unstable sort (a class's instances reordered); the callers' use of it is
    checked by test_many_classes_give_scikit_learns_search and the estimator's scikit-learn
    comparisons."""
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 4, size=40)
    X = rng.normal(size=(40, 3))
    order, moved_to = grouped_by_class(codes)
    assert np.all(np.diff(codes[order]) >= 0)
    np.testing.assert_array_equal(X[order][codes[order] == 2], X[codes == 2])
    for train in (rng.permutation(40)[:30], rng.permutation(40)[:10]):
        np.testing.assert_array_equal(X[order][moved_to[train]], X[train])


@pytest.mark.parametrize("method", ["cold", "sir"])
def test_classes_missing_from_a_training_set_vote_as_scikit_learns(method):
    """Catches a search that fails or votes wrongly where a split's training set lacks one or both
    classes of a pair (six one-instance classes: StratifiedKFold puts two in one test fold), and a
    break_ties the vote would ignore."""
    import warnings

    rng = np.random.default_rng(3)
    X = rng.normal(size=(66, 3))
    y = np.array([0] * 30 + [1] * 30 + [2, 3, 4, 5, 6, 7])
    X[y == 1] += 2.0
    grid = {"C": [1.0, 8.0], "gamma": [0.5]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # "The least populated class in y has only 1 member"
        ours = GridSearchCV(SVC(), grid, cv=5, method=method).fit(X, y)
        theirs = ScikitGridSearchCV(ScikitSVC(), grid, cv=5).fit(X, y)
        with pytest.raises(ValueError, match="break_ties"):
            GridSearchCV(SVC(break_ties=True), grid, cv=5).fit(X, y)
    assert_same_cv_results(ours, theirs, 5)


def test_sparse_input_gives_the_dense_results():
    """Catches a sparse path that resolves gamma="scale" or slices training sets differently."""
    import scipy.sparse as sp

    X, y = two_moons(7, n=60)
    X[np.abs(X) < 0.5] = 0.0
    grid = {"C": [1.0, 8.0], "gamma": [0.3, "scale"]}
    dense = GridSearchCV(SVC(), grid, cv=3).fit(X, y)
    sparse = GridSearchCV(SVC(), grid, cv=3).fit(sp.csr_matrix(X), y)
    for key in ("mean_test_score", "total_iterations"):
        np.testing.assert_array_equal(dense.cv_results_[key], sparse.cv_results_[key])


def test_a_search_merged_from_its_gamma_columns_is_the_whole_search(tmp_path):
    """Catches a merge that loses or reorders points, chooses another best point than one search would (ties go
    to the first point in GridSearchCV's order: C, then gamma, ascending), miscounts the iterations, or merges
    parts of different searches, overlapping columns or a part that does not say where SMO was capped."""
    from alphaseed.cli import main
    from alphaseed.errors import ConfigError

    X, labels = two_moons(6, n=90)
    y = np.where(labels == "up", 1.0, -1.0)
    log2_C, log2_gamma = [-3.0, 1.0, 5.0], [-6.0, -2.0, 2.0]
    whole = searched(X, y, log2_C, log2_gamma, "sir", tmp_path / "whole.json")
    parts = [tmp_path / f"gamma{g:g}.json" for g in log2_gamma]
    for g, part in zip(log2_gamma, parts):
        searched(X, y, log2_C, [g], "sir", part)
    assert main(["search-merge", *map(str, parts[::-1]), "--out", str(tmp_path / "merged.json")]) == 0
    merged = merge_searches(parts[::-1], tmp_path / "merged.json")
    for key in ("best", "total_iterations", "log2_gamma", "log2_C"):
        assert merged[key] == whole[key], key
    columns = ["log2_C", "log2_gamma", "accuracy", "iterations"]
    assert [[p[c] for c in columns] for p in merged["points"]] == [[p[c] for c in columns] for p in whole["points"]]
    assert (tmp_path / "merged.csv").is_file() and (tmp_path / "merged.png").is_file()

    tied = []
    for part in parts[:2]:  # gamma 2^-6, then 2^-2: the same accuracy everywhere
        summary = json.loads(part.read_text())
        for point in summary["points"]:
            point["accuracy"] = 50.0
        tied.append(tmp_path / f"tied-{part.name}")
        tied[-1].write_text(json.dumps(summary))
    best = merge_searches(tied[::-1], tmp_path / "x.json")["best"]
    assert (best["log2_C"], best["log2_gamma"]) == (-3.0, -6.0)
    with pytest.raises(ConfigError, match="share gamma columns"):
        merge_searches([parts[0], parts[0]], tmp_path / "x.json")
    searched(X, y, log2_C, [3.0], "cold", tmp_path / "cold.json")
    with pytest.raises(ConfigError, match="method"):
        merge_searches([parts[0], tmp_path / "cold.json"], tmp_path / "x.json")
    older = json.loads(parts[0].read_text())
    for point in older["points"]:
        del point["iteration_cap_hits"]
    (tmp_path / "older.json").write_text(json.dumps(older))
    with pytest.raises(ConfigError, match="iteration cap: run its search again"):
        merge_searches([tmp_path / "older.json", parts[1]], tmp_path / "x.json")


def test_points_stopped_at_the_iteration_cap_are_counted_warned_of_and_marked(tmp_path):
    """Catches a cap hit that is lost on its way from the solver to cv_results_, the JSON, the
    CSV and the method table (each point's count must be its splits that ran exactly max_iter
    iterations), counts put on the wrong point, and a search that stays silent about them."""
    import pandas as pd
    from sklearn.exceptions import ConvergenceWarning

    from alphaseed.cv import KFoldRounds, stratified_folds

    X, labels = two_moons(7, n=90)
    y = np.where(labels == "up", 1.0, -1.0)
    cap, log2_C, log2_gamma = 60, [-1.0, 6.0, 12.0], [-3.0, 1.0]
    grid = {"C": [2.0 ** v for v in log2_C], "gamma": [2.0 ** v for v in log2_gamma]}
    with pytest.warns(ConvergenceWarning, match="iteration cap"):
        search = GridSearchCV(SVC(max_iter=cap), grid, cv=KFoldRounds(stratified_folds(y, 3, 0), 3),
                              refit=False).fit(X, y)
    at_cap = np.sum([search.cv_results_[f"split{i}_iterations"] == cap for i in range(3)], axis=0)
    assert 0 < at_cap.sum() < 18
    np.testing.assert_array_equal(search.cv_results_["iteration_cap_hits"], at_cap)

    with pytest.warns(ConvergenceWarning):
        written = searched(X, y, log2_C, log2_gamma, "sir", tmp_path / "capped.json",
                           SolverOptions(max_iter=cap))
    on_disk = pd.read_csv(tmp_path / "capped.csv")
    for points in (pd.DataFrame(written["points"]), on_disk):
        np.testing.assert_array_equal(points["iteration_cap_hits"], at_cap)
    assert written["points_at_iteration_cap"] == np.count_nonzero(at_cap)
    assert compare_methods({"sir": written})["points at the iteration cap"].tolist() == [
        np.count_nonzero(at_cap)]


def test_a_search_whose_every_fit_fails_says_so():
    """Catches a search that reports a best point when no split had two classes to fit."""
    X = np.arange(40.0).reshape(20, 2)
    y = np.array(["a"] * 19 + ["b"])
    splits = [(np.arange(0, 10), np.arange(10, 20)), (np.arange(5, 15), np.arange(15, 20))]
    with pytest.raises(ValueError, match="one class only"):
        GridSearchCV(SVC(), {"C": [1.0, 2.0]}, cv=splits).fit(X, y)
