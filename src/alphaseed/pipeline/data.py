"""Datasets: fetch, parse, verify and convert LibSVM-format files; load the converted arrays.

``prepare_dataset(name, config)`` turns a config entry into ``{data_dir}/processed/{name}.npz``:

1. locate the source file: the entry's ``path``; else ``mirror_file`` (as is, or with ``.xz``, ``.bz2`` or
   ``.gz``) in the mirror folder (``config["mirror"]`` or ``$ALPHASEED_DATA_MIRROR``); else the ``url``,
   downloaded to ``{data_dir}/downloads/`` (time-out, retries, progress bar, atomic rename);
2. parse it with scikit-learn's ``load_svmlight_file`` (decompressing on the fly);
3. apply the entry's transform (``scale``: svm-scale, see ``svm_scale``), map the raw labels to +1/-1 and
   verify the content as prepared against the entry: instance count, largest index, label counts, fingerprint;
4. write the arrays atomically.

A failure at any step raises a ``DatasetError`` subclass and leaves nothing of the dataset in
``data_dir``: a download that fails verification is deleted.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import http.client
import io
import logging
import lzma
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from tqdm import tqdm

from ..atomic import atomic_path
from .config import (
    COMPRESSION_SUFFIXES,
    dataset_entry,
    load_config,
    mirror_file_name,
    url_file_name,
)
from ..errors import DatasetError, DownloadError, MalformedFileError, VerificationError

log = logging.getLogger(__name__)

MIRROR_ENV = "ALPHASEED_DATA_MIRROR"
DATASET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLUS_MINUS_ONE = {"positive": [1], "negative": [-1]}
_OPENERS = {".xz": lzma.open, ".bz2": bz2.open, ".gz": gzip.open}
_DOWNLOAD_CHUNK = 1 << 20
_UTF8_BOM = b"\xef\xbb\xbf"


def processed_path(name: str, config: dict) -> Path:
    """Where the converted arrays of dataset ``name`` live.

    Parameters
    ----------
    name : str
        The dataset, which names the file.
    config : dict
        The configuration (its ``data_dir``).

    Returns
    -------
    Path
        ``{data_dir}/processed/{name}.npz``.
    """
    return Path(config["data_dir"], "processed", f"{name}.npz")


def mirror_folder(config: dict) -> Path | None:
    """The mirror folder: ``config["mirror"]``, else ``$ALPHASEED_DATA_MIRROR``, else None.

    Parameters
    ----------
    config : dict
        The configuration.

    Returns
    -------
    Path or None
        The folder named (not checked to exist).
    """
    folder = config.get("mirror") or os.environ.get(MIRROR_ENV)
    return Path(folder) if folder else None


def find_in_mirror(folder: Path, base_name: str) -> Path | None:
    """The copy of ``base_name`` in ``folder``, stored plain or compressed, if there is one.

    Parameters
    ----------
    folder : Path
        The mirror folder.
    base_name : str
        The file's name without a compression suffix (``mirror_file_name``).

    Returns
    -------
    Path or None
    """
    for suffix in ("", *COMPRESSION_SUFFIXES):
        candidate = folder / f"{base_name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def open_decompressed(path: Path):
    """Open a file for binary reading, decompressing it according to its suffix.

    A leading UTF-8 byte order mark (left by some editors; no content) is skipped so the first label parses.

    Parameters
    ----------
    path : Path
        A plain, ``.xz``, ``.bz2`` or ``.gz`` file.

    Returns
    -------
    file object
        Open for binary reading; the caller closes it.
    """
    handle = _OPENERS.get(path.suffix, open)(path, "rb")
    try:
        if handle.read(len(_UTF8_BOM)) != _UTF8_BOM:
            handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def download(url: str, target: Path, timeout_s: float = 60, retries: int = 3) -> Path:
    """Stream ``url`` into ``target`` (atomically), retrying failed attempts with a pause.

    Parameters
    ----------
    url : str
        The file to fetch.
    target : Path
        Where to store it; only a transfer that completes is renamed to it.
    timeout_s : float, default 60
        Time-out of each attempt's connection and reads, in seconds.
    retries : int, default 3
        Attempts after the first, none after an HTTP 4xx; then ``DownloadError``, which suggests a mirror.

    Returns
    -------
    Path
        ``target``.
    """
    errors = []
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(2**attempt, 30))
        try:
            with atomic_path(target) as temporary:
                _stream(url, temporary, timeout_s)
            return target
        except urllib.error.HTTPError as error:
            errors.append(f"HTTP {error.code} {error.reason}")
            if 400 <= error.code < 500:  # the address is wrong; asking again will not help
                break
        except (urllib.error.URLError, http.client.HTTPException, OSError, DownloadError) as error:
            errors.append(str(getattr(error, "reason", error)))
    raise DownloadError(
        f"cannot download {url} ({len(errors)} attempt(s); last error: {errors[-1]}). "
        "If this machine cannot reach the site, copy the file into a folder and name that folder "
        f"with the config key 'mirror' (snakemake --config mirror=FOLDER) or the environment "
        f"variable {MIRROR_ENV}."
    )


def _stream(url: str, destination: Path, timeout_s: float) -> None:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        expected = int(response.headers.get("Content-Length") or 0) or None
        received = 0
        with (
            destination.open("wb") as out,
            tqdm(total=expected, unit="B", unit_scale=True, desc=url_file_name(url)) as progress,
        ):
            while chunk := response.read(_DOWNLOAD_CHUNK):
                out.write(chunk)
                received += len(chunk)
                progress.update(len(chunk))
    if expected is not None and received != expected:
        raise DownloadError(f"transfer cut short: {received} of {expected} bytes")


def locate_source(name: str, config: dict) -> tuple[Path, bool]:
    """The file to parse for dataset ``name`` and whether it was downloaded into ``data_dir``.

    Parameters
    ----------
    name : str
        A dataset of ``config``.
    config : dict
        The validated configuration, with the dataset's entry, the data folder and the mirror.

    Returns
    -------
    tuple of (Path, bool)
        The source file, and whether it is a download (the only kind a failed check deletes).
    """
    entry = dataset_entry(config, name)
    if "path" in entry:
        path = Path(entry["path"])
        if not path.is_file():
            raise DatasetError(
                f"dataset '{name}': config key 'datasets.{name}.path' names {path}, which does not exist"
            )
        return path, False
    mirror = mirror_folder(config)
    if mirror is not None:
        if not mirror.is_dir():
            raise DatasetError(
                f"mirror folder {mirror} does not exist (config key 'mirror' or {MIRROR_ENV})"
            )
        copy = find_in_mirror(mirror, mirror_file_name(entry))
        if copy is not None:
            return copy, False
        log.info(
            "dataset %s: no %s[.xz|.bz2|.gz] in mirror %s; downloading",
            name,
            mirror_file_name(entry),
            mirror,
        )
    target = Path(config["data_dir"], "downloads", url_file_name(entry["url"]))
    if not target.is_file():
        download(entry["url"], target, **config["download"])
    return target, True


def _significant_lines(path: Path):
    """(line number, line) for each line the parser reads as an instance (not blank, not a comment)."""
    with open_decompressed(path) as handle:
        for number, line in enumerate(handle, start=1):
            if line.split(b"#", 1)[0].strip():
                yield number, line


def _first_unparsable_line(path: Path) -> int | None:
    # Only run after the parser failed: it names no line, so re-parse line by line to find it.
    for number, line in _significant_lines(path):
        try:
            load_svmlight_file(io.BytesIO(line), zero_based=False)
        except (ValueError, OverflowError):
            return number
    return None


def _line_of_row(path: Path, row: int) -> int | None:
    for index, (number, _) in enumerate(_significant_lines(path)):
        if index == row:
            return number
    return None


def parse_libsvm(path: str | os.PathLike) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse a LibSVM-format file (plain, .xz, .bz2 or .gz) into CSR features and raw labels.

    Feature indices are one-based as in LibSVM, strictly increasing within a line and at most
    2**31 - 1; the largest index is the number of features. Blank lines, ``#`` comments, CRLF
    line ends, a leading UTF-8 byte order mark and ``qid:`` tokens are ignored; a line with only
    a label is an instance whose features are all zero. Index 0 or below, a duplicate, unsorted
    or too large index, a value or label that is not a finite number, a line not of the form
    ``label index:value ...`` and a file without instances all raise ``MalformedFileError``
    naming the file and, where it can be found, the line.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    tuple of (scipy.sparse.csr_matrix, ndarray)
        float64 features, one row per instance, and the raw labels (float64) as in the file.
    """
    path = Path(path)
    try:
        with open_decompressed(path) as handle:
            X, labels = load_svmlight_file(handle, zero_based=False, dtype=np.float64)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (ValueError, OverflowError) as error:
        # OverflowError: a feature index beyond the parser's C int (2**31 - 1).
        line = _first_unparsable_line(path)
        where = f"{path}, line {line}" if line is not None else f"{path}"
        raise MalformedFileError(f"{where}: not LibSVM format ({error})") from None
    except (OSError, EOFError, lzma.LZMAError) as error:
        raise MalformedFileError(f"{path}: cannot read or decompress ({error})") from None
    if X.shape[0] == 0:
        raise MalformedFileError(f"{path}: the file holds no instances")
    X = X.tocsr()
    bad_rows = []
    bad_values = ~np.isfinite(X.data)
    if bad_values.any():
        bad_rows.append(int(np.searchsorted(X.indptr, np.argmax(bad_values), side="right")) - 1)
    bad_labels = ~np.isfinite(labels)
    if bad_labels.any():
        bad_rows.append(int(np.argmax(bad_labels)))
    if bad_rows:
        line = _line_of_row(path, min(bad_rows))
        raise MalformedFileError(f"{path}, line {line}: NaN or infinite value")
    return X, labels


