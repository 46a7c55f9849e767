"""The student edition (`make student`) and the exercises' checks.

The exercises are discovered in notebooks/*.ipynb (an answer cell with nbgrader's solution
markers, then its `with Check("Exercise N"):` cell), so a new notebook is covered as soon as
it is there. What cannot be discovered is a *typical wrong answer* for each exercise, and the
words of the hint it must get: they are kept below, one per exercise, and an exercise without
one fails `test_every_exercise_has_a_typical_wrong_answer_here`.

The edition also speaks to a student: no teacher-only Markdown (cells tagged `teacher`), no
stored output that answers a prediction, and `my_init.py` with its solutions stubbed.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import mutants
import nbformat
import numpy as np
import pytest
from mutants import MUTANTS
from nbclient import NotebookClient
from scripts_loader import load_script

from tinyinit.course import student_edition

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCRIPT = ROOT / "scripts" / "make_student.py"
# The teacher's my_init.py: the seven functions a student writes, with their solutions.
MY_INIT = NOTEBOOKS / "my_init.py"
# What only a teacher should read: the edition is the teacher's copy, or how it was made.
TEACHER_ONLY = re.compile(r"teacher|make student\b|holds? the solutions?", re.IGNORECASE)


ms = load_script("make_student")
TEACHER = sorted(NOTEBOOKS.glob("*.ipynb"))
STEMS = [p.stem for p in TEACHER]
# The concept inventory's sittings (00, 04b) ask questions and grade nothing: no exercise.
SITTINGS = [stem for stem in STEMS if "_inventory_" in stem]
LESSONS = [stem for stem in STEMS if stem not in SITTINGS]

# notebook -> exercise -> (the solution region as a student might write it wrongly,
#                           words the hint it gets must contain)
WRONG_ANSWERS: dict[str, dict[str, tuple[str, str]]] = {
    "01_variance_of_a_sum": {
        "Exercise 1": ("scale = 0.05", "try a smaller scale"),
        "Exercise 2": (
            "w = std * normal(rng, n_samples * n).reshape(n_samples, n)\n"
            "x = normal(rng, n_samples * n).reshape(n_samples, n)\n"
            "z = (w * x).sum(axis=1)\n"
            "var_z = float(np.var(z))\n"
            "relu_ms = float(np.mean(np.maximum(z, 0) ** 2))",
            "inputs centred at 0",
        ),
    },
    "02_hand_example_4x3": {
        "Exercise 1": ("gain_squared = Fraction(7, 6)", "The ReLU keeps half of Var(z)"),
    },
    "03_signal_through_depth": {
        "Exercise 1": (
            "h, m = x, [np.mean(x**2)]\n"
            "for W in weights:\n"
            "    z = W @ h\n"
            "    h = phi(z)\n"
            "    m.append(np.mean(z**2))\n"
            "return np.array(m)",
            "the mean square of z = W @ h",
        ),
    },
    "04_does_it_train": {
        "Exercise 1": ("ratio_10 = 2 ** (-10 / 2)", "L - 1 ReLU layers"),
    },
    "05_gains_from_first_principles": {
        "Exercise 1": ("answer_1 = math.sqrt(2)", "ELU is not ReLU"),
        "Exercise 2": ("answer_2 = gain_for_fixed_point('tanh', 0.5)", "not the pre-activations'"),
        "Exercise 3": ("answer_3 = 8 / 24", "too small and must grow"),
    },
    "06_residual_stream": {
        "Exercise 1": ("answer_1 = 0.02 / math.sqrt(24)", "N blocks make 2N additions"),
        "Exercise 2": ("answer_2 = 100", "Each block adds two branches"),
        "Exercise 3": ("answer_3 = 1 + 12 * (1 / 12)", "12 blocks make 24 additions"),
    },
    "07_transformer_init": {
        "Exercise 1": ("answer_1 = math.sqrt(2 / 2048)", "He's fan_in is 512"),
        "Exercise 2": ("answer_2 = 2 / 0.01**2", "2 / (n + n) = 1 / n"),
        "Exercise 3": (
            "answer_3 = 4 * 64 * 0.02**2 * gelu_mean_square(2.0)",
            "0.02 / sqrt(2N), not 0.02",
        ),
    },
    "08_init_and_learning_rate": {
        "Exercise 1": ("answer_1 = 0.01 / math.sqrt(1024 / 64)", "not its root"),
        "Exercise 2": ("answer_2 = 1e-3 * 4096", "E|g| = sqrt(2/pi)"),
        "Exercise 3": (
            "after_one_step = []\n"
            "for width in (64, 256, 1024):\n"
            "    weights = init_mlp(16, width, 4, 'sp', PCG32(0), n_layers=3)\n"
            "    weights[-1] = np.zeros_like(weights[-1])\n"
            "    lrs = layer_learning_rates(0.01, 'sp', 'adam', n_layers=3, width=width,"
            " base_width=64)\n"
            "    after_one_step.append(train_regression(weights, x_task, t_task, lrs, 'adam', 1)"
            "[2][1, -1])\n"
            "answer_3 = max(after_one_step) / min(after_one_step)",
            "Under SP's learning rates",
        ),
    },
    "09_pitfalls_lab": {
        "Exercise 1": (
            "fan_in, fan_out = shape[1], shape[0]\n"
            "fan = fan_in if fan_mode == 'fan_in' else fan_out\n"
            "a = math.sqrt(3.0) * calculate_gain(nonlinearity) / math.sqrt(fan)\n"
            "w = -a + 2.0 * a * uniforms(rng, math.prod(shape))\n"
            "return w.astype(np.float32).reshape(shape)",
            "The kernel is forgotten",
        ),
        "Exercise 2": ("conv_default_bound = 1 / math.sqrt(3 * 16 * 9)", "That is the std"),
        "Exercise 3": ("trunc_sigma = 0.02", "lowers the std"),
    },
    "10_appendix_generator_bits": {
        "Exercise 1": (
            "answer_w0 = np.float32(-a + 2 * a * uniform_from_words(second_word, first_word))",
            "in the order they were drawn",
        ),
        "Exercise 2": ("answer_z1 = r * math.cos(2 * math.pi * u1)", "the sine of the same t"),
        "Exercise 3": ("answer_words = 12", "each uniform takes two words"),
    },
    "11_training_in_depth": {
        "Exercise 1": ("std_1 = math.sqrt(1 / 64)", "that is Xavier's std"),
        "Exercise 2": ("return constant_init(shape, 0.05)", "still all identical"),
        "Exercise 3": ("factor_3 = 64 * 0.02**2\nlayer_3 = 10", "the ReLU keeps only half"),
    },
    "12_one_layer_measured": {
        "Exercise 1": ("std_1 = 1 / math.sqrt(100)", "E[x^2] = Var(x) + E[x]^2"),
        "Exercise 2": ("var_z_fan_out = Fraction(2)", "still sums n_in = 3 products"),
        "Exercise 3": ("bound_3 = math.sqrt(2 / 300)", "That is the std"),
    },
    "13_when_init_stops_mattering": {
        "Exercise 1": ("grad_factor_1 = 3", "the gradient shrinks"),
        "Exercise 2": ("return W / np.var(h @ W.T)", "divide by its square root"),
        "Exercise 3": (
            "lr_3 = 1e-3 * grad_10 / np.linalg.norm(W10)",
            "The norms are the wrong way round",
        ),
    },
}


def teacher(stem: str):
    return nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)


# --- the edition itself ---------------------------------------------------------------------


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [Path(name) for name in listed if (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def make_student_run(tmp_path_factory) -> tuple[Path, str]:
    """`make student` run in a copy of the checkout (what git tracks, nothing built or ignored):
    the copy, and what it printed."""
    if shutil.which("make") is None or not (ROOT / ".git").exists():
        pytest.fail("`make` and a git checkout are needed to test `make student`")
    checkout = tmp_path_factory.mktemp("checkout")
    for name in tracked_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, checkout / name)
    assert not (checkout / "student").exists()
    venv = Path(sys.prefix)
    # -o: the venv this test runs in is taken as installed; never reinstall it from the copy.
    run = subprocess.run(
        ["make", "student", f"VENV={venv}", "-o", f"{venv}/.lab"],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return checkout, run.stdout


@pytest.fixture(scope="module")
def student(make_student_run) -> Path:
    return make_student_run[0] / "student"


def test_make_student_writes_one_notebook_per_notebook(student):
    assert sorted(p.name for p in student.glob("*.ipynb")) == sorted(p.name for p in TEACHER)


def test_make_student_says_how_to_open_it(make_student_run):
    out = make_student_run[1]
    assert "student notebooks" in out
    assert "make student-lab" in out and "student/" in out, out


def test_make_student_lab_opens_jupyterlab_on_the_student_edition():
    venv = Path(sys.prefix)
    dry = subprocess.run(
        ["make", "-n", "student-lab", f"VENV={venv}", "-o", f"{venv}/.lab"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dry.returncode == 0, dry.stderr
    assert re.search(
        r"cd student && \S+/jupyter lab --config=\S+jupyter_server_config.py", dry.stdout
    ), dry.stdout
    # it makes the edition only where there is none: a second call keeps the student's work
    assert re.search(r"test -d student \|\|", dry.stdout), dry.stdout


def test_readme_tells_teachers_which_folder_a_student_opens():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    teachers = readme.split("## For teachers", 1)[1].split("\n## ", 1)[0]
    for needed in ["make student", "make student-lab", "student/"]:
        assert needed in teachers, f"README's part for teachers should mention {needed!r}"


# --- my_init.py: the student's own module ---------------------------------------------------


def functions(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Each top-level function: its signature, as source, and its docstring."""
    return {
        node.name: (ast.unparse(node.args), ast.get_docstring(node))
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def test_my_init_keeps_signatures_and_docstrings_and_loses_every_solution_line():
    path = MY_INIT
    teacher_text = path.read_text(encoding="utf-8")
    student_text = ms.student_module(teacher_text)
    teacher_tree, student_tree = ast.parse(teacher_text), ast.parse(student_text)
    assert functions(student_tree) == functions(teacher_tree)
    assert ast.get_docstring(student_tree) == ast.get_docstring(teacher_tree)
    regions = ms.solution_regions(teacher_text)
    assert regions, f"{path.name}: no solution regions"
    assert student_text.count("raise NotImplementedError()") == len(regions)
    assert ms.BEGIN not in student_text and ms.END not in student_text
    inside = set(ms.solution_lines(teacher_text))
    outside = {line.strip() for line in teacher_text.splitlines() if line not in inside}
    secret = [
        line.strip()
        for line in ms.solution_lines(teacher_text)
        if line.strip() and not line.strip().startswith("#") and line.strip() not in outside
    ]
    assert secret
    assert not [line for line in student_text.splitlines() if line.strip() in secret]


def test_make_student_writes_my_init_beside_the_notebooks(tmp_path):
    teacher_folder = tmp_path / "notebooks"
    teacher_folder.mkdir()
    shutil.copy2(TEACHER[-1], teacher_folder)
    shutil.copy2(MY_INIT, teacher_folder / "my_init.py")
    written = ms.make_student(teacher_folder, tmp_path / "student")
    assert sorted(p.name for p in written) == sorted([TEACHER[-1].name, "my_init.py"])
    stubbed = (tmp_path / "student" / "my_init.py").read_text(encoding="utf-8")
    assert stubbed == ms.student_module(MY_INIT.read_text(encoding="utf-8"))
    namespace: dict = {}
    exec(compile(stubbed, "my_init.py", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["fans"]((4, 3))
    with pytest.raises(NotImplementedError):
        namespace["calculate_gain"]("leaky_relu")


def test_make_student_stubs_the_teachers_my_init(student):
    if not MY_INIT.exists():
        assert not (student / "my_init.py").exists()
        return
    expected = ms.student_module(MY_INIT.read_text(encoding="utf-8"))
    assert (student / "my_init.py").read_text(encoding="utf-8") == expected


def test_student_edition_is_ignored_by_git():
    ignored = subprocess.run(
        ["git", "check-ignore", "student/01_variance_of_a_sum.ipynb"], cwd=ROOT, capture_output=True
    )
    assert ignored.returncode == 0, "student/ must be in .gitignore"


@pytest.mark.parametrize("stem", LESSONS)
def test_no_line_of_any_solution_survives(student, stem):
    nb = teacher(stem)
    given = {
        line.strip()
        for cell in nb.cells
        if not ms.has_solution(cell)
        for line in cell.source.splitlines()
    }
    out = nbformat.read(student / f"{stem}.ipynb", as_version=4)
    kept = {line.strip() for cell in out.cells for line in cell.source.splitlines()}
    lines = [line.strip() for cell in nb.cells for line in ms.solution_lines(cell.source)]
    secret = [line for line in lines if line and not line.startswith("#") and line not in given]
    assert secret, f"{stem}: no solution lines found"
    assert [line for line in secret if line in kept] == []
    assert ms.BEGIN not in nbformat.writes(out) and ms.END not in nbformat.writes(out)


def widget_state(nb) -> dict:
    return nb.metadata.get("widgets", {}).get(ms.WIDGET_STATE, {}).get("state", {})


@pytest.mark.parametrize("stem", STEMS)
def test_only_the_exercise_and_answering_cells_change_and_lose_their_outputs(student, stem):
    nb, out = teacher(stem), nbformat.read(student / f"{stem}.ipynb", as_version=4)
    found = ms.exercises(nb)
    exercise_cells = {e.answer for e in found} | {e.check for e in found}
    kept = ms.kept_cells(nb)
    assert len(out.cells) == len(kept)
    for i, after in zip(kept, out.cells, strict=True):
        before = nb.cells[i]
        cleared = ms.answers_a_prediction(before) or ms.runs_my_init(before)
        if i in exercise_cells or cleared:
            assert after.outputs == [], f"{stem} cell {i}: outputs kept"
        if i not in exercise_cells:
            assert after.source == before.source, f"{stem} cell {i} changed"
            if not cleared:
                assert after == before, f"{stem} cell {i} changed"
    student_index = {i: j for j, i in enumerate(kept)}
    for e in found:
        assert "raise NotImplementedError()" in out.cells[student_index[e.answer]].source
        assert out.cells[student_index[e.check]].source == nb.cells[e.check].source
    # stored widget state: sliders show before a run; only models of cleared outputs may go
    assert {k: v for k, v in out.metadata.items() if k != "widgets"} == {
        k: v for k, v in nb.metadata.items() if k != "widgets"
    }
    state, teacher_state = widget_state(out), widget_state(nb)
    assert all(teacher_state[k] == v for k, v in state.items())
    shown = student_edition._widget_models(
        [o for c in out.cells for o in c.get("outputs", [])], teacher_state
    )
    assert shown & set(teacher_state) <= set(state), f"{stem}: a widget still shown lost its state"


@pytest.mark.parametrize("stem", STEMS)
def test_no_teacher_only_sentence_survives(student, stem):
    out = nbformat.read(student / f"{stem}.ipynb", as_version=4)
    found = [
        (i, line)
        for i, cell in enumerate(out.cells)
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if TEACHER_ONLY.search(line)
    ]
    assert not found, (
        f"{stem}: the student edition still says what only the teacher should read; put it in "
        f"its own Markdown cell tagged `teacher` (cell index, line): {found}"
    )


def test_teacher_cells_are_dropped_and_answers_to_predictions_cleared():
    v4 = nbformat.v4
    ids = {name: f"{k:032x}" for k, name in enumerate(["question", "reveal", "fold", "plot"], 1)}

    def view(name):
        return v4.new_output(
            "display_data", data={ms.WIDGET_VIEW: {"model_id": ids[name], "version_major": 2}}
        )

    printed = v4.new_output("stream", name="stdout", text="ratio 2.00\n")
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# 01 · X"),
            v4.new_markdown_cell("This copy holds the solutions.", metadata={"tags": ["teacher"]}),
            v4.new_code_cell("q = predict('n doubled?', ['x2', 'x4'])", outputs=[view("question")]),
            v4.new_code_cell("ratio = run()", outputs=[printed], metadata={"tags": ["measured"]}),
            v4.new_code_cell("q.reveal(answer='x2', measured=ratio)", outputs=[view("reveal")]),
            v4.new_code_cell("explore()", outputs=[view("plot")]),
        ]
    )
    nb.metadata["widgets"] = {
        ms.WIDGET_STATE: {
            "state": {
                ids["question"]: {"state": {"children": [f"IPY_MODEL_{ids['plot']}"]}},
                ids["reveal"]: {"state": {"children": [f"IPY_MODEL_{ids['fold']}"]}},
                ids["fold"]: {"state": {"value": "The answer is x2. Measured: ratio 2.00"}},
                ids["plot"]: {"state": {"value": "a slider"}},
            },
            "version_major": 2,
            "version_minor": 0,
        }
    }
    out = ms.student_notebook(nb)
    assert [c.source for c in out.cells] == [nb.cells[i].source for i in (0, 2, 3, 4, 5)]
    assert ms.kept_cells(nb) == [0, 2, 3, 4, 5]
    assert [len(c.get("outputs", [])) for c in out.cells] == [0, 1, 0, 0, 1]
    # the answer's models are gone, a model also shown by a kept output stays
    assert set(widget_state(out)) == {ids["question"], ids["plot"]}
    assert "ratio 2.00" not in nbformat.writes(out)
    assert "holds the solutions" not in nbformat.writes(out)
    assert widget_state(nb)[ids["fold"]], "the teacher's notebook is not changed"


# The core path's notebooks spend their time on the functions of my_init.py (cells tagged
# write:NAME): one exercise each, besides those.
FEWER_EXERCISES = {
    "01_variance_of_a_sum": 1,
    "02_hand_example_4x3": 1,
    "03_signal_through_depth": 1,
    "04_does_it_train": 1,
}


@pytest.mark.parametrize("stem", STEMS)
def test_every_notebook_has_its_exercises(stem):
    """Three exercises after the core path; in it, at least one, beside my_init.py's functions;
    none in the inventory's sittings."""
    names = [e.name for e in ms.exercises(teacher(stem))]
    if stem in SITTINGS:
        assert names == [], f"{stem}: a sitting of the inventory has exercises: {names}"
        return
    assert len(names) >= FEWER_EXERCISES.get(stem, 3), f"{stem}: {names}"
    assert len(set(names)) == len(names), f"{stem}: exercise names repeat: {names}"


def test_every_exercise_has_a_typical_wrong_answer_here():
    missing = [
        f"{stem}: {e.name}"
        for stem in STEMS
        for e in ms.exercises(teacher(stem))
        if e.name not in WRONG_ANSWERS.get(stem, {})
    ]
    assert not missing, f"add a typical wrong answer and its hint to WRONG_ANSWERS: {missing}"


def test_the_transformation_follows_nbgrader():
    source = "x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\nprint(x)"
    assert ms.fill_solutions(source, ms.CODE_STUB) == (
        "x = 1\n# YOUR CODE HERE\nraise NotImplementedError()\nprint(x)"
    )
    for broken in ["### BEGIN SOLUTION\ny = 2", "y = 2\n### END SOLUTION"]:
        with pytest.raises(ValueError, match="without"):
            ms.fill_solutions(broken, ms.CODE_STUB)
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION")]
    )
    with pytest.raises(ValueError, match="followed by a check cell"):
        ms.exercises(nb)


