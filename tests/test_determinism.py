"""Same data, settings and seed: the same run record in everything but timings and provenance
(folds, iterations, objectives, rho, predictions, accuracy), bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from alphaseed.cv import cross_validate
from alphaseed.records import build_run_record

TIMING_KEYS = {"seconds", "seconds_measured_total"}


def without_timings(value):
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items() if key not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def run_record(X, y, method: str, k, seed: int) -> dict:
    result = cross_validate(X, y, C=2182, gamma=0.2, k=k, method=method, seed=seed)
    record = build_run_record(result, "heart", provenance={})
    del record["provenance"]
    return without_timings(record)


@pytest.mark.mirror
@pytest.mark.parametrize("method", ["libsvm", "cold", "ato", "mir", "sir"])
def test_two_runs_with_the_same_seed_give_the_same_record(real_dataset, method):
    X, y = real_dataset("heart")
    first, second = (run_record(X, y, method, 10, seed=3) for _ in range(2))
    assert first == second
    assert first["summary"]["n_tested"] == 270 and first["summary"]["iterations"] > 0


@pytest.mark.mirror
def test_leave_one_out_seeders_are_deterministic(real_dataset):
    X, y = real_dataset("heart")
    X, y = X[:60], y[:60]
    for method in ("avg", "top"):
        assert run_record(X, y, method, "loo", seed=0) == run_record(X, y, method, "loo", seed=0)


@pytest.mark.mirror
def test_another_seed_gives_other_folds(real_dataset):
    X, y = real_dataset("heart")
    assert run_record(X, y, "cold", 10, seed=3)["folds_sha256"] != \
        run_record(X, y, "cold", 10, seed=4)["folds_sha256"]


REPO = Path(__file__).resolve().parents[1]
PIPELINE_JOBS = ["heart/k10/sir-cache.json", "heart/k10/mir-cache.json", "madelon/k10/sir-auto.json",
                 "adult/k3/libsvm.json"]


@pytest.mark.mirror
@pytest.mark.parametrize("job", PIPELINE_JOBS)
def test_a_pipeline_job_run_again_gives_the_same_record(job, tmp_path):
    """Rerun a job of the CI profile (which .ci/run executes first) and compare the records."""
    from alphaseed.cli import main
    from alphaseed.records import read_run_record

    path = REPO / "results" / "ci" / "runs" / job
    if not path.exists():
        pytest.skip(f"{path.relative_to(REPO)} is missing: run `make results PROFILE=ci` first")
    first = read_run_record(path)
    params = first["params"]
    arguments = ["cv", "--dataset", first["dataset"], "--k", str(first["k"]), "--method", first["method"],
                 "--seed", str(params["seed"]), "--kernel-mode", first["kernel_mode"],
                 "--out", str(tmp_path / "again.json")]
    if params.get("subsample"):
        arguments += ["--subsample", str(params["subsample"])]
    assert main(arguments) == 0
    again = read_run_record(tmp_path / "again.json")
    for record in (first, again):
        del record["provenance"]
    assert without_timings(again) == without_timings(first)
