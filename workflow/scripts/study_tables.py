"""Snakemake script of rule study_tables: each study's run records -> its tables, beside the paper's."""

from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.report.runs import read_runs, refuse_uncommitted
from alphaseed.report.tables import write_tables

with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
    paths = [Path(path) for path in snakemake.input.records]
    refuse_uncommitted(paths, read_runs(paths), allow_dirty=snakemake.config["publish_allow_dirty"])
    for study, groups in snakemake.params.records.items():
        for folder, formats in snakemake.params.folders:
            written = write_tables(groups, snakemake.input.paper, Path(folder, "tables"), formats, study=study)
            print("\n".join(map(str, written)))
