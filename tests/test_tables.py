"""Tables from small hand-made run records in the documented run-record format."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from alphaseed.report import formats, tables
from alphaseed.pipeline.experiments import Job

REPO = Path(__file__).resolve().parents[1]
PAPER_RESULTS = REPO / "workflow" / "resources" / "paper_results.csv"
PROVENANCE_KEYS = ("config", "dataset_fingerprint", "package_version", "git_commit", "python", "numpy", "scipy",
                   "numba", "libsvm", "cpu", "threads", "omp_num_threads", "hostname", "started_utc", "finished_utc")


def make_record(dataset, k, method, seconds_per_round, iterations_per_round, *, kernel_mode="cache", n=40,
                max_rounds=None, cap_round=None, init_per_round=0.0):
    """A run record as ``alphaseed.pipeline.records`` documents it, with per-round figures given by the test."""
    n_folds = n if k == "loo" else k
    rounds_run = max_rounds or n_folds
    rounds = []
    for h in range(1, rounds_run + 1):
        rounds.append(
            {
                "round": h, "train_size": n - n // n_folds, "test_size": n // n_folds,
                "iterations": iterations_per_round, "n_sv": 5, "n_bounded_sv": 1, "objective": -1.5, "rho": 0.1,
                "n_correct": n // n_folds, "iteration_cap_hit": h == cap_round,
                "seconds": {"seed": init_per_round, "gradient_init": 0.0, "train": seconds_per_round, "predict": 0.0},
            }
        )
    init = init_per_round * rounds_run
    rest = seconds_per_round * rounds_run
    measured = init + rest
    total = measured * n_folds / rounds_run
    return {
        "schema_version": 1, "dataset": dataset, "k": k, "n_folds": n_folds, "method": method,
        "kernel_mode": kernel_mode, "n": n, "dim": 3,
        "params": {"C": 1.0, "gamma": 0.5, "eps": 1e-3, "cache_mb": 100.0, "shrinking": True, "seed": 0,
                   "max_rounds": max_rounds, "subsample": None},
        "summary": {
            "accuracy": 75.0, "n_tested": n, "n_correct": 3 * n // 4, "iterations": iterations_per_round * rounds_run,
            "rounds_run": rounds_run, "rounds_total": n_folds, "estimated": max_rounds is not None,
            "iteration_cap_hit": cap_round is not None,
            "seconds": {"total": total, "init": init, "rest": rest, "compile": 0.0, "kernel": 0.0, "conversion": 0.0},
            "seconds_measured_total": measured,
        },
        "rounds": rounds,
        "predictions": [1] * n,
        "folds_sha256": "0" * 64,
        "provenance": {key: None for key in PROVENANCE_KEYS} | {"cpu": "Test CPU", "threads": 1},
    }


def write_records(root: Path, records: list[dict]) -> list[Path]:
    paths = []
    for record in records:
        job = Job(record["dataset"], str(record["k"]), record["method"], record["kernel_mode"], None, None)
        path = job.record_path(root / "runs")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
        paths.append(path)
    return paths


@pytest.fixture
def groups(tmp_path):
    table1 = [
        make_record("heart", 10, "libsvm", 0.4, 100),
        make_record("heart", 10, "cold", 0.2, 100),
        make_record("heart", 10, "sir", 0.1, 50, init_per_round=0.01),
        make_record("heart", 10, "ato", 0.1, 60, init_per_round=0.1, cap_round=3),
        make_record("heart", 10, "sir", 0.05, 50, kernel_mode="gram"),
        make_record("heart", 10, "cold", 0.1, 100, kernel_mode="gram"),
    ]
    table3 = [make_record("heart", k, m, s, 10) for k in (3, 10) for m, s in (("libsvm", 0.4), ("cold", 0.2), ("sir", 0.1))]
    loo = [make_record("heart", "loo", m, s, 5, max_rounds=4) for m, s in (("libsvm", 0.4), ("avg", 0.2), ("sir", 0.1))]
    return {
        "table1": write_records(tmp_path / "t1", table1),
        "table3": write_records(tmp_path / "t3", table3),
        "loo": write_records(tmp_path / "loo", loo),
    }


def test_paper_results_is_tidy_and_complete():
    """Catches a duplicated or missing figure of the paper in paper_results.csv (a row per table, dataset,
    k, method and metric)."""
    paper = tables.read_paper_results(PAPER_RESULTS)
    assert list(paper.columns) == ["table", "dataset", "k", "method", "metric", "value", "note"]
    assert not paper.duplicated(["table", "dataset", "k", "method", "metric"]).any()
    counts = paper.groupby("table").size().to_dict()
    # Table 1: per dataset 1 libsvm total + 3x(init, rest) + 4 iterations + 2 accuracies; Table 3: 3 k x 2 methods.
    assert counts == {"table1": 5 * 13, "table2": 5 * 4, "table3": 5 * 6, "loo": 5 * 6}


def _paper_tex() -> str:
    mirror = os.environ.get("ALPHASEED_DATA_MIRROR")
    tex = Path(mirror).parent / "paper" / "wen2017-alpha-seeding.tex" if mirror else None
    if tex is None or not tex.exists():
        pytest.skip("the paper's .tex is not beside ALPHASEED_DATA_MIRROR (../shared/paper); cannot cross-check")
    return tex.read_text(encoding="utf-8")


def _tex_rows(tex: str, label: str) -> dict[str, list[float]]:
    """Numbers of each dataset row of the tabular that carries ``label``."""
    end = tex.index(f"\\label{{{label}}}")
    body = tex[tex.rindex("\\begin{tabular}", 0, end):end]
    body = re.sub(r"\\eat\{[^}]*\}", "", body)
    rows = {}
    for line in body.splitlines():
        name = line.split("&")[0].strip().lower()
        if name in ("adult", "heart", "madelon", "mnist", "webdata"):
            cells = [re.sub(r"\s", "", c).rstrip("\\") for c in line.split("&")[1:]]
            rows[name] = [float(re.sub(r"x10\$\^(\d+)\$", r"e\1", c).replace(",", "")) for c in cells]
    return rows


def test_paper_results_match_the_papers_source():
    """Catches a figure of paper_results.csv that differs from the paper's LaTeX tables (a typo, a swapped
    column, a wrong exponent)."""
    tex = _paper_tex()
    paper = tables.read_paper_results(PAPER_RESULTS)

    def values(table, k, order):
        part = paper[(paper["table"] == table) & (paper["k"] == k)].set_index(["dataset", "method", "metric"])["value"]
        return {d: [part[(d, m, metric)] for m, metric in order] for d in formats.DATASET_ORDER}

    table1_order = [("libsvm", "seconds_total")] + [
        (m, part) for m in ("ato", "mir", "sir") for part in ("seconds_init", "seconds_rest")
    ] + [(m, "iterations") for m in ("libsvm", "ato", "mir", "sir")] + [("libsvm", "accuracy"), ("sir", "accuracy")]
    assert values("table1", "10", table1_order) == _tex_rows(tex, "tbl:overall-eff")
    typed3 = {d: [] for d in formats.DATASET_ORDER}
    for k in ("3", "10", "100"):
        for d, v in values("table3", k, [("libsvm", "seconds_total"), ("sir", "seconds_total")]).items():
            typed3[d] += v
    assert typed3 == _tex_rows(tex, "tbl:varying-k")
    loo_order = [(m, "seconds_total") for m in ("libsvm", "avg", "top", "ato", "mir", "sir")]
    assert values("loo", "loo", loo_order) == _tex_rows(tex, "tbl:loocv")
    table2_order = [("", m) for m in ("n", "dim", "C", "gamma")]
    part = paper[paper["table"] == "table2"].set_index(["dataset", "metric"])["value"]
    assert {d: [part[(d, m)] for _, m in table2_order] for d in formats.DATASET_ORDER} == _tex_rows(tex, "tbl:dataset")


def test_comparison_computes_speedups_and_joins_the_paper(groups):
    """Catches a speedup over the wrong reference (another kernel mode's cold start, the paper's figure
    beside a fast mode), a paper total that is not init + rest, and dropping the paper's rows we did not run
    in the paper's setting, including those run only in a fast mode."""
    paper = tables.read_paper_results(PAPER_RESULTS)
    frame = tables.comparison(tables.load_runs(groups["table1"]), paper, "table1")
    by_label = frame.set_index("label")
    assert by_label.loc["sir", "speedup_libsvm"] == pytest.approx(4.0 / 1.1)
    assert by_label.loc["sir", "speedup_cold"] == pytest.approx(2.0 / 1.1)
    # A fast mode is compared with the cold run of its own mode, and never with the paper.
    assert by_label.loc["sir (gram)", "speedup_cold"] == pytest.approx(2.0)
    assert np.isnan(by_label.loc["sir (gram)", "paper_seconds_total"])
    assert by_label.loc["sir", "paper_seconds_total"] == pytest.approx(0.003 + 0.24)
    assert by_label.loc["sir", "paper_speedup_libsvm"] == pytest.approx(0.36 / 0.243)
    assert by_label.loc["ato", "iteration_cap_hit"]
    # The paper's MIR was not run here but still stands beside ours.
    assert by_label.loc["mir", "paper_iterations"] == 1443
    assert np.isnan(by_label.loc["mir", "seconds_total"])
    # So does the paper's SIR when only a fast mode ran it (full-size MNIST's paper-faithful rows take days).
    fast_only = tables.comparison(tables.load_runs([p for p in groups["table1"] if p.name != "sir-cache.json"]),
                                  paper, "table1").set_index("label")
    assert fast_only.loc["sir", "paper_iterations"] == 3968 and np.isnan(fast_only.loc["sir", "seconds_total"])
    assert np.isnan(fast_only.loc["sir (gram)", "paper_iterations"])


