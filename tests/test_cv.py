"""Cross-validation: our solver against the real LibSVM on the same folds, round by round."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from alphaseed import cross_validate
from alphaseed.errors import AlphaseedError, ConfigError, SolverInputError
from alphaseed.cv import stratified_subsample
from alphaseed.solver import SolverOptions


@pytest.fixture(autouse=True)
def one_openmp_thread():
    # LibSVM's OpenMP threads spin-wait; on a shared 2-core machine two of them crawl.
    with threadpool_limits(1, user_api="openmp"):
        yield


def synthetic(seed: int, n: int = 200, dim: int = 5):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, dim)) + 0.8 * y[:, None]
    return X, y


def assert_matches_libsvm(X, y, C, gamma, k, **options):
    ours = cross_validate(X, y, C, gamma, k, "cold", **options)
    ref = cross_validate(X, y, C, gamma, k, "libsvm", **options)
    assert ours.rounds_run == ref.rounds_run
    assert abs(ours.iterations - ref.iterations) <= 0.1 * ref.iterations
    for mine, theirs in zip(ours.rounds, ref.rounds):
        assert mine.train_size == theirs.train_size and mine.test_size == theirs.test_size
        assert mine.objective == pytest.approx(theirs.objective, rel=1e-4)
        assert abs(mine.n_sv - theirs.n_sv) <= max(3, 0.01 * theirs.n_sv)
    tested = ref.predictions != 0
    assert np.array_equal(tested, ours.predictions != 0)
    assert np.mean(ours.predictions[tested] == ref.predictions[tested]) >= 0.995
    return ours, ref


@pytest.mark.parametrize("seed, C, gamma", [(0, 1.0, 0.2), (1, 10.0, 0.5), (2, 100.0, 0.1)])
def test_cold_matches_libsvm_on_synthetic_problems(seed, C, gamma):
    """Catches the cold solver departing from LibSVM round by round: objective, SVs, iterations,
    predictions."""
    X, y = synthetic(seed)
    assert_matches_libsvm(X, y, C, gamma, k=5, seed=seed)


@pytest.mark.mirror
def test_heart_k10_matches_libsvm_and_the_paper(real_dataset):
    """Catches our cold k = 10 run on Heart departing from LibSVM or from the paper's 55.56%."""
    X, y = real_dataset("heart")
    ours, ref = assert_matches_libsvm(X, y, 2182, 0.2, k=10)
    assert round(ours.accuracy, 2) == round(ref.accuracy, 2) == 55.56


@pytest.mark.mirror
@pytest.mark.slow
def test_madelon_k3_matches_libsvm(real_dataset):
    """Catches the cold solver departing from LibSVM on Madelon (500 raw features, where float32
    distances would cancel)."""
    X, y = real_dataset("madelon")
    ours, ref = assert_matches_libsvm(X, y, 1, 0.7071, k=3)
    assert ours.accuracy == ref.accuracy == 50.0


@pytest.mark.mirror
@pytest.mark.slow
def test_adult_sample_k3_matches_libsvm(real_dataset):
    """Catches the cold solver departing from LibSVM on an Adult sample (large C, sparse data)."""
    X, y = real_dataset("adult")
    keep = stratified_subsample(y, 3000, seed=0)
    ours, ref = assert_matches_libsvm(X[keep], y[keep], 100, 0.5, k=3)
    assert abs(ours.accuracy - ref.accuracy) <= 0.1


def test_a_round_without_one_class_predicts_the_other_like_libsvm():
    """Catches a one-class training round predicted differently from LibSVM (or crashing)."""
    X, y = synthetic(3, n=30)
    y[:] = -1.0
    y[0] = 1.0  # its fold's round trains on -1 only
    ours = cross_validate(X, y, 1.0, 0.5, 3, "cold")
    ref = cross_validate(X, y, 1.0, 0.5, 3, "libsvm")
    assert ours.predictions[0] == ref.predictions[0] == -1
    assert np.array_equal(ours.predictions, ref.predictions)


