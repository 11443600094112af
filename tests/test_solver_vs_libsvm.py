"""Our solver against LibSVM itself, on the same training sets in the same order."""

import lzma
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from alphaseed.cv.baseline import LibsvmData, libsvm_parameter, predict_libsvm, train_libsvm
from alphaseed.kernel import KernelMatrix
from alphaseed.solver import decision_values, solve


def compare(X, y, C, gamma, train, test):
    km = KernelMatrix(X, gamma)
    ours = solve(km, y, train, C)
    data = LibsvmData(X, y)
    model, ref = train_libsvm(data, data.problem(train), libsvm_parameter(C, gamma, 1e-3, 100, True))
    ref_pred, _ = predict_libsvm(model, data, test)
    our_pred = np.where(decision_values(km, y, train, ours.alpha, ours.rho, test) > 0, 1, -1)
    return ours, ref, our_pred, ref_pred


def assert_equivalent(ours, ref, our_pred, ref_pred):
    assert ours.objective == pytest.approx(ref.objective, rel=1e-4)
    assert abs(ours.iterations - ref.iterations) <= 0.1 * ref.iterations
    assert abs(ours.n_sv - ref.n_sv) <= max(3, 0.01 * ref.n_sv)
    assert np.mean(our_pred == ref_pred) >= 0.995


@pytest.mark.parametrize("seed", range(4))
def test_synthetic_problems(seed):
    rng = np.random.default_rng(seed)
    n = 300
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, 6)) + 0.7 * y[:, None]
    order = rng.permutation(n)
    assert_equivalent(*compare(X, y, C=float(10.0 ** rng.integers(-1, 3)), gamma=0.2,
                               train=order[:240], test=order[240:]))


def mirror_dataset(name):
    mirror = os.environ.get("ALPHASEED_DATA_MIRROR")
    if not mirror:
        pytest.skip("ALPHASEED_DATA_MIRROR is not set: the real datasets are not available")
    return load_svmlight_file(lzma.open(Path(mirror) / f"{name}.xz", "rb"))


@pytest.mark.mirror
@pytest.mark.parametrize(
    "name, C, gamma, sample",
    [("heart", 2182, 0.2, None), ("madelon", 1, 0.7071, None), ("a9a", 100, 0.5, 3000)],
)
def test_paper_datasets_match_libsvm_exactly(name, C, gamma, sample):
    X, y = mirror_dataset(name)
    rng = np.random.default_rng(0)
    index = rng.permutation(y.size)[:sample] if sample else rng.permutation(y.size)
    cut = int(0.9 * index.size)
    ours, ref, our_pred, ref_pred = compare(X, y, C, gamma, index[:cut], index[cut:])
    assert_equivalent(ours, ref, our_pred, ref_pred)
    # Same algorithm, same order, same float32 kernel values: LibSVM's run, step for step.
    assert ours.iterations == ref.iterations
    assert ours.n_sv == ref.n_sv and ours.n_bounded_sv == ref.n_bounded_sv