def test_write_tables_writes_every_format_with_markers(groups, tmp_path):
    """Catches a missing table or format, a temporary file left behind, and a table without its markers,
    the machines it compares, or the paper's rows at a k this run did not use."""
    out = tmp_path / "tables"
    written = tables.write_tables(groups, PAPER_RESULTS, out)
    names = {p.name for p in written}
    for stem in ("table1", "table2", "table3", "loocv"):
        assert {f"{stem}.{ext}" for ext in tables.TABLE_FORMATS} <= names
    assert {"paper_vs_reproduced.md", "paper_vs_reproduced.html"} <= names
    assert not list(out.glob(".*")), "temporary files left behind"

    table1 = (out / "table1.md").read_text()
    assert "E5-2620" in table1 and "Test CPU" in table1
    assert formats.CAP_HIT in table1  # ATO's third round hit the cap
    assert "sir (gram)" in table1
    loo = (out / "loocv.md").read_text()
    assert formats.ESTIMATED in loo  # estimated from max_rounds
    assert "\\dag" in (out / "loocv.tex").read_text()

    report = (out / "paper_vs_reproduced.md").read_text()
    assert "libsvm/method (paper)" in report and "cold/method (this run)" in report
    assert "method/SIR (paper)" in report
    assert "2.69×" in report  # the paper's LOO on Heart: libsvm 8.6 s / SIR 3.2 s

    table3 = pd.read_csv(out / "table3.csv", dtype={"k": str})
    # Paper's k = 100 appears beside this run's k = 3 and 10.
    assert set(table3["k"]) == {"3", "10", "100"}
    table2 = pd.read_csv(out / "table2.csv")
    assert table2.loc[0, "paper_n"] == 270 and table2.loc[0, "n"] == 40


