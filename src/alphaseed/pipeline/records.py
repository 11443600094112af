"""Run records: the JSON file one cross-validation run leaves behind.

The tables, figures and notebooks read nothing else, so the layout is fixed by
``RUN_RECORD_SCHEMA`` (JSON Schema) and checked when a record is read back; a record of another
``schema_version`` is refused rather than misread.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..cv import folds_sha256
from ..errors import AlphaseedError

SCHEMA_VERSION = 1


class RunRecordError(AlphaseedError, ValueError):
    """Raised when a run record (or summary) file is unreadable or does not follow its schema."""


def _object(required: dict, optional: dict | None = None, **extra) -> dict:
    """A JSON Schema object with ``required`` properties, ``optional`` ones and any ``extra`` keywords."""
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}, **extra}


_NUMBER = {"type": "number"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_SECONDS_TOTALS = _object({key: _NUMBER for key in
                           ("total", "init", "rest", "compile", "kernel", "conversion")})
_SECONDS_ROUND = _object({key: _NUMBER for key in ("seed", "gradient_init", "train", "predict")})
# Our solver's kernel work in a round (``alphaseed.solver.KernelCounts``); null for `libsvm`, and
# optional, so that records written without it (older ones) still read.
_KERNEL_COUNTS = {"anyOf": [{"type": "null"}, {
    "type": "object",
    "properties": {"carried": _BOOL},
    "additionalProperties": {"type": "integer", "minimum": 0},
}]}
_ROUND = _object({
    "round": _INT, "train_size": _INT, "test_size": _INT, "iterations": _INT, "n_sv": _INT,
    "n_bounded_sv": _INT, "objective": _NUMBER, "rho": _NUMBER, "n_correct": _INT,
    "iteration_cap_hit": _BOOL, "seconds": _SECONDS_ROUND,
}, optional={"kernel": _KERNEL_COUNTS})
_PROVENANCE_KEYS = ("config", "dataset_fingerprint", "package_version", "git_commit", "python",
                    "numpy", "scipy", "numba", "libsvm", "cpu", "threads", "omp_num_threads",
                    "hostname", "started_utc", "finished_utc")

RUN_RECORD_SCHEMA = _object({
    "schema_version": {"const": SCHEMA_VERSION},
    "dataset": {"type": "string"},
    "k": {"anyOf": [{"type": "integer", "minimum": 2}, {"const": "loo"}]},
    "n_folds": {"type": "integer", "minimum": 2},
    "method": {"type": "string"},
    "kernel_mode": {"type": "string"},
    "n": _INT,
    "dim": _INT,
    "params": _object({
        "C": _NUMBER, "gamma": _NUMBER, "eps": _NUMBER, "cache_mb": _NUMBER, "shrinking": _BOOL,
        "seed": _INT, "max_rounds": {"type": ["integer", "null"]},
        "subsample": {"type": ["integer", "null"]},
    }, optional={"chains": {"type": "integer", "minimum": 1}, "until_interval": {"type": ["number", "null"]}}),
    "summary": _object({
        "accuracy": _NUMBER, "n_tested": _INT, "n_correct": _INT, "iterations": _INT,
        "rounds_run": _INT, "rounds_total": _INT, "estimated": _BOOL, "iteration_cap_hit": _BOOL,
        "seconds": _SECONDS_TOTALS, "seconds_measured_total": _NUMBER,
    }, optional={"iterations_full_model": _INT, "iterations_measured": _INT, "rounds_resumed": _INT,
                 "rounds_shared": _INT, "interval": {"type": ["number", "null"], "minimum": 0},
                 "interval_iterations": {"type": ["number", "null"], "minimum": 0}}),
    "rounds": {"type": "array", "items": _ROUND},
    "predictions": {"type": "array", "items": {"enum": [-1, 0, 1]}},
    "folds_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "provenance": {"type": "object", "required": list(_PROVENANCE_KEYS)},
}, optional={"requested_kernel_mode": {"type": "string"}, "stands_in_for": {"const": "libsvm"}})


def build_run_record(result, dataset: str, provenance: dict, subsample: int | None = None,
                     stands_in_for: str | None = None) -> dict:
    """The run record of a ``CVResult``.

    Parameters
    ----------
    result : CVResult
        The cross-validation's result.
    dataset : str
        The dataset's name.
    provenance : dict
        ``collect_provenance``'s block.
    subsample : int, optional
        The M of a stratified M-sample the run was on, if any.
    stands_in_for : {"libsvm"}, optional
        The method the run stands in for in the tables (a cache-mode cold start for LibSVM).

    Returns
    -------
    dict
        The record in ``RUN_RECORD_SCHEMA``'s layout; ``write_run_record`` validates it.
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "dataset": dataset,
        "k": result.k,
        "n_folds": result.n_folds,
        "method": result.method,
        "kernel_mode": result.kernel_mode,
        "requested_kernel_mode": result.requested_kernel_mode,
        "n": result.n,
        "dim": result.dim,
        "params": {
            "C": result.C, "gamma": result.gamma, "eps": result.eps, "cache_mb": result.cache_mb,
            "shrinking": result.shrinking, "seed": result.seed, "max_rounds": result.max_rounds,
            "subsample": subsample, "chains": result.chains, "until_interval": result.until_interval,
        },
        "summary": {
            "accuracy": result.accuracy,
            "n_tested": result.n_tested,
            "n_correct": result.n_correct,
            "iterations": result.iterations,
            "iterations_measured": result.iterations_measured,
            "iterations_full_model": result.iterations_full_model,
            "rounds_run": result.rounds_run,
            "rounds_total": result.n_folds,
            "estimated": result.estimated,
            "interval": result.interval,
            "interval_iterations": result.interval_iterations,
            "rounds_resumed": result.rounds_resumed,
            "rounds_shared": result.rounds_shared,
            "iteration_cap_hit": result.iteration_cap_hit,
            "seconds": {
                "total": result.seconds,
                "init": result.seconds_init,
                "rest": result.seconds_rest,
                "compile": result.seconds_compile,
                "kernel": result.seconds_kernel,
                "conversion": result.seconds_conversion,
                "full_model": result.seconds_full_model,
            },
            "seconds_measured_total": result.seconds_measured,
        },
        "rounds": [dataclasses.asdict(record) for record in result.rounds],
        "predictions": result.predictions.astype(int).tolist(),
        "folds_sha256": folds_sha256(result.folds),
        "provenance": provenance,
        **({"stands_in_for": stands_in_for} if stands_in_for else {}),
    }


