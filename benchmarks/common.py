"""What the benchmark scripts share: their datasets, their child processes, their CSV output."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# A folder of cases written by ``export_case``: where it is set, the cases are read from it rather than
# from the config's datasets, so the benchmarks run where neither the data nor the pipeline's packages are
# (a lent machine with more cores).
EXPORTED = "ALPHASEED_BENCH_DATA"


def load_case(name: str, subsample: int | None):
    """(X, y, config entry, seed) of a config dataset, or of its stratified sample."""
    if os.environ.get(EXPORTED):
        return _exported(Path(os.environ[EXPORTED]) / _case_file(name, subsample))
    from alphaseed.cv import stratified_subsample
    from alphaseed.pipeline.config import load_config
    from alphaseed.pipeline.data import load_dataset

    config = load_config(ROOT / "config.yaml")
    # The config's folders are the repository's, wherever the script runs from.
    config["data_dir"] = str(ROOT / config["data_dir"])
    X, y = load_dataset(name, config)
    if subsample:
        keep = stratified_subsample(y, subsample, config["seed"])
        X, y = X[keep], y[keep]
    return X, y, config["datasets"][name], config["seed"]


def search_splits(X, y, k: int, seed: int, folds: int | None = None) -> list:
    """The (train, test) index arrays of the first ``folds`` (all if None) of ``StratifiedKFold``'s
    k splits, shuffled with ``seed``: the splits every grid-search benchmark hands its variants."""
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(X, y))[:folds]


def first_training_set(case: str, k: int):
    """(X, labels -1/+1, the first training set's indices) of ``case`` (dataset[:stratified sample
    size]): the first of ``search_splits``' folds, as ``bench_search.py`` splits."""
    import numpy as np

    name, _, size = case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    y = np.where(y == y.max(), 1.0, -1.0)
    return X, y, search_splits(X, y, k, seed, 1)[0][0]


def add_grid_arguments(parser, *, case: str, C: str, gamma: str) -> None:
    """The options of a grid-search benchmark's case, grid and splits, with these defaults."""
    parser.add_argument("--case", default=case, help="dataset[:stratified sample size]")
    parser.add_argument("--C", default=C, help="log2 C, begin:end:step (grid.py's)")
    parser.add_argument("--gamma", default=gamma, help="log2 gamma, begin:end:step")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--folds", type=int, help="search on the first FOLDS of the k splits only "
                        "(a look at full size within a sitting); all k if not given")


def check_grid_arguments(parser, args) -> None:
    """Stop with an argument error where ``add_grid_arguments``' k or folds cannot split."""
    if args.k < 2:
        parser.error(f"--k must be at least 2; got {args.k}")
    if args.folds is not None and not 1 <= args.folds <= args.k:
        parser.error(f"--folds must lie in [1, k = {args.k}]; got {args.folds}")


# The peers' input by the data's share of non-zero features: dense arrays from DENSE_SHARE up, CSR
# below SPARSE_SHARE, both in between, where which is faster is not known beforehand.
DENSE_SHARE = 0.5
SPARSE_SHARE = 0.1
PEER_INPUTS = ("best", "dense", "sparse", "both")
# argparse formats a help text with %: its percent signs are doubled.
PEER_INPUTS_HELP = (f"what the peers get: dense arrays, CSR, both, or (best) dense for dense data (at least "
                    f"{DENSE_SHARE:.0%}% non-zero), CSR for sparse data (below {SPARSE_SHARE:.0%}%), both in between")


def peer_inputs(choice: str, dataset: str, subsample: int | None) -> list[str]:
    """The inputs the peers get (``--peer-inputs``, one of PEER_INPUTS): ``best`` goes by the data's
    density."""
    if choice != "best":
        return ["dense", "sparse"] if choice == "both" else [choice]
    X, *_ = load_case(dataset, subsample)
    density = X.nnz / (X.shape[0] * X.shape[1])
    return ["dense"] if density >= DENSE_SHARE else ["sparse"] if density < SPARSE_SHARE else ["dense", "sparse"]


def export_case(name: str, subsample: int | None, folder: Path) -> Path:
    """Write a case's data, C, gamma and seed to ``folder`` for ``load_case`` to read elsewhere."""
    import numpy as np

    X, y, entry, seed = load_case(name, subsample)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _case_file(name, subsample)
    np.savez_compressed(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y,
                        C=entry["C"], gamma=entry["gamma"], seed=seed)
    return path


def _case_file(name: str, subsample: int | None) -> str:
    return f"{name}-{subsample}.npz" if subsample else f"{name}.npz"


def _exported(path: Path):
    import numpy as np
    import scipy.sparse as sp

    with np.load(path) as saved:
        X = sp.csr_matrix((saved["data"], saved["indices"], saved["indptr"]), shape=tuple(saved["shape"]))
        entry = {"C": float(saved["C"]), "gamma": float(saved["gamma"])}
        return X, saved["y"], entry, int(saved["seed"])


def grid_points(results, splits: int):
    """One row per point of a grid search's ``cv_results_``: log2 C, log2 gamma, its fit seconds
    summed over its ``splits`` (``mean_fit_time`` times the splits: thread-seconds where points run
    side by side), its iterations (None where the search does not count them) and its accuracy in %."""
    import numpy as np
    import pandas as pd

    iterations = results["total_iterations"] if "total_iterations" in results else None
    return pd.DataFrame({"log2_C": np.log2(results["param_C"].astype(float)),
                         "log2_gamma": np.log2(results["param_gamma"].astype(float)),
                         "fit_seconds": results["mean_fit_time"] * splits,
                         "iterations": pd.array(iterations, dtype="Int64") if iterations is not None else pd.NA,
                         "accuracy": 100.0 * results["mean_test_score"]})


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