def test_write_tables_needs_table1(groups, tmp_path):
    """Catches writing tables (and an empty Table 2) without any Table 1 run instead of saying what is missing."""
    with pytest.raises(tables.AlphaseedError, match="table1"):
        tables.write_tables({"table3": groups["table3"]}, PAPER_RESULTS, tmp_path)


def _section(sections, title_start: str) -> pd.DataFrame:
    return next(table for title, table in sections if title.startswith(title_start))


def _cells(table: pd.DataFrame, dataset: str, k: str, method: str) -> pd.Series:
    rows = table[(table["dataset"] == dataset) & (table["k"] == k) & (table["method"] == method)]
    assert len(rows) == 1, (dataset, k, method)
    return rows.iloc[0]


@pytest.fixture
def estimated_frames(tmp_path):
    """MNIST at k = 10 with only LibSVM estimated (2 of 10 rounds) and its k = 3 LibSVM at the iteration cap;
    Heart's leave-one-out with only SIR estimated (4 of 40 rounds)."""
    paper = tables.read_paper_results(PAPER_RESULTS)
    table3 = [make_record("mnist", k, method, seconds, 10,
                          max_rounds=2 if (k, method) == (10, "libsvm") else None,
                          cap_round=1 if (k, method) == (3, "libsvm") else None)
              for k in (3, 10) for method, seconds in (("libsvm", 0.4), ("cold", 0.2), ("sir", 0.1))]
    loo = [make_record("heart", "loo", m, s, 5, max_rounds=4 if m == "sir" else None)
           for m, s in (("libsvm", 0.4), ("avg", 0.2), ("sir", 0.1))]
    return {kind: tables.comparison(tables.load_runs(write_records(tmp_path / kind, records)), paper, kind)
            for kind, records in (("table3", table3), ("loo", loo))}


