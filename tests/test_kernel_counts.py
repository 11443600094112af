"""The solver's kernel counters: exact, mode-independent, and the carry-over counted once."""

import json

import numpy as np
import pytest

from alphaseed import cross_validate
from alphaseed.kernel import (
    EVICTIONS,
    HITS,
    REQUESTS,
    ROWS_COMPUTED,
    ROWS_EXTENDED,
    VALUES_COMPUTED,
    KernelMatrix,
    get_q,
    new_cache,
    solver_source,
)
from alphaseed.pipeline.records import validate_run_record
from alphaseed.solver import SolverOptions, check_warm_start, solve


def problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + 0.5 * y[:, None]
    return X, y


def request(km, cache, y, key, length):
    gidx = np.arange(y.size)
    return get_q(key, length, km.X, km.sqnorm, km.gamma, gidx, y, cache,
                 solver_source(km.source, gidx))


def test_a_large_cache_computes_each_distinct_row_once():
    """Counts by hand: rows 0, 1, 0, 2, 1 at length 10, then row 0 at 25 (an extension of 15).
    Would catch a hit counted as a miss, a miss counted twice, or an extension counted as its
    full length."""
    X, y = problem(30)
    km = KernelMatrix(X, 0.5)
    cache = new_cache(30, 1 << 20)
    for key in (0, 1, 0, 2, 1):
        request(km, cache, y, key, 10)
    request(km, cache, y, 0, 25)
    counts = cache.counts
    assert counts[REQUESTS] == 6
    assert counts[HITS] == 2
    assert counts[ROWS_COMPUTED] == 3
    assert counts[ROWS_EXTENDED] == 1
    assert counts[VALUES_COMPUTED] == 3 * 10 + 15
    assert counts[EVICTIONS] == 0


def test_a_two_row_cache_misses_and_evicts_on_every_third_row():
    """LibSVM's floor of two full rows: cycling over three rows misses every time. Would catch
    evictions not counted, or a row served from a slot that was freed."""
    X, y = problem(30)
    km = KernelMatrix(X, 0.5)
    cache = new_cache(30, 1)  # raised to two full rows
    for key in (0, 1, 2, 0, 1, 2):
        request(km, cache, y, key, 30)
    counts = cache.counts
    assert counts[REQUESTS] == counts[ROWS_COMPUTED] == 6
    assert counts[HITS] == 0
    assert counts[VALUES_COMPUTED] == 6 * 30
    assert counts[EVICTIONS] == 4


@pytest.mark.parametrize("shrinking", [False, True])
def test_the_solver_counts_add_up(shrinking):
    """Every request is a hit or a miss; without shrinking every row is requested at full
    length, so no row is extended and each is computed once (the cache holds them all). Would
    catch a request path that bypasses the counts."""
    X, y = problem()
    km = KernelMatrix(X, 0.5)
    result = solve(km, y, np.arange(y.size), C=1.0, options=SolverOptions(shrinking=shrinking))
    k = result.kernel
    assert k.requests == k.hits + k.rows_computed + k.rows_extended
    assert k.requests >= 3 * result.iterations
    assert k.active_sum <= result.iterations * y.size
    if not shrinking:
        assert k.rows_extended == 0 and k.reconstructions == 0
        assert k.values_computed == k.rows_computed * y.size
        assert k.active_sum == result.iterations * y.size
    assert k.rows_computed <= y.size


def test_the_counts_are_the_same_in_every_kernel_mode():
    """The counts are of the solver's row cache, so the engine behind it changes none (without
    shrinking: gram mode reconstructs outside the cache)."""
    X, y = problem()
    counts = {}
    for mode in ("cache", "shared", "gram"):
        km = KernelMatrix(X, 0.5, mode=mode, memory_budget=1 << 30)
        counts[mode] = solve(km, y, np.arange(y.size), C=1.0, options=SolverOptions(shrinking=False)).kernel
    assert counts["cache"] == counts["shared"] == counts["gram"]


def seeded_pair():
    """Two overlapping training sets and a feasible seed for the second, as in k-fold CV."""
    from alphaseed.seeding.adjust import adjust_added

    X, y = problem(90, seed=3)
    km = KernelMatrix(X, 0.5)
    before = np.arange(80)
    after = np.arange(10, 90)
    prev = solve(km, y, before, C=1.0)
    alpha = np.zeros(after.size)
    alpha[:70] = prev.alpha[10:]
    alpha = adjust_added(alpha, y[after], 1.0, np.arange(70), np.arange(70, 80))
    return km, y, before, prev, after, alpha


