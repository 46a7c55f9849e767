"""Where the figures start: the depth explorer's settings, a slide's size, a file's formats.

Plain data, no matplotlib: the command line reads them for its options and its --help
without loading a drawing library, and the explorer, the presentation app and `python -m
tinyinit figure` read the same numbers, so that a slide shows what the app shows.
"""

from __future__ import annotations

__all__ = ["DEPTH_START", "FORMATS", "SLIDE_DPI", "SLIDE_SIZES"]

# The depth explorer's settings before anyone moves a control: the explorer's defaults, every
# step of the presentation app (`tinyinit.present.demonstrations.START`) and the figure
# command's. Three seeds of 16 inputs: enough for a median and its band, quick enough for a
# slider.
DEPTH_START = dict(
    initializer="xavier_uniform", activation="relu", std=0.02, n_layers=20, width=256, seeds=3,
    batch=16, direction="forward",
)  # fmt: skip

# A slide's page in inches, by aspect ratio: PowerPoint's and Keynote's widescreen page
# (13.33 x 7.5) and their standard one (10 x 7.5). At SLIDE_DPI they are 1920x1080 and
# 1440x1080 pixels, a projector's own, so that a png fills the slide without being resampled.
SLIDE_SIZES = {"16:9": (40 / 3, 7.5), "4:3": (10.0, 7.5)}
SLIDE_DPI = 144

# The files a figure is written as.
FORMATS = ("png", "svg", "pdf")