@pytest.mark.parametrize("method", ["cold", "libsvm"])
def test_max_rounds_runs_the_first_rounds_and_estimates_the_rest(method):
    X, y = synthetic(4)
    full = cross_validate(X, y, 1.0, 0.2, 10, method)
    part = cross_validate(X, y, 1.0, 0.2, 10, method, max_rounds=3)
    assert part.estimated and not full.estimated
    assert part.rounds_run == 3 and part.n_folds == 10
    assert part.n_tested == sum(r.test_size for r in part.rounds) == np.count_nonzero(part.predictions)
    assert part.iterations_measured == sum(r.iterations for r in full.rounds[:3])
    assert part.iterations == round(part.iterations_measured / 3 * 10)
    assert np.array_equal(part.predictions[part.predictions != 0],
                          full.predictions[part.predictions != 0])
    assert part.accuracy == pytest.approx(100.0 * part.n_correct / part.n_tested)
    round_seconds = sum(r.seconds.total for r in part.rounds)
    assert part.seconds_measured == pytest.approx(
        part.seconds_kernel + part.seconds_full_model + round_seconds)
    assert part.seconds == pytest.approx(
        part.seconds_kernel + part.seconds_full_model + round_seconds / 3 * 10)
    assert part.seconds == pytest.approx(part.seconds_kernel + part.seconds_init + part.seconds_rest)


@pytest.mark.parametrize("method", ["cold", "libsvm", "sir"])
def test_same_seed_same_folds_iterations_and_predictions(method):
    """Catches nondeterminism (folds, iterations or predictions changing between runs with one
    seed) and a seed argument that changes nothing."""
    X, y = synthetic(5)
    first = cross_validate(X, y, 10.0, 0.3, 5, method, seed=7)
    second = cross_validate(X, y, 10.0, 0.3, 5, method, seed=7)
    assert np.array_equal(first.folds, second.folds)
    assert np.array_equal(first.predictions, second.predictions)
    assert [r.iterations for r in first.rounds] == [r.iterations for r in second.rounds]
    other = cross_validate(X, y, 10.0, 0.3, 5, method, seed=8)
    assert not np.array_equal(first.folds, other.folds)


@pytest.mark.parametrize("k, method", [(5, "ato"), (5, "mir"), (5, "sir"), ("loo", "sir"),
                                       ("loo", "avg"), ("loo", "top"), (5, "full"), (2, "full")])
def test_seeded_rounds_reach_the_cold_optimum(k, method):
    """Catches a seeded cross-validation whose rounds end elsewhere than cold's, or whose timing
    split misplaces the seeding and full-model time. Any feasible seed reaches the cold
    optimum, so the seeders' formulas are checked in test_naive_twins, their savings in
    test_seeding_savings."""
    X, y = synthetic(6, n=40)
    cold = cross_validate(X, y, 10.0, 0.3, k, "cold")
    seeded = cross_validate(X, y, 10.0, 0.3, k, method)
    assert seeded.accuracy == cold.accuracy
    for mine, theirs in zip(seeded.rounds, cold.rounds):
        assert mine.objective == pytest.approx(theirs.objective, rel=1e-4)
    from_full_model = method in ("avg", "top", "full")
    assert seeded.rounds[0].seconds.seed == 0.0 or from_full_model
    assert (seeded.seconds_full_model > 0) == from_full_model
    assert (seeded.iterations_full_model > 0) == from_full_model
    rounds = sum(r.iterations for r in seeded.rounds)
    assert seeded.iterations == seeded.iterations_full_model + rounds
    assert seeded.seconds_init == pytest.approx(
        seeded.seconds_full_model + sum(r.seconds.seed for r in seeded.rounds))


def test_progress_reports_every_round():
    X, y = synthetic(7)
    calls = []
    result = cross_validate(X, y, 1.0, 0.2, 10, "cold", max_rounds=4,
                            progress=lambda *args: calls.append(args))
    assert [c[:2] for c in calls] == [(h, 4) for h in range(1, 5)]
    assert [c[2] for c in calls] == [r.iterations for r in result.rounds]
    elapsed = [c[3] for c in calls]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0


@pytest.mark.parametrize("k, method, error", [
    (1, "cold", SolverInputError),
    (201, "cold", SolverInputError),
    ("ten", "cold", SolverInputError),
    (2.5, "cold", SolverInputError),
    (True, "cold", SolverInputError),
    (10, "avg", ConfigError),
    (10, "top", ConfigError),
    (2, "sir", ConfigError),
    (10, "warm", ConfigError),
])
def test_bad_k_or_method_raises_a_clear_error(k, method, error):
    """Catches a bad k or method running (or failing obscurely) instead of raising an
    AlphaseedError."""
    X, y = synthetic(8)
    with pytest.raises(error) as raised:
        cross_validate(X, y, 1.0, 0.2, k, method)
    assert isinstance(raised.value, AlphaseedError)


