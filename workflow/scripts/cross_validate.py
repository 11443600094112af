"""Snakemake script of rule cv: one ``alphaseed cv`` run, its per-round progress in the job's log;
the run summary is the job's output, the full run record a side product."""

import os
import sys
from contextlib import redirect_stderr, redirect_stdout

# Before LibSVM and Numba load: their thread pools must match the job's share of the cores
# (LibSVM's OpenMP default of all cores is far slower when jobs run side by side).
os.environ["OMP_NUM_THREADS"] = os.environ["NUMBA_NUM_THREADS"] = str(snakemake.threads)

from alphaseed.cli import main  # noqa: E402

with open(snakemake.log[0], "w", buffering=1) as log, redirect_stdout(log), redirect_stderr(log):
    status = main(snakemake.params.arguments
                  + ["--out", snakemake.params.record, "--summary", snakemake.output[0]])
sys.exit(status)
