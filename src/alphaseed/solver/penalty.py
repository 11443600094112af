"""The penalty C: one for every alpha, or LibSVM's one per class (C times the class's weight)."""

from __future__ import annotations

import numpy as np

from ..errors import SolverInputError


def check_C(C: float) -> float:
    """``C`` as a float, after checking it is positive and finite."""
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise SolverInputError(f"C must be a positive finite number, got {C!r}")
    return C


def class_bounds(C) -> tuple[float, float]:
    """(C of the +1 instances, C of the -1 instances) from one C or such a pair, each checked.

    Parameters
    ----------
    C : float or tuple of float
        One penalty for all, or LibSVM's (Cp, Cn): C times each class's weight.

    Returns
    -------
    tuple of float
    """
    if np.ndim(C) == 0:
        return (check_C(C),) * 2
    if len(C) != 2:
        raise SolverInputError(f"C must be a number or a pair (C of +1, C of -1); got {C!r}")
    return check_C(C[0]), check_C(C[1])


def upper_bounds(y: np.ndarray, C) -> np.ndarray:
    """Each instance's bound on alpha: C of its class (``class_bounds``).

    Parameters
    ----------
    y : ndarray
        Labels, -1 or +1.
    C : float or tuple of float
        One penalty, or the pair (C of +1, C of -1).

    Returns
    -------
    ndarray
        One bound per label.
    """
    C_positive, C_negative = class_bounds(C)
    return np.where(y > 0, C_positive, C_negative)
