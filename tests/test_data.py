import bz2
import copy
import gzip
import lzma
import os
import re
from pathlib import Path

import numpy as np
import pytest

from alphaseed.pipeline.data import (
    canonical_csr,
    download,
    fingerprint,
    load_dataset,
    locate_source,
    parse_libsvm,
    prepare_dataset,
    processed_path,
)
from alphaseed.errors import (
    ConfigError,
    DatasetError,
    DownloadError,
    MalformedFileError,
    VerificationError,
)

TINY_TEXT = b"""# a comment line
3 1:0.5 3:2
1 2:-1 4:7

2 1:1.5 2:0 3:3 # trailing comment
3 4:1
"""


def files_under(folder: Path) -> list[Path]:
    return [path for path in Path(folder).rglob("*") if path.is_file()]


@pytest.fixture
def tiny_config(tmp_path, repo_config, monkeypatch) -> dict:
    """A one-dataset config whose source is a small local file (no mirror, no network)."""
    monkeypatch.delenv("ALPHASEED_DATA_MIRROR", raising=False)
    source = tmp_path / "tiny.txt"
    source.write_bytes(TINY_TEXT)
    config = copy.deepcopy(repo_config)
    config["data_dir"] = str(tmp_path / "data")
    config["mirror"] = None
    config["datasets"] = {
        "tiny": {
            "path": str(source),
            "n": 4,
            "dim": 4,
            "C": 1,
            "gamma": 1,
            "labels": {"positive": [3], "negative": [1, 2]},
            "counts": {"positive": 2, "negative": 2},
        }
    }
    X, raw = parse_libsvm(source)
    config["datasets"]["tiny"]["fingerprint"] = fingerprint(raw, X)
    return config


# --- the five paper datasets, from the mirror ---------------------------------------------------


@pytest.mark.mirror
@pytest.mark.parametrize("name", ["adult", "heart", "madelon", "mnist", "webdata"])
def test_paper_datasets_load_from_the_mirror_with_their_counts(
    real_dataset, mirror_config, paper_datasets, name
):
    n, dim, positive, negative = (
        paper_datasets[name][key] for key in ("n", "dim", "positive", "negative")
    )
    X, y = real_dataset(name)
    assert X.shape == (n, dim) and X.format == "csr" and X.dtype == np.float64
    assert y.dtype == np.float64 and set(np.unique(y)) == {-1.0, 1.0}
    assert (np.sum(y == 1), np.sum(y == -1)) == (positive, negative)
    assert X.has_sorted_indices and X.indices.min() >= 0 and X.indices.max() == dim - 1
    assert processed_path(name, mirror_config).is_file()
    assert not files_under(Path(mirror_config["data_dir"]) / "downloads")


@pytest.mark.mirror
def test_processed_file_holds_the_fingerprint_and_loads_without_pickle(real_dataset, mirror_config):
    real_dataset("heart")
    with np.load(processed_path("heart", mirror_config), allow_pickle=False) as arrays:
        assert str(arrays["fingerprint"]) == mirror_config["datasets"]["heart"]["fingerprint"]
        assert arrays["y"].dtype == np.int8


def _change_first_value(text: bytes) -> bytes:
    first, rest = text.split(b"\n", 1)
    label, feature, *others = first.split(b" ")
    index, value = feature.split(b":")
    changed = b"%s:%g" % (index, float(value) + 1)
    return b" ".join([label, changed, *others]) + b"\n" + rest


def _flip_first_label(text: bytes) -> bytes:
    return (b"+1" if text.startswith(b"-1") else b"-1") + text[2:]


def _drop_last_line(text: bytes) -> bytes:
    return b"\n".join(text.rstrip(b"\n").split(b"\n")[:-1]) + b"\n"


@pytest.mark.mirror
@pytest.mark.parametrize(
    "corrupt, check",
    [
        (_change_first_value, "fingerprint"),
        (_flip_first_label, "positive label count"),
        (_drop_last_line, "instance count"),
    ],
)
def test_a_damaged_mirror_copy_fails_verification_and_leaves_nothing(
    mirror, mirror_config, tmp_path, corrupt, check
):
    bad_mirror = tmp_path / "mirror"
    bad_mirror.mkdir()
    original = lzma.decompress((mirror / "heart.xz").read_bytes())
    (bad_mirror / "heart").write_bytes(corrupt(original))
    config = copy.deepcopy(mirror_config)
    config["mirror"] = str(bad_mirror)
    config["data_dir"] = str(tmp_path / "data")
    with pytest.raises(VerificationError) as error:
        prepare_dataset("heart", config)
    message = str(error.value)
    assert "'heart'" in message and f"{check} mismatch" in message
    assert re.search(r"expected \S+, found \S+", message)
    assert not files_under(tmp_path / "data")


