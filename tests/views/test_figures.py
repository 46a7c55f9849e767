"""`figures.show`: a notebook figure with its text alternative in the output's metadata."""

import base64

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from IPython.core.interactiveshell import InteractiveShell

from tinyinit.views.figures import show


def test_show_publishes_the_png_with_its_alt_text_and_closes_the_figure(monkeypatch):
    published = []
    shell = InteractiveShell.instance()
    monkeypatch.setattr(
        shell.display_pub,
        "publish",
        lambda data, metadata=None, **kw: published.append((data, metadata)),
    )
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    alt = "A straight line from 1 to 3 over three points"
    show(fig, alt)
    ((data, metadata),) = published
    assert base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["text/plain"] == alt
    assert metadata == {"image/png": {"alt": alt}}
    assert not plt.fignum_exists(fig.number)


@pytest.mark.parametrize("alt", ["", "   ", "a plot", None])
def test_show_refuses_an_empty_or_placeholder_alt(alt):
    fig = plt.figure()
    with pytest.raises(ValueError, match="^alt must be a sentence"):
        show(fig, alt)
    plt.close(fig)
