"""The reference: the real LibSVM (package ``libsvm-official``) on the same training sets.

The dataset is converted into LibSVM's node arrays once; each round's ``svm_problem`` is then
an array of pointers into those nodes in the round's training order, as LibSVM's own
``svm_cross_validation`` builds its sub-problems. That conversion is timed on its own; the
timed part of a round is ``svm_train`` and ``svm_predict`` only.

LibSVM reports its iteration count, dual objective, nSV and nBSV only as text through its
print hook, so training installs a ctypes print-string callback that captures that text in
memory and reads the figures from it (no subprocess, no stdout parsing). LibSVM's kernel
computation is OpenMP-parallel in this wheel: its thread count follows ``OMP_NUM_THREADS``
or ``threadpoolctl.threadpool_limits(user_api="openmp")``.
"""

from __future__ import annotations

import ctypes
import re
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from libsvm import svm

from ..errors import SolverInputError

_ITERATIONS = re.compile(r"#iter = (\d+)")
_OBJECTIVE = re.compile(r"obj = (\S+), rho = (\S+)")
_SUPPORT_VECTORS = re.compile(r"nSV = (\d+), nBSV = (\d+)")
_CAP_WARNING = "reaching max number of iterations"

_captured: list[str] = []


@svm.PRINT_STRING_FUN
def _capture(text: bytes) -> None:
    """LibSVM's print hook during ``train_libsvm``: keeps the text in memory."""
    _captured.append(text.decode(errors="replace"))


@dataclass
class LibsvmFit:
    """One LibSVM training run, in this package's sign convention (y = +1 is the positive class).

    LibSVM reports most of these figures only in its printed output, which ``train_libsvm`` reads.

    Parameters
    ----------
    iterations : int
        LibSVM's ``#iter``.
    objective : float
        The dual objective (``obj``).
    rho : float
        The decision function's rho, with the sign flipped where LibSVM's first label is -1.
    n_sv, n_bounded_sv : int
        Support vectors (``nSV``), and those at the bound C (``nBSV``).
    alpha : ndarray
        The dual coefficients, aligned with the training index.
    iteration_cap_hit : bool
        Whether LibSVM warned that it reached its iteration cap.
    seconds_train : float
        The seconds of ``svm_train``.
    log : str
        LibSVM's own output for this run.
    """

    iterations: int
    objective: float
    rho: float
    n_sv: int
    n_bounded_sv: int
    alpha: np.ndarray          # aligned with the training index
    iteration_cap_hit: bool
    seconds_train: float
    log: str                   # LibSVM's own output for this run


class LibsvmData:
    """A dataset converted once into LibSVM's node arrays, addressed by global index.

    Each round's problem then only points into these nodes, as LibSVM's own
    ``svm_cross_validation`` builds its sub-problems, so no round converts the data again.

    Parameters
    ----------
    X : array-like or sparse matrix
        The features, one row per instance; zeros are left out, as LibSVM files leave them.
    y : ndarray
        The labels of all instances.
    """

    def __init__(self, X, y: np.ndarray):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        # LibSVM files leave zeros out; dropping them gives LibSVM the structure it would read.
        X.eliminate_zeros()
        # One index dtype, so the converter libsvm-official JIT-compiles in `warmup` is reused.
        if X.nnz < np.iinfo(np.int32).max:
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
        self.y = np.asarray(y, dtype=np.float64)
        self._full = svm.svm_problem(self.y, X)
        self._pointers = np.ctypeslib.as_array(
            ctypes.cast(self._full.x, ctypes.POINTER(ctypes.c_uint64)), (self._full.l,)
        ).copy()

    @property
    def n(self) -> int:
        """The number of instances."""
        return int(self._full.l)

    def node(self, i: int):
        """LibSVM's node array of one instance, as ``svm_predict`` takes it.

        Parameters
        ----------
        i : int
            The instance's global index.

        Returns
        -------
        ctypes pointer
            Its ``svm_node`` array.
        """
        return self._full.x[i]

    def problem(self, index: np.ndarray) -> svm.svm_problem:
        """``svm_problem`` over the instances ``index`` in this order, sharing the node arrays.

        Parameters
        ----------
        index : ndarray
            The training instances (global indices), in the order LibSVM is to see them.

        Returns
        -------
        svm_problem
            The problem; it keeps this object, whose nodes it points into, alive.
        """
        index = np.asarray(index, dtype=np.int64)
        prob = svm.svm_problem.__new__(svm.svm_problem)
        prob.l = len(index)
        prob.n = self._full.n
        prob.y_buffer = (ctypes.c_double * len(index))(*self.y[index])
        prob.x_buffer = (ctypes.POINTER(svm.svm_node) * len(index))()
        np.ctypeslib.as_array(
            ctypes.cast(prob.x_buffer, ctypes.POINTER(ctypes.c_uint64)), (len(index),)
        )[:] = self._pointers[index]
        prob.y = prob.y_buffer
        prob.x = prob.x_buffer
        prob.data = self  # the nodes must outlive every problem and model that points at them
        return prob


