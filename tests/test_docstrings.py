"""Every public function and class has a docstring that names its parameters (numpydoc's own
validation): the library layers' ``__all__``, and the public functions and classes of the
pipeline's and the report's modules."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

LIBRARY = ["alphaseed.kernel", "alphaseed.solver", "alphaseed.seeding", "alphaseed.cv", "alphaseed.sklearn"]
MODULES = ["alphaseed.pipeline", "alphaseed.report"]
# Modules of a library layer that other layers import where they need them, outside its __all__.
EXTRA_MODULES = ["alphaseed.cv.baseline"]
# No docstring, parameters not documented, documented parameters that do not exist, a parameter
# without a description.
CHECKS = {"GL08", "PR01", "PR02", "PR07"}


def public_objects() -> list[str]:
    names = []
    for package in LIBRARY:
        module = importlib.import_module(package)
        names += [f"{package}.{name}" for name in module.__all__
                  if inspect.isclass(getattr(module, name)) or callable(getattr(module, name))]
    modules = [f"{package}.{info.name}" for package in MODULES
               for info in pkgutil.iter_modules(importlib.import_module(package).__path__)]
    for module in map(importlib.import_module, modules + EXTRA_MODULES):
        names += [f"{module.__name__}.{name}" for name, obj in vars(module).items()
                  if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                  and obj.__module__ == module.__name__]
    methods = []
    for name in names:
        module_name, _, attribute = name.rpartition(".")
        obj = getattr(importlib.import_module(module_name), attribute)
        if inspect.isclass(obj):
            methods += [f"{name}.{method}" for method, member in vars(obj).items()
                        if not method.startswith("_") and inspect.isfunction(member)]
    return sorted(set(names + methods))


@pytest.mark.parametrize("name", public_objects())
def test_a_public_object_documents_its_parameters(name):
    """Catches a public function or class without a docstring, or whose docstring leaves out a
    parameter or names one it does not have."""
    errors = [f"{code}: {message}" for code, message in numpydoc_validate.validate(name)["errors"]
              if code in CHECKS]
    assert not errors, "\n".join(errors)
