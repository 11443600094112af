"""alphaseed.HalvingGridSearchCV: scikit-learn's rounds, subsamples and survivors, each round seeded."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV as ScikitHalvingGridSearchCV
from sklearn.model_selection import KFold
from sklearn.svm import SVC as ScikitSVC

from alphaseed import SVC, GridSearchCV, HalvingGridSearchCV

GRID = {"C": [0.25, 1.0, 4.0, 16.0, 64.0, 256.0], "gamma": [0.02, 0.1, 0.5, "scale"]}
SCHEDULE = ("n_resources_", "n_candidates_", "n_iterations_", "n_required_iterations_",
            "n_possible_iterations_", "min_resources_", "max_resources_", "n_remaining_candidates_")


def blobs(seed: int, n: int = 360, n_classes: int = 2):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, 4))
    X[:, :2] += 1.1 * np.column_stack([np.cos(2.3 * codes), np.sin(2.3 * codes)])
    return X, np.array(["a", "b", "c", "d"])[codes]


def both(X, y, **arguments):
    """Our cold search and scikit-learn's, each with its own copy of the arguments (a RandomState
    is consumed by the search that draws from it)."""
    ours = HalvingGridSearchCV(SVC(solver="smo"), GRID, method="cold", **copy.deepcopy(arguments)).fit(X, y)
    theirs = ScikitHalvingGridSearchCV(ScikitSVC(), GRID, return_train_score=False,
                                       **copy.deepcopy(arguments)).fit(X, y)
    return ours, theirs


@pytest.mark.parametrize("arguments", [
    dict(random_state=0),
    dict(random_state=3, factor=2, cv=KFold(4, shuffle=True, random_state=1)),
    dict(random_state=1, factor=2.5, min_resources="smallest"),
    dict(random_state=2, min_resources=40, aggressive_elimination=True),
    dict(random_state=4, max_resources=200, min_resources=30),
    dict(random_state=np.random.RandomState(5), factor=2),
])
def test_cold_halving_is_scikit_learns(arguments):
    """Catches another schedule than scikit-learn's (rounds, samples, the exhaust and aggressive
    rules, a float factor), other subsamples (each round must draw as scikit-learn's
    _SubsampleMetaSplitter does, test sets included, and from a RandomState in its order), survivors chosen otherwise than its _top_k
    (ties, order), ranks within a round instead of over all rows, and the best point taken from
    every round instead of the last."""
    X, y = blobs(0)
    ours, theirs = both(X, y, **arguments)
    for name in SCHEDULE:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert set(ours.cv_results_) == set(theirs.cv_results_) | {
        *(f"split{i}_iterations" for i in range(ours.n_splits_)), "total_iterations", "iteration_cap_hits"}
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    for key in ("iter", "n_resources", "mean_test_score", "rank_test_score",
                *(f"split{i}_test_score" for i in range(ours.n_splits_))):
        np.testing.assert_array_equal(ours.cv_results_[key], theirs.cv_results_[key], err_msg=key)
    assert (ours.best_index_, ours.best_params_, ours.best_score_) == (
        theirs.best_index_, theirs.best_params_, theirs.best_score_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_many_classes_are_halved_as_scikit_learn_halves_them():
    """Catches a minimum of samples that forgets the classes (2 per split and class) and a round
    whose pairs vote otherwise than scikit-learn's one-vs-one."""
    X, y = blobs(5, n=300, n_classes=3)
    ours, theirs = both(X, y, random_state=0, min_resources="smallest", factor=2)
    assert ours.min_resources_ == theirs.min_resources_ == 2 * 5 * 3
    assert ours.n_resources_ == theirs.n_resources_
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"])
    assert ours.best_params_ == theirs.best_params_


def test_a_training_subsample_of_one_class_scores_nan_as_in_scikit_learn():
    """Catches a split whose training subsample holds one class scored as if a classifier had been
    fitted (scikit-learn's fit fails there and the split scores NaN), NaN ranked otherwise than
    scikit-learn ranks it (tied with the worst), and a best point taken from a failed one."""
    X, y = blobs(4, n=300)
    y = np.where(np.arange(300) % 40 == 0, "rare", "common")   # 8 of 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # scikit-learn's FitFailedWarning, both searches' non-finite scores
        ours, theirs = both(X, y, random_state=0, min_resources="smallest")
    assert np.isnan(theirs.cv_results_["mean_test_score"]).any()
    for key in ("mean_test_score", "rank_test_score", "split0_test_score", "split1_test_score"):
        np.testing.assert_array_equal(ours.cv_results_[key], theirs.cv_results_[key], err_msg=key)
    assert ours.best_params_ == theirs.best_params_


def test_seeded_rounds_keep_the_cold_accuracy_with_fewer_iterations():
    """Catches a round that is not seeded (the same iterations as cold) and a seed that changes
    which candidates survive; and, against GridSearchCV on the same subsampled splits, a round
    that searches anything but the candidates it was given."""
    X, y = blobs(1, n=480)
    cold = HalvingGridSearchCV(SVC(solver="smo"), GRID, method="cold", random_state=0).fit(X, y)
    seeded = HalvingGridSearchCV(SVC(solver="smo"), GRID, method="sir", random_state=0).fit(X, y)
    np.testing.assert_array_equal(seeded.cv_results_["mean_test_score"], cold.cv_results_["mean_test_score"])
    assert seeded.cv_results_["params"] == cold.cv_results_["params"]
    assert seeded.cv_results_["total_iterations"].sum() < cold.cv_results_["total_iterations"].sum()
    last = seeded.n_iterations_ - 1
    rows = np.flatnonzero(seeded.cv_results_["iter"] == last)
    splits = seeded._subsample(seeded._splits(X, y), seeded.n_resources_[last] / X.shape[0])
    grid = GridSearchCV(SVC(solver="smo"), [{"C": [p["C"]], "gamma": [p["gamma"]]}
                                            for p in np.array(seeded.cv_results_["params"])[rows]],
                        cv=splits, method="sir", refit=False).fit(X, y)
    np.testing.assert_array_equal(grid.cv_results_["mean_test_score"],
                                  seeded.cv_results_["mean_test_score"][rows])


def test_an_int_random_state_nests_each_round_in_the_next():
    """Catches subsamples drawn afresh per round with an int seed (scikit-learn's resample draws
    the same permutation each time, so a round's instances contain the previous round's)."""
    X, y = blobs(2)
    search = HalvingGridSearchCV(SVC(), GRID, random_state=7, factor=2, refit=False)
    splits = search._splits(X, y)
    small, large = (search._subsample(splits, fraction) for fraction in (0.25, 0.5))
    for (train_s, test_s), (train_l, test_l) in zip(small, large):
        assert set(train_s) <= set(train_l) and set(test_s) <= set(test_l)


@pytest.mark.parametrize("arguments, message", [
    (dict(resource="C"), "resource"),
    (dict(factor=1), "factor"),
    (dict(factor="3"), "factor"),
    (dict(min_resources=0), "min_resources"),
    (dict(min_resources="all"), "min_resources"),
    (dict(max_resources=-5), "max_resources"),
    (dict(max_resources=10, min_resources=20), "greater than"),
    (dict(min_resources=4, max_resources=4), "no training or test instance"),
    (dict(cv="loo"), "loo"),
])
def test_bad_halving_arguments_are_refused(arguments, message):
    """Catches parameters that would loop forever (factor 1), search nothing, or score empty
    test sets silently."""
    X, y = blobs(3, n=60)
    with pytest.raises(ValueError, match=message):
        HalvingGridSearchCV(SVC(), GRID, **arguments).fit(X, y)
