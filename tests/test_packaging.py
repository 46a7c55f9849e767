"""The ways to install stay one: pyproject.toml's core and extras, environment.yml, and what each
module of tinyinit imports. The core (`pip install tinyinit`) is what the initializers, the
numerics and the figures need; `lab`, `present` and `test` add the rest."""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
import textwrap
from importlib.metadata import PackageNotFoundError, packages_distributions
from importlib.metadata import requires as _metadata_requires
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CORE = PROJECT["dependencies"]
EXTRAS = PROJECT["optional-dependencies"]
# Runtime dependencies that conda-forge does not package under their PyPI name
# (conda-forge's zlib-ng is the C library; the Python binding is another name).
PYPI_ONLY = {"fontawesomefree", "zlib-ng"}
# What the core install must not bring in, however deep.
NOT_IN_CORE = {"ipywidgets", "ipympl", "ipython", "ipykernel", "jupyterlab", "voila", "notebook"}


def _split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-\[\],]+)\s*(.*)", requirement).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def _included(extra: str) -> list[str]:
    """The extras that `extra` names through tinyinit[...] (test holds lab and present)."""
    names = []
    for requirement in EXTRAS[extra]:
        if m := re.fullmatch(r"tinyinit\[([a-z,]+)\]", requirement):
            names += m.group(1).split(",")
    return names


def _requirements(extra: str | None) -> list[str]:
    """What `pip install tinyinit[extra]` asks for (the core for None), self-references resolved."""
    if extra is None:
        return list(CORE)
    own = [r for r in EXTRAS[extra] if not r.startswith("tinyinit[")]
    return _requirements(None) + own + [r for e in _included(extra) for r in _requirements(e)]


def _requires(name: str) -> list[str]:
    try:
        return _metadata_requires(name) or []
    except PackageNotFoundError:  # a requirement for another platform is not installed here
        return []


def _reachable(requirements: list[str]) -> set[str]:
    """The distributions that installing `requirements` brings in, however deep (as installed)."""
    listed = {_split(r)[0] for r in requirements}
    reachable, todo = set(listed), list(listed)
    while todo:
        for requirement in _requires(todo.pop()):
            name = _split(requirement)[0]
            if "extra ==" not in requirement and name not in reachable:
                reachable.add(name)
                todo.append(name)
    return reachable


# --- pyproject.toml and environment.yml -----------------------------------------------------


def test_environment_yml_is_the_core_with_lab_and_present():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))

    wanted = dict(_split(r) for r in _requirements("lab") + _requirements("present"))
    listed = dict(_split(d) for d in conda if not d.startswith(("python", "pip")))
    # What conda-forge lacks comes from PyPI, in the pip section, before tinyinit itself.
    from_pypi = dict(_split(d) for d in pip[:-1])
    assert set(from_pypi) == PYPI_ONLY
    assert {**listed, **from_pypi} == wanted and not set(listed) & set(from_pypi)
    assert env["channels"] == ["conda-forge"]
    python = next(d for d in conda if _split(d)[0] == "python")
    assert _split(python)[1] == PROJECT["requires-python"]
    assert pip[-1] == "-e .[lab,present]"


def test_a_package_in_two_sets_carries_one_pin():
    # Pinned once in spirit: an upper bound added to ipywidgets in lab must be added in present.
    pins: dict[str, dict[str, str]] = {}
    for where, requirements in [("core", CORE), *EXTRAS.items()]:
        for requirement in requirements:
            name, spec = _split(requirement)
            pins.setdefault(name, {})[where] = spec
    differ = {name: by for name, by in pins.items() if len(set(by.values())) > 1}
    assert not differ, f"one package, two pins: {differ}"


def test_the_test_extra_holds_lab_and_present():
    assert _included("test") == ["lab", "present"]
    assert not _included("lab") and not _included("present")
    assert {_split(r)[0] for r in _requirements("lab") + _requirements("present")} <= {
        _split(r)[0] for r in _requirements("test")
    }