# --- running it: the student's notebook, then each check fed a wrong and a right answer ----


@dataclass
class Run:
    """What one run of a student notebook, then of its checks, produced."""

    errors: dict[int, list[str]] = field(default_factory=dict)  # cell -> [ename: evalue]
    wrong: dict[str, list] = field(default_factory=dict)  # exercise -> outputs of its check
    right: dict[str, list] = field(default_factory=dict)


def errors_of(outputs) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]


def text_of(outputs) -> str:
    return "".join(o.get("text", "") + o.get("evalue", "") for o in outputs)


def execute(client, source: str, index: int) -> list:
    cell = nbformat.v4.new_code_cell(source)
    client.execute_cell(cell, index)
    return cell.outputs


@pytest.fixture(scope="module", params=STEMS)
def run(request) -> tuple[str, Run]:
    """One kernel per notebook: the student edition top to bottom (errors allowed), then, from
    the first exercise to the last one's check, every cell again with each check fed first the
    typical wrong answer, then the teacher's solution (nothing after the last check is read)."""
    stem = request.param
    nb = teacher(stem)
    found = ms.exercises(nb)
    student_nb = ms.student_notebook(nb)
    result = Run()
    client = NotebookClient(
        student_nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    kept = ms.kept_cells(nb)  # the teacher's index of each student cell
    with client.setup_kernel():
        for j, cell in enumerate(student_nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, j)
                if errors_of(cell.outputs):
                    result.errors[kept[j]] = errors_of(cell.outputs)
        if found:
            by_answer = {e.answer: e for e in found}
            checks = {e.check for e in found}
            at = {i: j for j, i in enumerate(kept)}  # the student's index of a teacher cell
            for i in range(found[0].answer, found[-1].check + 1):
                cell = nb.cells[i]
                if cell.cell_type != "code" or i in checks or i not in at:
                    continue
                if i in by_answer:
                    e = by_answer[i]
                    check_source, check_at = nb.cells[e.check].source, at[e.check]
                    wrong = WRONG_ANSWERS.get(stem, {}).get(e.name)
                    if wrong is not None:
                        wrong_source = ms.fill_solutions(cell.source, wrong[0].splitlines())
                        execute(client, wrong_source, at[i])
                        result.wrong[e.name] = execute(client, check_source, check_at)
                    execute(client, cell.source, at[i])
                    result.right[e.name] = execute(client, check_source, check_at)
                else:
                    execute(client, cell.source, at[i])
    return stem, result


def test_student_notebook_runs_with_no_error_but_the_unanswered_exercises(run):
    stem, result = run
    found = ms.exercises(teacher(stem))
    answers, checks = {e.answer for e in found}, {e.check for e in found}
    nb = teacher(stem)
    for i, errors in result.errors.items():
        for error in errors:
            if i in answers:
                assert error.startswith("NotImplementedError"), f"{stem} cell {i}: {error}"
            elif "check_init(" in nb.cells[i].source:  # my_init.py's functions still stubs
                assert error.startswith("NotWrittenYet"), f"{stem} cell {i}: {error}"
            else:
                assert i in checks and error.startswith("Unanswered"), f"{stem} cell {i}: {error}"
    # Each unanswered exercise says so where the student runs it: in its answer cell, or (an
    # exercise that defines a function) when its check calls it.
    for e in found:
        assert e.answer in result.errors or e.check in result.errors, f"{stem} {e.name}"


def test_every_check_passes_with_the_teachers_solution(run):
    stem, result = run
    for e in ms.exercises(teacher(stem)):
        outputs = result.right[e.name]
        assert not errors_of(outputs), f"{stem} {e.name}: {errors_of(outputs)}"
        assert f"✓ {e.name}: correct." in text_of(outputs)


def test_every_check_fails_a_typical_wrong_answer_with_its_hint(run):
    stem, result = run
    for e in ms.exercises(teacher(stem)):
        if e.name not in WRONG_ANSWERS.get(stem, {}):
            continue  # reported by test_every_exercise_has_a_typical_wrong_answer_here
        outputs, hint = result.wrong[e.name], WRONG_ANSWERS[stem][e.name][1]
        errors = errors_of(outputs)
        assert errors, f"{stem} {e.name}: the wrong answer passed"
        assert errors[0].startswith(f"NotYet: {e.name}: not yet"), f"{stem} {e.name}: {errors}"
        assert hint in errors[0], f"{stem} {e.name}: hint {hint!r} not in {errors[0]!r}"


def test_the_edition_is_never_written_over_a_students_work(tmp_path):
    out = tmp_path / "student"
    first = ms.make_student(NOTEBOOKS, out)
    assert ms.make_student(NOTEBOOKS, out) == first  # an untouched edition: fine
    mine = out / "my_init.py"
    work = mine.read_text().replace("raise NotImplementedError()", "return (3, 4)", 1)
    mine.write_text(work)
    with pytest.raises(ms.WouldOverwrite, match=r"my_init\.py differ"):
        ms.make_student(NOTEBOOKS, out)
    assert mine.read_text() == work  # nothing was written
    assert ms.main(["--output", str(out)]) == 1
    ms.make_student(NOTEBOOKS, out, force=True)
    assert "return (3, 4)" not in mine.read_text()


def test_the_student_command_refuses_a_file_for_its_folder_in_one_line(tmp_path, capsys):
    from tinyinit import cli

    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    with pytest.raises(SystemExit) as stop:
        cli.main(["student", str(taken)])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        f"python -m tinyinit student: error: argument FOLDER: {str(taken)!r} is a file, "
        "not a folder to write into\n"
    )
    assert taken.read_text() == "mine"


