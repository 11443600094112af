import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphaseed.errors import SolverInputError
from alphaseed.cv import (
    KFoldRounds,
    folds_sha256,
    resolve_k,
    stratified_folds,
    stratified_subsample,
)

labels = st.lists(st.sampled_from([-1.0, 1.0]), min_size=4, max_size=60).map(np.array)


def class_counts_per_fold(y, folds, k):
    return np.array([[np.sum((folds == i) & (y == c)) for c in (1.0, -1.0)] for i in range(k)])


@settings(max_examples=60, deadline=None)
@given(y=labels, data=st.data(), seed=st.integers(0, 2**32))
def test_folds_cover_every_instance_once_and_are_stratified(y, data, seed):
    n_max = max(np.sum(y == 1), np.sum(y == -1))
    k = data.draw(st.integers(2, max(2, min(n_max, len(y)))))
    folds = stratified_folds(y, k, seed)
    order = [test for _, test in KFoldRounds(folds, k)]
    assert np.array_equal(np.sort(np.concatenate(order)), np.arange(len(y)))
    assert all(len(fold) > 0 for fold in order)
    counts = class_counts_per_fold(y, folds, k)
    assert np.all(counts.max(axis=0) - counts.min(axis=0) <= 1)


def test_each_class_is_sliced_like_libsvm():
    y = np.array([1.0] * 7 + [-1.0] * 12)
    k = 5
    counts = class_counts_per_fold(y, stratified_folds(y, k, seed=3), k)
    for column, n_c in enumerate((7, 12)):
        expected = [(i + 1) * n_c // k - i * n_c // k for i in range(k)]
        assert counts[:, column].tolist() == expected


def test_folds_are_deterministic_for_a_seed_and_change_with_it():
    y = np.tile([1.0, -1.0, -1.0], 50)
    first = stratified_folds(y, 10, seed=7)
    assert np.array_equal(first, stratified_folds(y, 10, seed=7))
    assert folds_sha256(first) == folds_sha256(stratified_folds(y, 10, seed=7))
    assert folds_sha256(first) != folds_sha256(stratified_folds(y, 10, seed=8))


@pytest.mark.parametrize("k", ["loo", 9])
def test_leave_one_out_puts_one_instance_in_each_fold(k):
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    folds = stratified_folds(y, k, seed=0)
    assert sorted(folds.tolist()) == list(range(9))
    assert not np.array_equal(folds, np.arange(9))  # shuffled, not in dataset order
    assert np.array_equal(folds, stratified_folds(y, "loo", seed=0))


def test_rounds_test_each_fold_ascending_and_train_on_the_others_in_fold_order():
    # Catches rounds built from the wrong slice bounds or with the training folds out of order.
    folds = np.array([2, 0, 1, 0, 2, 1, 0])
    rounds = KFoldRounds(folds, 3)
    assert [(train.tolist(), test.tolist()) for train, test in rounds] == [
        ([2, 5, 0, 4], [1, 3, 6]), ([1, 3, 6, 0, 4], [2, 5]), ([1, 3, 6, 2, 5], [0, 4])]
    assert len(rounds) == 3 and rounds[-1][1].tolist() == [0, 4]
    assert rounds.trained_on().tolist() == list(range(7))
    with pytest.raises(IndexError):
        rounds[3]


def test_leave_one_out_rounds_take_memory_linear_in_n():
    # Catches rounds kept as n training sets of n - 1 indices: 200 MB here, 20 GB on Webdata.
    n = 5000
    folds = stratified_folds(np.tile([1.0, -1.0], n // 2), "loo", seed=0)
    tracemalloc.start()
    rounds = KFoldRounds(folds, n)
    train, test = rounds[n - 1]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 8 * n
    assert test.tolist() == [int(np.flatnonzero(folds == n - 1)[0])] and train.size == n - 1


@pytest.mark.parametrize("k", [1, 0, -3, 11, 2.5, True, "ten", None])
def test_number_of_folds_outside_two_to_n_is_rejected(k):
    with pytest.raises(SolverInputError, match="k"):
        stratified_folds(np.array([1.0, -1.0] * 5), k, seed=0)


def test_resolve_k():
    assert resolve_k("loo", 17) == 17
    assert resolve_k(np.int64(3), 17) == 3


def test_a_fold_left_empty_is_reported():
    y = np.array([1.0] * 3 + [-1.0] * 3)
    with pytest.raises(SolverInputError, match="empty"):
        stratified_folds(y, 5, seed=0)


def test_subsample_keeps_class_proportions_and_is_deterministic():
    y = np.array([1.0] * 30 + [-1.0] * 70)
    rng = np.random.default_rng(1)
    y = y[rng.permutation(100)]
    chosen = stratified_subsample(y, 21, seed=4)
    assert len(chosen) == 21 and len(np.unique(chosen)) == 21
    assert np.array_equal(chosen, np.sort(chosen))
    assert abs(np.sum(y[chosen] == 1) - 21 * 0.3) < 1
    assert np.array_equal(chosen, stratified_subsample(y, 21, seed=4))
    assert np.array_equal(stratified_subsample(y, 100, seed=4), np.arange(100))


@pytest.mark.parametrize("m", [0, 101, 2.0])
def test_subsample_size_outside_one_to_n_is_rejected(m):
    with pytest.raises(SolverInputError, match="subsample"):
        stratified_subsample(np.ones(100), m, seed=0)
