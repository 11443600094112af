import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alphaseed.pipeline.config import dataset_entry, load_config, mirror_file_name, schema_path
from alphaseed.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]


def write_config(folder: Path, config: dict) -> Path:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def raw_config() -> dict:
    return yaml.safe_load((REPO_ROOT / "config.yaml").read_text())


def test_repository_config_matches_the_paper(repo_config, paper_datasets):
    datasets = repo_config["datasets"]
    # beyond them, only the scaled variants of the informative-kernel study
    assert sorted(datasets) == sorted([*paper_datasets, "heart_scale", "madelon_scale", "mnist_scale"])
    for name, paper in paper_datasets.items():
        entry = datasets[name]
        assert {key: entry[key] for key in ("n", "dim", "C", "gamma")} == {
            key: paper[key] for key in ("n", "dim", "C", "gamma")
        }
        assert entry["counts"] == {"positive": paper["positive"], "negative": paper["negative"]}
    assert datasets["heart"]["url"].endswith("/binary/heart")
    assert mirror_file_name(datasets["mnist"]) == "mnist"
    assert mirror_file_name(datasets["adult"]) == "a9a"


def test_defaults_are_filled_in(tmp_path, raw_config):
    for key in ("mirror", "seed", "solver", "download", "data_dir"):
        raw_config.pop(key)
    config = load_config(write_config(tmp_path, raw_config))
    assert config["mirror"] is None and config["seed"] == 0 and config["data_dir"] == "data"
    assert config["solver"] == {"eps": 0.001, "cache_mb": 100, "shrinking": True}
    assert config["download"] == {"timeout_s": 60, "retries": 3}


def test_overrides_merge_into_nested_keys():
    config = load_config(
        REPO_ROOT / "config.yaml", {"mirror": "elsewhere", "datasets": {"heart": {"C": 1.5}}}
    )
    assert config["mirror"] == "elsewhere"
    assert config["datasets"]["heart"]["C"] == 1.5
    assert config["datasets"]["heart"]["gamma"] == 0.2


def test_schema_is_found_from_a_config_file_outside_the_checkout(tmp_path, raw_config):
    assert (
        schema_path(write_config(tmp_path, raw_config))
        == REPO_ROOT / "workflow/schemas/config.schema.yaml"
    )


def _set(config, dotted, value):
    *parents, last = dotted.split(".")
    for part in parents:
        config = config[part]
    if value is DELETE:
        del config[last]
    else:
        config[last] = value


DELETE = object()


@pytest.mark.parametrize(
    "key, value, named",
    [
        ("datasets.heart.C", -1, "datasets.heart.C"),
        ("datasets.heart.gamma", 0, "datasets.heart.gamma"),
        ("datasets.heart.C", "big", "datasets.heart.C"),
        ("datasets.heart.labels", DELETE, "'labels' is a required property"),
        ("datasets.heart.labels.positive", [], "datasets.heart.labels.positive"),
        ("datasets.heart.fingerprint", "abc", "datasets.heart.fingerprint"),
        ("datasets.heart.n", -5, "datasets.heart.n"),
        ("datasets.heart.url", "www.example.org/heart", "datasets.heart.url"),
        ("datasets.heart.colour", "red", "'colour' was unexpected"),
        (
            "datasets.my-set",
            {
                "url": "https://x.org/a",
                "C": 1,
                "gamma": 1,
                "labels": {"positive": [1], "negative": [0]},
            },
            "my-set",
        ),
        ("seed", "zero", "seed"),
        ("seed", -1, "seed"),
        ("solver.eps", 0, "solver.eps"),
        ("solver.shrinking", "yes", "solver.shrinking"),
        ("download.retries", 1.5, "download.retries"),
        ("datasets", {}, "datasets"),
        ("experiment", {}, "'experiment' was unexpected"),
        ("searches.heart_grid.dataset", "nosuch", "searches.heart_grid.dataset"),
        ("searches.heart_grid.C", "1:5:-1", "searches.heart_grid.C"),
        ("searches.heart_grid.gamma", "3..5", "searches.heart_grid.gamma"),
        ("searches.heart_grid.methods", ["top"], "searches.heart_grid.methods"),
        ("searches.heart_grid.k", 2, "searches.heart_grid.k"),
    ],
)
def test_invalid_values_fail_naming_the_key(tmp_path, raw_config, key, value, named):
    _set(raw_config, key, value)
    with pytest.raises(ConfigError) as error:
        load_config(write_config(tmp_path, raw_config))
    assert named in str(error.value)


def test_a_dataset_needs_a_url_or_a_path(tmp_path, raw_config):
    del raw_config["datasets"]["heart"]["url"]
    with pytest.raises(ConfigError, match="datasets.heart"):
        load_config(write_config(tmp_path, raw_config))
    raw_config["datasets"]["heart"]["path"] = "heart.txt"
    assert (
        load_config(write_config(tmp_path, raw_config))["datasets"]["heart"]["path"] == "heart.txt"
    )


def test_unreadable_config_files_fail_clearly(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(tmp_path / "list.yaml")
    (tmp_path / "bad.yaml").write_text("seed: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")


def test_dataset_entry_checks_name_and_label_overlap(repo_config):
    assert dataset_entry(repo_config, "heart")["C"] == 2182
    with pytest.raises(ConfigError, match="no such dataset.*heart"):
        dataset_entry(repo_config, "hearts")
    config = copy.deepcopy(repo_config)
    config["datasets"]["heart"]["labels"]["negative"] = [-1, 1]
    with pytest.raises(ConfigError, match="datasets.heart.labels"):
        dataset_entry(config, "heart")


def test_snakemake_rejects_an_invalid_value_at_start(tmp_path):
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent))
    result = subprocess.run(
        [snakemake, "all_data", "--dry-run", "--nolock", "--cores", "1", "--config", "seed=-4"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "seed" in result.stdout + result.stderr
