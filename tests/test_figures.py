"""Figures from hand-made run records: what they draw, read back from the matplotlib objects."""

from __future__ import annotations

import numpy as np
import pytest
from test_tables import PAPER_RESULTS, make_record, write_records

from alphaseed.report import figures, tables


@pytest.fixture(scope="module")
def paper():
    return tables.read_paper_results(PAPER_RESULTS)


def frame_of(tmp_path, records, paper, kind):
    return tables.comparison(tables.load_runs(write_records(tmp_path, records)), paper, kind)


def legend_texts(axes) -> list[str]:
    return [text.get_text() for text in axes.get_legend().get_texts()]


def bar_hatches(axes, datasets) -> dict[tuple[str, str], str]:
    """(method, dataset) -> hatch of its bar."""
    return {
        (container.get_label(), dataset): patch.get_hatch() or ""
        for container in axes.containers
        for dataset, patch in zip(datasets, container.patches)
    }


def markers(axes, marker: str, hollow: bool) -> list[tuple[float, float]]:
    """(x, y) of the ``marker`` points drawn hollow (or filled)."""
    return [
        (float(x), float(y))
        for line in axes.get_lines()
        if line.get_marker() == marker and (line.get_markerfacecolor() == "none") == hollow
        for x, y in zip(line.get_xdata(), line.get_ydata())
        if np.isfinite(y)
    ]


def loo_records():
    """Heart: SIR estimated (so every ratio to it is); Madelon: LibSVM estimated only; Adult: nothing of
    this run estimated, but every figure of the paper's Adult LOO is."""
    def estimate(dataset, method):
        return 4 if (dataset, method) in {("heart", "sir"), ("madelon", "libsvm")} else None

    return [make_record(dataset, "loo", method, seconds, 5, max_rounds=estimate(dataset, method))
            for dataset in ("adult", "heart", "madelon")
            for method, seconds in (("libsvm", 0.4), ("avg", 0.2), ("sir", 0.1))]


def test_loocv_hatches_a_bar_when_either_side_of_its_ratio_is_estimated(tmp_path, paper):
    """Catches hatching by the bar's own flag only (Heart's avg is measured but divided by an estimated SIR),
    hatching every bar (Adult's are all measured), a paper marker drawn by this run's flag instead of the
    paper's, and a legend that does not say what hatching means."""
    axes = figures.loocv_figure(frame_of(tmp_path, loo_records(), paper, "loo")).axes[0]
    datasets = [label.get_text() for label in axes.get_xticklabels()]
    assert datasets == ["adult", "heart", "madelon"]
    # top, ato and mir: the paper's only, as markers over empty bars
    assert [c.get_label() for c in axes.containers] == ["libsvm", "avg", "top", "ato", "mir"]
    hatched = {key for key, hatch in bar_hatches(axes, datasets).items() if hatch}
    assert hatched == {("libsvm", "heart"), ("avg", "heart"), ("libsvm", "madelon")}
    hollow_datasets = {datasets[round(x)] for x, _ in markers(axes, "D", hollow=True)}
    filled_datasets = {datasets[round(x)] for x, _ in markers(axes, "D", hollow=False)}
    assert hollow_datasets == {"adult"} and filled_datasets == {"heart", "madelon"}
    texts = legend_texts(axes)
    assert "paper" in texts and "libsvm" in texts and "avg" in texts
    assert any(figures.ESTIMATED_LABEL in text and "hatched" in text for text in texts)
    assert "SIR" in axes.get_ylabel()


def test_loocv_without_estimates_marks_nothing(tmp_path, paper):
    """Catches hatching (or a legend entry for estimates) when nothing in the figure is estimated."""
    records = [make_record("heart", "loo", m, s, 5) for m, s in (("libsvm", 0.4), ("top", 0.2), ("sir", 0.1))]
    axes = figures.loocv_figure(frame_of(tmp_path, records, paper, "loo")).axes[0]
    assert not any(bar_hatches(axes, ["heart"]).values())
    assert not markers(axes, "D", hollow=True)
    assert not any(figures.ESTIMATED_LABEL in text for text in legend_texts(axes))


def test_loocv_divides_a_fast_mode_run_by_sir_in_its_own_mode(tmp_path, paper):
    """Catches a fast-mode run divided by the paper-faithful SIR (Heart's mir (gram) would read 3.0, not 1.5),
    a dataset whose SIR ran in a fast mode only left without bars (MNIST's), a bar for SIR itself in any mode,
    and a fast mode drawn in another method's colour."""
    records = [make_record("heart", "loo", "libsvm", 0.4, 5), make_record("heart", "loo", "sir", 0.1, 5),
               make_record("heart", "loo", "mir", 0.3, 5, kernel_mode="gram"),
               make_record("heart", "loo", "sir", 0.2, 5, kernel_mode="gram"),
               make_record("mnist", "loo", "cold", 0.8, 5, kernel_mode="gram"),
               make_record("mnist", "loo", "sir", 0.2, 5, kernel_mode="gram")]
    frame = frame_of(tmp_path, records, paper, "loo")
    axes = figures.loocv_figure(frame).axes[0]
    datasets = [label.get_text() for label in axes.get_xticklabels()]
    heights = {(c.get_label(), d): p.get_height() for c in axes.containers for d, p in zip(datasets, c.patches)}
    assert heights[("mir (gram)", "heart")] == pytest.approx(1.5)
    assert heights[("libsvm", "heart")] == pytest.approx(4.0)
    assert heights[("cold (gram)", "mnist")] == pytest.approx(4.0)
    assert not any(label.startswith("sir") for label, _ in heights)
    mir_gram = next(c for c in axes.containers if c.get_label() == "mir (gram)").patches[0]
    mir_paper = next(c for c in axes.containers if c.get_label() == "mir").patches[0]
    assert mir_gram.get_edgecolor()[:3] == mir_paper.get_facecolor()[:3]
    assert mir_gram.get_facecolor()[3] < 1.0


