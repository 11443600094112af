# One cross-validation job per (dataset, k, method, kernel mode) of the config's experiments.


wildcard_constraints:
    k=r"loo|\d+",
    variant=r"libsvm|[a-z]+-(cache|shared|gram|auto)",


rule cv:
    input:
        f"{DATA_DIR}/processed/{{dataset}}.npz",
    output:
        f"{RESULTS}/runs/{{dataset}}/k{{k}}/{{variant}}.json",
    log:
        f"{RESULTS}/logs/cv/{{dataset}}/k{{k}}/{{variant}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/cv/{{dataset}}/k{{k}}/{{variant}}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=cv_mem_mb,
        runtime=cv_runtime,
    params:
        arguments=cv_arguments,
    script:
        "../scripts/cross_validate.py"
