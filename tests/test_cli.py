"""The command line: `alphaseed cv` writes a valid run record; mistakes exit 2 with one line."""

from __future__ import annotations

import lzma

import pytest
import yaml

from alphaseed.cli import main
from alphaseed.records import read_run_record


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
