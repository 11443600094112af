"""Kernel modes: the same float32 values, hence the same solver runs, in every mode."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel

from alphaseed.errors import SolverInputError
from alphaseed.kernel import (
    KernelMatrix,
    blas_dots_are_exact,
    cache_swap_columns,
    cache_swap_keys,
    get_q,
    gram,
    gram_bytes,
    kernel_cross_times,
    memory_mb,
    new_cache,
    products,
    resolve_mode,
    shared_dots,
    solver_source,
    source_swap,
    squared_norms,
    values,
)
from alphaseed.kernel import matrix
from alphaseed.kernel.gram import gram_matrix
from alphaseed.kernel.native import PERMUTED_TABLE
from alphaseed.kernel.row_source import PARALLEL_ROW_WORK, column_spans
from alphaseed.kernel.values import (
    compact_rows,
    dense_rows,
    gaussian_from_dot,
    kernel_block,
    kernel_by_distance,
)
from alphaseed.solver import SolverOptions, solve

MODES = ("cache", "shared", "gram")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 7)) * 30  # large raw values, as Madelon and MNIST have
    y = np.where(rng.random(400) < 0.4, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("mode", MODES)
def test_values_are_the_gaussian_kernel(problem, mode):
    X, _ = problem
    km = KernelMatrix(X, 1e-4, mode=mode, memory_budget=1 << 30)
    rows, cols = np.arange(0, 400, 7), np.arange(400)[::-1]
    np.testing.assert_allclose(km.block(rows, cols), rbf_kernel(X[rows], X[cols], gamma=1e-4),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("binary", [False, True])
def test_every_mode_stores_identical_values_and_gives_identical_runs(problem, binary):
    """Also a warm start whose gradient is carried over from a training set that lost 50
    instances, whose rows the carry computes outside the row cache (``outside_row``). Binary
    data (bit sets) are computed in the solver's position order in ``cache`` mode: would catch
    those rows left unswapped when shrinking swaps positions, or swapped wrongly, and an
    instance that left computed from another's bit set."""
    from alphaseed.seeding.adjust import adjust_added

    X, y = problem
    gamma = 1e-4
    if binary:
        X, gamma = (np.random.default_rng(1).random((400, 123)) < 0.11).astype(float), 0.05
    runs, warm, blocks = {}, {}, {}
    order = np.random.default_rng(0).permutation(400)
    train, after = order[:300], order[50:350]
    for mode in MODES:
        km = KernelMatrix(X, gamma, mode=mode, memory_budget=1 << 30)
        blocks[mode] = km.block(train[:50], train)
        runs[mode] = solve(km, y, train, C=10.0, options=SolverOptions(cache_mb=0.05))  # a cache far too small
        alpha = np.concatenate([runs[mode].alpha[50:], np.zeros(50)])
        alpha = adjust_added(alpha, y[after], 10.0, np.arange(250), np.arange(250, 300))
        warm[mode] = solve(km, y, after, C=10.0, alpha0=alpha,
                           previous=(train, runs[mode]), options=SolverOptions(cache_mb=0.05))
        assert warm[mode].kernel.carried and warm[mode].kernel.carry_values_outside > 0
    for mode in MODES[1:]:
        np.testing.assert_array_equal(blocks[mode], blocks["cache"])
        for result, first in ((runs[mode], runs["cache"]), (warm[mode], warm["cache"])):
            assert result.iterations == first.iterations
            np.testing.assert_array_equal(result.alpha, first.alpha)
            assert result.rho == first.rho


def test_a_shared_cache_smaller_than_the_data_still_serves_every_row(problem):
    X, y = problem
    small = KernelMatrix(X, 1e-4, mode="shared", memory_budget=(512 << 20) + 20 * 4 * 400)
    full = KernelMatrix(X, 1e-4, mode="cache")
    rows = np.arange(400)
    np.testing.assert_array_equal(small.block(rows, rows), full.block(rows, rows))


def test_gram_is_refused_past_the_memory_budget_and_auto_falls_back():
    n = 100_000
    budget = gram_bytes(n) // 2
    with pytest.raises(SolverInputError, match="over the memory budget"):
        resolve_mode("gram", n, budget)
    assert resolve_mode("auto", n, budget) == "shared"
    assert resolve_mode("auto", 1000, budget) == "gram"
    with pytest.raises(SolverInputError, match="kernel mode must be"):
        resolve_mode("fast", 10, budget)


def test_memory_request_follows_the_mode():
    big = 64 << 30
    assert memory_mb(32561, 123, "gram", memory_budget=big) > gram_bytes(32561) / 2**20
    assert memory_mb(32561, 123, "cache", memory_budget=big) < 1200


def cache_swap(cache, i, j):
    """Exchange the keys i and j, rows and columns, as LibSVM's ``Cache::swap_index`` does
    (the solver's shrinking does both halves, its columns once for many swaps)."""
    cache_swap_keys(cache, i, j)
    cache_swap_columns(cache, np.array([i]), np.array([j]), 1)


CACHE_OPERATIONS = st.lists(
    st.one_of(st.tuples(st.just("get"), st.integers(0, 29), st.integers(1, 30)),
              st.tuples(st.just("swap"), st.integers(0, 29), st.integers(0, 29))),
    max_size=60)


@given(operations=CACHE_OPERATIONS, budget_rows=st.integers(1, 40),
       mode=st.sampled_from(MODES))
@settings(max_examples=150, deadline=None)
@example(operations=[("get", 3, 30), ("get", 4, 30), ("swap", 3, 3), ("swap", 3, 4)],
         budget_rows=1, mode="cache")
def test_the_row_cache_serves_exact_rows_within_its_budget(operations, budget_rows, mode):
    """Any mix of row requests of any length and shrinking's swaps, under any budget."""
    l = 30
    X = np.random.default_rng(1).normal(size=(l, 3))
    km = KernelMatrix(X, 0.3, mode=mode, memory_budget=1 << 30)
    gidx = np.arange(l)
    y = np.where(np.arange(l) % 3 == 0, 1.0, -1.0)
    Q = y[:, None] * y[None, :] * km.block(gidx, gidx)
    budget_values = max(budget_rows * 10, 2 * l)  # LibSVM's floor: two full rows
    cache = new_cache(l, 4 * budget_rows * 10)
    source = solver_source(km.source, gidx)
    for op, a, b in operations:
        if op == "swap":
            cache_swap(cache, a, b)
            gidx[[a, b]] = gidx[[b, a]]
            y[[a, b]] = y[[b, a]]
            continue
        row = get_q(a, b, km.X, km.sqnorm, km.gamma, gidx, y, cache, source)
        np.testing.assert_array_equal(row[:b], Q[gidx[a]][gidx[:b]])
        assert sum(r.size for r in cache.rows) <= budget_values


