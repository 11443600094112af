"""Snakemake script of rules tables and figures: run records of each table kind -> tables or figures."""

from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.pipeline.experiments import TABLE_KINDS
from alphaseed.report.figures import write_figures
from alphaseed.report.tables import write_tables

WRITERS = {"tables": write_tables, "figures": write_figures}

groups = {kind: list(snakemake.input[kind]) for kind in TABLE_KINDS if kind in snakemake.input.keys()}
with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
    written = WRITERS[snakemake.rule](groups, snakemake.input.paper, Path(snakemake.output[0]).parent)
    print("\n".join(map(str, written)))
