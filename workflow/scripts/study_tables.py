"""Snakemake script of rule study_tables: each study's run records -> its tables, beside the paper's."""

from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.report.tables import write_tables

with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
    for study, groups in snakemake.params.records.items():
        for folder, formats in snakemake.params.folders:
            written = write_tables(groups, snakemake.input.paper, Path(folder, "tables"), formats, study=study)
            print("\n".join(map(str, written)))
