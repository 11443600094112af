"""The informative-kernel study's datasets: svm-scale at prepare time, and the scaled entries of config.yaml."""

from __future__ import annotations

import copy
import csv
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from alphaseed.pipeline.config import load_config, mirror_file_name
from alphaseed.pipeline.data import canonical_csr, fingerprint, parse_libsvm, prepare_dataset, svm_scale
from alphaseed.errors import ConfigError, VerificationError

REPO = Path(__file__).resolve().parents[1]
SCALED = {"heart_scale": "heart_scale", "madelon_scale": "madelon", "mnist_scale": "mnist.scale"}


def test_svm_scale_follows_svm_scale_rules_on_a_small_matrix():
    """Catches a minimum taken over the stored values only (absent values count as 0 in svm-scale), a
    constant feature kept (svm-scale leaves it out; the formula would divide by zero), the bounds not hit
    exactly, and values not rounded to the 6 significant digits svm-scale prints."""
    X = sp.csr_matrix(np.array([[3.0, 0.0, 5.0], [6.0, 1.0, 5.0], [0.0, 3.0, 5.0]]))
    X.eliminate_zeros()
    scaled = svm_scale(X, -1.0, 1.0).toarray()
    expected = np.array([[0.0, -1.0, 0.0], [1.0, float("%g" % (-1 + 2 / 3)), 0.0], [-1.0, 1.0, 0.0]])
    np.testing.assert_array_equal(scaled, expected)
    assert scaled[1, 1] != -1 + 2 / 3  # rounded as printed: -0.333333


@pytest.mark.mirror
def test_svm_scale_turns_raw_heart_into_the_official_heart_scale(mirror):
    """The mirror's MANIFEST: svm-scale on raw heart gives the official heart_scale exactly. Catches
    scaling to [0, 1], values left unrounded (1,378 of them differ), minima over the stored values only
    (6 features differ) and a transform that reorders or drops instances."""
    raw, labels = parse_libsvm(mirror / "heart.xz")
    official, official_labels = parse_libsvm(mirror / "heart_scale.xz")
    scaled = svm_scale(raw, -1.0, 1.0)
    assert (scaled != canonical_csr(official)).nnz == 0
    assert fingerprint(labels, scaled) == fingerprint(official_labels, official)


def _manifest(mirror) -> dict[str, dict]:
    with open(mirror / "MANIFEST.tsv", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle, delimiter="\t")}


def _label_counts(text: str) -> dict[float, int]:
    pairs = re.findall(r"([+-]?\d+):(\d+)", text.split(" (")[0])
    return {float(label): int(count) for label, count in pairs}


@pytest.mark.mirror
@pytest.mark.parametrize("name", sorted(SCALED))
def test_scaled_entries_match_the_mirror_manifest_and_prepare(mirror, mirror_config, name):
    """The config's counts against the mirror's own MANIFEST, and preparing each entry passes its pinned
    checks. Catches an entry that names the wrong mirror file, a wrong n or dim, an even/odd mapping turned
    round on mnist_scale (its counts would swap), and a transform missing or changed (the fingerprint)."""
    entry = mirror_config["datasets"][name]
    assert mirror_file_name(entry) == SCALED[name]
    row = _manifest(mirror)[SCALED[name]]
    assert (entry["n"], entry["dim"]) == (int(row["n_instances"]), int(row["max_feature_index"]))
    counts = _label_counts(row["label_counts"])
    side = {"positive": 0, "negative": 0}
    for label, count in counts.items():
        side["positive" if label in entry["labels"]["positive"] else "negative"] += count
    assert entry["counts"] == side and sum(side.values()) == entry["n"]
    prepare_dataset(name, mirror_config)


@pytest.mark.mirror
def test_madelon_scale_is_madelon_scaled_to_minus_one_one(real_dataset):
    """Catches madelon_scale prepared without its transform or with another (standardised, [0, 1]): every
    feature of raw madelon varies, so each must reach both -1 and 1, in the same instance order."""
    raw, y_raw = real_dataset("madelon")
    scaled, y = real_dataset("madelon_scale")
    np.testing.assert_array_equal(y, y_raw)
    dense = scaled.toarray()
    np.testing.assert_array_equal(dense.min(axis=0), -1.0)
    np.testing.assert_array_equal(dense.max(axis=0), 1.0)
    order = np.argsort(raw[:, 0].toarray().ravel(), kind="stable")
    assert np.all(np.diff(dense[order, 0]) >= 0)  # scaling is increasing


@pytest.mark.mirror
def test_a_scaled_dataset_that_fails_verification_says_it_was_scaled(mirror_config, tmp_path):
    """Catches a mismatch message that blames only the file when the transform may be what changed."""
    config = copy.deepcopy(mirror_config)
    config["data_dir"] = str(tmp_path / "data")
    config["datasets"]["madelon_scale"]["scale"] = {"lower": 0, "upper": 1}
    with pytest.raises(VerificationError, match=r"fingerprint mismatch.*as scaled to \[0, 1\]"):
        prepare_dataset("madelon_scale", config)


def test_a_scale_whose_lower_bound_is_not_below_its_upper_is_refused(tmp_path):
    """Catches an empty or reversed range accepted at start and failing (or flipping the features) later."""
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["datasets"]["madelon_scale"]["scale"] = {"lower": 1, "upper": 1}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=r"datasets\.madelon_scale\.scale"):
        load_config(path)
