"""Fold assignment for k-fold cross-validation, following LibSVM's ``svm_cross_validation``.

Stratified k-fold (k < n): the instances are grouped by class, each class is shuffled, and fold
i takes the slice ``[i * n_c // k, (i + 1) * n_c // k)`` of every class c, so the class counts
of any two folds differ by at most one. Leave-one-out (k = n): a shuffled order of all
instances, one per fold, as LibSVM does when the number of folds equals the number of instances.
Randomness comes from ``numpy.random.default_rng(seed)`` (LibSVM uses C's ``rand()``), so folds
depend only on the labels, k and the seed.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Sequence

import numpy as np

from ..errors import SolverInputError

LEAVE_ONE_OUT = "loo"


def resolve_k(k: int | str, n: int) -> int:
    """The number of folds: ``k`` itself, or ``n`` for ``"loo"``; checks 2 <= k <= n.

    Parameters
    ----------
    k : int or "loo"
        The folds asked for.
    n : int
        The number of instances.

    Returns
    -------
    int
        The number of folds.
    """
    if k == LEAVE_ONE_OUT:
        k = n
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise SolverInputError(
            f"k must be an integer number of folds or '{LEAVE_ONE_OUT}', not {k!r}"
        )
    if not 2 <= k <= n:
        raise SolverInputError(
            f"k = {k} folds is outside 2 <= k <= n = {n} (the number of instances)"
        )
    return int(k)


def _classes_in_libsvm_order(y: np.ndarray) -> np.ndarray:
    # LibSVM groups classes by first appearance, but puts +1 before -1 in a two-class problem.
    _, first = np.unique(y, return_index=True)
    classes = y[np.sort(first)]
    if len(classes) == 2 and classes[0] == -1 and classes[1] == 1:
        classes = classes[::-1]
    return classes


def stratified_folds(y: np.ndarray, k: int | str, seed: int) -> np.ndarray:
    """Fold (0..k-1) of every instance, by the rule of LibSVM's ``svm_cross_validation``.

    Parameters
    ----------
    y : array-like
        The labels of all instances.
    k : int or "loo"
        The number of folds, or ``"loo"`` for leave-one-out.
    seed : int
        The seed of the shuffles, non-negative.

    Returns
    -------
    ndarray
        int64, the fold of each instance; every fold is non-empty.
    """
    y = np.asarray(y)
    n = len(y)
    k = resolve_k(k, n)
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SolverInputError(f"the seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(seed)
    folds = np.empty(n, dtype=np.int64)
    if k == n:
        folds[rng.permutation(n)] = np.arange(n)
        return folds
    for label in _classes_in_libsvm_order(y):
        members = rng.permutation(np.flatnonzero(y == label))
        bounds = np.arange(k + 1) * len(members) // k
        folds[members] = np.searchsorted(bounds, np.arange(len(members)), side="right") - 1
    sizes = np.bincount(folds, minlength=k)
    if not sizes.all():
        raise SolverInputError(
            f"k = {k} leaves fold {int(np.argmin(sizes))} empty with class counts "
            f"{np.unique(y, return_counts=True)[1].tolist()}; use fewer folds or '{LEAVE_ONE_OUT}'"
        )
    return folds


def stratified_subsample(y: np.ndarray, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` instances drawn without replacement, keeping class proportions.

    Class c gets ``m * n_c / n`` instances rounded down, and the instances still missing go to
    the classes with the largest remainders (ties to the earlier class in LibSVM order).

    Parameters
    ----------
    y : array-like
        The labels of all instances.
    m : int
        The sample's size, 1 <= m <= n.
    seed : int
        The seed of the draws.

    Returns
    -------
    ndarray
        The chosen instances' indices, ascending.
    """
    y = np.asarray(y)
    n = len(y)
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or not 1 <= m <= n:
        raise SolverInputError(f"subsample size {m!r} is outside 1 <= m <= n = {n}")
    classes = _classes_in_libsvm_order(y)
    counts = np.array([np.count_nonzero(y == label) for label in classes])
    quotas = counts * m // n
    remainders = counts * m - quotas * n
    quotas[np.argsort(-remainders, kind="stable")[: m - quotas.sum()]] += 1
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.flatnonzero(y == label), size=quota, replace=False)
        for label, quota in zip(classes, quotas)
    ]
    return np.sort(np.concatenate(chosen))


