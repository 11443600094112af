"""Run summaries and the published reproduction: built from summaries alone, equal to what the full
records give, refusing a broken folder, and resumable from a clone that holds only the summaries."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from alphaseed.atomic import write_json
from alphaseed.cli import main
from alphaseed.pipeline import kernel_facts as kernel_facts_module
from alphaseed.pipeline import provenance as provenance_module
from alphaseed.pipeline.config import load_config
from alphaseed.pipeline.experiments import all_jobs
from alphaseed.pipeline.records import RunRecordError, read_run_record
from alphaseed.pipeline.summaries import read_run, summarise
from alphaseed.report import deviations, documents, formats, tables
from alphaseed.report import runs as published_runs
from alphaseed.report.publish import publish_folder
from alphaseed.report.runs import PublishError

REPO = Path(__file__).resolve().parents[1]
PAPER_RESULTS = REPO / "workflow" / "resources" / "paper_results.csv"
# (k, method, kernel mode) of the runs below: Table 1 at k = 10, Table 3 at k = 3 and 10, leave-one-out.
RUNS = [("10", "libsvm", "cache"), ("10", "cold", "cache"), ("10", "sir", "cache"), ("10", "mir", "cache"),
        ("10", "sir", "gram"), ("3", "libsvm", "cache"), ("3", "sir", "cache"), ("3", "sir", "gram"),
        ("loo", "libsvm", "cache"), ("loo", "sir", "cache"), ("loo", "top", "cache")]


def _libsvm_file(path: Path, n: int = 40, seed: int = 0) -> Path:
    """Two overlapping Gaussian clouds in LibSVM format: an informative kernel, some bounded SVs."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    path.write_text("".join(f"{label:+d} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(row)) + "\n"
                            for label, row in zip(y, X)))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Real runs of ``alphaseed cv --summary`` on a small file: the records and the summaries, same layout,
    as from a checkout with nothing uncommitted (whatever the checkout running the tests holds)."""
    root = tmp_path_factory.mktemp("runs")
    data = _libsvm_file(root / "toy.libsvm")
    with pytest.MonkeyPatch.context() as patch:
        as_if_committed(patch)
        _run_toy_cases(root, data)
    return root


def as_if_committed(patch: pytest.MonkeyPatch) -> None:
    """Runs made from now on record a checkout with nothing uncommitted, the test checkout's commit."""
    real_state = provenance_module.git_state
    patch.setattr(provenance_module, "git_state", lambda *folder: (real_state(*folder)[0], False))


def _run_toy_cases(root: Path, data: Path) -> None:
    for k, method, mode in RUNS:
        stem = method if method == "libsvm" else f"{method}-{mode}"
        relative = Path("toy") / f"k{k}" / f"{stem}.json"
        status = main(["cv", "--data", str(data), "--C", "2", "--gamma", "0.5", "--k", k, "--method", method,
                       "--kernel-mode", mode, "--out", str(root / "records" / relative),
                       "--summary", str(root / "summaries" / relative)])
        assert status == 0


def _groups(folder: Path) -> dict[str, list[Path]]:
    paths = published_runs.find_runs(folder)
    return published_runs.group_runs(paths, published_runs.read_runs(paths))


def test_the_summary_is_the_record_without_predictions(runs):
    """Catches a summary that copies the whole record (predictions and per-round kernel counters) or drops a figure
    the tables read, a predicted-class count taken from something else than the predictions, a job without its
    wall time."""
    for record_path in sorted((runs / "records").rglob("*.json")):
        record = read_run_record(record_path)
        summary = read_run(runs / "summaries" / record_path.relative_to(runs / "records"))
        assert "predictions" not in summary and all("kernel" not in r for r in summary["rounds"])
        assert summary["summary"] == record["summary"] and summary["params"] == record["params"]
        assert [r["iterations"] for r in summary["rounds"]] == [r["iterations"] for r in record["rounds"]]
        predictions = np.array(record["predictions"])
        assert summary["predicted"] == {"1": int((predictions == 1).sum()), "-1": int((predictions == -1).sum()),
                                        "0": int((predictions == 0).sum())}
        assert summary["job"]["wall_seconds"] > 0
        if record["method"] != "libsvm":
            assert summary["kernel"]["requests"] == sum(r["kernel"]["requests"] for r in record["rounds"])
        assert summarise(record, summary["job"]["wall_seconds"]) == summary


def test_tables_and_figures_from_summaries_equal_those_from_records(runs, tmp_path):
    """The round trip: catches a summary that loses or alters anything the tables read (a capped-round flag, a time,
    the estimate), or a reader that treats summaries and records differently."""
    outputs = {}
    for source in ("records", "summaries"):
        out = tmp_path / source
        tables.write_tables(_groups(runs / source), PAPER_RESULTS, out)
        outputs[source] = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    assert outputs["records"].keys() == {f"{name}.{ext}" for name in ("table1", "table2", "table3", "loocv")
                                         for ext in tables.TABLE_FORMATS} | {"paper_vs_reproduced.md",
                                                                             "paper_vs_reproduced.html"}
    assert outputs["records"] == outputs["summaries"]


