"""Kernel facts of a dataset: how close its Gaussian kernel is to the identity, and the class
counts of its k-fold training sets, which the published reproduction reads to explain the
paper's majority-class accuracies and seeded iterations (``alphaseed kernel-facts``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..cv import KFoldRounds, folds_sha256, stratified_folds
from ..errors import AlphaseedError
from ..kernel import blas_dots, dense_features, squared_norms

# Rows of the kernel computed at a time (rows x n float64 values) when looking for the nearest pair.
KERNEL_BLOCK_ROWS = 1024


class KernelFactsError(AlphaseedError, ValueError):
    """Raised when a kernel facts file cannot be read or is not JSON."""


def kernel_facts(X, y, gamma: float) -> dict:
    """How close the Gaussian kernel of (X, gamma) is to the identity matrix.

    The largest off-diagonal value is exp(-gamma * d2) of the nearest pair of distinct indices,
    stored in float32 as the solver stores it (0 when the nearest pair is too far for float32);
    distances are ||x||^2 + ||z||^2 - 2 x.z in float64, as in the solver. The kernel is computed
    ``KERNEL_BLOCK_ROWS`` rows at a time, never as the whole n x n matrix.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The features.
    y : array_like
        The labels, for the majority class.
    gamma : float
        The Gaussian kernel's gamma.

    Returns
    -------
    dict
        ``n``, ``gamma``, ``nearest_squared_distance``, ``largest_off_diagonal``, ``mean_off_diagonal``
        (over the n (n - 1) off-diagonal values), ``duplicate_pairs`` (at distance 0),
        ``majority_share`` and ``majority_label``.
    """
    X = dense_features(X)
    sqnorm = squared_norms(X)
    n = X.shape[0]
    nearest, total, duplicates = np.inf, 0.0, 0
    for start in range(0, n, KERNEL_BLOCK_ROWS):
        rows = np.arange(start, min(n, start + KERNEL_BLOCK_ROWS))
        d2 = np.maximum(sqnorm[rows, None] + sqnorm[None, :] - 2.0 * blas_dots(X[rows], X), 0.0)
        d2[np.arange(rows.size), rows] = np.inf
        nearest = min(nearest, float(d2.min()))
        duplicates += int(np.count_nonzero(d2 == 0.0))
        total += float(np.exp(-gamma * d2).astype(np.float32).sum(dtype=np.float64))
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return {
        "n": int(n),
        "gamma": float(gamma),
        "nearest_squared_distance": nearest,
        "largest_off_diagonal": float(np.float32(np.exp(-gamma * nearest))),
        "mean_off_diagonal": total / max(n * (n - 1), 1),
        "duplicate_pairs": duplicates // 2,
        "majority_share": float(counts.max() / n) if n else 0.0,
        "majority_label": int(labels[counts.argmax()]) if n else 0,
    }


def training_class_counts(y, k: int, seed: int) -> dict:
    """The positives and size of each k-fold training set under the runs' folds (``stratified_folds`` with
    ``seed``), with the folds' sha256 so that a run's summary can be matched to them.

    Parameters
    ----------
    y : array_like
        The labels, +1/-1.
    k : int
        The number of folds.
    seed : int
        The folds' seed, the runs' own.

    Returns
    -------
    dict
        ``k``, ``seed``, ``folds_sha256``, and per round ``train_positive`` and ``train_size``.
    """
    y = np.asarray(y)
    folds = stratified_folds(y, k, seed)
    rounds = KFoldRounds(folds, k)
    return {"k": k, "seed": seed, "folds_sha256": folds_sha256(folds),
            "train_positive": [int(np.count_nonzero(y[train] > 0)) for train, _ in rounds],
            "train_size": [int(train.size) for train, _ in rounds]}


def read_kernel_facts(folder: Path) -> dict[str, dict]:
    """The kernel facts of each dataset, ``{dataset}.json`` in ``folder`` (none if it is missing).

    Parameters
    ----------
    folder : Path
        The folder ``alphaseed kernel-facts`` wrote to.

    Returns
    -------
    dict of str to dict
        Dataset name to its facts.

    Raises
    ------
    KernelFactsError
        If a file cannot be read or is not valid JSON.
    """
    if not folder.is_dir():
        return {}
    facts = {}
    for path in sorted(folder.glob("*.json")):
        try:
            facts[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise KernelFactsError(f"kernel facts {path} are unreadable: {error}") from None
    return facts