def test_a_ratio_carries_the_markers_of_either_of_its_figures(estimated_frames):
    """Catches a ratio cell that takes its markers from its own row only: a measured SIR over an estimated
    LibSVM (this run's MNIST at k = 10, the paper's at k = 100), a measured AVG over an estimated SIR, a SIR
    over a LibSVM that hit the iteration cap; and catches marking a ratio whose figures are both measured."""
    datasets = tables.table2(estimated_frames["table3"], tables.read_paper_results(PAPER_RESULTS))
    _, sections = formats.comparison_document(estimated_frames, datasets)
    dagger, double = formats.ESTIMATED, formats.CAP_HIT
    expected = {
        ("Table 3", "mnist", "10", "sir"): {"seconds (this run)": "1", "libsvm/method (this run)": "4.00×" + dagger,
                                            "cold/method (this run)": "2.00×", "libsvm/method (paper)": "4.57×"},
        ("Table 3", "mnist", "100", "sir"): {"seconds (paper)": "61,016", "libsvm/method (paper)": "41.12×" + dagger},
        ("Table 3", "mnist", "3", "sir"): {"libsvm/method (this run)": "4.00×" + double,
                                           "cold/method (this run)": "2.00×"},
        ("Leave-one-out", "heart", "loo", "avg"): {"seconds (this run)": "8", "method/SIR (this run)": "2.00×" + dagger,
                                                   "libsvm/method (this run)": "2.00×", "method/SIR (paper)": "1.28×"},
    }
    for (section, dataset, k, method), cells in expected.items():
        row = _cells(_section(sections, section), dataset, k, method)
        assert {column: row[column] for column in cells} == cells

    frame = estimated_frames["table3"].set_index(["k", "label"])
    assert frame.loc[("10", "sir"), "speedup_libsvm_estimated"] and not frame.loc[("10", "sir"), "estimated"]
    assert frame.loc[("100", "sir"), "paper_speedup_libsvm_estimated"]
    assert not frame.loc[("10", "sir"), "speedup_cold_estimated"]


def test_notes_say_what_is_estimated_from_how_many_rounds_and_disclose_the_gradient_carry(groups, tmp_path):
    """Catches notes that mark estimates without saying from how many rounds, that leave out the paper's own
    estimates, that describe the extrapolation of seeded methods as a mean over every round, or that keep
    the gradient carry-over of the seeded rounds from the reader."""
    out = tmp_path / "tables"
    tables.write_tables(groups, PAPER_RESULTS, out)
    loo = (out / "loocv.md").read_text()
    assert re.search(r"libsvm \(±[^)]+\), avg \(±[^)]+\), sir \(±[^)]+\) on heart \(k = loo\) from 4 of 40 rounds", loo)
    assert "seeded rounds 2..R" in loo
    table3 = (out / "table3.md").read_text()
    assert "This run has no estimated figure here." in table3
    for name in ("table1.md", "table3.md", "loocv.md", "table1.tex", "loocv.html", "paper_vs_reproduced.md",
                 "paper_vs_reproduced.html"):
        text = (out / name).read_text()
        assert "G' = G + Q(alpha' - alpha)" in text.replace("&#x27;", "'"), name
        assert "which the paper does not describe" in text, name
    report = (out / "paper_vs_reproduced.md").read_text()
    assert "from 4 of 40 rounds" in report and "seeded rounds 2..R" in report


