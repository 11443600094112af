"""environment.yml (conda route) and pyproject.toml (pip route) must install the same packages."""

import re
import tomllib
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*?)\s*$")


def normalise(requirement: str) -> tuple[str, str]:
    name, specifier = REQUIREMENT.match(requirement).groups()
    return re.sub(r"[-_.]+", "-", name).lower(), specifier.replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["test"]
    return dict(normalise(requirement) for requirement in listed)


def conda_environment() -> dict:
    return yaml.safe_load((REPO_ROOT / "environment.yml").read_text())


def test_environment_lists_the_same_packages_as_pyproject():
    conda, pip = [], []
    for dependency in conda_environment()["dependencies"]:
        if isinstance(dependency, dict):
            pip += dependency["pip"]
        else:
            conda.append(dependency)
    tooling = {"python", "pip"}
    listed = [normalise(item) for item in conda + pip if not item.startswith("-e")]
    environment = {name: specifier for name, specifier in listed if name not in tooling}
    assert environment == pyproject_requirements()
    assert "-e ." in pip, "environment.yml must install the package itself with pip"


def test_environment_uses_conda_forge_bioconda_and_python_3_11():
    environment = conda_environment()
    assert environment["channels"][:2] == ["conda-forge", "bioconda"]
    assert "python=3.11" in environment["dependencies"]
