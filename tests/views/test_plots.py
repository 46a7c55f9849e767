"""`plots.show`: a notebook figure with its text alternative in the output's metadata."""

import base64

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from IPython.core.interactiveshell import InteractiveShell

from tinyinit.views.plots import show


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


def test_every_initializer_has_one_okabe_ito_colour_and_families_share_theirs():
    from tinyinit.core.init import INITIALIZERS
    from tinyinit.views.plots import INITIALIZER_COLORS, OKABE_ITO, initializer_color

    offered = list(INITIALIZERS)  # every initializer the explorer offers has a colour
    assert set(INITIALIZER_COLORS.values()) <= set(OKABE_ITO.values())
    # A family each, but for two that never meet in one figure: the palette has 8 colours,
    # and yellow is too light on white for a line (1.1:1)
    apart = {"scaled_residual", "lsuv"}  # residual-stream figures; a plain stack's
    assert len(set(INITIALIZER_COLORS.values())) == len(INITIALIZER_COLORS) - 1
    names = offered + list(INITIALIZER_COLORS)
    for a in names:
        for b in names:
            same = initializer_color(a) == initializer_color(b)
            family = {a.split("_")[0], b.split("_")[0]}
            expected = len(family) == 1 or family == {"scaled", "lsuv"}
            assert same == expected, (a, b)
    assert {initializer_color(name) for name in apart} == {OKABE_ITO["reddish purple"]}
    with pytest.raises(ValueError, match=r"^initializer must be one of 'xavier', .*, got 'he'$"):
        initializer_color("he")