def warmup() -> float:
    """Convert a tiny problem once, so the JIT compilation of libsvm-official's CSR converter
    (it uses Numba when present) is not timed as conversion; returns the seconds."""
    start = time.perf_counter()
    LibsvmData(sp.csr_matrix(np.eye(2)), np.array([1.0, -1.0])).problem(np.arange(2))
    return time.perf_counter() - start


def libsvm_parameter(C: float, gamma: float, eps: float, cache_mb: float, shrinking: bool):
    """C-SVC with the Gaussian kernel: ``-s 0 -t 2 -c C -g gamma -e eps -m cache_mb -h shrinking``.

    Parameters
    ----------
    C : float
        The penalty.
    gamma : float
        The Gaussian kernel's gamma.
    eps : float
        The stopping tolerance.
    cache_mb : float
        LibSVM's kernel cache, in MB.
    shrinking : bool
        Whether LibSVM shrinks.

    Returns
    -------
    svm_parameter
        LibSVM's parameters.
    """
    return svm.svm_parameter(
        f"-s 0 -t 2 -c {float(C)!r} -g {float(gamma)!r} -e {float(eps)!r} -m {float(cache_mb)!r} "
        f"-h {int(bool(shrinking))}"
    )


def train_libsvm(data: LibsvmData, prob: svm.svm_problem, param) -> tuple[object, LibsvmFit]:
    """Train LibSVM on ``prob`` and read its figures from its own output.

    Parameters
    ----------
    data : LibsvmData
        The dataset ``prob`` points into.
    prob : svm_problem
        The training set (``LibsvmData.problem``).
    param : svm_parameter
        LibSVM's parameters (``libsvm_parameter``).

    Returns
    -------
    tuple
        ``(model, fit)``: LibSVM's model and its ``LibsvmFit``.
    """
    error = svm.libsvm.svm_check_parameter(prob, param)
    if error:
        raise SolverInputError(f"LibSVM rejects the parameters: {error.decode()}")
    _captured.clear()
    svm.libsvm.svm_set_print_string_function(_capture)
    try:
        start = time.perf_counter()
        model = svm.toPyModel(svm.libsvm.svm_train(prob, param))
        seconds = time.perf_counter() - start
    finally:
        svm.libsvm.svm_set_print_string_function(svm.ctypes_print_null)
    log = "".join(_captured)
    _captured.clear()
    return model, _read_fit(model, prob, param.C, log, seconds)


def _read_fit(model, prob, C: float, log: str, seconds: float) -> LibsvmFit:
    """The ``LibsvmFit`` of a trained model, its iterations, objective and nSV read from ``log``."""
    labels = model.get_labels()
    alpha = np.zeros(prob.l)
    if model.nr_class < 2:
        # LibSVM builds no decision function for a one-class training set and predicts that
        # class; alpha = 0 then, and calculate_rho at alpha = 0 gives rho = -label.
        return LibsvmFit(0, 0.0, -float(labels[0]), 0, 0, alpha, False, seconds, log)
    iterations = _ITERATIONS.search(log)
    objective = _OBJECTIVE.search(log)
    support = _SUPPORT_VECTORS.search(log)
    if not (iterations and objective and support):
        raise RuntimeError(f"LibSVM's output lacks #iter, obj or nSV:\n{log}")
    # LibSVM's decision function is positive for labels[0]; flip it when that is -1.
    sign = 1.0 if labels[0] == 1 else -1.0
    sv = np.array(model.get_sv_indices(), dtype=np.int64) - 1
    coef = np.ctypeslib.as_array(model.sv_coef[0], (model.l,))
    alpha[sv] = np.abs(coef)
    return LibsvmFit(
        iterations=int(iterations.group(1)),
        objective=float(objective.group(1)),
        rho=sign * float(model.rho[0]),
        n_sv=int(support.group(1)),
        n_bounded_sv=int(support.group(2)),
        alpha=alpha,
        iteration_cap_hit=_CAP_WARNING in log,
        seconds_train=seconds,
        log=log,
    )


def predict_libsvm(model, data: LibsvmData, index: np.ndarray) -> tuple[np.ndarray, float]:
    """LibSVM's ``svm_predict`` labels (±1) for the instances ``index``, and its seconds.

    Parameters
    ----------
    model : svm_model
        A model from ``train_libsvm``.
    data : LibsvmData
        The dataset the instances come from.
    index : ndarray
        The instances to predict (global indices).

    Returns
    -------
    tuple
        ``(labels, seconds)``: float64 labels in the order of ``index``, and the seconds taken.
    """
    predict = svm.libsvm.svm_predict
    start = time.perf_counter()
    labels = [predict(model, data.node(int(i))) for i in index]
    seconds = time.perf_counter() - start
    return np.asarray(labels, dtype=np.float64), seconds
