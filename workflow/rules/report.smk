# Aggregation: run records -> tables (the paper's numbers beside) and figures, each a report item.


report: "../report/workflow.rst"


rule tables:
    input:
        **{kind: run_records(kind) for kind in KINDS},
        paper=PAPER_RESULTS,
    output:
        [with_report(path, "Tables") for path in TABLE_OUTPUTS],
    log:
        f"{RESULTS}/logs/tables.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    script:
        "../scripts/aggregate.py"


rule figures:
    input:
        **{kind: run_records(kind) for kind in KINDS},
        paper=PAPER_RESULTS,
    output:
        [with_report(path, "Figures") for path in FIGURE_OUTPUTS],
    log:
        f"{RESULTS}/logs/figures.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    script:
        "../scripts/aggregate.py"
