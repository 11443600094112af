"""Snakemake script of rule cv: one ``alphaseed cv`` run, its per-round progress in the job's log;
the run summary is the job's output, the full run record a side product."""

import sys
from contextlib import redirect_stderr, redirect_stdout

from alphaseed.pipeline.environment import pin_native_libraries

# Before NumPy, Numba and LibSVM load: thread pools and OpenBLAS kernels of the job. Its
# computing threads, not the cores it reserves (timed_jobs_alone reserves them all).
pin_native_libraries(snakemake.params.compute_threads)

from alphaseed.cli import main  # noqa: E402

with open(snakemake.log[0], "w", buffering=1) as log, redirect_stdout(log), redirect_stderr(log):
    status = main(snakemake.params.arguments
                  + ["--out", snakemake.params.record, "--summary", snakemake.output[0],
                     "--journal", snakemake.params.journal, "--first-round", snakemake.params.first_round])
sys.exit(status)
