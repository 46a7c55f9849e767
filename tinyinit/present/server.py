"""`python -m tinyinit.present.server ARGUMENTS`: Voila, as `python -m voila ARGUMENTS` runs it,
with what its command line cannot say without a warning of its own.

tinyinit.present.voila.voila_command builds the command. Here, before Voila starts: the
server's settings for MathJax (which Voila's own options for it, deprecated, would each warn
about), given as configuration rather than as a dictionary on the command line (which
traitlets deprecates too); and the terminal's known noise (tinyinit.present.noise) kept out
of the server's log.
"""

from __future__ import annotations

import logging
import sys

from .noise import KnownNoise
from .voila import MATHJAX_CONFIG, MATHJAX_URL

__all__ = ["run_voila"]


def run_voila(argv: list[str] | None = None) -> None:
    """Run Voila with `argv` (default: this process's arguments)."""
    from traitlets.config import Config
    from voila.app import Voila

    logging.getLogger("tornado.general").addFilter(KnownNoise())
    config = Config()
    config.Voila.tornado_settings = {"mathjax_url": MATHJAX_URL, "mathjax_config": MATHJAX_CONFIG}
    Voila.launch_instance(sys.argv[1:] if argv is None else argv, config=config)


if __name__ == "__main__":
    run_voila()
