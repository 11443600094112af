"""LIBSVM grid.py's ranges of log2 C and log2 gamma (a module of its own: the command line and
the Snakefile read them without loading the rest of the pipeline)."""

from __future__ import annotations

import math

from ..errors import ConfigError


def log2_range(text: str) -> list[float]:
    """LIBSVM grid.py's begin:end:step (end included), or one value, as a list of values.

    A small tolerance keeps ``end`` in the range when the steps do not add up to it exactly.

    Parameters
    ----------
    text : str
        ``begin:end:step`` (e.g. ``-5:15:2``, or ``3:-15:-2`` downwards) or a single number.

    Returns
    -------
    list of float
        The values from ``begin`` towards ``end`` in steps of ``step``, or the one value.

    Raises
    ------
    ConfigError
        If ``text`` is neither a number nor three numbers whose step is non-zero and points to ``end``.
    """
    try:
        parts = [float(v) for v in text.split(":")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        return parts
    if len(parts) != 3 or parts[2] == 0 or (parts[1] - parts[0]) * parts[2] < 0:
        raise ConfigError(
            f"must be begin:end:step with a step towards end (e.g. -5:15:2), not {text!r}")
    begin, end, step = parts
    return [begin + i * step for i in range(math.floor((end - begin) / step + 1e-9) + 1)]