def _plain(value):
    """json.dump's fallback for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a run record")


def write_run_record(path: str | os.PathLike, record: dict) -> None:
    """Validate ``record`` and write it to ``path`` atomically (never a half-written file).

    It is validated as the JSON that will be read back (numpy values made plain; NaN, infinity or
    another type refused by the encoder), so a record that is written can be read.

    Parameters
    ----------
    path : str or os.PathLike
        The record's file.
    record : dict
        ``build_run_record``'s result.

    Raises
    ------
    RunRecordError
        If the record breaks the schema; nothing is written then.
    """
    text = json.dumps(record, indent=1, default=_plain, allow_nan=False)
    validate_run_record(json.loads(text), source=str(path))
    with atomic_path(path) as temporary:
        temporary.write_text(text + "\n", encoding="utf-8")


def read_run_record(path: str | os.PathLike) -> dict:
    """Read and validate a run record; ``RunRecordError`` names the file and the bad key.

    Parameters
    ----------
    path : str or os.PathLike
        The record's file.

    Returns
    -------
    dict
        The record.
    """
    path = Path(path)
    record = read_json(path, "run record")
    validate_run_record(record, source=str(path))
    return record


def read_json(path: Path, what: str):
    """The JSON content of ``path``; ``RunRecordError`` says which ``what`` could not be read.

    Parameters
    ----------
    path : Path
        The file.
    what : str
        What the file is, for the message (``"run record"``, ``"run file"``).

    Returns
    -------
    object
        The parsed JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RunRecordError(f"cannot read {what} {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise RunRecordError(f"{what} {path} is not valid JSON: {error}") from None


def validate_run_record(record, source: str = "run record") -> None:
    """Refuse a run record of another schema version or one that breaks ``RUN_RECORD_SCHEMA``.

    Parameters
    ----------
    record : object
        The parsed JSON.
    source : str, default "run record"
        Where it came from, for the message.

    Raises
    ------
    RunRecordError
        Naming ``source`` and the first offending key, or the version and to regenerate the record.
    """
    validate_versioned(record, RUN_RECORD_SCHEMA, "schema_version", SCHEMA_VERSION, source,
                       "regenerate the record")


def validate_versioned(document, schema: dict, version_key: str, version: int, source: str,
                       remedy: str) -> None:
    """Refuse a JSON document of another version (saying how to get this one), then one that
    breaks ``schema``, naming the first offending key.

    The version is checked first, so that a document of another version is named as such rather
    than by whichever of its keys the schema happens to reject.

    Parameters
    ----------
    document : object
        The parsed JSON.
    schema : dict
        The JSON Schema (draft 2020-12) it must follow.
    version_key : str
        The key that holds the document's version.
    version : int
        The version this code reads.
    source : str
        Where the document came from, for the message.
    remedy : str
        What to do about a document of another version.

    Raises
    ------
    RunRecordError
        As above.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if isinstance(document, dict) and document.get(version_key) != version:
        raise RunRecordError(
            f"{source}: {version_key} is {document.get(version_key)!r}, this alphaseed "
            f"reads version {version}; {remedy}"
        )
    error = best_match(Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        key = ".".join(str(part) for part in error.absolute_path) or "<top level>"
        raise RunRecordError(f"{source}: key '{key}': {error.message}")