def test_the_papers_estimates_are_named_in_the_notes_and_escaped_in_latex(tmp_path):
    """Catches dropping the paper's own estimates from the notes (MNIST's ATO in Table 1) and writing the
    paper's note verbatim into LaTeX, where its backslash would start an undefined command."""
    records = [make_record("mnist", 10, m, 0.1, 10) for m in ("libsvm", "ato", "sir")]
    out = tmp_path / "tables"
    tables.write_tables({"table1": write_records(tmp_path / "t1", records)}, PAPER_RESULTS, out)
    assert "The paper's estimates: ato on mnist (k = 10)" in (out / "table1.md").read_text()
    tex = (out / "table1.tex").read_text()
    assert r"\textbackslash{}eat\{est\}" in tex and r"\eat{" not in tex


def test_estimated_runs_take_iterations_and_accuracy_from_the_complete_fast_run(tmp_path):
    """Catches a table that shows an estimated run's iterations over its first rounds although a complete run of
    the same method in a fast kernel mode exists (or still marks them estimated), that takes them from another
    method's run (SIR's for MIR), that gives LibSVM anything but the complete cold run's, or that leaves the
    source out of the notes."""
    records = [make_record("mnist", 10, method, 0.1, 10, max_rounds=2) for method in ("libsvm", "cold", "mir", "sir")]
    records += [make_record("mnist", 10, "cold", 0.01, 30, kernel_mode="auto"),
                make_record("mnist", 10, "sir", 0.01, 7, kernel_mode="auto")]
    records[-2]["summary"]["accuracy"], records[-1]["summary"]["accuracy"] = 51.0, 52.0
    frame = tables.comparison(tables.load_runs(write_records(tmp_path, records)),
                              tables.read_paper_results(PAPER_RESULTS), "table1").set_index("label")
    assert frame.loc["libsvm", ["iterations", "accuracy"]].tolist() == [300, 51.0]
    assert frame.loc["cold", ["iterations", "accuracy"]].tolist() == [300, 51.0]
    assert frame.loc["sir", ["iterations", "accuracy"]].tolist() == [70, 52.0]
    # no complete MIR run: its own estimate, 10 a round over all 10 rounds
    assert frame.loc["mir", ["iterations", "accuracy"]].tolist() == [100, 75.0]
    wide = dict(formats.table1_wide(frame.reset_index()).loc[("mnist", "this run")].items())
    assert wide[("iterations", "sir", "")] == "70" and wide[("iterations", "mir", "")] == "100" + formats.ESTIMATED
    assert wide[("seconds", "libsvm", "total")] == "1" + formats.ESTIMATED + " \u00b10 %"  # its two rounds alike
    note = " ".join(formats.table_notes(frame.reset_index(), "Test CPU"))
    assert "libsvm on mnist (k = 10) from cold (auto); cold on mnist (k = 10) from cold (auto)" in note
    assert "mir on mnist (k = 10) from" not in note


