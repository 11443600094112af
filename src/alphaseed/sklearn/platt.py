"""Probabilities from decision values, as LibSVM's ``-b 1`` gives them (Platt scaling).

Each pair of classes gets a sigmoid P(class i | x, i or j) = 1 / (1 + exp(A f(x) + B)), fitted
to decision values of instances that no model saw in training: those of a 5-fold cross-validation of the
pair's problem (LibSVM's folds, contiguous blocks of a random permutation). That cross-validation
is exactly the work alpha seeding speeds up, so here it runs as a chain of seeded rounds (SIR:
round h + 1 starts from round h's solution). The fit is Platt's with Lin, Lin and Weng's targets
(the labels smoothed by the class counts, a prior against overfitting the sigmoid), solved by a
Newton method. More than two classes are coupled into one distribution per instance by Wu, Lin
and Weng's second method (LibSVM's ``multiclass_probability``), here solved exactly.
"""

from __future__ import annotations

import numpy as np

from ..cv import run_round
from ..kernel import KernelMatrix
from ..seeding import SEEDERS
from ..solver import SolverOptions
from .one_vs_one import class_pairs

PLATT_FOLDS = 5
# LibSVM's clip of each pair's probability, which keeps the coupling's system regular.
MIN_PROBABILITY = 1e-7
PLATT_SEEDER = "sir"
SIGMOID_MAX_NEWTON_STEPS = 100
SIGMOID_GRADIENT_TOLERANCE = 1e-5