def test_table1_at_a_glance_puts_each_kernel_modes_figures_in_their_own_column(runs):
    """Catches the README's Table 1 taking a fast kernel mode's seconds as the paper-faithful run's (or the other
    way round), losing the fast engine's seconds, leaving iterations empty where only a fast run was made, and a
    cold/method that divides one engine's cold start by another engine's method."""
    paths = _groups(runs / "summaries")["table1"]
    frame = tables.comparison(tables.load_runs(paths), tables.read_paper_results(PAPER_RESULTS), "table1")
    # the quick runs' timings can round alike, and then swapped columns would pass: set them apart
    gram = frame["label"] == "sir (gram)"
    frame.loc[gram, "seconds_total"] = 2 * frame.loc[frame["label"] == "sir", "seconds_total"].iloc[0]
    seconds = {row["label"]: formats.format_seconds(row["seconds_total"]) for _, row in frame.iterrows()}
    assert seconds["sir"] != seconds["sir (gram)"]
    glance = formats.table1_at_a_glance(frame).set_index("method")
    assert list(glance.index) == ["libsvm", "cold", "mir", "sir"]
    assert glance.loc["sir", "seconds (this run)"] == seconds["sir"]
    assert glance.loc["sir", "fast engine s (this run)"] == seconds["sir (gram)"]
    assert glance.loc["mir", "fast engine s (this run)"] == formats.NOT_AVAILABLE
    by_label = frame.set_index("label")
    assert glance.loc["sir", "cold/method (this run)"] == formats.format_ratio(
        by_label.loc["cold", "seconds_total"] / by_label.loc["sir", "seconds_total"])
    # no cold start ran in gram mode: the fast engine's cold/method is not taken from another engine's cold
    assert glance.loc["sir", "fast engine cold/method (this run)"] == formats.NOT_AVAILABLE

    fast_only = [path for path in paths if path.name != "sir-cache.json"]
    frame = tables.comparison(tables.load_runs(fast_only), tables.read_paper_results(PAPER_RESULTS), "table1")
    sir = formats.table1_at_a_glance(frame).set_index("method").loc["sir"]
    gram = frame[frame["label"] == "sir (gram)"].iloc[0]
    assert sir["seconds (this run)"] == formats.NOT_AVAILABLE
    assert sir["iterations (this run)"] == formats.format_count(gram["iterations"])


def test_the_readme_opens_with_the_findings_each_with_its_figures():
    """Catches findings that take a fast kernel mode's cold start for the paper setting's (seeding's own gain
    would then mix two engines), that drop the markers of an estimate, that compare iterations with the wrong
    paper row, or that leave out a paper row with no run here, in Table 1 or in another table (MNIST's seeded
    leave-one-out ran in the fast engine only), or name a cell of Tables 1 and 3 twice."""
    rows = [
        dict(dataset="adult", k="10", method="libsvm", label="libsvm", kernel_mode=None, seconds_total=1790.0,
             iterations=396881, paper_iterations=397565, paper_seconds_total=6783.0, estimated=True,
             iterations_estimated=False),  # its iterations from the complete cold run
        dict(dataset="adult", k="10", method="sir", label="sir", kernel_mode="cache", seconds_total=216.0,
             speedup_cold=1.1528, speedup_libsvm=8.287, speedup_libsvm_estimated=True,
             paper_speedup_libsvm=1.80, paper_seconds_total=3762.0),
        dict(dataset="adult", k="10", method="sir", label="sir (auto)", kernel_mode="auto", seconds_total=91.2,
             speedup_cold=9.99),
        dict(dataset="adult", k="10", method="ato", label="ato", kernel_mode=None, seconds_total=None,
             paper_seconds_total=9562.0),
    ]
    frame = pd.DataFrame(rows)
    flags = [c for c in frame.columns if c.endswith(formats.FLAGS)]
    frame[flags] = frame[flags].fillna(False).astype(bool)
    loo = pd.DataFrame([dict(dataset="mnist", k="loo", method="sir", label="sir", kernel_mode="cache",
                             seconds_total=None, paper_seconds_total=1.7e7),
                        dict(dataset="mnist", k="loo", method="sir", label="sir (gram)", kernel_mode="auto",
                             seconds_total=3.3e5)])
    lines = documents.findings(frame, beyond={"table3": frame, "loo": loo})
    assert "adult 396,881 against 397,565 (-0.2 %)" in lines[0]
    assert "SIR 1.15× on adult" in lines[1] and "9.99" not in lines[1]
    assert f"SIR 8.29×{formats.ESTIMATED} on adult (paper 1.80×)" in lines[2]
    assert "adult ato at k = 10 (not run), mnist sir at k = loo (run in the fast engine only)." in lines[3]


