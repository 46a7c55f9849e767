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
# Runtime dependencies that conda-forge does not package under their PyPI name.
PYPI_ONLY = {"fontawesomefree"}


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
    # What conda-forge lacks comes from PyPI, in the pip section, before tinyinit itself.
    from_pypi = dict(_split(d) for d in pip if d != "-e .")
    assert set(from_pypi) == PYPI_ONLY
    assert {**listed, **from_pypi} == wanted and not set(listed) & set(from_pypi)
    assert env["channels"] == ["conda-forge"]
    python = next(d for d in conda if _split(d)[0] == "python")
    assert _split(python)[1] == project["requires-python"]
    assert pip[-1] == "-e ."


def _third_party_imports() -> set[str]:
    """Top-level names of every module tinyinit imports (also inside functions), minus stdlib."""
    import ast
    import sys

    names = set()
    for path in (ROOT / "tinyinit").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "tinyinit"}


def test_every_runtime_import_is_installed_by_the_listed_dependencies():
    # A fresh Binder or JupyterHub image has only what pyproject/environment.yml bring in:
    # each import must come from a listed package or from one of its own requirements.
    from importlib.metadata import PackageNotFoundError, packages_distributions
    from importlib.metadata import requires as _requires

    def requires(name):  # a requirement for another platform is not installed here
        try:
            return _requires(name)
        except PackageNotFoundError:
            return []

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = {_split(r)[0] for r in project["dependencies"]}
    reachable, todo = set(listed), list(listed)
    while todo:  # everything the listed packages pull in, however deep
        for requirement in requires(todo.pop()) or []:
            name = _split(requirement)[0]
            if "extra ==" not in requirement and name not in reachable:
                reachable.add(name)
                todo.append(name)
    providers = packages_distributions()
    for module in sorted(_third_party_imports()):
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        assert dists, f"tinyinit imports {module}, which no installed package provides"
        assert dists & reachable, f"tinyinit imports {module} ({dists}): list it in pyproject.toml"


def test_widget_frontends_ship_as_prebuilt_lab_extensions():
    # ipywidgets' and ipympl's browser halves come inside their pip/conda packages
    # (no `jupyter labextension install`, no Node): JupyterLab and Voila find them.
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    listing = run.stdout + run.stderr
    for extension in ("@jupyter-widgets/jupyterlab-manager", "jupyter-matplotlib"):
        line = next((ln for ln in listing.splitlines() if extension in ln), "")
        assert "enabled" in line and "OK" in line, f"{extension} missing or broken:\n{listing}"