LOOKUP_WITH_LANES = """
import sys
import numpy as np
from numba import njit
from alphaseed.kernel import native

lanes = int(sys.argv[1])
native._target_lanes = lambda: lanes

@njit
def lookup(out, distance, table, y, sign):
    native.signed_lookup(out, distance, table, y, sign)

rng = np.random.default_rng(3)
for n, entries, gamma in [(0, 32, 0.3), (15, 32, 0.3), (16, 29, 0.3), (7, 29, 0.3), (1001, 7, 0.3), (1003, 32, 0.3),
                          (9, 40, 0.3), (1001, 29, 8.0)]:
    table = np.exp(-gamma * np.arange(entries))
    distance = rng.integers(0, entries, n).astype(np.int32)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    out = np.full(n + 1, np.nan, dtype=np.float32)
    lookup(out[:n], distance, table, y, -1.0)
    # bit for bit: a lost sign of zero (-1 * 0.0 is -0.0) compares equal as floats
    np.testing.assert_array_equal(out[:n].view(np.int32), (-y * table[distance]).astype(np.float32).view(np.int32))
    assert np.isnan(out[n])
code = lookup.inspect_asm(lookup.signatures[0])
# LLVM may emit AVX2's float permutation as its integer twin, vpermd: the same bits.
assert ("vpermps" in code or "vpermd" in code) == (lanes == 8) and "vpermi2ps" not in code
"""


def test_times_sign_gives_the_products_bits():
    """``times_sign`` (the sign bit flipped instead of a multiply by -1, which is slow on a
    subnormal value) against the float32 product itself, on normal, subnormal and zero values of
    both signs. Would catch a flip where the factor is +1, a lost sign of zero (-1 * 0.0 is -0.0)
    and a subnormal value flushed to zero."""
    from numba import njit

    from alphaseed.kernel import times_sign

    @njit
    def signed_products(factors, values):
        out = np.empty((factors.size, values.size), dtype=np.float32)
        for a in range(factors.size):
            for b in range(values.size):
                out[a, b] = times_sign(factors[a], values[b])
        return out

    tiny = np.finfo(np.float32).tiny
    values = np.array([1.0, 1e-7, tiny, tiny / 3, np.float32(1.4e-45), 0.0], dtype=np.float32)
    values = np.concatenate([values, -values])
    factors = np.array([1.0, -1.0], dtype=np.float32)
    expected = factors[:, None] * values[None, :]
    got = signed_products(factors, values)
    np.testing.assert_array_equal(got.view(np.int32), expected.view(np.int32))
    assert np.any((got != 0) & (np.abs(got) < tiny))


@pytest.mark.parametrize("lanes", [0, 8])
def test_the_lookup_without_avx512_is_the_plain_loop_or_avx2s_permutation(lanes):
    """``signed_lookup`` as compiled for a processor without AVX-512: one value at a time (0
    lanes), or AVX2's 8-lane permutation of four registers blended by the index's high bits, each
    in a process of its own (Numba keeps an intrinsic's first typing): the plain loop's float32
    values, signs and all, on lengths around multiples of 8 and 16 and tables shorter than 32, one
    (gamma = 8) with subnormal float32 values, compared bit for bit. Would catch a fallback that
    skips values or drops the sign (of a zero too), a blend that takes the wrong register for an
    index of 8 or more, and subnormal values flushed to zero. AVX-512's permutation is checked where this processor
    has it by the position-order rows below."""
    import subprocess
    import sys

    from alphaseed.kernel.native import _target_lanes

    if lanes and _target_lanes() < lanes:
        pytest.skip("this processor has no AVX2")
    subprocess.run([sys.executable, "-c", LOOKUP_WITH_LANES, str(lanes)], check=True)


@pytest.mark.parametrize("features, ones, gamma", [(123, None, 0.05), (300, None, 0.05),
                                                   (123, 14, 0.05), (300, None, 7.8125), (123, 14, 8.0)])
def test_bit_sets_in_position_order_give_the_gathered_rows(features, ones, gamma):
    """Binary rows computed from the solver's word-major copy (``solver_source``) are the
    rows ``cache`` mode gathers through gidx: filled serially and in parallel chunks, extended
    from a computed prefix, and after swaps; with an even word count (Adult's 2) and an odd one
    (Webdata's 5, whose first word is summed alone); with 14 ones a row, as Adult's, the kernel
    is looked up by permutation (``signed_lookup``), and so it is at Webdata's gamma, where the
    table's float32 values are 0.0 from distance 14 on, those at 12 and 13 subnormal (at gamma = 8
    with 14 ones a row every distance is even, and the one at 12 is subnormal). Rows are compared
    bit for bit. Would catch subnormal values flushed to zero, a zero's sign lost, a chunk's or a
    prefix's offset wrong, a swap that moves words instead of positions, the copy not swapped at all, the
    odd word added to the scratch's stale distances, the permutation's sign or table half wrong,
    its last values (past a multiple of 16) left unwritten, and distances past the permuted
    table not clamped to its last, zero, entry (the permutation reads them modulo 32)."""
    rng = np.random.default_rng(5)
    n = 40_000
    if ones is None:
        X = (rng.random((n, features)) < 0.11).astype(float)
    else:
        X = np.zeros((n, features))
        np.put_along_axis(X, np.argsort(rng.random((n, features)), axis=1)[:, :ones], 1.0, axis=1)
    km = KernelMatrix(X, gamma, mode="cache")
    table = km.compact_rows.by_distance.astype(np.float32)
    assert (table.size <= PERMUTED_TABLE) == (ones is not None)
    assert (table.size > PERMUTED_TABLE and table[PERMUTED_TABLE - 1] == 0) == (gamma > 1 and ones is None)
    assert np.any((table > 0) & (table < np.finfo(np.float32).tiny)) == (gamma > 1)
    assert n * km.compact_rows.bits.shape[1] >= PARALLEL_ROW_WORK   # long rows are filled in parallel
    gidx = rng.permutation(n)
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    source = solver_source(km.source, gidx)

    def expected(p):
        values = (y[p] * y) * km.block(gidx[p:p + 1], gidx)[0].astype(np.float64)
        return values.astype(np.float32)

    def row(p, length, cache):
        return get_q(p, length, km.X, km.sqnorm, km.gamma, gidx, y, cache, source)

    cache = new_cache(n, 1 << 24)
    row(7, 1000, cache)                       # a serial prefix, then the parallel rest
    np.testing.assert_array_equal(row(7, n, cache).view(np.int32), expected(7).view(np.int32))
    for i, j in [(0, n - 1), (7, 123), (5, 6), (123, 123)]:
        source_swap(source, i, j)
        gidx[[i, j]] = gidx[[j, i]]
        y[[i, j]] = y[[j, i]]
    cache = new_cache(n, 1 << 24)
    for p in (0, 7, 123, n - 1):
        np.testing.assert_array_equal(row(p, n, cache).view(np.int32), expected(p).view(np.int32))


def test_blas_dots_are_used_only_where_they_are_exact():
    assert blas_dots_are_exact(np.array([[0.0, 1.0], [3.0, -7.0]]))
    assert not blas_dots_are_exact(np.array([[0.5, 1.0]]))
    assert not blas_dots_are_exact(np.array([[2.0**27, 0.0]]))  # a squared norm of 2**54