def test_the_findings_name_every_figure_that_rests_on_least():
    """Catches findings that hide a stand-in, an estimate from one round, an estimate wider than the target,
    a ratio of two CPUs or of two sittings on one CPU, or an overlay; that name a sound estimate among them, or
    a group of two CPUs among those of two sittings; or that print the line when nothing is thin."""
    frame = pd.DataFrame([dict(dataset="adult", k="10", method="libsvm", label="libsvm", kernel_mode=None,
                               seconds_total=10.0, iterations=5, paper_iterations=5, paper_seconds_total=20.0)])
    runs = pd.DataFrame({
        "dataset": ["adult", "adult", "mnist", "webdata", "webdata"], "k": ["10", "10", "10", "loo", "loo"],
        "label": ["libsvm", "cold", "cold", "mir", "libsvm"], "cpu": ["Xeon", "EPYC", "Xeon", "Xeon", "Xeon"],
        "estimated": [True, False, True, True, False], "interval": [0.04, None, None, 0.6, None],
        "stands_in_for_libsvm": [False, False, True, False, False],
        "started_utc": ["2026-01-01T10:00:00+00:00", "2026-01-02T10:00:00+00:00", "2026-01-01T11:00:00+00:00",
                        "2026-01-01T12:00:00+00:00", "2026-01-02T11:00:00+00:00"],
        "finished_utc": ["2026-01-01T11:00:00+00:00", "2026-01-02T11:00:00+00:00", "2026-01-01T12:00:00+00:00",
                         "2026-01-01T13:00:00+00:00", "2026-01-02T12:00:00+00:00"]})
    line = documents.findings(frame, runs=runs, overlays=["six-rounds.yaml"])[-1]
    assert line.startswith("- **Where the figures rest on least**")
    assert "LibSVM did not run on mnist" in line
    assert f"no interval ({formats.interval_text(None)}): mnist cold (k = 10);" in line
    assert "wider than ±20 % of their seconds: webdata mir (k = loo) ±60 %;" in line
    assert "adult libsvm" not in line
    assert "the ratios of adult (k = 10) pair runs of two CPUs" in line
    assert "the ratios of webdata (k = loo) pair runs of two sittings" in line
    assert "config overlay: six-rounds.yaml" in line and "(paper_vs_reproduced.md#machines)" in line
    sound = runs.iloc[[0, 3]].assign(cpu="Xeon", estimated=False)
    assert not any("rest on least" in line for line in documents.findings(frame, runs=sound))


def test_runs_are_grouped_as_the_papers_tables(runs):
    """Catches a grouping that puts the k = 10-only MIR run into Table 3 or leave-one-out runs into Table 1."""
    groups = {kind: sorted(str(p.relative_to(runs / "summaries")) for p in paths)
              for kind, paths in _groups(runs / "summaries").items()}
    assert "toy/k10/mir-cache.json" in groups["table1"] and "toy/k10/mir-cache.json" not in groups["table3"]
    assert "toy/k3/sir-gram.json" in groups["table3"] and "toy/k10/sir-gram.json" in groups["table3"]
    assert groups["loo"] == ["toy/kloo/libsvm.json", "toy/kloo/sir-cache.json", "toy/kloo/top-cache.json"]


def test_publish_builds_the_folder_from_summaries_alone(runs, tmp_path):
    """Catches a publish that still reads the full records (they are absent here), misses an output, or writes
    deviation numbers that are not the runs' own (the SV share, the carry's share, the estimated rows)."""
    folder = tmp_path / "reproduction"
    shutil.copytree(runs / "summaries", folder / "runs")
    X, y = _toy_arrays(runs / "toy.libsvm")
    write_json(folder / "kernel" / "toy.json", kernel_facts_module.kernel_facts(X, y, 0.5))
    assert main(["publish", "--from", str(folder / "runs"), "--out", str(folder), "--paper", str(PAPER_RESULTS)]) == 0
    expected = {f"tables/{name}.{ext}" for name in ("table1", "table2", "table3", "loocv") for ext in ("md", "csv", "tex")}
    expected |= {f"figures/{name}.png" for name in ("iterations_per_round", "speedup_vs_k", "loocv")}
    expected |= {"runs.csv", "paper_vs_reproduced.md", "provenance.md", "README.md"}
    assert expected <= {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}

    runs_csv = tables.pd.read_csv(folder / "runs.csv", dtype={"k": str})
    assert len(runs_csv) == len(RUNS)
    libsvm = read_run(folder / "runs" / "toy" / "k10" / "libsvm.json")
    share = np.mean([r["n_sv"] / r["train_size"] for r in libsvm["rounds"]])
    document = (folder / "paper_vs_reproduced.md").read_text()
    assert f"{100 * share:.2f} %" in document
    sir = runs_csv[(runs_csv["k"] == "10") & (runs_csv["label"] == "sir")].iloc[0]
    carry = sir["seconds_gradient_init_seeded"] / sir["seconds_rounds_seeded"]
    assert f"{100 * carry:.2f} %" in document
    assert "0 of 11 runs are estimated" in document
    readme = (folder / "README.md").read_text()
    assert "](tables/table1.md)" in readme and "figures/loocv.png" in readme
    provenance = (folder / "provenance.md").read_text()
    assert f"{runs_csv['wall_seconds'].sum():,.0f} s summed over {len(RUNS)} job(s)" in provenance
    assert f"of {len(RUNS)} run(s) shared the machine" in provenance


def _toy_arrays(path: Path):
    from alphaseed.pipeline.data import load_dataset

    return load_dataset(path)


@pytest.mark.parametrize("breakage", ["missing folder", "empty folder", "not json", "full record renamed wrong",
                                      "another summary version", "predictions kept"])
