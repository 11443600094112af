"""Snakemake script of rules search and search_column: one ``alphaseed search`` run (or, for a search
split into gamma columns, ``alphaseed search-merge``), its progress in the job's log."""

import os
import sys
from contextlib import redirect_stderr, redirect_stdout

# Before Numba loads: its thread pool must match the job's share of the cores.
os.environ["OMP_NUM_THREADS"] = os.environ["NUMBA_NUM_THREADS"] = str(snakemake.threads)

from alphaseed.cli import main  # noqa: E402

with open(snakemake.log[0], "w", buffering=1) as log, redirect_stdout(log), redirect_stderr(log):
    status = main(snakemake.params.arguments + ["--out", snakemake.output.json])
sys.exit(status)
