"""Load and validate the pipeline configuration (config.yaml).

The schema in ``workflow/schemas/config.schema.yaml`` is the single description of every key:
the Snakefile validates with it through ``snakemake.utils.validate`` and so does
``load_config``, so the pipeline and the package accept exactly the same files and fill in
the same defaults.
"""

from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path
from typing import Any

import yaml
from jsonschema import ValidationError
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from ..errors import ConfigError
from .grid import log2_range

SCHEMA_RELATIVE_PATH = Path("workflow", "schemas", "config.schema.yaml")
CONFIG_FILE_NAME = "config.yaml"
COMPRESSION_SUFFIXES = (".xz", ".bz2", ".gz")
# A name that is safe as one path component: no separator, no leading dot (so not "." or "..").
PLAIN_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds the config schema, if any.

    Parameters
    ----------
    start : Path
        Where to start looking (resolved first, so a relative path works).

    Returns
    -------
    Path or None
        The checkout's root, or None when no folder up to the file system's root has the schema.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / SCHEMA_RELATIVE_PATH).is_file():
            return folder
    return None


def _repo_root_for(config_path: Path | None) -> Path:
    """The checkout of ``config_path`` (or of the working directory), else of the installed package."""
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
    """The config schema that belongs to ``config_path`` (or to the current checkout).

    Parameters
    ----------
    config_path : str or os.PathLike, optional
        A config file; its checkout's schema is the one it is validated with. None: the checkout
        holding the working directory.

    Returns
    -------
    Path
        ``workflow/schemas/config.schema.yaml`` of that checkout, else the one above the installed
        package.

    Raises
    ------
    ConfigError
        If neither lies in a checkout.
    """
    return (
        _repo_root_for(Path(config_path) if config_path is not None else None)
        / SCHEMA_RELATIVE_PATH
    )


