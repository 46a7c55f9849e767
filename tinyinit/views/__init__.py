"""The live views: the explorers, their figures, and how a figure reaches the browser.

The widgets need the `lab` extra; the figures need only matplotlib.

    explorers          the depth and residual-stream explorers (ipywidgets)
    live_training      the training explorer: a network learns while its figures redraw
    plots              the live plots the explorers redraw: depth, histograms, training
    figures            the static figures (compare, residual stream, muP) and `show`, `png_bytes`
    style              the look every figure shares: colours, type, words, log axes
    projector          figures for a room: projector type, curves named where they end
    naming             the words for curves and gaps, powers of 2 in every medium
    defaults           where the figures start: the explorer's settings, a slide's size
    a11y               accessible names and live regions for the widgets (with a11y.js)
    browser_transport  blitting, whole pictures and fast PNGs to the browser
"""
