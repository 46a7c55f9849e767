"""Help where it is needed: every public function and class says what it computes and shows how,
and every control of the apps explains itself on hover.

Public means: a name in tinyinit.__all__, or in the __all__ of a tinyinit module.
Each needs a docstring that opens with a description (the formula, or what it
does) and holds at least one `>>>` example, which `make test` runs as a doctest.

KNOWN_GAPS lists what is missing today, as expected failures: the list is the
to-do. When an entry gets its docstring, its test passes unexpectedly and fails
the run (strict xfail): remove the entry then.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import ipywidgets as widgets
import pytest

import tinyinit

ROOT = Path(__file__).resolve().parent.parent

# name -> what is missing (kept short: these are reminders, not excuses)
KNOWN_GAPS: dict[str, str] = {}

# Widgets that show a picture rather than a value or an action: nothing to hover.
PICTURES = (widgets.Image, widgets.Output)


def public_objects() -> dict[str, object]:
    """Every public function and class, by the name a user imports it under."""
    found = {f"tinyinit.{name}": getattr(tinyinit, name) for name in tinyinit.__all__}
    for module_info in pkgutil.walk_packages(tinyinit.__path__, "tinyinit."):
        if any(part.startswith("_") for part in module_info.name.split(".")):
            continue
        if module_info.name.startswith("tinyinit.present."):
            continue  # the presentation app's parts: tinyinit.present gathers what is public
        module = importlib.import_module(module_info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if any(obj is seen for seen in found.values()):
                continue  # exported from the package too: checked once, under that name
            found[f"{module_info.name}.{name}"] = obj
    return {k: v for k, v in found.items() if inspect.isfunction(v) or inspect.isclass(v)}


PUBLIC = public_objects()


def _params():
    for name in sorted(PUBLIC):
        marks = []
        if name in KNOWN_GAPS:
            marks.append(
                pytest.mark.xfail(
                    strict=True,
                    reason=f"known gap: {KNOWN_GAPS[name]}; remove it from KNOWN_GAPS once fixed",
                )
            )
        yield pytest.param(name, marks=marks, id=name)


def test_every_public_name_exists():
    for name in tinyinit.__all__:
        assert hasattr(tinyinit, name), f"tinyinit.__all__ lists {name!r}, which is not there"
    assert len(PUBLIC) >= 10


@pytest.mark.parametrize("name", list(_params()))
def test_public_api_has_a_description_and_an_example(name):
    doc = inspect.getdoc(PUBLIC[name]) or ""
    summary = doc.strip().split("\n\n")[0]
    assert len(summary.split()) >= 4, f"{name}: the docstring should open with what it computes"
    assert ">>>" in doc, f"{name}: the docstring needs a runnable >>> example"


def test_known_gaps_are_still_public():
    # A gap whose name went away is a stale entry, not a fixed one.
    assert set(KNOWN_GAPS) <= set(PUBLIC), set(KNOWN_GAPS) - set(PUBLIC)


# --- tooltips: every control and readout of the apps says what it is ------------------------


def widget_tree(root):
    yield root
    for child in getattr(root, "children", ()) or ():
        yield from widget_tree(child)


def needs_tooltip(w) -> bool:
    """Controls (sliders, dropdowns, buttons) and readouts: what a user operates or reads."""
    if isinstance(w, PICTURES) or w.layout.display == "none":
        return False
    return isinstance(w, (widgets.ValueWidget, widgets.Button))


def has_tooltip(w) -> bool:
    if w.tooltip:
        return True
    # Toggle buttons may instead explain each option on its own button.
    tips = getattr(w, "tooltips", None)
    return bool(tips) and len(tips) == len(w.options) and all(tips)


def describe(w) -> str:
    label = getattr(w, "description", "") or " ".join(w._dom_classes) or "(unlabelled)"
    return f"{type(w).__name__} {label!r}"


def app_widgets():
    from tinyinit import PCG32
    from tinyinit.course.quiz import predict, predict_number
    from tinyinit.physics.residual import draw_residual_stack
    from tinyinit.present import presentation
    from tinyinit.views.explorers import ResidualStreamExplorer, depth_explorer

    residual = ResidualStreamExplorer(draw_residual_stack(4, 16, 16, 8, PCG32(0)), n_layers=2)
    return {
        "depth explorer": depth_explorer(n_layers=3, width=16, seeds=1).app,
        "residual explorer": residual.app,
        "presentation": presentation().app,
        "predict, then run": predict("Is 7 prime?", ["yes", "no"]).widget,
        "predict a number": predict_number("7 squared?", rel_tol=0.1).widget,
    }


KNOWN_TOOLTIP_GAPS: set[tuple[str, str]] = set()


@pytest.fixture(scope="module")
def apps():
    return app_widgets()


def test_every_control_and_readout_has_a_tooltip(apps):
    missing = set()
    for app_name, root in apps.items():
        for w in widget_tree(root):
            if needs_tooltip(w) and not has_tooltip(w):
                missing.add((app_name, describe(w)))
    # The presentation holds the explorers: their gaps show up there too.
    own = {m for m in missing if m[0] != "presentation"}
    via_presentation = {("presentation", d) for _, d in KNOWN_TOOLTIP_GAPS}
    assert own - KNOWN_TOOLTIP_GAPS == set(), "controls without a tooltip"
    assert {m for m in missing if m[0] == "presentation"} <= via_presentation
    if KNOWN_TOOLTIP_GAPS - own:
        pytest.fail(f"fixed, remove from KNOWN_TOOLTIP_GAPS: {KNOWN_TOOLTIP_GAPS - own}")


def test_presentation_controls_all_have_tooltips(apps):
    from tinyinit.present import PRESETS, Presentation

    app = Presentation()
    app.choose("tanh: gain 1 vs 5/3")
    own = [app.preset, app.step, app.says]
    assert all(has_tooltip(w) for w in own), [describe(w) for w in own if not has_tooltip(w)]
    assert list(app.step.tooltips) == [s.says for s in PRESETS[app.preset.value].steps]


# --- the launch links point at what is there; the demonstrations are listed in order --------


def test_readme_launch_links_point_at_files_that_exist():
    import os

    root = ROOT
    readme = (root / "README.md").read_text(encoding="utf-8")
    # The students' badge, once the repository is published (make binder-badge prints it;
    # tests/test_site.py holds the README to no placeholder), opens what postBuild writes.
    for badge in re.findall(r"\]\((https://mybinder\.org/v2/gh/[^)]+)\)", readme):
        assert badge.endswith("?urlpath=lab/tree/student"), badge
    assert (root / "notebooks" / "01_variance_of_a_sum.ipynb").is_file()
    assert (root / "environment.yml").is_file()
    post_build = (root / "postBuild").read_text(encoding="utf-8")
    assert "scripts/make_student.py --output student" in post_build
    assert os.access(root / "postBuild", os.X_OK)
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    opened = [
        (page, path)
        for page in pages
        for path in re.findall(r"voila/render/(?:tinyinit/)?([\w/]+\.ipynb)", page.read_text())
    ]
    assert opened, "no page says where the presentation app opens"
    for page, path in opened:
        assert (root / path).is_file(), f"{page.name} opens {path}, which does not exist"


def test_the_presentation_page_lists_the_demonstrations_in_the_clickers_order():
    """A presenter reads the table to know what the next PageDown brings."""
    from tinyinit.present import PRESETS

    page = ROOT / "docs" / "teaching" / "presentation.md"
    text = page.read_text(encoding="utf-8")
    table = text.split("| demonstration | what the class sees |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+) \|$", table, flags=re.M)[1:]  # after the rule
    assert [name for name, _ in rows] == list(PRESETS)
    for name, sees in rows:
        steps = len(PRESETS[name].steps)
        assert sees.startswith("two steps") == (steps == 2), f"{name}: {steps} steps"


# --- the README and the pages of docs/: their links and the paths they name -----------------

DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# The architecture page describes the package's folders (tinyinit/core/, physics/, ...) as the
# reorganization makes them: its paths in the package and in tests/ are checked once it has.
LAYOUT_PAGE = ROOT / "docs" / "developing" / "architecture.md"
LAYOUT_LANDED = (ROOT / "tinyinit" / "core").is_dir()
# A code span naming something in the repository starts with one of these.
REPOSITORY = ("tinyinit/", "tests/", "scripts/", "benchmarks/", "docs/", "notebooks/", "apps/",
              "site_src/", "reference/", ".ci/", "postBuild", "environment.yml",
              "pyproject.toml", "Makefile", "LICENSE")  # fmt: skip
LINK = re.compile(r"\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")


def prose(text: str) -> str:
    """The page without its fenced code blocks (commands and examples, not references)."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def links(path: Path) -> list[str]:
    return LINK.findall(prose(path.read_text(encoding="utf-8")))


