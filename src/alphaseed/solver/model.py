"""A trained model: its support vectors and decision values."""

from __future__ import annotations

import numpy as np

from ..errors import SolverInputError
from ..kernel import KernelMatrix, blas_dots_are_exact, dense_features, kernel_cross_times, squared_norms
from .options import SolverOptions
from .training import SolveResult, check_labels, solve


def support_coefficients(y, train_index, alpha) -> tuple[np.ndarray, np.ndarray]:
    """The support vectors of a solution and their dual coefficients.

    Parameters
    ----------
    y : array-like
        The labels (-1 or +1) of all instances.
    train_index : array-like of int
        The training instances (global indices).
    alpha : ndarray
        The solution, aligned with ``train_index``.

    Returns
    -------
    tuple of ndarray
        (global indices of the support vectors, y_j alpha_j of each).
    """
    train_index = np.asarray(train_index, dtype=np.int64)
    sv = alpha > 0
    return train_index[sv], (np.asarray(y, dtype=np.float64)[train_index] * alpha)[sv]


def decision_values(kernel: KernelMatrix, y, train_index, alpha, rho, test_index) -> np.ndarray:
    """sum_j y_j alpha_j K(x_j, x_t) - rho for each test instance, K in double precision.

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel over training and test instances alike.
    y : array-like
        Labels of the whole dataset, -1 or +1.
    train_index : array-like of int
        The instances (global indices) the solution was trained on.
    alpha : ndarray
        Their alphas, aligned with ``train_index``.
    rho : float
        The solution's rho.
    test_index : array-like of int
        The test instances (global indices).

    Returns
    -------
    ndarray
        The decision value of each test instance.
    """
    support, coef = support_coefficients(y, train_index, alpha)
    return kernel.times_float64(test_index, support, coef) - rho


class SVMModel:
    """A trained C-SVC: its support vectors, dual coefficients and rho, as LibSVM keeps them.

    Parameters
    ----------
    support_vectors : ndarray
        The support vectors' features (dense rows).
    dual_coef : ndarray
        y_i alpha_i of each support vector.
    alpha : ndarray
        Every training instance's alpha.
    rho : float
        LibSVM's rho: the decision value is sum_i y_i alpha_i K(x_i, x) - rho.
    gamma : float
        The Gaussian kernel's gamma.
    result : SolveResult
        The training run, whose figures (iterations, objective, ...) the model keeps.
    """

    def __init__(self, support_vectors, dual_coef, alpha, rho, gamma, result: SolveResult):
        self.support_vectors = support_vectors
        self.dual_coef = dual_coef  # y_i * alpha_i of each support vector
        self.alpha = alpha
        self.rho = rho
        self.gamma = gamma
        self.iterations = result.iterations
        self.objective = result.objective
        self.iteration_cap_hit = result.iteration_cap_hit
        self.n_sv = result.n_sv
        self.n_bounded_sv = result.n_bounded_sv
        self.solve_result = result
        self._sv_sqnorm = squared_norms(support_vectors)

    def decision_function(self, X) -> np.ndarray:
        """The decision value sum_i y_i alpha_i K(x_i, x) - rho of each row x of ``X``.

        K is in double precision, as LibSVM's svm_predict computes it.

        Parameters
        ----------
        X : array-like or sparse matrix
            The instances, one row each, with the training data's features.

        Returns
        -------
        ndarray
            The decision value of each row.
        """
        Xd = dense_features(X)
        if Xd.shape[1] != self.support_vectors.shape[1]:
            raise SolverInputError(
                f"X has {Xd.shape[1]} features, the model was trained on "
                f"{self.support_vectors.shape[1]}"
            )
        return kernel_cross_times(Xd, squared_norms(Xd), self.support_vectors, self._sv_sqnorm,
                                  self.gamma, self.dual_coef,
                                  blas_dots_are_exact(Xd, self.support_vectors)) - self.rho

    def predict(self, X) -> np.ndarray:
        """+1 or -1 for each row of ``X``, by LibSVM's rule: +1 where the decision value is > 0.

        Parameters
        ----------
        X : array-like or sparse matrix
            Rows to label.
        """
        return np.where(self.decision_function(X) > 0, 1, -1)


def train_svm(X, y, C: float, gamma: float, *, alpha0=None,
              options: SolverOptions = SolverOptions()) -> SVMModel:
    """Train a C-SVC with the Gaussian kernel K(x, z) = exp(-gamma ||x - z||^2).

    Parameters
    ----------
    X : array-like or sparse matrix
        The training instances, one row each (dense, or sparse: densified).
    y : array-like
        Their labels, -1 or +1.
    C : float
        The penalty, the bound on every alpha.
    gamma : float
        The width of the kernel: larger is narrower.
    alpha0 : ndarray, optional
        A feasible start (``solve``'s); zero if None.
    options : SolverOptions
        The solver's settings.

    Returns
    -------
    SVMModel
    """
    km = KernelMatrix(X, gamma, mode=options.kernel_mode)
    y = check_labels(y)
    if y.size != km.n:
        raise SolverInputError(f"X has {km.n} rows but y has {y.size} labels")
    result = solve(km, y, np.arange(km.n), C, alpha0=alpha0, options=options)
    sv = result.alpha > 0
    return SVMModel(km.X[sv], (y * result.alpha)[sv], result.alpha, result.rho, km.gamma, result)