def test_the_carry_over_is_counted_once_and_its_rows_serve_smo():
    """The carry requests a full row of every new or changed instance through the solver's
    cache (one computation each) and computes the columns of the instances that left outside
    it. Would catch the carry's rows counted twice or not at all, or SMO computing them again
    (without shrinking each row may be computed once in the whole solve)."""
    km, y, before, prev, after, alpha = seeded_pair()
    result = solve(km, y, after, C=1.0, alpha0=alpha, previous=(before, prev), options=SolverOptions(shrinking=False))
    k = result.kernel
    assert k.carried
    left = np.setdiff1d(before, after)
    left_changed = np.count_nonzero(prev.alpha[np.isin(before, left)] > 0)
    # The new instances (the last 10 of `after`) each need their row; the kept ones kept their
    # alpha. Each instance that left with alpha > 0 needs its row over the 80 positions.
    assert k.init_values == 10 * after.size
    assert k.carry_values_outside == left_changed * after.size
    assert k.rows_extended == 0 and k.rows_computed <= after.size
    assert k.values_computed == k.rows_computed * after.size

    scratch = solve(km, y, after, C=1.0, alpha0=alpha, options=SolverOptions(shrinking=False))
    assert not scratch.kernel.carried
    # adjust_added's arithmetic leaves some alphas within rounding of 0, which the start puts on it
    assert scratch.kernel.init_values == np.count_nonzero(check_warm_start(alpha, y[after], 1.0) > 0) * after.size
    assert result.iterations == scratch.iterations


def test_the_carry_reads_each_row_once_when_the_cache_cannot_keep_it():
    """With room for two rows only (LibSVM's floor), as at a full data set's cache pressure, a
    new instance with alpha > 0, whose row serves both the column sums and its own gradient,
    is still computed once. Would catch the carry requesting that row twice (it did: the
    second request found it evicted and recomputed it), and a carried gradient that depends
    on the cache's size."""
    km, y, before, prev, after, alpha = seeded_pair()
    assert np.count_nonzero(alpha[70:] > 0) > 0
    small = solve(km, y, after, C=1.0, alpha0=alpha, previous=(before, prev), options=SolverOptions(shrinking=False, cache_mb=1e-9, max_iter=0))
    large = solve(km, y, after, C=1.0, alpha0=alpha, previous=(before, prev), options=SolverOptions(shrinking=False, max_iter=0))
    assert small.kernel.carried
    assert small.kernel.init_values == large.kernel.init_values == 10 * after.size
    assert np.array_equal(small.gradient, large.gradient)
    assert np.array_equal(small.gradient_bar, large.gradient_bar)


def binary_problem(n=3000, seed=0):
    """Binary features (held as bit sets, so ``auto`` is ``cache`` mode with the small row cache:
    2 MB, 174 rows of 3,000 values; Q is 36 MB, more than the tail's cache holds) and labels a
    noisy linear rule gives."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 60)) < 0.15).astype(float)
    score = X @ rng.normal(size=60)
    y = np.where(score + 0.8 * rng.normal(size=n) > np.median(score), 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("shrinking", [True, False])
def test_the_default_row_cache_grows_once_a_run_turns_out_a_tail(shrinking):
    """A run of 3.8 iterations per instance (past TAIL_ITERATIONS, 2) on bit sets: the default
    cache computes fewer values than one held at the small size and more than one of the tail's
    size from the start, and every cache takes the same steps to the same alpha. Would catch a
    cache that never grows (or grows only when the caller sized it, or only with shrinking on),
    one that starts at the tail's size, and a growth that changed a step."""
    X, y = binary_problem()
    km = KernelMatrix(X, 0.05, mode="auto")
    assert (km.mode, km.row_cache_mb, km.tail_row_cache_mb) == ("cache", 2.0, 32.0)
    runs = {mb: solve(km, y, np.arange(y.size), C=1000.0,
                      options=SolverOptions(solver="smo", cache_mb=mb, shrinking=shrinking))
            for mb in (None, km.row_cache_mb, km.tail_row_cache_mb)}
    assert runs[None].iterations > 3 * y.size
    assert (runs[km.tail_row_cache_mb].kernel.values_computed < runs[None].kernel.values_computed
            < runs[km.row_cache_mb].kernel.values_computed)
    for run in runs.values():
        assert run.iterations == runs[None].iterations
        assert np.array_equal(run.alpha, runs[None].alpha)