def platt_splits(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """LibSVM's folds for Platt scaling: a random permutation cut into five contiguous blocks.

    Parameters
    ----------
    n : int
        The number of instances.
    rng : numpy.random.RandomState or numpy.random.Generator
        The permutation's source (``SVC`` passes ``check_random_state(random_state)``, one
        permutation per pair of classes in turn).

    Returns
    -------
    list of tuple
        ``(train, test)`` positions 0..n-1 of each fold: the fold's block, and the rest in the
        permutation's order, as LibSVM builds its training sets.
    """
    order = rng.permutation(n)
    bounds = [h * n // PLATT_FOLDS for h in range(PLATT_FOLDS + 1)]
    return [(np.concatenate([order[:begin], order[end:]]), order[begin:end])
            for begin, end in zip(bounds[:-1], bounds[1:])]


def held_out_decision_values(kernel: KernelMatrix, y: np.ndarray, index: np.ndarray, C,
                             splits: list, *, options: SolverOptions) -> np.ndarray:
    """Each instance's decision value from the round that held it out, the rounds seeded in turn.

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel over the data.
    y : ndarray
        Every instance's label, -1 or +1 (only ``y[index]`` is read).
    index : ndarray
        The problem's instances (global indices).
    C : float or tuple of float
        The penalty, or the pair (C of +1, C of -1) of class weights.
    splits : list of tuple
        ``(train, test)`` positions into ``index`` (``platt_splits``).
    options : SolverOptions
        The solver's settings.

    Returns
    -------
    ndarray
        One decision value per instance of ``index``, positive towards +1. A round whose
        training set has one class gives its test set +1 or -1, as LibSVM does.
    """
    values = np.zeros(index.size)
    previous = None
    for train, test in splits:
        if test.size == 0:   # fewer instances than folds: this fold holds none out
            continue
        train_index, test_index = index[train], index[test]
        labels = np.unique(y[train_index])
        if labels.size < 2:
            values[test] = labels[0] if labels.size else 0.0
            previous = None
            continue
        done = run_round(kernel, y, (train_index, test_index), C, options=options,
                         seeder=SEEDERS[PLATT_SEEDER], previous=previous, decision_values=True)
        values[test] = done.decision_values
        previous = (train_index, done.solution)
    return values


def fit_sigmoid(decision: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """Platt's (A, B), with P(+1 | f) = 1 / (1 + exp(A f + B)), by Newton's method.

    The targets are Lin, Lin and Weng's: (N+ + 1) / (N+ + 2) for the positive instances and
    1 / (N- + 2) for the negative ones; the loss is their cross-entropy, convex in (A, B). Newton
    steps halve until the loss falls enough (Armijo), from LibSVM's start, until the gradient is
    below LibSVM's 1e-5; a two-variable problem, so no general optimiser's overhead.

    Parameters
    ----------
    decision : ndarray
        Held-out decision values.
    positive : ndarray of bool
        Whether each instance is of the +1 class.

    Returns
    -------
    tuple of float
        (A, B).
    """
    n_positive = np.count_nonzero(positive)
    n_negative = positive.size - n_positive
    target = np.where(positive, (n_positive + 1.0) / (n_positive + 2.0), 1.0 / (n_negative + 2.0))
    design = np.column_stack([decision, np.ones_like(decision)])

    def loss(ab):
        z = design @ ab
        # -log P(+1) = log(1 + e^z), -log P(-1) = log(1 + e^z) - z.
        return float(np.sum(np.logaddexp(0.0, z) - (1.0 - target) * z))

    ab = np.array([0.0, np.log((n_negative + 1.0) / (n_positive + 1.0))])
    current = loss(ab)
    for _ in range(SIGMOID_MAX_NEWTON_STEPS):
        p = _probability(design @ ab)
        gradient = design.T @ (target - p)
        if np.max(np.abs(gradient)) < SIGMOID_GRADIENT_TOLERANCE:
            break
        # LibSVM's 1e-12 on the diagonal keeps the Hessian invertible where all p are 0 or 1.
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design + 1e-12 * np.eye(2)
        step = -np.linalg.solve(hessian, gradient)
        size = 1.0
        while size >= 1e-10:
            trial = ab + size * step
            trial_loss = loss(trial)
            if trial_loss < current + 1e-4 * size * (gradient @ step):
                ab, current = trial, trial_loss
                break
            size /= 2
        else:
            break   # no step lowers the loss: ab is optimal to the loss's rounding
    return float(ab[0]), float(ab[1])


def _probability(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^z) without overflow."""
    return np.exp(-np.logaddexp(0.0, z))


def pair_probabilities(decision: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """P(class i | x, i or j) of each pair (i, j), clipped to LibSVM's [1e-7, 1 - 1e-7].

    Parameters
    ----------
    decision : ndarray
        (n_rows, n_pairs) LibSVM decision values, positive towards each pair's class i.
    A, B : ndarray
        Each pair's sigmoid.

    Returns
    -------
    ndarray
        (n_rows, n_pairs).
    """
    return np.clip(_probability(decision * A + B), MIN_PROBABILITY, 1.0 - MIN_PROBABILITY)


def couple_pairs(pairwise: np.ndarray, n_classes: int) -> np.ndarray:
    """One distribution over the classes per row from its pairs' probabilities.

    Wu, Lin and Weng's second method (LibSVM's ``multiclass_probability``): p minimises
    sum over pairs of (r_ji p_i - r_ij p_j)^2 subject to sum p = 1, where r_ij = P(i | i or j);
    its optimality conditions are one linear system per row, solved here directly (LibSVM
    iterates towards the same solution). Its solution is non-negative.

    Parameters
    ----------
    pairwise : ndarray
        (n_rows, n_pairs) probabilities of each pair's class i, pairs in ``class_pairs`` order.
    n_classes : int
        The number of classes.

    Returns
    -------
    ndarray
        (n_rows, n_classes), rows summing to one.
    """
    n_rows = pairwise.shape[0]
    system = np.zeros((n_rows, n_classes + 1, n_classes + 1))
    for p, (i, j) in enumerate(class_pairs(n_classes)):
        r_ij, r_ji = pairwise[:, p], 1.0 - pairwise[:, p]
        system[:, i, i] += r_ji ** 2
        system[:, j, j] += r_ij ** 2
        system[:, i, j] -= r_ji * r_ij
        system[:, j, i] -= r_ji * r_ij
    system[:, :n_classes, n_classes] = 1.0
    system[:, n_classes, :n_classes] = 1.0
    right = np.zeros((n_rows, n_classes + 1))
    right[:, n_classes] = 1.0
    return np.linalg.solve(system, right[..., None])[:, :n_classes, 0]
