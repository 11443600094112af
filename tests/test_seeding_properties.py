"""Property tests: every seed of every seeder is feasible, whatever the previous round looked like.

Small random problems with both classes (and sometimes one class per fold), random C (one, or
one per class as class weights give it) and gamma,
uneven folds, folds where T lacks R's label, previous solutions that are optimal or stopped
early by an iteration cap, and C so small that every alpha sits at a bound.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_seeding import assert_feasible, kfold_context, loo_context, training_set

from alphaseed.kernel import KernelMatrix
from alphaseed.seeding import FROM_FULL_MODEL, SEEDERS, seed_context
from alphaseed.solver import SolverOptions, check_warm_start, solve

KFOLD_SEEDERS = sorted(set(SEEDERS) - FROM_FULL_MODEL)
PROPERTY_SETTINGS = settings(max_examples=120, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    n = draw(st.integers(4, 24))
    labels = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    assume(np.unique(labels).size == 2)
    dim = draw(st.integers(1, 3))
    features_seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(features_seed).normal(size=(n, dim))
    if draw(st.booleans()):
        X = np.round(X, 1)  # duplicate points and tied kernel values
    C = draw(st.floats(1e-4, 1e3))
    if draw(st.booleans()):   # class weights: C of the -1 class 1e-2 to 1e2 times that of +1
        C = (C, C * draw(st.floats(1e-2, 1e2)))
    gamma = draw(st.floats(1e-2, 10.0))
    # None: the previous round is optimal; an int: it stopped early (still feasible).
    max_iter = draw(st.one_of(st.none(), st.integers(1, 15)))
    return KernelMatrix(X, gamma), labels, C, max_iter


def uneven_folds(data, n: int, min_k: int) -> list[np.ndarray]:
    """Between min_k and 6 non-empty folds of random sizes over n instances."""
    k = data.draw(st.integers(min_k, min(6, n)))
    folds = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    assume(np.bincount(folds, minlength=k).all())
    return [np.flatnonzero(folds == h) for h in range(k)]


def assert_seeds_feasible(ctx, names) -> None:
    """Each named seeder's seed for ``ctx`` is aligned with ``ctx.next_index`` and feasible."""
    y_next = ctx.y[ctx.next_index]
    for name in names:
        seed = SEEDERS[name](ctx)
        assert seed.shape == ctx.next_index.shape, name
        assert_feasible(seed, y_next, ctx.C)
        check_warm_start(seed, y_next, ctx.C)


@PROPERTY_SETTINGS
@given(problem=problems(), data=st.data())
def test_every_kfold_seed_is_feasible(problem, data):
    """Catches a k-fold seeder returning an infeasible seed (outside [0, C], unbalanced, NaN,
    misaligned; with class weights, above the C of an alpha's class) on awkward problems: one label per fold, T without R's label, every alpha at a
    bound, a previous round stopped early. What the seed is worth is test_naive_twins' job."""
    kernel, y, C, max_iter = problem
    order = uneven_folds(data, y.size, 3)
    k = len(order)
    h = data.draw(st.integers(2, k))
    prev = solve(kernel, y, training_set(order, h - 1), C, options=SolverOptions(max_iter=max_iter))
    assert_seeds_feasible(kfold_context(kernel, y, C, order, h, prev), KFOLD_SEEDERS)


@PROPERTY_SETTINGS
@given(problem=problems(), data=st.data())
def test_every_leave_one_out_seed_is_feasible(problem, data):
    """Catches a leave-one-out seed that is infeasible or misaligned on the same awkward problems."""
    kernel, y, C, max_iter = problem
    t = data.draw(st.integers(0, y.size - 1))
    full = solve(kernel, y, np.arange(y.size), C, options=SolverOptions(max_iter=max_iter))
    assert_seeds_feasible(loo_context(kernel, y, C, full, t), sorted(SEEDERS))


@PROPERTY_SETTINGS
@given(problem=problems(), data=st.data())
def test_every_full_model_kfold_seed_is_feasible(problem, data):
    """Catches FULL returning an infeasible or misaligned seed for a k-fold round (a whole fold
    removed from the full model) on the same awkward problems: a fold holding every SV of one
    label, every alpha at C, a full model stopped early."""
    kernel, y, C, max_iter = problem
    order = uneven_folds(data, y.size, 2)
    k = len(order)
    everything = np.concatenate(order)
    full = solve(kernel, y, everything, C, options=SolverOptions(max_iter=max_iter))
    train = training_set(order, data.draw(st.integers(1, k)))
    assert_seeds_feasible(seed_context(kernel, y, C, (everything, full), train), ["full"])