@pytest.mark.parametrize("options", [{"max_rounds": 0}, {"max_rounds": 2.0}, {"C": -1.0}])
def test_bad_options_raise_before_any_work(options):
    """Catches a bad max_rounds or C accepted or failing late."""
    X, y = synthetic(9)
    arguments = {"C": 1.0, "gamma": 0.2, "k": 5, "method": "cold", **options}
    with pytest.raises(AlphaseedError):
        cross_validate(X, y, **arguments)


def test_any_two_labels_cross_validate_as_minus_and_plus_one():
    """Catches 0/1 or string-like labels refused, the classes mapped the other way round (the larger must be
    +1: a flip changes LibSVM's order and so the iterations), a third class taken for one of two, and NaN
    labels let through."""
    X, y = synthetic(10)
    signed = cross_validate(X, y, 1.0, 0.2, 5, "sir")
    for labels in ((y + 1) / 2, np.where(y > 0, 7, 3)):
        other = cross_validate(X, labels, 1.0, 0.2, 5, "sir")
        assert [r.iterations for r in other.rounds] == [r.iterations for r in signed.rounds]
        np.testing.assert_array_equal(other.predictions, signed.predictions)
        assert other.classes == tuple(np.unique(labels).tolist())
    with pytest.raises(SolverInputError, match="two classes.*GridSearchCV"):
        cross_validate(X, np.arange(y.size) % 3, 1.0, 0.2, 5, "cold")
    with pytest.raises(SolverInputError, match="NaN"):
        cross_validate(X, np.where(y > 0, np.nan, 0.0), 1.0, 0.2, 5, "cold")


def test_gamma_scale_is_scikit_learns_and_an_overflow_says_so():
    """Catches gamma="scale" or "auto" refused by cross_validate or computed otherwise than scikit-learn's
    rule, a variance that overflows reported as a gamma of 0.0 the user never gave, and True taken as 1."""
    X, y = synthetic(11)
    by_rule = cross_validate(X, y, 1.0, "scale", 5, "cold")
    assert by_rule.gamma == pytest.approx(1.0 / (X.shape[1] * X.var()))
    with pytest.raises(SolverInputError, match="not finite"):
        cross_validate(np.full_like(X, 1e200) * np.arange(X.shape[0])[:, None], y, 1.0, "scale", 5, "cold")
    assert cross_validate(X, y, 1.0, "auto", 5, "cold").gamma == 1.0 / X.shape[1]
    with pytest.raises(SolverInputError, match="positive finite"):
        cross_validate(X, y, 1.0, True, 5, "cold")


def test_gamma_scale_of_constant_sparse_features_is_one():
    """Catches E[x^2] - E[x]^2 on sparse data taken as it cancels: a constant sparse X gives a variance a
    rounding error below zero, hence a negative gamma refused as if the user had given it."""
    import scipy.sparse as sp

    from alphaseed.kernel import resolve_gamma

    X = sp.csr_matrix(np.full((7, 3), 0.3))
    assert (X.multiply(X).mean() - X.mean() ** 2) < 0   # the cancellation this guards against
    assert resolve_gamma("scale", X) == 1.0


@pytest.mark.parametrize("method", ["cold", "ato", "mir", "sir"])
def test_explicit_splits_reproduce_k_fold_round_for_round(method):
    """Catches seeding index sets rebuilt from the splits in another order or content than the
    k-fold rounds use (S, R, T swapped or unsorted): iterations would differ."""
    from alphaseed.cv import KFoldRounds, stratified_folds

    X, y = synthetic(11, n=120)
    by_k = cross_validate(X, y, 10.0, 0.3, 5, method, seed=3)
    splits = KFoldRounds(stratified_folds(y, 5, 3), 5)
    by_cv = cross_validate(X, y, 10.0, 0.3, cv=iter(splits), method=method)
    assert by_cv.k == "custom" and by_cv.n_folds == 5
    assert [r.iterations for r in by_cv.rounds] == [r.iterations for r in by_k.rounds]
    assert np.array_equal(by_cv.predictions, by_k.predictions)
    assert np.array_equal(by_cv.folds, by_k.folds)


