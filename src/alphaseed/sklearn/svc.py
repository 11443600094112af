"""``alphaseed.SVC``: the package's solver behind scikit-learn's estimator interface.

A C-SVC with the Gaussian kernel whose fitted attributes and decision values follow
``sklearn.svm.SVC(kernel="rbf")``; both run LibSVM's C-SVC algorithm, and this solver
reproduces LibSVM step for step, so on the same data the two give the same iterations and the
same decision values up to the rounding of the kernel's dot products. More than two classes are
LibSVM's one-vs-one (``one_vs_one``): one solver run per pair of classes, over one kernel.

Labels, as scikit-learn's LibSVM does it: ``classes_`` is sorted; in the pair (i, j) LibSVM
trains with ``classes_[i]`` as its +1 class. With two classes scikit-learn flips the sign of the
decision value, ``dual_coef_`` and ``intercept_`` so that a positive decision value means
``classes_[1]``. Prediction keeps LibSVM's vote (class i only where LibSVM's own value is > 0),
so a binary decision value of exactly 0 predicts ``classes_[1]`` in both.

With ``probability=True`` it also fits LibSVM's probability model (``platt``), its internal
cross-validation seeded.

Not supported: ``sample_weight`` (``fit`` has no such argument), kernels other than the
Gaussian.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import (
    _ovr_decision_function,
    check_classification_targets,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernel import KernelMatrix, numba_threads, resolve_gamma, resolve_n_jobs
from ..solver import SolverOptions, solve
from .one_vs_one import (PairwiseModel, PairwisePredictor, class_pairs, grouped_by_class, merge_pairs,
                         pair_problem, vote)
from .platt import couple_pairs, fit_sigmoid, held_out_decision_values, pair_probabilities, platt_splits

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
        The estimator's ``tol``, ``cache_size``, ``shrinking``, ``max_iter``, ``kernel_mode`` and
        ``solver``.

    Returns
    -------
    SolverOptions
        The same settings for ``solve``.
    """
    return SolverOptions(eps=params["tol"], cache_mb=params["cache_size"], shrinking=params["shrinking"],
                         max_iter=solver_max_iter(params["max_iter"]), kernel_mode=params["kernel_mode"],
                         solver=params["solver"])


def encode_classes(y) -> tuple[np.ndarray, np.ndarray]:
    """(``classes_``, each label's code 0..n-1 in ``classes_``), refusing fewer than two classes.

    Parameters
    ----------
    y : array-like
        The labels, two classes or more.

    Returns
    -------
    tuple
        ``(classes, codes)``: the classes sorted, and each label's index among them.
    """
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"alphaseed needs two classes or more to train; got {classes.size} class "
                         f"({classes.tolist()})")
    return classes, codes


