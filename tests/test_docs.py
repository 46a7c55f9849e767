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

import ipywidgets as widgets
import pytest

import tinyinit

# name -> what is missing (kept short: these are reminders, not excuses)
KNOWN_GAPS: dict[str, str] = {}

# Widgets that show a picture rather than a value or an action: nothing to hover.
PICTURES = (widgets.Image, widgets.Output)


def public_objects() -> dict[str, object]:
    """Every public function and class, by the name a user imports it under."""
    found = {f"tinyinit.{name}": getattr(tinyinit, name) for name in tinyinit.__all__}
    for module_info in pkgutil.iter_modules(tinyinit.__path__):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"tinyinit.{module_info.name}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if any(obj is seen for seen in found.values()):
                continue  # exported from the package too: checked once, under that name
            found[f"tinyinit.{module_info.name}.{name}"] = obj
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
    from tinyinit.explorer import ResidualStreamExplorer, depth_explorer
    from tinyinit.present import presentation
    from tinyinit.quiz import predict, predict_number
    from tinyinit.residual import draw_residual_stack

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


# --- the launch links in the README point at what is there ----------------------------------


def test_readme_launch_links_point_at_files_that_exist():
    import os
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    badge = re.search(
        r"\[!\[Binder[^]]*\]\([^)]*\)\]\((https://mybinder\.org/v2/gh/[^)]+)\)", readme
    )
    assert badge, "no Binder badge in README.md"
    # the students' badge opens the edition that postBuild writes on Binder
    assert badge.group(1).endswith("?urlpath=lab/tree/student/01_variance_of_a_sum.ipynb")
    assert (root / "notebooks" / "01_variance_of_a_sum.ipynb").is_file()
    assert (root / "environment.yml").is_file()
    post_build = (root / "postBuild").read_text(encoding="utf-8")
    assert "scripts/make_student.py --output student" in post_build
    assert os.access(root / "postBuild", os.X_OK)
    for path in re.findall(r"voila/render/(?:tinyinit/)?([\w/]+\.ipynb)", readme):
        assert (root / path).is_file(), f"README opens {path}, which does not exist"


def test_readme_lists_the_demonstrations_in_the_clickers_order():
    """A presenter reads the table to know what the next PageDown brings."""
    import re
    from pathlib import Path

    from tinyinit.present import PRESETS

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("| demonstration | what the class sees |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+) \|$", table, flags=re.M)[1:]  # after the rule
    assert [name for name, _ in rows] == list(PRESETS)
    for name, sees in rows:
        steps = len(PRESETS[name].steps)
        assert sees.startswith("two steps") == (steps == 2), f"{name}: {steps} steps"
