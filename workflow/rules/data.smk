DATA_DIR = config["data_dir"]


wildcard_constraints:
    dataset="|".join(config["datasets"]),


rule all_data:
    input:
        expand(f"{DATA_DIR}/processed/{{dataset}}.npz", dataset=config["datasets"]),


rule prepare_dataset:
    output:
        f"{DATA_DIR}/processed/{{dataset}}.npz",
    log:
        "logs/prepare_dataset/{dataset}.log",
    benchmark:
        "logs/benchmarks/prepare_dataset/{dataset}.tsv"
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
    params:
        # a changed config entry (URL, labels, fingerprint) rebuilds the dataset
        entry=lambda wildcards: config["datasets"][wildcards.dataset],
    script:
        "../scripts/prepare_dataset.py"
