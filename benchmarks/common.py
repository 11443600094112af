"""What the benchmark scripts share: their datasets, their child processes, their CSV output."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_case(name: str, subsample: int | None):
    """(X, y, config entry, seed) of a config dataset, or of its stratified sample."""
    from alphaseed.pipeline.config import load_config
    from alphaseed.pipeline.data import load_dataset
    from alphaseed.cv import stratified_subsample

    config = load_config(ROOT / "config.yaml")
    X, y = load_dataset(name, config)
    if subsample:
        keep = stratified_subsample(y, subsample, config["seed"])
        X, y = X[keep], y[keep]
    return X, y, config["datasets"][name], config["seed"]


def run_child(command: list[str], threads: int) -> dict:
    """Run ``command`` with LibSVM's and our thread counts set before either loads; return the
    JSON object on its last line of output."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def write_csv(table, path: Path) -> None:
    from alphaseed.atomic import atomic_path

    with atomic_path(path) as temporary:
        table.to_csv(temporary, index=False)