def map_labels(raw: np.ndarray, mapping: dict, source: str | os.PathLike) -> np.ndarray:
    """Raw labels to int8 +1/-1 with ``mapping`` ({"positive": [...], "negative": [...]}).

    Parameters
    ----------
    raw : ndarray
        The labels as parsed.
    mapping : dict
        The raw labels that are ``positive`` and those that are ``negative``.
    source : str or os.PathLike
        Their file, read again to name the line of a label in neither list (``MalformedFileError``).

    Returns
    -------
    ndarray
    """
    positive = np.isin(raw, mapping["positive"])
    negative = np.isin(raw, mapping["negative"])
    unmapped = ~(positive | negative)
    if unmapped.any():
        row = int(np.argmax(unmapped))
        line = _line_of_row(Path(source), row)
        raise MalformedFileError(
            f"{source}, line {line}: label {raw[row]:g} is neither positive {mapping['positive']} "
            f"nor negative {mapping['negative']} ({int(unmapped.sum())} such instances)"
        )
    return np.where(positive, 1, -1).astype(np.int8)


def svm_scale(X: sp.spmatrix, lower: float, upper: float) -> sp.csr_matrix:
    """Every feature scaled linearly to [lower, upper] as LIBSVM's ``svm-scale -l lower -u upper`` writes it.

    svm-scale's rules, kept so that raw ``heart`` becomes the official ``heart_scale`` bit for bit:
    the minimum and maximum run over the whole file, an absent value counting as 0; a value
    equal to them becomes exactly lower or upper; a constant feature is left out; and each value
    is rounded to the 6 significant digits that svm-scale prints (``%g``). The shape is kept.

    Parameters
    ----------
    X : scipy.sparse.spmatrix
        The features (scaled as a dense copy).
    lower, upper : float
        The interval every feature is mapped onto.

    Returns
    -------
    scipy.sparse.csr_matrix
        The scaled features, in ``canonical_csr`` form.
    """
    dense = X.toarray()
    low, high = dense.min(axis=0), dense.max(axis=0)
    varies = high > low
    span = np.where(varies, high - low, 1.0)
    scaled = lower + (upper - lower) * (dense - low) / span
    scaled = np.where(dense == low, lower, np.where(dense == high, upper, scaled))
    scaled[:, ~varies] = 0.0
    printed = np.char.mod("%g", scaled).astype(np.float64)
    return canonical_csr(sp.csr_matrix(printed))


