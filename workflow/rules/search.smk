# Grid searches over (C, gamma): one `alphaseed search` job per (search, method), or with
# gamma_jobs one per gamma column merged by `alphaseed search-merge`, then a table per search
# comparing its methods.


wildcard_constraints:
    search=r"[A-Za-z_][A-Za-z0-9_]*",
    gamma=r"-?[0-9]+(\.[0-9]+)?",


rule search_column:
    input:
        lambda wildcards: f"{DATA_DIR}/processed/{SEARCHES[wildcards.search]['dataset']}.npz",
    output:
        json=f"{RESULTS}/search/{{search}}/{{method}}/gamma{{gamma}}.json",
        csv=temp(f"{RESULTS}/search/{{search}}/{{method}}/gamma{{gamma}}.csv"),
        png=temp(f"{RESULTS}/search/{{search}}/{{method}}/gamma{{gamma}}.png"),
    log:
        f"{RESULTS}/logs/search/{{search}}/{{method}}/gamma{{gamma}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/search/{{search}}/{{method}}/gamma{{gamma}}.tsv"
    conda:
        "../../environment.yml"
    threads: timed_job_cores
    resources:
        mem_mb=search_job_mem_mb,
    params:
        arguments=search_arguments,
        compute_threads=TIMED_THREADS,
    script:
        "../scripts/search.py"


rule search:
    input:
        search_inputs,
    output:
        json=f"{RESULTS}/search/{{search}}/{{method}}.json",
        csv=f"{RESULTS}/search/{{search}}/{{method}}.csv",
        png=report(
            f"{RESULTS}/search/{{search}}/{{method}}.png",
            caption="../report/search/heat_map.rst",
            category="Grid search",
            subcategory="{search}",
        ),
    log:
        f"{RESULTS}/logs/search/{{search}}/{{method}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/search/{{search}}/{{method}}.tsv"
    wildcard_constraints:
        method=r"[a-z]+",
    conda:
        "../../environment.yml"
    threads: timed_job_cores
    resources:
        mem_mb=search_job_mem_mb,
    params:
        arguments=search_arguments,
        compute_threads=TIMED_THREADS,
    script:
        "../scripts/search.py"


rule search_table:
    input:
        lambda wildcards: [
            f"{RESULTS}/search/{wildcards.search}/{method}.json"
            for method in search_setting(wildcards.search, "methods")
        ],
    output:
        csv=f"{RESULTS}/tables/search_{{search}}.csv",
        md=f"{RESULTS}/tables/search_{{search}}.md",
        html=report(
            f"{RESULTS}/tables/search_{{search}}.html",
            caption="../report/search/table.rst",
            category="Grid search",
            subcategory="{search}",
        ),
    log:
        f"{RESULTS}/logs/search_table_{{search}}.log",
    conda:
        "../../environment.yml"
    threads: 1
    script:
        "../scripts/search_table.py"