def test_the_core_brings_no_jupyter():
    core = _reachable(CORE)
    assert core >= {"numpy", "matplotlib"}
    assert not core & NOT_IN_CORE, f"the core install would bring {core & NOT_IN_CORE}"
    assert {"ipywidgets", "jupyterlab"} <= _reachable(_requirements("lab"))
    assert {"voila", "ipywidgets", "anywidget"} <= _reachable(_requirements("present"))
    assert "jupyterlab" not in {_split(r)[0] for r in _requirements("present")}


def _make_rules() -> dict[str, list[str]]:
    """target -> prerequisites, from the Makefile's rule lines (not its variables)."""
    rules = {}
    for line in (ROOT / "Makefile").read_text().splitlines():
        if m := re.match(r"^([^\s:=#][^:=]*):(?![:=])\s*([^;]*)", line):
            for target in m.group(1).split():
                rules[target] = m.group(2).split()
    return rules


def test_each_make_target_installs_the_set_it_needs():
    rules = _make_rules()
    stamps = re.search(r"^STAMPS := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    defined = set(stamps.split()) | {t for t in rules if t.startswith("$(VENV)/.")}
    assert set(stamps.split()) == {f"$(VENV)/.{s}" for s in ("core", "lab", "present", "test")}
    needs = {"lab": "lab", "present": "present", "test": "test", "unit": "test", "site": "test"}
    # the student edition is made with nbformat and opened in JupyterLab
    needs |= {t: "lab" for t in rules if t.startswith("student")}
    for target, extra in needs.items():
        assert f"$(VENV)/.{extra}" in rules[target], f"make {target} should install {extra}"
    for target, prerequisites in rules.items():
        for stamp in (p for p in prerequisites if p.startswith("$(VENV)/.") and "%" not in p):
            assert stamp in defined, f"make {target} needs {stamp}, which no rule makes"


def _installs(target: str, venv: Path) -> list[list[str]]:
    """What `make target` would install, from a clone with no venv yet: the arguments of each
    pip_install in `make -n`'s commands, as the shell would split them."""
    run = subprocess.run(
        ["make", "-n", target, f"VENV={venv}", "MUTATION_CHILDREN=1"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    installs = []
    for line in run.stdout.splitlines():
        if "/uv pip install " not in line:
            continue
        # uv first, pip where uv cannot be had: both must be asked for the same thing
        m = re.search(r"/uv pip install --quiet --compile-bytecode --python \S+ (.*?)"
                      r" \|\| \S+ -m pip install --quiet (.*)$", line)  # fmt: skip
        assert m, f"make {target}: an install line of another form: {line}"
        try:
            by_uv, by_pip = (shlex.split(part) for part in m.groups())
        except ValueError as error:  # an unclosed quote: an argument cut at a comma
            raise AssertionError(f"make {target}: {error} in {line}") from None
        assert by_uv == by_pip, line
        installs.append(by_uv)
    return installs


@pytest.mark.parametrize(
    "target, extras", [("bench-classroom", "test,classroom"), ("mutation", "test,mutation")]
)
def test_make_installs_each_set_of_extras_whole(target, extras, tmp_path):
    # A comma in a $(call ...) argument splits it: `.[test,classroom]` became `.[test` and
    # the rest of the line, on a fresh clone, before anything was measured.
    installs = _installs(target, tmp_path / "venv")
    assert installs[-1] == ["-e", f".[{extras}]"], installs
    for arguments in installs:
        for extra in re.findall(r"^\.\[(.*)\]$", arguments[-1]):
            assert set(extra.split(",")) <= set(EXTRAS), f"make {target}: no extra {extra}"


# --- what each module imports ---------------------------------------------------------------


def _extra_of(node: ast.With) -> str | None:
    """ "lab" for `with extra("lab", ...):`, else None."""
    for item in node.items:
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "extra"
            and isinstance(call.args[0], ast.Constant)
        ):
            return call.args[0].value
    return None


def _catches_import_error(node: ast.Try) -> bool:
    names = {"ImportError", "ModuleNotFoundError"}
    return any(
        isinstance(h.type, ast.Name)
        and h.type.id in names
        or isinstance(h.type, ast.Tuple)
        and {getattr(e, "id", "") for e in h.type.elts} & names
        for h in node.handlers
    )


def _imports(tree: ast.Module) -> list[tuple[str, str | None]]:
    """(top-level module, where) for each third-party import: where is the extra of the
    enclosing `with extra(...)`, "optional" inside a try that catches ImportError, else None."""
    found = []

    def visit(node, where):
        if isinstance(node, ast.Import):
            found.extend((alias.name.split(".")[0], where) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], where))
        if isinstance(node, ast.With) and _extra_of(node):
            where = _extra_of(node)
        elif isinstance(node, ast.Try) and _catches_import_error(node):
            for child in node.body:
                visit(child, "optional")
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, where)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(tree, None)
    stdlib = sys.stdlib_module_names | {"__future__", "tinyinit"}
    return [(module, where) for module, where in found if module not in stdlib]


