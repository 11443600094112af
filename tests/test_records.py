"""Run records: built from a CVResult, written atomically, validated when read back."""

from __future__ import annotations

import copy
import json
import sys

import numpy as np
import pytest

from alphaseed import cross_validate
from alphaseed.errors import AlphaseedError
from alphaseed.cv import folds_sha256
from alphaseed.pipeline.provenance import collect_provenance
from alphaseed.pipeline.records import (
    SCHEMA_VERSION,
    RunRecordError,
    build_run_record,
    read_run_record,
    write_run_record,
)


@pytest.fixture(scope="module")
def record() -> dict:
    rng = np.random.default_rng(0)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(60, 3)) + y[:, None]
    result = cross_validate(X, y, 1.0, 0.5, 5, "libsvm", max_rounds=2)
    provenance = collect_provenance({"dataset": "synthetic"}, "f" * 64,
                                    result.started_utc, result.finished_utc)
    return build_run_record(result, "synthetic", provenance, subsample=None)


def test_record_follows_the_shared_layout(record):
    assert record["schema_version"] == SCHEMA_VERSION
    assert record["k"] == 5 and record["n_folds"] == 5 and record["method"] == "libsvm"
    assert record["summary"]["rounds_run"] == 2 and record["summary"]["rounds_total"] == 5
    assert record["summary"]["estimated"] is True
    assert len(record["rounds"]) == 2
    assert set(record["rounds"][0]["seconds"]) == {"seed", "gradient_init", "train", "predict"}
    assert len(record["predictions"]) == record["n"] == 60
    assert set(record["predictions"]) <= {-1, 0, 1}
    assert record["summary"]["n_tested"] == sum(p != 0 for p in record["predictions"])


def test_write_then_read_round_trips(record, tmp_path):
    path = tmp_path / "runs" / "run.json"
    write_run_record(path, record)
    assert read_run_record(path) == json.loads(json.dumps(record))
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]


def test_folds_fingerprint_identifies_the_folds(record):
    assert len(record["folds_sha256"]) == 64
    assert folds_sha256(np.arange(3)) != folds_sha256(np.arange(3)[::-1])


def test_provenance_names_code_libraries_and_machine(record):
    provenance = record["provenance"]
    for key in ("git_commit", "numpy", "numba", "libsvm", "cpu", "hostname", "started_utc"):
        assert provenance[key], key
    assert provenance["threads"] >= 1
    assert provenance["git_dirty"] in (True, False, None)


def test_a_failed_write_leaves_the_old_file_untouched(record, tmp_path):
    path = tmp_path / "run.json"
    write_run_record(path, record)
    before = path.read_bytes()
    broken = copy.deepcopy(record)
    broken["summary"]["accuracy"] = float("nan")
    with pytest.raises(ValueError):
        write_run_record(path, broken)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_an_invalid_record_is_not_written(record, tmp_path):
    broken = copy.deepcopy(record)
    del broken["rounds"][0]["iterations"]
    with pytest.raises(RunRecordError, match="rounds.0"):
        write_run_record(tmp_path / "run.json", broken)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("damage, message", [
    (lambda r: r.update(schema_version=99), "schema_version is 99"),
    (lambda r: r.pop("provenance"), "provenance"),
    (lambda r: r["summary"].pop("seconds"), "seconds"),
    (lambda r: r.update(k="ten"), "'k'"),
    (lambda r: r["params"].update(C="big"), "params.C"),
])
def test_reading_rejects_a_record_that_breaks_the_schema(record, tmp_path, damage, message):
    broken = copy.deepcopy(record)
    damage(broken)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(RunRecordError, match=message) as raised:
        read_run_record(path)
    assert isinstance(raised.value, AlphaseedError)


def test_reading_names_an_unreadable_file(tmp_path):
    with pytest.raises(RunRecordError, match="cannot read"):
        read_run_record(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(RunRecordError, match="not valid JSON"):
        read_run_record(tmp_path / "bad.json")


def test_provenance_names_no_folder_of_the_machine():
    """Catches provenance that records the interpreter's absolute path (sys.executable): published run
    summaries would carry the machine's folder layout."""
    from alphaseed.pipeline.provenance import collect_provenance

    provenance = collect_provenance()
    assert provenance["environment"] in ("venv", "conda", "system")
    assert not any(isinstance(v, str) and sys.prefix in v for v in provenance.values())


def test_a_machine_watch_counts_a_neighbour_and_not_the_run_itself(tmp_path):
    """Catches a watch that misses a process busy beside the run (the overlap the published runs
    never showed), or one that counts the run's own CPU time as another's: a neighbour spinning a
    core for a second must show as about one core; this process spinning, or a worker process of
    its own (as joblib's), as about none."""
    import subprocess
    import time

    from alphaseed.pipeline.provenance import MachineWatch

    started = tmp_path / "spinning"
    spin = (f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\n"
            "end = time.perf_counter() + 1.2\nwhile time.perf_counter() < end: pass")

    def wait_until_it_spins():
        # Its interpreter's start took over 0.2 s on a loaded machine, and the watch then saw part
        # of a core: the watch starts when the spin does.
        deadline = time.perf_counter() + 30
        while not started.exists() and time.perf_counter() < deadline:
            time.sleep(0.01)
        started.unlink()

    # Another job: started through a shell that exits at once, so it is no process of this run's.
    subprocess.run(["sh", "-c", f"'{sys.executable}' -c \"$0\" &", spin], check=True)
    wait_until_it_spins()
    watch = MachineWatch()
    time.sleep(0.8)
    beside = watch.shares()
    time.sleep(0.5)   # until it has stopped
    watch = MachineWatch()
    end = time.perf_counter() + 0.8
    while time.perf_counter() < end:
        pass
    alone = watch.shares()
    worker = subprocess.Popen([sys.executable, "-c", spin])   # the run's own worker, still running
    try:
        wait_until_it_spins()
        watch = MachineWatch()
        time.sleep(0.8)
        own_worker = watch.shares()
    finally:
        worker.wait()
    assert beside["others_cpu_per_wall"] > 0.6
    assert alone["others_cpu_per_wall"] < 0.5
    assert own_worker["others_cpu_per_wall"] < 0.5
    assert alone["steal_per_wall"] >= 0.0


def test_the_provenance_carries_what_else_ran_beside_the_run(record):
    """Catches a run record without the watch's figures (so a published run could not show that it
    ran alone) and a figure dropped on the way from the watch to the record."""
    assert collect_provenance(machine={"others_cpu_per_wall": 0.5, "steal_per_wall": 0.1})[
        "others_cpu_per_wall"] == 0.5
    assert {"others_cpu_per_wall", "steal_per_wall"} <= set(record["provenance"])
