"""LibSVM's one-vs-one: one binary C-SVC per pair of classes, merged into one model.

Classes are the sorted labels (``classes_``), coded 0..n-1. The pair (i, j), i < j, trains on
the instances of class i (LibSVM's +1) followed by those of class j (-1), each in data order, as
LibSVM's svm_train gives them to its solver. The merged model keeps, as LibSVM and scikit-learn
do, every instance that is a support vector of any pair, grouped by class, and a coefficient
matrix of n_classes - 1 rows: in pair (i, j) a support vector of class i has its y alpha in row
j - 1, one of class j in row i. A test instance gets one decision value per pair (positive towards
class i), and each pair votes; the first class with the most votes wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverInputError
from ..kernel import (
    dense_features,
    kernel_cross_times,
    squared_norms,
)
from ..solver import SolveResult


def class_pairs(n_classes: int) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, in LibSVM's order: (0, 1), (0, 2), ..., (1, 2), ...

    Parameters
    ----------
    n_classes : int
        The number of classes.

    Returns
    -------
    list of tuple
        One (i, j) per pair.
    """
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def pair_problem(codes: np.ndarray, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """The training set of the pair (i, j) and its labels.

    Parameters
    ----------
    codes : ndarray
        Every instance's class code.
    i, j : int
        The pair's classes, i < j.

    Returns
    -------
    tuple of ndarray
        ``(index, y)``: the instances of class i then of class j (global indices, data order),
        and a label per instance of the whole dataset, +1 for class i and -1 otherwise (only
        ``y[index]`` is read).
    """
    index = np.concatenate([np.flatnonzero(codes == i), np.flatnonzero(codes == j)])
    return index, np.where(codes == i, 1.0, -1.0)


def grouped_by_class(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The instances grouped by class, each class in data order: ``(order, moved_to)``, the data's
    index of each grouped position and the grouped position of each instance.

    A pair of classes then reads each row of a Gram matrix over the grouped data in two runs of
    columns (see ``kernel.row_source._gathered``) instead of across the whole row; a training set
    moved by ``moved_to`` lists the same instances in the same order, so every kernel value and
    every solver's order stay the same.

    Parameters
    ----------
    codes : ndarray
        Every instance's class code.

    Returns
    -------
    tuple of ndarray
    """
    order = np.argsort(codes, kind="stable")
    moved_to = np.empty_like(order)
    moved_to[order] = np.arange(order.size)
    return order, moved_to


@dataclass
class PairwiseModel:
    """The merged one-vs-one model in LibSVM's layout.

    Parameters
    ----------
    support : ndarray
        The support vectors' indices in the training data, grouped by class.
    n_support : ndarray
        The number of support vectors of each class.
    sv_coef : ndarray
        LibSVM's coefficients, (n_classes - 1, n_support_vectors), see the module docstring.
    rho : ndarray
        Each pair's rho: its decision value is sum y alpha K - rho.
    """

    support: np.ndarray
    n_support: np.ndarray
    sv_coef: np.ndarray
    rho: np.ndarray

    def pair_weights(self) -> np.ndarray:
        """Each pair's y alpha over all support vectors, one column per pair (zero off the pair).

        Returns
        -------
        ndarray
            (n_support_vectors, n_pairs).
        """
        n_classes = self.n_support.size
        starts = np.concatenate([[0], np.cumsum(self.n_support)])
        weights = np.zeros((self.support.size, len(self.rho)))
        for p, (i, j) in enumerate(class_pairs(n_classes)):
            of_i, of_j = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
            weights[of_i, p] = self.sv_coef[j - 1, of_i]
            weights[of_j, p] = self.sv_coef[i, of_j]
        return weights


def merge_pairs(codes: np.ndarray, n_classes: int, solutions: list[tuple[np.ndarray, np.ndarray, SolveResult]]
                ) -> PairwiseModel:
    """The merged model of the pairs' solutions.

    Parameters
    ----------
    codes : ndarray
        Every training instance's class code.
    n_classes : int
        The number of classes.
    solutions : list of tuple
        ``(index, y, SolveResult)`` of each pair in ``class_pairs`` order, as ``pair_problem``
        gave its index and labels.

    Returns
    -------
    PairwiseModel
    """
    is_support = np.zeros(codes.size, dtype=bool)
    for index, _, result in solutions:
        is_support[index[result.alpha > 0]] = True
    by_class = [np.flatnonzero(is_support & (codes == c)) for c in range(n_classes)]
    support = np.concatenate(by_class).astype(np.int32)
    position = np.full(codes.size, -1)
    position[support] = np.arange(support.size)
    sv_coef = np.zeros((n_classes - 1, support.size))
    for (i, j), (index, y, result) in zip(class_pairs(n_classes), solutions):
        sv = index[result.alpha > 0]
        coef = y[sv] * result.alpha[result.alpha > 0]
        of_i = codes[sv] == i
        sv_coef[j - 1, position[sv[of_i]]] = coef[of_i]
        sv_coef[i, position[sv[~of_i]]] = coef[~of_i]
    return PairwiseModel(support, np.array([c.size for c in by_class], dtype=np.int32), sv_coef,
                         np.array([result.rho for _, _, result in solutions]))


class PairwisePredictor:
    """Decision values of a merged model: the kernel between rows and support vectors, once.

    Parameters
    ----------
    support_vectors : ndarray
        The support vectors' rows, dense.
    weights : ndarray
        ``PairwiseModel.pair_weights()``.
    rho : ndarray
        Each pair's rho.
    gamma : float
        The Gaussian kernel's gamma.
    """

    def __init__(self, support_vectors, weights, rho, gamma):
        self.support_vectors = support_vectors
        self.weights = weights
        self.rho = rho
        self.gamma = gamma
        self._sv_sqnorm = squared_norms(support_vectors)

    def decision_values(self, X) -> np.ndarray:
        """LibSVM's decision value of each pair for each row, positive towards the pair's class i.

        The kernel is in double precision, as LibSVM's svm_predict computes it.

        Parameters
        ----------
        X : array-like or sparse matrix
            The instances, with the training data's features.

        Returns
        -------
        ndarray
            (n_rows, n_pairs).
        """
        Xd = dense_features(X)
        if Xd.shape[1] != self.support_vectors.shape[1]:
            raise SolverInputError(f"X has {Xd.shape[1]} features, the model was trained on "
                                   f"{self.support_vectors.shape[1]}")
        # Dot products from BLAS even where its order of summation changes their last bits: a
        # prediction feeds no solver, and the float64 distances keep LibSVM's values to ~1e-15.
        return kernel_cross_times(Xd, squared_norms(Xd), self.support_vectors, self._sv_sqnorm,
                                  self.gamma, self.weights, use_blas=True) - self.rho


def vote(decision: np.ndarray, n_classes: int) -> np.ndarray:
    """LibSVM's prediction from the pairs' decision values: each pair votes for its class i where
    its value is > 0, else for j; the first class with the most votes wins.

    Parameters
    ----------
    decision : ndarray
        (n_rows, n_pairs) decision values.
    n_classes : int
        The number of classes.

    Returns
    -------
    ndarray
        The class code of each row.
    """
    votes = np.zeros((decision.shape[0], n_classes), dtype=np.int64)
    for p, (i, j) in enumerate(class_pairs(n_classes)):
        towards_i = decision[:, p] > 0
        votes[:, i] += towards_i
        votes[:, j] += ~towards_i
    return np.argmax(votes, axis=1)
