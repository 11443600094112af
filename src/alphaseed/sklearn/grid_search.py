"""``alphaseed.GridSearchCV``: model selection over (C, gamma) that reuses work across the grid.

LIBSVM's grid.py runs one ``svm-train -v`` per grid point and scikit-learn's GridSearchCV
fits every (point, fold) from scratch. Here, for each gamma (a *column* of the grid):

- one kernel (``KernelMatrix`` in the estimator's ``kernel_mode``; ``auto`` keeps the Gram
  matrix when it fits the memory budget) serves every C and every fold;
- each split runs over the C values in ascending order; at the smallest C, split h+1 is
  seeded from split h by the paper's seeder (``method``: ``sir``, ``mir`` or ``ato``;
  ``cold`` seeds nothing); at every larger C, split h is seeded from its own solution at the
  previous C (the same training set), by ``C_SEED``;
- with more than two classes, each pair of classes runs these rounds on its own instances of
  each split, every pair predicts the whole test fold and the pairs vote, as ``SVC`` does;
- the gradient comes with every seed: carried from the previous split (``solver.solve``'s
  ``previous``), and from the previous C in closed form (no kernel value needed, see
  ``seed_from_smaller_C``), except the start along the path for a run of the active set, which
  computes its own;
- a split's chain over the larger C values depends on nothing but its round at the smallest C,
  and a pair of classes on nothing but its own rounds, so the splits' chains and a split's pairs
  run at once, as threads that share the kernel (``search_column``).

C ascends because the largest C is by far the most expensive point; descending would solve it
cold, ascending seeds it.

``C_SEED = "gap"`` is best, or close to best, on every case compared (docs: user guide,
"Model selection"; ``benchmarks/search_seeding.py``): of ``scale`` (alpha * C'/C, as DeCoste and
Wagstaff proposed) and ``keep`` (alpha unchanged; with C ascending, clipping to the new C changes
nothing, so ``clip`` is ``keep`` here), take the one whose LibSVM optimality gap is smaller,
both gaps coming from the closed-form gradients at no kernel cost. Scaling wins at the small C
values where most alphas sit at the bound; keeping wins once they turn free, and reaches the
hard-margin solution at once when C no longer binds. ``none`` seeds every C along the splits
only. Raising only the alphas at the old bound to the new one is not offered: it saves fewer
iterations than ``keep``.

Every seed is feasible and SMO stops at the same tolerance, so each point's CV accuracy is the
cold search's up to which of several eps-optimal solutions a round ends at (identical on the
tests' data; the user guide's "Model selection" gives the points that differ on larger grids). Per gamma, the
kernel is a Gram matrix (kernel mode ``auto`` where it fits), and a search run in this process
(its columns in turn, or as threads) computes X's dot products once for all gammas
(``kernel.shared_dots``) when they fit the memory budget beside one Gram matrix: each gamma then
only exponentiates.
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial

import numba
import numpy as np
from joblib import Parallel, delayed
from joblib.parallel import get_active_backend
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneOut, ParameterGrid, check_cv
from sklearn.utils.validation import check_is_fitted, validate_data

from ..cv import custom_rounds, run_round
from ..kernel import (
    KernelMatrix, blas_threads, chain_threads, concurrent_launches_are_safe, default_memory_budget, finished_future,
    numba_threads, resolve_gamma, resolve_mode, resolve_n_jobs, shared_dots, takes_bit_sets, threads_may_share,
)
from ..errors import SolverInputError
from ..seeding import SEEDERS, adjust_alpha
from ..solver import SolverOptions, check_warm_start, options_at_larger_C, reusing_memory, support_coefficients, warmup
from .one_vs_one import class_pairs, grouped_by_class, pair_problem
from .svc import SVC, encode_classes, solver_options

SEARCH_METHODS = ("cold", "ato", "mir", "sir")
C_SEEDS = ("gap", "scale", "keep", "none")
C_SEED = "gap"
GRID_KEYS = ("C", "gamma")


@dataclass
class PointResult:
    """One (C, gamma) over all splits, one entry per split in each array.

    With more than two classes a split's figures add up its pairs' rounds.

    Parameters
    ----------
    scores : ndarray
        Test accuracy, a fraction.
    iterations : ndarray
        SMO's iterations.
    fit_seconds, score_seconds : ndarray
        The seconds of fitting (the seed's computation included) and of predicting.
    capped : ndarray
        Whether SMO stopped at the iteration cap.
    """

    scores: np.ndarray
    iterations: np.ndarray
    fit_seconds: np.ndarray
    score_seconds: np.ndarray
    capped: np.ndarray

    @classmethod
    def empty(cls, splits: int) -> PointResult:
        """A point before any of its ``splits`` ran.

        Parameters
        ----------
        splits : int
            The number of splits.

        Returns
        -------
        PointResult
            Zeros (False for ``capped``) for every split.
        """
        return cls(*(np.zeros(splits) for _ in range(4)), np.zeros(splits, bool))

    def record(self, h: int, done, seconds: float) -> None:
        """Add a round of split h (one pair of classes) to its figures; its prediction is the
        split's, counted apart (``score_seconds``).

        Parameters
        ----------
        h : int
            The split, from 0.
        done : Round
            The round (``cv.run_round``), with no prediction.
        seconds : float
            The round's wall seconds, the seed's computation included: fitting.
        """
        self.fit_seconds[h] += seconds
        self.iterations[h] += done.solution.iterations
        self.capped[h] |= done.solution.iteration_cap_hit


def seed_from_smaller_C(prev, C_prev: float, C: float, rule: str, y=None):
    """(alpha0, (G, G_bar)) at C >= C_prev from the solution ``prev`` at C_prev on the same set.

    Both rules give the gradients in closed form, so a seed costs no kernel value.

    Parameters
    ----------
    prev : SolveResult
        The solution at C_prev.
    C_prev : float
        Its penalty.
    C : float
        The new penalty; the C values of a column are distinct, so C > C_prev.
    rule : {"scale", "keep", "gap", "path"}
        ``scale``: alpha * C/C_prev keeps sum y alpha = 0 and the bounded set, so G + 1 = Q alpha
        and G_bar (C times the columns of the bounded alphas) both scale by C/C_prev.
        ``keep``: alpha stays, so G stays, and no alpha sits at the larger C: G_bar = 0.
        ``gap``: whichever of the two has the smaller ``optimality_gap``.
        ``path``: along the regularisation path from ``prev`` (``along_path``), without a
        gradient, for a run that computes its own (the active set's); ``scale`` where ``prev``
        has no slope.
    y : ndarray, optional
        The training set's labels (-1 or +1), needed by ``gap`` and ``path``.

    Returns
    -------
    tuple
        ``(alpha0, (G, G_bar))``, aligned with ``prev``'s training set; ``(alpha0, None)`` for
        ``path``.
    """
    if rule == "gap":
        seeds = [seed_from_smaller_C(prev, C_prev, C, r) for r in ("scale", "keep")]
        return min(seeds, key=lambda seed: optimality_gap(seed[0], seed[1][0], y, C))
    if rule == "path":
        if prev.slope is not None:
            return along_path(prev, C_prev, C, y), None
        rule = "scale"
    ratio = C / C_prev
    at_bound = prev.alpha >= C_prev
    if rule == "scale":
        alpha = np.where(at_bound, C, np.minimum(prev.alpha * ratio, C))
        return alpha, (ratio * (prev.gradient + 1.0) - 1.0, ratio * prev.gradient_bar)
    return prev.alpha, (prev.gradient, np.zeros_like(prev.gradient_bar))


def along_path(prev, C_prev: float, C: float, y) -> np.ndarray:
    """A feasible start at C from the solution ``prev`` at C_prev, along its regularisation path.

    The solution moves along a line in C until its free set changes (``SolveResult.slope``);
    ``scale`` follows the line that keeps every free alpha's share of C instead. The grid's steps
    in C pass many of the path's turns, so the line's end is clipped into [0, C] and y'alpha
    balanced again by shifting the free set's alphas below C_prev (``adjust_alpha``); the others
    stay at 0 or at C. Where the kernel is not flat the active set then takes fewer Newton steps
    than from ``scale``'s start, each step taking one index out of the free set (docs:
    benchmarks, "Seeding the active set along the path"). Where that start cannot be balanced or
    is refused by ``solve``'s check, the start is ``scale``'s. One C for both classes: a search
    takes no class weights.

    Parameters
    ----------
    prev : SolveResult
        The solution at C_prev, with its ``slope``.
    C_prev, C : float
        The penalties, C > C_prev.
    y : ndarray
        The training set's labels, -1 or +1.

    Returns
    -------
    ndarray
        alpha0 at C, aligned with ``prev``'s training set.
    """
    alpha = prev.alpha + (C / C_prev - 1.0) * prev.slope
    moved = np.flatnonzero((prev.slope != 0.0) & (prev.alpha < C_prev))
    inside = moved[(alpha[moved] > 0.0) & (alpha[moved] < C)]
    seed = adjust_alpha(alpha, y, C, [inside, moved])
    if seed.any():
        try:
            # solve's own check, which puts an alpha within rounding of a bound on it: a balanced
            # seed fails it where the line left free alphas tiny beside a far larger C
            return check_warm_start(seed, y, C)
        except SolverInputError:
            pass
    return seed_from_smaller_C(prev, C_prev, C, "scale")[0]


def optimality_gap(alpha, gradient, y, C) -> float:
    """LibSVM's stopping quantity max_{I_up} -y G - min_{I_low} -y G (0 or less at the optimum).

    Parameters
    ----------
    alpha : ndarray
        The dual variables.
    gradient : ndarray
        LibSVM's G = Q alpha - 1 at ``alpha``.
    y : ndarray
        The labels, -1 or +1.
    C : float
        The penalty.

    Returns
    -------
    float
        The gap; smaller is closer to the optimum.
    """
    yg = -y * gradient
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    return float(yg[up].max(initial=-np.inf) - yg[low].min(initial=np.inf))


def search_column(X, y, gamma, Cs, splits, *, method: str, options: SolverOptions, c_seed: str = C_SEED,
                  progress=None, dots=None, threads: int | None = None,
                  memory_budget: int | None = None, submit=None) -> dict[float, PointResult]:
    """Cross-validate every C of ``Cs`` at one gamma on ``splits``, each split over all C ascending.

    A split's rounds at the smallest C depend on the previous split's (seeded along the splits),
    its rounds above it only on its own round at the smallest C (seeded along C), and each pair
    of classes on its own rounds only. So each split's pairs run at once, and each chain along C
    goes on beside the next split's rounds (``kernel.chain_threads``, where threads may share the
    kernel: ``kernel.threads_may_share``): the same rounds as one after the other.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The features.
    y : ndarray
        Each instance's class code, 0 to n_classes - 1 (``encode_classes``). With more than two
        classes each pair of classes runs its own rounds on the splits' training instances of
        the pair, seeded along the splits and along C, and predicts the whole test set; the
        pairs then vote, as ``SVC`` predicts.
    gamma : float or "scale"
        The kernel's gamma; ``"scale"`` is resolved on each training set, and a split whose gamma
        differs from the previous split's gets its own kernel and is not seeded from it.
    Cs : iterable of float
        The column's C values.
    splits : sequence
        (train, test) index arrays of each split.
    method : str
        ``cold``, or the seeder of the smallest C along the splits (``ato``, ``mir``, ``sir``).
    options : SolverOptions
        The solver's settings and kernel mode.
    c_seed : str, default C_SEED
        How each larger C is seeded from the smaller (``seed_from_smaller_C``), or ``none``: every
        C then seeds along the splits, and the splits run one after the other. Under ``gap`` a C
        that ``solver="auto"`` sends straight to the active set is seeded along the path
        (``along_path``).
    progress : callable, optional
        Called with 1 after each fit.
    dots : ndarray, optional
        X's dot products (``kernel.shared_dots``), shared by the columns of a search.
    threads : int, optional
        The threads the chains share, each chain at once on an equal share of them (at most one
        chain a thread); None: the Numba threads this thread may use.
    memory_budget : int, optional
        The bytes the column's kernel may take (``KernelMatrix``); None: its default, a share of
        the memory available.
    submit : callable, optional
        Where the chains run: a ``kernel.chain_threads`` pool the columns of a search share, so
        that the threads of a column that has ended take up the chains of those still running
        (``threads`` then counts for nothing but Numba's parallel loops of this thread). None: a
        pool of ``threads`` of the column's own.

    Returns
    -------
    dict
        ``PointResult`` of each C.
    """
    _check_choices(method, c_seed)
    Cs = sorted(set(Cs))
    codes = np.asarray(y)
    if codes.dtype.kind not in "iu" or codes.min() < 0:
        raise ValueError(f"y must hold class codes 0, 1, ... (encode_classes); got {codes.dtype} "
                         f"from {codes.min()}")
    n_classes = int(codes.max()) + 1
    results = {C: PointResult.empty(len(splits)) for C in Cs}
    seeder = None if method == "cold" else SEEDERS[method]
    # The rounds a split runs before its chain along C can leave: every C where each seeds along the splits.
    along_splits = Cs if seeder is not None and c_seed == "none" else Cs[:1]
    chained_Cs = Cs[len(along_splits):]
    kernel = None
    previous: dict = {}       # (pair, C) -> (training set, solution) of the previous split, same kernel
    waiting: list = []   # (split, its test set, its pairs' (pair, _Chain, future rounds)) not yet tallied

    def tally(h: int, test, chains_rounds) -> None:
        # The pairs' rounds leave prediction to this: a test fold's models, every pair's at every C,
        # are predicted together (``KernelMatrix.decision_signs``), each kernel value of the fold
        # computed or read once for all of them; each C is charged an equal share of the time.
        split_kernel = chains_rounds[0][0].kernel
        clock = time.perf_counter()
        models = [support_coefficients(chain.y, chain.split[0], rounds[c][0].solution.alpha)
                  + (rounds[c][0].solution.rho,) for c in range(len(Cs)) for chain, rounds in chains_rounds]
        towards_i = (split_kernel.decision_signs(test, models) > 0).reshape(test.size, len(Cs), len(chains_rounds))
        seconds = (time.perf_counter() - clock) / len(Cs)
        for c, C in enumerate(Cs):
            votes = np.zeros((test.size, n_classes), dtype=np.int32)
            for p, (chain, _) in enumerate(chains_rounds):
                i, j = chain.pair
                votes[towards_i[:, c, p], i] += 1
                votes[~towards_i[:, c, p], j] += 1
            results[C].scores[h] = np.mean(np.argmax(votes, axis=1) == codes[test])
            results[C].score_seconds[h] += seconds
            for _, rounds in chains_rounds:
                results[C].record(h, *rounds[c])
            if progress is not None:
                progress(1)

    def tally_finished(block: bool) -> None:
        # Each split as soon as its chains are done, so that a slow split holds no other's rounds.
        running = []
        for h, test, chains in waiting:
            if block or all(rounds.done() for _, _, rounds in chains):
                tally(h, test, [(chain, rounds.result()) for _, chain, rounds in chains])
            else:
                running.append((h, test, chains))
        waiting[:] = running

    threads = numba.get_num_threads() if threads is None else threads
    # As many chains at once as can be under way, each on its share of the threads.
    in_flight = _chains_under_way(n_classes, len(splits), bool(chained_Cs))
    with nullcontext(submit) if submit is not None else chain_threads(min(threads, in_flight)) as submit:
        for h, (train, test) in enumerate(splits):
            if np.unique(codes[train]).size < 2:
                # No classifier to fit: scikit-learn's fit fails and the split scores NaN there too.
                for C in Cs:
                    results[C].scores[h] = np.nan
                    if progress is not None:
                        progress(1)
                previous = {}
                continue
            # Only the rules look at the training set: a number would pay for a copy of it per split.
            gamma_h = resolve_gamma(gamma, X[train] if isinstance(gamma, str) else X)
            if kernel is None or kernel.gamma != gamma_h:
                tally_finished(block=True)   # the chains still read the kernel this one replaces: one at a time
                kernel = KernelMatrix(X, gamma_h, mode=options.kernel_mode, dots=dots, memory_budget=memory_budget)
                previous = {}
            run_now = submit if threads_may_share(kernel.mode) else finished_future
            chains = []
            for i, j in class_pairs(n_classes):
                pair_train = train[(codes[train] == i) | (codes[train] == j)]
                if pair_train.size == 0:   # neither class in this training set: the pair has no model, no vote
                    continue
                chain = _Chain(kernel, (i, j), pair_problem(codes, i, j)[1], (pair_train, test), options=options,
                               seeder=seeder, c_seed=c_seed,
                               previous={C: previous.get(((i, j), C)) for C in along_splits})
                rounds = run_now(chain.run, along_splits, chained_Cs)
                rounds.add_done_callback(chain.cancel_if_cancelled)
                chains.append(((i, j), chain, rounds))
            waiting.append((h, test, chains))
            # The next split's rounds along the splits start from this split's: wait for those, not the chains.
            previous = {((i, j), C): (chain.split[0], done.solution) for (i, j), chain, _ in chains
                        for C, (done, _) in zip(along_splits, chain.along_splits.result())}
            tally_finished(block=False)
        tally_finished(block=True)
    return results


def _chains_under_way(n_classes: int, n_splits: int, chained: bool) -> int:
    """The chains a column can have under way at once: a split's pairs of classes, and every
    split's where its rounds at the larger C values (``chained``) leave beside the next split's.

    Parameters
    ----------
    n_classes : int
        The classes, two or more.
    n_splits : int
        The splits.
    chained : bool
        Whether a split's rounds past the smallest C run as a chain of their own.

    Returns
    -------
    int
    """
    pairs = len(class_pairs(n_classes))
    return pairs * n_splits if chained else pairs


class _Chain:
    """The rounds of one split and pair of classes, C ascending: first those seeded along the
    splits (from ``previous``, the previous split's solution at each C), then the rest, each
    seeded from the one before (``seed_from_smaller_C``) unless ``c_seed`` is ``none`` or the
    method ``cold``. ``along_splits`` holds the first rounds as soon as they are done."""

    def __init__(self, kernel, pair, y, split, *, options: SolverOptions, seeder, c_seed: str, previous: dict):
        self.kernel, self.pair, self.y, self.split = kernel, pair, y, split
        self.options = self.asked = options
        self.seeder, self.previous = seeder, previous
        self.seeds_along_C = seeder is not None and c_seed != "none"
        self.c_seed = c_seed
        self.last = None   # (C, solution) of the last round
        self.along_splits = Future()

    def cancel_if_cancelled(self, rounds: Future) -> None:
        """Cancel ``along_splits`` where the run was cancelled before it began (a pool shut down
        after an error): the column waiting on it would otherwise wait for ever."""
        if rounds.cancelled():
            self.along_splits.cancel()

    @reusing_memory()   # the active-set finish's, from one C to the next
    def run(self, along_splits, along_C) -> list[tuple]:
        """(Round, wall seconds) at each C of ``along_splits`` then of ``along_C``."""
        try:
            first = self._rounds(along_splits)
        except BaseException as error:
            self.along_splits.set_exception(error)
            raise
        self.along_splits.set_result(first)
        return first + self._rounds(along_C)

    def _rule(self) -> str:
        """The seed rule of the next C: the gap rule's, but along the path where the next run goes
        straight to the active set (``along_path``; scaling where the last run has no slope).
        Keeping frees every alpha at the smaller C's bound, and the active set then takes a Newton
        step for each one that must leave F, however small the gap that chose it."""
        if self.c_seed == "gap" and self.asked.solver == "active_set":
            return "path"
        return self.c_seed

    def _rounds(self, Cs) -> list[tuple]:
        rounds = []
        for C in Cs:
            clock = time.perf_counter()
            start = None
            if self.last is not None:
                self.asked = options_at_larger_C(self.options, self.asked, self.last[1], C=self.last[0],
                                                 step=C / self.last[0], seeded=self.seeder is not None,
                                                 path_seed=self.seeds_along_C and self.c_seed == "gap")
                if self.seeds_along_C:
                    start = seed_from_smaller_C(self.last[1], self.last[0], C, self._rule(), self.y[self.split[0]])
            done = run_round(self.kernel, self.y, self.split, C, options=self.asked, seeder=self.seeder,
                             previous=self.previous.get(C), start=start, predict=False)
            self.last = (C, done.solution)
            rounds.append((done, time.perf_counter() - clock))
        return rounds


def _columns_at_once(threads: int, n: int, mode: str, bit_sets: bool, budget: int) -> int:
    """The most gamma columns, up to ``threads``, that the default runs side by side: each on its
    share of the memory ``budget`` must keep the kernel mode it gets alone, since a Gram matrix
    given up for a cache of rows costs more than the columns gain (4-6x a column on dense data)."""
    alone = resolve_mode(mode, n, budget, bit_sets=bit_sets)

    def keeps_mode(k: int) -> bool:
        try:
            return resolve_mode(mode, n, budget // k, bit_sets=bit_sets) == alone
        except SolverInputError:   # "gram" asked for, past the share
            return False

    return next((k for k in range(threads, 1, -1) if keeps_mode(k)), 1)


def _search_column_on_threads(threads: int, *args, **kwargs) -> dict[float, PointResult]:
    """``search_column`` with the parallel loops it launches on ``threads`` of Numba's pool."""
    with numba_threads(threads):
        return search_column(*args, **kwargs)


def _check_choices(method: str, c_seed: str) -> None:
    if method not in SEARCH_METHODS:
        raise ValueError(f"method must be one of {', '.join(SEARCH_METHODS)}; got {method!r}")
    if c_seed not in C_SEEDS:
        raise ValueError(f"c_seed must be one of {', '.join(C_SEEDS)}; got {c_seed!r}")


class GridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive search over C and gamma of an ``alphaseed.SVC``, with alpha seeding.

    A drop-in for ``sklearn.model_selection.GridSearchCV`` with such an estimator; the score is
    accuracy.

    Parameters
    ----------
    estimator : SVC
        The estimator whose C and gamma are searched; its other parameters hold at every point.
    param_grid : dict or list of dict
        Values of ``C`` and ``gamma`` (numbers, "scale", "auto"), as scikit-learn takes them.
    cv : int, "loo", splitter or iterable, default 5
        An int (scikit-learn's StratifiedKFold, as its GridSearchCV uses), ``"loo"``, a
        scikit-learn splitter or an iterable of (train, test) index arrays.
    method : {"sir", "mir", "ato", "cold"}, default "sir"
        The seeder along the splits at the smallest C, or ``cold`` (module docstring).
    refit : bool, default True
        Refit the best point on all of X, which ``predict``, ``decision_function`` and ``score``
        use.
    n_jobs : int or None, default None
        Runs gamma columns in that many parallel joblib workers (-1: every core): threads of this
        process, which share the dot products of X, or the workers of the backend chosen with
        ``joblib.parallel_backend`` (processes, a Dask cluster's), each column's kernel on its
        share of the memory. None runs as many columns at once as Numba's pool has threads (a
        thread each at most), as long as each column's kernel keeps on its share the mode it
        would have alone (its Gram matrix); in turn under a backend of processes. 1 runs them in
        turn.
        The cores a column gets (all of Numba's pool when in turn; columns side by side as
        threads share one pool of it) run its splits' chains along C and its
        pairs of classes at once (``search_column``), the same rounds as in turn. A point's
        ``mean_fit_time`` is then the wall time of rounds that ran beside others.
    verbose : int, default 0
        Shows a progress bar (fits done: points times splits) when true.

    Attributes
    ----------
    cv_results_ : dict
        scikit-learn's keys plus ``split{i}_iterations``, ``total_iterations`` (SMO iterations
        over the splits of each point) and ``iteration_cap_hits`` (its splits whose SMO stopped
        at the estimator's ``max_iter``, LibSVM's cap by default; ``fit`` then warns with a
        ``ConvergenceWarning`` naming the points).
    best_index_, best_params_, best_score_ : int, dict, float
        The best point (the first of the best ranked) and its mean test accuracy.
    best_estimator_ : SVC
        The best point refitted on all of X (with ``refit``).
    n_splits_ : int
        The number of splits.
    refit_time_ : float
        The seconds of the refit.
    """

    def __init__(self, estimator, param_grid, *, cv=5, method="sir", refit=True, n_jobs=None,
                 verbose=0):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.method = method
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _splits(self, X, y):
        """The (train, test) index arrays of ``cv`` on (X, y)."""
        splitter = LeaveOneOut() if isinstance(self.cv, str) and self.cv == "loo" else (
            check_cv(self.cv, y, classifier=True))
        return custom_rounds(splitter, X, y)[1]

    def _candidates(self) -> list[dict]:
        """The grid's points, each a dict over C and gamma only."""
        candidates = list(ParameterGrid(self.param_grid))
        for params in candidates:
            unknown = sorted(set(params) - set(GRID_KEYS))
            if unknown:
                raise ValueError(f"param_grid may search over C and gamma only; got {unknown}")
        return candidates

    def fit(self, X, y):
        """Cross-validate every point of the grid on (X, y), then refit the best one.

        Parameters
        ----------
        X, y : array-like
            The features (dense, or sparse: converted to CSR) and the labels, two classes or more.

        Returns
        -------
        self : GridSearchCV
        """
        X, y, codes = self._validated(X, y)
        candidates = self._candidates()
        splits = self._splits(X, y)
        points = self._evaluate(X, codes, candidates, splits, desc=f"grid search ({self.method})")
        self.cv_results_ = _cv_results(candidates, points, len(splits))
        best = int(np.argmin(self.cv_results_["rank_test_score"]))
        return self._conclude(X, y, len(splits), best_index=best)

    def _validated(self, X, y):
        """(X, y, class codes) after checking the estimator, the method and the data."""
        warmup()  # compiled before the columns' workers start, and never by two processes at once
        if not isinstance(self.estimator, SVC):
            raise TypeError(f"estimator must be an alphaseed.SVC, got {type(self.estimator).__name__}")
        if self.method not in SEARCH_METHODS:
            raise ValueError(f"method must be one of {', '.join(SEARCH_METHODS)}; got {self.method!r}")
        unsearched = {name: value for name, value in self.estimator.get_params().items()
                      if name in ("class_weight", "probability") and value not in (None, False)}
        if unsearched:
            raise ValueError(f"the seeded search scores one C for all classes by accuracy; the "
                             f"estimator's {unsearched} would be ignored. Search it with "
                             f"scikit-learn's GridSearchCV, which takes alphaseed.SVC")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        classes, codes = encode_classes(y)
        if self.estimator.break_ties and classes.size > 2:
            raise ValueError("the seeded search scores by LibSVM's vote; break_ties=True would be "
                             "ignored. Search it with scikit-learn's GridSearchCV, which takes alphaseed.SVC")
        return X, y, codes

    def _evaluate(self, X, codes, candidates: list[dict], splits, *, desc: str) -> list[PointResult]:
        """Each candidate's ``PointResult`` on ``splits``, in the candidates' order: the candidates
        grouped into gamma columns, each column searched by ``search_column``."""
        from tqdm.auto import tqdm
        base = self.estimator.get_params()
        points = [(float(p.get("C", base["C"])), _column_gamma(p.get("gamma", base["gamma"]), X))
                  for p in candidates]
        columns: dict = {}   # gamma (a number or "scale") -> its C values
        for C, gamma in points:
            columns.setdefault(gamma, []).append(C)
        options = dict(method=self.method, options=solver_options(base))
        jobs = [(gamma, sorted(set(Cs))) for gamma, Cs in columns.items()]
        if codes.max() > 1:
            # Pairs of classes read the kernel in two runs of columns (one_vs_one.grouped_by_class).
            # The gradient carry sums by global index, so along a chain of C its last bits, and a
            # few iterations, may differ from the ungrouped order's (docs: benchmarks, "Ten digits").
            order, moved_to = grouped_by_class(codes)
            X, codes = X[order], codes[order]
            splits = [(moved_to[train], moved_to[test]) for train, test in splits]
        with tqdm(total=sum(len(Cs) for _, Cs in jobs) * len(splits), unit="fit", desc=desc,
                  disable=not self.verbose) as bar:
            workers = resolve_n_jobs(self.n_jobs)
            # The columns are threads of this process unless the caller chose processes or a
            # cluster (joblib.parallel_backend("dask")): threads start at once and share the loaded
            # solver and the dot products. They launch Numba's parallel loops at the same time,
            # which only some of its threading layers allow; under the others they run in turn.
            in_process = getattr(get_active_backend(prefer="threads")[0], "uses_threads", False)
            budget = default_memory_budget()
            if in_process:
                # None spreads the search over every thread of Numba's pool, as its parallel loops
                # use them; a thread per column at most, so that each gets its share of the cores.
                asked = (_columns_at_once(numba.get_num_threads(), X.shape[0], options["options"].kernel_mode,
                                          takes_bit_sets(X), budget) if self.n_jobs is None else workers)
                workers = min(asked, len(jobs)) if concurrent_launches_are_safe() else 1
            # Columns side by side in this process share its memory: each kernel takes its share,
            # and the dot products they share count against one column's.
            share = budget // workers if workers > 1 and in_process else None
            options["memory_budget"] = share
            # One pass over the data: every column's Gram matrix comes from the same dot products.
            dots = (shared_dots(X, options["options"].kernel_mode, memory_budget=share)
                    if len(jobs) > 1 and (workers == 1 or in_process) else None)
            if workers == 1:
                outcomes = [search_column(X, codes, gamma, Cs, splits, progress=bar.update,
                                          dots=dots, **options) for gamma, Cs in jobs]
            else:
                # Processes get X whole, not as loky's read-only memory map, for which Numba would
                # compile the solver again. A process's columns run on its own Numba pool (joblib
                # sets NUMBA_NUM_THREADS in loky's workers to their share, and a cluster's workers
                # have their own cores). Threads' columns send their chains to one pool of the
                # process's threads, as many as the columns can have chains under way (with few
                # chains, each gets several): each column's thread only orchestrates and predicts,
                # and the threads of a column that ended take up the chains of those still running.
                in_flight = workers * _chains_under_way(int(codes.max()) + 1, len(splits),
                                                       any(len(Cs) > 1 for _, Cs in jobs))
                shared = (chain_threads(min(numba.get_num_threads(), in_flight)) if in_process
                          else nullcontext(None))
                # The columns' BLAS calls set the process's one BLAS thread count in turn, each
                # restoring what it found; this context puts back the count from before them all.
                with blas_threads(0), shared as submit:
                    column = (partial(_search_column_on_threads, max(1, numba.get_num_threads() // workers),
                                      submit=submit) if in_process else search_column)
                    columns_done = Parallel(n_jobs=workers if in_process else self.n_jobs, prefer="threads",
                                            return_as="generator", max_nbytes=None)(
                        delayed(column)(X, codes, gamma, Cs, splits, dots=dots, **options) for gamma, Cs in jobs)
                    outcomes = []
                    for (_, Cs), outcome in zip(jobs, columns_done):
                        outcomes.append(outcome)
                        bar.update(len(Cs) * len(splits))
        by_point = {(C, gamma): point for (gamma, _), outcome in zip(jobs, outcomes)
                    for C, point in outcome.items()}
        return [by_point[p] for p in points]

    def _conclude(self, X, y, n_splits: int, *, best_index: int):
        """Warn of capped fits, set the best point's attributes and refit it; returns self."""
        _warn_of_capped_fits(self.cv_results_["params"], self.cv_results_["iteration_cap_hits"], n_splits)
        self.n_splits_ = n_splits
        self.best_index_ = best_index
        self.best_params_ = self.cv_results_["params"][best_index]
        self.best_score_ = float(self.cv_results_["mean_test_score"][best_index])
        if self.refit:
            start = time.perf_counter()
            self.best_estimator_ = clone(self.estimator).set_params(**self.best_params_).fit(X, y)
            self.refit_time_ = time.perf_counter() - start
        return self

    def _best(self) -> SVC:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    @property
    def classes_(self):
        """The classes, sorted, as the refitted best estimator has them."""
        return self._best().classes_

    def predict(self, X):
        """The best estimator's class of each row of ``X``, one of ``classes_`` (needs ``refit``).

        Parameters
        ----------
        X : array-like or sparse matrix
            Rows to classify.
        """
        return self._best().predict(X)

    def decision_function(self, X):
        """The best estimator's decision values of each row (``SVC.decision_function``; needs ``refit``).

        Parameters
        ----------
        X : array-like or sparse matrix
            Instances with the searched data's features.
        """
        return self._best().decision_function(X)

    def score(self, X, y):
        """The best estimator's accuracy on (X, y), a fraction (needs ``refit``).

        Parameters
        ----------
        X : array-like or sparse matrix
            The test instances.
        y : array-like
            Their true classes.
        """
        return self._best().score(X, y)


def _column_gamma(gamma, X):
    """A grid column's gamma: a number, or "scale", which depends on each training set."""
    return gamma if isinstance(gamma, str) and gamma == "scale" else resolve_gamma(gamma, X)


def _warn_of_capped_fits(candidates: list[dict], hits: np.ndarray, n_splits: int) -> None:
    """One ConvergenceWarning naming the points whose SMO stopped at the iteration cap."""
    capped = np.flatnonzero(hits)
    if capped.size:
        named = "; ".join(f"{candidates[i]} in {hits[i]} of {n_splits} splits" for i in capped[:5])
        more = f" and {capped.size - 5} more points" if capped.size > 5 else ""
        warnings.warn(f"SMO stopped at the iteration cap before converging at {named}{more}: the "
                      f"scores of those points come from solutions that are not optimal "
                      f"(cv_results_['iteration_cap_hits']).", ConvergenceWarning, stacklevel=4)


def _cv_results(candidates: list[dict], points: list[PointResult], n_splits: int) -> dict:
    """scikit-learn's cv_results_ layout for one accuracy score, plus SMO iterations and the
    number of splits whose SMO stopped at the iteration cap."""
    scores = np.array([p.scores for p in points])
    iterations = np.array([p.iterations for p in points], dtype=np.int64)
    results: dict = {"params": candidates}
    for key in GRID_KEYS:
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object),
                                   mask=[key not in p for p in candidates])
        for i, params in enumerate(candidates):
            if key in params:
                column[i] = params[key]
        results[f"param_{key}"] = column
    for what, values in (("fit_time", [p.fit_seconds for p in points]),
                         ("score_time", [p.score_seconds for p in points])):
        results[f"mean_{what}"] = np.mean(values, axis=1)
        results[f"std_{what}"] = np.std(values, axis=1)
    for i in range(n_splits):
        results[f"split{i}_test_score"] = scores[:, i]
    means = scores.mean(axis=1)
    results["mean_test_score"] = means
    results["std_test_score"] = scores.std(axis=1)
    if np.isnan(means).all():
        raise ValueError("every split of every point failed: each training set held one class only")
    if np.isnan(means).any():
        warnings.warn(f"One or more of the test scores are non-finite: {means}", UserWarning, stacklevel=3)
    # As scikit-learn ranks them: a point with a failed split ties with the worst.
    results["rank_test_score"] = rankdata(-np.nan_to_num(means, nan=np.nanmin(means) - 1),
                                          method="min").astype(np.int32)
    for i in range(n_splits):
        results[f"split{i}_iterations"] = iterations[:, i]
    results["total_iterations"] = iterations.sum(axis=1)
    results["iteration_cap_hits"] = np.array([np.count_nonzero(p.capped) for p in points])
    return results
