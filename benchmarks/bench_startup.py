"""What a Python process of this environment spends on its imports before it does anything.

    python benchmarks/bench_startup.py             # 5 rounds
    python benchmarks/bench_startup.py --rounds 9

Every kernel a notebook starts imports ipykernel, matplotlib, ipywidgets, ipympl and tinyinit;
every Jupyter server (JupyterLab, Voila, nbgrader's, Sphinx's notebook reader) imports
jupyter_server or nbformat, and with them jsonschema. Two things decide what that costs:

* bytecode: `make` installs with it compiled (uv's --compile-bytecode, as pip does). The peer,
  in the same round, is the same imports with the compiled files out of reach
  (PYTHONPYCACHEPREFIX names an empty folder, PYTHONDONTWRITEBYTECODE keeps it empty): what a
  Python that may not write its bytecode pays at every start without it.
* jsonschema's format checkers: from 4.25 on, jsonschema imports rfc3987-syntax, which builds
  its Earley parsers at import. pyproject.toml keeps jsonschema below 4.25; where
  rfc3987-syntax is installed anyway, its import is timed alone, as the peer.

CPU seconds (user + sys) of each child process, the median over the rounds; the rounds
alternate the two sides, so a machine that slows down slows both.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile

KERNEL = (
    "import ipykernel.kernelapp, matplotlib.pyplot, ipywidgets, ipympl, tinyinit.views.explorers"
)
SERVER = "import jupyter_server.serverapp, nbformat.validator"
FORMAT_CHECKERS = "import rfc3987_syntax.syntax_helpers"


def cpu_seconds(code: str, env: dict[str, str]) -> float:
    """CPU seconds of a fresh `python -c code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(name: str, code: str, peer_code: str, peer_env: dict[str, str], rounds: int) -> None:
    env = dict(os.environ)
    cpu_seconds(code, env)  # warm the file cache for both sides
    ours, peer = [], []
    for _ in range(rounds):
        ours.append(cpu_seconds(code, env))
        peer.append(cpu_seconds(peer_code, peer_env))
    ours_s, peer_s = statistics.median(ours), statistics.median(peer)
    ratios = sorted(p / o for p, o in zip(peer, ours))
    print(
        f"{name}: {ours_s:.2f} s of CPU; peer {peer_s:.2f} s; peer / ours median "
        f"{statistics.median(ratios):.2f} (min {ratios[0]:.2f}, max {ratios[-1]:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each pair (default 5)")
    args = parser.parse_args()
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs, {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory() as empty:
        no_bytecode = dict(os.environ, PYTHONPYCACHEPREFIX=empty, PYTHONDONTWRITEBYTECODE="1")
        for name, code in [("a kernel's imports", KERNEL), ("a Jupyter server's", SERVER)]:
            compare(f"{name}, compiled", code, code, no_bytecode, args.rounds)
    server_modules = subprocess.run(
        [sys.executable, "-c", f"{SERVER}; import sys; print('rfc3987_syntax' in sys.modules)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    print(f"a Jupyter server imports rfc3987-syntax: {server_modules}")
    if importlib.util.find_spec("rfc3987_syntax") is None:
        print("rfc3987-syntax is not installed (jsonschema < 4.25 does not ask for it)")
    else:
        compare(
            "a Jupyter server's, against it plus rfc3987-syntax's parsers",
            SERVER,
            f"{SERVER}; {FORMAT_CHECKERS}",
            dict(os.environ),
            args.rounds,
        )


if __name__ == "__main__":
    main()
