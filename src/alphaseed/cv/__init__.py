"""Cross-validation: LibSVM's folds, one round (seed, solve, predict), ``cross_validate`` over
every method, and the real LibSVM as the baseline. Other layers import from here, never from
the modules below.

Modules: ``folds`` (LibSVM's stratified folds, custom splits), ``rounds`` (one round),
``cross_validation`` (``cross_validate``, chains of rounds), ``estimate`` (a cut run's totals and
their interval), ``journal`` (finished rounds on disk, to resume), ``results`` (``CVResult``),
``baseline`` (LibSVM, imported where it is used: ``from alphaseed.cv import baseline``).
"""

from .cross_validation import COLD, LIBSVM, ProgressCallback, chain_layout, cross_validate
from .estimate import double_sampled, extrapolate, interval_share, like_rounds
from .journal import RoundJournal
from .folds import (
    CUSTOM,
    LEAVE_ONE_OUT,
    KFoldRounds,
    custom_rounds,
    folds_sha256,
    resolve_k,
    stratified_folds,
    stratified_subsample,
    trained_on,
)
from .results import PAPER_KERNEL_MODE, CVResult, RoundRecord, utc_now
from .rounds import Round, RoundSeconds, run_round

__all__ = [
    "cross_validate", "CVResult", "RoundRecord", "RoundSeconds", "Round", "run_round", "chain_layout",
    "utc_now", "RoundJournal", "double_sampled", "extrapolate", "interval_share", "like_rounds",
    "COLD", "LIBSVM", "PAPER_KERNEL_MODE",
    "CUSTOM", "LEAVE_ONE_OUT", "KFoldRounds", "custom_rounds", "folds_sha256", "resolve_k",
    "stratified_folds", "stratified_subsample", "trained_on",
]