def _is_a_layer(init: Path) -> bool:
    """A subpackage whose __init__ is its docstring alone: a folder of modules."""
    body = ast.parse(init.read_text(encoding="utf-8")).body
    return len(body) == 1 and isinstance(body[0], ast.Expr)


def _modules() -> dict[str, tuple[str | None, list[tuple[str, str | None]]]]:
    """name -> (the extra the module needs, from a `with extra(...)` in its body, or None for a
    core module; its third-party imports). A layer (tinyinit.core, tinyinit.views, ...: an
    __init__ that only says what it holds) is its modules, each on its own; another subpackage
    (tinyinit.present) counts as one module: its __init__ says what it needs, since importing
    any of its modules runs that first."""
    modules = {}
    layers = [i.parent for i in (ROOT / "tinyinit").glob("*/__init__.py") if _is_a_layer(i)]
    for path in sorted(
        [*(ROOT / "tinyinit").glob("*.py"), *(p for d in layers for p in d.glob("[!_]*.py"))]
    ):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        needs = next((_extra_of(n) for n in tree.body if isinstance(n, ast.With)), None)
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if path.stem == "__init__" else parts)
        modules[name] = (needs, _imports(tree))
    for init in sorted((ROOT / "tinyinit").glob("*/__init__.py")):
        if init.parent in layers:
            continue
        trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(init.parent.glob("*.py"))]
        body = ast.parse(init.read_text(encoding="utf-8")).body
        needs = next((_extra_of(n) for n in body if isinstance(n, ast.With)), None)
        modules[f"tinyinit.{init.parent.name}"] = (needs, [i for t in trees for i in _imports(t)])
    return modules


CORE_MODULES = sorted(name for name, (needs, _) in _modules().items() if needs is None)


def test_the_widget_layer_and_the_student_edition_alone_need_an_extra():
    needs = {name: extra for name, (extra, _) in _modules().items() if extra}
    assert needs == {
        "tinyinit.course.student_edition": "lab",  # reads and writes notebooks (nbformat)
        "tinyinit.views.a11y": "lab",
        "tinyinit.views.explorers": "lab",
        "tinyinit.views.live_training": "lab",
        "tinyinit.present": "present",
    }
    assert {
        "tinyinit",
        "tinyinit.cli",
        "tinyinit.views.plots",
        "tinyinit.views.figures",
        "tinyinit.views.style",
        "tinyinit.core.init",
    } <= set(CORE_MODULES)


def test_each_import_comes_with_the_set_its_module_needs():
    # A fresh venv, Binder or JupyterHub image has only what pyproject/environment.yml bring in:
    # a core module's imports come with the core, an import inside `with extra("lab", ...)` (or
    # in a module that needs lab) with the core and lab.
    providers = packages_distributions()
    for name, (needs, imports) in _modules().items():
        for module, where in imports:
            # tried with a fallback (the quiz's widgets): some set must still bring it
            extra = "test" if where == "optional" else (where or needs)
            assert extra is None or extra in EXTRAS, f"{name}: no extra {extra!r}"
            reachable = _reachable(_requirements(extra))
            dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            assert dists, f"{name} imports {module}, which no installed package provides"
            assert dists & reachable, (
                f"{name} imports {module} ({', '.join(dists)}), which "
                f"{'the core' if extra is None else f'tinyinit[{extra}]'} does not install: "
                f"list it in pyproject.toml or import it inside `with extra(...)`"
            )


