"""What every seeder receives and must return.

Round h+1 of k-fold CV is seeded from round h: S are the k-2 shared folds, R (removed) the
fold that round h trained on and round h+1 tests on, T (added) the fold round h tested on.
For leave-one-out AVG and TOP, the previous model is the one trained on all n instances,
R = {t} and T is empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernel import KernelMatrix


@dataclass(frozen=True)
class SeedContext:
    kernel: KernelMatrix      # kernel.block(rows, cols) -> float32 K over global indices
    y: np.ndarray             # float64 labels in {-1, +1} of all n instances
    C: float
    prev_index: np.ndarray    # global indices of the previous training set X, solver order
    prev_alpha: np.ndarray    # the previous optimum, aligned with prev_index
    prev_gradient: np.ndarray  # LibSVM's G = Q alpha - 1 at that optimum; f_i = y_i G_i
    prev_rho: float           # the previous model's rho (the paper's b)
    shared: np.ndarray        # S: global indices in both training sets
    removed: np.ndarray       # R: in the previous training set only
    added: np.ndarray         # T: in the next training set only
    next_index: np.ndarray    # X' = S ∪ T in the next round's solver order