def test_integer_features_give_the_same_kernel_by_blas_and_one_dot_at_a_time(monkeypatch):
    """Madelon-like raw integers: the GEMM path must reproduce the values bit for bit."""
    # Panels smaller than a tile, across a row's tiles, taken by every thread in turn.
    monkeypatch.setattr(gram, "GRAM_PANEL_ROWS", 64)
    monkeypatch.setattr(gram, "GRAM_PANEL_COLS", 96)
    X = np.random.default_rng(5).integers(0, 1000, size=(700, 60)).astype(np.float64)
    sq = squared_norms(X)
    gamma = 1e-6
    by_blas = gram_matrix(X, sq, gamma, use_blas=True)
    one_at_a_time = gram_matrix(X, sq, gamma, use_blas=False)
    np.testing.assert_array_equal(by_blas, one_at_a_time)
    np.testing.assert_array_equal(by_blas, kernel_block(X, sq, gamma, np.arange(700), np.arange(700),
                                                        dense_rows()))
    weights = np.random.default_rng(6).normal(size=(700, 2))
    np.testing.assert_array_equal(
        kernel_cross_times(X[:50], sq[:50], X, sq, gamma, weights, use_blas=True),
        kernel_cross_times(X[:50], sq[:50], X, sq, gamma, weights, use_blas=False))


@given(st.floats(1e-3, 1e3), st.floats(80.0, 120.0))
@settings(deadline=None)  # the first example compiles
@example(1.0, 103.97)  # e**-103.97 is 2**-150, the last value float32 rounds to its subnormal
@example(1.0, 103.9)
def test_the_gram_matrix_stores_zero_without_exp_only_where_float32_would(gamma, exponent):
    """Would catch the shortcut to 0.0 taken below e**-103.97 (subnormal values lost)."""
    dist = exponent / gamma
    assert gram._stored_gaussian(dist, 0.0, 0.0, gamma) == np.float32(
        gaussian_from_dot(dist, 0.0, 0.0, gamma))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 160), d=st.integers(1, 60),
       scale=st.sampled_from([1e-3, 1.0, 30.0, 1e4]), offset=st.sampled_from([0.0, 1.0, 1e3]),
       gamma=st.sampled_from([1e-6, 1e-3, 0.03125, 0.7, 50.0]), duplicates=st.booleans())