def apply_transform(entry: dict, X: sp.csr_matrix) -> sp.csr_matrix:
    """The features as the entry's transform leaves them (none: unchanged).

    Parameters
    ----------
    entry : dict
        The dataset's config entry; ``scale`` (``lower``, ``upper``) is the one transform.
    X : scipy.sparse.csr_matrix
        The parsed features.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``svm_scale``'s result, or ``X`` itself.
    """
    if "scale" not in entry:
        return X
    return svm_scale(X, entry["scale"]["lower"], entry["scale"]["upper"])


def canonical_csr(X: sp.spmatrix) -> sp.csr_matrix:
    """A CSR copy with duplicates summed, explicit zeros dropped and column indices sorted.

    Parameters
    ----------
    X : scipy.sparse.spmatrix
        Any sparse matrix.

    Returns
    -------
    scipy.sparse.csr_matrix
        float64, in the one form a matrix has whatever file spelled it, so its arrays can be hashed.
    """
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    return X


def fingerprint(raw_labels: np.ndarray, X: sp.spmatrix) -> str:
    """sha256 (hex) of the parsed content, independent of number formatting and explicit zeros.

    The hash runs over these little-endian arrays, in this order:
    raw labels (as in the file, before the +1/-1 mapping) as float64;
    then the CSR matrix from ``canonical_csr``: its shape (rows, largest feature index) as int64,
    ``indptr`` as int64, ``indices`` (zero-based columns) as int32 and ``data`` as float64.

    Parameters
    ----------
    raw_labels : ndarray
        The labels as in the file.
    X : scipy.sparse.spmatrix
        The features.

    Returns
    -------
    str
    """
    X = canonical_csr(X)
    digest = hashlib.sha256()
    for array, dtype in (
        (raw_labels, "<f8"),
        (np.asarray(X.shape), "<i8"),
        (X.indptr, "<i8"),
        (X.indices, "<i4"),
        (X.data, "<f8"),
    ):
        digest.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return digest.hexdigest()


