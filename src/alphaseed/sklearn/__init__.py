"""scikit-learn's estimator interface: ``SVC``, a C-SVC with the Gaussian kernel, and
``GridSearchCV``, a search over C and gamma with alpha seeding. Other layers import from here.

Modules: ``svc``, ``grid_search``.
"""

from .grid_search import (
    C_SEED,
    C_SEEDS,
    SEARCH_METHODS,
    GridSearchCV,
    PointResult,
    optimality_gap,
    search_column,
    seed_from_smaller_C,
)
from .svc import SVC, encode_binary_labels, solver_max_iter, solver_options

__all__ = [
    "SVC", "GridSearchCV", "search_column", "seed_from_smaller_C", "optimality_gap", "PointResult",
    "SEARCH_METHODS", "C_SEEDS", "C_SEED", "encode_binary_labels",
    "solver_max_iter", "solver_options",
]