def named_paths(path: Path) -> list[str]:
    """The repository paths a page names in its code spans: `tinyinit/core/init.py`, `Makefile`.
    Placeholders (NN_topic, <assignment>) and patterns (*.ipynb) are not paths."""
    spans = SPAN.findall(prose(path.read_text(encoding="utf-8")))
    return [
        span
        for span in spans
        if span.startswith(REPOSITORY) and not re.search(r"[\s*<>]|NN_|\.\.\.", span)
    ]


def test_the_readme_links_every_page_of_docs():
    linked = {(ROOT / unquote(urlsplit(t).path)).resolve() for t in links(ROOT / "README.md")}
    assert {"docs/spec.md", "docs/developing/architecture.md"} <= {page_id(p) for p in DOC_PAGES}
    assert [page_id(p) for p in DOC_PAGES[1:] if p.resolve() not in linked] == []


@pytest.mark.parametrize("page", DOC_PAGES, ids=page_id)
def test_relative_links_resolve(page):
    for target in links(page):
        url = urlsplit(target)
        if url.scheme or target.startswith("#"):
            continue
        assert (page.parent / unquote(url.path)).exists(), f"{page_id(page)} links to {target}"


@pytest.mark.parametrize("page", DOC_PAGES, ids=page_id)
def test_web_links_are_well_formed(page):
    for target in links(page):
        url = urlsplit(target)
        if not url.scheme:
            continue
        assert url.scheme in ("http", "https") and "." in url.netloc, (
            f"{page_id(page)}: {target} is no web address"
        )


@pytest.mark.parametrize("page", DOC_PAGES, ids=page_id)
def test_the_repository_paths_a_page_names_exist(page):
    missing = []
    for name in named_paths(page):
        waits = page == LAYOUT_PAGE and not LAYOUT_LANDED
        if waits and name.startswith(("tinyinit/", "tests/")):
            continue
        if not (ROOT / name).exists():
            missing.append(name)
    assert not missing, f"{page_id(page)} names paths that are not there: {missing}"


def test_the_path_check_sees_a_path_that_is_not_there(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "`tinyinit/no_such_module.py`, `notebooks/NN_topic.ipynb`, `notebooks/*.ipynb`\n"
        "```bash\ncat tinyinit/also_missing.py\n```\n[a link](no_such_page.md)\n",
        encoding="utf-8",
    )
    assert named_paths(page) == ["tinyinit/no_such_module.py"]
    assert links(page) == ["no_such_page.md"]
