"""The command line: `alphaseed cv` writes a valid run record; mistakes exit 2 with one line."""

from __future__ import annotations

import lzma

import pytest
import yaml

from alphaseed.cli import main
from alphaseed.pipeline.records import read_run_record


@pytest.fixture
def config_file(mirror_config, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(mirror_config))
    return path


@pytest.mark.mirror
def test_cv_on_heart_writes_a_run_record_with_provenance(config_file, tmp_path, capsys):
    out = tmp_path / "runs" / "heart.json"
    assert main(["cv", "--dataset", "heart", "--config", str(config_file), "--k", "10",
                 "--method", "cold", "--max-rounds", "3", "--out", str(out)]) == 0
    record = read_run_record(out)
    assert record["dataset"] == "heart" and record["n"] == 270 and record["dim"] == 13
    assert record["params"]["C"] == 2182 and record["params"]["gamma"] == 0.2
    assert record["summary"]["rounds_run"] == 3 and record["summary"]["estimated"] is True
    provenance = record["provenance"]
    assert provenance["dataset_fingerprint"] == provenance["config"]["dataset"]["fingerprint"]
    assert provenance["git_commit"] and provenance["libsvm"] and provenance["cpu"]
    captured = capsys.readouterr()
    assert "round 3/3" in captured.err
    assert "accuracy" in captured.out


@pytest.mark.mirror
def test_cv_on_a_file_with_a_subsample(mirror, tmp_path):
    data = tmp_path / "heart.txt"
    data.write_bytes(lzma.open(mirror / "heart.xz").read())
    out = tmp_path / "run.json"
    assert main(["cv", "--data", str(data), "--C", "1", "--gamma", "0.5", "--k", "3",
                 "--method", "libsvm", "--subsample", "90", "--out", str(out)]) == 0
    record = read_run_record(out)
    assert record["dataset"] == "heart" and record["n"] == 90
    assert record["params"]["subsample"] == 90 and record["summary"]["rounds_run"] == 3


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "nosuch"], "no such dataset"),
    (["--dataset", "heart", "--k", "1"], "k = 1 folds"),
    (["--dataset", "heart", "--method", "avg"], "leave-one-out only"),
    (["--data", "missing.txt", "--C", "1", "--gamma", "1"], "missing.txt"),
    (["--data", "missing.txt"], "--C and --gamma"),
])
def test_mistakes_print_one_clean_line_and_exit_2(argv, message, config_file, tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["cv", *argv, "--config", str(config_file), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("alphaseed: error:") and message in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("argv", [
    ["cv", "--dataset", "heart"],                          # no --out
    ["cv", "--dataset", "heart", "--k", "ten", "--out", "x.json"],
    ["cv", "--dataset", "heart", "--method", "warm", "--out", "x.json"],
    ["frobnicate"],
])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.mirror
def test_prepare_converts_a_named_dataset(config_file, mirror_config, capsys):
    assert main(["prepare", "heart", "--config", str(config_file)]) == 0
    assert capsys.readouterr().out.strip().endswith("heart.npz")


@pytest.mark.mirror
def test_search_writes_json_csv_and_heat_map_with_the_best_point(config_file, tmp_path, capsys):
    """Catches a best point that is not the most accurate one, grid.py ranges read without
    their end or with a negative begin taken for an option, and a missing output file."""
    import json

    import pandas as pd

    out = tmp_path / "search" / "heart.json"
    assert main(["search", "--dataset", "heart", "--config", str(config_file), "--subsample",
                 "120", "--C", "-1:3:2", "--gamma", "-9:-13:-4", "--k", "3", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    points = pd.read_csv(out.with_suffix(".csv"))
    assert sorted(set(points["log2_C"])) == [-1, 1, 3] and sorted(set(points["log2_gamma"])) == [-13, -9]
    assert summary["best"]["accuracy"] == pytest.approx(points["accuracy"].max())
    assert summary["total_iterations"] == points["iterations"].sum() > 0
    assert summary["provenance"]["dataset_fingerprint"]
    assert out.with_suffix(".png").stat().st_size > 0
    captured = capsys.readouterr()
    assert "18/18" in captured.err and "best log2 C" in captured.out


@pytest.mark.mirror
def test_search_takes_the_solver_asked_for_and_records_it(config_file, tmp_path):
    """Catches --solver recorded in the summary but not handed to the estimator (the active set's
    iterations are its Newton steps, not SMO's pair updates), and a default other than SMO's."""
    import json

    import pandas as pd

    runs = {}
    for solver in (None, "active_set"):
        out = tmp_path / f"{solver}.json"
        argv = ["search", "--dataset", "heart", "--config", str(config_file), "--subsample", "120",
                "--C", "1:3:2", "--gamma", "-9:-9:1", "--k", "3", "--out", str(out)]
        assert main(argv + (["--solver", solver] if solver else [])) == 0
        runs[solver] = json.loads(out.read_text()), pd.read_csv(out.with_suffix(".csv"))
    (smo, smo_points), (active, active_points) = runs[None], runs["active_set"]
    assert smo["solver"] == "smo" and active["solver"] == "active_set"
    assert (smo_points["iterations"] != active_points["iterations"]).any()


def test_the_search_commands_solvers_are_the_solvers():
    """Catches a solver added to (or renamed in) the solver but not offered by ``--solver``."""
    from alphaseed.cli import SEARCH_SOLVERS
    from alphaseed.solver.options import SOLVERS

    assert SEARCH_SOLVERS == SOLVERS


@pytest.mark.parametrize("text, values", [("-5:15:2", list(range(-5, 16, 2))),
                                          ("3:-15:-2", list(range(3, -16, -2))),
                                          ("0.5", [0.5])])
def test_log2_ranges_read_as_grid_py_writes_them(text, values):
    """Catches an end left out (grid.py includes it) or a descending range refused."""
    from alphaseed.pipeline.grid import log2_range

    assert log2_range(text) == values


def test_a_bad_search_range_exits_2(capsys):
    """Catches a range whose step leads away from its end accepted as an empty grid."""
    with pytest.raises(SystemExit) as raised:
        main(["search", "--data", "x.txt", "--C", "1:5:-1", "--out", "x.json"])
    assert raised.value.code == 2
    assert "begin:end:step" in capsys.readouterr().err
