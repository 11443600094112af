"""k-fold and leave-one-out cross-validation, one loop for every method.

Round h (1-based) tests on fold h and trains on the other folds concatenated in fold order
(``folds``); `libsvm`, `cold` and the seeded methods all see exactly these training
sets in this order.

- `libsvm`: the real LibSVM (``baseline``).
- `cold`: our solver from alpha = 0 in every round.
- `ato`, `mir`, `sir` (k >= 3 and leave-one-out): round 1 is cold; round h+1 starts from the
  seeder's alpha built from round h's solution, with S = the k-2 shared folds, R = fold h+1,
  T = fold h.
- Other folds (``cv=`` a scikit-learn splitter or (train, test) index arrays, any sizes, any
  overlap): the rounds run in the order given, and each seeded round starts from the previous
  one with S = the instances of both training sets, R = those of the previous only, T = those
  of the next only; the k-fold rounds are the special case above.
- `avg`, `top` (leave-one-out only) and `full` (any folds): one model is trained on all
  instances first (every instance of a training set, in dataset order); its time is reported
  as ``seconds_full_model`` and counts in ``init``, its iterations as ``iterations_full_model``
  and in ``iterations``. The round that trains on X starts from that model with R = the
  instances X lacks and T empty (R = {t} at leave-one-out), so no round depends on another.

``chains`` splits the rounds into that many runs of consecutive rounds (``chain_layout``: 10 rounds as 3 chains are 1-4, 5-7, 8-10). Each chain starts
as round 1 does, cold for ATO, MIR and SIR, and seeds each of its later rounds from the one before;
AVG, TOP and FULL seed every round from the full model anyway. The chains run at once on Numba's
threads, each solver on its share of them, where Numba's threading layer lets two threads launch
parallel loops at once (OpenMP, TBB), and one after the other otherwise: the result depends on
``chains`` alone, never on the threads. Chains need every round (no ``max_rounds``), our solver,
and a kernel mode whose rows no two rounds write (``gram`` or ``cache``). Their rounds overlap, so
``seconds`` is then the wall time of kernel and rounds, while ``init`` and ``rest`` still add up
the rounds' own times. By default ``chains`` follows ``n_jobs``: one chain per job, at most one per
round, and for ATO, MIR and SIR at most one per two rounds, so that every chain seeds; ``n_jobs=None``
gives one chain, the paper's single sequence. A negative ``n_jobs`` counts the machine's cores, so the
seeded methods' iterations then depend on the machine; a positive one does not.

Our methods read kernel values through ``KernelMatrix`` in ``kernel_mode`` (default ``auto``:
``cache`` for binary features, else the Gram matrix when it fits the memory budget, else
``shared``; ``cache`` is LibSVM's
per-round row cache, what the paper measured and what the pipeline's paper-faithful
experiments pin); the mode only changes time and memory, never iterations or predictions.

Time (the paper's Table 1 split): ``init`` = seeding (+ the full model of avg/top), ``rest`` =
gradient initialisation + training + prediction, ``total`` = kernel + init + rest. Numba
compilation happens before timing and is reported as ``seconds_compile``; meanwhile another
thread faults in the pages of the Gram matrix (``kernel.prefaulted_gram``), and whatever of
that is left when the kernel is built counts in the kernel's time. For `libsvm` only
``svm_train`` and ``svm_predict`` are timed; building LibSVM's data structures is
``seconds_conversion`` and is not part of the total. With ``max_rounds`` only the first rounds
run; ``seconds``, ``seconds_init``, ``seconds_rest`` and ``iterations`` are then the measured
figure plus the mean per-round figure times the rounds left (``estimated`` is true; ``estimate``),
with the seconds' 95 % interval in ``interval``, while accuracy is over the instances tested and
``iterations_measured`` over the rounds run. The mean is over the rounds run that are like the rounds
left: every round for `libsvm`, `cold`, `avg`, `top` and `full` (whose every round is seeded
from the full model), but only the seeded rounds 2..R for `ato`, `mir` and `sir`, whose cold round 1
would inflate ``rest`` and deflate ``init``. Those methods therefore refuse ``max_rounds = 1``
(no seeded round to extrapolate from) unless that already covers every round. ``until_interval``
stops a cut run sooner, once its iterations' interval (``interval_iterations``) is narrow enough.
"""

