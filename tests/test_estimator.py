"""alphaseed.SVC against scikit-learn's SVC (both LibSVM's C-SVC) and scikit-learn's checks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as ScikitSVC
from sklearn.utils.estimator_checks import check_estimator

from alphaseed import SVC
from alphaseed.cv import stratified_subsample


def labelled_blobs(seed: int, n: int = 160, labels=("no", "yes")):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0.2, labels[1], labels[0])
    return X, y


def assert_same_model(ours: SVC, theirs: ScikitSVC, X, X_theirs) -> None:
    assert ours.n_iter_.tolist() == theirs.n_iter_.tolist()
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-6, atol=1e-9)
    theirs_decision = theirs.decision_function(X_theirs)
    scale = np.max(np.abs(theirs_decision))
    np.testing.assert_allclose(ours.decision_function(X), theirs_decision, rtol=0, atol=1e-6 * scale)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X_theirs))


@pytest.mark.parametrize("seed, C, gamma", [(0, 1.0, "scale"), (1, 10.0, 0.5), (2, 0.3, "auto")])
def test_decision_values_equal_scikit_learns_svc(seed, C, gamma):
    """Catches a flipped sign convention (classes_[1] must be the positive side), a wrong
    label-to-+1 mapping (LibSVM takes classes_[0] as +1: iterations would differ), a wrong
    "scale"/"auto" gamma, and support vectors listed in another order."""
    X, y = labelled_blobs(seed, labels=("b", "a") if seed == 1 else ("no", "yes"))
    kwargs = dict(C=C, gamma=gamma)
    assert_same_model(SVC(**kwargs).fit(X, y), ScikitSVC(**kwargs).fit(X, y), X, X)


@pytest.mark.mirror
@pytest.mark.parametrize("name, C, gamma", [("heart", 2182.0, 0.2), ("heart", 1.0, "scale"),
                                            ("adult", 100.0, 0.5)])
def test_decision_values_equal_scikit_learns_on_real_data(real_dataset, name, C, gamma):
    """Catches the same faults on the paper's data, sparse input included (Adult is CSR):
    a sparse gamma="scale" computed as if the zeros were missing would differ."""
    X, y = real_dataset(name)
    if X.shape[0] > 800:
        keep = stratified_subsample(y, 800, 0)
        X, y = X[keep], y[keep]
    ours = SVC(C=C, gamma=gamma).fit(X, y)
    assert sp.issparse(ours.support_vectors_)
    assert_same_model(ours, ScikitSVC(C=C, gamma=gamma).fit(X.toarray(), y), X, X.toarray())


def assert_same_multiclass_model(ours: SVC, theirs: ScikitSVC, X) -> None:
    """The fitted attributes, both decision shapes and both prediction rules of the two."""
    assert_same_model(ours, theirs, X, X)
    for shape, break_ties in (("ovo", False), ("ovr", True)):
        ours.set_params(decision_function_shape=shape, break_ties=break_ties)
        theirs.set_params(decision_function_shape=shape, break_ties=break_ties)
        theirs_decision = theirs.decision_function(X)
        np.testing.assert_allclose(ours.decision_function(X), theirs_decision, rtol=0,
                                   atol=1e-6 * np.max(np.abs(theirs_decision)))
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("n_classes, C, gamma", [(3, 1.0, "scale"), (4, 30.0, 0.3), (5, 0.5, "auto")])
def test_many_classes_give_scikit_learns_one_vs_one_model(n_classes, C, gamma):
    """Catches pairs trained in another order or with the classes swapped (iterations, intercept_),
    coefficients put in the wrong row of dual_coef_ (LibSVM puts class i's of pair (i, j) in row
    j - 1), support vectors not grouped by class, the binary sign flip applied to more classes,
    a vote whose ties do not go to the first class, and a wrong 'ovr' transform or break_ties."""
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(60 * n_classes, 3))
    labels = np.array([f"class {c}" for c in "edcba"[:n_classes]])
    y = labels[np.argmin(((X[:, None, :2] - rng.normal(size=(n_classes, 2))) ** 2).sum(-1)
                         + 0.5 * rng.normal(size=(X.shape[0], n_classes)), axis=1)]
    assert_same_multiclass_model(SVC(C=C, gamma=gamma).fit(X, y),
                                 ScikitSVC(C=C, gamma=gamma).fit(X, y), X)


def test_ten_digits_give_scikit_learns_model():
    """Catches the same faults on a real ten-class problem (45 pairs, ties in the votes)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    assert_same_multiclass_model(SVC(C=8.0, gamma=0.03125).fit(X, y),
                                 ScikitSVC(C=8.0, gamma=0.03125).fit(X, y), X)