def test_publish_refuses_a_broken_folder(runs, tmp_path, breakage, capsys):
    """Catches a publish that skips a bad or misplaced file and publishes tables without it (or crashes with a
    traceback), and one that leaves half a folder behind: nothing is written when the input is refused."""
    source = tmp_path / "runs"
    shutil.copytree(runs / "summaries", source)
    sir = source / "toy" / "k10" / "sir-cache.json"
    if breakage == "missing folder":
        shutil.rmtree(source)
    elif breakage == "empty folder":
        shutil.rmtree(source)
        source.mkdir()
    elif breakage == "not json":
        sir.write_text('{"summary_version": 1, ')
    elif breakage == "full record renamed wrong":
        sir.rename(source / "toy" / "k3" / "mir-cache.json")
    elif breakage == "another summary version":
        sir.write_text(json.dumps(json.loads(sir.read_text()) | {"summary_version": 99}))
    else:
        content = json.loads(sir.read_text())
        sir.write_text(json.dumps(content | {"predictions": [1] * 40}))
    out = tmp_path / "out"
    assert main(["publish", "--from", str(source), "--out", str(out), "--paper", str(PAPER_RESULTS)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("alphaseed: error:") and "Traceback" not in error
    assert str(source) in error
    assert not out.exists()


def test_a_record_or_summary_of_another_kind_is_refused(tmp_path):
    """Catches a reader that accepts any JSON object as a run."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"dataset": "heart"}))
    with pytest.raises(RunRecordError, match="schema_version"):
        read_run(path)


def test_kernel_facts_measure_the_nearest_pair_off_the_diagonal():
    """Catches a largest off-diagonal value that takes the diagonal (always 1), the farthest pair instead of the
    nearest, or misses a duplicate; checked against every pair computed naively."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4)) * 2
    X[7] = X[19]
    y = np.where(np.arange(30) < 18, 1.0, -1.0)
    gamma = 0.3
    facts = kernel_facts_module.kernel_facts(X, y, gamma)
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    off = ~np.eye(30, dtype=bool)
    K = np.exp(-gamma * d2).astype(np.float32)
    assert facts["duplicate_pairs"] == 1 and facts["largest_off_diagonal"] == 1.0
    assert facts["mean_off_diagonal"] == pytest.approx(K[off].mean(), rel=1e-5)
    assert facts["majority_share"] == 0.6

    far = kernel_facts_module.kernel_facts(np.arange(10.0)[:, None] * 100, y[:10], gamma)
    assert far["largest_off_diagonal"] == 0.0 and far["nearest_squared_distance"] == 10000.0
    X = np.delete(X, 19, axis=0)
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) + np.diag(np.full(29, np.inf))
    assert kernel_facts_module.kernel_facts(X, y[:29], gamma)["largest_off_diagonal"] == pytest.approx(
        float(np.float32(np.exp(-gamma * d2.min()))), rel=1e-6)


def test_identity_kernel_rounds_are_told_apart_by_their_training_class_counts(tmp_path):
    """On an exact identity kernel (gamma 1e6), catches class counts matched to the wrong round (the test fold's
    counts, or the round before), a run whose folds are not the facts' (another seed) still explained by them, and
    the claim itself failing: a SIR round whose training set keeps the previous one's class counts starts at the
    optimum and takes 0 iterations."""
    rng = np.random.default_rng(5)
    labels = np.where(np.arange(43) < 26, 1, -1)
    data = tmp_path / "unbalanced.libsvm"
    data.write_text("".join(f"{label:+d} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(row)) + "\n"
                            for label, row in zip(labels, rng.normal(size=(43, 3)))))
    facts = tmp_path / "kernel" / "unbalanced.json"
    assert main(["kernel-facts", "--data", str(data), "--gamma", "1e6", "--seed", "0", "--out", str(facts)]) == 0
    for seed in (0, 1):
        summary = tmp_path / "runs" / "unbalanced" / "k10" / f"sir-gram-{seed}.json"
        assert main(["cv", "--data", str(data), "--C", "2", "--gamma", "1e6", "--k", "10", "--method", "sir",
                     "--kernel-mode", "gram", "--seed", str(seed), "--out", str(tmp_path / f"record{seed}.json"),
                     "--summary", str(summary)]) == 0
    counts = json.loads(facts.read_text())["training_class_counts"]
    run = read_run(tmp_path / "runs" / "unbalanced" / "k10" / "sir-gram-0.json")
    assert counts["train_size"] == [r["train_size"] for r in run["rounds"]]
    positives, sizes = np.array(counts["train_positive"]), np.array(counts["train_size"])
    kept = int(np.sum((positives[1:] == positives[:-1]) & (sizes[1:] == sizes[:-1])))
    assert 0 < kept < 9

    summaries = published_runs.read_runs(sorted((tmp_path / "runs").rglob("*.json")))
    lines = deviations.class_counts_section(summaries, kernel_facts_module.read_kernel_facts(tmp_path / "kernel"))
    table = [line for line in "\n".join(lines).splitlines() if line.startswith("| unbalanced")]
    assert len(table) == 1  # the seed-1 run's folds are not the facts'
    cells = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert cells[2:5] == ["9", str(kept), str(kept)]
    assert cells[6] == str(9 - kept) and cells[5] == "0"


def test_iterations_beside_the_papers_take_a_fast_only_method_and_the_cold_count_for_libsvm(tmp_path):
    """Catches the iterations section dropping a method run only in a fast kernel mode (full MNIST's SIR), needing a
    LibSVM run where the cold start gives its count, and an estimated count set beside the paper's total unmarked
    or unscaled (the first rounds' sum)."""
    from test_tables import make_record, write_records

    records = [make_record("mnist", 10, "cold", 1.0, 129_000, kernel_mode="auto"),
               make_record("mnist", 10, "sir", 1.0, 13_000, kernel_mode="auto"),
               make_record("mnist", 10, "mir", 1.0, 26_000, max_rounds=2)]
    frame = tables.comparison(tables.load_runs(write_records(tmp_path, records)),
                              tables.read_paper_results(PAPER_RESULTS), "table1")
    frame["iterations_round1"] = frame["iterations"]
    text = "\n".join(deviations.iterations_section(frame))
    rows = {cells[1]: cells for cells in ([c.strip() for c in line.strip("|").split("|")]
                                          for line in text.splitlines() if line.startswith("| mnist"))}
    assert rows["sir (auto)"][3] == "130,000" and rows["sir (auto)"][6] == f"{130_000 / 1_290_000:.3f}"
    assert rows["sir (auto)"][8] == "yes"  # 0.101 of LibSVM here against the paper's 0.200
    # 26,000 a round, the 8 rounds left counted at the seeded round 2's: estimated over all ten as the paper's are
    assert rows["mir"][3] == "260,000" + formats.ESTIMATED and rows["mir"][8] == f"({formats.ESTIMATED})"
    assert "1 of 2 rows do" in text


def _ci_config() -> dict:
    overlay = yaml.safe_load((REPO / "workflow" / "configs" / "ci.yaml").read_text())
    return load_config(REPO / "config.yaml", overrides=overlay)


def test_a_clone_with_the_summaries_plans_only_the_missing_runs(tmp_path):
    """Resumability. A fresh clone holding the CI profile's summaries but two, and no results/ or prepared data:
    the dry run plans exactly those two cv jobs. Catches a pipeline whose cv output is the full run record (every
    job would rerun), whose cv jobs depend on the freshly prepared datasets' timestamps, or whose tables read the
    full records, and a workflow that reruns every job whose output is older than its rule's script (the default
    profile drops Snakemake's code trigger)."""
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent))
    jobs = all_jobs(_ci_config())
    missing = {str(job.record_path("reproduction/runs")) for job in jobs[1::len(jobs) // 2][:2]}
    for job in jobs:
        path = tmp_path / job.record_path("reproduction/runs")
        if str(job.record_path("reproduction/runs")) not in missing:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}\n")
    for dataset in {job.dataset for job in jobs}:
        (tmp_path / "reproduction" / "kernel").mkdir(parents=True, exist_ok=True)
        (tmp_path / "reproduction" / "kernel" / f"{dataset}.json").write_text("{}\n")
    # The scripts land after the summaries, newer, as a checkout may write them.
    for name in ("Snakefile", "config.yaml", "environment.yml", "profiles"):
        shutil.copy(REPO / name, tmp_path / name, follow_symlinks=False)
    shutil.copytree(REPO / "workflow", tmp_path / "workflow")
    environment = os.environ | {"PYTHONPATH": str(REPO / "src")}
    result = subprocess.run(
        [snakemake, "--dry-run", "--cores", "1", "--configfile", "workflow/configs/ci.yaml",
         "--config", "publish_dir=reproduction", "data_dir=fresh-data"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=environment)
    assert result.returncode == 0, result.stdout + result.stderr
    planned = set(re.findall(r"output: (reproduction/runs/\S+\.json)", result.stdout))
    assert planned == missing
    assert re.search(r"^cv\s+2$", result.stdout, re.MULTILINE)
    assert not re.search(r"^kernel_facts\s", result.stdout, re.MULTILINE)


def test_runs_of_uncommitted_code_are_refused_unless_allowed_and_then_marked(runs, tmp_path):
    """Catches a publish that takes runs whose code no commit holds without a word, and one that, told
    to take them, does not say so in the README and provenance.md."""
    folder = tmp_path / "reproduction"
    shutil.copytree(runs / "summaries", folder / "runs")
    X, y = _toy_arrays(runs / "toy.libsvm")
    write_json(folder / "kernel" / "toy.json", kernel_facts_module.kernel_facts(X, y, 0.5))
    dirty_run = folder / "runs" / "toy" / "k10" / "sir-cache.json"
    summary = json.loads(dirty_run.read_text())
    summary["provenance"]["git_dirty"] = True
    write_json(dirty_run, summary)
    common = ["publish", "--from", str(folder / "runs"), "--out", str(folder), "--paper", str(PAPER_RESULTS)]
    with pytest.raises(PublishError, match="1 of .* uncommitted changes.*sir-cache.json"):
        publish_folder(folder / "runs", folder, PAPER_RESULTS)
    assert main(common) == 2
    assert main(common + ["--allow-dirty"]) == 0
    assert "1 in a checkout with uncommitted changes" in (folder / "README.md").read_text()
    assert "(dirty): 1 run(s)" in (folder / "provenance.md").read_text()


def test_publish_by_hand_puts_the_studies_beyond_the_paper_in_their_own_tables(runs, tmp_path, monkeypatch):
    """Catches `alphaseed publish` putting a study's runs (heart_scale, which config.yaml runs only in its
    informative study) into the paper's tables and runs.csv, a filter that drops other datasets too, and a
    publish by hand that leaves the study's own tables unwritten or unlinked."""
    folder = tmp_path / "reproduction"
    shutil.copytree(runs / "summaries", folder / "runs")
    as_if_committed(monkeypatch)
    data = _libsvm_file(tmp_path / "heart_scale.libsvm", seed=1)
    assert main(["cv", "--data", str(data), "--C", "2", "--gamma", "0.5", "--k", "10", "--method", "sir",
                 "--kernel-mode", "cache", "--out", str(tmp_path / "record.json"),
                 "--summary", str(folder / "runs" / "heart_scale" / "k10" / "sir-cache.json")]) == 0
    common = ["publish", "--from", str(folder / "runs"), "--out", str(folder), "--paper", str(PAPER_RESULTS)]
    assert main(common + ["--config", str(REPO / "config.yaml")]) == 0
    assert set(tables.pd.read_csv(folder / "runs.csv")["dataset"]) == {"toy"}
    study_table1 = (folder / "tables" / "table1_informative.md").read_text()
    assert "heart_scale" in study_table1 and "toy" not in study_table1
    assert "](tables/speedups_informative.md)" in (folder / "README.md").read_text()
    assert main(common + ["--config", str(tmp_path / "no-config.yaml")]) == 0
    assert set(tables.pd.read_csv(folder / "runs.csv")["dataset"]) == {"toy", "heart_scale"}


def test_sittings_split_the_run_where_it_paused_and_count_overlapping_jobs_once():
    """Catches an elapsed time that sums the jobs' wall times (two jobs at a time would count twice) or that
    counts the pause between two machines' sittings as time the run took."""
    runs = tables.pd.DataFrame({
        "started_utc": ["2026-01-01T10:00:00+00:00", "2026-01-01T10:30:00+00:00", "2026-01-02T08:00:00+00:00"],
        "finished_utc": ["2026-01-01T11:00:00+00:00", "2026-01-01T11:30:00+00:00", "2026-01-02T08:15:00+00:00"],
    })
    stretches = documents.sittings(runs)
    assert stretches["jobs"].tolist() == [2, 1]
    assert stretches["elapsed_seconds"].tolist() == [5400.0, 900.0]


def test_provenance_counts_the_runs_that_shared_the_machine():
    """Catches a provenance.md that hides runs timed beside other work, counts the unwatched
    (older) runs as alone, or names no figure."""
    runs = tables.pd.DataFrame({"others_cpu_per_wall": [0.02, 1.4, None], "steal_per_wall": [0.0, 0.3, None]})
    line = documents._machine_shares(runs)
    assert "1 of 2 run(s) shared the machine" in line and "the most 1.40" in line
    assert "up to 0.30 cores (steal)" in line and "not recorded for 1 older run(s)" in line


def test_a_leave_one_out_estimate_shows_the_seeded_rounds_it_rests_on(tmp_path):
    """Catches a leave-one-out estimate published without the iterations of the rounds it was extrapolated from,
    one that counts the cold round 1 among SIR's seeded rounds, or intervals missing or under each other's
    header."""
    data = _libsvm_file(tmp_path / "toy.libsvm")
    path = tmp_path / "runs" / "toy" / "kloo" / "sir-cache.json"
    assert main(["cv", "--data", str(data), "--C", "2", "--gamma", "0.5", "--k", "loo", "--method", "sir",
                 "--kernel-mode", "cache", "--max-rounds", "3", "--out", str(tmp_path / "record.json"),
                 "--summary", str(path)]) == 0
    run = read_run(path)
    run["summary"].update(interval_iterations=0.11, interval=0.37)  # distinct, so a swap of the columns shows
    section = "\n".join(deviations.loo_estimates_section([run], published_runs.runs_frame([run])))
    lines = section.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| dataset"))
    cells = lambda line: [cell.strip() for cell in line.strip("|").split("|")]  # noqa: E731
    row = dict(zip(cells(lines[header]), cells(lines[header + 2])))
    assert row["dataset"] == "toy" and row["rounds measured"] == "3 of 40" and row["seeded rounds measured"] == "2"
    seeded = ", ".join(formats.format_count(r["iterations"]) for r in run["rounds"][1:])
    assert seeded in row["iterations per round (measured, seeded where seeded)"]
    assert row["interval, iterations"] == "±11 %" and row["interval, seconds"] == "±37 %"


def test_a_config_overlay_is_listed_with_the_reason_its_header_gives(tmp_path):
    """Catches a published folder that hides a job's overlay (its cut rounds then look like config.yaml's own) or
    drops the reason; and a section printed where no job ran with one."""
    assert deviations.overlays_section([]) == []
    overlay = tmp_path / "six-rounds.yaml"
    overlay.write_text("# For one job: its round 7 fails at the tag.\n# So it runs six.\nexperiments: {}\n")
    section = "\n".join(deviations.overlays_section([overlay]))
    assert "[configs/six-rounds.yaml](configs/six-rounds.yaml): For one job: its round 7 fails at the tag. " \
           "So it runs six." in section
    assert "experiments" not in section


def test_a_run_moved_between_machines_names_the_ratios_that_mix_cpus():
    """Catches a published run that spans two CPUs without saying which runs ran where, or that calls a ratio
    sound when its two runs (one dataset, one k) ran on different CPUs."""
    one_sitting = ["2026-01-01T10:00:00+00:00"] * 4
    runs = tables.pd.DataFrame({"dataset": ["adult", "adult", "mnist", "mnist"], "k": ["10", "10", "3", "10"],
                                "cpu": ["Xeon", "EPYC", "EPYC", "Xeon"], "started_utc": one_sitting,
                                "finished_utc": ["2026-01-01T11:00:00+00:00"] * 4})
    section = "\n".join(deviations.machines_section(runs))
    assert "mix CPUs, so read their ratios with care: adult (k = 10)." in section
    assert "| EPYC " in section and "mnist k = 3" in section and "sittings" not in section
    assert deviations.machines_section(runs.assign(cpu="Xeon")) == []


def test_the_ratios_of_a_group_run_in_two_sittings_are_named():
    """Catches a published run whose groups (one dataset, one k) ran in two sittings of one CPU, the machine's
    speed changed in between, without a word on their ratios; a pause under the sitting gap splitting a
    sitting; and runs out of time order numbered in the order of the rows."""
    runs = tables.pd.DataFrame({
        "dataset": ["webdata", "adult", "webdata", "adult"], "k": ["loo", "10", "loo", "10"], "cpu": ["EPYC"] * 4,
        "started_utc": ["2026-01-02T09:00:00+00:00", "2026-01-01T10:00:00+00:00", "2026-01-01T10:45:00+00:00",
                        "2026-01-01T11:10:00+00:00"],
        "finished_utc": ["2026-01-02T10:00:00+00:00", "2026-01-01T10:40:00+00:00", "2026-01-01T11:00:00+00:00",
                         "2026-01-01T11:20:00+00:00"]})
    assert published_runs.sitting_numbers(runs).tolist() == [1, 0, 0, 0]
    assert published_runs.mixed_sitting_groups(runs) == ["webdata (k = loo)"]
    section = "\n".join(deviations.machines_section(runs))
    assert "read their ratios with care too: webdata (k = loo)." in section and "mix CPUs" not in section
    assert deviations.machines_section(runs.iloc[1:]) == []


def test_compare_finds_a_rerun_that_moved_in_any_round_and_ignores_timings_and_the_resolved_mode(runs, tmp_path):
    """Catches a comparison that checks totals only (a changed rho in one round with the same iterations), one
    that calls a rerun different for its timings or for `auto` resolving to another kernel mode (every mode gives
    the same figures), and a rerun with no published counterpart passing unnoticed."""
    published, rerun = runs / "summaries", tmp_path / "rerun"
    shutil.copytree(published, rerun)
    changed = rerun / "toy" / "k10" / "sir-cache.json"
    summary = json.loads(changed.read_text())
    summary["rounds"][3]["rho"] += 1e-12
    summary["rounds"][0]["seconds"]["train"] *= 2
    changed.write_text(json.dumps(summary))
    moved = rerun / "toy" / "k10" / "sir-gram.json"
    summary = json.loads(moved.read_text())
    summary["kernel_mode"] = "shared"
    summary["summary"]["seconds"]["total"] += 1
    moved.write_text(json.dumps(summary))

    rows = published_runs.compare_with_published(published, rerun).set_index("run")
    assert rows.loc["toy/k10/sir-cache", "same"] == "no"
    assert rows.loc["toy/k10/sir-cache", "first differences"] == "round 4 rho"
    assert (rows.drop(index="toy/k10/sir-cache")["same"] == "yes").all()
    assert main(["compare", str(rerun), "--published", str(published)]) == 2

    (rerun / "toy" / "k10" / "sir-cache.json").unlink()
    assert main(["compare", str(rerun), "--published", str(published)]) == 0
    shutil.copy(rerun / "toy" / "k10" / "cold-cache.json", rerun / "toy" / "k10" / "ato-cache.json")
    assert main(["compare", str(rerun), "--published", str(published)]) == 2


def test_the_findings_name_the_datasets_whose_kernel_is_the_identity():
    """Catches an identity-kernel finding that names a dataset with an informative kernel (Adult's largest
    off-diagonal K is 1), leaves out one whose kernel is the identity, or sets its accuracy beside anything but
    its majority class."""
    frame = pd.DataFrame([dict(dataset="heart", k="10", method="libsvm", label="libsvm", kernel_mode=None,
                               seconds_total=0.04, accuracy=55.5556, iterations=6993, paper_iterations=6988,
                               paper_seconds_total=0.36),
                          dict(dataset="adult", k="10", method="libsvm", label="libsvm", kernel_mode=None,
                               seconds_total=1790.0, accuracy=84.0, iterations=1, paper_iterations=1,
                               paper_seconds_total=6783.0)])
    facts = {"heart": {"largest_off_diagonal": 0.0067, "majority_share": 150 / 270},
             "adult": {"largest_off_diagonal": 1.0, "majority_share": 0.7592},
             "mnist": {"largest_off_diagonal": 0.0, "majority_share": 0.5085}}
    line = [line for line in documents.findings(frame, facts) if "identity" in line]
    assert len(line) == 1
    assert "heart (largest off-diagonal K 0.0067, accuracy 55.56 % against a majority class of 55.56 %)" in line[0]
    assert "mnist (largest off-diagonal K 0)" in line[0] and "adult" not in line[0]
    assert documents.findings(frame) == [line for line in documents.findings(frame, facts) if "identity" not in line]


def test_the_findings_say_what_seeding_saves_on_each_studys_informative_kernels():
    """Catches a study finding that sets SIR against a cold start of another kernel mode (gram's cold against
    cache's SIR), prefers the fast mode where the paper's ran, drops a dataset run only in the fast mode, or
    quotes a saving where every alpha sits at a bound (no free SV) as if the kernel had shown it."""
    rows = [dict(dataset="heart_scale", method="cold", kernel_mode="cache", seconds_total=0.0094, iterations=1318),
            dict(dataset="heart_scale", method="sir", kernel_mode="cache", seconds_total=0.0104, iterations=838,
                 speedup_cold=0.91),
            dict(dataset="heart_scale", method="cold", kernel_mode="gram", seconds_total=0.005, iterations=1318),
            dict(dataset="heart_scale", method="sir", kernel_mode="gram", seconds_total=0.001, iterations=838,
                 speedup_cold=5.0),
            dict(dataset="mnist_scale", method="cold", kernel_mode="gram", seconds_total=100.0, iterations=200),
            dict(dataset="mnist_scale", method="sir", kernel_mode="gram", seconds_total=66.7, iterations=100,
                 speedup_cold=1.5, speedup_cold_estimated=True),
            dict(dataset="madelon_scale", method="cold", kernel_mode="cache", seconds_total=4.0, iterations=9000,
                 free_sv_share=0.0, C=0.03125),
            dict(dataset="madelon_scale", method="sir", kernel_mode="cache", seconds_total=1.5, iterations=900,
                 speedup_cold=2.65, free_sv_share=0.0, C=0.03125)]
    frame = pd.DataFrame(rows)
    flags = [c for c in frame.columns if c.endswith(formats.FLAGS)]
    frame[flags] = frame[flags].fillna(False).astype(bool)
    line = documents._study_finding("informative", frame)[0]
    assert "heart_scale 36 % of the iterations, cold/SIR 0.91× (`cache`)" in line and "5.00×" not in line
    assert f"mnist_scale 50 % of the iterations, cold/SIR 1.50×{formats.ESTIMATED} (`gram`)" in line
    assert "madelon_scale 90 % of the iterations, cold/SIR 2.65× (`cache`; no free SV at C = 0.03125" in line
    assert line.count("no free SV") == 1
    assert "tables/speedups_informative.md" in line


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_published_folders_links_into_the_docs_reach_a_heading():
    """Catches a docs page or heading renamed under a link that the published README or its deviations keep:
    GitHub opens a dead anchor at the top of the page without a word."""
    from conftest import REPO_ROOT

    sources = Path(documents.__file__).read_text() + Path(deviations.__file__).read_text()
    # a link split over two string literals is joined first
    links = set(re.findall(r"\.\./docs/[\w/]+\.md#[\w-]+", re.sub(r'"\s+f?"', "", sources)))
    assert documents.SEEDED_COUNTS_MEASURED in links and len(links) >= 2
    for link in links:
        page, anchor = link.removeprefix("../").split("#")
        headings = re.findall(r"^#+ (.+)$", (REPO_ROOT / page).read_text(), flags=re.MULTILINE)
        assert anchor in {_github_anchor(h) for h in headings}, link


def test_the_guide_sums_up_the_published_folder_as_it_stands():
    """Catches the user guide's and the project README's account of `reproduction/` (runs, hours,
    finishing day, estimates) left behind when the folder is republished with rerun jobs: the guide
    said 17.14 h elapsed, finished 2026-12-05, after the folder had moved to 17.55 h, finished
    2026-12-06, and the README said 121 runs where the folder held 126."""
    from conftest import REPO_ROOT

    guide = " ".join((REPO_ROOT / "docs/user_guide/reproducing.md").read_text().split())
    published = (REPO_ROOT / "reproduction/README.md").read_text()
    said = re.search(r"holds the full-size run: (\d+) runs of the paper's tables.*? took ([\d.]+) h of job wall "
                     r"time in ([\d.]+) h elapsed, over sittings that finished (\S+)\. (\d+) of them are estimated",
                     guide)
    made = re.search(r"(\d+) runs at full size.*? ([\d.]+) h of job wall time in ([\d.]+) h elapsed, finished "
                     r"(\d{4}-\d\d-\d\d)", published)
    assert said and made
    runs = pd.read_csv(REPO_ROOT / "reproduction/runs.csv")
    assert said.groups() == (*made.groups(), str(int(runs["estimated"].sum())))
    project_readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    readme_said = re.search(r"The published full-size run is \S+: (\d+) runs", project_readme)
    assert readme_said and readme_said.group(1) == made.group(1)