from __future__ import annotations

import dataclasses
import numbers
import sys
import threading
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from tqdm.auto import tqdm

from ..errors import ConfigError, SolverInputError
from ..kernel import (
    LIBSVM_CACHE_MB, KernelMatrix, chain_threads, default_memory_budget, numba_threads, prefaulted_gram,
    resolve_gamma, resolve_mode, resolve_n_jobs, takes_bit_sets, threads_may_share,
)
from ..seeding import FROM_FULL_MODEL, LOO_ONLY, SEEDERS
from ..solver import SolverOptions, check_C, reusing_memory, solve, warmup
from .estimate import cold_first_round, extrapolate, interval_share, settled
from .journal import RoundJournal
from .folds import CUSTOM, LEAVE_ONE_OUT, KFoldRounds, custom_rounds, resolve_k, stratified_folds, trained_on
from .results import PAPER_KERNEL_MODE, CVResult, RoundRecord, utc_now
from .rounds import RoundSeconds, run_round

LIBSVM = "libsvm"
COLD = "cold"


class ProgressCallback(Protocol):
    """What ``cross_validate`` calls after each round: ``progress(rounds_done, rounds_to_run,
    iterations_of_the_round, elapsed_seconds)``."""

    def __call__(self, rounds_done: int, rounds_to_run: int, iterations: int, elapsed_seconds: float) -> None:
        ...



def cross_validate(X, y, C: float, gamma, k=None, method: str = COLD, *, cv=None, seed: int = 0,
                   max_rounds: int | None = None, options: SolverOptions | None = None, n_jobs: int | None = None,
                   chains: int | None = None, until_interval: float | None = None,
                   journal: RoundJournal | None = None, progress: ProgressCallback | None = None,
                   verbose: int = 0) -> CVResult:
    """Cross-validate C-SVC with the Gaussian kernel on (X, y) by ``method``; see the module doc.

    Parameters
    ----------
    X : array-like or sparse matrix
        The features, one row per instance.
    y : array-like
        Two classes, any two numbers; the larger is the positive one (+1 in ``CVResult.predictions``).
    C : float
        The penalty.
    gamma : float or {"scale", "auto"}
        The Gaussian kernel's gamma, or scikit-learn's rule for it, applied to all of X.
    k : int or "loo", optional
        LibSVM's stratified folds drawn with ``seed``, or leave-one-out; or give ``cv``.
    method : str, default "cold"
        ``libsvm``, ``cold``, or a seeder: ``ato``, ``mir``, ``sir``, ``full``; ``avg``, ``top``
        at leave-one-out.
    cv : splitter or iterable, optional
        A scikit-learn splitter, or (train, test) index arrays, run in the order given.
    seed : int, default 0
        The seed of the folds.
    max_rounds : int, optional
        Run only the first rounds; estimate the totals (seconds and iterations) from them.
    until_interval : float, optional
        With ``max_rounds``: stop before it once the estimated iterations' 95 % interval is within
        +- this share of them (``estimate.settled``), the same rounds in every run of it.
    journal : RoundJournal, optional
        Keep each finished round there, and resume at the first round it lacks (one chain only):
        a run cut short loses only the round in flight, and the result is the uncut run's.
    options : SolverOptions, optional
        The solver's settings and kernel mode.
    n_jobs : int, optional
        The cores, scikit-learn's way (None: 1; -1: all), spent on as many chains side by side.
    chains : int, optional
        Runs of consecutive rounds (``chain_layout``) at once; None: one per job, at most half the
        rounds for ATO, MIR and SIR (one where ``max_rounds``, ``libsvm`` or ``shared`` need a
        single run). ATO's, MIR's and SIR's results depend on it (each chain starts cold), hence on
        ``n_jobs``, and with a negative ``n_jobs`` on the machine's cores.
    progress : callable, optional
        Called after each round (``ProgressCallback``).
    verbose : int, default 0
        Show the compilation and a progress bar of the rounds (on stderr).

    Returns
    -------
    CVResult
    """
    options, started = SolverOptions() if options is None else options, utc_now()
    y, classes = _labels(y)
    plan = _plan(k, cv, X, y, seed=seed, method=method, max_rounds=max_rounds, until_interval=until_interval)
    C, gamma = check_C(C), resolve_gamma(gamma, X)
    engine = (_LibsvmEngine(X, y, C, gamma, options) if method == LIBSVM
              else _SolverEngine(X, y, C, gamma, method=method, splits=plan.splits, options=options))
    jobs = resolve_n_jobs(n_jobs)
    plan.layout = _layout(plan.rounds, method, engine.kernel_mode, chains if chains is not None else jobs,
                          explicit=chains is not None, max_rounds=max_rounds)
    if journal is not None:
        if len(plan.layout) > 1:
            raise ConfigError("a journal keeps one chain of rounds; run with chains=1")
        journal.open(dict(method=method, k=plan.k, n_folds=len(plan.splits), seed=seed, C=C, gamma=gamma,
                          max_rounds=max_rounds, until_interval=until_interval, options=dataclasses.asdict(options)),
                     X, y, cold_first_round=method == COLD or cold_first_round(method))
    with numba_threads(jobs):
        engine.compile(verbose=verbose)
        outcome = _run_rounds(engine, plan, y, progress, verbose, journal)
    settings = dict(method=method, k=plan.k, n_folds=len(plan.splits), n=y.shape[0], dim=engine.dim, seed=seed,
                    max_rounds=max_rounds, until_interval=until_interval, kernel_mode=engine.kernel_mode, chains=len(plan.layout), C=C, gamma=gamma,
                    eps=float(options.eps), cache_mb=float(engine.cache_mb), shrinking=bool(options.shrinking),
                    folds=plan.folds, started_utc=started, classes=classes, requested_kernel_mode=engine.requested_mode)
    return _summarise(outcome, engine, settings)


