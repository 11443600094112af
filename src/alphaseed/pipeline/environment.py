"""The native libraries' settings of one pipeline job, made before NumPy, Numba or LibSVM load.

Thread pools: each library's pool must match the job's share of the cores (LibSVM's OpenMP
default of all cores is far slower when jobs run side by side).

OpenBLAS kernels: OpenBLAS picks its kernels by CPU at load time (SkylakeX on an AVX-512 Xeon,
Haswell on an AMD EPYC), or takes those OPENBLAS_CORETYPE names (some machines set it for every
process), and kernels of different width round differently. The kernel values do not depend on it
(BLAS computes them only where every order is exact, see ``alphaseed.kernel.blas_dots_are_exact``),
but MIR's least squares and ATO's path solves do, and their seeds, iterations and, near the
stopping tolerance, predictions follow: a run resumed on a CPU of another kind repeats its MIR and
ATO runs exactly only when both take the same kernels (docs/benchmarks/measured/pipeline.md has
the case). So on x86-64 every job, the command line and the test suite take the kernels
ALPHASEED_OPENBLAS_CORETYPE names, by default Haswell (AVX2), which every x86-64 CPU of the last
decade runs, whatever OPENBLAS_CORETYPE said; MKL, where NumPy uses it, gets MKL_CBWR=AVX2. Kernels
of other architectures are left to OpenBLAS.
"""

from __future__ import annotations

import os
import platform

# OpenBLAS's core type on x86-64 unless ALPHASEED_OPENBLAS_CORETYPE names another (see the module's
# docstring); MKL's counterpart, where NumPy uses MKL.
PORTABLE_OPENBLAS_CORE = "Haswell"
OPENBLAS_CORE_CHOICE = "ALPHASEED_OPENBLAS_CORETYPE"
PORTABLE_MKL_BRANCH = "AVX2"
X86_64 = ("x86_64", "AMD64")


def pin_blas_kernels() -> None:
    """On x86-64, have OpenBLAS (and MKL) take the same kernels on every CPU.

    Effective only before NumPy loads: the command line and the test suite call it first thing.
    Elsewhere the environment is left alone.
    """
    if platform.machine() in X86_64:
        os.environ["OPENBLAS_CORETYPE"] = os.environ.get(OPENBLAS_CORE_CHOICE, PORTABLE_OPENBLAS_CORE)
        os.environ["MKL_CBWR"] = PORTABLE_MKL_BRANCH


def pin_native_libraries(threads: int) -> None:
    """A pipeline job's settings, before its libraries load: every thread pool at ``threads``, and the BLAS
    kernels of ``pin_blas_kernels``.

    Parameters
    ----------
    threads : int
        The job's share of the cores: OpenMP's (LibSVM's), OpenBLAS's and Numba's threads.
    """
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[variable] = str(threads)
    pin_blas_kernels()