def test_speedup_vs_k_draws_estimated_points_hollow(tmp_path, paper):
    """Catches a figure without any estimate marker: MNIST's SIR at k = 10 is measured but its ratio
    divides an estimated LibSVM, and the paper's k = 100 LibSVM is its own estimate; all else is measured."""
    records = [
        make_record(dataset, k, method, seconds, 10,
                    max_rounds=2 if (dataset, k, method) == ("mnist", 10, "libsvm") else None)
        for dataset in ("heart", "mnist") for k in (3, 10)
        for method, seconds in (("libsvm", 0.4), ("cold", 0.2), ("sir", 0.1))
    ]
    axes = figures.speedup_vs_k_figure(frame_of(tmp_path, records, paper, "table3")).axes[0]
    assert sorted(x for x, _ in markers(axes, "o", hollow=True)) == [10.0]
    assert sorted(x for x, _ in markers(axes, "o", hollow=False)) == [3.0, 3.0, 10.0]
    assert markers(axes, "D", hollow=True) == [(100.0, pytest.approx(2508684 / 61016))]
    assert len(markers(axes, "D", hollow=False)) == 5  # heart at k = 3, 10 and 100, MNIST at 3 and 10
    texts = legend_texts(axes)
    assert texts[:2] == ["heart", "mnist"]
    assert any(figures.ESTIMATED_LABEL in text for text in texts)
    assert axes.get_xlabel() == "k" and axes.get_ylabel() == "LibSVM time / SIR time"


def test_iterations_per_round_draws_one_line_per_run_and_crosses_capped_rounds():
    """Catches a panel missing a run, rounds plotted out of order, or a capped round left unmarked."""
    records = [make_record("heart", 10, "cold", 0.1, 100), make_record("heart", 10, "sir", 0.1, 50, cap_round=3),
               make_record("madelon", 10, "sir", 0.1, 40, max_rounds=4)]
    figure = figures.iterations_per_round_figure(records)
    heart, madelon = figure.axes
    assert [line.get_label() for line in heart.get_lines()] == ["cold", "sir"]
    assert list(madelon.get_lines()[0].get_xdata()) == [1, 2, 3, 4]
    crosses = [c.get_offsets().tolist() for c in heart.collections]
    assert crosses == [[[3.0, 50.0]]]
    assert not madelon.collections


def test_iterations_per_round_gives_a_method_one_colour_and_shows_rounds_at_the_optimum_at_zero():
    """Catches a fast kernel mode's line taking another method's colour (tab10 runs out after the methods), a method
    coloured differently in two panels, a fast mode drawn like the paper's, a legend missing a panel's runs, and a
    seeded round of 0 iterations drawn at 1 or dropped by a log axis."""
    gram = make_record("madelon", 10, "sir", 0.1, 40, kernel_mode="gram")
    gram["rounds"][4]["iterations"] = 0
    records = [make_record("heart", 10, "libsvm", 0.1, 100), make_record("heart", 10, "sir", 0.1, 50),
               make_record("madelon", 10, "cold", 0.1, 90, kernel_mode="gram"), gram]
    figure = figures.iterations_per_round_figure(records)
    heart, madelon = figure.axes
    lines = {line.get_label(): line for axes in (heart, madelon) for line in axes.get_lines()}
    assert lines["sir (gram)"].get_color() == lines["sir"].get_color() != lines["libsvm"].get_color()
    assert lines["cold (gram)"].get_color() not in (lines["sir"].get_color(), lines["libsvm"].get_color())
    assert lines["sir"].get_linestyle() == "-" and lines["sir (gram)"].get_linestyle() == "--"
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["libsvm", "cold (gram)", "sir",
                                                                           "sir (gram)"]
    assert list(lines["sir (gram)"].get_ydata())[4] == 0 and madelon.get_ylim()[0] == 0
    assert madelon.get_yscale() == "symlog" and heart.get_yscale() == "log"


def test_figures_are_written(tmp_path):
    """Catches a figure missing from the outputs, or a temporary file left behind by a non-atomic write."""
    groups = {
        "table1": write_records(tmp_path / "t1", [make_record("heart", 10, m, 0.1, 10) for m in ("libsvm", "sir")]),
        "table3": write_records(tmp_path / "t3", [make_record("heart", k, m, 0.1, 10) for k in (3, 10)
                                                  for m in ("libsvm", "sir")]),
        "loo": write_records(tmp_path / "loo", [make_record("heart", "loo", m, 0.1, 5) for m in ("libsvm", "sir")]),
    }
    out = tmp_path / "figures"
    written = figures.write_figures(groups, PAPER_RESULTS, out)
    assert sorted(p.name for p in written) == sorted(
        f"{stem}.{ext}" for stem in ("loocv", "iterations_per_round", "speedup_vs_k") for ext in ("png", "pdf"))
    assert all(p.stat().st_size > 1000 for p in written)
    assert not list(out.glob(".*")), "temporary files left behind"
