"""The package's shape: its imports form no cycle, its modules sit in layers with a short top
level, no module takes a name another module keeps private, only
tinyinit/views/browser_transport.py touches another package's private attributes, and no public
name is there for the tests alone.

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
    assert "tinyinit" not in GRAPH["tinyinit.core.distributions"]  # its own package: not an edge
    assert "tinyinit.core.arguments" in GRAPH["tinyinit.core.init"]
    assert "tinyinit.core.libm" in GRAPH["tinyinit.core.distributions"]  # from . import libm
    assert "tinyinit.course.catalog" in GRAPH["tinyinit.cli"]  # inside a function
    assert "tinyinit.views.explorers" in GRAPH["tinyinit.present.explorers"]  # from ..explorer


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
    "name", [name for name in MODULES if name != "tinyinit.views.browser_transport"], ids=str
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
    "tinyinit.core.distributions.box_muller": "normal's blocks run _box_muller",
    "tinyinit.core.activations.gelu_slope": "the activations table's phi' is _gelu_slope",
    "tinyinit.core.activations.silu_slope": "the activations table's phi' is _silu_slope",
    "tinyinit.physics.propagation.backward_values": "simulate runs _backward on the weights it "
    "drew itself",
    "tinyinit.physics.variance.draw_inputs": "sample_sums draws with _inputs, naming its own "
    "argument",
    "tinyinit.networks.normalization.batch_norm_eval": "the MLP's layers in evaluation run "
    "batch_norm_eval_unchecked",
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


# --- the layers: a short top level, and no module reads another's private names --------------

# The folders that show the architecture (core, physics, networks, course, views, present);
# at the top only what belongs to the whole: the public surface, the command line and the like.
MAX_TOP_LEVEL_MODULES = 12


def test_the_package_keeps_its_modules_in_layers_not_at_its_top():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} modules at tinyinit's top: {top}"


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names_taken(name: str, path: Path) -> list[tuple[int, str]]:
    """(line, what) of every private name module `name` takes from another tinyinit module:
    `from .other import _name`, or `other._name` where `other` names a module it imported."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, modules = [], {}  # modules: a local name -> the tinyinit module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    modules[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif base in MODULES and base != name and is_private(alias.name):
                    found.append((node.lineno, f"{base}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in MODULES:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            value = node.value
            if isinstance(value, ast.Name) and modules.get(value.id, name) != name:
                found.append((node.lineno, f"{modules[value.id]}.{node.attr}"))
            elif isinstance(value, ast.Attribute):  # tinyinit.core.init._name, spelled whole
                dotted = ast.unparse(value)
                if dotted in MODULES and dotted != name:
                    found.append((node.lineno, f"{dotted}.{node.attr}"))
    return sorted(found)


@pytest.mark.parametrize("name", list(MODULES), ids=str)
def test_no_module_takes_a_name_another_module_keeps_private(name):
    taken = private_names_taken(name, MODULES[name])
    assert not taken, f"{name} uses private names of other modules (make them public): {taken}"


def test_the_private_name_scan_sees_both_spellings_and_not_a_modules_own(tmp_path):
    path = tmp_path / "x.py"
    path.write_text(
        "from . import init\nfrom .init import _check, fans\nfrom .x import _own\n"
        "init._draw()\nimport tinyinit.core.init\ntinyinit.core.init._gain\n"
    )
    assert private_names_taken("tinyinit.core.x", path) == [
        (2, "tinyinit.core.init._check"),
        (4, "tinyinit.core.init._draw"),
        (6, "tinyinit.core.init._gain"),
    ]


def public_definitions() -> dict[str, list[str]]:
    """Each public name a module of the package defines at its top (not imports), and where."""
    found: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                names = []
            for public in (n for n in names if not n.startswith("_")):
                found.setdefault(public, []).append(name)
    return found


# Public names two modules still define for two things, each to be renamed so that a name
# says which it is; the list only shrinks.
TWICE_STILL: set[str] = set()


def test_no_new_public_name_is_defined_in_two_modules():
    twice = {name for name, where in public_definitions().items() if len(where) > 1}
    assert twice - TWICE_STILL == set(), {n: public_definitions()[n] for n in twice - TWICE_STILL}
    assert TWICE_STILL - twice == set(), "renamed already: take it off TWICE_STILL"