def folds_sha256(folds: np.ndarray) -> str:
    """sha256 of the fold assignment as little-endian int64, for run records.

    Parameters
    ----------
    folds : ndarray
        The fold of each instance.

    Returns
    -------
    str
        The hex digest.
    """
    return hashlib.sha256(np.ascontiguousarray(folds, dtype="<i8").tobytes()).hexdigest()


CUSTOM = "custom"


class KFoldRounds(Sequence):
    """(train, test) of each round, built when asked.

    Round h tests on fold h and trains on the others in fold order. Kept as one ordering of the
    instances rather than k training sets, which for leave-one-out would take n^2 indices.

    Parameters
    ----------
    folds : ndarray
        The fold (0..k-1) of each instance.
    k : int
        The number of folds.
    """

    def __init__(self, folds: np.ndarray, k: int):
        folds = np.asarray(folds)
        self._order = np.argsort(folds, kind="stable")
        self._bounds = np.concatenate([[0], np.cumsum(np.bincount(folds, minlength=k))])

    def __len__(self) -> int:
        return self._bounds.size - 1

    def __getitem__(self, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Round h's (train, test), built now; a negative h counts from the end."""
        if not -len(self) <= h < len(self):
            raise IndexError(f"round {h} of {len(self)}")
        start, stop = self._bounds[h % len(self)], self._bounds[h % len(self) + 1]
        return np.concatenate([self._order[:start], self._order[stop:]]), self._order[start:stop]

    def trained_on(self) -> np.ndarray:
        """Every instance some round trains on, ascending: all of them, as each fold is left out once."""
        return np.sort(self._order)


def trained_on(rounds) -> np.ndarray:
    """Every instance some round of ``rounds`` trains on, in dataset order.

    These are the instances of the full model (AVG, TOP, full), which then does not depend on
    the order of the rounds.

    Parameters
    ----------
    rounds : KFoldRounds or sequence
        The (train, test) index arrays of each round.

    Returns
    -------
    ndarray
        The instances' indices, ascending.
    """
    if isinstance(rounds, KFoldRounds):
        return rounds.trained_on()
    return np.unique(np.concatenate([train for train, _ in rounds]))


def _index_array(part, n: int, what: str) -> np.ndarray:
    index = np.asarray(part)
    if index.ndim != 1 or (index.size and not np.issubdtype(index.dtype, np.integer)):
        raise SolverInputError(f"{what} must be a 1-D array of integer indices, got {index!r:.80}")
    index = index.astype(np.int64)
    if index.size == 0:
        raise SolverInputError(f"{what} is empty")
    if index.min() < 0 or index.max() >= n:
        raise SolverInputError(f"{what} holds indices outside 0..{n - 1}")
    if np.unique(index).size != index.size:
        raise SolverInputError(f"{what} lists an instance twice")
    return index


def custom_rounds(cv, X, y: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """(folds, rounds) of a scikit-learn splitter or of (train, test) index arrays, in their order.

    Training and test sets may have any sizes but must be disjoint within a round.

    Parameters
    ----------
    cv : splitter or iterable
        A scikit-learn splitter (``cv.split(X, y)``), or an iterable of (train, test) index arrays.
    X : array-like or sparse matrix
        The features, passed to ``cv.split``.
    y : array-like
        The labels of all instances.

    Returns
    -------
    tuple
        ``(folds, rounds)``: the last round (from 0) testing each instance, -1 for an instance
        never tested; and the (train, test) int64 index arrays of each round.
    """
    y = np.asarray(y)
    n = y.shape[0]
    pairs = cv.split(X, y) if hasattr(cv, "split") else cv
    try:
        pairs = list(pairs)
    except TypeError:
        raise SolverInputError(
            f"folds must be an integer k, '{LEAVE_ONE_OUT}', a scikit-learn splitter or an "
            f"iterable of (train, test) index arrays; got {cv!r:.80}"
        ) from None
    if not pairs:
        raise SolverInputError("the splitter produced no (train, test) split")
    folds = np.full(n, -1, dtype=np.int64)
    rounds = []
    for h, pair in enumerate(pairs):
        if len(pair) != 2:
            raise SolverInputError(f"split {h} is not a (train, test) pair")
        train = _index_array(pair[0], n, f"the training set of split {h}")
        test = _index_array(pair[1], n, f"the test set of split {h}")
        if np.intersect1d(train, test).size:
            raise SolverInputError(f"split {h} tests on instances it trains on")
        folds[test] = h
        rounds.append((train, test))
    return folds, rounds
