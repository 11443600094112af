"""Run summaries: a run record without its per-instance predictions, small enough to commit.

A full-size run record carries one prediction per instance (60,000 on MNIST); the tables, the
figures and the published comparison need none of them. The summary keeps everything else that
they read (every round's iterations, times, support vectors and flags, the totals, the
estimate, the provenance) in the run record's own layout, so that ``report.tables.record_row`` and the
figures read a summary exactly as they read a record. Per-round kernel counters are summed over
the rounds, and the predictions are reduced to their counts per class. The job's wall time
(set-up, compilation and writing included) is added when known.

``read_run`` reads either file and returns a summary, so everything downstream has one input. A run
written before cut runs estimated their iterations (``iterations_measured`` absent: ``iterations`` was
the rounds run's) gets them estimated from its rounds on reading, as ``cross_validate`` now does,
with the seconds' interval.
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from pathlib import Path

from ..atomic import atomic_path
from ..cv import extrapolate, interval_share
from .records import (
    RUN_RECORD_SCHEMA,
    _plain,
    read_json,
    validate_run_record,
    validate_versioned,
)

SUMMARY_VERSION = 1


def _summary_schema() -> dict:
    """The run record's schema without predictions and per-round kernel counters, plus the summary's own
    keys; no other key is allowed."""
    schema = copy.deepcopy(RUN_RECORD_SCHEMA)
    properties, required = schema["properties"], schema["required"]
    for key in ("predictions", "schema_version"):
        properties.pop(key)
        required.remove(key)
    properties["rounds"]["items"]["properties"].pop("kernel", None)
    counts = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
    properties |= {
        "summary_version": {"const": SUMMARY_VERSION},
        "kernel": {"anyOf": [{"type": "null"}, counts]},
        "predicted": _counts_schema(),
        "job": {"type": "object", "required": ["wall_seconds"],
                "properties": {"wall_seconds": {"type": ["number", "null"], "minimum": 0}}},
    }
    required += ["summary_version", "kernel", "predicted", "job"]
    schema["additionalProperties"] = False
    return schema


def _counts_schema() -> dict:
    """Test predictions per class: +1, -1, and 0 for instances not tested (rounds not run)."""
    count = {"type": "integer", "minimum": 0}
    return {"type": "object", "required": ["1", "-1", "0"], "additionalProperties": False,
            "properties": {"1": count, "-1": count, "0": count}}


SUMMARY_SCHEMA = _summary_schema()


def _kernel_totals(rounds: list[dict]) -> dict | None:
    """Every integer kernel counter summed over the rounds; ``carried`` becomes the rounds that carried."""
    counted = [r["kernel"] for r in rounds if r.get("kernel")]
    if not counted:
        return None
    totals: Counter = Counter()
    for counts in counted:
        totals.update({key: int(value) for key, value in counts.items()})
    return dict(totals)


def summarise(record: dict, wall_seconds: float | None = None) -> dict:
    """The summary of a (validated) run record.

    Parameters
    ----------
    record : dict
        The run record.
    wall_seconds : float, optional
        The whole job's wall time (set-up, compilation and writing included), if known.

    Returns
    -------
    dict
        The record without ``predictions`` and ``schema_version``, its rounds without kernel counters,
        plus ``summary_version``, the summed ``kernel`` counters, the ``predicted`` counts per class
        and ``job``.
    """
    predicted = Counter(str(int(p)) for p in record["predictions"])
    summary = {key: value for key, value in record.items() if key not in ("predictions", "schema_version")}
    summary["rounds"] = [{key: value for key, value in r.items() if key != "kernel"} for r in record["rounds"]]
    return {
        "summary_version": SUMMARY_VERSION,
        **summary,
        "kernel": _kernel_totals(record["rounds"]),
        "predicted": {label: predicted.get(label, 0) for label in ("1", "-1", "0")},
        "job": {"wall_seconds": wall_seconds},
    }


def validate_summary(summary, source: str = "run summary") -> None:
    """Refuse, with a ``RunRecordError`` naming ``source`` and the first offending key (or the version
    and to regenerate the summary), a run summary of another version or one that breaks ``SUMMARY_SCHEMA``.

    Parameters
    ----------
    summary : object
        A summary as read from its JSON file.
    source : str, default "run summary"
        What the message calls it (its path, say).
    """
    validate_versioned(summary, SUMMARY_SCHEMA, "summary_version", SUMMARY_VERSION, source,
                       "regenerate the summary from its run record")


def summary_text(summary: dict) -> str:
    """JSON with one line per round, so that a 2,000-round leave-one-out summary stays readable.

    Parameters
    ----------
    summary : dict
        The summary.

    Returns
    -------
    str
        The file's text, ending in a newline.
    """
    rounds = ",\n".join("  " + json.dumps(r, default=_plain, allow_nan=False, separators=(",", ":"))
                        for r in summary["rounds"])
    placeholder = "\x00rounds\x00"
    text = json.dumps({**summary, "rounds": placeholder}, indent=1, default=_plain, allow_nan=False)
    return text.replace(json.dumps(placeholder), f"[\n{rounds}\n ]" if rounds else "[]") + "\n"


def write_summary(path: str | os.PathLike, summary: dict) -> None:
    """Validate ``summary`` and write it to ``path`` atomically.

    The text is validated as it will be read back, so a summary that is written can be read.

    Parameters
    ----------
    path : str or os.PathLike
        Where the summary goes, a JSON file.
    summary : dict
        ``summarise``'s result; one that breaks the schema raises ``RunRecordError`` and nothing
        is written.
    """
    text = summary_text(summary)
    validate_summary(json.loads(text), source=str(path))
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def read_run(path: str | os.PathLike) -> dict:
    """The summary of a run from a summary file or a full run record, validated either way.

    Parameters
    ----------
    path : str or os.PathLike
        A summary, or a run record (a JSON object without ``summary_version``).

    Returns
    -------
    dict
        The summary; a record's has no job wall time (``job.wall_seconds`` is null).
    """
    path = Path(path)
    content = read_json(path, "run file")
    if isinstance(content, dict) and "summary_version" not in content:
        validate_run_record(content, source=str(path))
        content = summarise(content)
    else:
        validate_summary(content, source=str(path))
    return _with_estimated_iterations(content)


def _with_estimated_iterations(summary: dict) -> dict:
    """A run written before cut runs estimated their iterations, with them estimated (see the module doc)."""
    totals = summary["summary"]
    if "iterations_measured" in totals:
        return summary
    method, rounds = summary["method"], summary["rounds"]
    left = totals["rounds_total"] - totals["rounds_run"]
    per_round = [r["iterations"] for r in rounds]
    once = totals["iterations"] - sum(per_round)   # the full model's
    seconds = totals["seconds"]
    fixed = seconds["kernel"] + seconds.get("full_model", 0.0)
    round_seconds = [sum(r["seconds"].values()) for r in rounds]
    return {**summary, "summary": {**totals, "iterations_measured": totals["iterations"],
                                   "iterations": once + round(extrapolate(per_round, left, method)),
                                   "interval": interval_share(round_seconds, left, method, fixed),
                                   "interval_iterations": interval_share(per_round, left, method, once)}}
