"""The reproduction pipeline under Snakemake: the config, the datasets (download, verify,
convert), the experiments and their cost model, run records and summaries, provenance, the grid
searches' runs and the kernel facts. Import its modules directly: ``config``, ``data``,
``experiments``, ``records``, ``summaries``, ``provenance``, ``environment``, ``grid``, ``searches``,
``kernel_facts``; importing this package loads none of them, so the Snakefile stays quick.
"""
