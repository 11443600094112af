"""A cut run's totals over every round, estimated from the rounds run, and how far to trust them.

A run of ``max_rounds`` rounds out of R stands for all R: each total (seconds and iterations
alike) is what the rounds run measured plus the mean of the rounds like those left, times their
number. For `ato`, `mir` and `sir` round 1 is cold and the rounds left are seeded, so only rounds
2..R are alike; for every other method each round is.

The estimate's 95 % interval is the Student t interval of that mean, times the rounds left. The
rounds of a leave-one-out run test the instances in the order of a seeded shuffle
(``folds.stratified_folds``), so its first rounds are a simple random sample of the instances, and
the interval is that of a random sample's mean. A run may stop as soon as the interval is narrow
enough (``until_interval``), after ``MIN_LIKE_ROUNDS`` alike rounds at least.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..seeding import FROM_FULL_MODEL, SEEDERS

CONFIDENCE = 0.95
# Two alike rounds give a standard deviation but a t factor of 12.7; three are the fewest with which
# an interval of +-20 % is within reach of rounds that vary by a few percent.
MIN_LIKE_ROUNDS = 3


def cold_first_round(method: str) -> bool:
    """A k-fold seeder: round 1 is cold, each later round seeded from the round before."""
    return method in SEEDERS and method not in FROM_FULL_MODEL


def like_rounds(method: str) -> slice:
    """The rounds run (in round order) that are like the rounds a cut run leaves out."""
    return slice(1, None) if cold_first_round(method) else slice(None)


def extrapolate(per_round, rounds_left: int, method: str) -> float:
    """The total over every round: the rounds run's sum plus their alike rounds' mean times ``rounds_left``.

    Parameters
    ----------
    per_round : array-like
        One figure per round run, in round order.
    rounds_left : int
        The rounds not run.
    method : str
        The method, which says which rounds run are alike (``like_rounds``).

    Returns
    -------
    float
        The estimated total (the sum itself when no round is left).
    """
    values = np.asarray(per_round, dtype=np.float64)
    total = float(values.sum())
    if rounds_left:
        total += float(values[like_rounds(method)].mean()) * rounds_left
    return total


def half_width(per_round, rounds_left: int, method: str) -> float | None:
    """Half the width of the 95 % interval of ``extrapolate``'s total.

    Parameters
    ----------
    per_round : array-like
        One figure per round run, in round order.
    rounds_left : int
        The rounds not run.
    method : str
        The method (``like_rounds``).

    Returns
    -------
    float or None
        0 when no round is left; None when fewer than two alike rounds ran, which give no interval.
    """
    if not rounds_left:
        return 0.0
    sample = np.asarray(per_round, dtype=np.float64)[like_rounds(method)]
    if sample.size < 2:
        return None
    t = stats.t.ppf(0.5 + CONFIDENCE / 2, sample.size - 1)
    return float(t * sample.std(ddof=1) / np.sqrt(sample.size) * rounds_left)


def interval_share(per_round_seconds, rounds_left: int, method: str, fixed_seconds: float = 0.0) -> float | None:
    """Half the 95 % interval of a run's estimated seconds, as a share of them.

    Parameters
    ----------
    per_round_seconds : array-like
        Each round run's seconds, in round order.
    rounds_left : int
        The rounds not run.
    method : str
        The method (``like_rounds``).
    fixed_seconds : float, default 0
        What the run spends once, outside its rounds (the kernel, the full model).

    Returns
    -------
    float or None
        ``half_width`` over the estimated total; None where ``half_width`` is.
    """
    width = half_width(per_round_seconds, rounds_left, method)
    total = fixed_seconds + extrapolate(per_round_seconds, rounds_left, method)
    return None if width is None else (width / total if total > 0 else 0.0)


def alike_rounds_run(rounds_run: int, method: str) -> int:
    """How many of the rounds run are like the rounds left."""
    return len(range(rounds_run)[like_rounds(method)])
