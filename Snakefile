from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/data.smk"
