from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/data.smk"
include: "workflow/rules/common.smk"
include: "workflow/rules/cv.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        TABLE_OUTPUTS,
        FIGURE_OUTPUTS,