@pytest.mark.mirror
@pytest.mark.parametrize(
    "suffix, compress", [("", bytes), (".gz", gzip.compress), (".bz2", bz2.compress)]
)
def test_mirror_copies_may_be_plain_or_compressed(
    mirror, mirror_config, tmp_path, suffix, compress
):
    folder = tmp_path / "mirror"
    folder.mkdir()
    (folder / f"heart{suffix}").write_bytes(
        compress(lzma.decompress((mirror / "heart.xz").read_bytes()))
    )
    config = copy.deepcopy(mirror_config)
    config.update(mirror=str(folder), data_dir=str(tmp_path / "data"))
    assert locate_source("heart", config) == (folder / f"heart{suffix}", False)
    assert load_dataset("heart", config)[0].shape == (270, 13)


# --- small files: conversion, loading, fetching ---------------------------------------------------


def test_parse_reads_one_based_indices_and_skips_comments(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_bytes(TINY_TEXT)
    X, raw = parse_libsvm(path)
    assert raw.tolist() == [3, 1, 2, 3]
    assert X.toarray().tolist() == [[0.5, 0, 2, 0], [0, -1, 0, 7], [1.5, 0, 3, 0], [0, 0, 0, 1]]


def test_fingerprint_ignores_formatting_and_explicit_zeros_but_not_values(tmp_path):
    reformatted = tmp_path / "reformatted.txt.gz"
    reformatted.write_bytes(
        gzip.compress(b"3 1:5e-1 3:2.000\n1 2:-1.0 4:7\n2 1:1.5 3:3\n3 4:1.0\n")
    )
    original = tmp_path / "tiny.txt"
    original.write_bytes(TINY_TEXT)
    assert fingerprint(*reversed(parse_libsvm(original))) == fingerprint(
        *reversed(parse_libsvm(reformatted))
    )
    X, raw = parse_libsvm(original)
    X.data[0] += 1e-12
    assert fingerprint(raw, X) != fingerprint(*reversed(parse_libsvm(original)))
    raw[0] = 4
    assert fingerprint(raw, canonical_csr(X)) != fingerprint(*reversed(parse_libsvm(original)))


def test_prepare_writes_the_processed_file_atomically_and_load_reads_it(tiny_config):
    target = prepare_dataset("tiny", tiny_config)
    assert files_under(tiny_config["data_dir"]) == [target]
    X, y = load_dataset("tiny", tiny_config)
    assert y.tolist() == [1, -1, -1, 1]
    assert X.toarray().tolist() == [[0.5, 0, 2, 0], [0, -1, 0, 7], [1.5, 0, 3, 0], [0, 0, 0, 1]]


def test_load_prepares_a_missing_dataset(tiny_config):
    assert load_dataset("tiny", tiny_config)[0].shape == (4, 4)
    assert processed_path("tiny", tiny_config).is_file()


def test_load_rejects_a_processed_file_that_no_longer_matches_the_config(tiny_config):
    prepare_dataset("tiny", tiny_config)
    tiny_config["datasets"]["tiny"]["fingerprint"] = "0" * 64
    with pytest.raises(VerificationError, match="fingerprint mismatch"):
        load_dataset("tiny", tiny_config)


def test_a_dataset_without_expectations_is_prepared_and_reports_its_fingerprint(
    tiny_config, caplog
):
    entry = tiny_config["datasets"]["tiny"]
    expected = entry.pop("fingerprint")
    for key in ("n", "dim", "counts"):
        entry.pop(key)
    prepare_dataset("tiny", tiny_config)
    assert expected in caplog.text


def test_load_dataset_parses_a_path_with_plus_minus_one_labels_or_a_mapping(tmp_path):
    path = tmp_path / "pm.txt"
    path.write_bytes(b"+1 1:1\n-1 2:1\n")
    X, y = load_dataset(path)
    assert y.tolist() == [1.0, -1.0] and y.dtype == np.float64
    assert load_dataset(str(path))[1].tolist() == [1.0, -1.0]
    tiny = tmp_path / "tiny.txt"
    tiny.write_bytes(TINY_TEXT)
    with pytest.raises(MalformedFileError, match="label 3"):
        load_dataset(tiny)
    assert load_dataset(tiny, labels={"positive": [3], "negative": [1, 2]})[1].tolist() == [
        1,
        -1,
        -1,
        1,
    ]


def test_unknown_dataset_name_fails_naming_the_config(tiny_config):
    with pytest.raises(ConfigError, match="no such dataset"):
        load_dataset("nosuchset", tiny_config)


def test_missing_local_path_fails_clearly(tiny_config):
    tiny_config["datasets"]["tiny"]["path"] = "does/not/exist.txt"
    with pytest.raises(DatasetError, match="datasets.tiny.path"):
        prepare_dataset("tiny", tiny_config)


def test_download_streams_into_place(tmp_path):
    source = tmp_path / "remote.txt"
    source.write_bytes(TINY_TEXT)
    target = tmp_path / "data" / "downloads" / "remote.txt"
    download(source.as_uri(), target, timeout_s=5, retries=0)
    assert target.read_bytes() == TINY_TEXT
    assert files_under(target.parent) == [target]


def test_a_failed_download_names_the_mirror_option(tmp_path):
    target = tmp_path / "data" / "downloads" / "a9a"
    with pytest.raises(DownloadError) as error:
        download("http://127.0.0.1:9/a9a", target, timeout_s=2, retries=1)
    assert "mirror" in str(error.value) and "ALPHASEED_DATA_MIRROR" in str(error.value)
    assert not files_under(tmp_path)


def test_a_downloaded_file_that_fails_verification_is_deleted(tiny_config, tmp_path):
    entry = tiny_config["datasets"]["tiny"]
    entry["url"] = Path(entry.pop("path")).as_uri()
    entry["counts"]["positive"] = 3
    with pytest.raises(
        VerificationError, match="'tiny': positive label count mismatch: expected 3, found 2"
    ):
        prepare_dataset("tiny", tiny_config)
    assert not files_under(tiny_config["data_dir"])


def test_a_verified_download_is_kept_and_reused(tiny_config):
    entry = tiny_config["datasets"]["tiny"]
    entry["url"] = Path(entry.pop("path")).as_uri()
    prepare_dataset("tiny", tiny_config)
    downloaded = Path(tiny_config["data_dir"], "downloads", "tiny.txt")
    assert downloaded.is_file()
    assert locate_source("tiny", tiny_config) == (downloaded, True)


# --- malformed files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, reason",
    [
        (b"1 1:1\n-1 0:2\n", 2, "Invalid index 0"),
        (b"1 1:1\n-1 -3:2\n", 2, "Invalid index -3"),
        (b"1 1:1\n# note\n-1 2:abc\n", 3, "convert"),
        (b"1 1:1\n-1 2 3\n", 2, "not LibSVM format"),
        (b"1 1:1\nx 2:3\n", 2, "convert"),
        (b"1 1:1\n-1 2:1:3\n", 2, "convert"),
        (b"1 2:1 1:3\n", 1, "sorted"),
        (b"1 1:1\n\n-1 1:nan\n", 3, "NaN or infinite"),
        (b"1 1:1\n-1 1:2 2:-inf\n", 2, "NaN or infinite"),
        (b"1 1:1\nnan 1:2\n", 2, "NaN or infinite"),
        (b"1 1:1\n7 1:2\n", 2, "label 7 is neither"),
    ],
)
def test_malformed_lines_fail_naming_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "broken.txt"
    path.write_bytes(text)
    with pytest.raises(MalformedFileError) as error:
        load_dataset(path)
    assert f"{path}, line {line}" in str(error.value)
    assert reason in str(error.value)


@pytest.mark.parametrize("text", [b"", b"\n\n", b"# only a comment\n"])
def test_a_file_without_instances_fails(tmp_path, text):
    path = tmp_path / "empty.txt"
    path.write_bytes(text)
    with pytest.raises(
        MalformedFileError, match=f"{re.escape(str(path))}: the file holds no instances"
    ):
        load_dataset(path)


def test_a_damaged_compressed_file_fails(tmp_path):
    path = tmp_path / "broken.xz"
    path.write_bytes(lzma.compress(TINY_TEXT)[:-20])
    with pytest.raises(MalformedFileError, match="broken.xz"):
        parse_libsvm(path)


def test_a_malformed_configured_dataset_leaves_nothing(tiny_config, tmp_path):
    Path(tiny_config["datasets"]["tiny"]["path"]).write_bytes(b"3 1:1\n1 0:2\n")
    with pytest.raises(MalformedFileError, match="line 2"):
        prepare_dataset("tiny", tiny_config)
    assert not os.path.exists(tiny_config["data_dir"]) or not files_under(tiny_config["data_dir"])