class SVC(ClassifierMixin, BaseEstimator):
    """C-SVC with the Gaussian kernel exp(-gamma ||x - z||^2), scikit-learn style, for two
    classes or more (LibSVM's one-vs-one).

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
        data), growing to 32 once a run has made 2 iterations per training instance, and 32 from
        the start on up to 2,896 training instances (``KernelMatrix.tail_row_cache_mb``), else 100
        (``KernelMatrix.row_cache_mb``).
    shrinking : bool, default True
        LibSVM's shrinking.
    class_weight : dict, "balanced" or None, default None
        Each class's C is C times its weight (LibSVM's ``-wi``): a dict maps classes to weights
        (1 for the others), ``"balanced"`` weighs each class by n_samples / (n_classes *
        its count), inversely to its frequency.
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        With more than two classes, ``decision_function`` gives LibSVM's value of each pair
        (``"ovo"``) or scikit-learn's per-class score built from the pairs' votes and values
        (``"ovr"``).
    break_ties : bool, default False
        With ``"ovr"`` and more than two classes, predict the class of highest ``decision_function``
        score instead of LibSVM's vote (whose ties go to the first class).
    probability : bool, default False
        Fit LibSVM's probability model (module ``platt``) for ``predict_proba``: a 5-fold
        cross-validation of each pair, its rounds seeded, and a sigmoid on its held-out decision
        values. ``predict`` still votes on the decision values, as LibSVM's does.
    random_state : int, RandomState or None, default None
        The permutation behind the probability model's folds.
    kernel_mode : {"auto", "cache", "shared", "gram"}, default "auto"
        How kernel values are kept (see ``alphaseed.kernel``); it changes time and memory, never
        the result.
    max_iter : int or None, default None
        The cap on SMO iterations of each pair: ``None`` is LibSVM's, max(10^7, 100 n), where
        svm-train stops; ``-1`` is none, scikit-learn's default.
    solver : {"auto", "smo", "active_set"}, default "auto"
        ``smo`` is LibSVM's algorithm; ``active_set`` takes exact Newton steps on the free set
        (``SolverOptions``), far faster at large C with a flat kernel, far slower where most
        support vectors are free. ``auto`` is SMO wherever SMO converges within 10 iterations
        per instance (at least 25,000), and finishes longer runs, SMO's tail, with the active
        set: there its optimum is exact where SMO's is one to ``tol``, so a borderline
        prediction may differ from scikit-learn's.
    n_jobs : int or None, default None
        The threads of the fit's parallel loops (the Gram matrix, long kernel rows, the selection
        over a large active set), scikit-learn's way: None is 1, -1 all cores.

    Attributes
    ----------
    classes_ : ndarray
        The classes, sorted; with two, a positive decision value means ``classes_[1]``.
    support_, support_vectors_, n_support_ : ndarray
        The support vectors' indices and rows, grouped by class, and their count per class.
    dual_coef_ : ndarray
        (n_classes - 1, n_support_vectors): LibSVM's one-vs-one coefficients (module
        ``one_vs_one``), with scikit-learn's sign flip for two classes.
    intercept_ : ndarray
        One per pair of classes, in scikit-learn's sign.
    n_iter_ : ndarray
        SMO's iterations, one per pair of classes.
    class_weight_ : ndarray
        Each class's weight (ones without ``class_weight``).
    fit_status_ : int
        1 if SMO stopped at the iteration cap on any pair, else 0.
    probA_, probB_ : ndarray
        Each pair's sigmoid 1 / (1 + exp(A f + B)) of P(class i), with ``probability``; else empty.
    """

    def __init__(self, *, C=1.0, gamma="scale", tol=1e-3, cache_size=None, shrinking=True,
                 class_weight=None, decision_function_shape="ovr", break_ties=False, probability=False, random_state=None,
                 kernel_mode="auto", max_iter=None, solver="auto", n_jobs=None):
        self.C = C
        self.gamma = gamma
        self.tol = tol
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.random_state = random_state
        self.kernel_mode = kernel_mode
        self.max_iter = max_iter
        self.solver = solver
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validated(self, X, reset: bool):
        return validate_data(self, X, reset=reset, accept_sparse="csr", dtype=np.float64,
                             order="C")

    def fit(self, X, y):
        """Train on X (dense, or sparse: converted to CSR) and labels y of two classes or more.

        Parameters
        ----------
        X : array-like or sparse matrix
            The features, one row per instance.
        y : array-like
            The labels.

        Returns
        -------
        SVC
            This estimator, fitted.
        """
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo'; got "
                             f"{self.decision_function_shape!r}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        self.classes_, codes = encode_classes(y)
        self.class_weight_ = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        self._gamma = resolve_gamma(self.gamma, X)
        options = solver_options(self.get_params())
        solutions, sigmoids = [], []
        rng = check_random_state(self.random_state)
        with numba_threads(resolve_n_jobs(self.n_jobs)):
            order, moved_to = grouped_by_class(codes)
            kernel = KernelMatrix(X[order], self._gamma, mode=self.kernel_mode)
            for i, j in class_pairs(self.classes_.size):
                index, y_pair = pair_problem(codes, i, j)
                grouped, y_grouped = moved_to[index], y_pair[order]
                C = (self.C * self.class_weight_[i], self.C * self.class_weight_[j])
                solutions.append((index, y_pair, solve(kernel, y_grouped, grouped, C, options=options)))
                if self.probability:
                    held_out = held_out_decision_values(kernel, y_grouped, grouped, C,
                                                        platt_splits(index.size, rng), options=options)
                    sigmoids.append(fit_sigmoid(held_out, y_pair[index] > 0))
        sigmoids = np.array(sigmoids, dtype=np.float64).reshape(-1, 2)
        self.probA_, self.probB_ = sigmoids[:, 0].copy(), sigmoids[:, 1].copy()
        capped = [result.iterations for _, _, result in solutions if result.iteration_cap_hit]
        if capped:
            warnings.warn(f"SMO stopped at the iteration cap ({capped[0]} iterations) before "
                          f"reaching tol={self.tol}: the solution is not optimal. A smaller C, or data "
                          f"scaled to a common range, converges sooner.", ConvergenceWarning,
                          stacklevel=2)
        self._set_solution(X, merge_pairs(codes, self.classes_.size, solutions))
        self.n_iter_ = np.array([result.iterations for _, _, result in solutions], dtype=np.int32)
        self.fit_status_ = int(bool(capped))
        return self

    def _set_solution(self, X, model: PairwiseModel) -> None:
        """The fitted attributes, in scikit-learn's layout, from the merged pairs."""
        self.support_ = model.support
        self.n_support_ = model.n_support
        self.support_vectors_ = X[self.support_]
        # scikit-learn's sign: with two classes, positive towards classes_[1], LibSVM's -1 class.
        sign = -1.0 if self.classes_.size == 2 else 1.0
        self.dual_coef_ = sign * model.sv_coef
        self.intercept_ = -sign * model.rho
        dense_support = (self.support_vectors_.toarray() if sp.issparse(self.support_vectors_)
                         else self.support_vectors_)
        self._predictor = PairwisePredictor(dense_support, model.pair_weights(), model.rho, self._gamma)

    def decision_function(self, X) -> np.ndarray:
        """The decision values of each row, as scikit-learn's SVC gives them.

        Two classes: the signed distance to the boundary, positive towards ``classes_[1]``.
        More: with ``decision_function_shape="ovo"`` LibSVM's value of each pair (i, j), positive
        towards class i; with ``"ovr"`` one score per class, its votes plus a tie-breaking term
        from the pairs' values below one third.

        Parameters
        ----------
        X : array-like or sparse matrix
            The instances, with as many features as the training data had.

        Returns
        -------
        ndarray
            One value per row with two classes; else a row of n_pairs (``ovo``) or n_classes
            (``ovr``) values.
        """
        check_is_fitted(self)
        decision = self._predictor.decision_values(self._validated(X, reset=False))
        if self.classes_.size == 2:
            return -decision[:, 0]
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(decision < 0, -decision, self.classes_.size)
        return decision

    def predict(self, X) -> np.ndarray:
        """The class of each row, one of ``classes_``, by LibSVM's one-vs-one vote.

        With ``break_ties`` (and ``"ovr"``, more than two classes) the class of highest
        ``decision_function`` score instead.

        Parameters
        ----------
        X : array-like or sparse matrix
            Rows to predict.
        """
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self.break_ties and self.classes_.size > 2:
            return self.classes_[np.argmax(self.decision_function(X), axis=1)]
        decision = self._predictor.decision_values(self._validated(X, reset=False))
        return self.classes_[vote(decision, self.classes_.size)]

    def _has_probability(self) -> bool:
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X) -> np.ndarray:
        """Each row's probability of each class, in ``classes_`` order (LibSVM's ``-b 1``).

        The probabilities come from a cross-validation, so their most likely class may differ
        from ``predict``'s on a few rows, as with LibSVM and scikit-learn.

        Parameters
        ----------
        X : array-like or sparse matrix
            The instances.

        Returns
        -------
        ndarray
            (n_rows, n_classes), rows summing to one.
        """
        check_is_fitted(self)
        if self.probA_.size == 0:
            raise NotFittedError("predict_proba needs a fit with probability=True")
        decision = self._predictor.decision_values(self._validated(X, reset=False))
        pairwise = pair_probabilities(decision, self.probA_, self.probB_)
        if self.classes_.size == 2:
            return np.column_stack([pairwise[:, 0], 1.0 - pairwise[:, 0]])
        return couple_pairs(pairwise, self.classes_.size)

    @available_if(_has_probability)
    def predict_log_proba(self, X) -> np.ndarray:
        """The natural logarithm of ``predict_proba``, of the same shape.

        Parameters
        ----------
        X : array-like or sparse matrix
            Rows whose log probabilities are wanted.
        """
        return np.log(self.predict_proba(X))
