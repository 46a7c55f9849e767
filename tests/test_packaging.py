"""The two ways to install stay one: pyproject.toml and environment.yml list the same packages."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", requirement).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def test_environment_yml_matches_pyproject_runtime_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))

    wanted = dict(_split(r) for r in project["dependencies"])
    listed = dict(_split(d) for d in conda if not d.startswith(("python", "pip")))
    assert listed == wanted
    assert env["channels"] == ["conda-forge"]
    python = next(d for d in conda if _split(d)[0] == "python")
    assert _split(python)[1] == project["requires-python"]
    assert pip == ["-e ."]