@pytest.mark.parametrize("n_classes, class_weight, C", [
    (2, "balanced", 1.0), (2, {"class 1": 4.0}, 30.0), (3, "balanced", 3.0), (4, {"class 0": 0.2, "class 3": 7.0}, 1.0),
])
def test_class_weights_give_scikit_learns_model(n_classes, class_weight, C):
    """Catches a class's weight applied to the other class of a pair (LibSVM's Cp is class i's),
    LibSVM's two-C clipping done with one C (iterations and alphas would differ), G_bar or the
    bound statuses counted at the wrong class's bound, and "balanced" computed otherwise than
    scikit-learn's n / (n_classes * count)."""
    rng = np.random.default_rng(20 + n_classes)
    X = rng.normal(size=(300, 3))
    labels = np.array([f"class {c}" for c in range(n_classes)])
    # Imbalanced: class 0 holds most of the instances.
    codes = np.where(rng.random(300) < 0.6, 0, rng.integers(1, n_classes, 300))
    X[:, :2] += 0.8 * np.column_stack([np.cos(codes), np.sin(codes)])
    y = labels[codes]
    ours = SVC(C=C, class_weight=class_weight).fit(X, y)
    theirs = ScikitSVC(C=C, class_weight=class_weight).fit(X, y)
    np.testing.assert_array_equal(ours.class_weight_, theirs.class_weight_)
    assert_same_model(ours, theirs, X, X)


def test_bad_decision_shapes_are_refused():
    """Catches a typo in decision_function_shape passing as 'ovr', and break_ties with 'ovo', which
    scikit-learn refuses."""
    X, y = labelled_blobs(3)
    with pytest.raises(ValueError, match="decision_function_shape"):
        SVC(decision_function_shape="ovx").fit(X, y)
    with pytest.raises(ValueError, match="break_ties"):
        SVC(decision_function_shape="ovo", break_ties=True).fit(X, y).predict(X)


def test_sample_weight_is_refused():
    """Catches a fit that accepts sample_weight and ignores it."""
    X, y = labelled_blobs(4)
    with pytest.raises(TypeError, match="sample_weight"):
        SVC().fit(X, y, sample_weight=np.ones(len(y)))


def test_arguments_are_keyword_only_and_n_jobs_is_checked():
    """Catches a positional SVC(1.0), which scikit-learn's estimators refuse, and an n_jobs that never
    reaches the fit (0 cores would pass unnoticed)."""
    X, y = labelled_blobs(4)
    with pytest.raises(TypeError):
        SVC(1.0)
    with pytest.raises(ValueError, match="n_jobs"):
        SVC(n_jobs=0).fit(X, y)


@pytest.mark.parametrize("gamma", ["median", -1.0, 0.0, float("nan"), True])
def test_a_bad_gamma_is_refused(gamma):
    """Catches a gamma that reaches the kernel unchecked (NaN kernels, an unknown rule)."""
    X, y = labelled_blobs(5)
    with pytest.raises(ValueError, match="gamma"):
        SVC(gamma=gamma).fit(X, y)


def test_a_fit_stopped_at_max_iter_says_so_and_minus_one_means_no_cap():
    """Catches a max_iter that never reaches the solver, a stop at the cap that passes silently
    (no ConvergenceWarning, fit_status_ 0), -1 read as a cap of one iteration or of LibSVM's,
    and a bad max_iter that is not refused."""
    from sklearn.exceptions import ConvergenceWarning

    X, y = labelled_blobs(7)
    free = ScikitSVC(C=100.0, gamma=0.5).fit(X, y).n_iter_[0]
    with pytest.warns(ConvergenceWarning, match="iteration cap"):
        capped = SVC(C=100.0, gamma=0.5, max_iter=free // 2).fit(X, y)
    assert capped.n_iter_.tolist() == [free // 2] and capped.fit_status_ == 1
    for max_iter in (None, -1, free + 1):  # at exactly free, LibSVM too stops at the cap unchecked
        fitted = SVC(C=100.0, gamma=0.5, max_iter=max_iter).fit(X, y)
        assert fitted.n_iter_.tolist() == [free] and fitted.fit_status_ == 0
    for bad in (0, -2, 2.5, True, "10"):
        with pytest.raises(ValueError, match="max_iter"):
            SVC(max_iter=bad).fit(X, y)


def test_passes_scikit_learns_estimator_checks():
    """Catches any break of scikit-learn's estimator contract (cloning, validation, fitted
    attributes, sparse input, pickling, multi-class...); no check is skipped but the array-API one,
    which needs SCIPY_ARRAY_API."""
    results = check_estimator(SVC(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []
    skipped = [r["check_name"] for r in results if r["status"] == "skipped"]
    assert set(skipped) <= {"check_array_api_input"}


def test_pipeline_inside_scikit_learns_grid_search():
    """Catches an estimator that breaks under clone/set_params inside scikit-learn's own
    GridSearchCV: its scores must equal those of scikit-learn's SVC in the same pipeline."""
    from sklearn.model_selection import GridSearchCV as ScikitGridSearchCV

    X, y = labelled_blobs(6)
    grid = {"svc__C": [0.5, 8.0], "svc__gamma": [0.1, "scale"]}
    ours = ScikitGridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=3).fit(X, y)
    theirs = ScikitGridSearchCV(make_pipeline(StandardScaler(), ScikitSVC()), grid, cv=3).fit(X, y)
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"],
                                  theirs.cv_results_["mean_test_score"])
    assert ours.best_params_ == theirs.best_params_