def test_float_data_by_blas_keep_the_one_at_a_time_values_bit_for_bit(seed, n, d, scale, offset, gamma,
                                                                      duplicates):
    """Would catch a certification that keeps a BLAS-summed value whose float32 differs from
    row_dot's (a slack too small, a rounding boundary misplaced at a power of two, the clamp at
    distance 0 or the cut to 0.0 straddled): the Gram matrix of float data must equal, bit for bit,
    the one built from row_dot's dot products, which every other kernel mode computes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale + offset
    if duplicates:
        X[n // 2:] = X[: n - n // 2]
    sq = squared_norms(X)
    one_at_a_time = gram.gram_matrix(X, sq, gamma, False, dots=gram.dot_matrix(X, False))
    np.testing.assert_array_equal(gram.gram_matrix(X, sq, gamma, False), one_at_a_time)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 1200), panel_rows=st.integers(1, 300),
       panel_cols=st.integers(1, 1200), kind=st.sampled_from(["float", "integer", "shared dots", "binary"]))
def test_panels_of_any_shape_on_every_thread_store_every_kernel_value(seed, n, panel_rows, panel_cols, kind):
    """The panels' threads must write every value of the triangle and its mirror once, from the
    right dot products: the values each row's kernel computes. Would catch a panel's dots read at
    the offset of its tile (512 columns) rather than its own, row blocks that start their panels
    past the diagonal, a mirror that skips a tile's first column, or a panel no thread takes (its
    values left as the NaN the matrix starts with)."""
    rng = np.random.default_rng(seed)
    X = {"float": lambda: rng.normal(size=(n, 7)), "integer": lambda: rng.integers(0, 9, (n, 7)).astype(float),
         "shared dots": lambda: rng.normal(size=(n, 7)),
         "binary": lambda: (rng.random((n, 40)) < 0.3).astype(float)}[kind]()
    sq = squared_norms(X)
    exact = kind in ("integer", "binary")
    dots = gram.dot_matrix(X, False) if kind == "shared dots" else None
    compact = compact_rows(X, True, 0.3) if kind == "binary" else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gram, "GRAM_PANEL_ROWS", panel_rows)
        patch.setattr(gram, "GRAM_PANEL_COLS", panel_cols)
        out = np.full((n, n), np.nan, dtype=np.float32)
        np.testing.assert_array_equal(gram.gram_matrix(X, sq, 0.3, exact, dots=dots, compact=compact, out=out),
                                      kernel_block(X, sq, 0.3, np.arange(n), np.arange(n), dense_rows()))


def test_the_dot_products_of_many_rows_do_not_take_blas_syrk():
    """X's dot products with itself in one product are BLAS's syrk, which OpenBLAS 0.3.31 (NumPy
    2.4's wheels) kills the process in on two threads at 16,000 rows of 717 features with its
    AVX-512 kernels: run in a child process on the CPU's own kernels (this suite pins portable
    ones, see conftest), so that a crash fails this test rather than the session. Would catch a
    ``dot_matrix`` that takes X @ X.T again, on such a CPU."""
    script = (
        "import numpy as np\n"
        "from alphaseed.kernel.gram import dot_matrix\n"
        "X = np.random.default_rng(0).integers(0, 4, size=(16000, 717)).astype(float)\n"
        "D = dot_matrix(X, True)\n"
        "rows = [0, 5000, 15999]\n"
        "assert np.array_equal(D[rows], X[rows] @ X.T) and np.array_equal(D[:, rows], (X[rows] @ X.T).T)\n")
    own_kernels = {name: value for name, value in os.environ.items() if name != "OPENBLAS_CORETYPE"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          env=own_kernels)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("integers", [False, True])
def test_features_zero_in_every_row_are_left_out_of_the_products_and_only_those(integers):
    """The Gram matrix's products skip the features 0 in every row (MNIST's border pixels). Would
    catch a feature dropped that one row uses (the last column below, 0 but in one row: that
    row's values would change), a test along the rows instead of the features, or a dropped
    feature still summed (the shapes)."""
    rng = np.random.default_rng(14)
    X = rng.integers(0, 9, size=(90, 12)).astype(float) if integers else rng.random((90, 12))
    X[:, [0, 4, 5]] = 0.0
    X[:, 11] = 0.0
    X[37, 11] = 3.0
    assert gram.product_features(X).shape == (90, 9)
    np.testing.assert_array_equal(gram.product_features(X), X[:, [1, 2, 3, 6, 7, 8, 9, 10, 11]])
    assert gram.product_features(X).flags.c_contiguous
    sq = squared_norms(X)
    one_at_a_time = gram.gram_matrix(X, sq, 0.1, False, dots=gram.dot_matrix(X, False))
    np.testing.assert_array_equal(gram.gram_matrix(X, sq, 0.1, integers), one_at_a_time)
    np.testing.assert_array_equal(gram.gram_matrix(X, sq, 0.1, integers, dots=gram.dot_matrix(X, integers)),
                                  one_at_a_time)


@settings(max_examples=300, deadline=None)
@given(exponent=st.integers(-60, -1), step=st.integers(-3, 3), power_of_two=st.booleans(),
       side=st.sampled_from([-1.0, 1.0]), nudge=st.floats(-4.0, 4.0), norm=st.floats(0.1, 1e4),
       gamma=st.sampled_from([1e-3, 0.03125, 1.0]), features=st.integers(1, 800))
def test_a_certified_dot_product_stores_what_any_within_its_slack_stores(exponent, step, power_of_two, side,
                                                                          nudge, norm, gamma, features):
    """Would catch a certification that passes a value whose float32 a dot product within the summation
    bound would round the other way: values are put a few units of the bound from a float32 rounding
    boundary (the one below a power of two, half as far, included), and wherever ``_certified_values``
    keeps a value, it must be the float32 of ``dot`` and of the dot products at the bound's ends and
    midway."""
    stored = math.ldexp(1.0 if power_of_two else 1.0 + 2.0 ** -23 * (4 + step), exponent)
    # Half of float32's step at ``stored`` (2**(exponent - 23) in its binade), half again below a power of two.
    half_gap = math.ldexp(1.0, exponent - 25 if (power_of_two and side < 0) else exponent - 24)
    sq_a = sq_b = norm
    slack = 2.0 * (features + 2) * gram.UNIT_ROUNDOFF * 1.01 * norm
    value = stored + side * half_gap * (1.0 + nudge * 1e-9)
    dist = -math.log(value) / gamma
    dot = (sq_a + sq_b - dist) / 2.0
    approximate, kept = np.empty(1), np.empty(1, dtype=np.float32)
    gram._approximate_gaussians(approximate, sq_a, np.array([sq_b]), np.array([dot]), gamma)
    gram._certified_values(kept, sq_a, np.array([sq_b]), math.sqrt(norm), np.array([math.sqrt(norm)]),
                           np.array([dot]), gamma, features, True, approximate)
    kept = kept[0]
    if np.isnan(kept):
        return
    assert kept == gram._stored_gaussian(sq_a, sq_b, dot, gamma)
    for move in (-1.0, -0.5, 0.5, 1.0):
        assert gram._stored_gaussian(sq_a, sq_b, dot + move * slack, gamma) == kept


@settings(max_examples=300, deadline=None)
@given(x=st.floats(0.0, gram.FLOAT32_ZERO_EXPONENT))
@example(x=0.0)
@example(x=gram.FLOAT32_ZERO_EXPONENT)
@example(x=math.log(2.0) * 4831.5 / gram.EXP_STEPS)   # the reduction's widest remainder
def test_the_vectorised_exp_stays_well_within_the_error_its_certification_allows(x):
    """Would catch a series cut below the 5th power, a table off by one step and a remainder taken
    with the high part of ln 2 alone: each misses libm's exp by more than 2**-46, a 64th of
    EXP_ERROR."""
    out = np.empty(1)
    gram._approximate_gaussians(out, x, np.array([0.0]), np.array([0.0]), 1.0)
    assert abs(out[0] - math.exp(-x)) <= 2.0**-46 * math.exp(-x)


def test_float32_dot_products_serve_only_the_rows_they_are_exact_for(monkeypatch):
    """Rows within float32's exact integers take their dot products from a float32 GEMM, the few
    beyond (here squared norms of 2**24 to 2**25, MNIST's largest digits) from float64: would
    catch the rows beyond left to float32 (their dots with each other, above 2**24, round),
    the bound taken as 2**25, and a redone row left unmirrored."""
    monkeypatch.setattr(gram, "GRAM_PANEL_ROWS", 64)
    rng = np.random.default_rng(8)
    X = rng.integers(0, 400, size=(300, 40)).astype(np.float64)
    X[[3, 100, 250, 299]] = rng.integers(650, 900, size=(4, 40))      # beyond 2**24
    X[[4, 101]] = rng.integers(550, 700, size=(2, 40))                # just within
    sq = squared_norms(X)
    assert np.count_nonzero(sq > 2.0**24) == 4 and sq[[4, 101]].max() < 2.0**24 < sq[3]
    gamma = 1e-6
    by_blas = gram_matrix(X, sq, gamma, use_blas=True)
    np.testing.assert_array_equal(by_blas, gram_matrix(X, sq, gamma, use_blas=False))
    np.testing.assert_array_equal(by_blas, kernel_block(X, sq, gamma, np.arange(300),
                                                        np.arange(300), dense_rows()))


def test_the_norm_band_computes_every_value_float32_does_not_round_to_zero(monkeypatch):
    """Rows far apart in norm are far apart: the Gram matrix computes only the band of pairs
    close in norm. Here the first feature is 0..299 in shuffled order, so pairs 10 apart in it
    store e**-100 or so (a float32 subnormal) and pairs 11 apart 0.0. Would catch a band
    narrower than sqrt(105 / gamma) (those subnormals lost), a tile's reach taken from its
    first row instead of its last (tiles of 16 rows here), values written to sorted instead of
    original positions, and a used ``out`` not cleared outside the band."""
    monkeypatch.setattr(gram, "GRAM_BAND_TILE_ROWS", 16)
    rng = np.random.default_rng(12)
    X = np.column_stack([rng.permutation(300), rng.integers(0, 3, size=300)]).astype(np.float64)
    sq = squared_norms(X)
    gamma = 1.0
    order, tiles = gram.norm_band(sq, gamma, X.shape[1])
    assert sum((a1 - a0) * (b1 - a0) for a0, a1, b1 in tiles) < 0.25 * 300 * 300 / 2
    expected = kernel_block(X, sq, gamma, np.arange(300), np.arange(300), dense_rows())
    assert np.count_nonzero((expected > 0) & (expected < np.finfo(np.float32).tiny)) > 100
    used = np.full((300, 300), 7.0, dtype=np.float32)
    for out in (None, used):
        np.testing.assert_array_equal(gram_matrix(X, sq, gamma, use_blas=True, out=out), expected)


@pytest.mark.parametrize("integers", [True, False])
def test_gram_matrices_from_shared_dots_are_the_gram_matrices(monkeypatch, integers):
    """A grid search builds every gamma's Gram matrix from one ``shared_dots``. Catches dots taken
    from BLAS on data where it is inexact (the one-at-a-time sums differ in the last bit), and a
    block of the shared dots sliced from column 0 instead of the block's diagonal."""
    monkeypatch.setattr(gram, "GRAM_PANEL_ROWS", 64)
    rng = np.random.default_rng(11)
    # Far from the origin, as raw features are: ||x||^2 + ||z||^2 - 2 x.z cancels, and a dot
    # product's last bit shows in the float32 kernel value.
    X = (rng.integers(0, 50, size=(300, 20)) if integers else 1e3 + rng.normal(size=(300, 20)))
    dots = shared_dots(X.astype(float), "gram", memory_budget=1 << 30)
    for gamma in (1e-2, 0.1):
        np.testing.assert_array_equal(KernelMatrix(X, gamma, "gram", 1 << 30, dots=dots).gram,
                                      KernelMatrix(X, gamma, "gram", 1 << 30).gram)


def test_shared_dots_only_for_gram_matrices_that_fit_beside_them():
    X = np.random.default_rng(12).normal(size=(100, 3))
    assert shared_dots(X, "cache") is None
    assert shared_dots(X, "auto", memory_budget=(512 << 20) + 12 * 100 * 100 - 1) is None
    assert shared_dots(X, "auto", memory_budget=(512 << 20) + 12 * 100 * 100).shape == (100, 100)
    with pytest.raises(SolverInputError, match="dots must be 100 x 100"):
        KernelMatrix(X, 0.1, "gram", 1 << 30, dots=np.zeros((99, 99)))


@pytest.mark.parametrize("mode", MODES)
def test_kernel_times_weights_is_the_same_in_every_mode(problem, mode):
    X, _ = problem
    rows, cols = np.arange(0, 400, 3), np.arange(400)[::-2]
    weights = np.random.default_rng(7).normal(size=(cols.size, 2))
    km = KernelMatrix(X, 1e-4, mode=mode, memory_budget=1 << 30)
    reference = KernelMatrix(X, 1e-4, mode="cache")
    np.testing.assert_array_equal(km.times(rows, cols, weights), reference.times(rows, cols, weights))
    np.testing.assert_allclose(km.times(rows, cols, weights[:, 0]),
                               km.block(rows, cols).astype(np.float64) @ weights[:, 0], rtol=1e-12)


@pytest.mark.parametrize("n_rows", [0, 1, 4, 7, 9])
def test_gathered_times_sums_each_row_in_column_order(n_rows):
    """Rows four at a time, a last group short of rows, against each row's sum taken one column
    after the other (np.cumsum's order, bit for bit). Would catch a leftover row skipped or
    given another row's sums, or the four sums crossed."""
    rng = np.random.default_rng(11)
    K = rng.random((12, 30)).astype(np.float32)
    rows = rng.permutation(12)[:n_rows]
    cols = rng.permutation(30)[:25]
    weights = rng.normal(size=(25, 2))
    expected = np.array([[np.cumsum(K[r, cols].astype(np.float64) * weights[:, m])[-1]
                          for m in range(2)] for r in rows]).reshape(n_rows, 2)
    np.testing.assert_array_equal(products.gathered_times(K, rows, cols, weights), expected)


def test_gathered_sums_give_each_model_its_own_gathered_times():
    """Several models over the same rows, against each model summed alone, bit for bit. Would
    catch a model summed over its neighbour's columns or weights (an off-by-one in ``starts``),
    a model with no column given another's sums, or the models' sums written to each other's
    places."""
    rng = np.random.default_rng(12)
    K = rng.random((9, 40)).astype(np.float32)
    rows = rng.permutation(9)[:6]
    models = [rng.permutation(40)[:size] for size in (17, 0, 1, 30)]
    weights = [rng.normal(size=(cols.size, 2)) for cols in models]
    starts = np.cumsum([0] + [cols.size for cols in models])
    sums = products.gathered_sums(K, rows, np.concatenate(models), starts, np.concatenate(weights))
    for p, (cols, w) in enumerate(zip(models, weights)):
        np.testing.assert_array_equal(sums[:, p, :], products.gathered_times(K, rows, cols, w))


def test_decision_signs_of_several_models_are_each_models_own(problem):
    """The pairs of classes of a test fold predicted in one call, against each predicted alone,
    in the Gram and in row-cache modes. Would catch a model's uncertain rows re-summed with
    another model's columns, weights or offset, or its signs written to another's column."""
    X, _ = problem
    rng = np.random.default_rng(13)
    rows = np.arange(0, 400, 3)
    models = [(np.sort(rng.permutation(400)[:size]), rng.normal(size=size), offset)
              for size, offset in ((150, 0.1), (40, -0.2), (220, 0.0))]
    for mode in ("gram", "cache"):
        km = KernelMatrix(X, 1e-4, mode=mode, memory_budget=1 << 30)
        together = km.decision_signs(rows, models)
        assert together.shape == (rows.size, len(models))
        for p, model in enumerate(models):
            np.testing.assert_array_equal(together[:, p], km.decision_signs(rows, [model])[:, 0])
            np.testing.assert_array_equal(
                together[:, p], np.where(km.times_float64(rows, model[0], model[1]) - model[2] > 0, 1, -1))


@pytest.mark.parametrize("cache_bytes", [1 << 20, 2 * 4 * 29])  # all rows, or two at a time
# 29 free: the walk over inactive rows; 5, 6 and 7: over free rows, their last group of four
# one, two or three short. 47 active leaves 3 inactive: chunks of one and two rows.
@pytest.mark.parametrize("n_free", [29, 5, 6, 7])
@pytest.mark.parametrize("active", [29, 47])
def test_gradient_reconstruction_from_the_gram_matrix_equals_the_cached_one(problem, n_free, active,
                                                                              cache_bytes):
    """The Gram matrix's walk (parallel, straight from the matrix) against the cached one
    (inactive rows four at a time, 21 of them so that one is left over), free alphas spread
    over the active set, with a cache large enough and one that keeps two rows only, so that
    rows are evicted while their sums still read them. Would catch a leftover row skipped or
    summed into the wrong G, rows paired with the wrong sums, a free alpha missed, or a Gram
    row's values read in column order but matched to the wrong positions."""
    from alphaseed.solver.shrinking import _reconstruct_gradient
    from alphaseed.solver.state import FREE, LOWER, kernel_rows, new_state, rows_apart, rows_together

    X, y = problem
    l = 50
    rng = np.random.default_rng(n_free)
    gidx = rng.permutation(2 * l)[:l]   # shuffled, as shrinking leaves positions
    y_l = y[gidx].copy()
    alpha = rng.random(l)
    G_bar = rng.normal(size=l)
    free = rng.choice(active, n_free, replace=False)
    results = []
    for mode in ("cache", "gram"):
        km = KernelMatrix(X, 1e-4, mode=mode, memory_budget=1 << 30)
        state = new_state(alpha, np.zeros(l), G_bar, 1.0, 2)
        state.status[:] = LOWER
        state.status[free] = FREE
        rows = rows_together(*rows_apart(kernel_rows(km, gidx, y_l, new_cache(l, cache_bytes))))
        _reconstruct_gradient(state, rows, active)
        results.append(state.G)
    np.testing.assert_array_equal(results[0], results[1])
    assert not np.array_equal(results[0][active:], G_bar[active:] - 1.0)


def sparse_integers(rng, shape, density, high):
    """Integer features in 1..high at the given share of non-zeros, as float64."""
    return ((rng.random(shape) < density) * rng.integers(1, high + 1, size=shape)).astype(np.float64)


def typical_gamma(X):
    return 1.0 / (1.0 + 2.0 * float(np.mean(squared_norms(X))))


def form(compact) -> str:
    """Which of its forms ``compact_rows`` chose."""
    return ("bits" if compact.bits.size else "small" if compact.small.size else "csr" if compact.indptr.size
            else "dense")


@pytest.mark.parametrize("high, density, chosen", [(1, 0.11, "bits"), (255, 0.19, "small"),  # Adult, MNIST
                                                   (70000, 0.19, "csr")])
def test_compact_rows_are_the_dense_rows_bit_for_bit(high, density, chosen):
    """Rows on demand take their values from bit sets (binary data), int16 rows (other integers
    within int16) or CSR (other sparse integer data); the Gram matrix (BLAS) and the dense loop
    must give the same float32 values. Catches a sparse walk that drops, repeats or misplaces a
    non-zero, a bit set packed in another order than it is read, a word past the last feature
    left with garbage, int16 values wrapped or summed in a type that overflows, reading the
    wrong instance's row, or a rule that let a summation order change a value; the MNIST-like
    rows are long enough for the parallel loop."""
    rng = np.random.default_rng(11)
    X = sparse_integers(rng, (3000, 123), density, high)
    gamma = typical_gamma(X)
    gram = KernelMatrix(X, gamma, mode="gram", memory_budget=1 << 30)
    rows, cols = np.arange(0, 3000, 97), rng.permutation(3000)
    y = np.where(rng.random(3000) < 0.3, 1.0, -1.0)
    for mode in ("cache", "shared"):
        km = KernelMatrix(X, gamma, mode=mode, memory_budget=1 << 30)
        assert form(km.compact_rows) == chosen
        np.testing.assert_array_equal(km.block(rows, cols), gram.block(rows, cols))
        np.testing.assert_array_equal(
            km.block(rows, cols), kernel_block(km.X, km.sqnorm, gamma, rows, cols, dense_rows()))
        for p in (0, 1234):
            q = get_q(p, 3000, km.X, km.sqnorm, gamma, cols, y, new_cache(3000, 1 << 20),
                      solver_source(km.source, cols))
            expected = (y[p] * y) * gram.block(cols[p:p + 1], cols)[0].astype(np.float64)
            np.testing.assert_array_equal(q, expected.astype(np.float32))


def test_compact_rows_only_where_they_cannot_change_a_value_and_pay():
    """Float features would sum in another order sparse than dense (last bits differ), and
    dense rows are faster than sparse ones; either must keep the dense path. Binary data take
    bit sets up to BITSET_MAX_FEATURES; other integers within int16 (binary ones beyond that
    width included) int16 rows, dense or sparse; larger sparse integers CSR."""
    rng = np.random.default_rng(12)
    binary = sparse_integers(rng, (60, 40), 0.1, 1)
    floats = binary * rng.random(binary.shape)
    dense_integers = sparse_integers(rng, (60, 40), 0.9, 255)
    wide_binary = sparse_integers(rng, (60, values.BITSET_MAX_FEATURES + 1), 0.1, 1)
    beyond_int16 = values.SMALL_INT_MAX + 1
    chosen = {name: form(compact_rows(X, blas_dots_are_exact(X), 0.1)) for name, X in
              (("binary", binary), ("floats", floats), ("dense_integers", dense_integers),
               ("sparse_integers", binary * 7), ("wide_binary", wide_binary),
               ("sparse_large_integers", binary * beyond_int16),
               ("dense_large_integers", dense_integers * beyond_int16),
               ("negative_integers", -dense_integers))}
    assert chosen == {"binary": "bits", "floats": "dense", "dense_integers": "small",
                      "sparse_integers": "small", "wide_binary": "small",
                      "sparse_large_integers": "csr", "dense_large_integers": "dense",
                      "negative_integers": "small"}
    assert form(compact_rows(np.zeros((0, 3)), True, 0.1)) == "dense"
    assert form(compact_rows(binary, exact=False, gamma=0.1)) == "dense"


@pytest.mark.parametrize("d", [1, 64, 123, 300])   # a word's edge, Adult's and Webdata's widths
def test_binary_kernel_by_distance_is_the_blas_route_bit_for_bit(monkeypatch, d):
    """Binary data look each kernel value up by the rows' distance, in the Gram matrix as in
    rows on demand; the Gram matrix by BLAS dot products and exp must be the same bit for bit.
    Catches a table of float32 values, one indexed by the shared features (AND) instead of the
    differing ones (XOR), a table one entry short of d (two rows differing everywhere), the
    diagonal or a duplicate row not at 1, the wrong gamma's table, and prediction looking up
    float32 values or another instance's bits."""
    monkeypatch.setattr(gram, "GRAM_PANEL_ROWS", 64)
    rng = np.random.default_rng(21)
    X = sparse_integers(rng, (500, d), 0.4, 1)
    X[1] = X[0]
    X[2], X[3] = 0.0, 1.0
    sq = squared_norms(X)
    for gamma in (typical_gamma(X), 2.0**-9, 8.0):
        compact = compact_rows(X, blas_dots_are_exact(X), gamma)
        assert form(compact) == "bits"
        by_distance = gram_matrix(X, sq, gamma, use_blas=True, compact=compact)
        np.testing.assert_array_equal(by_distance, gram_matrix(X, sq, gamma, use_blas=True))
        assert by_distance[2, 3] == np.float32(np.exp(-gamma * d)) and by_distance[0, 1] == 1.0
        # prediction's double-precision values, looked up the same way
        weights = rng.normal(size=450)
        np.testing.assert_array_equal(
            KernelMatrix(X, gamma, mode="cache").times_float64(np.arange(50), np.arange(50, 500),
                                                               weights),
            kernel_cross_times(X[:50], sq[:50], X[50:], sq[50:], gamma, weights, use_blas=True))
        # the C library's exp, as LibSVM's and the dense loop's (NumPy's own exp differs in
        # the last bit of some doubles)
        np.testing.assert_array_equal(
            kernel_by_distance(d, gamma), [math.exp(-gamma * float(k)) for k in range(d + 1)])


def test_sparse_float_data_keep_identical_values_in_every_mode():
    """Sparse float data take the dense loop in every mode, so the modes still agree bit for
    bit; a sparse path here would differ from the Gram matrix's dense loop in the last bits."""
    rng = np.random.default_rng(13)
    X = sparse_integers(rng, (400, 50), 0.1, 1) * rng.normal(size=(400, 50)) * 30
    gamma = typical_gamma(X)
    rows, cols = np.arange(0, 400, 3), rng.permutation(400)
    blocks = [KernelMatrix(X, gamma, mode=mode, memory_budget=1 << 30).block(rows, cols)
              for mode in MODES]
    for block in blocks[1:]:
        np.testing.assert_array_equal(block, blocks[0])


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), d=st.integers(1, 150),
       density=st.floats(0.0, 1.0), high=st.sampled_from([1, 255, 32767, 70000]))
