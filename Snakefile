from snakemake.utils import min_version

from alphaseed.pipeline.config import validate_config

min_version("8.0")


configfile: "config.yaml"


# The package's validation: the schema (through snakemake.utils.validate) plus the checks a
# schema cannot express (k against n, finite numbers), each error naming the key.
validate_config(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/data.smk"
include: "workflow/rules/common.smk"
include: "workflow/rules/cv.smk"
include: "workflow/rules/search.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/studies.smk"


rule all:
    default_target: True
    input:
        TABLE_OUTPUTS,
        FIGURE_OUTPUTS,
        PUBLISH_OUTPUTS,
        SEARCH_TABLES,
        STUDY_TABLES,
