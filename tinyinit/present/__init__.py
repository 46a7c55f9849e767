"""Presentation mode: the suite's live explorers as one app for a projector.

    make present          # Voila serves apps/present.ipynb: controls and plots, no code

    %matplotlib widget    # or in a notebook
    from tinyinit.present import presentation
    presentation()

Made for a lecture hall: the whole plot in view at 1280x720 (the common
projector) and at 1920x1080, the key number in large type beside it, thick
lines and high contrast. The page reports its size (`PresenterKeys`) and the
plot takes what is left beside a column of the most used controls; the type
grows with the screen (`Look`).

A dropdown offers the classic demonstrations; choosing one sets every control
of the explorer it needs, and a demonstration told in two steps ("gain 1", then
"gain 5/3") has a button per step; its steps share one y axis, and a comparison
names each curve where it ends and says in the headline how far apart they end.
A presenter clicker drives it: PageDown (or →) goes to the next step, and after
the last step to the next demonstration; PageUp (or ←) goes back; Home and End go
to the first and the last step; B blanks the screen. The arrows typed into a
focused control (a slider, a menu) keep their meaning there; Esc takes the focus
off it. The controls stay live, so the class can ask "and at depth 50?" and the
slider answers. Every step's curves are computed before it is shown, and in the
background as soon as the app is on a page.

With a share URL (`python -m tinyinit present --share-url URL`), a tab shows
that link and its QR code, where students open the same explorer.

The explorers are the suite's own (`tinyinit.views.explorers.DepthExplorer`,
`tinyinit.views.explorers.ResidualStreamExplorer`, `tinyinit.views.live_training.TrainingExplorer`),
restyled: what the class sees is what the notebooks show.

One module a job: `demonstrations` (the table of steps), `look` (sizes for a
projector, the style sheet projector.css; the figures' projector type is
tinyinit.views.projector's, shared with `python -m tinyinit figure --slide`), `keys` (the
clicker, keys.js), `share` (the students' link), `explorers` (the explorers
restyled), `app` (`Presentation`) and `voila` (serving it, with the template in
voila_template/: idle kernels culled, the server stopped with its kernels on Ctrl+C
or SIGTERM), `server` (Voila as it runs the app) and `noise` (what the installed packages
print that is kept off the teacher's consoles, and why).
"""

from __future__ import annotations

import os

from .._extras import extra

with extra("present", "the presentation app"):  # checked before the explorer asks for `lab`
    import anywidget  # noqa: F401
    import ipywidgets  # noqa: F401
    import traitlets  # noqa: F401

from ..views.projector import PROJECTOR_FONTS, PROJECTOR_LINE_WIDTH, projector_style, style_figure
from .app import RULE, SHARE_TITLE, WARM, Presentation
from .demonstrations import PRESETS, Preset, Step
from .explorers import depth_headline
from .keys import PresenterKeys
from .look import Look
from .share import SHARE_URL_VARIABLE, check_share_url, qr_svg
from .voila import (
    OFFLINE_TEMPLATE,
    REPO_APP,
    app_notebook,
    app_path,
    offline_template,
    serve_voila,
    voila_command,
)

__all__ = [
    "OFFLINE_TEMPLATE",
    "PRESETS",
    "PROJECTOR_FONTS",
    "PROJECTOR_LINE_WIDTH",
    "REPO_APP",
    "RULE",
    "SHARE_TITLE",
    "SHARE_URL_VARIABLE",
    "WARM",
    "Look",
    "Preset",
    "Presentation",
    "PresenterKeys",
    "Step",
    "app_notebook",
    "app_path",
    "check_share_url",
    "depth_headline",
    "presentation",
    "projector_style",
    "qr_svg",
    "style_figure",
    "offline_template",
    "serve_voila",
    "voila_command",
]


def presentation(share_url: str | None = None, **kwargs) -> Presentation:
    """The presentation app (display it, or let Voila serve a notebook that returns it).

    share_url: the address where students open the same explorer (a Binder or
    hub link), shown with its QR code in a tab of its own; by default the
    environment variable TINYINIT_SHARE_URL, which `python -m tinyinit present
    --share-url URL` sets for the app it serves.

    >>> app = presentation()
    >>> app.choose("Kaiming + ReLU: kept")
    >>> app.depth.initializer.value, round(app.depth.gain.value, 4), app.tabs.selected_index
    ('kaiming_normal', 1.4142, 0)
    """
    if share_url is None:
        share_url = os.environ.get(SHARE_URL_VARIABLE) or None
    else:
        share_url = check_share_url(share_url)
    return Presentation(share_url=share_url, **kwargs)