@settings(max_examples=100, deadline=None)
@example(seed=0, n=3, d=1, density=0.5, high=255)
@example(seed=1, n=5, d=64, density=0.5, high=1)
@example(seed=2, n=5, d=65, density=0.5, high=1)
@example(seed=3, n=4, d=150, density=1.0, high=32767)  # sums far beyond int32
def test_compact_dot_products_equal_dense_ones_on_any_integer_data(seed, n, d, density, high):
    """Any shape and share of non-zeros, an empty row and a row with every feature among them,
    d across word boundaries: catches a walk off a row's end or a start at the wrong offset
    (empty and full rows, d = 1), a last bit-set word read past the features, int16 products
    summed in int32 (full rows of 32767: 150 x 32767^2 overflows it)."""
    rng = np.random.default_rng(seed)
    X = sparse_integers(rng, (n, d), density, high)
    X[0] = 0.0
    X[-1] = rng.integers(1, high + 1, size=d)
    gamma = typical_gamma(X)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(values, "SPARSE_DENSITY", 1.0)
        compact = compact_rows(X, blas_dots_are_exact(X), gamma)
    assert form(compact) == ("bits" if np.isin(X, (0.0, 1.0)).all()
                             else "small" if X.max() <= values.SMALL_INT_MAX else "csr")
    sq, every = squared_norms(X), np.arange(n)
    np.testing.assert_array_equal(kernel_block(X, sq, gamma, every, every, compact),
                                  kernel_block(X, sq, gamma, every, every, dense_rows()))


