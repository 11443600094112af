"""alphaseed: SVM k-fold cross-validation by alpha seeding (Wen et al., AAAI 2017).

The public names load their modules on first use, so ``import alphaseed`` (and the command
line's ``--help``) stays quick: Numba and LibSVM are imported only when something needs them.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("alphaseed")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"

_EXPORTS = {
    "train_svm": "solver",
    "SVMModel": "solver",
    "SolverOptions": "solver",
    "cross_validate": "cv",
    "CVResult": "cv",
    "load_dataset": "pipeline.data",
    "SVC": "sklearn",
    "GridSearchCV": "sklearn",
    "HalvingGridSearchCV": "sklearn",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'alphaseed' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
