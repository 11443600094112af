# Studies beyond the paper (experiments whose study is not "paper"): the same tables under each
# study's own names (tables/table1_{study}, ...), beside the paper's and never mixed into its rows,
# in RESULTS/tables and in the published folder (md, csv, tex), from the run summaries.
from alphaseed.pipeline.experiments import PAPER_STUDY, studies
from alphaseed.report.tables import TABLE_FORMATS, study_names

STUDY_KIND_TABLES = {
    "table1": ["table1", "table2"],
    "table3": ["table3"],
    "loo": ["loocv"],
}
STUDY_RECORDS = {
    study: {
        kind: [str(job.record_path(f"{PUBLISHED}/runs")) for job in jobs]
        for kind, jobs in expand_experiments(config, study).items()
        if jobs
    }
    for study in studies(config)
    if study != PAPER_STUDY
}
PUBLISHED_STUDY_FORMATS = ("md", "csv", "tex")
STUDY_FOLDERS = [(RESULTS, TABLE_FORMATS), (PUBLISHED, PUBLISHED_STUDY_FORMATS)]
STUDY_TABLES = [
    f"{folder}/tables/{study_names(study)[name]}.{ext}"
    for folder, formats in STUDY_FOLDERS
    for study, kinds in STUDY_RECORDS.items()
    for kind in kinds
    for name in STUDY_KIND_TABLES[kind]
    for ext in formats
] + [
    f"{folder}/tables/{study_names(study)['comparison']}.{ext}"
    for folder, _ in STUDY_FOLDERS
    for study in STUDY_RECORDS
    for ext in ("md", "html")
]


rule study_tables:
    input:
        records=[
            path
            for kinds in STUDY_RECORDS.values()
            for paths in kinds.values()
            for path in paths
        ],
        paper=PAPER_RESULTS,
    output:
        [
            (
                report(
                    path,
                    caption="../report/tables/study.rst",
                    category="Beyond the paper",
                )
                if path.endswith(".html")
                else path
            )
            for path in STUDY_TABLES
        ],
    log:
        f"{RESULTS}/logs/study_tables.log",
    benchmark:
        f"{RESULTS}/benchmarks/study_tables.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        records=STUDY_RECORDS,
        folders=STUDY_FOLDERS,
    script:
        "../scripts/study_tables.py"