def test_gram_prediction_gives_the_double_precision_signs_even_at_zero(problem):
    """Catches taking the sign from the Gram's float32 values without re-summing in double
    precision where the sum is within float32 rounding of zero: with the offset set to a row's
    double-precision sum (decision exactly 0, LibSVM predicts -1) or one rounding unit either
    side, the float32 sum lands on either side of zero about half of the time. Also catches
    re-summing the uncertain row alone: BLAS sums a row of one in another order than a row
    of two, so the exact zero moves by a rounding unit."""
    X, _ = problem
    gram = KernelMatrix(X, 1e-4, mode="gram", memory_budget=1 << 30)
    cache = KernelMatrix(X, 1e-4, mode="cache")
    cols = np.arange(0, 400, 2)
    weights = np.random.default_rng(8).normal(size=cols.size)
    for row in range(1, 400, 13):
        rows = np.array([row, (row + 200) % 400])
        exact = gram.times_float64(rows, cols, weights)[0]
        for offset in (exact, np.nextafter(exact, np.inf), np.nextafter(exact, -np.inf), 0.0):
            expected = np.where(cache.times_float64(rows, cols, weights) - offset > 0, 1, -1)
            np.testing.assert_array_equal(gram.decision_signs(rows, [(cols, weights, offset)])[:, 0], expected)
            np.testing.assert_array_equal(cache.decision_signs(rows, [(cols, weights, offset)])[:, 0], expected)


