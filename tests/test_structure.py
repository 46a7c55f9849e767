"""The package's shape: its imports form no cycle, only tinyinit/transport.py touches another
package's private attributes, and no public name is there for the tests alone.

Both are read from the source (ast), not from a running import: an import inside a function
(made there to stay lazy) counts as much as one at the top.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tinyinit"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(name: str, path: Path) -> set[str]:
    """The tinyinit modules that module `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            # `from . import libm`: the names may be modules themselves
            found |= {f"{base}.{alias.name}" for alias in node.names}
    # A module's own packages are imported before it, whatever it says: not an edge back.
    ancestors = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)}
    return {module for module in found if module in MODULES and module not in ancestors | {name}}


GRAPH = {name: imported_modules(name, path) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in sorted(graph[node]):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_walk_sees_relative_lazy_and_package_imports():
    assert "tinyinit" not in GRAPH["tinyinit.distributions"]  # its own package: not an edge
    assert "tinyinit.checks" in GRAPH["tinyinit.init"]
    assert "tinyinit.libm" in GRAPH["tinyinit.distributions"]  # from . import libm
    assert "tinyinit.catalog" in GRAPH["tinyinit.cli"]  # inside a function
    assert "tinyinit.explorer" in GRAPH["tinyinit.present.explorers"]  # from ..explorer


def test_no_module_of_tinyinit_imports_itself_back_through_others():
    found = cycles(GRAPH)
    assert not found, f"import cycles: {found}"


# --- another package's private attributes: only in transport.py ------------------------------


# A named tuple's documented methods and attributes, public despite their underscore (which
# keeps them apart from the fields' names): collections.namedtuple's documentation.
NAMED_TUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


def private_attributes(source: str) -> list[tuple[int, str]]:
    """(line, attribute) of every `x._name` whose x is not self or cls (dunders and a named
    tuple's documented API left out)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in NAMED_TUPLE_API
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append((node.lineno, node.attr))
    return found


@functools.cache
def own_private_names() -> frozenset[str]:
    """Every _name tinyinit defines itself: as an attribute of self, a function or a class."""
    names = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith("_"):
                names.add(node.name)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(names)


@pytest.mark.parametrize(
    "name", [name for name in MODULES if name != "tinyinit.transport"], ids=str
)
def test_only_transport_reads_another_packages_private_attributes(name):
    own = own_private_names()
    source = MODULES[name].read_text(encoding="utf-8")
    foreign = [(line, attr) for line, attr in private_attributes(source) if attr not in own]
    assert not foreign, f"{name} reads private attributes of another package: {foreign}"


def test_the_private_attribute_scan_sees_a_foreign_one_and_not_our_own():
    source = "title = figure._suptitle\nself._pending = trace._source\n"
    assert private_attributes(source) == [(1, "_suptitle"), (2, "_source")]
    assert "_source" in own_private_names() and "_suptitle" not in own_private_names()


# --- no test-only code: every public name serves something besides the tests ----------------

ROOT = PACKAGE.parent
# What a user meets: the package itself, the notebooks, the scripts, benchmarks and apps, and the
# README and docs. Not tests/: a name only a test calls is test code shipped in the package.
USERS = [
    *PACKAGE.rglob("*.py"),
    *ROOT.glob("notebooks/*.ipynb"),
    *ROOT.glob("notebooks/*.py"),
    *ROOT.glob("scripts/*.py"),
    *ROOT.glob("benchmarks/*.py"),
    *ROOT.glob("apps/*.ipynb"),
    ROOT / "README.md",
    *ROOT.glob("docs/**/*.md"),
]


def read_in_code(tree: ast.AST) -> set[str]:
    """The names a module's code reads (a name or an attribute, not a docstring)."""
    return {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load))
        or isinstance(node, ast.Attribute)
    }


# A public door whose unchecked twin is what the package runs where speed matters (inside each
# block of a draw, each layer of a live explorer): the door is there for the reader.
DOORS = {
    "tinyinit.distributions.box_muller": "normal's blocks run _box_muller",
    "tinyinit.activations.gelu_slope": "the activations table's phi' is _gelu_slope",
    "tinyinit.activations.silu_slope": "the activations table's phi' is _silu_slope",
    "tinyinit.variance.draw_inputs": "sample_sums draws with _inputs, naming its own argument",
}


def test_every_public_name_is_used_by_something_other_than_the_tests():
    import importlib

    from test_every_argument import MODULES

    texts = {path: path.read_text(encoding="utf-8") for path in USERS}
    # A name is an identifier: it appears as a whole word (\bname\b) where a run of word
    # characters is exactly the name, so each file's set of such runs answers for every name.
    words = {path: set(re.findall(r"\w+", text)) for path, text in texts.items()}
    unused = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        own = MODULES_SOURCE[module_name]
        read = read_in_code(ast.parse(texts[own]))
        for name in module.__all__:
            if name in read:
                continue
            elsewhere = [path for path in texts if path != own and name in words[path]]
            if not elsewhere and f"{module_name}.{name}" not in DOORS:
                unused.append(f"{module_name}.{name}")
    assert not unused, f"public names only the tests use (test code in the package): {unused}"


MODULES_SOURCE = {name: path for name, path in MODULES.items()}
