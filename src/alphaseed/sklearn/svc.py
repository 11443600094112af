"""``alphaseed.SVC``: the package's solver behind scikit-learn's estimator interface.

A binary C-SVC with the Gaussian kernel whose fitted attributes and decision values follow
``sklearn.svm.SVC(kernel="rbf")``; both run LibSVM's C-SVC algorithm, and this solver
reproduces LibSVM step for step, so on the same data the two give the same iterations and the
same decision values up to the rounding of the kernel's dot products.

Labels, as scikit-learn's LibSVM does it: ``classes_`` is sorted; LibSVM trains with
``classes_[0]`` as its +1 class, and scikit-learn flips the sign of the binary decision value,
``dual_coef_`` and ``intercept_`` so that a positive decision value means ``classes_[1]``.
Prediction keeps LibSVM's rule (``classes_[0]`` only where LibSVM's own value is > 0), so a
decision value of exactly 0 predicts ``classes_[1]`` in both.

Not supported: more than two classes (``fit`` says so), ``sample_weight`` (``fit`` has no such
argument), kernels other than the Gaussian, probability estimates.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernel import KernelMatrix, numba_threads, resolve_gamma, resolve_n_jobs
from ..solver import SolverOptions, SVMModel, solve

NO_ITERATION_CAP = np.iinfo(np.int64).max


def solver_max_iter(max_iter) -> int | None:
    """``solve``'s iteration cap from an estimator's ``max_iter``.

    Parameters
    ----------
    max_iter : int or None
        None (LibSVM's cap), a positive count, or -1 for no cap.

    Returns
    -------
    int or None
        None for LibSVM's cap, else the cap (the largest int64 for no cap).
    """
    if max_iter is None:
        return None
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or not (
            max_iter > 0 or max_iter == -1):
        raise ValueError(f"max_iter must be None, a positive integer or -1 (no cap); got {max_iter!r}")
    return NO_ITERATION_CAP if max_iter == -1 else int(max_iter)


def solver_options(params: dict) -> SolverOptions:
    """The SolverOptions of an ``SVC``'s parameters (``get_params()``).

    Parameters
    ----------
    params : dict
        The estimator's ``tol``, ``cache_size``, ``shrinking``, ``max_iter`` and ``kernel_mode``.

    Returns
    -------
    SolverOptions
        The same settings for ``solve``.
    """
    return SolverOptions(eps=params["tol"], cache_mb=params["cache_size"], shrinking=params["shrinking"],
                         max_iter=solver_max_iter(params["max_iter"]), kernel_mode=params["kernel_mode"])


def encode_binary_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """(``classes_``, LibSVM's labels): +1 for ``classes_[0]``, -1 for ``classes_[1]``.

    Refuses a target that is not a classification target, and anything but exactly two classes.

    Parameters
    ----------
    y : array-like
        The labels, any two values.

    Returns
    -------
    tuple
        ``(classes, y_signed)``: the two classes sorted, and float64 +1/-1 labels.
    """
    check_classification_targets(y)
    target_type = type_of_target(y, input_name="y")
    classes, encoded = np.unique(y, return_inverse=True)
    if target_type != "binary" or classes.size != 2:
        if classes.size > 2:
            raise ValueError(
                f"Only binary classification is supported. The type of the target is "
                f"{target_type} with {classes.size} classes ({classes[:5].tolist()}...); "
                f"alphaseed.SVC separates exactly two classes"
            )
        raise ValueError(
            f"alphaseed.SVC needs two classes to train; got {classes.size} class "
            f"({classes.tolist()})"
        )
    return classes, np.where(encoded == 0, 1.0, -1.0)


class SVC(ClassifierMixin, BaseEstimator):
    """Binary C-SVC with the Gaussian kernel exp(-gamma ||x - z||^2), scikit-learn style.

    A fit stopped at the iteration cap has ``fit_status_`` 1 and warns with a
    ``ConvergenceWarning``, as scikit-learn's SVC does.

    Parameters
    ----------
    C : float, default 1.0
        The penalty.
    gamma : float or {"scale", "auto"}, default "scale"
        A positive number, ``"scale"`` = 1 / (n_features * X.var()) or ``"auto"`` =
        1 / n_features.
    tol : float, default 1e-3
        LibSVM's stopping tolerance eps.
    cache_size : float or None, default None
        The solver's kernel row cache, in MB; None: 2 where rows are computed from bit sets (binary
        data), else 100 (``KernelMatrix.row_cache_mb``).
    shrinking : bool, default True
        LibSVM's shrinking.
    kernel_mode : {"auto", "cache", "shared", "gram"}, default "auto"
        How kernel values are kept (see ``alphaseed.kernel``); it changes time and memory, never
        the result.
    max_iter : int or None, default None
        The cap on SMO iterations: ``None`` is LibSVM's, max(10^7, 100 n), where svm-train
        stops; ``-1`` is none, scikit-learn's default.
    n_jobs : int or None, default None
        The threads of the fit's parallel loops (the Gram matrix, long kernel rows, the selection
        over a large active set), scikit-learn's way: None is 1, -1 all cores.

    Attributes
    ----------
    classes_ : ndarray
        The two classes, sorted; a positive decision value means ``classes_[1]``.
    support_, support_vectors_, n_support_ : ndarray
        The support vectors' indices, rows and count per class (``classes_[0]``'s first).
    dual_coef_, intercept_ : ndarray
        The decision function's coefficients and intercept, in scikit-learn's sign.
    n_iter_ : ndarray
        SMO's iterations.
    fit_status_ : int
        1 if SMO stopped at the iteration cap, else 0.
    """

    def __init__(self, *, C=1.0, gamma="scale", tol=1e-3, cache_size=None, shrinking=True,
                 kernel_mode="auto", max_iter=None, n_jobs=None):
        self.C = C
        self.gamma = gamma
        self.tol = tol
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.kernel_mode = kernel_mode
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def _validated(self, X, reset: bool):
        return validate_data(self, X, reset=reset, accept_sparse="csr", dtype=np.float64,
                             order="C")

    def fit(self, X, y):
        """Train on X (dense, or sparse: converted to CSR) and two-class labels y.

        Parameters
        ----------
        X : array-like or sparse matrix
            The features, one row per instance.
        y : array-like
            The labels, exactly two classes.

        Returns
        -------
        SVC
            This estimator, fitted.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        self.classes_, y_signed = encode_binary_labels(y)
        self._gamma = resolve_gamma(self.gamma, X)
        with numba_threads(resolve_n_jobs(self.n_jobs)):
            kernel = KernelMatrix(X, self._gamma, mode=self.kernel_mode)
            result = solve(kernel, y_signed, np.arange(X.shape[0]), self.C,
                           options=solver_options(self.get_params()))
        if result.iteration_cap_hit:
            warnings.warn(f"SMO stopped at the iteration cap ({result.iterations} iterations) before "
                          f"reaching tol={self.tol}: the solution is not optimal. A smaller C, or data "
                          f"scaled to a common range, converges sooner.", ConvergenceWarning,
                          stacklevel=2)
        self._set_solution(X, y_signed, result)
        return self

    def _set_solution(self, X, y_signed, result) -> None:
        """The fitted attributes, in scikit-learn's layout, from a solution over all of X."""
        support = result.alpha > 0
        self.support_ = np.concatenate([np.flatnonzero(support & (y_signed > 0)),
                                        np.flatnonzero(support & (y_signed < 0))]).astype(np.int32)
        self.n_support_ = np.array([np.count_nonzero(support & (y_signed > 0)),
                                    np.count_nonzero(support & (y_signed < 0))], dtype=np.int32)
        self.support_vectors_ = X[self.support_]
        # scikit-learn's sign: positive towards classes_[1], LibSVM's -1 class.
        self.dual_coef_ = -(y_signed * result.alpha)[self.support_][None, :]
        self.intercept_ = np.array([result.rho])
        self.n_iter_ = np.array([result.iterations], dtype=np.int32)
        self.fit_status_ = int(result.iteration_cap_hit)
        dense_support = (self.support_vectors_.toarray() if sp.issparse(self.support_vectors_)
                         else self.support_vectors_)
        self._model = SVMModel(dense_support, self.dual_coef_[0], result.alpha, -result.rho,
                               self._gamma, result)

    def decision_function(self, X) -> np.ndarray:
        """Signed distance of each row to the boundary, positive towards ``classes_[1]`` (scikit-learn's).

        Parameters
        ----------
        X : array-like or sparse matrix
            The instances, with as many features as the training data had.

        Returns
        -------
        ndarray
            One value per row.
        """
        check_is_fitted(self)
        return self._model.decision_function(self._validated(X, reset=False))

    def predict(self, X) -> np.ndarray:
        """The class of each row, one of ``classes_``: ``classes_[1]`` where the decision value is >= 0.

        Parameters
        ----------
        X : array-like or sparse matrix
            Rows to predict.
        """
        towards_second = self.decision_function(X) >= 0
        return self.classes_[towards_second.astype(np.intp)]
