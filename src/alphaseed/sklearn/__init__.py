"""scikit-learn's estimator interface: ``SVC``, a C-SVC with the Gaussian kernel for two classes or more, and
``GridSearchCV``, a search over C and gamma with alpha seeding, and ``HalvingGridSearchCV``, its
successive-halving form. Other layers import from here.

Modules: ``svc``, ``one_vs_one`` (the pairs of classes), ``platt`` (probabilities),
``grid_search``, ``halving``.
"""

from .grid_search import (
    C_SEED,
    C_SEEDS,
    SEARCH_METHODS,
    GridSearchCV,
    PointResult,
    along_path,
    optimality_gap,
    search_column,
    seed_from_smaller_C,
)
from .halving import HalvingGridSearchCV, HalvingSchedule, halving_schedule
from .one_vs_one import (
    PairwiseModel,
    PairwisePredictor,
    class_pairs,
    merge_pairs,
    pair_problem,
    vote,
)
from .platt import (
    couple_pairs,
    fit_sigmoid,
    held_out_decision_values,
    pair_probabilities,
    platt_splits,
)
from .svc import (
    SVC,
    encode_classes,
    solver_max_iter,
    solver_options,
)

__all__ = [
    "C_SEED",
    "C_SEEDS",
    "SEARCH_METHODS",
    "SVC",
    "GridSearchCV",
    "HalvingGridSearchCV",
    "HalvingSchedule",
    "PairwiseModel",
    "PairwisePredictor",
    "PointResult",
    "along_path",
    "class_pairs",
    "couple_pairs",
    "encode_classes",
    "fit_sigmoid",
    "halving_schedule",
    "held_out_decision_values",
    "merge_pairs",
    "optimality_gap",
    "pair_probabilities",
    "pair_problem",
    "platt_splits",
    "search_column",
    "seed_from_smaller_C",
    "solver_max_iter",
    "solver_options",
    "vote",
]