def test_gram_prediction_resums_in_double_only_the_uncertain_rows(problem, monkeypatch):
    """Catches re-summing every row where one is uncertain (the cost this avoids), a re-summed row
    written to another, and an uncertain row left to its float32 sum: with a slack that leaves a
    few rows uncertain, the signs must be the double-precision ones, and the rows re-summed those
    (and only those) whose float32 sums lie within the slack of the offset."""
    X, _ = problem
    gram = KernelMatrix(X, 1e-4, mode="gram", memory_budget=1 << 30)
    cols = np.arange(0, 400, 2)
    weights = np.random.default_rng(9).normal(size=cols.size)
    rows = np.arange(1, 400, 3)
    exact = gram.times_float64(rows, cols, weights)
    offset = float(np.median(exact))
    share = np.abs(exact - offset) / (gram.times(rows, cols, np.abs(weights)) + abs(offset))
    slack = float(np.quantile(share, 0.05))
    monkeypatch.setattr(matrix, "FLOAT32_SIGN_SLACK", slack)
    summed = []
    in_double = gram.times_float64
    monkeypatch.setattr(gram, "times_float64", lambda r, c, w: summed.append(r) or in_double(r, c, w))
    np.testing.assert_array_equal(gram.decision_signs(rows, [(cols, weights, offset)])[:, 0],
                                  np.where(exact - offset > 0, 1, -1))
    resummed = np.concatenate(summed)
    assert 0 < resummed.size < rows.size
    assert set(rows[share <= slack / 2]) <= set(resummed) <= set(rows[share <= 2 * slack])


def test_a_gram_built_into_a_used_buffer_is_the_fresh_one(problem):
    """Catches a Gram fill that leaves any value to the buffer's previous contents (the
    diagonal, the mirrored half, a block's edge), as a fresh zeroed page would hide, and a
    buffer of the wrong shape or type accepted."""
    from alphaseed.kernel import prefaulted_gram

    X, _ = problem
    fresh = KernelMatrix(X, 1e-4, mode="gram", memory_budget=1 << 30).gram
    used = prefaulted_gram(X.shape[0]).result()
    used[:] = np.nan
    built = KernelMatrix(X, 1e-4, mode="gram", memory_budget=1 << 30, gram_buffer=used)
    assert built.gram is used
    np.testing.assert_array_equal(built.gram, fresh)
    with pytest.raises(SolverInputError, match="float32"):
        KernelMatrix(X, 1e-4, mode="gram", memory_budget=1 << 30,
                     gram_buffer=np.empty((400, 400)))


def resident_bytes() -> int:
    """This process's resident memory (Linux)."""
    line = next(line for line in Path("/proc/self/smaps_rollup").read_text().splitlines()
                if line.startswith("Rss:"))
    return int(line.split()[1]) * 1024


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="reads Linux's /proc")
@pytest.mark.parametrize("advice_taken", [True, False])
def test_a_new_gram_has_every_page_mapped_before_it_is_written(monkeypatch, advice_taken):
    """Catches a new Gram matrix left to fault its pages in inside the fill's loops, whether
    Linux takes the advice to map them (MADV_POPULATE_WRITE) or the fallback touches them."""
    from alphaseed.kernel import gram

    if not advice_taken:   # Linux before 5.14, or no huge pages
        monkeypatch.setattr(gram, "_madvise", lambda array, advice: False)
    n = 2048
    before = resident_bytes()
    K = gram.new_gram(n)
    assert K.shape == (n, n) and K.dtype == np.float32 and K.flags.c_contiguous
    assert resident_bytes() - before >= 0.95 * K.nbytes


