"""One round of cross-validation: seed, solve, predict. ``cross_validate``, the grid search and
``SVC``'s Platt scaling run their rounds through ``run_round``."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..kernel import KernelMatrix
from ..seeding import seed_context
from ..solver import SolveResult, SolverOptions, solve, support_coefficients


@dataclass
class RoundSeconds:
    """Where a round's time went (the paper's Table 1 split).

    Parameters
    ----------
    seed : float
        Building the seed (the paper's ``init``).
    gradient_init : float
        The solver's gradient at its start, initialised or carried over.
    train : float
        The rest of the solver's run.
    predict : float
        Predicting the test fold.
    """

    seed: float = 0.0
    gradient_init: float = 0.0
    train: float = 0.0
    predict: float = 0.0

    @property
    def rest(self) -> float:
        """Everything but the seed: the paper's ``rest``."""
        return self.gradient_init + self.train + self.predict

    @property
    def total(self) -> float:
        """The round's seconds."""
        return self.seed + self.rest


@dataclass
class Round:
    """What ``run_round`` leaves.

    Parameters
    ----------
    solution : SolveResult
        The solver's solution on the training set.
    predicted : ndarray or None
        The test set's predicted labels (int8, +-1, LibSVM's rule); None where ``run_round`` was
        asked not to predict.
    seconds : RoundSeconds
        Where the round's time went.
    decision_values : ndarray or None
        The test set's decision values, where ``run_round`` was asked for them.
    """

    solution: SolveResult
    predicted: np.ndarray
    seconds: RoundSeconds
    decision_values: np.ndarray | None = None


def run_round(kernel: KernelMatrix, y: np.ndarray, split: tuple, C, *, options: SolverOptions,
              seeder=None, previous: tuple | None = None, start: tuple | None = None,
              decision_values: bool = False, predict: bool = True) -> Round:
    """Train on one split's training set and predict its test set.

    Parameters
    ----------
    kernel : KernelMatrix
        The dataset's kernel, which every round of a cross-validation shares.
    y : ndarray
        Every instance's label, -1 or +1, indexed as the kernel's rows.
    split : tuple
        ``(train, test)``: global indices, the training set in the solver's order.
    C : float or tuple of float
        The penalty, or the pair (C of +1, C of -1) of class weights.
    options : SolverOptions
        The solver's settings.
    seeder : callable, optional
        ``SeedContext -> alpha`` (``alphaseed.seeding.SEEDERS``); with ``previous`` it seeds
        the round, and the gradient is carried over from ``previous``.
    previous : tuple, optional
        ``(its training index, its SolveResult)``: the solution the seed is built from.
    start : tuple, optional
        ``(alpha0, (G, G_bar))``, a start known already (the grid search's along C); it
        replaces the seeder.
    decision_values : bool, default False
        Keep the test set's decision values (in double precision; Platt scaling fits them), not
        only their signs.
    predict : bool, default True
        Predict the test set; False leaves that to the caller (the grid search predicts a test
        fold's pairs of classes together, ``KernelMatrix.decision_signs``).

    Returns
    -------
    Round
        The solution, the test set's predicted labels and the round's seconds.
    """
    train, test = split
    seconds = RoundSeconds()
    alpha0 = gradient0 = carry_from = None
    if start is not None:
        alpha0, gradient0 = start
    elif seeder is not None and previous is not None:
        clock = time.perf_counter()
        alpha0 = seeder(seed_context(kernel, y, C, previous, train))
        seconds.seed = time.perf_counter() - clock
        carry_from = previous
    clock = time.perf_counter()
    solution = solve(kernel, y, train, C, alpha0=alpha0, previous=carry_from, gradient0=gradient0,
                     options=options)
    # The solver times its own gradient initialisation (the carry-over included); the rest of
    # the call is training, so the round's figures cover the whole call, as svm_train's time
    # does for LibSVM.
    seconds.gradient_init = solution.seconds_gradient_init
    seconds.train = time.perf_counter() - clock - solution.seconds_gradient_init
    if not predict:
        return Round(solution, None, seconds)
    clock = time.perf_counter()
    support, coef = support_coefficients(y, train, solution.alpha)
    if decision_values:
        values = kernel.times_float64(test, support, coef) - solution.rho
        predicted = np.where(values > 0, 1, -1).astype(np.int8)
    else:
        values, predicted = None, kernel.decision_signs(test, [(support, coef, solution.rho)])[:, 0]
    seconds.predict = time.perf_counter() - clock
    return Round(solution, predicted, seconds, values)
