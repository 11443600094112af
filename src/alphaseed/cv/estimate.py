"""A cut run's totals over every round, estimated from the rounds run, and how far to trust them.

A run of ``max_rounds`` rounds out of R stands for all R: each total (seconds and iterations
alike) is what the rounds run measured plus the mean of the rounds like those left, times their
number. For `ato`, `mir` and `sir` round 1 is cold and the rounds left are seeded, so only rounds
2..R are alike; for every other method each round is.

The estimate's 95 % interval is the Student t interval of that mean, times the rounds left. The
rounds of a leave-one-out run test the instances in the order of a seeded shuffle
(``folds.stratified_folds``), so its first rounds are a simple random sample of the instances, and
the interval is that of a random sample's mean.

A run may stop as soon as the interval of its estimated iterations is narrow enough
(``until_interval``; ``settled``): iterations, not seconds, so that where it stops (hence its
predictions and accuracy) is the same in every run of it, a resumed one included, and seconds
follow iterations within one engine. It needs ``MIN_LIKE_ROUNDS`` alike rounds, and as many of them
that took iterations as there are alike rounds, up to ``MIN_WORKING_ROUNDS``: a seeded
leave-one-out round takes no iteration where the instance left out moves no alpha, so most rounds
may cost next to nothing and a few the most; an interval over a sample that holds none (or a
handful) of the costly rounds would be narrow and wrong. Five is the usual floor for a normal
approximation of a share (n p >= 5).

Where a cut run's rounds are of kinds that cost very differently and its own rounds are too few to
say how often each kind comes (MNIST's seeded leave-one-out in the paper's setting: a round whose
seed moves every alpha restarts its gradient from every support vector, 20 minutes, and one that
moves a few carries it over, seconds), ``double_sampled`` takes the kinds' shares from a longer run
of the same rounds in another kernel mode, whose rounds take the same iterations: double sampling
for stratification (Cochran, *Sampling Techniques*, 3rd ed., section 12.2). With one kind it is the
estimate and interval above.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..seeding import FROM_FULL_MODEL, SEEDERS

CONFIDENCE = 0.95
# Two alike rounds give a standard deviation but a t factor of 12.7; three are the fewest with which
# an interval of +-20 % is within reach of rounds that vary by a few percent.
MIN_LIKE_ROUNDS = 3
MIN_WORKING_ROUNDS = 5


def cold_first_round(method: str) -> bool:
    """A k-fold seeder: round 1 is cold, each later round seeded from the round before."""
    return method in SEEDERS and method not in FROM_FULL_MODEL


def like_rounds(method: str) -> slice:
    """The rounds run (in round order) that are like the rounds a cut run leaves out.

    Parameters
    ----------
    method : str
        The method: a k-fold seeder's round 1 is cold (``cold_first_round``), so not like the rest.

    Returns
    -------
    slice
        Of the rounds run, in round order.
    """
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
    alike = values[like_rounds(method)]
    if rounds_left and alike.size:
        total += float(alike.mean()) * rounds_left
    elif rounds_left:
        raise ValueError(f"no round run like the {rounds_left} left to estimate them from")
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


def interval_share(per_round, rounds_left: int, method: str, fixed: float = 0.0) -> float | None:
    """Half the 95 % interval of a run's estimated total (seconds or iterations), as a share of it.

    Parameters
    ----------
    per_round : array-like
        Each round run's figure, in round order.
    rounds_left : int
        The rounds not run.
    method : str
        The method (``like_rounds``).
    fixed : float, default 0
        What the run spends once, outside its rounds (the kernel, the full model).

    Returns
    -------
    float or None
        ``half_width`` over the estimated total; None where ``half_width`` is.
    """
    width = half_width(per_round, rounds_left, method)
    total = fixed + extrapolate(per_round, rounds_left, method)
    return None if width is None else (width / total if total > 0 else 0.0)


def settled(iterations_per_round, rounds_left: int, method: str, share: float, full_model_iterations: int = 0) -> bool:
    """Whether the rounds run estimate the run's iterations within ``share`` (see the module doc).

    Parameters
    ----------
    iterations_per_round : array-like
        Each round run's iterations, in round order.
    rounds_left : int
        The rounds not run.
    method : str
        The method (``like_rounds``).
    share : float
        The half-width of the 95 % interval asked for, as a share of the estimate.
    full_model_iterations : int, default 0
        The iterations of `avg`'s and `top`'s model of all instances, part of the total.

    Returns
    -------
    bool
        True once ``MIN_LIKE_ROUNDS`` alike rounds ran, enough of them took iterations, and the interval
        is within ``share``.
    """
    alike = np.asarray(iterations_per_round)[like_rounds(method)]
    if alike.size < MIN_LIKE_ROUNDS or np.count_nonzero(alike) < min(alike.size, MIN_WORKING_ROUNDS):
        return False
    width = interval_share(iterations_per_round, rounds_left, method, full_model_iterations)
    return width is not None and width <= share


def double_sampled(per_round, kinds, first_phase_kinds, rounds_left: int,
                   method: str) -> tuple[float, float | None] | None:
    """(total, half width of its 95 % interval) of a cut run whose rounds left are estimated by kind.

    The rounds left are counted at mean = sum_h w_h mean_h, where w_h is kind h's share of the alike rounds
    of a longer run of the same rounds (the first phase, n' rounds) and mean_h that of this run's alike
    rounds of kind h (the second phase, n_h of them). The variance of that mean is the second phase's
    sum_h w_h^2 s_h^2 / n_h plus what the first phase leaves open of the shares,
    sum_h w_h (mean_h - mean)^2 / (n' - 1) (Cochran's eq. 12.11 for an unbounded population, less its
    small negative term, so a little wide), the latter times 1 + 2 r where r, the lag-1 autocorrelation
    of the first phase's rounds counted at their kind's mean, is positive: a leave-one-out round's kind
    may depend on the instance of the round before (the one it puts back), which makes neighbouring
    rounds' kinds alike. The interval's t takes Satterthwaite's degrees of freedom.

    Parameters
    ----------
    per_round : array-like
        This run's figure per round run, in round order.
    kinds : array-like
        The kind of each of those rounds (any labels numpy can sort, e.g. whether it took iterations).
    first_phase_kinds : array-like
        The kind of each round of the longer run, in round order, beginning with ``kinds``: the same rounds.
    rounds_left : int
        This run's rounds not run.
    method : str
        The method (``like_rounds``), for both runs.

    Returns
    -------
    tuple or None
        None where a kind of the first phase has no alike round in this run (nothing to count it at);
        else the total and the half width, the latter None where a kind has fewer than two such rounds
        here or fewer than ``MIN_WORKING_ROUNDS`` in the first phase (too few for its share's spread).
    """
    values = np.asarray(per_round, dtype=np.float64)
    kinds, first = np.asarray(kinds), np.asarray(first_phase_kinds)
    if kinds.shape != values.shape:
        raise ValueError(f"{kinds.size} kinds for {values.size} rounds")
    if first.size < kinds.size or not np.array_equal(first[:kinds.size], kinds):
        raise ValueError("the first phase must begin with this run's rounds, of the same kinds")
    total = float(values.sum())
    if not rounds_left:
        return total, 0.0
    sample, sample_kinds, first = values[like_rounds(method)], kinds[like_rounds(method)], first[like_rounds(method)]
    labels, where, counts = np.unique(first, return_inverse=True, return_counts=True)
    if not labels.size or any(not np.any(sample_kinds == h) for h in labels):
        return None
    shares = counts / first.size
    groups = [sample[sample_kinds == h] for h in labels]
    means = np.array([g.mean() for g in groups])
    mean = float(shares @ means)
    total += mean * rounds_left
    if any(g.size < 2 for g in groups) or counts.min() < MIN_WORKING_ROUNDS:
        return total, None
    second = shares ** 2 * np.array([g.var(ddof=1) / g.size for g in groups])
    first_term = float(shares @ (means - mean) ** 2) / (first.size - 1) * (1 + 2 * _lag1_autocorrelation(means[where]))
    variance = float(second.sum()) + first_term
    if variance == 0.0:
        return total, 0.0
    # Satterthwaite: each term's variance estimate has its own degrees of freedom.
    freedom = np.array([g.size - 1 for g in groups], dtype=np.float64)
    spread = float((second ** 2 / freedom).sum()) + first_term ** 2 / (first.size - 1)
    t = stats.t.ppf(0.5 + CONFIDENCE / 2, variance ** 2 / spread)
    return total, float(t * np.sqrt(variance) * rounds_left)


def _lag1_autocorrelation(values: np.ndarray) -> float:
    """The lag-1 autocorrelation of ``values`` where it is positive, else 0 (a negative one is not trusted
    to narrow the interval)."""
    centred = values - values.mean()
    scale = float(centred @ centred)
    return max(0.0, float(centred[1:] @ centred[:-1]) / scale) if scale > 0 else 0.0