def test_a_study_beyond_the_paper_writes_its_own_tables_without_empty_paper_rows(tmp_path):
    """Catches a study's tables written over the paper's (table1.md instead of table1_informative.md), a
    dataset the paper never used shown with an empty paper row beside it, and SV shares computed over the
    test instances or without the bounded ones taken out (the records have 5 SVs, 1 bounded, of 36)."""
    records = [make_record("heart_scale", 10, m, s, 10) for m, s in (("libsvm", 0.4), ("cold", 0.2), ("sir", 0.1))]
    out = tmp_path / "tables"
    written = {p.name for p in tables.write_tables({"table1": write_records(tmp_path / "t1", records)},
                                                   PAPER_RESULTS, out, study="informative")}
    assert {f"table1_informative.{ext}" for ext in tables.TABLE_FORMATS} <= written
    assert {"table2_informative.md", "speedups_informative.md", "speedups_informative.html"} <= written
    assert not any(name.startswith(("table1.", "paper_vs_reproduced")) for name in written)
    table1 = (out / "table1_informative.md").read_text()
    assert "Beyond the paper" in table1 and "| heart_scale | paper" not in table1
    assert "above the paper" not in table1  # a caption promising paper rows the study has not
    assert "| heart_scale | paper" not in (out / "table2_informative.md").read_text()
    frame = pd.read_csv(out / "table1_informative.csv")
    assert frame["sv_share"].tolist() == pytest.approx([100 * 5 / 36] * 3)
    assert frame["free_sv_share"].tolist() == pytest.approx([100 * 4 / 36] * 3)
    speedups = (out / "speedups_informative.md").read_text()
    assert "libsvm/method (this run)" in speedups and "free SVs % (this run)" in speedups and "11.11" in speedups


def test_a_fast_run_that_resolved_to_cache_mode_is_never_paper_faithful():
    """Catches an auto run on binary data (resolved to LibSVM's cache mode) labelled as the paper-faithful run
    of its method, which would pair it with the paper's figures and break the tables' one row per run."""
    from alphaseed.report.tables import engine_label

    fast = {"kernel_mode": "cache", "requested_kernel_mode": "auto"}
    assert engine_label(fast) == "auto: cache"
    assert formats.method_label("sir", engine_label(fast)) == "sir (auto: cache)"
    assert engine_label({"kernel_mode": "cache", "requested_kernel_mode": "cache"}) == "cache"
    assert engine_label({"kernel_mode": "cache"}) == "cache"   # a run recorded before the request was
    assert engine_label({"kernel_mode": "gram", "requested_kernel_mode": "auto"}) == "gram"


def test_our_paper_faithful_cold_start_stands_in_for_a_libsvm_that_did_not_run(tmp_path):
    """Catches a LibSVM cell left empty where a cold start in the paper's setting ran to stand in for it (MNIST), a
    stand-in not marked in its cell, its ratios or the notes, one taken from a fast-mode cold run or from a cold run
    not marked to stand in (Adult, whose LibSVM run is merely missing), one put where LibSVM did run (Heart), and a
    cold/libsvm ratio of the cold run over itself."""
    standing = make_record("mnist", 10, "cold", 2.0, 100, max_rounds=1)
    standing["stands_in_for"] = "libsvm"
    unmarked = make_record("adult", 10, "cold", 2.0, 100, max_rounds=1)   # LibSVM's run is merely missing
    records = [standing, unmarked,
               make_record("mnist", 10, "cold", 0.1, 100, kernel_mode="auto"),
               make_record("mnist", 10, "sir", 0.5, 30, kernel_mode="auto"),
               make_record("heart", 10, "libsvm", 0.3, 50), make_record("heart", 10, "cold", 0.2, 50)]
    frame = tables.comparison(tables.load_runs(write_records(tmp_path, records)),
                              tables.read_paper_results(PAPER_RESULTS), "table1")
    libsvm = frame[frame["label"] == "libsvm"].set_index("dataset")
    assert libsvm.loc["mnist", "stand_in"] and not libsvm.loc["heart", "stand_in"]
    assert not libsvm.loc["adult", "stand_in"] and np.isnan(libsvm.loc["adult", "seconds_total"])  # the paper's row
    assert np.isnan(libsvm.loc["mnist", "speedup_cold"])
    assert libsvm.loc["mnist", "seconds_total"] == pytest.approx(20.0)   # the cache-mode cold run's, not auto's
    sir = frame[(frame["dataset"] == "mnist") & (frame["label"] == "sir (auto)")].iloc[0]
    assert sir["speedup_libsvm"] == pytest.approx(20.0 / 5.0) and sir["speedup_libsvm_stand_in"]
    wide = dict(formats.table1_wide(frame).loc[("mnist", "this run")].items())
    assert formats.STAND_IN in wide[("seconds", "libsvm", "total")]
    assert formats.STAND_IN not in dict(formats.table1_wide(frame).loc[("heart", "this run")].items())[
        ("seconds", "libsvm", "total")]
    notes = " ".join(formats.table_notes(frame, "Test CPU"))
    assert "stands in" in notes and "LibSVM on mnist (k = 10)" in notes and "heart (k = 10)" not in notes