@dataclass
class _Plan:
    """The folds as reported (``k``), each instance's fold, the rounds' splits, the most rounds to run,
    the method, the interval at which to stop sooner, and the chains (``_layout``, once the kernel mode
    is known)."""

    k: int | str
    folds: np.ndarray
    splits: list
    rounds: int
    method: str = COLD
    until_interval: float | None = None
    layout: list[list[int]] | None = None

    def narrow_enough(self, records: list[RoundRecord], full_model_iterations: int) -> bool:
        """Whether the rounds run estimate the iterations within ``until_interval`` (``estimate.settled``)."""
        return self.until_interval is not None and settled(
            [r.iterations for r in records], len(self.splits) - len(records), self.method, self.until_interval,
            full_model_iterations)


def _plan(k, cv, X, y, *, seed: int = 0, method: str = COLD, max_rounds=None, until_interval=None) -> _Plan:
    """The folds and the rounds to run, each checked against the method."""
    k, folds, splits = _splits(k, cv, X, y, seed)
    n_folds = len(splits)
    _check_method(method, k == LEAVE_ONE_OUT, None if k == CUSTOM else n_folds)
    if until_interval is not None and (max_rounds is None or not 0 < until_interval < 1):
        raise ConfigError(f"until_interval is a share between 0 and 1 of the iterations estimated from max_rounds; "
                          f"got {until_interval!r} with max_rounds {max_rounds!r}")
    return _Plan(k, folds, splits, _rounds_to_run(max_rounds, n_folds, method), method, until_interval)


