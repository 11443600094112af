"""Snakemake script of rule prepare_dataset: fetch, verify and convert one dataset."""

import logging
import sys

from alphaseed.pipeline.data import prepare_dataset
from alphaseed.errors import AlphaseedError

logging.basicConfig(
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(message)s",
    handlers=[logging.FileHandler(snakemake.log[0], mode="w"), logging.StreamHandler()],
)
try:
    prepare_dataset(snakemake.wildcards.dataset, snakemake.config)
except AlphaseedError as error:
    # Log the message alone: it names the dataset and what to fix; a traceback adds nothing.
    logging.error("%s", error)
    sys.exit(1)
