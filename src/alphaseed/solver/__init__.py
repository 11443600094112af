"""SMO for the C-SVC dual with the Gaussian kernel, the algorithm of LibSVM 3.x's ``Solver``.

``solve`` trains on instances of a ``KernelMatrix``, cold or from a warm start; ``SolverOptions``
carries its settings; ``train_svm`` and ``SVMModel`` train and predict on arrays. Other layers
import from here, never from the modules below.

Modules: ``state`` (the solver's state and rows of Q), ``selection`` (the working set),
``shrinking``, ``smo`` (the pair update and the loop), ``carry`` (the warm start's gradient),
``training`` (``solve``), ``active_set`` (the active-set solver), ``cholesky`` (a Cholesky
factor updated one index at a time, for the active set and ATO's path), ``penalty`` (one C, or
one per class), ``model`` (prediction), ``compile`` (compiling before timing), ``options``.
"""

from .active_set import reusing_memory
from .carry import carry_gradient
from .cholesky import DEPENDENT, grow, pivoted_factor, shrink, solve_pair
from .compile import compile_lock, warmup
from .model import SVMModel, decision_values, support_coefficients, train_svm
from .options import SolverOptions
from .penalty import check_C, class_bounds, upper_bounds
from .training import KernelCounts, SolveResult, check_labels, check_warm_start, options_at_larger_C, solve
from .state import FREE, LOWER, TAU, UPPER

# The public API; the checks, the compile lock, the bound statuses, the factor updates and the
# finish's memory scope are imported from here by the layers above but not part of it.
__all__ = [
    "SolverOptions", "solve", "SolveResult", "KernelCounts", "SVMModel", "train_svm",
    "decision_values", "support_coefficients", "carry_gradient", "warmup", "class_bounds", "upper_bounds",
]