def verify(
    name: str, entry: dict, X: sp.csr_matrix, raw_labels: np.ndarray, y: np.ndarray, source
) -> str:
    """Check the parsed dataset against its config entry; returns the fingerprint found.

    Parameters
    ----------
    name : str
        The dataset's name, for messages.
    entry : dict
        Its config entry: ``n``, ``dim``, ``counts`` and ``fingerprint``, each checked if stated.
    X : scipy.sparse.csr_matrix
        The features as prepared (after the entry's transform).
    raw_labels, y : ndarray
        The labels as in the file (the fingerprint's) and as mapped to +1/-1 (the counts').
    source : str or os.PathLike
        The file parsed, for messages.

    Returns
    -------
    str
        The fingerprint found; logged, to be pinned in config.yaml, if the entry has none.

    Raises
    ------
    VerificationError
        At the first stated figure that differs, naming it, the source and both values.
    """
    found_fingerprint = fingerprint(raw_labels, X)
    checks = [
        ("instance count", entry.get("n"), X.shape[0]),
        ("largest feature index", entry.get("dim"), X.shape[1]),
    ]
    if "counts" in entry:
        for side, label in (("positive", 1), ("negative", -1)):
            checks.append((f"{side} label count", entry["counts"][side], int(np.sum(y == label))))
    checks.append(("fingerprint", entry.get("fingerprint"), found_fingerprint))
    if "scale" in entry:
        source = f"{source}, as scaled to [{entry['scale']['lower']:g}, {entry['scale']['upper']:g}]"
    for check, expected, found in checks:
        if expected is not None and expected != found:
            raise VerificationError(
                f"dataset '{name}': {check} mismatch: expected {expected}, found {found} "
                f"(source {source}); the file is damaged or a different version"
            )
    if entry.get("fingerprint") is None:
        log.warning(
            "dataset %s: no fingerprint configured; found %s. Add 'fingerprint: %s' to "
            "datasets.%s in config.yaml to pin the content.",
            name,
            found_fingerprint,
            found_fingerprint,
            name,
        )
    return found_fingerprint


