"""The presentation app serves its own MathJax and Font Awesome (no CDN), as Voila runs it."""

from __future__ import annotations

import re
from pathlib import Path

from tinyinit.present import OFFLINE_TEMPLATE, offline_template, voila_command
from tinyinit.present.voila import MATHJAX_URL


def test_offline_template_serves_mathjax_and_font_awesome_itself(tmp_path):
    folder = offline_template(tmp_path / OFFLINE_TEMPLATE)
    index = (folder / "index.html.j2").read_text()
    assert not re.search(r"https?://", index), "the template links another host"
    assert "voila/static/fontawesome/css/" in index and "all.min.css" in index
    assert "super.super()" in index  # Voila's lab CSS, without its CDN links
    static = folder / "static"
    assert (static / "mathjax" / "MathJax.js").is_file()
    assert (static / "mathjax" / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()
    assert (static / "fontawesome" / "css" / "v4-shims.min.css").is_file()
    assert any((static / "fontawesome" / "webfonts").glob("fa-solid-900.*"))
    # Copies, not links: Voila's static handler refuses what resolves outside its folders.
    assert not any(p.is_symlink() for p in static.rglob("*"))


def test_voila_command_uses_the_offline_template_and_local_mathjax():
    command = voila_command(Path("app.ipynb"), port=9999, browser=False)
    assert f"--template={OFFLINE_TEMPLATE}" in command
    # Voila runs with the server's MathJax settings (tinyinit.present.server)
    assert command[1:3] == ["-m", "tinyinit.present.server"]
    assert MATHJAX_URL == "/voila/static/mathjax/MathJax.js"
