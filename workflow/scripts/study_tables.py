"""Snakemake script of rule study_tables: each study's run records -> its tables, beside the paper's."""

from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.tables import write_tables

out_dir = Path(snakemake.output[0]).parent
with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
    for study, groups in snakemake.params.records.items():
        written = write_tables(groups, snakemake.input.paper, out_dir, study)
        print("\n".join(map(str, written)))
