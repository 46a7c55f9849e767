"""The card's pitfalls (M07.3, section 5), each made in the teacher's my_init.py.

A mutant is notebooks/my_init.py, the file a student writes, with the solutions in and
the few lines of one pitfall changed the way a student gets them wrong: a student's file
with exactly that mistake. tests/test_mutants.py shows that the catalog test the card names
catches it, tests/course/test_pitfalls.py that the checker names it, tests/course/test_checker.py
that
`python -m tinyinit check` reports it, and tests/test_student.py that the notebooks'
experiments show it. Get one as source text (`source`), as a file (`write`) or as a module
(`load`).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from types import ModuleType

MY_INIT = Path(__file__).resolve().parents[2] / "notebooks" / "my_init.py"

# name: (the pitfall, its symptom, the card's test that catches it,
#        [(the line as the teacher wrote it, as the mutant has it, how many times)])
EDITS = {
    "s01": (
        "reading an (out, in) weight as (in, out): fan-in and fan-out swap",
        "non-square layers get the wrong scale",
        "test_hand_example_linear_4x3, test_fans_and_gains_match_torch",
        [
            (
                "fan_in, fan_out = shape[1] * r, shape[0] * r",
                "fan_in, fan_out = shape[0] * r, shape[1] * r",
                1,
            )
        ],
    ),
    "s02": (
        "ignoring the kernel dimensions",
        "a 3x3 convolution gets 9 times the variance",
        "test_fans_and_gains_match_torch",
        [("r = math.prod(shape[2:])", "r = 1", 1)],
    ),
    "s03": (
        "sqrt(2 / (fan_in + fan_out)) as the uniform bound",
        "the uniform's variance is 3 times too small",
        "test_empirical_variance_matches_the_formula",
        [
            (
                "a = gain * math.sqrt(6 / (fan_in + fan_out))",
                "a = gain * math.sqrt(2 / (fan_in + fan_out))",
                1,
            )
        ],
    ),
    "s05": (
        "ReLU gain 2 (a variance) instead of sqrt(2) (a standard deviation)",
        "the mean square doubles per ReLU layer",
        "test_relu_signal_survives_20_layers",
        [('"relu": math.sqrt(2.0),', '"relu": 2.0,', 1)],
    ),
    "s08": (
        "GPT-2's residual std base / sqrt(L) instead of base / sqrt(2L)",
        "the stream ends twice as large",
        "test_scaled_residual_keeps_the_stream_bounded",
        [("return base_std / math.sqrt(2 * n_layers)", "return base_std / math.sqrt(n_layers)", 1)],
    ),
    "s09": (
        "filling in column-major order",
        "same distribution, other weights for a seed",
        "test_normal_inits_draw_spec_normals_in_c_order",
        [
            (
                ".astype(np.float32).reshape(shape)",
                '.astype(np.float32).reshape(shape, order="F").copy()',
                4,
            )
        ],
    ),
    "s13": (
        "a new generator inside the initializer",
        "every layer the same, and the seed does nothing",
        "test_same_seed_same_weights",
        [
            ("uniforms(rng, math.prod(shape))", "uniforms(PCG32(0), math.prod(shape))", 1),
            ("normal(rng, math.prod(shape))", "normal(PCG32(0), math.prod(shape))", 3),
        ],
    ),
}  # fmt: skip
MUTANTS = {name: f"{pitfall}: {symptom}" for name, (pitfall, symptom, _, _) in EDITS.items()}


def source(name: str) -> str:
    """my_init.py with mutant `name`'s pitfall; each edit must match exactly as often as said."""
    text = MY_INIT.read_text(encoding="utf-8")
    for old, new, count in EDITS[name][3]:
        found = text.count(old)
        if found != count:
            raise AssertionError(f"{name}: {old!r} is in my_init.py {found} times, not {count}")
        text = text.replace(old, new)
    pitfall, symptom, caught_by, _ = EDITS[name]
    return f'"""{name}: {pitfall}.\n\nSymptom: {symptom}.\nCaught by: {caught_by}.\n"""\n' + text


def write(name: str, folder: Path, filename: str = "my_init.py") -> Path:
    """Mutant `name` as a student's file in `folder`."""
    path = Path(folder) / filename
    path.write_text(source(name), encoding="utf-8")
    return path


def load(name: str) -> ModuleType:
    """Mutant `name` as a module, imported from a file of its own."""
    path = write(name, Path(tempfile.mkdtemp(prefix=f"mutant-{name}-")))
    spec = importlib.util.spec_from_file_location(f"mutant_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_teacher() -> ModuleType:
    """The teacher's my_init.py itself, as a module: every mutant minus its pitfall."""
    spec = importlib.util.spec_from_file_location("teacher_my_init", MY_INIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
