"""What the app's server and page would print that says nothing about the app, and why: the
one list of what is kept off the teacher's terminal and browser console.

Everything else the server or the page says reaches the console as it is, and the browser
tests fail on it. Each entry is a message that the installed packages print on every run
(no teacher or student did anything), that a setting of ours cannot remove without a worse
effect, and that loses nothing when it goes unprinted; the reason says which. What a setting
can remove is removed at its source instead (tinyinit.present.voila.voila_command: the
notebook signed, MathJax and the kernels' transport configured).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from ..core.arguments import instance, one_of

__all__ = ["KNOWN_NOISE", "browser_patterns", "is_noise"]


@dataclass(frozen=True)
class Noise:
    """A message kept off a console: `where` ("terminal" or "browser"), a regular expression
    `pattern` its text matches, and `why` it says nothing about the app."""

    where: str
    pattern: str
    why: str


KNOWN_NOISE = (
    Noise(
        "terminal",
        r"^The websocket_ping_timeout \(\d+\) cannot be longer than the websocket_ping_interval",
        "jupyter_server gives its websockets a ping every 30000 ms and a timeout of 90000 ms, "
        "its own keep-alive; tornado reads the same numbers as seconds for a second timer of "
        "its own, which never fires, and caps that one's timeout with this warning. A timeout "
        "equal to the interval would silence it and make jupyter_server's own timer close "
        "connections that are alive (jupyter-server/jupyter_server#1612).",
    ),
    Noise(
        "browser",
        r"^(Unsatisfied version \S+ from _JUPYTERLAB\.CORE_OUTPUT of shared singleton module "
        r"@jupyterlab/|No satisfying version \S+ of shared module @jupyterlab/\S+ found in "
        r"shared scope default\.\nAvailable versions: \S+ from _JUPYTERLAB\.CORE_OUTPUT$)",
        "Voila 0.5.13, the latest, ships JupyterLab 4.2.5's core packages; the widget "
        "extensions installed with it (jupyterlab_widgets 3.0.17's, ipympl 0.10's) were built "
        "against JupyterLab 4.5 and 4.6 and use the 4.2.5 core all the same, as their loose "
        "version ranges allow. Only widget releases older than those the app is tested with "
        "(ipywidgets below 8.1.6, ipympl below 0.10) would ask for nothing newer.",
    ),
    Noise(
        "browser",
        r"^No handler for the 'capture_scroll' message type",
        "matplotlib 3.11's web canvas tells each page it draws on whether to keep the mouse "
        "wheel (False); ipympl's page has no handler for that message and keeps the same "
        "setting as a widget property instead (capture_scroll, False).",
    ),
)


def _patterns(where: str) -> list[re.Pattern]:
    return [re.compile(n.pattern) for n in KNOWN_NOISE if n.where == where]


def is_noise(text: str, where: str = "terminal") -> bool:
    """Whether `text` is a message of KNOWN_NOISE for `where` ("terminal" or "browser").

    >>> is_noise("The websocket_ping_timeout (90000) cannot be longer than the "
    ...          "websocket_ping_interval (30000).")
    True
    >>> is_noise("Kernel started: 1f", "terminal"), is_noise("Kernel started: 1f", "browser")
    (False, False)
    """
    instance("text", text, str, "a message's text")
    one_of("where", where, ("terminal", "browser"))
    return any(p.search(text) for p in _patterns(where))


def browser_patterns() -> str:
    """The browser's patterns as a JSON list, for the page's script (the Voila template)."""
    return json.dumps([n.pattern for n in KNOWN_NOISE if n.where == "browser"])


class KnownNoise(logging.Filter):
    """A logging filter that drops the terminal's KNOWN_NOISE (Voila's logging_config)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not is_noise(record.getMessage(), "terminal")
