"""The Gaussian kernel of one dataset, as the solver, the seeders and prediction read it.

``KernelMatrix`` holds the data and hands out kernel values in one of four modes (``cache``,
``shared``, ``gram``, ``auto``); every mode stores the same float32 values, so a result never
depends on the mode. The solver reads rows through a ``RowCache`` filled from the kernel's
``RowSource``. Other layers import from here, never from the modules below.

Modules: ``values`` (a kernel value, computed one way everywhere; the compact row forms),
``native`` (LLVM intrinsics), ``blas`` (BLAS's threads), ``gram`` (the Gram matrix), ``products``
(kernel matrix products), ``threads`` (``n_jobs``, chains of rounds as threads), ``row_cache`` (LRU caches of rows), ``row_source`` (where a cache's
missing rows come from), ``matrix`` (``KernelMatrix`` and the memory budget).
"""

from ..jit_cache import discard_stale_package_code
from .blas import blas_dots, blas_threads, cholesky_in_place, lower_solves, pivoted_cholesky_in_place
from .gram import mapped_array, norm_reach
from .matrix import (
    KERNEL_MODES,
    LIBSVM_CACHE_MB,
    KernelMatrix,
    default_memory_budget,
    dots_fit_beside_gram,
    gram_bytes,
    memory_mb,
    prefaulted_gram,
    resolve_gamma,
    resolve_mode,
    threads_may_share,
    shared_dots,
)
from .native import times_sign
from .products import ExactKernel, gathered_times, kernel_cross_times
from .row_cache import (
    EVICTIONS,
    HITS,
    REQUESTS,
    ROWS_COMPUTED,
    ROWS_EXTENDED,
    VALUES_COMPUTED,
    RowCache,
    cache_apart,
    cache_swap_columns,
    cache_swap_keys,
    cache_together,
    budget_values,
    cached_q,
    new_cache,
    raise_budget,
)
from .row_source import (
    GRAM,
    RowSource,
    get_q,
    outside_row,
    solver_source,
    source_apart,
    source_swap,
    source_together,
)
from .threads import chain_threads, concurrent_launches_are_safe, finished_future, numba_threads, resolve_n_jobs
from .values import CompactRows, blas_dots_are_exact, dense_features, squared_norms, takes_bit_sets

# The public API; the row cache and row source names and times_sign above are the solver's
# interface to the kernel, mapped_array the seeders' large buffers and norm_reach their sparse kernel
# columns, imported from here but not part of the API.
__all__ = [
    "KERNEL_MODES", "KernelMatrix", "default_memory_budget", "dots_fit_beside_gram", "gram_bytes",
    "memory_mb", "prefaulted_gram", "resolve_mode", "threads_may_share", "shared_dots", "blas_dots",
    "blas_threads", "lower_solves", "cholesky_in_place", "pivoted_cholesky_in_place",
    "CompactRows", "RowCache", "RowSource", "blas_dots_are_exact", "dense_features", "squared_norms",
    "kernel_cross_times", "ExactKernel", "gathered_times", "resolve_gamma", "takes_bit_sets", "resolve_n_jobs",
    "numba_threads", "concurrent_launches_are_safe", "chain_threads", "finished_future", "LIBSVM_CACHE_MB",
]

# Every compiled module imports this package first, and Numba loads a function's cached code at
# its first call, so no stale code has run yet.
discard_stale_package_code()