@pytest.mark.parametrize(("gamma", "C", "per_instance", "grows"),
                         [(0.05, 1.0, (0.4, 0.6), False), (0.02, 10.0, (1.4, 1.6), False),
                          (0.05, 10.0, (2.2, 2.4), True)])
def test_the_row_cache_grows_after_two_iterations_per_instance(gamma, C, per_instance, grows):
    """Runs of 0.48, 1.51 and 2.27 iterations per instance whose small cache evicts rows: the
    first two compute exactly the values of a cache held at the small size, the third does not.
    Would catch a cache that starts larger, or grows after 1 or 3 iterations per instance, or
    after TAIL_ITERATIONS iterations rather than that many per instance."""
    X, y = binary_problem()
    km = KernelMatrix(X, gamma, mode="auto")
    default, small = (solve(km, y, np.arange(y.size), C=C, options=SolverOptions(solver="smo", cache_mb=mb))
                      for mb in (None, km.row_cache_mb))
    assert per_instance[0] < default.iterations / y.size < per_instance[1] and small.kernel.evictions > 0
    assert (default.kernel.values_computed != small.kernel.values_computed) == grows


def test_the_row_cache_starts_large_up_to_2896_instances():
    """32 MB hold all of Q, l x l float32 values, up to l = 2,896; a cache the caller sized is
    that size throughout. Would catch Q counted in float64 values (2,048) or the start rule
    applied to a caller's size."""
    from alphaseed.solver.training import _row_cache_mb

    km = KernelMatrix(binary_problem(200)[0], 0.05, mode="auto")
    assert _row_cache_mb(km, SolverOptions(), 2896) == (32.0, 32.0)
    assert _row_cache_mb(km, SolverOptions(), 2897) == (2.0, 32.0)
    assert _row_cache_mb(km, SolverOptions(cache_mb=5.0), 100) == (5.0, 5.0)


def test_a_training_set_whose_whole_q_fits_the_tails_cache_starts_with_it():
    """1,500 instances (Q 9 MB), a short run: the default computes what a 32 MB cache computes
    (each row once), fewer values than the small cache. Would catch a small training set left to
    the small cache until its tail."""
    X, y = binary_problem(1500)
    km = KernelMatrix(X, 0.05, mode="auto")
    runs = {mb: solve(km, y, np.arange(y.size), C=1.0, options=SolverOptions(solver="smo", cache_mb=mb))
            for mb in (None, km.row_cache_mb, km.tail_row_cache_mb)}
    assert runs[None].iterations < y.size
    assert (runs[None].kernel.values_computed == runs[km.tail_row_cache_mb].kernel.values_computed
            < runs[km.row_cache_mb].kernel.values_computed)


def test_only_rows_from_bit_sets_grow_their_cache():
    """Dense data keep LibSVM's 100 MB whatever the run. Would catch every kernel growing its cache."""
    X, _ = problem()
    for mode in ("cache", "gram"):
        km = KernelMatrix(X, 0.5, mode=mode)
        assert km.tail_row_cache_mb == km.row_cache_mb == 100.0


def test_each_round_records_its_kernel_counts():
    """A run record carries each round's counts (null for LibSVM), and a record written before
    they were counted still validates. Would catch the counts lost on the way to the record."""
    from alphaseed.pipeline.provenance import collect_provenance
    from alphaseed.pipeline.records import build_run_record

    X, y = problem(90, seed=4)
    for method in ("sir", "libsvm"):
        result = cross_validate(X, y, 1.0, 0.5, 10, method, max_rounds=4, options=SolverOptions(kernel_mode="cache"))
        provenance = collect_provenance({"dataset": "synthetic"}, "f" * 64,
                                        result.started_utc, result.finished_utc)
        record = json.loads(json.dumps(build_run_record(result, "synthetic", provenance)))
        validate_run_record(record)
        rounds = record["rounds"]
        if method == "libsvm":
            assert all(r["kernel"] is None for r in rounds)
            continue
        assert [r["kernel"]["carried"] for r in rounds] == [False, True, True, True]
        assert all(r["kernel"]["rows_computed"] > 0 for r in rounds)
        for r in rounds:
            del r["kernel"]
        validate_run_record(record)