def test_a_ratio_of_runs_on_two_cpus_is_marked_and_named_in_the_notes(tmp_path):
    """Catches a ratio whose two runs ran on different CPUs shown as if one machine had made both (the
    reproduction's sittings moved between an Intel Xeon and an AMD EPYC), marking a ratio of one machine's
    runs, marking the paper's own ratios, and notes that leave the mark unexplained."""
    records = [make_record("madelon", 10, method, seconds, 10) for method, seconds in
               (("libsvm", 0.4), ("cold", 0.2), ("sir", 0.1))]
    records[1]["provenance"]["cpu"] = "Other CPU"
    out = tmp_path / "tables"
    tables.write_tables({"table1": write_records(tmp_path / "t1", records)}, PAPER_RESULTS, out)
    paper = tables.read_paper_results(PAPER_RESULTS)
    compared = tables.comparison(tables.load_runs(write_records(tmp_path / "t2", records)), paper, "table1")
    frame = compared.set_index("label")
    assert frame.loc["cold", "speedup_libsvm_two_cpus"] and frame.loc["sir", "speedup_cold_two_cpus"]
    assert not frame.loc["sir", "speedup_libsvm_two_cpus"] and not frame.loc["cold", "speedup_cold_two_cpus"]
    assert not any(column.startswith("paper_") for column in frame.columns if column.endswith("_two_cpus"))
    pilcrow = formats.TWO_CPUS
    _, sections = formats.comparison_document({"table1": compared}, tables.table2(compared, paper))
    table1 = _section(sections, "Table 1")
    assert _cells(table1, "madelon", "10", "cold")["libsvm/method (this run)"] == "2.00×" + pilcrow
    sir = _cells(table1, "madelon", "10", "sir")
    assert (sir["libsvm/method (this run)"], sir["cold/method (this run)"]) == ("4.00×", "2.00×" + pilcrow)
    assert pilcrow not in sir["libsvm/method (paper)"]
    text = (out / "table1.md").read_text()
    assert f"{pilcrow} the ratio's two runs were made on different CPUs" in text and "madelon (k = 10)" in text
    alone = [make_record("madelon", 10, method, 0.1, 10) for method in ("libsvm", "cold")]
    tables.write_tables({"table1": write_records(tmp_path / "t3", alone)}, PAPER_RESULTS, tmp_path / "one")
    assert pilcrow not in (tmp_path / "one" / "table1.md").read_text()


def test_a_round_1_trained_by_another_run_is_named_in_the_notes(tmp_path):
    """Catches a seeded run whose round 1 came from the cold start's journal (its seconds timed there) left
    unsaid, and a note naming runs that trained their own round 1."""
    shared = make_record("mnist", 10, "sir", 1.0, 30, max_rounds=2)
    shared["summary"]["rounds_shared"] = 1
    records = [shared, make_record("mnist", 10, "mir", 1.0, 30, max_rounds=2),
               make_record("mnist", 10, "cold", 2.0, 100, max_rounds=1)]
    frame = tables.comparison(tables.load_runs(write_records(tmp_path, records)),
                              tables.read_paper_results(PAPER_RESULTS), "table1")
    notes = " ".join(formats.table_notes(frame, "Test CPU"))
    assert "Round 1 of sir on mnist (k = 10) is the cold round 1" in notes and "mir on" not in notes
    alone = tables.comparison(tables.load_runs(write_records(tmp_path / "alone", records[1:])),
                              tables.read_paper_results(PAPER_RESULTS), "table1")
    assert "is the cold round 1" not in " ".join(formats.table_notes(alone, "Test CPU"))