@pytest.mark.parametrize("kind", ["bits", "integers", "floats"])
@pytest.mark.parametrize("columns", [1, 2])
def test_prediction_in_slabs_sums_what_one_slab_sums(monkeypatch, kind, columns):
    """kernel_cross_times computes K in row slabs of bounded memory, reusing one slab's memory
    where K is not a BLAS product: 130 rows in slabs of 64, 7 and 1 (the last one short) must
    give the one-slab sums bit for bit, for a vector of weights and for two columns (each row is
    summed in its own order, whatever the rows beside it). Would catch a short last slab read past
    its rows, a slab's values left from the one before, and a sum whose order depends on the
    slab (as BLAS's matrix-vector product's does)."""
    rng = np.random.default_rng(31)
    X = {"bits": sparse_integers(rng, (400, 70), 0.3, 1),
         "integers": sparse_integers(rng, (400, 70), 0.3, 9),
         "floats": rng.normal(size=(400, 70))}[kind]
    sq = squared_norms(X)
    gamma = typical_gamma(X)
    km = KernelMatrix(X, gamma, mode="cache")
    bits, by_distance = km.compact_rows.bits, km.compact_rows.by_distance
    binary = (bits[:130], bits[130:], by_distance) if bits.size else None
    weights = rng.normal(size=(270, columns)).squeeze()

    def sums():
        return kernel_cross_times(X[:130], sq[:130], X[130:], sq[130:], gamma, weights,
                                  blas_dots_are_exact(X), binary=binary)

    monkeypatch.setattr(products, "CROSS_SLAB_BYTES", 8 * 270 * 130)
    whole = sums()
    for rows in (64, 7, 1):
        monkeypatch.setattr(products, "CROSS_SLAB_BYTES", 8 * 270 * rows)
        np.testing.assert_array_equal(sums(), whole)


@pytest.mark.parametrize("kind", ["bits", "floats"])
def test_models_predicted_together_sum_what_each_sums_alone(kind):
    """decision_signs without a Gram matrix computes K over the models' columns together once;
    each model must still sum its own columns, in its own order, with its own weights: three
    overlapping models (one of them the others' columns reversed) and the sums of each alone,
    bit for bit. Would catch a model summed over the union's columns or in the union's order,
    and weights or offsets taken from the wrong model."""
    rng = np.random.default_rng(12)
    X = sparse_integers(rng, (300, 60), 0.3, 1) if kind == "bits" else rng.normal(size=(300, 60))
    km = KernelMatrix(X, typical_gamma(X), mode="cache")
    rows = np.arange(0, 300, 4)
    models = [(np.arange(10, 200, 3), rng.normal(size=64)), (np.arange(50, 290, 2), rng.normal(size=120)),
              (np.arange(10, 200, 3)[::-1], rng.normal(size=64))]
    together = km._sums_float64(rows, [cols for cols, _ in models],
                                np.concatenate([w for _, w in models])[:, None])[:, :, 0]
    bits, by_distance = km.compact_rows.bits, km.compact_rows.by_distance
    for p, (cols, weights) in enumerate(models):
        alone = kernel_cross_times(km.X[rows], km.sqnorm[rows], km.X[cols], km.sqnorm[cols], km.gamma, weights,
                                   km.blas_dots, binary=(bits[rows], bits[cols], by_distance) if bits.size else None)
        np.testing.assert_array_equal(together[:, p], alone)
        np.testing.assert_array_equal(km.times_float64(rows, cols, weights), alone)
    offsets = np.median(together, axis=0)
    signs = km.decision_signs(rows, [(cols, w, o) for (cols, w), o in zip(models, offsets)])
    np.testing.assert_array_equal(signs, np.where(together - offsets > 0, 1, -1))


def test_auto_takes_cache_mode_and_a_small_row_cache_for_bit_sets():
    """Catches auto building an n x n Gram matrix for binary data, whose rows are cheaper to compute again
    from the bit sets, keeping LibSVM's 100 MB row cache there (a row costs less to compute than to read back
    from a large cache), other data losing the Gram matrix, and a sparse input densified to be checked."""
    import scipy.sparse as sp

    from alphaseed.kernel import takes_bit_sets

    rng = np.random.default_rng(4)
    binary = (rng.random((60, 40)) < 0.2).astype(float)
    dense = rng.normal(size=(60, 4))
    assert takes_bit_sets(sp.csr_matrix(binary)) and not takes_bit_sets(sp.csr_matrix(dense))
    bits = KernelMatrix(binary, 0.1, mode="auto", memory_budget=1 << 30)
    assert (bits.mode, bits.row_cache_mb) == ("cache", 2.0)
    floats = KernelMatrix(dense, 0.1, mode="auto", memory_budget=1 << 30)
    assert (floats.mode, floats.row_cache_mb) == ("gram", 100.0)
    assert KernelMatrix(binary, 0.1, mode="gram", memory_budget=1 << 30).row_cache_mb == 100.0


def test_column_spans_cover_every_column_and_skip_only_long_gaps():
    """Catches spans that miss a solver's column (a Gram row's copy would leave it unwritten),
    that cut at a gap the copy should read through, or that treat ``gap`` off by one."""
    columns = np.array([73, 5, 6, 8, 140, 139, 9000])   # 64 columns between 8 and 73, 65 between 73 and 139
    np.testing.assert_array_equal(column_spans(columns, gap=64), [[5, 74], [139, 141], [9000, 9001]])
    np.testing.assert_array_equal(column_spans(columns, gap=65), [[5, 141], [9000, 9001]])
    assert column_spans(np.empty(0, np.int64)).shape == (0, 2)
    rng = np.random.default_rng(5)
    columns = rng.choice(100_000, size=3000, replace=False)
    spans = column_spans(columns)
    covered = np.zeros(100_000, bool)
    for start, stop in spans:
        covered[start:stop] = True
    assert covered[columns].all() and np.all(spans[1:, 0] - spans[:-1, 1] > 64)


@pytest.mark.parametrize("kind", ["bits", "floats"])
def test_exact_rows_with_labels_are_q_s_rows(kind):
    """ExactKernel.rows(cols, y=y) applies the labels' signs in the pass that computes K: it must
    give y_c y_j K(c, j) bit for bit, written into ``out``. Would catch a sign taken from the wrong
    row or column (the labels of cols against those of the whole set), or a sign left off."""
    rng = np.random.default_rng(21)
    X = sparse_integers(rng, (200, 50), 0.3, 1) if kind == "bits" else rng.normal(size=(200, 50))
    km = KernelMatrix(X, typical_gamma(X), mode="cache")
    y = np.where(rng.random(200) < 0.4, -1.0, 1.0)
    exact = km.exact(np.arange(200))
    cols = rng.permutation(200)[:37]
    out = np.empty((cols.size, 200))
    q = exact.rows(cols, y=y, out=out)
    assert q is out
    expected = y[cols][:, None] * (exact.rows(cols) * y)
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_array_equal(np.signbit(q), np.signbit(expected))   # zeros too
