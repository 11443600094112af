"""Numba's on-disk cache of the compiled code, kept true to the sources and used one process at a time.

Numba checks a cached function against its own source file only. A function that calls one
from another module keeps the callee's code in its own cache entry, so after the callee's
module changes (a ``git pull``, an upgrade that leaves ``__pycache__`` behind) it loads the old
callee: wrong results, or a crash where the two disagree on a data layout (Numba's issue 1833).
``discard_stale_compiled_code`` fingerprints all the sources of the compiled packages together
and deletes their cached code unless it was sealed with that fingerprint.

A cache is sealed (``seal_compiled_code``) by the process that compiled or loaded every function
in it, the solver's warm-up, not by whichever process compiled a function last: code that calls a
parallel function keeps that function's native name, which depends on the order in which its own
process compiled, so entries written by several processes can load into a crash (Numba's issues
8578 and 10128; here a search after two test runs that each compiled part of the solver). A cache
no warm-up sealed is therefore discarded, and the next warm-up compiles it whole.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import types
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .atomic import atomic_path

# The fingerprint of the sources a cache folder's code was compiled from, written beside it when
# one process has compiled it whole (its seal).
STAMP = "alphaseed-sources.sha256"
# The subpackages holding compiled functions; they call into each other's.
COMPILED_PACKAGES = ("kernel", "solver", "seeding")


@contextmanager
def compile_lock() -> Iterator[None]:
    """Hold the machine's lock on Numba's on-disk cache of this package.

    Numba's cache is not safe for processes that compile the same functions at once (two of them
    number their entries alike and one's index then points at the other's code, which crashes
    parallel jobs in a fresh clone), nor for one that reads it while another discards it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    folder = Path(__file__).with_name("__pycache__")
    try:
        folder.mkdir(exist_ok=True)
        lock = open(folder / "numba-compile.lock", "w")
    except OSError:  # a read-only install: Numba caches elsewhere, so lock in the temporary folder
        try:
            lock = open(Path(tempfile.gettempdir()) / f"alphaseed-numba-compile-{os.getuid()}.lock", "w")
        except OSError:
            warnings.warn("alphaseed: no folder to hold the compile lock in; compiling without it", stacklevel=3)
            yield
            return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sources_fingerprint(folders: Iterable[Path]) -> str:
    """SHA-256 of every Python source under ``folders``: their paths within them and their bytes."""
    digest = hashlib.sha256()
    for folder in map(Path, folders):
        for source in sorted(Path(folder).rglob("*.py")):
            digest.update(f"{source.relative_to(folder.parent)}\0".encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


def cache_folder(folder: Path) -> Path:
    """Where Numba caches the code of the modules in ``folder``: beside them, under
    ``NUMBA_CACHE_DIR`` or in the user's cache, as Numba's own locators choose."""
    from numba.core.caching import FunctionCache

    code = compile("def probe(): pass", str(Path(folder) / "__init__.py"), "exec").co_consts[0]
    return Path(FunctionCache(types.FunctionType(code, {}))._cache_path)


def discard_stale_compiled_code(folders: Iterable[Path]) -> bool:
    """Delete Numba's cached code of the modules in ``folders`` (packages whose compiled functions
    call each other) unless it was sealed (``seal_compiled_code``) with the fingerprint of their
    sources as they are now; True if any was deleted."""
    folders = [Path(f) for f in folders]
    fingerprint = sources_fingerprint(folders)
    try:
        caches = {cache_folder(f) for f in folders}
    except (ImportError, AttributeError):  # a Numba whose cache is laid out otherwise
        warnings.warn("alphaseed: cannot find Numba's cache folders; after a change to the package's "
                      "sources run `make clean-cache`", stacklevel=2)
        return False

    def unsealed():
        return [cache for cache in caches
                if not (cache / STAMP).exists() or (cache / STAMP).read_text() != fingerprint]

    # The stamps are written whole (atomic_path), so they are read without the lock, which a
    # process compiling under it would hold for minutes.
    if not unsealed():
        return False
    discarded = False
    with compile_lock():
        for cache in unsealed():
            for compiled in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
                compiled.unlink()
                discarded = True
            (cache / STAMP).unlink(missing_ok=True)
    return discarded


def seal_compiled_code(folders: Iterable[Path]) -> None:
    """Mark Numba's cached code of the modules in ``folders`` as one process's, compiled from their
    sources as they are now: run under ``compile_lock`` by a process that has compiled or loaded
    every function the cache holds (the module docstring says why)."""
    folders = [Path(f) for f in folders]
    fingerprint = sources_fingerprint(folders)
    for cache in {cache_folder(f) for f in folders}:
        cache.mkdir(parents=True, exist_ok=True)
        with atomic_path(cache / STAMP) as temporary:
            temporary.write_text(fingerprint)


def _package_folders() -> list[Path]:
    return [Path(__file__).with_name(name) for name in COMPILED_PACKAGES]


def discard_stale_package_code() -> bool:
    """``discard_stale_compiled_code`` over this package's COMPILED_PACKAGES: run before any of
    their compiled functions loads."""
    return discard_stale_compiled_code(_package_folders())


def seal_package_code() -> None:
    """``seal_compiled_code`` over this package's COMPILED_PACKAGES (the solver's warm-up)."""
    seal_compiled_code(_package_folders())
