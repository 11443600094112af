# Grid searches over (C, gamma): one `alphaseed search` job per (search, method), then a table
# per search comparing its methods.

SEARCHES = config.get("searches", {})
SEARCH_DEFAULTS = {
    "C": "-5:15:2",
    "gamma": "3:-15:-2",
    "k": 5,
    "methods": ["cold", "sir"],
    "kernel_mode": "auto",
}


def search_setting(name, key):
    return SEARCHES[name].get(key, SEARCH_DEFAULTS[key])


SEARCH_TABLES = [
    f"{RESULTS}/tables/search_{name}.{ext}"
    for name in SEARCHES
    for ext in ("csv", "md", "html")
]


def search_arguments(wildcards):
    """Arguments of ``alphaseed search``: every setting explicit, so that changing one reruns it."""
    name, solver = wildcards.search, config["solver"]
    dataset = SEARCHES[name]["dataset"]
    arguments = [
        "search",
        "--dataset",
        dataset,
        "--method",
        wildcards.method,
        f"--C={search_setting(name, 'C')}",
        f"--gamma={search_setting(name, 'gamma')}",
        "--k",
        str(search_setting(name, "k")),
        "--seed",
        str(config["seed"]),
        "--kernel-mode",
        search_setting(name, "kernel_mode"),
        "--eps",
        str(solver["eps"]),
        "--cache-mb",
        str(solver["cache_mb"]),
    ]
    if not solver["shrinking"]:
        arguments.append("--no-shrinking")
    subsample = config.get("subsample", {}).get(dataset)
    if subsample is not None:
        arguments += ["--subsample", str(subsample)]
    return arguments


wildcard_constraints:
    search=r"[A-Za-z_][A-Za-z0-9_]*",


rule search:
    input:
        lambda wildcards: f"{DATA_DIR}/processed/{SEARCHES[wildcards.search]['dataset']}.npz",
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
    conda:
        "../../environment.yml"
    threads: 1
    params:
        arguments=search_arguments,
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
