"""Write output files so that readers never see a half-written one."""

from __future__ import annotations

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