def test_the_package_names_in_the_errors_are_the_installed_ones():
    from tinyinit._extras import EXTRAS as NAMED
    from tinyinit._extras import PACKAGES

    providers = packages_distributions()
    for module, package in PACKAGES.items():
        assert package in providers[module]
    assert set(NAMED) <= set(EXTRAS)


# --- the core alone: the other packages hidden from one Python --------------------------------

HIDE = """
import importlib.abc, sys

HIDDEN = set(sys.argv[1].split(","))


class NotInstalled(importlib.abc.MetaPathFinder):
    # A package outside the core install, as if it were not there.
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NotInstalled())
"""


ERROR_OF = """
import contextlib, importlib, io

def error(call):
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            call()
    except ImportError as e:
        return f"{type(e).__name__}: {e}"
    except SystemExit as e:
        return f"exit {e.code}: {stderr.getvalue().strip()}"
    return "no error"
"""


def _run_with_the_core_alone(code: str, tmp_path: Path) -> dict:
    """Run `code` in a fresh Python that sees only the core's packages; return its `out` dict."""
    core = _reachable(CORE) | {"tinyinit"}
    hidden = {
        module
        for module, dists in packages_distributions().items()
        if not {d.lower().replace("_", "-") for d in dists} & core
    }
    script = HIDE + ERROR_OF + "out = {}\n" + textwrap.dedent(code) + "\nprint(json.dumps(out))\n"
    run = subprocess.run(
        [sys.executable, "-c", "import json\n" + script, ",".join(sorted(hidden))],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def _error(call) -> str:
    """The message of the error `call()` raises."""
    try:
        call()
    except (ImportError, SystemExit) as error:
        return str(error)
    raise AssertionError(f"{call} raised nothing")


def test_the_core_alone_imports_the_api_and_draws_the_figure(tmp_path):
    out = _run_with_the_core_alone(
        f"""
        import importlib
        for name in {CORE_MODULES!r}:
            importlib.import_module(name)
        import tinyinit
        from tinyinit import *  # the top-level API: generator, distributions, initializers
        out["api"] = sorted(tinyinit.__all__)
        out["kaiming"] = kaiming_normal((4, 3), "fan_in", "relu", PCG32(0)).tolist()
        from tinyinit.cli import main
        out["exit"] = main(["figure", "--n-layers", "3", "--width", "8", "--seeds", "2",
                            "-o", "depth.png"])
        out["png"] = open("depth.png", "rb").read(8).hex()
        out["ipywidgets"] = error(lambda: importlib.import_module("ipywidgets"))
        """,
        tmp_path,
    )
    import tinyinit
    from tinyinit import PCG32, kaiming_normal

    assert out["api"] == sorted(tinyinit.__all__)
    assert out["kaiming"] == kaiming_normal((4, 3), "fan_in", "relu", PCG32(0)).tolist()
    assert out["exit"] == 0 and bytes.fromhex(out["png"]) == b"\x89PNG\r\n\x1a\n"
    assert out["ipywidgets"] == "ModuleNotFoundError: No module named 'ipywidgets'"


def test_without_the_extras_the_widgets_say_which_extra_to_install(tmp_path):
    out = _run_with_the_core_alone(
        """
        from tinyinit.networks import digits
        from tinyinit.views import figures
        from tinyinit.cli import main
        out["explorer"] = error(lambda: importlib.import_module("tinyinit.views.explorers"))
        out["present"] = error(lambda: importlib.import_module("tinyinit.present"))
        out["digits"] = error(digits.load_digits_split)
        out["show"] = error(lambda: figures.show(None, "a figure that shows nothing at all"))
        out["cli"] = error(lambda: main(["present", "--no-browser"]))
        out["share"] = error(lambda: main(["present", "--share-url", "https://hub.example/"]))
        """,
        tmp_path,
    )
    lab, present = "pip install 'tinyinit[lab]'", "pip install 'tinyinit[present]'"
    assert out["explorer"] == f"ModuleNotFoundError: the explorer needs ipywidgets: {lab}"
    assert out["present"] == f"ModuleNotFoundError: the presentation app needs anywidget: {present}"
    assert out["digits"] == f"ModuleNotFoundError: load_digits_split needs scikit-learn: {lab}"
    assert out["show"] == f"ModuleNotFoundError: figures.show needs ipython: {lab}"
    assert out["cli"] == (
        f"exit 2: python -m tinyinit present: error: the presentation app needs anywidget: "
        f"{present}"
    )
    assert out["share"] == (
        f"exit 2: python -m tinyinit present: error: argument --share-url: the presentation app "
        f"needs anywidget: {present}"
    )


@pytest.mark.parametrize("broken", ["ModuleNotFoundError", "ImportError"])
def test_extra_rewords_only_a_missing_module(broken):
    from tinyinit._extras import extra

    def fail():
        with extra("lab", "the explorer"):
            if broken == "ModuleNotFoundError":
                raise ModuleNotFoundError("No module named 'comm'", name="comm")
            raise ImportError("cannot import name 'Widget' from 'ipywidgets'")

    message = _error(fail)
    if broken == "ModuleNotFoundError":  # a dependency of a dependency: the same extra brings it
        assert message == "the explorer needs comm: pip install 'tinyinit[lab]'"
    else:  # installed but broken: its own error, not a wrong hint
        assert message == "cannot import name 'Widget' from 'ipywidgets'"
    with pytest.raises(ValueError, match="extra must be one of lab, present, got 'labs'"):
        with extra("labs", "the explorer"):
            pass


# --- what a start costs ---------------------------------------------------------------------


def test_the_installed_packages_come_with_their_bytecode():
    # Every kernel imports matplotlib and ipykernel, every Jupyter server jupyter_server: without
    # their compiled bytecode a Python that may not write it (PYTHONDONTWRITEBYTECODE, a
    # read-only install) compiles them at each start, 2.7 times a kernel's import CPU
    # (benchmarks/bench_startup.py). pip and conda compile at install; `make` has uv do it too.
    import importlib.util

    import ipykernel.kernelapp
    import jupyter_server.serverapp
    import matplotlib.pyplot

    for module in (matplotlib.pyplot, ipykernel.kernelapp, jupyter_server.serverapp):
        cached = Path(importlib.util.cache_from_source(module.__file__))
        assert cached.is_file(), f"{module.__name__} has no bytecode at {cached}: install with " \
            "pip, or uv pip install --compile-bytecode (as the Makefile does)"  # fmt: skip


def test_a_jupyter_server_does_not_build_iri_parsers_at_its_start():
    # jsonschema 4.25 and later import rfc3987-syntax, which builds Earley parsers at import
    # (1.7 s of CPU); pyproject.toml keeps jsonschema below that, in lab and present.
    code = (
        "import sys, jupyter_server.serverapp, nbformat.validator; "
        "print([name in sys.modules for name in ('jsonschema', 'rfc3987_syntax')])"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[True,", "False]"], f"jsonschema, rfc3987_syntax: {run.stdout}"


# --- the frontends --------------------------------------------------------------------------


def test_widget_frontends_ship_as_prebuilt_lab_extensions():
    # ipywidgets' and ipympl's browser halves come inside their pip/conda packages
    # (no `jupyter labextension install`, no Node): JupyterLab and Voila find them.
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


def test_make_mutation_runs_each_mutated_module_s_own_tests():
    # mutmut runs only the selected test files on a mutant: a module whose own test file
    # is left out would have its mutants survive for want of a test.
    mutmut = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    selected = set(mutmut["pytest_add_cli_args_test_selection"])
    assert all((ROOT / path).is_file() for path in selected)
    for module in mutmut["only_mutate"]:
        own = f"tests/{Path(module).parent.name}/test_{Path(module).stem}.py"  # tests/ mirrors it
        assert not (ROOT / own).is_file() or own in selected, f"{own} tests {module}"
