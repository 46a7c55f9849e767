"""The project's scripts (scripts/*.py) as modules, for the tests that check them; and where
the repository and the tests' fixtures are."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# The repository, for tests in any folder under tests/ (pyproject.toml puts tests/ on the path).
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SCRIPTS = ROOT / "scripts"


def load_script(name: str):
    """scripts/<name>.py, imported once under its own name (dataclasses look it up there)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