def _rounds_of_two_kinds(record: dict, took: list[bool], costly: float, cheap: float) -> dict:
    """The record with its round 1 cold (1,000 iterations, 500 s) and its later rounds costly (1,023 iterations)
    or cheap (none) as ``took`` says, a quarter of each round's seconds its seed; its summary's seconds left as
    the plain estimate would set them, its iterations those measured."""
    for r, worked in zip(record["rounds"], [True, *took]):
        r["iterations"] = 1023 if worked else 0
        cost = costly if worked else cheap
        r["seconds"] |= {"seed": cost / 4, "train": cost * 3 / 4}
    record["rounds"][0] |= {"iterations": 1000, "seconds": record["rounds"][0]["seconds"] | {"seed": 0.0, "train": 500.0}}
    record["summary"]["iterations"] = sum(r["iterations"] for r in record["rounds"])
    return record


def test_a_cut_leave_one_out_run_counts_its_rounds_left_by_kind_in_the_longer_runs_shares(tmp_path):
    """Catches a paper-faithful leave-one-out run whose few rounds drew three costly rounds of five counted at
    that mixture (60 % costly) where the longer run of the same rounds in another mode drew 25 %, the shares
    taken from another method's run or from a run of other rounds (other iterations), a run of one kind
    changed at all, the seeding seconds not counted by kind as the rest are, and the note that names where the
    shares come from left out."""
    took = [False, False, True, True, True] + [True, False, False, False] * 100
    sir = _rounds_of_two_kinds(make_record("mnist", "loo", "sir", 0.0, 0, n=1000, max_rounds=6), took, 1200.0, 2.0)
    gram = _rounds_of_two_kinds(make_record("mnist", "loo", "sir", 0.0, 0, n=1000, max_rounds=406,
                                            kernel_mode="gram"), took, 10.0, 0.1)
    mir = _rounds_of_two_kinds(make_record("mnist", "loo", "mir", 0.0, 0, n=1000, max_rounds=6), took, 1200.0, 2.0)
    other_rounds = _rounds_of_two_kinds(make_record("mnist", "loo", "mir", 0.0, 0, n=1000, max_rounds=406,
                                                    kernel_mode="gram"), [True, *took[:-1]], 10.0, 0.1)
    cold = make_record("mnist", "loo", "cold", 10.0, 1000, n=1000, max_rounds=3)
    runs = tables.load_runs(write_records(tmp_path, [sir, gram, mir, other_rounds, cold])).set_index("label")
    costly = sum(took) / len(took)          # the gram run's rounds 2..406
    assert costly < 0.3
    expected = 500.0 + 4 + 3 * 1200.0 + (1000 - 6) * (costly * 1200.0 + (1 - costly) * 2.0)
    assert runs.loc["sir", "seconds_total"] == pytest.approx(expected)
    assert runs.loc["sir", "seconds_init"] == pytest.approx(expected / 4 - 500.0 / 4)   # round 1 had no seed
    assert runs.loc["sir", "kinds_from"] == "sir (gram)"
    assert runs.loc["sir", "iterations"] == 1000 + 3 * 1023 + round((1000 - 6) * costly * 1023)
    assert 0.1 < runs.loc["sir", "interval"] < 0.2 and 0.1 < runs.loc["sir", "interval_iterations"] < 0.2
    # mir's longer run took other iterations in its first rounds: not the same rounds, so nothing changes
    assert pd.isna(runs.loc["mir", "kinds_from"])
    assert runs.loc["mir", "seconds_total"] == mir["summary"]["seconds"]["total"]
    assert pd.isna(runs.loc["cold", "kinds_from"])
    frame = tables.comparison(runs.reset_index(), tables.read_paper_results(PAPER_RESULTS), "loo")
    notes = " ".join(formats.table_notes(frame, "Test CPU"))
    assert "For sir on mnist (k = loo), the shares from sir (gram), each kind" in notes
    assert "mir on mnist (k = loo), the shares" not in notes
