"""Killed jobs leave no run record, and the aggregation never reads a partial one.

A real ``alphaseed cv`` process is killed with SIGKILL in the middle of its rounds: no record
may exist at its output path (the record is written to a temporary name and renamed only when
complete), so Snakemake, which decides by the output's presence, runs the job again, and the
rerun writes a complete record. A record cut short by any other means is refused by
``read_run_record`` and therefore by the tables, with the package's error naming the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from alphaseed.pipeline.records import RunRecordError, read_run_record
from alphaseed.report.tables import load_runs


@pytest.fixture
def slow_dataset(tmp_path) -> Path:
    """Leave-one-out on 150 overlapping points: a few seconds, reporting after every round."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 4))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=150) > 0, 1, -1)
    path = tmp_path / "slow.txt"
    path.write_text("".join(
        f"{label} " + " ".join(f"{j + 1}:{value:.6f}" for j, value in enumerate(row)) + "\n"
        for label, row in zip(y, X)))
    return path


def cv_command(data: Path, out: Path, k: str = "loo") -> list[str]:
    return [sys.executable, "-m", "alphaseed.cli", "cv", "--data", str(data), "--C", "10",
            "--gamma", "0.5", "--k", k, "--method", "cold", "--out", str(out)]


def test_a_killed_cv_run_leaves_no_record_and_the_rerun_completes(slow_dataset, tmp_path):
    out = tmp_path / "runs" / "slow" / "kloo" / "cold-cache.json"
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    process = subprocess.Popen(cv_command(slow_dataset, out), stderr=subprocess.PIPE, text=True,
                               stdout=subprocess.DEVNULL, env=environment)
    try:
        rounds_seen = 0
        for line in process.stderr:
            if "round " in line:
                rounds_seen += 1
                if rounds_seen == 5:
                    process.send_signal(signal.SIGKILL)
                    break
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        process.stderr.close()
    assert rounds_seen == 5, "the run ended before it could be killed mid-way"
    assert process.returncode == -signal.SIGKILL
    assert not out.exists()
    # What Snakemake does next: the output is missing, so the job runs again, to completion.
    subprocess.run(cv_command(slow_dataset, out), check=True, capture_output=True, timeout=300,
                   env=environment)
    record = read_run_record(out)
    assert record["summary"]["rounds_run"] == record["summary"]["rounds_total"] == 150
    assert record["summary"]["n_tested"] == 150


@pytest.fixture
def complete_record(tmp_path, slow_dataset) -> Path:
    out = tmp_path / "complete.json"
    subprocess.run(cv_command(slow_dataset, out, k="3"), check=True, capture_output=True,
                   timeout=300)
    return out


@pytest.mark.parametrize("keep", [0.0, 0.01, 0.5, 0.99])
def test_a_record_cut_short_is_refused_by_the_reader_and_the_tables(complete_record, tmp_path,
                                                                    keep):
    text = complete_record.read_bytes()
    partial = tmp_path / "partial.json"
    partial.write_bytes(text[: int(len(text) * keep)])
    with pytest.raises(RunRecordError, match=str(partial)):
        read_run_record(partial)
    with pytest.raises(RunRecordError, match=str(partial)):
        load_runs([complete_record, partial])


def test_a_record_that_parses_but_lost_its_tail_keys_is_refused(complete_record, tmp_path):
    record = json.loads(complete_record.read_text())
    del record["provenance"], record["folds_sha256"]
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(record))
    with pytest.raises(RunRecordError, match="damaged.json"):
        load_runs([damaged])
    assert len(load_runs([complete_record])) == 1
