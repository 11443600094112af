"""Same data, settings and seed: the same run record in everything but timings and provenance
(folds, iterations, objectives, rho, predictions, accuracy), bit for bit."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from alphaseed.cv import cross_validate
from alphaseed.pipeline.environment import OPENBLAS_CORE_CHOICE, X86_64
from alphaseed.pipeline.records import build_run_record

# Timings (the interval is of the seconds), and how a run came by its rounds (read back from its journal, or
# round 1 from another method's run), which is not what the rounds are.
VARYING_KEYS = {"seconds", "seconds_measured_total", "interval", "rounds_resumed", "rounds_shared"}


def without_timings(value):
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items() if key not in VARYING_KEYS}
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
    from alphaseed.pipeline.records import read_run_record

    path = REPO / "results" / "ci" / "runs" / job
    if not path.exists():
        pytest.skip(f"{path.relative_to(REPO)} is missing: run `make results PROFILE=ci` first")
    first = read_run_record(path)
    params = first["params"]
    arguments = ["cv", "--dataset", first["dataset"], "--k", str(first["k"]), "--method", first["method"],
                 "--seed", str(params["seed"]), "--kernel-mode", first.get("requested_kernel_mode", first["kernel_mode"]),
                 "--out", str(tmp_path / "again.json")]
    if params.get("subsample"):
        arguments += ["--subsample", str(params["subsample"])]
    assert main(arguments) == 0
    again = read_run_record(tmp_path / "again.json")
    for record in (first, again):
        del record["provenance"]
    assert without_timings(again) == without_timings(first)


# Runs pin_native_libraries (a job) or the command line, with the portable core type set to argv[2] (another
# than this CPU's own choice, so that a missing or late pin shows), then loads NumPy's and SciPy's OpenBLAS.
PINNED_KERNELS = """
import sys
import alphaseed.pipeline.environment as job_environment
job_environment.PORTABLE_OPENBLAS_CORE = sys.argv[2]
from alphaseed.cli import main
job_environment.pin_native_libraries(1) if sys.argv[1] == "job" else main(["publish", "--from", "/nonexistent"])
import scipy.linalg
from alphaseed.pipeline.provenance import blas_kernels
print(blas_kernels())
"""


@pytest.mark.skipif(platform.machine() not in X86_64, reason="OpenBLAS core types are x86-64 names")
@pytest.mark.parametrize("entry", ["job", "command line"])
@pytest.mark.parametrize("chosen", [None, "Nehalem"])
def test_jobs_and_the_command_line_pin_the_blas_kernels_whatever_the_machine_says(entry, chosen):
    """MIR's and ATO's seeds depend on OpenBLAS's kernels, which it picks per CPU or takes from a machine-wide
    OPENBLAS_CORETYPE. Catches a job script or command line that does not pin them, pins them after NumPy
    loaded (too late), leaves SciPy's OpenBLAS out, lets the machine's setting win, or ignores the kernels
    ALPHASEED_OPENBLAS_CORETYPE chooses (how the published run's are repeated)."""
    env = {key: value for key, value in os.environ.items() if key != OPENBLAS_CORE_CHOICE}
    env["OPENBLAS_CORETYPE"] = "Prescott"  # what a machine might set for every process
    if chosen:
        env[OPENBLAS_CORE_CHOICE] = chosen
    found = subprocess.run([sys.executable, "-c", PINNED_KERNELS, entry, "Sandybridge"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip().split("; ")
    assert len(found) >= 2 and all(kernel.endswith(chosen or "Sandybridge") for kernel in found), found
