"""Sphinx configuration of the course site: `make site` (scripts/build_site.py) builds with it.

The stack is Jupyter Book 1's: Sphinx, MyST-NB (notebooks as pages, their stored
outputs only: nothing is executed at build time) and sphinx-book-theme (contents
sidebar, previous/next, search, download and launch buttons). The sources Sphinx
reads are assembled by scripts/build_site.py into build/site-work/src: the edition's
notebooks, an index.md written from the course (scripts/course_time.py and each
notebook's first cells) and the student edition. What the site loads comes with it
(course_site.py copies MathJax, require.js and the widget renderer into _static). The
edition and the repository and hub addresses are settings build_site.py passes
(`-D site_edition=... site_repository=... site_hub=...`, course_site.py applies them).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

project = "tinyinit"
html_title = "tinyinit: how large should the initial weights be?"
author = "the tinyinit authors"
copyright = "the tinyinit authors, MIT License"
language = "en"

extensions = ["myst_nb", "course_site"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "student/**", "downloads/**"]
# student/ and downloads/ ship as downloads, not as pages (see course_site.edition_downloads).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
# The notebooks put $$...$$ inside paragraphs, as Jupyter allows.
myst_dmath_double_inline = True
smartquotes = False  # the text as the notebooks write it (torch's, not torch’s)

# Stored outputs only: the notebooks are committed executed, and a build must not need a kernel.
nb_execution_mode = "off"
# Widgets (ipywidgets, ipympl's figure, anywidget) load from the site, not from a CDN.
nb_ipywidgets_js = {
    "require.min.js": {},
    "tinyinit-widgets.js": {},
    "html-manager/embed-amd.js": {},
}

# MathJax 3 from the npm package mathjax (`make site` installs it into build/site-js, and
# course_site.py copies what the pages load into _static/mathjax), configured in
# mathjax_config.js: which classes it typesets, SVG output, and MathJax 2's call that the
# widget renderer makes. MyST's own setting of those classes is left out (it would drop
# the outputs' and the widgets' formulas).
mathjax_path = "mathjax/tex-svg-full.js"
mathjax_config_path = "mathjax_config.js"
myst_update_mathjax = False

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
templates_path = ["_templates"]
html_css_files = ["tinyinit-site.css"]
# Sliders named, readouts live (tinyinit/views/a11y.js, copied beside it by course_site).
html_js_files = [("tinyinit-site.js", {"type": "module"})]
html_sourcelink_suffix = ""  # the download button gives 01_x.ipynb, not 01_x.ipynb.txt
html_last_updated_fmt = None
# Accessible code colours (accessible-pygments, WCAG AA contrast in light and dark).
pygments_style = "a11y-high-contrast-light"
pygments_dark_style = "a11y-high-contrast-dark"

# The repository, Binder and hub buttons come from build_site.py's --repository and --hub
# (course_site.configure_edition); without them there are none.
html_theme_options = {
    "use_repository_button": False,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "launch_buttons": {},
    # One search box: the sidebar's (and, on a phone, the header's search button); the
    # theme's header bar would show a second, identical one.
    "navbar_persistent": [],
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "pygments_light_style": pygments_style,
    "pygments_dark_style": pygments_dark_style,
}
