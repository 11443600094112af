"""Load and validate the pipeline configuration (config.yaml).

The schema in ``workflow/schemas/config.schema.yaml`` is the single description of every key:
the Snakefile validates with it through ``snakemake.utils.validate`` and so does
``load_config``, so the pipeline and the package accept exactly the same files and fill in
the same defaults.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml
from jsonschema import ValidationError
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from alphaseed.errors import ConfigError

SCHEMA_RELATIVE_PATH = Path("workflow", "schemas", "config.schema.yaml")
CONFIG_FILE_NAME = "config.yaml"
COMPRESSION_SUFFIXES = (".xz", ".bz2", ".gz")


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds the config schema, if any."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / SCHEMA_RELATIVE_PATH).is_file():
            return folder
    return None


def _repo_root_for(config_path: Path | None) -> Path:
    # The config file a user passes sits in (or below) its checkout; the package's own location
    # is the fallback for callers that hand over a config file kept elsewhere.
    candidates = [config_path.parent] if config_path is not None else [Path.cwd()]
    candidates.append(Path(__file__).parent)
    for start in candidates:
        root = find_repo_root(start)
        if root is not None:
            return root
    raise ConfigError(
        f"cannot find {SCHEMA_RELATIVE_PATH} above {candidates[0]} or above the installed package; "
        "run from an alphaseed checkout or pass the path of its config.yaml"
    )


def schema_path(config_path: str | os.PathLike | None = None) -> Path:
    """The config schema that belongs to ``config_path`` (or to the current checkout)."""
    return (
        _repo_root_for(Path(config_path) if config_path is not None else None)
        / SCHEMA_RELATIVE_PATH
    )


def _merge(base: dict, overrides: dict) -> dict:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _key_of(error: ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "<top level>"


def validate_config(config: dict, schema: str | os.PathLike) -> dict:
    """Validate ``config`` against ``schema`` in place, filling in defaults; returns it."""
    try:
        validate(config, str(schema))
    except WorkflowError as error:
        # snakemake raises its WorkflowError while handling jsonschema's error, which knows the key.
        cause = error.__context__
        if isinstance(cause, ValidationError):
            raise ConfigError(f"config key '{_key_of(cause)}': {cause.message}") from None
        raise ConfigError(f"invalid configuration: {error}") from None
    return config


def load_config(
    path: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None
) -> dict:
    """Read a config file, apply ``overrides`` (nested dicts merge), validate, fill defaults.

    ``path`` defaults to ``config.yaml`` of the checkout containing the working directory.
    Raises ``ConfigError`` naming the offending key.
    """
    if path is None:
        path = _repo_root_for(None) / CONFIG_FILE_NAME
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {path} is not valid YAML: {error}") from None
    if not isinstance(config, dict):
        raise ConfigError(
            f"config file {path} must hold a mapping of keys, not {type(config).__name__}"
        )
    if overrides:
        config = _merge(config, copy.deepcopy(overrides))
    return validate_config(config, schema_path(path))


def url_file_name(url: str) -> str:
    """The last part of a URL's path: the name a download is stored under."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def mirror_file_name(entry: dict) -> str | None:
    """Base name of a dataset in the mirror folder: ``mirror_file``, else derived from ``url``."""
    if "mirror_file" in entry:
        return entry["mirror_file"]
    if "url" not in entry:
        return None
    name = url_file_name(entry["url"])
    for suffix in COMPRESSION_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def dataset_entry(config: dict, name: str) -> dict:
    """The config entry of dataset ``name``, with its label mapping checked."""
    datasets = config.get("datasets", {})
    if name not in datasets:
        known = ", ".join(sorted(datasets)) or "none"
        raise ConfigError(f"config key 'datasets.{name}': no such dataset (configured: {known})")
    entry = datasets[name]
    overlap = set(entry["labels"]["positive"]) & set(entry["labels"]["negative"])
    if overlap:
        raise ConfigError(
            f"config key 'datasets.{name}.labels': {sorted(overlap)} listed as both positive and negative"
        )
    return entry
