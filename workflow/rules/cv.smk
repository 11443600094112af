# One cross-validation job per (dataset, k, method, kernel mode) of the config's experiments.
# Its declared output is the run summary in PUBLISHED, which a clone carries over to the next
# machine; the full run record (with the predictions) is a side product under RESULTS. So a
# clone with the summaries but no results/ plans only the jobs whose summaries are missing: a
# finished job does not wait for its dataset (dataset_unless_done), and no rule reads the records.
# A job keeps its finished rounds in PUBLISHED/journal/ until its summary is written: committed
# with the summaries, they let a job cut short resume at its first unfinished round, here or on
# another machine at the same commit.


wildcard_constraints:
    k=r"loo|\d+",
    variant=r"libsvm|[a-z]+-(cache|shared|gram|auto)",


rule cv:
    input:
        dataset_unless_done(f"{PUBLISHED}/runs/{{dataset}}/k{{k}}/{{variant}}.json"),
    output:
        f"{PUBLISHED}/runs/{{dataset}}/k{{k}}/{{variant}}.json",
    log:
        f"{RESULTS}/logs/cv/{{dataset}}/k{{k}}/{{variant}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/cv/{{dataset}}/k{{k}}/{{variant}}.tsv"
    conda:
        "../../environment.yml"
    threads: timed_job_cores
    resources:
        mem_mb=cv_mem_mb,
        runtime=cv_runtime,
    params:
        arguments=cv_arguments,
        compute_threads=TIMED_THREADS,
        record=f"{RESULTS}/runs/{{dataset}}/k{{k}}/{{variant}}.json",
        journal=f"{PUBLISHED}/journal/{{dataset}}/k{{k}}/{{variant}}",
        first_round=first_round_folder,
    script:
        "../scripts/cross_validate.py"
