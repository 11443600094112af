"""Numerical edge cases, each tiny, against the real LibSVM: duplicated instances with opposite
labels, all-zero features, gamma so large that K = I and so small that K is all ones, C from 1e-6
to 1e6. Our solver must terminate, the seeders' warm starts must be feasible (the solver refuses
an infeasible one), and every round must match LibSVM's objective and predictions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from alphaseed.cv import cross_validate


def blobs(n: int = 24, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + 0.7 * y[:, None]
    return X, y


def opposite_duplicates():
    X, y = blobs()
    X[1::2][:6] = X[0::2][:6]  # six +1 instances have a -1 twin at the same point
    return X, y


def wide_noise(n: int = 400, seed: int = 0):
    """madelon_scale's regime: 500 noise features in [-1, 1] and gamma = C = 2^-5 leave the kernel
    near 0 off the diagonal and every alpha at C, so rho is the middle of an interval."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, size=(n, 500)), np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def all_zero_features():
    X, y = blobs()
    return np.zeros_like(X), y


CASES = {
    "opposite duplicates": (opposite_duplicates, 1.0, 0.5),
    "all-zero features": (all_zero_features, 1.0, 0.5),
    "gamma so large K = I": (blobs, 1.0, 1e6),
    "gamma so small K = 1": (blobs, 1.0, 1e-12),
    "C = 1e-6": (blobs, 1e-6, 0.5),
    "C = 1e-3": (blobs, 1e-3, 0.5),
    "C = 1e3": (blobs, 1e3, 0.5),
    "C = 1e6": (blobs, 1e6, 0.5),
    "C = 1e6, opposite duplicates": (opposite_duplicates, 1e6, 0.5),
    "every alpha at C, kernel near the identity": (wide_noise, 2.0**-5, 2.0**-5),
}


# Every instance is the same point to the kernel: the decision function is the constant -rho and
# any rho between LibSVM's bounds is optimal, so a warm start may end on another rho with the
# same objective; only the cold start, which follows LibSVM's path, must give its predictions.
CONSTANT_KERNEL = {"all-zero features", "gamma so small K = 1"}


def objectives_close(ours, theirs) -> bool:
    return abs(ours - theirs) <= max(1e-6, 1e-4 * abs(theirs))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("method", ["cold", "ato", "mir", "sir"])
def test_edge_case_terminates_stays_feasible_and_matches_libsvm(case, method):
    """Catches the solver looping or diverging, or a seeder producing an infeasible or NaN seed,
    on degenerate kernels and extreme C; every round must reach LibSVM's objective. Any
    feasible seed passes, so this does not check the seeders' formulas (test_naive_twins does).
    The predictions catch an alpha left an ulp inside its bound counted as free, which alone sets
    rho where every other alpha is at C (MIR's rounds did on the near-identity kernel)."""
    make, C, gamma = CASES[case]
    X, y = make()
    X = sp.csr_matrix(X)
    reference = cross_validate(X, y, C, gamma, 4, "libsvm", seed=1)
    ours = cross_validate(X, y, C, gamma, 4, method, seed=1)
    assert not ours.iteration_cap_hit
    for mine, theirs in zip(ours.rounds, reference.rounds, strict=True):
        assert objectives_close(mine.objective, theirs.objective), (mine.round, mine, theirs)
    if method == "cold" or case not in CONSTANT_KERNEL:
        np.testing.assert_array_equal(ours.predictions, reference.predictions)
