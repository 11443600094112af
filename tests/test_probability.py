"""SVC(probability=True): LibSVM's Platt scaling, its internal cross-validation seeded."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV, _sigmoid_calibration
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as ScikitSVC
from sklearn.utils import check_random_state

from alphaseed import SVC
from alphaseed.kernel import KernelMatrix
from alphaseed.sklearn import pair_problem
from alphaseed.sklearn.platt import couple_pairs, fit_sigmoid, held_out_decision_values, platt_splits
from alphaseed.solver import SolverOptions


def classification(n_classes: int, seed: int, n: int = 400, weights=None):
    X, y = make_classification(n, 8, n_informative=5, n_classes=n_classes, weights=weights,
                               n_clusters_per_class=1, flip_y=0.05, random_state=seed)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("seed", range(4))
def test_the_sigmoid_is_scikit_learns_platt_fit(seed):
    """Catches targets without Platt's prior (plain 0/1 labels), A and B with the wrong sign
    convention (P(+1) = 1 / (1 + exp(A f + B)), A < 0 for useful values), and a Newton loop that
    stops short of the optimum."""
    rng = np.random.default_rng(seed)
    positive = rng.random(300) < 0.3 + 0.1 * seed
    decision = np.where(positive, 1.0, -1.0) * rng.gamma(2.0, 0.6, 300) + rng.normal(0, 0.8, 300)
    A, B = fit_sigmoid(decision, positive)
    reference = _sigmoid_calibration(decision, positive.astype(int))
    np.testing.assert_allclose([A, B], reference, rtol=1e-4, atol=1e-6)
    assert A < 0


def test_held_out_values_are_those_of_fits_on_the_same_folds():
    """Catches a value stored at another instance than the one held out, a fold trained on data
    that includes its own test set, and a seeded round stopped short: each value must be the
    decision value of scikit-learn's SVC trained on the other folds."""
    X, y = classification(2, 0)
    y_signed = np.where(y == 1, 1.0, -1.0)
    index = np.arange(len(y))
    splits = platt_splits(len(y), np.random.default_rng(3))
    kernel = KernelMatrix(X, 0.1)
    values = held_out_decision_values(kernel, y_signed, index, 2.0, splits, options=SolverOptions(eps=1e-7))
    for train, test in splits:
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == len(y)
        reference = ScikitSVC(C=2.0, gamma=0.1, tol=1e-7).fit(X[train], y_signed[train])
        np.testing.assert_allclose(values[test], reference.decision_function(X[test]), atol=1e-5)


def test_probabilities_are_an_explicit_platt_fit_on_the_same_folds():
    """Catches a probability model fitted on other folds or on training-set decision values, and
    classes_ columns swapped: scikit-learn's CalibratedClassifierCV(method="sigmoid",
    ensemble=False) over the folds our fit used must give the same probabilities."""
    X, y = classification(2, 1)
    ours = SVC(C=2.0, gamma=0.1, tol=1e-7, probability=True, random_state=5).fit(X, y)
    index, _ = pair_problem(y, 0, 1)   # the one pair, its instances in the order the folds count them
    folds = [(index[train], index[test]) for train, test in platt_splits(index.size, check_random_state(5))]
    explicit = CalibratedClassifierCV(ScikitSVC(C=2.0, gamma=0.1, tol=1e-7), method="sigmoid",
                                      ensemble=False, cv=folds).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), explicit.predict_proba(X), atol=1e-4)


def test_every_pair_has_the_platt_fit_of_its_weighted_folds():
    """Catches pairs after the first drawing other folds than LibSVM's order of pairs gives (one
    permutation per pair, in class_pairs order), and internal folds trained without the class
    weights: each pair's (A, B) must be Platt's fit on the decision values of scikit-learn's SVC
    trained, with the pair's two Cs, on the same folds."""
    from sklearn.utils.class_weight import compute_class_weight

    X, y = classification(3, 4, weights=[0.6, 0.3, 0.1])
    ours = SVC(C=2.0, gamma=0.1, tol=1e-7, class_weight="balanced", probability=True, random_state=9).fit(X, y)
    weight = compute_class_weight("balanced", classes=np.unique(y), y=y)
    rng = check_random_state(9)
    for p, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        index, y_pair = pair_problem(y, i, j)
        values = np.empty(index.size)
        for train, test in platt_splits(index.size, rng):
            fold = ScikitSVC(C=2.0, gamma=0.1, tol=1e-7, class_weight={1.0: weight[i], -1.0: weight[j]})
            fold.fit(X[index[train]], y_pair[index[train]])
            values[test] = fold.decision_function(X[index[test]])
        reference = _sigmoid_calibration(values, (y_pair[index] > 0).astype(int))
        np.testing.assert_allclose([ours.probA_[p], ours.probB_[p]], reference, rtol=1e-3, atol=1e-4)


def test_coupling_recovers_a_distribution_from_its_consistent_pairs():
    """Catches Wu, Lin and Weng's system built with r_ij and r_ji swapped or without its
    constraint: pairs r_ij = p_i / (p_i + p_j) of a distribution p give p back, and two classes
    give r itself."""
    rng = np.random.default_rng(0)
    for n_classes in (2, 3, 5):
        p = rng.dirichlet(np.ones(n_classes), size=20)
        pairs = [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]
        r = np.column_stack([p[:, i] / (p[:, i] + p[:, j]) for i, j in pairs])
        np.testing.assert_allclose(couple_pairs(r, n_classes), p, atol=1e-12)


@pytest.mark.parametrize("n_classes, weights, class_weight", [
    (2, [0.85, 0.15], None), (2, [0.85, 0.15], "balanced"), (3, None, None), (3, [0.6, 0.3, 0.1], "balanced"),
    (5, None, None),
])
def test_log_loss_is_scikit_learns(n_classes, weights, class_weight):
    """Catches probabilities that are valid distributions but poorly calibrated (a coupling or a
    sigmoid off by a sign, pairs matched to the wrong classes, internal folds trained without the
    class weights): held-out log loss within 5 % of scikit-learn's SVC(probability=True), whose
    folds differ from ours."""
    X, y = classification(n_classes, 10 + n_classes, n=600, weights=weights)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    ours = SVC(C=4.0, class_weight=class_weight, probability=True, random_state=0).fit(X_train, y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # scikit-learn 1.9 deprecates probability=True
        theirs = ScikitSVC(C=4.0, class_weight=class_weight, probability=True, random_state=0).fit(X_train, y_train)
    proba = ours.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.exp(ours.predict_log_proba(X_test)), proba)
    assert log_loss(y_test, proba) <= 1.05 * log_loss(y_test, theirs.predict_proba(X_test))
    assert ours.probA_.shape == ours.probB_.shape == (n_classes * (n_classes - 1) // 2,)


def test_probabilities_need_probability_true_and_repeat_with_a_random_state():
    """Catches predict_proba offered without a probability model, and folds drawn from a global
    random state (the same random_state must give the same probabilities)."""
    X, y = classification(3, 2)
    with pytest.raises(AttributeError, match="predict_proba"):
        SVC().fit(X, y).predict_proba(X)
    assert not hasattr(SVC(), "predict_proba")
    one, two = (SVC(probability=True, random_state=7).fit(X, y).predict_proba(X) for _ in range(2))
    np.testing.assert_array_equal(one, two)
    assert SVC(probability=False).fit(X, y).probA_.size == 0
