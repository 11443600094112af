"""Shared fixtures: the repository's config, the dataset mirror, datasets prepared once per session."""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path

from alphaseed.pipeline.environment import pin_blas_kernels

# Before anything loads NumPy: the BLAS kernels of the pipeline's jobs, so that a test repeating a
# job (test_determinism) gets its MIR and ATO seeds on any CPU.
pin_blas_kernels()

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from alphaseed.pipeline.config import load_config  # noqa: E402
from alphaseed.pipeline.data import MIRROR_ENV, load_dataset  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]

# CI (.ci/run) selects this profile: the same examples on every run, so that a red build always
# means a change broke something, never that a fresh random draw found an old edge case. Local
# runs keep the default profile, which draws new examples and stores failures in .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None)

# The paper's datasets (Table 2) with the label counts of the LIBSVM files.
PAPER_DATASETS = {
    "adult": {"n": 32561, "dim": 123, "C": 100, "gamma": 0.5, "positive": 7841, "negative": 24720},
    "heart": {"n": 270, "dim": 13, "C": 2182, "gamma": 0.2, "positive": 120, "negative": 150},
    "madelon": {"n": 2000, "dim": 500, "C": 1, "gamma": 0.7071, "positive": 1000, "negative": 1000},
    "mnist": {
        "n": 60000,
        "dim": 780,
        "C": 10,
        "gamma": 0.125,
        "positive": 29492,
        "negative": 30508,
    },
    "webdata": {
        "n": 49749,
        "dim": 300,
        "C": 64,
        "gamma": 7.8125,
        "positive": 1479,
        "negative": 48270,
    },
}


@pytest.fixture(scope="session")
def paper_datasets() -> dict:
    return PAPER_DATASETS


@pytest.fixture(scope="session")
def repo_config() -> dict:
    """The validated config.yaml of this checkout (treat as read-only; deep-copy to change it)."""
    return load_config(REPO_ROOT / "config.yaml")


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The dataset mirror folder; skips the test when ALPHASEED_DATA_MIRROR is unset."""
    folder = os.environ.get(MIRROR_ENV)
    if not folder:
        pytest.skip(f"{MIRROR_ENV} is not set: the real datasets are not available")
    return Path(folder).resolve()


@pytest.fixture(scope="session")
def mirror_config(repo_config, mirror, tmp_path_factory) -> dict:
    """config.yaml reading from the mirror and writing into a session-wide temporary data_dir."""
    config = copy.deepcopy(repo_config)
    config["mirror"] = str(mirror)
    config["data_dir"] = str(tmp_path_factory.mktemp("data"))
    return config


@pytest.fixture(scope="session")
def real_dataset(mirror_config):
    """``real_dataset(name) -> (X, y)``: a configured dataset prepared from the mirror once per session."""

    @functools.cache
    def load(name: str):
        return load_dataset(name, mirror_config)

    return load