def prepare_dataset(name: str, config: dict) -> Path:
    """Fetch, parse, verify and convert dataset ``name``; returns the processed file's path.

    Parameters
    ----------
    name : str
        The dataset's name.
    config : dict
        The validated configuration.

    Returns
    -------
    Path
        ``processed_path(name, config)``, written atomically.
    """
    entry = dataset_entry(config, name)
    source, downloaded = locate_source(name, config)
    log.info("dataset %s: parsing %s", name, source)
    try:
        X, raw_labels = parse_libsvm(source)
        X = apply_transform(entry, X)
        y = map_labels(raw_labels, entry["labels"], source)
        found_fingerprint = verify(name, entry, X, raw_labels, y, source)
    except DatasetError as error:
        if not downloaded:
            raise
        source.unlink(missing_ok=True)
        raise type(error)(f"{error}; the download was deleted and the next run fetches it again") from None
    target = processed_path(name, config)
    X = canonical_csr(X)
    with atomic_path(target) as temporary, temporary.open("wb") as handle:
        np.savez(
            handle,
            data=X.data,
            indices=X.indices.astype(np.int32),
            indptr=X.indptr.astype(np.int64),
            shape=np.asarray(X.shape, dtype=np.int64),
            y=y,
            fingerprint=np.str_(found_fingerprint),
        )
    log.info("dataset %s: %d instances, %d features -> %s", name, X.shape[0], X.shape[1], target)
    return target


def _read_processed(path: Path) -> tuple[sp.csr_matrix, np.ndarray, str]:
    try:
        with np.load(path, allow_pickle=False) as arrays:
            X = sp.csr_matrix(
                (arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"])
            )
            return X, arrays["y"].astype(np.float64), str(arrays["fingerprint"])
    except (OSError, ValueError, KeyError) as error:
        raise DatasetError(
            f"{path}: unreadable processed dataset ({error}); delete it to rebuild it"
        ) from None


def load_dataset(
    name_or_path: str | os.PathLike, config: dict | None = None, labels: dict | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Features (CSR, float64) and labels (float64, +1/-1) of a dataset.

    A dataset name loads ``{data_dir}/processed/{name}.npz``, preparing it first if it is missing, and refuses
    it if its stored fingerprint is not the entry's; anything else is the path of a LibSVM-format file.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A dataset name (a ``str`` that is an identifier and no existing file) or a file's path.
    config : dict, optional
        The configuration, for a name; defaults to the checkout's config.yaml.
    labels : dict, optional
        A file's label mapping (as ``map_labels``'); by default its labels must be +1/-1.

    Returns
    -------
    tuple of (scipy.sparse.csr_matrix, ndarray)
        Features (float64) and labels (float64, +1/-1).
    """
    text = os.fspath(name_or_path)
    if isinstance(name_or_path, str) and DATASET_NAME.fullmatch(text) and not Path(text).is_file():
        config = config if config is not None else load_config()
        entry = dataset_entry(config, text)
        path = processed_path(text, config)
        if not path.is_file():
            prepare_dataset(text, config)
        X, y, stored_fingerprint = _read_processed(path)
        expected = entry.get("fingerprint")
        if expected is not None and expected != stored_fingerprint:
            raise VerificationError(
                f"dataset '{text}': fingerprint mismatch: expected {expected}, found {stored_fingerprint} "
                f"in {path}; delete it to rebuild it from the source"
            )
        return X, y
    X, raw_labels = parse_libsvm(text)
    return X, map_labels(raw_labels, labels or PLUS_MINUS_ONE, text).astype(np.float64)
