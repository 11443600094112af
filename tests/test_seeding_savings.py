"""The seeders save SMO iterations, with the cold start's predictions (issue 14, item 3).

Generated problems (scikit-learn, fixed seeds) run without the dataset mirror: SIR, MIR and
FULL at k = 10, AVG and TOP at leave-one-out over the first LOO_ROUNDS rounds. The kernels are
informative (``test_generated_problems_are_informative``) and a fair share of the alphas are
free, so the seeds have something to carry over. Iteration counts are deterministic (the solver
follows LibSVM step for step), so the margins below are not flaky; they sit well under the
measured ratios (k = 10: 0.74 to 0.87 of cold; LOO: 0.06 to 0.11).

Predictions: a seeded round stops at another eps-optimal point than the cold one, so a
borderline test instance could in principle flip; on these fixed problems none does, and the
tests require identical predictions (a seeder that lands elsewhere would show up here).
With the mirror, the same on Heart, Madelon and an Adult sample.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_gaussian_quantiles, make_moons

from alphaseed import cross_validate
from alphaseed.cv import stratified_subsample

LOO_ROUNDS = 40
KFOLD_MARGIN = 0.95  # seeded iterations at most this share of cold's at k = 10
LOO_MARGIN = 0.5     # and at leave-one-out


def plus_minus(X, y):
    return X, np.where(y > 0, 1.0, -1.0)


# name -> (X, y, C, gamma)
GENERATED = {
    "classification": lambda: (*plus_minus(*make_classification(
        n_samples=1000, n_features=10, n_informative=5, flip_y=0.05, random_state=0)), 1.0, 0.1),
    "quantiles": lambda: (*plus_minus(*make_gaussian_quantiles(
        n_samples=1000, n_features=4, n_classes=2, random_state=0)), 1.0, 1.0),
    "moons": lambda: (*plus_minus(*make_moons(n_samples=600, noise=0.25, random_state=0)), 1.0, 5.0),
}


@functools.cache
def run(name: str, k, method: str):
    X, y, C, gamma = GENERATED[name]()
    return cross_validate(X, y, C, gamma, k, method, max_rounds=LOO_ROUNDS if k == "loo" else None)


def assert_saves_iterations(seeded, cold, margin):
    assert seeded.rounds_run == cold.rounds_run
    assert seeded.iterations <= margin * cold.iterations, (seeded.iterations, cold.iterations)
    np.testing.assert_array_equal(seeded.predictions, cold.predictions)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_problems_are_informative(name):
    """Catches a problem on which any seed looks good or none can: a kernel close to the
    identity (every instance its own SV) or to all ones, or almost no free SVs to carry."""
    X, y, C, gamma = GENERATED[name]()
    cold = run(name, 10, "cold")
    free = np.mean([(r.n_sv - r.n_bounded_sv) / r.train_size for r in cold.rounds])
    sv = np.mean([r.n_sv / r.train_size for r in cold.rounds])
    assert free >= 0.05 and sv <= 0.7, (free, sv)
    assert 80.0 <= cold.accuracy < 100.0


@pytest.mark.parametrize("method", ["sir", "mir"])
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_kfold_seeders_save_iterations_on_generated_problems(name, method):
    """Catches a k-fold seeder whose seed is no better than the cold start (zeros, alpha_T left
    at 0, R's alphas handed to the wrong instances, a sign error undone by AdjustAlpha's
    fallback) or that moves the solver to other predictions."""
    assert_saves_iterations(run(name, 10, method), run(name, 10, "cold"), KFOLD_MARGIN)


@pytest.mark.parametrize("method", ["avg", "top"])
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_leave_one_out_seeders_save_iterations_on_generated_problems(name, method):
    """Catches AVG or TOP throwing the full model away (seed 0), or moving y_t alpha_t so
    badly that SMO must redo most of the work."""
    assert_saves_iterations(run(name, "loo", method), run(name, "loo", "cold"), LOO_MARGIN)


FULL_MARGIN = 0.9      # FULL's iterations, the full model's included, at most this share of cold's
FULL_ROUNDS_MARGIN = 0.75  # and its rounds' alone


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_full_model_seeder_saves_iterations_on_generated_problems(name):
    """Catches FULL throwing the full model away (seed 0: its rounds cost cold's and the full
    model comes on top), not counting the full model's iterations in the total, or a seed so far
    from the round's optimum that the full model no longer pays (measured 0.72 to 0.81 of cold
    with the full model, 0.62 to 0.70 without)."""
    full, cold = run(name, 10, "full"), run(name, 10, "cold")
    rounds = sum(r.iterations for r in full.rounds)
    assert full.iterations == rounds + full.iterations_full_model > rounds
    assert rounds <= FULL_ROUNDS_MARGIN * cold.iterations, (rounds, cold.iterations)
    assert_saves_iterations(full, cold, FULL_MARGIN)


def test_full_model_rounds_do_not_depend_on_each_other():
    """Catches FULL chaining its rounds after all (seeding round h from round h - 1, or the full
    model changed by a round): run in reverse order, every round takes the same iterations and
    ends at the same objective."""
    X, y, C, gamma = GENERATED["moons"]()
    folds = run("moons", 10, "cold").folds
    splits = [(np.flatnonzero(folds != h), np.flatnonzero(folds == h)) for h in range(10)]
    forward = cross_validate(X, y, C, gamma, cv=splits, method="full")
    backward = cross_validate(X, y, C, gamma, cv=splits[::-1], method="full")
    assert [r.iterations for r in backward.rounds[::-1]] == [r.iterations for r in forward.rounds]
    assert [r.objective for r in backward.rounds[::-1]] == [r.objective for r in forward.rounds]
    np.testing.assert_array_equal(backward.predictions, forward.predictions)


# --- The paper's datasets (the mirror) -------------------------------------------------------

PAPER_SETTINGS = {"heart": (2182.0, 0.2), "madelon": (1.0, 0.7071), "adult": (100.0, 0.5)}
ADULT_SAMPLE = 1500


def paper_problem(real_dataset, name):
    X, y = real_dataset(name)
    if name == "adult":
        keep = stratified_subsample(y, ADULT_SAMPLE, seed=0)
        X, y = X[keep], y[keep]
    return X, y, *PAPER_SETTINGS[name]


@pytest.mark.mirror
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAPER_SETTINGS))
def test_seeders_save_iterations_on_the_paper_datasets(real_dataset, name):
    """Catches a seeder that helps on generated data only: SIR, MIR and FULL (the full model's
    iterations included) at k = 10, AVG and TOP
    over the first leave-one-out rounds, on Heart, Madelon and an Adult sample, must take fewer
    iterations than cold and reach the same accuracy (the paper's Table 1 and Figure 2)."""
    X, y, C, gamma = paper_problem(real_dataset, name)
    for k, methods, max_rounds in ((10, ("sir", "mir", "full"), None),
                                   ("loo", ("avg", "top"), LOO_ROUNDS)):
        cold = cross_validate(X, y, C, gamma, k, "cold", max_rounds=max_rounds)
        for method in methods:
            seeded = cross_validate(X, y, C, gamma, k, method, max_rounds=max_rounds)
            assert seeded.iterations < cold.iterations, (k, method, seeded.iterations, cold.iterations)
            assert seeded.accuracy == cold.accuracy, (k, method)
