"""What a cross-validation leaves: every round's record and the run's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from ..solver import KernelCounts
from .rounds import RoundSeconds

# LibSVM's per-round row cache: the paper's setting, and what the `libsvm` method always uses.
PAPER_KERNEL_MODE = "cache"


@dataclass
class RoundRecord:
    """One round of a cross-validation, as its run record keeps it.

    Parameters
    ----------
    round : int
        The round, from 1.
    train_size, test_size : int
        The sizes of its training and test sets.
    iterations : int
        SMO's (or LibSVM's) iterations.
    n_sv, n_bounded_sv : int
        Support vectors, and those at the bound C.
    objective, rho : float
        The dual objective and LibSVM's rho at the solution.
    n_correct : int
        Test instances predicted correctly.
    iteration_cap_hit : bool
        Whether the solver stopped at its iteration cap.
    seconds : RoundSeconds
        Where the round's time went.
    kernel : KernelCounts or None
        Our solver's kernel work (None for ``libsvm``).
    """

    round: int
    train_size: int
    test_size: int
    iterations: int
    n_sv: int
    n_bounded_sv: int
    objective: float
    rho: float
    n_correct: int
    iteration_cap_hit: bool
    seconds: RoundSeconds
    kernel: KernelCounts | None = None


@dataclass
class CVResult:
    """The outcome of ``cross_validate``: the settings, accuracy, iterations, seconds and every
    round (see the module doc for how the seconds are split and estimated).

    Parameters
    ----------
    method : str
        The method (``libsvm``, ``cold`` or a seeder).
    k : int or str
        The folds as requested: an int, ``"loo"``, or ``"custom"`` (a splitter or splits).
    n_folds, n, dim : int
        The number of rounds in all, of instances, and of features.
    C, gamma, eps, cache_mb : float
        The penalty, the kernel's gamma, the stopping tolerance and the row cache's MB (the
        most a round's cache takes: the default on bit sets starts at 2 and grows to it in a tail).
    shrinking : bool
        LibSVM's shrinking.
    seed : int
        The seed of the folds.
    max_rounds : int or None
        The rounds asked for (None: all).
    until_interval : float or None
        The share within which the iterations' interval stopped the run sooner, if asked for.
    accuracy : float
        Percent correct over the instances tested.
    n_tested, n_correct : int
        Instances tested, and predicted correctly.
    predictions : ndarray
        int8, +-1 per instance in dataset order, 0 where not tested.
    iterations : int
        The total over every round and the full model; estimated when ``estimated``, as the seconds are.
    iterations_measured : int
        The total over the rounds run and the full model.
    seconds : float
        The total; estimated when ``estimated``.
    seconds_measured, seconds_init, seconds_rest, seconds_compile, seconds_kernel : float
        What was measured, the paper's init and rest, compilation, the kernel.
    seconds_conversion, seconds_full_model : float
        LibSVM's data conversion, and the full model of avg, top and full.
    iterations_full_model : int
        The full model's iterations.
    estimated : bool
        Whether rounds were left out and their seconds and iterations estimated.
    rounds_resumed : int
        Rounds read back from a journal (finished before a cut), not run by this call.
    rounds_shared : int
        Rounds taken from the journal's first round that a run of another method left (round 1,
        cold in both), with that run's seconds; not run by this call.
    interval : float or None
        Half the 95 % interval of the estimated seconds, as a share of them (0 when nothing is
        estimated; None where fewer than two rounds like those left ran).
    interval_iterations : float or None
        The same of the estimated iterations.
    iteration_cap_hit : bool
        Whether any round stopped at the iteration cap.
    folds : ndarray
        The fold of each instance, 0..n_folds-1.
    rounds : list of RoundRecord
        Every round run.
    kernel_mode : str
        As resolved (``auto`` becomes ``gram`` or ``shared``).
    chains : int
        Chains of rounds run.
    started_utc, finished_utc : str
        When the run started and finished.
    classes : tuple
        The labels of the negative and the positive class (-1 and +1 in ``predictions``).
    requested_kernel_mode : str
        The kernel mode asked for (``kernel_mode`` is what it resolved to).
    """

    method: str
    k: int | str
    n_folds: int
    n: int
    dim: int
    C: float
    gamma: float
    eps: float
    cache_mb: float
    shrinking: bool
    seed: int
    max_rounds: int | None
    until_interval: float | None
    accuracy: float
    n_tested: int
    n_correct: int
    predictions: np.ndarray
    iterations: int
    iterations_measured: int
    seconds: float
    seconds_measured: float
    seconds_init: float
    seconds_rest: float
    seconds_compile: float
    seconds_kernel: float
    seconds_conversion: float
    seconds_full_model: float
    iterations_full_model: int
    estimated: bool
    rounds_resumed: int
    interval: float | None
    interval_iterations: float | None
    iteration_cap_hit: bool
    folds: np.ndarray
    rounds: list[RoundRecord] = field(default_factory=list)
    kernel_mode: str = PAPER_KERNEL_MODE
    chains: int = 1
    started_utc: str = ""
    finished_utc: str = ""
    classes: tuple = (-1.0, 1.0)
    requested_kernel_mode: str = PAPER_KERNEL_MODE
    rounds_shared: int = 0

    @property
    def rounds_run(self) -> int:
        """The rounds run (all of them unless ``max_rounds`` cut them short)."""
        return len(self.rounds)


def utc_now() -> str:
    """The time now, UTC, to the second (ISO 8601)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
