"""`check_init` and `python -m tinyinit check` judge a student's file as the module card does.

Each test writes a small file and reads the verdict: passed on a file written from the card
alone and on the teacher's my_init.py; the card's test and pitfall named on each mutant;
"not written yet" on the student edition's stubs; a student's exception reported with its
line; an endless loop stopped. And the verdict holds whatever the file does: it runs in a
process of its own that only answers calls, so patching the checker, writing to its pipes,
exiting, printing megabytes or handing in tinyinit's own functions changes nothing but the
report of what the student's code did.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from fnmatch import fnmatch
from pathlib import Path

import mutants
import pytest
from mutants import MUTANTS
from scripts_loader import FIXTURES, ROOT, load_script

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from tinyinit import PCG32, cli
from tinyinit.course import checker
from tinyinit.course.catalog import NAMES
from tinyinit.course.checker import (
    ERROR,
    FAILED,
    NOT_WRITTEN,
    PASSED,
    TIMED_OUT,
    NotPassed,
    NotWrittenYet,
    Report,
    Screening,
    StudentModule,
    TimedOut,
    UnreadableFile,
    check_init,
    screen,
)
from tinyinit.course.pitfalls import CARD_PITFALLS, PITFALLS

TEACHER = ROOT / "notebooks" / "my_init.py"
CARD_ONLY = FIXTURES / "card_only_init.py"
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


def check_command(path: Path, *options: str, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "tinyinit", "check", str(path), *options],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd or path.parent,
    )


def test_a_file_written_from_the_card_alone_passes_every_test_through_the_command_line(tmp_path):
    path = write(tmp_path, CARD_ONLY.read_text())
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "my_init.py: 11 of 11 tests passed"
    passed = [line for line in run.stdout.splitlines()[1:] if not line.startswith("    ")]
    assert [line.split()[-1] for line in passed] == list(NAMES)
    assert all(line.startswith("  ✓ passed ") for line in passed)
    # torch refuses a slope that is not a number; the card does not ask it: advice, not failure
    assert "advice: calculate_gain('leaky_relu', '0.2'): torch raises ValueError" in run.stdout


def test_the_teachers_my_init_passes_every_test():
    report = check_init(TEACHER)
    assert report.ok, report
    assert report.names == NAMES
    assert report.seconds < 120


def test_a_file_may_import_the_generator_by_its_modules_former_names_or_present_ones(tmp_path):
    # The card's examples say `from tinyinit.pcg32 import PCG32`, from before the package had
    # layers; both spellings reach the same generator in the student's process.
    imports = "from tinyinit import PCG32, normal, uniforms\n"
    source = TEACHER.read_text()
    assert imports in source
    for spelling in (
        "from tinyinit.pcg32 import PCG32\nfrom tinyinit.distributions import normal, uniforms\n",
        "from tinyinit.core.pcg32 import PCG32\n"
        "from tinyinit.core.distributions import normal, uniforms\n"
        "import tinyinit.core.pcg32\nassert tinyinit.core.pcg32.PCG32 is PCG32\n",
    ):
        path = write(tmp_path, source.replace(imports, spelling))
        assert screen(path.read_text(), path).borrowed == {}
        report = check_init(path, tests=FAST)
        assert report.ok, report


def test_the_teachers_my_init_imports_no_initializer_of_tinyinit():
    source = TEACHER.read_text()
    assert "from tinyinit import PCG32, normal, uniforms\n" in source
    assert "tinyinit.core.init" not in source and "import tinyinit\n" not in source
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
def test_each_mutant_fails_the_cards_test_naming_its_pitfall(name, tmp_path):
    tests = CAUGHT_BY[name]
    path = mutants.write(name, tmp_path)
    report = check_init(path, tests=[*tests, "test_shapes_and_dtype"])
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
    (tmp_path / "s01").mkdir()
    path = write(tmp_path, stubbed(TEACHER.read_text(), keep=("fans", "calculate_gain")))
    fans_tests = ["test_fans_and_gains_match_torch"]
    passed = check_init(path, tests=fans_tests)
    assert passed.require() is passed
    with pytest.raises(NotWrittenYet) as waiting:  # a NotImplementedError: not answered yet
        check_init(path, tests=[*fans_tests, "test_shapes_and_dtype"]).require()
    assert "1 not written yet" in str(waiting.value)
    assert isinstance(waiting.value, NotImplementedError)
    with pytest.raises(NotPassed) as failed:  # an AssertionError: a grader's failed cell
        check_init(mutants.write("s01", tmp_path / "s01"), tests=fans_tests).require()
    assert "pitfall s01" in str(failed.value) and isinstance(failed.value, AssertionError)
    shown = failed.value._render_traceback_()
    assert len(shown) == 1 and "test_fans_and_gains_match_torch" in shown[0]  # no traceback


def only(names: tuple[str, ...], source: str = "") -> str:
    """The card-only file with just these functions (and its imports)."""
    text = source or CARD_ONLY.read_text()
    keep = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    blocks = re.split(r"\n(?=def )", text)
    keep += [b.rstrip() for b in blocks if b.startswith("def ") and b.split("(")[0][4:] in names]
    return "\n\n\n".join(["\n".join(keep[:3]), *keep[3:]]) + "\n"


def test_a_missing_function_is_not_written_yet(tmp_path):
    path = write(tmp_path, only(("fans", "calculate_gain")))
    report = check_init(path, tests=FAST)
    assert report[FAST[0]].status == PASSED
    assert report[FAST[1]].status == NOT_WRITTEN
    assert report[FAST[1]].measured == "my_init.py has no function scaled_residual_std yet"
    assert report.functions["fans"] == "yours" and report.functions["normal_init"] == "missing"


# --- a student's mistakes never crash the check --------------------------------------------


# The teacher's file with three functions written again, wrong: the later def is the one used.
BROKEN = TEACHER.read_text() + (
    "\n"
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
    report = check_init(path, tests=["test_scaled_residual_keeps_the_stream_bounded"], timeout=2)
    result = report["test_scaled_residual_keeps_the_stream_bounded"]
    assert result.status == ERROR
    assert result.measured == (
        "your code raised ZeroDivisionError: float division by zero "
        "(in scaled_residual_std(0.02, 1))"
    )
    assert result.where == f"my_init.py:{line_of(path, '# 0 for L = 1')} in scaled_residual_std"
    assert result.code.startswith("return base_std / math.sqrt(2 * n_layers)")
    assert "Traceback" not in str(report)


def test_a_function_returning_none_fails_saying_so_and_its_prints_are_kept(tmp_path):
    path = write(tmp_path, BROKEN)
    report = check_init(path, tests=["test_tanh_signal_survives_with_xavier"], timeout=2)
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
    loop = line_of(path, "while True:")
    # stopped the first time it was called (to see whether it is written), then not again
    for test in tests[:2]:
        stopped = report[test]
        assert stopped.status == TIMED_OUT
        assert stopped.measured == (
            "not run: xavier_uniform did not finish in its first call (stopped after 1 s)"
        )
        assert stopped.where in {f"my_init.py:{n} in xavier_uniform" for n in (loop, loop + 1)}
    assert report[FAST[0]].status == PASSED  # run in a new process after the stuck one
    assert elapsed < 1.0 + 15  # one time limit, not one per test that needs the function


SLOW_ON_ONE_SHAPE = TEACHER.read_text() + (
    "\n"
    "\n"
    "def xavier_normal(shape, gain, rng):\n"
    "    while tuple(shape) == (5, 7):  # the probe's (4, 3) finishes, a test's (5, 7) does not\n"
    "        pass\n"
    "    return normal_init(shape, gain * math.sqrt(2 / sum(fans(shape))), rng)\n"
)


def test_a_test_that_does_not_finish_is_stopped_where_the_code_was(tmp_path):
    path = write(tmp_path, SLOW_ON_ONE_SHAPE)
    tests = ["test_normal_inits_draw_spec_normals_in_c_order", "test_same_seed_same_weights"]
    report = check_init(path, tests=[*tests, FAST[0]], timeout=1.0)
    stopped = report[tests[0]]
    assert stopped.status == TIMED_OUT, report
    assert stopped.measured == "stopped after 1 s: the test did not finish"
    assert stopped.where.startswith("my_init.py:") and stopped.where.endswith("in xavier_normal")
    assert stopped.code in (
        "while tuple(shape) == (5, 7):  # the probe's (4, 3) finishes, a test's (5, 7) does not",
        "pass",
    )
    later = report[tests[1]]
    assert later.status == TIMED_OUT
    assert later.measured.startswith(f"not run: xavier_normal did not finish in {tests[0]}")
    assert report[FAST[0]].status == PASSED


def test_a_test_whose_calls_used_up_its_time_is_stopped_not_called_a_crash(tmp_path):
    # Each call answered in time, but the last one in the time's last moments: the test has no
    # time left for its next call. That call is not sent (a process asked to answer within a
    # negative time ended with exit status 1, reported as the student's crash).
    path = write(tmp_path, TEACHER.read_text())
    student = StudentModule(path, 5.0, screen(path.read_text(), path))
    try:
        student.begin(5.0, FAST[1])
        assert student.scaled_residual_std(0.02, 12) > 0
        student.left = 0.0
        with pytest.raises(TimedOut):
            student.normal_init((3,), 0.02, PCG32(0))
        assert student.stuck == {}  # no function of the student's was stuck
        student.begin(5.0, FAST[0])
        assert student.normal_init((3,), 0.02, PCG32(0)).shape == (3,)  # the same process
    finally:
        student.close()


LOOPS_WHEN_DIAGNOSED = TEACHER.read_text() + (
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
        "my_init.py could not be run, so no test ran\n"
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
    path = write(
        tmp_path, "from tinyinit.course.checker import check_init\n\ncheck_init('my_init.py')\n"
    )
    report = check_init(path)
    assert report.problem == (
        "importing it called tinyinit's check_init (tinyinit.course.checker.check_init); "
        "the checker checks your functions, so it cannot run a file that runs tinyinit's\n"
        "at my_init.py:3 in <module>: check_init('my_init.py')"
    )


# --- the report reads well -------------------------------------------------------------------


def test_the_report_says_each_verdict_in_words_and_in_html(tmp_path):
    path = mutants.write("s08", tmp_path, "s08.py")
    report = check_init(path, tests=FAST)
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
    assert report == check_init(path, tests=FAST)  # no times in a verdict


def test_ok_only_when_every_selected_test_passed():
    assert not Report("x.py").ok  # nothing run
    assert not Report("x.py", problem="SyntaxError").ok


def test_the_torch_table_the_catalog_reads_ships_with_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = ROOT / "tinyinit" / "data" / "init_torch.json"
    assert data.is_file()
    package = ".".join(data.parent.relative_to(ROOT).parts)  # tinyinit.data
    assert package in config["packages"]
    assert any(fnmatch(data.name, pattern) for pattern in config["package-data"][package])


# --- arguments -------------------------------------------------------------------------------


def test_bad_arguments_name_the_argument_and_what_is_accepted(tmp_path):
    with pytest.raises(UnreadableFile, match=r"path 'nothere.py' does not exist"):
        check_init("nothere.py")
    with pytest.raises(UnreadableFile, match=r"is a folder, not a file"):
        check_init(tmp_path)
    path = write(tmp_path, CARD_ONLY.read_text())
    with pytest.raises(
        ValueError,
        match=r"tests must be None or a list of the card's test names "
        r"\(test_hand_example_linear_4x3, .*\), got \['nope'\]",
    ):
        check_init(path, tests=["nope"])
    for bad in (0, -1, 601, float("nan"), True, "30"):
        with pytest.raises(
            ValueError,
            match=r"timeout must be a finite real number > 0 and "
            r"<= 600.0, got ",
        ):
            check_init(path, timeout=bad)
    with pytest.raises(UnreadableFile, match=r"path must be a Python file ending in .py"):
        check_init(write(tmp_path, "", "notes.txt"))
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\n")
    with pytest.raises(UnreadableFile, match=r"is not text in UTF-8"):
        check_init(tmp_path / "latin1.py")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gone.py"], "path 'gone.py' does not exist"),
        (["."], "is a folder, not a file"),
        (["notes.txt"], "path must be a Python file ending in .py"),
        (["latin1.py"], "is not text in UTF-8 (byte 5): save it as UTF-8"),
        (["my_init.py", "--test", "test_nope"], "argument --test: 'test_nope' is not"),
        (["my_init.py", "--timeout", "-1"], "argument --timeout: '-1' is not a number of seconds"),
        (
            ["my_init.py", "--timeout", "100000"],
            "'100000' is not a number of seconds > 0 and <= 600",
        ),
    ],
)
def test_the_command_line_says_a_usage_error_in_one_line_and_exits_2(tmp_path, argv, message):
    write(tmp_path, CARD_ONLY.read_text())
    write(tmp_path, "", "notes.txt")
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\n")
    run = check_command(Path(argv[0]), *argv[1:], cwd=tmp_path)
    assert run.returncode == 2, run
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert run.stdout == ""


def test_the_command_line_runs_the_selected_tests(tmp_path, capsys):
    path = write(tmp_path, CARD_ONLY.read_text())
    assert cli.main(["check", str(path), "--test", FAST[1], "--test", FAST[0]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "my_init.py: 2 of 2 tests passed"
    assert [line.split()[-1] for line in out[1:] if not line.startswith("    ")] == FAST


# --- the verdict cannot be forged ------------------------------------------------------------

STUBS = stubbed(TEACHER.read_text())  # nothing written: every test must say so


def no_traceback(run) -> None:
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr


def test_patching_the_checker_from_the_file_changes_nothing(tmp_path):
    path = write(
        tmp_path,
        STUBS + "\nimport tinyinit.course.catalog as catalog\n"
        "import tinyinit.course.checker as checker\n"
        "catalog.CATALOG = ()\n"
        "catalog.check_relu_signal_survives_20_layers = lambda impl: None\n"
        "checker.run_test = lambda *args: None\n"
        "checker.PASSED = 'failed'\n",
    )
    run = check_command(path)
    assert run.returncode == 1, run.stdout
    assert run.stdout.splitlines()[0] == "my_init.py: 0 of 11 tests passed; 11 not written yet"
    no_traceback(run)


def test_result_lines_printed_by_the_file_and_an_exit_are_the_students(tmp_path):
    forged = "".join(
        f'print(\'{{"test": "{name}", "status": "passed", "id": 1, "ready": true}}\')\n'
        for name in NAMES
    )
    path = write(tmp_path, STUBS + "\n" + forged + "raise SystemExit(0)\n")
    run = check_command(path)
    assert run.returncode == 1
    assert "importing it raised SystemExit: 0" in run.stdout
    no_traceback(run)


@pytest.mark.parametrize(
    ("source", "refused"),
    [
        ("from tinyinit.core.init import *\n", "this is tinyinit's kaiming_normal, not yours"),
        ("from tinyinit import kaiming_normal as k\nkaiming_normal = k\n", "binds kaiming_normal"),
        (
            "import tinyinit\n"
            "def kaiming_normal(shape, fan_mode, nonlinearity, rng):\n"
            "    return tinyinit.kaiming_normal(shape, fan_mode, nonlinearity, rng)\n",
            "your kaiming_normal calls tinyinit's kaiming_normal "
            "(my_init.py:{line} in kaiming_normal)",
        ),
    ],
    ids=["star import", "alias", "wrapper"],
)
def test_tinyinits_own_functions_handed_in_are_refused(tmp_path, source, refused):
    path = write(
        tmp_path, CARD_ONLY.read_text().replace("def kaiming_normal(", "def _mine(") + source
    )
    run = check_command(path, "--test", "test_relu_signal_survives_20_layers", "--test", FAST[1])
    assert run.returncode == 1, run.stdout
    if "{line}" in refused:
        refused = refused.format(line=line_of(path, "return tinyinit.kaiming_normal"))
    assert refused in run.stdout, run.stdout
    assert "hint: write kaiming_normal yourself; from tinyinit use only PCG32, normal" in run.stdout
    no_traceback(run)


@pytest.mark.parametrize(
    ("line", "used"),
    [
        ("import os", "os"),
        ("from importlib import import_module", "importlib"),
        ("fans.__code__ = calculate_gain.__code__", ".__code__"),
        ("exec('x = 1')", "exec"),
        ("np.savetxt('/tmp/x', [1])", ".savetxt"),
    ],
)
def test_a_file_that_reaches_outside_its_functions_is_not_run(tmp_path, line, used):
    path = write(tmp_path, CARD_ONLY.read_text() + line + "\n")
    report = check_init(path)
    assert not report.ok and report.results == ()
    assert report.problem.splitlines()[0] == f"my_init.py:{line_of(path, line)} uses {used}"


@pytest.mark.parametrize("isolated", [False, True], ids=["plain process", "sandbox"])
def test_the_student_process_cannot_write_files(tmp_path, monkeypatch, request, isolated):
    """Even past the screen (here switched off), no file is written: in the sandbox the file
    system is read-only; in a plain process the size limit of a file is 0."""
    if isolated:
        request.getfixturevalue("sandbox")
    monkeypatch.setattr(checker, "screen", lambda source, file: Screening())
    target = tmp_path / "verdict.txt"
    path = write(
        tmp_path,
        CARD_ONLY.read_text()
        + f"\nwith open({str(target)!r}, 'w') as f:\n    n = f.write('11 of 11 tests passed')\n",
    )
    report = check_init(path, tests=FAST, sandbox=isolated)
    assert ("Read-only file system" if isolated else "File too large") in report.problem
    assert not target.exists() or target.read_text() == ""


FORGER = (
    "import os\n"
    "def forge(text):\n"
    "    for fd in range(1, 64):\n"
    "        try:\n"
    "            os.write(fd, text.encode())\n"
    "        except OSError:\n"
    "            pass\n"
)


@pytest.mark.parametrize(
    "attack",
    [
        # an answer for every call to come, then gone before the real ones
        "forge('{\"ready\": true, \"functions\": {}}\\n' + ''.join("
        '\'{"id": %d, "value": {"t": "tuple", "v": []}, "rngs": []}\\n\' % i '
        "for i in range(1, 500)))\nos._exit(0)\n",
        # garbage, and a line of the wrong shape, while answering
        "_fans = fans\n"
        "def fans(shape):\n"
        '    forge(\'garbage\\n{"id": "x", "value": 3}\\n[1, 2]\\n\')\n'
        "    return _fans(shape)\n",
        # the process ends in the middle of a test
        "def scaled_residual_std(base_std, n_layers):\n    os._exit(0)\n",
    ],
    ids=["forged answers and exit", "garbled answers", "exit in a call"],
)
def test_what_the_student_process_writes_or_does_is_reported_never_believed(
    tmp_path, monkeypatch, attack
):
    monkeypatch.setattr(checker, "screen", lambda source, file: Screening())
    path = write(tmp_path, CARD_ONLY.read_text() + FORGER + attack)
    report = check_init(path, tests=FAST)
    assert not report.ok, report
    text = str(report)
    assert "Traceback" not in text
    assert (
        "the process" in text
        or "not the one to this call" in text
        or "not one the checker sent" in text
        or "not readable" in text
    ), text


def test_a_pipe_closed_under_its_reader_ends_the_answers_without_a_traceback():
    """`close` may close the pipes while the reading threads still read them (a process the
    student's code started can hold them open): the readers end, quietly."""
    reader, writer = os.pipe()
    with os.fdopen(reader, "rb") as pipe, os.fdopen(writer, "wb") as out:
        out.write(b'{"id": 1}\n')
        out.flush()
        process = checker._Process.__new__(checker._Process)
        process.answers, process.trace = checker.queue.Queue(), checker._Bounded(100, keep="last")
        pipe.close()
        failed: list[BaseException] = []
        previous = threading.excepthook
        threading.excepthook = lambda hook: failed.append(hook.exc_value)
        try:
            for read in (process._read_answers, process._drain):
                thread = threading.Thread(target=read, args=(pipe,))
                thread.start()
                thread.join(timeout=10)
        finally:
            threading.excepthook = previous
    assert failed == []
    assert process.answers.get_nowait() is checker._EOF


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("    print('x' * 5_000_000)\n    raise ValueError('y' * 5_000_000)\n", "more characters"),
        ("    return object()\n", "returned <object: not a plain value>, not a tuple"),
        ("    return np.array([shape], dtype=object)\n", "returned <ndarray:"),
        ("    return fans(shape)\n", "RecursionError"),
        ("    return (x for x in shape)\n", "returned <generator:"),
    ],
    ids=["megabytes", "object", "object array", "recursion", "generator"],
)
def test_a_strange_answer_is_reported_as_the_students(tmp_path, body, shown):
    source = only(("calculate_gain", "scaled_residual_std", "normal_init"))
    path = write(tmp_path, source + "\n\ndef fans(shape):\n" + body)
    run = check_command(path, "--test", "test_hand_example_linear_4x3", "--test", FAST[1])
    assert run.returncode == 1
    assert shown in run.stdout, run.stdout
    assert len(run.stdout) < 20_000  # the student's megabytes are cut, not copied
    assert run.stdout.splitlines()[-2:] != []  # the other test still ran
    assert "✓ passed           test_scaled_residual_keeps_the_stream_bounded" in run.stdout
    no_traceback(run)


def test_without_a_sandbox_a_process_left_holding_the_pipes_does_not_hold_the_check(
    tmp_path, monkeypatch
):
    """A plain process's child that leaves its group and keeps the pipes open lives on (only
    the sandbox ends it), but the check ends without waiting for it."""
    monkeypatch.setattr(checker, "screen", lambda source, file: Screening())
    marker = f"{os.getpid()}.{time.monotonic_ns() % 10**6}"
    path = write(
        tmp_path,
        CARD_ONLY.read_text()
        + "import os\n"
        + "if os.fork() == 0:\n"
        + "    os.setsid()\n"
        + f"    os.execv('/usr/bin/sleep', ['sleep', '{marker}'])\n",
    )
    start = time.monotonic()
    try:
        report = check_init(path, tests=FAST, sandbox=False)
        assert time.monotonic() - start < 60
        assert report.ok, report
    finally:
        subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)
