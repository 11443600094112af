"""Hostile configurations fail when the config is loaded, with a message naming the key, and
nothing in a config is ever run as code."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alphaseed.pipeline.config import load_config, url_file_name
from alphaseed.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
HEART = {
    "url": "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/heart",
    "n": 270,
    "C": 2182,
    "gamma": 0.2,
    "labels": {"positive": [1], "negative": [-1]},
}


@pytest.fixture
def raw_config() -> dict:
    return {
        "datasets": {"heart": copy.deepcopy(HEART)},
        "experiments": {
            "table1": {"table": "table1", "datasets": ["heart"], "k": [10],
                       "methods": ["libsvm", "cold", "sir"]},
        },
    }


def load(tmp_path: Path, config: dict | str) -> dict:
    path = tmp_path / "config.yaml"
    path.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
    return load_config(path)


def test_the_fixture_is_valid(tmp_path, raw_config):
    assert load(tmp_path, raw_config)["datasets"]["heart"]["C"] == 2182


def nested(**levels):
    return levels


@pytest.mark.parametrize(
    "change, key",
    [
        # unknown keys, at every level
        (nested(colour="red"), "colour"),
        (nested(solver={"epsilon": 0.1}), "epsilon"),
        (nested(experiments={"table1": {"metods": ["cold"]}}), "metods"),
        (nested(experiments={"table1": {"max_rounds": [{"rounds": 2, "fold": 1}]}}), "fold"),
        # wrong types
        (nested(seed=1.5), "seed"),
        (nested(seed=True), "seed"),
        (nested(datasets={"heart": {"C": True}}), "datasets.heart.C"),
        (nested(datasets={"heart": {"C": "1e3"}}), "datasets.heart.C"),
        (nested(datasets={"heart": {"labels": {"positive": "1"}}}), "datasets.heart.labels.positive"),
        (nested(experiments={"table1": {"k": 10}}), "experiments.table1.k"),
        (nested(experiments={"table1": {"datasets": "heart"}}), "experiments.table1.datasets"),
        (nested(download={"retries": "3"}), "download.retries"),
        # values out of range, infinite or not a number
        (nested(datasets={"heart": {"C": 0}}), "datasets.heart.C"),
        (nested(datasets={"heart": {"C": -1e-9}}), "datasets.heart.C"),
        (nested(datasets={"heart": {"gamma": -0.5}}), "datasets.heart.gamma"),
        (nested(datasets={"heart": {"C": float("inf")}}), "datasets.heart.C"),
        (nested(datasets={"heart": {"gamma": float("nan")}}), "datasets.heart.gamma"),
        (nested(datasets={"heart": {"labels": {"positive": [float("nan")]}}}),
         "datasets.heart.labels.positive.0"),
        (nested(solver={"eps": float("nan")}), "solver.eps"),
        (nested(solver={"cache_mb": -1}), "solver.cache_mb"),
        (nested(download={"timeout_s": float("inf")}), "download.timeout_s"),
        (nested(download={"retries": 1000}), "download.retries"),
        # k against 2 <= k <= n and the methods' own limits
        (nested(experiments={"table1": {"k": [1]}}), "experiments.table1.k.0"),
        (nested(experiments={"table1": {"k": [0]}}), "experiments.table1.k.0"),
        (nested(experiments={"table1": {"k": ["10"]}}), "experiments.table1.k.0"),
        (nested(experiments={"table1": {"k": [271]}}), "experiments.table1.k"),
        (nested(subsample={"heart": 50}, experiments={"table1": {"k": [60]}}),
         "experiments.table1.k"),
        (nested(subsample={"heart": 300}), "subsample.heart"),
        (nested(subsample={"heart": 1}), "subsample.heart"),
        (nested(experiments={"table1": {"k": [2]}}), "experiments.table1.k.0"),
        (nested(experiments={"table1": {"methods": ["avg"]}}), "experiments.table1.k.0"),
        (nested(experiments={"table1": {"methods": ["svm"]}}), "experiments.table1.methods.0"),
        (nested(experiments={"table1": {"methods": ["Cold"]}}), "experiments.table1.methods.0"),
        (nested(experiments={"table1": {"table": "table9"}}), "experiments.table1.table"),
        (nested(experiments={"table1": {"kernel_mode": "huge"}}), "experiments.table1.kernel_mode"),
        (nested(experiments={"table1": {"max_rounds": [{"rounds": 2, "method": "svm"}]}}),
         "experiments.table1.max_rounds.0.method"),
        # names that become paths
        (nested(datasets={"../x": HEART}), "../x"),
        (nested(datasets={"a/b": HEART}), "a/b"),
        (nested(datasets={"a b": HEART}), "a b"),
        (nested(datasets={"": HEART}), "''"),
        (nested(experiments={"table1": {"datasets": ["../heart"]}}), "experiments.table1.datasets.0"),
        (nested(experiments={"table1": {"max_rounds": [{"rounds": 2, "dataset": "a/b"}]}}),
         "experiments.table1.max_rounds.0.dataset"),
        (nested(profile=".."), "profile"),
        (nested(profile="a/b"), "profile"),
        (nested(datasets={"heart": {"mirror_file": ".."}}), "datasets.heart.mirror_file"),
        (nested(datasets={"heart": {"mirror_file": "../heart"}}), "datasets.heart.mirror_file"),
        # URLs: https or http only, ending in a plain file name
        (nested(datasets={"heart": {"url": "ftp://ftp.example.org/heart"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "file:///etc/passwd"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "/srv/data/heart.xz"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "javascript:alert(1)"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "https://example.org/data/.."}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "https://example.org/"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "https://example.org/get?f=heart"}}), "datasets.heart.url"),
        (nested(datasets={"heart": {"url": "https://example.org/a\\..\\b"}}), "datasets.heart.url"),
    ],
)
def test_hostile_values_fail_at_load_naming_the_key(tmp_path, raw_config, change, key):
    def merge(base, update):
        for name, value in update.items():
            if isinstance(value, dict) and isinstance(base.get(name), dict):
                merge(base[name], value)
            else:
                base[name] = value

    merge(raw_config, copy.deepcopy(change))
    with pytest.raises(ConfigError) as error:
        load(tmp_path, raw_config)
    assert key in str(error.value)


def test_every_official_url_still_passes():
    config = load_config(REPO_ROOT / "config.yaml")
    for name, entry in config["datasets"].items():
        assert url_file_name(entry["url"]) in entry["url"], name


def test_a_download_name_is_one_plain_file_name():
    assert url_file_name("https://x.org/libsvm/mnist.bz2") == "mnist.bz2"
    for url in ("https://x.org/..", "https://x.org/a/.hidden", "https://x.org/a?b=c"):
        with pytest.raises(ConfigError, match=re.escape(url)):
            url_file_name(url)


@pytest.mark.parametrize(
    "text",
    [
        "datasets: !!python/object/apply:os.system ['touch {marker}']\n",
        "seed: !!python/object/apply:os.system ['touch {marker}']\ndatasets: {{}}\n",
        "datasets:\n  heart: !!python/name:os.system\n",
    ],
)
def test_nothing_in_a_config_is_run_as_code(tmp_path, text):
    marker = tmp_path / "executed"
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(tmp_path, text.format(marker=marker))
    assert not marker.exists()


def test_no_pickle_is_ever_loaded():
    # Every np.load in the package and the pipeline passes allow_pickle=False; nothing imports pickle.
    sources = [*REPO_ROOT.glob("src/alphaseed/**/*.py"), *REPO_ROOT.glob("workflow/**/*.py"),
               *REPO_ROOT.glob("workflow/**/*.smk"), REPO_ROOT / "Snakefile"]
    loads = 0
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(c?pickle|dill)\b", text, re.M), path
        # joblib runs GridSearchCV's parallel columns; its load, which unpickles a file, never appears.
        assert not re.search(r"^\s*import\s+joblib\b|\bjoblib\.load\b|from\s+joblib\s+import\s+[^\n]*\bload\b",
                             text, re.M), path
        for call in re.finditer(r"\bnp\.load\(([^)]*)\)", text):
            loads += 1
            assert "allow_pickle=False" in call.group(1), f"{path}: {call.group(0)}"
        assert "numpy.load(" not in text and "pd.read_pickle" not in text, path
    assert loads >= 1


def test_snakemake_refuses_a_seeder_outside_its_k_at_start(tmp_path, raw_config):
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent))
    raw_config["experiments"]["table1"]["methods"] = ["avg"]
    config_file = tmp_path / "bad.yaml"
    config_file.write_text(yaml.safe_dump(raw_config))
    result = subprocess.run(
        [snakemake, "--dry-run", "--nolock", "--cores", "1", "--configfile", str(config_file)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "experiments" in result.stdout + result.stderr
    assert "loo" in result.stdout + result.stderr


@pytest.mark.parametrize(
    "methods, k, why",
    [(["top"], [10], "leave-one-out rounds only"), (["mir"], [2], "needs k >= 3")],
)
def test_a_seeder_outside_its_k_says_why(tmp_path, raw_config, methods, k, why):
    raw_config["experiments"]["table1"].update(methods=methods, k=k)
    with pytest.raises(ConfigError, match=f"experiments.table1.k.0.*{why}"):
        load(tmp_path, raw_config)
