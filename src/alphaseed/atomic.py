"""Write output files so that readers never see a half-written one."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it to ``target`` if the block succeeds.

    The temporary file lives in the target's folder so the final ``os.replace`` is a rename on
    one file system (atomic); if the block raises, the temporary file is removed and ``target``
    is left as it was. The target's folder is created if it is missing.

    Parameters
    ----------
    target : str or os.PathLike
        The file the block's output is to become.

    Yields
    ------
    Path
        A hidden, not yet existing file beside ``target`` for the block to write.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A fresh random name rather than mkstemp, so the file gets the usual permissions.
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        yield temporary
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def write_json(path: str | os.PathLike, content: dict) -> None:
    """Write ``content`` as JSON to ``path`` (UTF-8), atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    content : dict
        JSON-able content, NumPy scalars included; NaN and infinity are refused, as JSON has no
        such numbers.
    """
    with atomic_path(path) as temporary:
        temporary.write_text(json.dumps(content, indent=1, allow_nan=False, default=_numpy_scalar) + "\n",
                             encoding="utf-8")


def _numpy_scalar(value):
    """A NumPy scalar as the Python number it holds (json knows no NumPy types)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON-able")
