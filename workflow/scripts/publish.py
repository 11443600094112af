"""Snakemake script of rules kernel_facts and publish: one ``alphaseed`` command, or the publishing of the
config's table kinds from the run summaries, its output in the job's log."""

import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.pipeline.environment import pin_native_libraries

# Before NumPy, Numba and LibSVM load: thread pools and OpenBLAS kernels of the job.
pin_native_libraries(snakemake.threads)

from alphaseed.cli import main  # noqa: E402
from alphaseed.pipeline.experiments import PAPER_STUDY, TABLE_KINDS, expand_experiments, studies  # noqa: E402
from alphaseed.report.publish import publish  # noqa: E402

with open(snakemake.log[0], "w", buffering=1) as log, redirect_stdout(log), redirect_stderr(log):
    if snakemake.rule == "kernel_facts":
        sys.exit(main(snakemake.params.arguments))
    groups = {kind: list(snakemake.input[kind]) for kind in TABLE_KINDS if kind in snakemake.input.keys()}
    folder, kernel = Path(snakemake.output.readme).parent, Path(snakemake.input.kernel[0]).parent
    beyond = {study: [str(job.record_path(folder / "runs")) for job in expand_experiments(snakemake.config, study)["table1"]]
              for study in studies(snakemake.config) if study != PAPER_STUDY}
    written = publish(groups, folder, snakemake.input.paper, kernel_folder=kernel, studies=beyond,
                      allow_dirty=snakemake.config["publish_allow_dirty"])
    print("\n".join(map(str, written)))
