# Aggregation: run summaries -> tables (the paper's numbers beside) and figures, each a report item.


from alphaseed.pipeline.experiments import PAPER_STUDY, studies


report: "../report/workflow.rst"


rule tables:
    input:
        **{kind: run_summaries(kind) for kind in KINDS},
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
        **{kind: run_summaries(kind) for kind in KINDS},
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


# The published reproduction in PUBLISHED, from the run summaries and kernel facts alone (both
# kept there, so that a clone of a committed folder resumes where the last machine stopped).
KERNEL_FACTS = [
    f"{PUBLISHED}/kernel/{dataset}.json"
    for dataset in dict.fromkeys(job.dataset for job in TABLE_JOBS["table1"])
]
PUBLISHED_TABLES = [
    f"{PUBLISHED}/tables/{name}.{ext}"
    for name in TABLE_NAMES
    for ext in ("md", "csv", "tex")
]
PUBLISHED_FIGURES = [f"{PUBLISHED}/figures/{FIGURE_NAMES[kind]}.png" for kind in KINDS]
PUBLISHED_DOCUMENTS = [
    f"{PUBLISHED}/{name}"
    for name in ("runs.csv", "paper_vs_reproduced.md", "provenance.md")
]
PUBLISH_OUTPUTS = (
    PUBLISHED_TABLES
    + PUBLISHED_FIGURES
    + PUBLISHED_DOCUMENTS
    + [f"{PUBLISHED}/README.md"]
)


rule kernel_facts:
    input:
        dataset_unless_done(f"{PUBLISHED}/kernel/{{dataset}}.json"),
    output:
        f"{PUBLISHED}/kernel/{{dataset}}.json",
    log:
        f"{RESULTS}/logs/kernel_facts/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/kernel_facts/{{dataset}}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        # full MNIST: the dense features and a few 1,024 x 60,000 float64 blocks
        mem_mb=4000,
    params:
        arguments=kernel_facts_arguments,
    script:
        "../scripts/publish.py"


# Table 1's runs of each study beyond the paper, for the published README's findings.
STUDY_TABLE1_SUMMARIES = [
    str(job.record_path(f"{PUBLISHED}/runs"))
    for study in studies(config)
    if study != PAPER_STUDY
    for job in expand_experiments(config, study)["table1"]
]


rule publish:
    input:
        **{kind: run_summaries(kind) for kind in KINDS},
        kernel=KERNEL_FACTS,
        paper=PAPER_RESULTS,
        studies=STUDY_TABLE1_SUMMARIES,
    output:
        tables=PUBLISHED_TABLES,
        figures=PUBLISHED_FIGURES,
        documents=PUBLISHED_DOCUMENTS,
        readme=f"{PUBLISHED}/README.md",
    log:
        f"{RESULTS}/logs/publish.log",
    benchmark:
        f"{RESULTS}/benchmarks/publish.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    script:
        "../scripts/publish.py"