@pytest.mark.parametrize("method", ["mir", "sir", "ato"])
def test_uneven_overlapping_splits_seed_and_reach_the_cold_optimum(method):
    """Catches seeders that assume |R| = |T| or a shared set made of whole folds: ShuffleSplit
    training sets of different sizes overlap arbitrarily between rounds."""
    from sklearn.model_selection import ShuffleSplit

    X, y = synthetic(12, n=90)
    splits = [(train[: 40 + 5 * h], test) for h, (train, test) in
              enumerate(ShuffleSplit(n_splits=4, test_size=0.3, random_state=0).split(X))]
    cold = cross_validate(X, y, 10.0, 0.3, cv=splits, method="cold")
    seeded = cross_validate(X, y, 10.0, 0.3, cv=splits, method=method)
    assert [r.train_size for r in seeded.rounds] == [40, 45, 50, 55]
    for mine, theirs in zip(seeded.rounds, cold.rounds):
        assert mine.objective == pytest.approx(theirs.objective, rel=1e-4)
        assert mine.n_correct == theirs.n_correct
    assert sum(r.seconds.seed for r in seeded.rounds) > 0


@pytest.mark.parametrize("folds, message", [
    ([(np.array([0, 1]), np.array([1, 2]))], "trains on"),
    ([(np.array([0, 1, 1]), np.array([2]))], "twice"),
    ([(np.array([0, 500]), np.array([2]))], "outside"),
    ([(np.array([0.0, 1.0]), np.array([2]))], "integer"),
    ([], "no \\(train, test\\)"),
    (2.5, "integer"),
])
def test_bad_splits_raise_a_clear_error(folds, message):
    """Catches splits used unchecked (a test instance in training, an index out of range)."""
    X, y = synthetic(13)
    with pytest.raises(SolverInputError, match=message):
        cross_validate(X, y, 1.0, 0.2, cv=folds, method="cold")


def test_folds_given_twice_or_not_at_all_are_refused():
    """Catches a silent choice between k and cv."""
    X, y = synthetic(14)
    for kwargs in ({}, {"k": 5, "cv": 5}):
        with pytest.raises(ConfigError, match="exactly one"):
            cross_validate(X, y, 1.0, 0.2, method="cold", **kwargs)


@pytest.mark.parametrize("integer_features", [False, True])
def test_predictions_are_identical_in_every_kernel_mode(integer_features):
    """Catches a Gram-matrix prediction that differs from the double-precision one anywhere:
    a float32 sign kept near zero, or test and support vectors addressed by position in the
    training set instead of by global index (the cache mode recomputes every value from X)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 6)) * 30
    if integer_features:
        X = (rng.random((300, 40)) < 0.1).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=300) * 10 > 0, 1.0, -1.0)
    runs = {mode: cross_validate(X, y, 4.0, 0.05 if integer_features else 1e-4, 5, "sir", seed=2, options=SolverOptions(kernel_mode=mode))
            for mode in ("cache", "shared", "gram")}
    for mode in ("shared", "gram"):
        np.testing.assert_array_equal(runs[mode].predictions, runs["cache"].predictions)
        assert runs[mode].iterations == runs["cache"].iterations


def test_auto_takes_cache_mode_and_its_small_row_cache_through_cross_validate():
    """Catches cross_validate resolving auto without the bit sets (binary data would build the Gram matrix) or
    keeping LibSVM's 100 MB row cache there (the record holds the 32 MB its caches may grow to), and a record that loses the mode the user asked for."""
    rng = np.random.default_rng(5)
    y = np.where(rng.random(90) < 0.5, 1.0, -1.0)
    X = (rng.random((90, 30)) < 0.2 + 0.2 * (y[:, None] > 0)).astype(float)
    result = cross_validate(X, y, 1.0, 0.1, 5, "sir")
    assert (result.kernel_mode, result.cache_mb, result.requested_kernel_mode) == ("cache", 32.0, "auto")
    floats = cross_validate(X + 0.5 * rng.random(X.shape), y, 1.0, 0.1, 5, "sir")
    assert (floats.kernel_mode, floats.cache_mb) == ("gram", 100.0)