def _merge(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` applied: nested dicts merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _key_of(error: ValidationError) -> str:
    """The dotted path of the key ``error`` is about, as the messages name keys."""
    return ".".join(str(part) for part in error.absolute_path) or "<top level>"


def validate_config(config: dict, schema: str | os.PathLike) -> dict:
    """Validate ``config`` against ``schema`` in place, filling in defaults; returns it.

    After the schema, the checks it cannot express: every number finite, no k or subsample larger
    than the dataset's stated size, searches that point at a dataset and have usable ranges, and
    scale bounds in order.

    Parameters
    ----------
    config : dict
        The configuration as read from YAML; defaults are filled into it.
    schema : str or os.PathLike
        The JSON Schema file (YAML) to validate with, the one the Snakefile uses.

    Returns
    -------
    dict
        ``config`` itself, validated and completed.

    Raises
    ------
    ConfigError
        Naming the offending key and, for a cross-key rule of the schema, the rule's description.
    """
    try:
        validate(config, str(schema))
    except WorkflowError as error:
        # snakemake raises its WorkflowError while handling jsonschema's error, which knows the key.
        cause = error.__context__
        if isinstance(cause, ValidationError):
            rule = _rule_broken(cause, schema)
            because = f" ({rule})" if rule else ""
            raise ConfigError(f"config key '{_key_of(cause)}': {cause.message}{because}") from None
        raise ConfigError(f"invalid configuration: {error}") from None
    _check_finite(config, "")
    _check_sizes(config)
    _check_searches(config)
    _check_scales(config)
    return config


def _check_scales(config: dict) -> None:
    """Each dataset's ``scale``, if any, has ``lower`` below ``upper``."""
    for name, entry in config["datasets"].items():
        scale = entry.get("scale")
        if scale is not None and not scale["lower"] < scale["upper"]:
            raise ConfigError(
                f"config key 'datasets.{name}.scale': lower ({scale['lower']}) must be below "
                f"upper ({scale['upper']})"
            )


def _check_searches(config: dict) -> None:
    """What the schema cannot say of a search: its dataset exists, its ranges lead somewhere,
    its seeders have folds to share."""
    for name, search in config.get("searches", {}).items():
        key = f"searches.{name}"
        if search["dataset"] not in config["datasets"]:
            raise ConfigError(f"config key '{key}.dataset': no such dataset {search['dataset']!r}")
        for axis in ("C", "gamma"):
            try:
                log2_range(search.get(axis, "0"))
            except ConfigError as error:
                raise ConfigError(f"config key '{key}.{axis}': {error}") from None
        seeded = [m for m in search.get("methods", []) if m != "cold"]
        if seeded and search.get("k", 5) < 3:
            raise ConfigError(f"config key '{key}.k': method {seeded[0]!r} needs k >= 3")


def _rule_broken(error: ValidationError, schema: str | os.PathLike) -> str | None:
    """The description of the cross-key rule (an ``allOf`` entry of the schema) ``error`` breaks.

    jsonschema's own message for those ("'loo' was expected") does not say why.
    """
    if "allOf" not in error.absolute_schema_path:
        return None
    with open(schema, encoding="utf-8") as handle:
        root = yaml.safe_load(handle)
    node, rule = root, None
    try:
        for part in error.absolute_schema_path:
            if isinstance(node, dict) and part not in node and "$ref" in node:
                # jsonschema's path steps through a reference without naming it.
                target = root
                for name in node["$ref"].removeprefix("#/").split("/"):
                    target = target[name]
                node = target
            node = node[part]
            if isinstance(node, dict) and "if" in node and "description" in node:
                rule = node["description"]
    except (KeyError, IndexError, TypeError):
        return None
    return rule


def _check_finite(value, key: str) -> None:
    # YAML spells infinity and NaN (.inf, .nan) and JSON Schema's bounds let NaN through.
    if isinstance(value, dict):
        for child, item in value.items():
            _check_finite(item, f"{key}.{child}" if key else str(child))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _check_finite(item, f"{key}.{position}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"config key '{key}': {value} is not a finite number")


def _check_sizes(config: dict) -> None:
    """k and subsample sizes against the instance counts the config states (``n``)."""
    datasets = config["datasets"]

    def check_subsample(key: str, sizes: dict) -> None:
        for name, size in sizes.items():
            n = datasets.get(name, {}).get("n")
            if size is not None and n is not None and size > n:
                raise ConfigError(
                    f"config key '{key}.{name}': a subsample of {size} from {n} instances"
                )

    check_subsample("subsample", config.get("subsample", {}))
    for experiment_name, experiment in config.get("experiments", {}).items():
        own = experiment.get("subsample", {})
        check_subsample(f"experiments.{experiment_name}.subsample", own)
        for name in experiment["datasets"]:
            size = own[name] if name in own else config.get("subsample", {}).get(name)
            n = size if size is not None else datasets.get(name, {}).get("n")
            too_many = [k for k in experiment["k"] if k != "loo" and n is not None and k > n]
            if too_many:
                raise ConfigError(
                    f"config key 'experiments.{experiment_name}.k': k = {too_many[0]} folds "
                    f"but dataset {name} has only {n} instances here"
                )


def load_config(
    path: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None
) -> dict:
    """Read a config file, apply ``overrides`` (nested dicts merge), validate, fill defaults.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The config file; defaults to ``config.yaml`` of the checkout containing the working directory.
    overrides : dict, optional
        Keys to set over the file's (as ``snakemake --config`` does), validated with them.

    Returns
    -------
    dict
        The validated configuration with defaults filled in.

    Raises
    ------
    ConfigError
        If the file cannot be read, is not a YAML mapping or is invalid; the message names the key.
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
    """The last part of a URL's path: the name a download is stored under.

    Parameters
    ----------
    url : str
        A dataset's ``url``.

    Returns
    -------
    str
        Its last path component (a trailing ``/`` ignored).

    Raises
    ------
    ConfigError
        If that part could not be one plain file name (``..``, empty, a query): it becomes a
        path under ``data_dir/downloads``, which must not lead elsewhere.
    """
    name = url.rstrip("/").rsplit("/", 1)[-1]
    if not PLAIN_FILE_NAME.fullmatch(name):
        raise ConfigError(
            f"dataset url {url!r} does not end in a plain file name (letters, digits, _ . + -)"
        )
    return name


def mirror_file_name(entry: dict) -> str | None:
    """Base name of a dataset in the mirror folder: ``mirror_file``, else derived from ``url``.

    Parameters
    ----------
    entry : dict
        The dataset's config entry.

    Returns
    -------
    str or None
        ``mirror_file``, else the URL's file name without its compression suffix (the mirror may
        hold the file plain or compressed), else None for an entry with neither key.
    """
    if "mirror_file" in entry:
        return entry["mirror_file"]
    if "url" not in entry:
        return None
    name = url_file_name(entry["url"])
    for suffix in COMPRESSION_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def dataset_entry(config: dict, name: str) -> dict:
    """The config entry of dataset ``name``, with its label mapping checked.

    Parameters
    ----------
    config : dict
        The validated configuration.
    name : str
        A key of its ``datasets``.

    Returns
    -------
    dict
        The dataset's entry.

    Raises
    ------
    ConfigError
        If there is no such dataset, or a raw label is listed as both positive and negative.
    """
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
