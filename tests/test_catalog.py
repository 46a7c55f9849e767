"""`check_init` and `python -m tinyinit check` judge a student's file as the module card does.

Each test writes a small file, runs the card's catalog on it in a child process, and
reads the verdict: passed on tinyinit's functions and on the teacher's my_init.py; the
card's test and pitfall named on each mutant; "not written yet" on the student
edition's stubs; a student's exception reported with its line; an endless loop stopped.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from fnmatch import fnmatch
from pathlib import Path

import pytest
from mutants import MUTANTS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from scripts_loader import load_script

from tinyinit import cli
from tinyinit.catalog import (
    ERROR,
    FAILED,
    NAMES,
    NOT_WRITTEN,
    PASSED,
    TIMED_OUT,
    NotPassed,
    NotWrittenYet,
    Report,
    check_init,
)
from tinyinit.pitfalls import CARD_PITFALLS, PITFALLS

ROOT = Path(__file__).resolve().parent.parent
TEACHER = ROOT / "notebooks" / "my_init.py"
MUTANTS_DIR = Path(__file__).parent / "mutants"
TINYINIT_FUNCTIONS = (
    "from tinyinit.init import (\n"
    "    calculate_gain, fans, kaiming_normal, normal_init, scaled_residual_std,\n"
    "    xavier_normal, xavier_uniform,\n"
    ")\n"
)
FAST = ["test_fans_and_gains_match_torch", "test_scaled_residual_keeps_the_stream_bounded"]


make_student = load_script("make_student")  # writes the student edition


def stubbed(source: str, keep: tuple[str, ...] = ()) -> str:
    """The student edition of `source`: each solution region stubbed as make_student does,
    except those of the functions named in `keep` (a student who wrote those already)."""
    if not keep:
        return make_student.fill_solutions(source, make_student.CODE_STUB)
    lines = source.splitlines()
    for begin, end in reversed(make_student.solution_regions(source)):
        function = next(
            re.match(r"def (\w+)", line).group(1)
            for line in reversed(lines[:begin])
            if line.startswith("def ")
        )
        if function in keep:
            del lines[end], lines[begin]  # the markers go, the solution stays
        else:
            region = "\n".join(lines[begin : end + 1])
            lines[begin : end + 1] = make_student.fill_solutions(
                region, make_student.CODE_STUB
            ).splitlines()
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, source: str, name: str = "my_init.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# --- passing ----------------------------------------------------------------------------------


def test_tinyinits_own_functions_pass_every_test_through_the_command_line(tmp_path):
    path = write(tmp_path, TINYINIT_FUNCTIONS)
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "my_init.py: 11 of 11 tests passed"
    assert [line.split()[-1] for line in run.stdout.splitlines()[1:]] == list(NAMES)
    assert all(line.startswith("  ✓ passed ") for line in run.stdout.splitlines()[1:])


def test_the_teachers_my_init_passes_every_test():
    report = check_init(TEACHER)
    assert report.ok, report
    assert report.names == NAMES
    assert report.seconds < 120


def test_the_teachers_my_init_imports_no_initializer_of_tinyinit():
    source = TEACHER.read_text()
    assert "from tinyinit import PCG32, normal\n" in source
    assert "tinyinit.init" not in source and "import tinyinit\n" not in source
    regions = make_student.solution_regions(source)
    assert len(regions) == 7  # one per function, each stubbed in the student edition


# --- the card's pitfalls -----------------------------------------------------------------------

# The card's section 5, "Caught by".
CAUGHT_BY = {
    "s01": ("test_hand_example_linear_4x3", "test_fans_and_gains_match_torch"),
    "s02": ("test_fans_and_gains_match_torch",),
    "s03": ("test_empirical_variance_matches_the_formula",),
    "s05": ("test_relu_signal_survives_20_layers",),
    "s08": ("test_scaled_residual_keeps_the_stream_bounded",),
    "s09": ("test_normal_inits_draw_spec_normals_in_c_order",),
    "s13": ("test_same_seed_same_weights",),
}


def test_every_pitfall_of_the_card_is_named_and_has_a_mutant():
    assert set(CAUGHT_BY) == set(CARD_PITFALLS) == set(MUTANTS)
    assert set(CARD_PITFALLS.values()) <= set(PITFALLS)


@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_each_mutant_fails_the_cards_test_naming_its_pitfall(name):
    tests = CAUGHT_BY[name]
    report = check_init(MUTANTS_DIR / f"{name}.py", tests=[*tests, "test_shapes_and_dtype"])
    assert not report.ok
    pitfall = PITFALLS[CARD_PITFALLS[name]]
    for test in tests:
        result = report[test]
        assert result.status == FAILED, result
        assert [p["id"] for p in result.pitfalls] == [name], result
        assert result.pitfalls[0]["symptom"] == pitfall.symptom
        text = str(report)
        assert f"pitfall {name}: {pitfall.title}" in text and pitfall.symptom in text
    assert report["test_shapes_and_dtype"].status == PASSED  # the rest of it is right


# --- not written yet ---------------------------------------------------------------------------


def test_the_student_editions_stubs_are_not_written_yet(tmp_path):
    path = write(tmp_path, stubbed(TEACHER.read_text()))
    assert "### BEGIN SOLUTION" not in path.read_text()
    report = check_init(path)
    assert not report.ok
    assert report.names == NAMES
    assert {r.status for r in report.results} == {NOT_WRITTEN}
    first = report["test_hand_example_linear_4x3"]
    assert first.measured.startswith("fans is not written yet")
    assert first.where == f"my_init.py:{line_of(path, 'raise NotImplementedError()')} in fans"
    assert str(report).splitlines()[0] == "my_init.py: 0 of 11 tests passed; 11 not written yet"
    assert cli.main(["check", str(path), "--test", NAMES[0]]) == 1


def test_a_stub_fails_only_the_tests_that_need_it(tmp_path):
    path = write(tmp_path, stubbed(TEACHER.read_text(), keep=("fans", "calculate_gain")))
    report = check_init(path, tests=["test_hand_example_linear_4x3", *FAST])
    assert report["test_fans_and_gains_match_torch"].status == PASSED
    hand = report["test_hand_example_linear_4x3"]
    assert hand.status == NOT_WRITTEN and hand.measured.startswith("xavier_uniform is not")
    assert report["test_scaled_residual_keeps_the_stream_bounded"].status == NOT_WRITTEN


def test_a_check_cell_that_requires_its_tests_fails_for_a_grader_unless_they_pass(tmp_path):
    path = write(tmp_path, stubbed(TEACHER.read_text(), keep=("fans", "calculate_gain")))
    fans_tests = ["test_fans_and_gains_match_torch"]
    passed = check_init(path, tests=fans_tests)
    assert passed.require() is passed
    with pytest.raises(NotWrittenYet) as waiting:  # a NotImplementedError: not answered yet
        check_init(path, tests=[*fans_tests, "test_shapes_and_dtype"]).require()
    assert "1 not written yet" in str(waiting.value)
    assert isinstance(waiting.value, NotImplementedError)
    with pytest.raises(NotPassed) as failed:  # an AssertionError: a grader's failed cell
        check_init(MUTANTS_DIR / "s01.py", tests=fans_tests).require()
    assert "pitfall s01" in str(failed.value) and isinstance(failed.value, AssertionError)
    shown = failed.value._render_traceback_()
    assert len(shown) == 1 and "test_fans_and_gains_match_torch" in shown[0]  # no traceback


def test_a_missing_function_is_not_written_yet(tmp_path):
    path = write(tmp_path, "from tinyinit.init import fans, calculate_gain\n")
    report = check_init(path, tests=FAST)
    assert report[FAST[0]].status == PASSED
    assert report[FAST[1]].status == NOT_WRITTEN
    assert report[FAST[1]].measured == "my_init.py has no function scaled_residual_std yet"


# --- a student's mistakes never crash the check --------------------------------------------


BROKEN = TINYINIT_FUNCTIONS + (
    "import math\n"
    "\n"
    "\n"
    "def scaled_residual_std(base_std, n_layers):\n"
    "    if n_layers < 1:\n"
    "        raise ValueError(n_layers)\n"
    "    return base_std / math.sqrt(2 * n_layers) / (n_layers - 1)  # 0 for L = 1\n"
    "\n"
    "\n"
    "def xavier_normal(shape, gain, rng):\n"
    "    print('drawing', shape)\n"
    "    return None\n"
    "\n"
    "\n"
    "def xavier_uniform(shape, gain, rng):\n"
    "    while True:\n"
    "        rng.uniform()\n"
)


def test_a_students_exception_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, BROKEN)
    report = check_init(path, tests=["test_scaled_residual_keeps_the_stream_bounded"])
    result = report["test_scaled_residual_keeps_the_stream_bounded"]
    assert result.status == ERROR
    assert result.measured == "your code raised ZeroDivisionError: float division by zero"
    assert result.where == f"my_init.py:{line_of(path, '# 0 for L = 1')} in scaled_residual_std"
    assert result.code.startswith("return base_std / math.sqrt(2 * n_layers)")
    assert "Traceback" not in str(report)


def test_a_function_returning_none_fails_saying_so_and_its_prints_are_kept(tmp_path):
    path = write(tmp_path, BROKEN)
    report = check_init(path, tests=["test_tanh_signal_survives_with_xavier"])
    result = report["test_tanh_signal_survives_with_xavier"]
    assert result.status == FAILED
    assert result.measured == (
        "xavier_normal((256, 256), 1.6666666666666667, rng) returned None, "
        "not a numpy array (the weights)"
    )
    assert result.printed == "drawing (256, 256)\n"


def test_an_endless_loop_is_stopped_and_the_other_tests_still_run(tmp_path):
    path = write(tmp_path, BROKEN)
    tests = ["test_hand_example_linear_4x3", "test_uniform_uses_one_draw_per_element", *FAST]
    start = time.perf_counter()
    report = check_init(path, tests=tests, timeout=1.0)
    elapsed = time.perf_counter() - start
    stopped = report["test_hand_example_linear_4x3"]
    assert stopped.status == TIMED_OUT
    assert stopped.measured == "stopped after 1 s: the test did not finish"
    loop = line_of(path, "while True:")
    assert stopped.where in {f"my_init.py:{n} in xavier_uniform" for n in (loop, loop + 1)}
    # a function stopped once is not called again: the next test that needs it is not run
    skipped = report["test_uniform_uses_one_draw_per_element"]
    assert skipped.status == TIMED_OUT and skipped.where == stopped.where
    assert skipped.measured == (
        "not run: xavier_uniform did not finish in test_hand_example_linear_4x3 (stopped after 1 s)"
    )
    assert report[FAST[0]].status == PASSED  # run in a new process after the stuck one
    assert elapsed < 1.0 + 10  # one time limit, not one per test that needs the function


LOOPS_WHEN_DIAGNOSED = (
    "import math\n"
    "import numpy as np\n"
    "from tinyinit.init import fans, normal_init, scaled_residual_std\n"
    "\n"
    "\n"
    "def xavier_uniform(shape, gain, rng):\n"
    "    while tuple(shape) == (6, 2, 5):  # a shape only the pitfall checker asks for\n"
    "        pass\n"
    "    fan_in, fan_out = fans(shape)\n"
    "    a = gain * math.sqrt(2 / (fan_in + fan_out))  # s03: the std as the bound\n"
    "    u = np.array([rng.uniform() for _ in range(math.prod(shape))])\n"
    "    return (-a + 2 * a * u).astype(np.float32).reshape(shape)\n"
)


def test_a_failure_is_kept_when_looking_for_its_pitfall_gets_stuck(tmp_path):
    path = write(tmp_path, LOOPS_WHEN_DIAGNOSED)
    report = check_init(path, tests=["test_uniform_uses_one_draw_per_element", *FAST], timeout=3)
    failed = report["test_uniform_uses_one_draw_per_element"]
    assert failed.status == FAILED and failed.pitfalls == ()
    assert failed.measured.startswith("xavier_uniform (4, 3) gain 1: not float32(-a + 2a u_k)")
    assert report[FAST[1]].status == PASSED


def test_a_syntax_error_is_reported_clearly(tmp_path):
    path = write(tmp_path, "def fans(shape)\n    return shape[1], shape[0]\n")
    report = check_init(path)
    assert not report.ok and report.results == ()
    assert str(report) == (
        "my_init.py could not be imported, so no test ran\n"
        "  SyntaxError at my_init.py:1: expected ':'\n"
        "      def fans(shape)\n"
        "                     ^"
    )
    assert cli.main(["check", str(path)]) == 1


def test_an_import_error_names_the_line(tmp_path):
    path = write(tmp_path, "import math\nimport torch_is_not_here\n")
    report = check_init(path)
    assert report.problem == (
        "importing it raised ModuleNotFoundError: No module named 'torch_is_not_here'\n"
        "at my_init.py:2 in <module>: import torch_is_not_here"
    )


def test_an_endless_loop_at_import_is_stopped(tmp_path):
    path = write(tmp_path, "import math\nwhile True:\n    pass\n")
    report = check_init(path, timeout=0.5)
    assert not report.ok
    first, second = report.problem.splitlines()[:2]
    assert first == "importing it did not finish within 0.5 s"
    assert second in {
        f"stopped at my_init.py:{n} in <module>: {code}"
        for n, code in [(2, "while True:"), (3, "pass")]
    }


def test_a_file_that_runs_the_check_itself_is_told_so(tmp_path):
    path = write(tmp_path, "from tinyinit.catalog import check_init\n\ncheck_init('my_init.py')\n")
    report = check_init(path)
    assert report.problem == (
        "importing it raised RuntimeError: check_init was called by the file it is checking: "
        "call it from a notebook or a terminal, not from inside your my_init.py\n"
        "at my_init.py:3 in <module>: check_init('my_init.py')"
    )


# --- the report reads well -------------------------------------------------------------------


def test_the_report_says_each_verdict_in_words_and_in_html(tmp_path):
    report = check_init(MUTANTS_DIR / "s08.py", tests=FAST)
    text = str(report)
    assert text.splitlines()[:2] == [
        "s08.py: 1 of 2 tests passed; 1 failed",
        "  ✓ passed           test_fans_and_gains_match_torch",
    ]
    assert "  ✗ failed           test_scaled_residual_keeps_the_stream_bounded" in text
    assert "measured: 2L s**2 with L=1: 0.0008 != 0.0004" in text
    assert "fix: base_std / sqrt(2 * n_layers)" in text
    assert repr(report) == text
    page = report._repr_html_()
    assert "<th scope='col'" in page and "✓ passed" in page and "✗ failed" in page
    assert "pitfall s08" in page
    assert report == check_init(MUTANTS_DIR / "s08.py", tests=FAST)  # no times in a verdict


def test_ok_only_when_every_selected_test_passed():
    assert not Report("x.py").ok  # nothing run
    assert not Report("x.py", problem="SyntaxError").ok


def test_the_torch_table_the_catalog_reads_ships_with_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = config["package-data"]["tinyinit"]
    data = ROOT / "tinyinit" / "data" / "init_torch.json"
    assert data.is_file()
    assert any(fnmatch("data/init_torch.json", pattern) for pattern in patterns)


# --- arguments -------------------------------------------------------------------------------


def test_bad_arguments_name_the_argument_and_what_is_accepted(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"path 'nothere.py' does not exist"):
        check_init("nothere.py")
    path = write(tmp_path, TINYINIT_FUNCTIONS)
    with pytest.raises(ValueError, match=r"tests must be names of the card's tests .*'nope'"):
        check_init(path, tests=["nope"])
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds > 0, got 0"):
        check_init(path, timeout=0)
    with pytest.raises(ValueError, match=r"path must be a Python file ending in .py"):
        check_init(write(tmp_path, "", "notes.txt"))


def test_the_command_line_exits_2_on_usage_errors(tmp_path, capsys):
    path = write(tmp_path, TINYINIT_FUNCTIONS)
    cases = [
        (["check", str(tmp_path / "gone.py")], "argument FILE: '"),
        (["check", str(path), "--test", "test_nope"], "argument --test: 'test_nope' is not"),
        (["check", str(path), "--timeout", "-1"], "argument --timeout: must be a number"),
    ]
    for argv, message in cases:
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        assert stop.value.code == 2
        assert message in capsys.readouterr().err


def test_the_command_line_runs_the_selected_tests(tmp_path, capsys):
    path = write(tmp_path, TINYINIT_FUNCTIONS)
    assert cli.main(["check", str(path), "--test", FAST[1], "--test", FAST[0]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "my_init.py: 2 of 2 tests passed"
    assert [line.split()[-1] for line in out[1:]] == FAST  # the card's order
