"""Snakemake script of rule search_table: the methods of one grid search side by side."""

import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from alphaseed.report.search import compare_methods
from alphaseed.report.formats import write_csv, write_text

with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
    summaries = {Path(path).stem: json.loads(Path(path).read_text()) for path in snakemake.input}
    table = compare_methods(summaries)
    first = next(iter(summaries.values()))
    caption = (f"Grid search {snakemake.wildcards.search}: {first['dataset']} (n = {first['n']}), "
               f"{len(first['log2_C'])} x {len(first['log2_gamma'])} (log2 C, log2 gamma), "
               f"{first['k']}-fold CV; seconds measured on this machine.")
    write_csv(snakemake.output.csv, table)
    write_text(snakemake.output.md, f"{caption}\n\n{table.to_markdown(index=False)}\n")
    write_text(snakemake.output.html, f"<p>{caption}</p>\n{table.to_html(index=False)}\n")
    print(table.to_string(index=False))