def test_the_student_command_writes_the_edition_and_says_how_to_open_it(tmp_path, capsys):
    from tinyinit import cli

    assert cli.main(["student", str(tmp_path / "course")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("wrote ") and out[0].endswith(f"to {tmp_path / 'course'}")
    assert out[1] == f"Open it with: jupyter lab {tmp_path / 'course'}"
    made = sorted(p.name for p in (tmp_path / "course").iterdir())
    assert made == sorted([p.name for p in TEACHER] + [p.name for p in NOTEBOOKS.glob("*.py")])


# --- the student's functions drive the core path ---------------------------------------------

# The notebooks whose experiments are drawn with the student's my_init.py (cells tagged
# `yours`), and the my_init.py each is run with: the teacher's ("right") and the card's
# pitfalls (tests/mutants). 03's stacks take every pitfall; 04's training and residual stream,
# slower, those that show in it (a fan swap in its 64 -> 10 layer, ReLU's gain, the residual
# scale) and one that must not (no kernels).
DRIVEN = {
    "03_signal_through_depth": ("right", *sorted(MUTANTS)),
    "04_does_it_train": ("right", "s01", "s05", "s02", "s08"),
}
# Each notebook's predictions, answered as the card's theory answers them: then a reveal beside
# a measurement drawn with a pitfall must not call them right.
PREDICTED = {
    "03_signal_through_depth": "q_xavier.enter(-20)\nq_kaiming.choose('1')\n"
    "q_back.choose('above 10')",
    "04_does_it_train": "q_train.choose('Kaiming')",
}


def shown_text(outputs) -> str:
    """What a cell printed and displayed (a figure's text alternative, a reveal), as text."""
    return "".join(
        o.get("text", "") + o.get("evalue", "") + o.get("data", {}).get("text/plain", "") + "\n"
        for o in outputs
    )


@pytest.fixture(scope="module")
def experiments(tmp_path_factory) -> dict[str, dict[str, str]]:
    """stem -> variant -> what the student edition's experiment cells and its reveals showed,
    run with the teacher's my_init.py ("right") and with each card pitfall made in it.

    One kernel per notebook: its first code cell (the imports) and its questions, answered as
    the theory answers them; then for each variant the cells tagged `yours` (which read
    my_init.py anew each time they run) and the reveals. About two minutes for both notebooks."""
    folder = tmp_path_factory.mktemp("edition")
    ms.make_student(NOTEBOOKS, folder)
    printed: dict[str, dict[str, str]] = {}
    for stem, variants in DRIVEN.items():
        nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
        code = [(j, c) for j, c in enumerate(nb.cells) if c.cell_type == "code"]
        driven = [(j, c) for j, c in code if ms.YOURS_TAG in ms.tags(c) or ".reveal(" in c.source]
        assert any(ms.YOURS_TAG in ms.tags(c) for _, c in driven), f"{stem}: no experiment"
        questions = [(j, c) for j, c in code if re.search(r"\bpredict(_number)?\(", c.source)]
        client = NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
        )
        printed[stem] = {}
        with client.setup_kernel():
            for j, cell in [code[0], *questions]:
                client.execute_cell(cell, j)
            execute(client, PREDICTED[stem], code[0][0])  # in the imports cell's place
            for variant in variants:
                source = MY_INIT.read_text() if variant == "right" else mutants.source(variant)
                (folder / "my_init.py").write_text(source)
                outputs = []
                for j, cell in driven:
                    client.execute_cell(cell, j)  # raises on an error: no pitfall crashes it
                    outputs += cell.outputs
                printed[stem][variant] = shown_text(outputs)
    return printed


def exponent(text: str, name: str) -> float:
    return float(re.search(rf"{name}\s+m_\d+ = 2\^(-?[\d.]+)", text).group(1))


def accuracy(text: str, name: str) -> int:
    return int(re.search(rf"test accuracy: .*{name} (\d+)%", text).group(1))


def numbers(text: str) -> list[str]:
    """The measured lines: mean squares, gradients, accuracies, the residual stream's end."""
    return re.findall(r"m_\d+ = .*|g_0 = .*|test accuracy: .*|after all 2N additions: .*", text)


def test_the_experiments_are_drawn_with_the_students_functions_and_say_so(experiments):
    for stem in DRIVEN:
        right = experiments[stem]["right"]
        assert "Drawn with your xavier_normal" in right, right
        assert "Here yours give the card's numbers, bit for bit." in right
        assert "Where yours differ" not in right
        assert "✓ test_relu_signal_survives_20_layers passed" in right
        assert "Right." in right and "contradicts" not in right  # the theory's answers, measured


@pytest.mark.parametrize("name", ["s01", "s03", "s05", "s08"])
def test_each_pitfall_changes_what_03_or_04_shows_and_no_reveal_beside_it_says_right(
    experiments, name
):
    """The card's four pitfalls, one at a time in a correct my_init.py: the student edition's
    03 or 04 prints other numbers (and so draws another plot), the line above the plot says
    where yours differ, and no reveal calls a contradicted prediction right."""
    changed = []
    for stem in DRIVEN:
        if name not in experiments[stem]:
            continue
        right, wrong = experiments[stem]["right"], experiments[stem][name]
        if numbers(wrong) != numbers(right):
            changed.append(stem)
            assert "Where yours differ from the card's: your " in wrong, (stem, wrong)
        for line in wrong.splitlines():
            if "Right." in line:
                assert bears_out(line), f"{stem} {name}: {line}"
    assert changed, f"{name} shows in neither 03 nor 04"


# Each reveal of 03 and 04 as it reads when it calls a prediction right, and whether the
# measurement beside it bears the theory's answer out.
BORNE_OUT = {
    r"-20\. Right\. Measured: m_20 = 2\^(\S+)": lambda e: abs(float(e) + 20) <= 2,
    r"\(b\) 1\. Right\. Measured: m_20 = (\S+)": lambda m: 1 / 16 < float(m) < 16,
    r"above 10\. Right\. Measured: g_0 = ([\d.]+)": lambda g: float(g) > 10,
    r"Kaiming\. Right\. Measured: Xavier (\d+)%, Kaiming (\d+)%": lambda x, k: int(k) > int(x) + 5,
}


def bears_out(line: str) -> bool:
    """Whether a reveal that says "Right." stands beside a measurement that agrees."""
    for pattern, agrees in BORNE_OUT.items():
        found = re.search(pattern, line)
        if found:
            return agrees(*found.groups())
    raise AssertionError(f"a reveal this test does not know: {line}")


def test_a_relu_gain_of_2_shows_in_the_kaiming_curve_and_training(experiments):
    right = experiments["03_signal_through_depth"]["right"]
    wrong = experiments["03_signal_through_depth"]["s05"]
    assert abs(exponent(right, "Kaiming")) < 1 and exponent(wrong, "Kaiming") > 15  # about 2^20
    assert exponent(wrong, "Xavier") == exponent(right, "Xavier")  # Xavier has no gain table
    assert "pitfall s05" in wrong and "✗ test_relu_signal_survives_20_layers failed" in wrong
    assert "your calculate_gain('relu') is 1.414 times the card's" in wrong
    assert "it contradicts that answer" in wrong and "Your prediction: (b) 1. Right." not in wrong
    tanh = [line for line in right.splitlines() if line.startswith("gain ")]
    assert tanh and all(line in wrong for line in tanh)  # tanh's gain is not ReLU's
    trained = experiments["04_does_it_train"]
    assert accuracy(trained["right"], "Kaiming") > 50 > accuracy(trained["s05"], "Kaiming") + 30
    assert "Kaiming's falls" in trained["right"] and "Kaiming's falls" not in trained["s05"]
    assert "Your prediction: (b) Kaiming. Right." not in trained["s05"]


def test_a_fan_swap_shows_in_the_funnel_and_the_non_square_layer(experiments):
    square = experiments["03_signal_through_depth"]
    for name in ("Xavier", "Kaiming"):  # 20 square layers: a swap changes nothing
        assert exponent(square["s01"], name) == exponent(square["right"], name)
    assert abs(exponent(square["right"], "funnel")) < 1.5 < 3.5 < exponent(square["s01"], "funnel")
    assert "your kaiming_normal's std is 1.41 of the card's at 1024 -> 512" in square["s01"]
    trained = experiments["04_does_it_train"]  # its 64 -> 10 output layer is not square
    assert accuracy(trained["s01"], "Xavier") == accuracy(trained["right"], "Xavier")  # symmetric
    assert trained["s01"].split("test accuracy:")[1] != trained["right"].split("test accuracy:")[1]


def test_a_uniform_bound_without_sqrt_3_drops_the_uniform_curve_only(experiments):
    right = experiments["03_signal_through_depth"]["right"]
    wrong = experiments["03_signal_through_depth"]["s03"]
    assert abs(exponent(right, "Xavier, uniform") - exponent(right, "Xavier")) < 1
    drop = exponent(right, "Xavier, uniform") - exponent(wrong, "Xavier, uniform")
    assert abs(drop - 20 * math.log2(3)) < 3  # a third of the variance, 20 times
    assert exponent(wrong, "Xavier") == exponent(right, "Xavier")
    assert "your xavier_uniform's std is 0.577 of the card's at 256 -> 256" in wrong


def test_a_residual_scale_of_1_over_sqrt_n_ends_the_stream_higher(experiments):
    def ends(text):
        told = re.search(r"after all 2N additions: (.*)", text).group(1)
        return [float(v) for v in re.findall(r"([\d.]+) for N", told)]

    right, wrong = (experiments["04_does_it_train"][v] for v in ("right", "s08"))
    assert all(abs(e - 2) < 0.15 for e in ends(right)), ends(right)
    assert all(abs(e - 3) < 0.2 for e in ends(wrong)), ends(wrong)
    assert "your scaled_residual_std(1, 2) is 1.414 times the card's" in wrong


@pytest.mark.parametrize("name", ["s02"])
def test_a_pitfall_these_experiments_do_not_use_changes_none_of_their_numbers(experiments, name):
    """Linear layers have no kernel."""
    for stem in DRIVEN:
        assert numbers(experiments[stem][name]) == numbers(experiments[stem]["right"]), stem


def test_a_column_major_fill_or_a_fresh_generator_changes_the_weights_not_the_statistics(
    experiments,
):
    right = experiments["03_signal_through_depth"]["right"]
    for name in ("s09", "s13"):
        wrong = experiments["03_signal_through_depth"][name]
        assert "draws other weights than the card's" in wrong, wrong
        for stack in ("Xavier", "Kaiming"):
            assert exponent(wrong, stack) != exponent(right, stack)
            assert abs(exponent(wrong, stack) - exponent(right, stack)) < 2.5


def test_the_student_editions_core_notebooks_store_no_verdict_on_the_students_file(student):
    for stem in STEMS[:4]:
        nb = nbformat.read(student / f"{stem}.ipynb", as_version=4)
        for j, cell in enumerate(nb.cells):
            text = json.dumps(cell.get("outputs", []), ensure_ascii=False)
            assert not re.search(r"\d+ of \d+ tests? passed|✓ passed|Drawn with|✓ test_", text), (
                f"{stem} cell {j} stores a result of the teacher's my_init.py"
            )
            if ms.runs_my_init(cell):
                assert cell.outputs == [] and cell.execution_count is None, f"{stem} cell {j}"


@pytest.mark.parametrize("stem", STEMS)
def test_no_check_cell_shows_a_line_of_its_exercises_solution(stem):
    """A student reads the check cell before trying: a line of the answer there is a copy."""
    nb = teacher(stem)
    for e in ms.exercises(nb):
        check = nb.cells[e.check].source
        shown = [
            line.strip()
            for line in ms.solution_lines(nb.cells[e.answer].source)
            if len(line.strip()) > 8 and not line.strip().startswith("#") and line.strip() in check
        ]
        assert not shown, f"{stem} {e.name}: its check cell shows {shown}"


FRAGMENT = 20  # characters of code: a call with its arguments, not a name alone


def code_fragments(line: str) -> set[str]:
    """Every run of FRAGMENT characters of a solution line's computation (what follows its
    `name =`), spaces dropped: what a check cell must not spell, in any variable's name."""
    code = line.split("#")[0]  # an inline comment is words, not the computation
    computation = re.sub(r"^[\w, ]+=(?!=)", "", code.strip())
    text = re.sub(r"\s+", "", computation)
    return {text[i : i + FRAGMENT] for i in range(len(text) - FRAGMENT + 1)}


@pytest.mark.parametrize("stem", STEMS)
def test_no_check_cell_spells_a_piece_of_its_exercises_solution(stem):
    """Nor a piece of one: a check that computes the right answer in view (a trapezoid over
    the same function, the same formula with other names) gives it away as surely."""
    nb = teacher(stem)
    for e in ms.exercises(nb):
        check = re.sub(r"\s+", "", nb.cells[e.check].source)
        solution = [
            line for line in ms.solution_lines(nb.cells[e.answer].source)
            if line.strip() and not line.strip().startswith("#")
        ]  # fmt: skip
        spelled = sorted({f for line in solution for f in code_fragments(line) if f in check})
        assert not spelled, f"{stem} {e.name}: its check cell spells {spelled[:3]}"


@pytest.mark.parametrize("stem", [s for s in STEMS if s[:2] in ("00", "01", "02", "03", "04")])
def test_the_core_notebooks_carry_teaching_notes_for_the_teacher_alone(student, stem):
    """The teacher's 01-04 hold notes for the room (what to ask, what the plot shows, what a
    wrong answer means), each in a cell tagged `teacher`; the student edition holds none."""
    notes = [
        cell.source
        for cell in teacher(stem).cells
        if cell.cell_type == "markdown"
        and "teacher" in cell.metadata.get("tags", [])
        and cell.source.startswith("*For the teacher")
    ]
    assert notes, f"{stem}: no teaching note"
    assert any("Ask" in note or "ask" in note for note in notes), stem
    out = nbformat.read(student / f"{stem}.ipynb", as_version=4)
    assert not any("For the teacher" in cell.source for cell in out.cells), stem


# --- checking from the student's folder -------------------------------------------------------


@pytest.fixture(scope="module")
def edition_in_a_repository(tmp_path_factory) -> Path:
    """The student edition in student/ of a folder whose .venv is this test's environment."""
    repository = tmp_path_factory.mktemp("repository")
    (repository / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    ms.make_student(NOTEBOOKS, repository / "student")
    return repository / "student"


def run_check_script(folder: Path) -> subprocess.CompletedProcess:
    """`python check.py` in folder, with a Python that has no tinyinit (no site-packages)."""
    return subprocess.run(
        [sys.executable, "-S", "check.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_py_finds_the_environment_and_exits_with_the_verdict(edition_in_a_repository):
    """From the edition's folder in a terminal whose Python has no tinyinit: the card's tests
    run with the repository's .venv, and the exit code is 0, 1 or 2 as the README says."""
    folder = edition_in_a_repository
    mutants.write("s05", folder)
    failed = run_check_script(folder)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "pitfall s05" in failed.stdout + failed.stderr
    (folder / "my_init.py").write_text(MY_INIT.read_text())
    passed = run_check_script(folder)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "11 of 11 tests passed" in passed.stdout + passed.stderr
    (folder / "my_init.py").unlink()
    unreadable = run_check_script(folder)
    assert unreadable.returncode == 2, unreadable.stdout + unreadable.stderr


def test_check_py_without_an_environment_says_how_to_get_one(tmp_path):
    ms.make_student(NOTEBOOKS, tmp_path)
    run = run_check_script(tmp_path)
    assert run.returncode == 2
    assert "no Python with tinyinit found" in run.stderr and "activat" in run.stderr


def test_make_check_ends_with_the_checkers_status_and_names_it(tmp_path):
    venv = Path(sys.prefix)

    def make_check() -> subprocess.CompletedProcess:
        return subprocess.run(
            ["make", "check", f"STUDENT={tmp_path}", f"VENV={venv}", "-o", f"{venv}/.core"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )

    mutants.write("s01", tmp_path)
    failed = make_check()
    assert failed.returncode == 2 and "make check: the checker exited 1" in failed.stderr
    (tmp_path / "my_init.py").write_text(MY_INIT.read_text())
    passed = make_check()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    (tmp_path / "my_init.py").unlink()
    unreadable = make_check()
    assert unreadable.returncode == 2 and "make check: the checker exited 2" in unreadable.stderr


# --- the core path's checks, examples and the card's names ------------------------------------

CORE = [stem for stem in STEMS if stem[:2] in ("01", "02", "03", "04")]


@pytest.mark.parametrize("stem", CORE)
def test_the_core_paths_checks_call_the_exercises_module_and_show_no_number(stem):
    """Each check cell of 01-04 hands the answer to tinyinit.course.exercises: the cell holds the
    call, no number or formula a student could read the answer from."""
    nb = teacher(stem)
    for e in ms.exercises(nb):
        check = nb.cells[e.check].source
        assert "from tinyinit.course.exercises import" in check, f"{stem} {e.name}"
        body = "\n".join(
            line.split("#")[0]
            for line in check.splitlines()
            if not line.startswith(("from ", "import ", "with Check("))
        )
        without_names = re.sub(r"[A-Za-z_]\w*", "", body)
        assert not re.search(r"\d", without_names), f"{stem} {e.name}: {body}"


def test_the_core_paths_hints_point_to_the_formula_and_never_write_the_line():
    from tinyinit.course import exercises
    from tinyinit.course.quiz import NotYet

    hints = []
    for _ in range(2):  # a second wrong try gets the second step of each hint
        for call in (
            lambda: exercises.variance_of_a_sum(1.0, 1.0),
            lambda: exercises.variance_of_a_sum(2.0, 1 - 1 / math.pi),
            lambda: exercises.variance_of_a_sum(7.0, 1.0),
            lambda: exercises.xavier_relu_gain(Fraction(7, 6)),
            lambda: exercises.xavier_relu_gain(Fraction(1)),
            lambda: exercises.gradient_ratio(2**-9),
            lambda: exercises.scale_that_holds(0.1, lambda s: (512 * s**2) ** np.arange(1, 51)),
        ):
            with pytest.raises(NotYet) as raised:
                call()
            hints.append(str(raised.value))
    lines = ["np.mean(np.maximum", "normal(rng", ".sum(axis=1)", "Fraction(7, 3)", "7 / 3"]
    lines += ["3 g^2 / 7", "2 ** (-", "1 / np.sqrt(512)", "0.0442"]
    for hint in hints:
        assert not [line for line in lines if line in hint], hint


def prediction_options(nb) -> dict[str, list[str]]:
    """Each question's name and its options, from the cells that ask it."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or "predict(" not in cell.source:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                call = node.value
                if getattr(call.func, "id", "") == "predict" and len(call.args) == 2:
                    found[node.targets[0].id] = ast.literal_eval(call.args[1])
    return found


@pytest.mark.parametrize("stem", CORE)
def test_an_example_of_how_to_answer_is_never_the_answer(stem):
    nb = teacher(stem)
    options = prediction_options(nb)
    text = "\n".join(cell.source for cell in nb.cells)
    answers = dict(re.findall(r"(\w+)\.reveal\(\s*(?:answer=)?[\"']([^\"']+)[\"']", text))
    for name, letter in re.findall(r"(\w+)\.choose\(\s*[\"'](\w)[\"']\s*\)", text):
        if name in options and name in answers:
            chosen = options[name]["abcdefgh".index(letter)]
            assert chosen != answers[name], f"{stem}: the example {name}.choose({letter!r})"
    for name, value in re.findall(r"(\w+)\.enter\((-?\d[\d.]*)\)", text):
        revealed = re.search(rf"{name}\.reveal\(\s*(?:answer=)?(-?\d[\d.]*)", text)
        if revealed:
            assert float(value) != float(revealed.group(1)), f"{stem}: {name}.enter({value})"


# The card's paths and commands, and what each is in this course (the README's table and 01's).
CARD_TO_COURSE = {
    "python/tinyllm/nn/init.py": "my_init.py",
    "ol start M07.3": "my_init.py",
    "ol check M07.3": "python check.py",
    "course/tests/M07.3/test_init.py": "tinyinit.course.catalog",
    "tinyllm.prob.rv.normal": "tinyinit.normal",
}


@pytest.mark.parametrize("where", ["README.md", "01_variance_of_a_sum"])
def test_the_card_to_course_table_is_in_the_readme_and_in_01(where):
    if where == "README.md":
        text = (ROOT / "README.md").read_text(encoding="utf-8").split("## For teachers")[0]
    else:
        text = "\n".join(c.source for c in teacher(where).cells if c.cell_type == "markdown")
    rows = [line for line in text.splitlines() if line.strip().startswith("|")]
    for card, course in CARD_TO_COURSE.items():
        assert any(card in row and course in row for row in rows), f"{where}: {card} -> {course}"
    commands = " ".join(rows)
    assert "python -m tinyinit check my_init.py" in commands and "make check" in commands