def _layout(rounds: int, method: str, kernel_mode: str, chains: int, *, explicit: bool, max_rounds) -> list:
    """The chains of rounds: ``chains`` of them, asked for or derived from ``n_jobs``; a derived
    count falls back to one sequence where several cannot run, an explicit one is refused there.

    A derived count leaves every chain of ATO, MIR or SIR two rounds at least: a chain of one round
    is a cold start, and the method asked for would seed nothing."""
    single = max_rounds is not None or method == LIBSVM or not threads_may_share(kernel_mode)
    if not explicit:
        most = max(1, rounds // 2) if cold_first_round(method) else rounds
        return chain_layout(rounds, 1 if single else min(chains, most))
    layout = chain_layout(rounds, chains)
    if len(layout) > 1 and (max_rounds is not None or method == LIBSVM):
        raise ConfigError("chains > 1 runs every round of our solver: it takes neither max_rounds nor "
                          f"method {LIBSVM!r}")
    if len(layout) > 1 and not threads_may_share(kernel_mode):
        raise ConfigError("chains > 1 need kernel mode 'gram' or 'cache': the 'shared' row cache is one for all "
                          "rounds and cannot be written by two at once")
    return layout


@dataclass
class _Outcome:
    """What the rounds leave: their records in round order, each instance's prediction (0 where not
    tested), the labels, and the wall seconds of kernel and rounds where chains overlapped."""

    rounds: list[RoundRecord]
    predictions: np.ndarray
    y: np.ndarray
    elapsed: float | None = None
    resumed: int = 0
    shared: int = 0


def _run_rounds(engine, plan: _Plan, y: np.ndarray, progress: ProgressCallback | None, verbose: int,
                journal: RoundJournal | None = None) -> _Outcome:
    """Build the kernel and run every chain of rounds, those the journal holds read back; the kernel's
    time is in ``elapsed``."""
    predictions = np.zeros(y.shape[0], dtype=np.int8)
    clock = time.perf_counter()
    engine.prepare(journal)
    finished = journal.finished() if journal is not None else {}
    lock = threading.Lock()
    done, shared = [], []
    bar = tqdm(total=plan.rounds, unit="round", desc="cross-validation", disable=not verbose, file=sys.stderr)
    seeds_from_previous = cold_first_round(plan.method)

    @reusing_memory()   # the active-set finish's, from one round to the next
    def run_chain(chain: list[int]) -> list[RoundRecord]:
        records, previous = [], engine.first_previous()
        for h in chain:
            if plan.narrow_enough(records, engine.iterations_full_model):
                break
            train, test = plan.splits[h - 1]
            kept = journal.kept_first_round() if journal is not None and h == 1 and h not in finished else None
            if h in finished:
                record, predicted = finished[h]
                if seeds_from_previous and h + 1 not in finished:
                    previous = (train, journal.solution(h))
            elif kept is not None:
                # not copied into this run's journal: a resumed run reads it from the shared folder again
                record, predicted, solution = kept
                previous = (train, solution)
                shared.append(h)
            else:
                record, predicted, previous = engine.run_round(h, (train, test), previous)
                record.n_correct = int(np.sum(predicted == y[test]))
                if journal is not None:
                    journal.write_round(record, predicted, previous[1] if seeds_from_previous else None)
                    if h == 1 and previous is not None:
                        journal.keep_first_round(record, predicted, previous[1])
            predictions[test] = predicted
            records.append(record)
            with lock:
                done.append(h)
                bar.update(1)
                if progress is not None:
                    progress(len(done), plan.rounds, record.iterations, time.perf_counter() - clock)
        return records

    with bar:
        rounds = sorted((record for chain in _run_chains(run_chain, plan.layout) for record in chain),
                        key=lambda record: record.round)
    elapsed = time.perf_counter() - clock if len(plan.layout) > 1 else None
    return _Outcome(rounds, predictions, y, elapsed, resumed=sum(r.round in finished for r in rounds),
                    shared=len(shared))


def chain_layout(rounds: int, chains: int) -> list[list[int]]:
    """The rounds 1..``rounds`` as ``chains`` runs of consecutive rounds.

    The earlier runs are one round longer where they cannot all be as long. Each run starts as
    round 1 does (cold for ATO, MIR and SIR) and seeds every later round from the one before, so
    the result depends on ``chains`` and never on the threads.

    Parameters
    ----------
    rounds : int
        The rounds to run.
    chains : int
        The runs to split them into, from 1 to ``rounds``.

    Returns
    -------
    list of list of int
        Each chain's rounds, from 1.
    """
    if isinstance(chains, bool) or not isinstance(chains, (int, np.integer)) or not 1 <= chains <= rounds:
        raise ConfigError(f"chains must be an integer from 1 to the {rounds} rounds run, got {chains!r}")
    base, longer = divmod(rounds, chains)
    layout, start = [], 1
    for c in range(chains):
        length = base + (c < longer)
        layout.append(list(range(start, start + length)))
        start += length
    return layout


def _run_chains(run_chain, layout: list[list[int]]) -> list[list[RoundRecord]]:
    """Each chain's rounds, the chains at once as threads of this process, which share its kernel
    (``kernel.chain_threads``): the same rounds as one after the other."""
    with chain_threads(len(layout)) as submit:
        chains = [submit(run_chain, chain) for chain in layout]
        return [chain.result() for chain in chains]


def _summarise(outcome: _Outcome, engine, settings: dict) -> CVResult:
    """The CV's result from its rounds; ``outcome.elapsed``, the wall seconds of kernel and rounds, is
    the measured time where chains overlapped."""
    rounds, method = outcome.rounds, settings["method"]
    rounds_left = settings["n_folds"] - len(rounds)
    seed_seconds = [r.seconds.seed for r in rounds]
    rest_seconds = [r.seconds.rest for r in rounds]
    iterations = [r.iterations for r in rounds]
    fixed = engine.seconds_kernel + engine.seconds_full_model
    init = engine.seconds_full_model + extrapolate(seed_seconds, rounds_left, method)
    rest = extrapolate(rest_seconds, rounds_left, method)
    measured = fixed + sum(seed_seconds) + sum(rest_seconds)
    if outcome.elapsed is not None:  # chains overlapped: the rounds' own seconds add up to more than the run took
        measured = outcome.elapsed
    predictions, y = outcome.predictions, outcome.y
    tested = predictions != 0
    n_correct = int(np.sum(predictions[tested] == y[tested]))
    n_tested = int(tested.sum())
    return CVResult(
        **settings,
        accuracy=100.0 * n_correct / n_tested,
        n_tested=n_tested,
        n_correct=n_correct,
        predictions=predictions,
        iterations=engine.iterations_full_model + round(extrapolate(iterations, rounds_left, method)),
        iterations_measured=engine.iterations_full_model + int(sum(iterations)),
        seconds=float(measured if outcome.elapsed is not None else engine.seconds_kernel + init + rest),
        seconds_measured=float(measured),
        seconds_init=float(init),
        seconds_rest=float(rest),
        seconds_compile=engine.seconds_compile,
        seconds_kernel=engine.seconds_kernel,
        seconds_conversion=engine.seconds_conversion,
        seconds_full_model=engine.seconds_full_model,
        iterations_full_model=engine.iterations_full_model,
        estimated=rounds_left > 0,
        rounds_resumed=outcome.resumed,
        rounds_shared=outcome.shared,
        interval=interval_share([r.seconds.total for r in rounds], rounds_left, method, fixed),
        interval_iterations=interval_share(iterations, rounds_left, method, engine.iterations_full_model),
        iteration_cap_hit=any(r.iteration_cap_hit for r in rounds),
        rounds=rounds,
        finished_utc=utc_now(),
    )


class _LibsvmEngine:
    """The real LibSVM on each round's training set."""

    def __init__(self, X, y, C: float, gamma: float, options: SolverOptions):
        from . import baseline   # LibSVM's bindings load only for the method that runs LibSVM

        self._baseline = baseline
        self._X, self._y = X, y
        self.dim = int(X.shape[1])
        self.kernel_mode = self.requested_mode = PAPER_KERNEL_MODE
        self.cache_mb = LIBSVM_CACHE_MB if options.cache_mb is None else float(options.cache_mb)
        self._param = self._baseline.libsvm_parameter(C, gamma, float(options.eps), self.cache_mb, bool(options.shrinking))
        self.seconds_kernel = self.seconds_full_model = self.seconds_conversion = 0.0
        self.iterations_full_model = 0

    def compile(self, verbose: int = 0) -> None:
        """Compile libsvm-official's converter before anything is timed."""
        self.seconds_compile = self._baseline.warmup()

    def prepare(self, journal=None) -> None:
        """Convert the dataset once; that counts as conversion, outside the total."""
        start = time.perf_counter()
        self._data = self._baseline.LibsvmData(self._X, self._y)
        self.seconds_conversion += time.perf_counter() - start

    def first_previous(self):
        return None

    def run_round(self, h: int, split: tuple, previous):
        """Round h by LibSVM, which seeds nothing: ``previous`` is ignored and None passed on."""
        train, test = split
        start = time.perf_counter()
        prob = self._data.problem(train)
        self.seconds_conversion += time.perf_counter() - start
        model, fit = self._baseline.train_libsvm(self._data, prob, self._param)
        predicted, seconds_predict = self._baseline.predict_libsvm(model, self._data, test)
        record = RoundRecord(
            round=h, train_size=len(train), test_size=len(test), iterations=fit.iterations,
            n_sv=fit.n_sv, n_bounded_sv=fit.n_bounded_sv, objective=fit.objective, rho=fit.rho,
            n_correct=0, iteration_cap_hit=fit.iteration_cap_hit,
            seconds=RoundSeconds(train=fit.seconds_train, predict=seconds_predict),
        )
        return record, predicted.astype(np.int8), None


class _SolverEngine:
    """Our solver, cold or seeded; `prepare` builds the kernel and, for avg/top/full, the full
    model."""

    def __init__(self, X, y, C: float, gamma: float, *, method: str, splits, options: SolverOptions):
        self._X, self._y, self._splits = X, y, splits
        self._C, self._gamma = C, gamma
        self._options = options
        self.requested_mode = options.kernel_mode
        # Resolved before the Gram's buffer is taken: the memory it takes is not free anymore.
        self._memory_budget = default_memory_budget()
        self.kernel_mode = resolve_mode(options.kernel_mode, y.shape[0], self._memory_budget,
                                        bit_sets=takes_bit_sets(X))
        self.dim = int(X.shape[1])
        self.seconds_conversion = self.seconds_full_model = 0.0
        self.iterations_full_model = 0
        self._seeder = None if method == COLD else SEEDERS[method]
        self._from_full_model = method in FROM_FULL_MODEL
        self._full_model = None   # (every training instance, its SolveResult) for avg, top and full

    def compile(self, verbose: int = 0) -> None:
        """Start faulting in the Gram's pages and compile, before timing."""
        gram_buffer = prefaulted_gram(self._y.shape[0]) if self.kernel_mode == "gram" else None
        self.seconds_compile = float(warmup(verbose=verbose))
        self._gram_buffer = gram_buffer

    def prepare(self, journal: RoundJournal | None = None) -> None:
        """Build the kernel (the kernel's seconds) and, for avg, top and full, the full model (or read it
        back from the journal, with the seconds it took)."""
        start = time.perf_counter()
        buffer = self._gram_buffer.result() if self._gram_buffer is not None else None
        self._gram_buffer = None
        self.kernel = KernelMatrix(self._X, self._gamma, mode=self.kernel_mode,
                                   memory_budget=self._memory_budget, gram_buffer=buffer)
        self.seconds_kernel = time.perf_counter() - start
        self.kernel_mode = self.kernel.mode
        # The most a round's row cache takes: the default on bit sets starts smaller (``solve``).
        self.cache_mb = self._options.cache_mb or self.kernel.tail_row_cache_mb
        if self._from_full_model:
            everything = trained_on(self._splits)
            kept = journal.full_model() if journal is not None else None
            if kept is None:
                start = time.perf_counter()
                full = solve(self.kernel, self._y, everything, self._C, options=self._options)
                seconds = time.perf_counter() - start
                if journal is not None:
                    journal.write_full_model(full, seconds)
            else:
                full, seconds = kept
            self._full_model = (everything, full)
            self.seconds_full_model = seconds
            self.iterations_full_model = int(full.iterations)

    def first_previous(self):
        """What a chain's first round is seeded from: the full model, or nothing (a cold start)."""
        return self._full_model

    def run_round(self, h: int, split: tuple, previous):
        """Round h seeded from ``previous`` = (training index, SolveResult), or cold when it is None; returns
        the record, the predicted labels and what seeds the next round."""
        train, test = split
        done = run_round(self.kernel, self._y, split, self._C, options=self._options, seeder=self._seeder,
                         previous=previous)
        solution = done.solution
        record = RoundRecord(
            round=h, train_size=len(train), test_size=len(test),
            iterations=int(solution.iterations), n_sv=int(solution.n_sv),
            n_bounded_sv=int(solution.n_bounded_sv), objective=float(solution.objective),
            rho=float(solution.rho), n_correct=0,
            iteration_cap_hit=bool(solution.iteration_cap_hit), seconds=done.seconds,
            kernel=solution.kernel,
        )
        # a cold round ignores what it is given; its own solution goes on all the same, for the journal's
        # first round shared with the seeders
        following = previous if self._from_full_model else (train, solution)
        return record, done.predicted, following


def _labels(y) -> tuple[np.ndarray, tuple]:
    """(y as -1 / +1, the two classes): any two labels, the larger the positive one (-1 and +1 map to
    themselves)."""
    y = np.asarray(y).ravel()
    if y.size == 0:
        raise SolverInputError("the dataset is empty")
    if y.dtype.kind not in "biuf":
        raise SolverInputError(f"labels must be numbers; got {y.dtype}")
    if not np.isfinite(y).all():
        raise SolverInputError("labels contain NaN or infinity")
    classes = np.unique(y)
    if classes.size > 2:
        raise SolverInputError(f"cross_validate separates two classes; got {classes.size} labels "
                               f"({classes[:5].tolist()}...). For more, cross-validate one point with "
                               f"alphaseed.GridSearchCV(SVC(C=..., gamma=...), {{}}, cv=k), which seeds "
                               f"each pair of classes along the folds")
    if classes.size == 1:   # one class, which every round predicts
        return np.full(y.size, 1.0 if classes[0] > 0 else -1.0), (classes[0].item(),)
    return np.where(y == classes[1], 1.0, -1.0), tuple(classes.tolist())


def _splits(k, cv, X, y, seed):
    """(k as reported, fold of each instance, [(train, test) of each round])."""
    if (k is None) == (cv is None):
        raise ConfigError("give the folds either as k or as cv (exactly one of the two)")
    spec = k if cv is None else cv
    if isinstance(spec, (str, numbers.Number)):
        n_folds = resolve_k(spec, y.shape[0])
        folds = stratified_folds(y, n_folds, seed)
        return spec, folds, KFoldRounds(folds, n_folds)
    folds, splits = custom_rounds(spec, X, y)
    return CUSTOM, folds, splits


def _check_method(method: str, leave_one_out: bool, n_folds: int | None) -> None:
    """``n_folds`` is None for custom splits, whose rounds may share anything."""
    if method in (LIBSVM, COLD):
        return
    if method not in SEEDERS:
        known = ", ".join([LIBSVM, COLD, *sorted(SEEDERS)])
        raise ConfigError(f"unknown method {method!r}; choose one of {known}")
    if method in LOO_ONLY and not leave_one_out:
        raise ConfigError(f"method {method!r} is for leave-one-out only: use k='loo'")
    if n_folds is not None and n_folds < 3 and method not in FROM_FULL_MODEL:
        raise ConfigError(f"method {method!r} needs k >= 3 (k = 2 shares no fold between rounds)")


def _rounds_to_run(max_rounds, n_folds: int, method: str) -> int:
    """How many rounds run: all of them, or the first ``max_rounds``."""
    if max_rounds is None:
        return n_folds
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) or max_rounds < 1:
        raise ConfigError(f"max_rounds must be a positive integer or None, got {max_rounds!r}")
    rounds = min(int(max_rounds), n_folds)
    if rounds == 1 < n_folds and cold_first_round(method):
        raise ConfigError(
            f"max_rounds = 1 runs only the cold round 1 of {method!r}, which says nothing of its "
            "seeded rounds: use max_rounds >= 2 to estimate the total from them"
        )
    return rounds
