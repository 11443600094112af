"""``alphaseed.HalvingGridSearchCV``: successive halving over (C, gamma), each round a seeded search.

scikit-learn's ``HalvingGridSearchCV`` cross-validates every candidate on a small subsample, keeps
the best 1/``factor`` of them, and goes on with ``factor`` times as many samples until the
candidates or the samples run out; most of a grid is then judged on a fraction of the data.
This class runs the same schedule (the same rounds, subsamples and survivors as scikit-learn's
for the same ``cv`` and ``random_state``), and each round is ``GridSearchCV``'s seeded search of
the surviving candidates on that round's subsampled splits: one kernel per gamma, seeded along
the splits and along C.

The schedule follows scikit-learn's ``BaseSuccessiveHalving`` (Karnin, Koren and Somekh, ICML
2013, as scikit-learn implements it), with ``resource="n_samples"``: the only resource, since
``SVC`` has no parameter that buys accuracy with time as ``n_estimators`` does.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from math import ceil, floor, log

import numpy as np
from sklearn.utils import resample

from .grid_search import GridSearchCV, _cv_results


@dataclass(frozen=True)
class HalvingSchedule:
    """The samples of each round of successive halving, as scikit-learn's ``_run_search`` sets them.

    Parameters
    ----------
    min_resources : int
        The samples of the first round.
    n_required_iterations : int
        The rounds after which fewer than ``factor`` candidates are left.
    n_possible_iterations : int
        The rounds that fit between ``min_resources`` and ``max_resources``.
    resources : tuple of int
        The samples of each round that runs.
    """

    min_resources: int
    n_required_iterations: int
    n_possible_iterations: int
    resources: tuple[int, ...]


def halving_schedule(n_candidates: int, *, factor: float, min_resources: int, max_resources: int,
                     exhaust: bool, aggressive_elimination: bool) -> HalvingSchedule:
    """The rounds of a halving search over ``n_candidates`` candidates.

    Parameters
    ----------
    n_candidates : int
        The grid's points.
    factor : float
        Each round keeps 1/factor of the candidates and multiplies the samples by ``factor``.
    min_resources : int
        The first round's samples, or their lower bound with ``exhaust``.
    max_resources : int
        The most samples a round may have.
    exhaust : bool
        Start with as many samples as let the last required round use up to ``max_resources``.
    aggressive_elimination : bool
        Run every required round even when the samples run out first, repeating the first
        round's samples until the remaining rounds fit.

    Returns
    -------
    HalvingSchedule
    """
    required = 1 + floor(log(n_candidates, factor))
    if exhaust:
        min_resources = max(min_resources, max_resources // factor ** (required - 1))
    min_resources = int(min_resources)
    possible = 1 + floor(log(max_resources // min_resources, factor))
    rounds = required if aggressive_elimination else min(possible, required)
    powers = [max(0, i - required + possible) if aggressive_elimination else i for i in range(rounds)]
    resources = tuple(min(int(factor ** p * min_resources), max_resources) for p in powers)
    return HalvingSchedule(min_resources, required, possible, resources)


class HalvingGridSearchCV(GridSearchCV):
    """Successive halving over C and gamma of an ``alphaseed.SVC``, each round seeded.

    A drop-in for ``sklearn.model_selection.HalvingGridSearchCV`` with such an estimator and
    ``resource="n_samples"``; the score is accuracy.

    Parameters
    ----------
    estimator : SVC
        The estimator whose C and gamma are searched; its other parameters hold at every point.
    param_grid : dict or list of dict
        Values of ``C`` and ``gamma``, as ``GridSearchCV`` takes them.
    factor : float, default 3
        Each round keeps the best ceil(n / factor) of its n candidates, and the next round has
        ``factor`` times its samples. Greater than 1.
    resource : {"n_samples"}, default "n_samples"
        What grows from round to round: the samples of each split's training and test sets,
        drawn from the full split without replacement.
    max_resources : int or "auto", default "auto"
        The most samples a round may have; ``auto``: all of X.
    min_resources : int, "exhaust" or "smallest", default "exhaust"
        The first round's samples. ``smallest``: 2 per split and class, as scikit-learn sets it;
        ``exhaust``: as many as let the last round use up to ``max_resources``.
    aggressive_elimination : bool, default False
        Repeat the first round's samples until enough candidates are eliminated for the last
        round to reach ``max_resources``.
    cv : int, splitter or iterable, default 5
        As ``GridSearchCV``'s, leave-one-out excepted: its one-instance test sets would be empty
        once subsampled. A round whose subsample leaves a split without a training or test
        instance is refused (scikit-learn would score it NaN); a split whose training subsample
        holds one class scores NaN, as in scikit-learn.
    method : {"sir", "mir", "ato", "cold"}, default "sir"
        The seeder along each round's splits at its smallest C, or ``cold``.
    refit : bool, default True
        Refit the best candidate of the last round on all of X.
    random_state : int, RandomState or None, default None
        Draws each round's subsamples, as scikit-learn's ``resample`` does: with an int, every
        round draws the same permutation, so its samples contain the previous round's. With None
        the draws come from NumPy's global generator, which scikit-learn's own ``SVC.fit`` also
        draws from, so only the first round's subsamples can be compared with its search.
    n_jobs : int or None, default None
        Gamma columns of a round in parallel joblib workers, as in ``GridSearchCV``.
    verbose : int, default 0
        Shows a progress bar per round when true.

    Attributes
    ----------
    cv_results_ : dict
        ``GridSearchCV``'s keys over the rows of every round, plus ``iter`` (the round of each
        row) and ``n_resources`` (its samples), as scikit-learn's ``HalvingGridSearchCV`` with
        ``return_train_score=False``; ranks are over all rows.
    best_index_, best_params_, best_score_ : int, dict, float
        The best candidate of the last round (its first, in the round's order, on a tie).
    best_estimator_ : SVC
        That candidate refitted on all of X (with ``refit``).
    n_resources_, n_candidates_ : list of int
        The samples and the candidates of each round.
    n_iterations_, n_required_iterations_, n_possible_iterations_ : int
        The rounds run, required (until fewer than ``factor`` candidates are left) and possible
        (between ``min_resources_`` and ``max_resources_``).
    min_resources_, max_resources_ : int
        The samples of the first round and the most a round may have.
    n_remaining_candidates_ : int
        The candidates kept after the last round.
    n_splits_, refit_time_
        As ``GridSearchCV``'s.
    """

    def __init__(self, estimator, param_grid, *, factor=3, resource="n_samples", max_resources="auto",
                 min_resources="exhaust", aggressive_elimination=False, cv=5, method="sir", refit=True,
                 random_state=None, n_jobs=None, verbose=0):
        super().__init__(estimator, param_grid, cv=cv, method=method, refit=refit, n_jobs=n_jobs,
                         verbose=verbose)
        self.factor = factor
        self.resource = resource
        self.max_resources = max_resources
        self.min_resources = min_resources
        self.aggressive_elimination = aggressive_elimination
        self.random_state = random_state

    def fit(self, X, y):
        """Run the halving rounds on (X, y), then refit the last round's best candidate.

        Parameters
        ----------
        X, y : array-like
            The features (dense, or sparse: converted to CSR) and the labels, two classes or more.

        Returns
        -------
        self : HalvingGridSearchCV
        """
        X, y, codes = self._validated(X, y)
        if isinstance(self.cv, str) and self.cv == "loo":
            raise ValueError("cv='loo' cannot be subsampled: its one-instance test sets would be empty")
        splits = self._splits(X, y)
        candidates = self._candidates()
        schedule = self._schedule(X.shape[0], len(splits), np.unique(codes).size, len(candidates))
        self.min_resources_ = schedule.min_resources
        self.n_required_iterations_ = schedule.n_required_iterations
        self.n_possible_iterations_ = schedule.n_possible_iterations
        self.n_iterations_ = len(schedule.resources)
        self.n_resources_, self.n_candidates_ = [], []
        rows, points, rounds, samples = [], [], [], []
        for round_, n_resources in enumerate(schedule.resources):
            subsampled = self._subsample(splits, n_resources / X.shape[0])
            results = self._evaluate(X, codes, candidates, subsampled,
                                     desc=f"halving round {round_} ({len(candidates)} points)")
            self.n_resources_.append(n_resources)
            self.n_candidates_.append(len(candidates))
            rows += candidates
            points += results
            rounds += [round_] * len(candidates)
            samples += [n_resources] * len(candidates)
            candidates = _best(candidates, results, ceil(len(candidates) / self.factor))
        self.n_remaining_candidates_ = len(candidates)
        self.cv_results_ = _cv_results(rows, points, len(splits))
        self.cv_results_["iter"] = np.array(rounds)
        self.cv_results_["n_resources"] = np.array(samples)
        last = np.flatnonzero(self.cv_results_["iter"] == self.n_iterations_ - 1)
        scores = self.cv_results_["mean_test_score"][last]
        best = last[0] if np.isnan(scores).all() else last[np.nanargmax(scores)]
        return self._conclude(X, y, len(splits), best_index=int(best))

    def _schedule(self, n_samples: int, n_splits: int, n_classes: int, n_candidates: int) -> HalvingSchedule:
        """The rounds' samples, after checking the halving parameters against the data."""
        if self.resource != "n_samples":
            raise ValueError(f"resource must be 'n_samples' (SVC has no parameter to grow); "
                             f"got {self.resource!r}")
        if isinstance(self.factor, bool) or not isinstance(self.factor, numbers.Real) or not self.factor > 1:
            raise ValueError(f"factor must be a number greater than 1; got {self.factor!r}")
        max_resources = n_samples if self.max_resources == "auto" else self.max_resources
        if not isinstance(max_resources, (int, np.integer)) or max_resources <= 0:
            raise ValueError(f"max_resources must be 'auto' or a positive int; got {self.max_resources!r}")
        if self.min_resources in ("exhaust", "smallest"):
            min_resources = 2 * n_splits * n_classes
        elif isinstance(self.min_resources, (int, np.integer)) and self.min_resources > 0:
            min_resources = self.min_resources
        else:
            raise ValueError(f"min_resources must be 'exhaust', 'smallest' or a positive int; "
                             f"got {self.min_resources!r}")
        if min_resources > max_resources:
            raise ValueError(f"min_resources_={min_resources} is greater than "
                             f"max_resources_={max_resources}")
        self.max_resources_ = int(max_resources)
        return halving_schedule(n_candidates, factor=self.factor, min_resources=min_resources,
                                max_resources=max_resources, exhaust=self.min_resources == "exhaust",
                                aggressive_elimination=self.aggressive_elimination)

    def _subsample(self, splits, fraction: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each split's training and test sets cut to ``fraction`` of their instances, drawn as
        scikit-learn's ``_SubsampleMetaSplitter`` draws them."""
        sizes = [(int(fraction * train.size), int(fraction * test.size)) for train, test in splits]
        if min(min(pair) for pair in sizes) == 0:
            raise ValueError(f"a round with {fraction:.3g} of the samples leaves a split with no "
                             f"training or test instance: raise min_resources")
        return [tuple(resample(part, replace=False, random_state=self.random_state, n_samples=size)
                      for part, size in zip(split, pair)) for split, pair in zip(splits, sizes)]


def _best(candidates: list[dict], results, k: int) -> list[dict]:
    """The k candidates with the highest mean test score, in ascending order of it, as
    scikit-learn's ``_top_k`` keeps them (NaN scores lowest)."""
    scores = np.array([np.mean(r.scores) for r in results])
    order = np.roll(np.argsort(scores), np.count_nonzero(np.isnan(scores)))
    return [candidates[i] for i in order[-k:]]
