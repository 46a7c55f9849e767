"""How long does one slider move of the depth explorer take, kernel side?

    python benchmarks/bench_explorer.py [--moves 30] [--n-layers 20] [--width 256]
                                        [--blas-threads 1]

A move is the widget's callback end to end: simulate over the seeds (matrix
products on cached unit weights, the forward pass memoized), theory (cached
unless its inputs change), the artists moved in place, the readout rewritten,
and the picture made as the browser gets it: the explorer runs on ipympl's
canvas, as in JupyterLab (its page stood in for: told it is there, messages
dropped), which draws the whole figure when the axes change, else only the data
over the kept frame, and encodes the PNG it sends. The one-time draw of the
weights kept at gain 1 is excluded from the moves and reported on its own.

Every control is moved `--moves` times through values that change the result,
in each view: the mean square per layer forward and backward, and the
histograms forward and backward. The depth walks one layer at a time from
--n-layers to --n-layers + 10 and back, as arrow keys do. The table gives, per control
and view, the median and 90th percentile of the wall time, the median CPU time
of this process (steadier on a shared machine), how the time splits between the
simulation and the figure, and how many moves drew the whole figure.

The floor row calibrates the machine: one Agg draw of an axes with a single
line and no text, the least any matplotlib figure costs here, measured in the
same run (before and after the moves; the lower of the two). Absolute
milliseconds differ threefold between machines of the same kind, so each
control's time is also given as a ratio to it: "x floor" divides the median
wall time by the floor's, "cpu/floor" the median CPU time by the floor's CPU time.

The encoder row compares, in the same run and on the explorer's own picture,
compressing the PNG's rows with `tinyinit.views.browser_transport.DEFLATE` (zlib-ng, what
`fast_png` does) against the standard library's zlib at level 1, on one thread
and with the two halves at once on two threads (zlib releases the GIL; what the
encoder once did), as medians taken in turn so that all see the same load.

BLAS threads: the products are small (256 x 256 by 256 x 16); on a machine whose
cores are busy, OpenBLAS's threads wait for each other and a move can take ten
times longer than with one thread. --blas-threads N sets OPENBLAS_NUM_THREADS
(and OMP_/MKL_) before numpy loads; the same variable works for a Jupyter server.

Targets, median per move at depth 20, width 256, 3 seeds: <= 10 ms in the
forward view, <= 20 ms in the backward and histogram views. The walks revisit
settings, as hands on sliders do, and the explorer keeps what it computed for
the settings it showed last; the "new" column times the same walk with those
passes and theory forgotten before each move, the cost of a setting never seen.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

# view -> (direction, explorer view, target median ms)
VIEWS = {
    "forward": ("forward", "curves", 10.0),
    "backward": ("backward", "curves", 20.0),
    "hist fwd": ("forward", "histograms", 20.0),
    "hist bwd": ("backward", "histograms", 20.0),
}


def timed(fn, *args, **kwargs) -> tuple[float, float]:
    """(wall, cpu) seconds of fn(*args, **kwargs)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def draw_all(initializer: str, width: int, seeds: int, n_layers: int) -> None:
    from tinyinit.physics.propagation_fast import UnitWeights

    cache = UnitWeights()
    for seed in range(seeds):
        cache.get(initializer, width, seed, n_layers)


def one_time_draws(n_layers: int, width: int, seeds: int) -> list[tuple[str, float]]:
    rows = []
    for initializer, layers in (
        ("xavier_uniform", n_layers),
        ("xavier_normal", n_layers),
        ("xavier_uniform", 100),
        ("xavier_normal", 100),
    ):
        wall, _ = timed(draw_all, initializer, width, seeds, layers)
        rows.append((f"{initializer} at gain 1, {seeds} seeds x {layers} layers", wall))
    return rows


# The initializer control's walk; each draws its own stack (at gain 1), drawn before timing.
INITIALIZERS_WALKED = [
    "xavier_normal",
    "kaiming_normal",
    "kaiming_normal_fan_out",
    "xavier_uniform",
]


def moves(ex, n_layers: int) -> dict[str, tuple]:
    """For each control: (widget, endless iterator of values that change the result)."""
    gains = [1.0 + 0.01 * k for k in range(1, 40)] + [1.4 - 0.01 * k for k in range(39)]
    walk = list(range(n_layers + 1, n_layers + 11)) + list(range(n_layers + 9, n_layers - 1, -1))
    activations = ["tanh", "selu", "gelu", "sigmoid", "silu", "leaky_relu", "linear", "relu"]
    stds = [0.05 + 0.002 * k for k in range(1, 20)] + [0.09 - 0.002 * k for k in range(19)]
    return {
        "gain": (ex.gain, itertools.cycle(gains), {}),
        "std": (ex.std, itertools.cycle(stds), {"initializer": "normal_init"}),
        "depth": (ex.n_layers, itertools.cycle(walk), {}),
        "activation": (ex.activation, itertools.cycle(activations), {}),
        "initializer": (ex.initializer, itertools.cycle(INITIALIZERS_WALKED), {}),
        "width": (ex.width, itertools.cycle([128, ex.width.value]), {}),
        "seeds": (ex.seeds, itertools.cycle([ex.seeds.value - 1, ex.seeds.value]), {}),
    }


def draw_floor(n: int = 30) -> tuple[float, float]:
    """Median (wall, CPU) ms of one Agg draw of a single line, no text: this machine's floor."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    fig = Figure(figsize=(7.5, 4.6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(range(21), [2.0**-k for k in range(21)])
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(NullLocator())
    fig.canvas.draw()
    times = [timed(fig.canvas.draw) for _ in range(n)]
    return tuple(statistics.median(t[k] for t in times) * 1e3 for k in (0, 1))


def encoders(pixels, n: int = 60) -> dict[str, float]:
    """Median ms to compress the PNG's rows: the encoder's own and two it replaced."""
    import zlib
    from concurrent.futures import ThreadPoolExecutor

    from tinyinit.views import browser_transport as transport

    data = memoryview(transport.png_rows(pixels)).cast("B")
    half = len(data) // 2

    def part(chunk, last):
        compressor = zlib.compressobj(1, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(chunk) + compressor.flush(
            zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH
        )

    with ThreadPoolExecutor(max_workers=1) as helper:

        def zlib_two_threads():
            pending = helper.submit(part, data[:half], False)
            part(data[half:], True)
            pending.result()

        def zlib_one_thread():
            zlib.compress(data, 1)

        def own():
            transport.DEFLATE.compress(data, transport.DEFLATE_LEVEL)

        times = {own: [], zlib_one_thread: [], zlib_two_threads: []}
        for k in range(n):  # in turn, so that all see the same load
            for encode in list(times)[k % 3 :] + list(times)[: k % 3]:
                times[encode].append(timed(encode)[0])
    return {encode.__name__: statistics.median(t) * 1e3 for encode, t in times.items()}


def bench_control(ex, widget, values, n: int) -> dict[str, float]:
    halves = {"simulate": [], "figure": []}

    def timing(name, fn):
        def timed_half(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                halves[name].append(time.perf_counter() - start)

        return timed_half

    full_draws = []
    plot = ex.histogram if ex.view.value == "histograms" else ex.plot
    connection = plot.figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    simulate, update = ex.cache.simulate, plot.update
    walls, cpus = [], []
    try:
        for _ in range(3):  # warm up: theory and glyph caches, the memo of each setting
            widget.value = next(values)
        # The move's own two halves, timed inside it: the simulation, and the figure
        # (a full draw when the axes change, else the data alone over the kept frame).
        ex.cache.simulate = timing("simulate", simulate)
        plot.update = timing("figure", update)
        full_draws.clear()
        for _ in range(n):
            value = next(values)
            wall, cpu = timed(setattr, widget, "value", value)
            walls.append(wall)
            cpus.append(cpu)
        # The same walk with nothing remembered of any setting but the kept weights:
        # every move a setting never seen (no kept pass, no theory). The kept frames stay:
        # they are looks (limits, ticks, labels), which settings never seen share.
        halves_kept = {name: list(times) for name, times in halves.items()}
        drawn = len(full_draws)
        new = []
        for _ in range(max(n // 2, 2)):
            forget(ex)
            new.append(timed(setattr, widget, "value", next(values))[0])
        halves.update(halves_kept)
    finally:
        del ex.cache.simulate, plot.update  # back to the methods
        plot.figure.canvas.mpl_disconnect(connection)
    ms = 1e3
    return {
        "median": statistics.median(walls) * ms,
        "p90": statistics.quantiles(walls, n=10)[-1] * ms,
        "cpu": statistics.median(cpus) * ms,
        "simulate": statistics.median(halves["simulate"]) * ms,
        "figure": statistics.median(halves["figure"]) * ms,
        "full": 100 * drawn / n,
        "new": statistics.median(new) * ms,
    }


def page_is_there(ex) -> None:
    """Stand in for the explorer's page: its canvases hear "initialized" and send nowhere.

    From then on a move draws (or blits) and encodes its picture at once, as in
    the browser; before, ipympl waits for the page to ask.
    """
    from tinyinit.views.browser_transport import SYNCING

    for plot in (ex.plot, ex.histogram):
        canvas = plot.figure.canvas
        if not hasattr(canvas, SYNCING):
            raise RuntimeError(f"the explorer's canvas is {type(canvas).__name__}, not ipympl's")
        canvas.send = lambda content, buffers=None: None
        canvas._handle_message(canvas, {"type": "initialized"}, [])


def forget(ex) -> None:
    """Drop what the explorer remembers of the settings it has shown (not the kept weights)."""
    ex.cache.forward_memo.clear()
    ex.cache.backward_memo.clear()
    ex.cache.theory_memo.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--n-layers", type=int, default=20)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16, help="samples per seed, as the explorer")
    parser.add_argument("--blas-threads", type=int, default=None)
    args = parser.parse_args()
    if args.blas_threads is not None:
        if "numpy" in sys.modules:
            raise RuntimeError("--blas-threads must take effect before numpy is imported")
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = str(args.blas_threads)

    # numpy loads only now, after the thread settings above.
    import matplotlib
    import numpy as np

    matplotlib.use("module://ipympl.backend_nbagg")  # the browser's canvas, without a browser
    from tinyinit.physics.propagation_fast import UnitWeights
    from tinyinit.views import browser_transport as transport
    from tinyinit.views.explorers import DepthExplorer

    print(__doc__.splitlines()[0])
    print(
        f"depth {args.n_layers}, width {args.width}, {args.seeds} seeds x batch {args.batch}, "
        f"float64; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}\n"
    )
    print("One-time draws (excluded from the moves):")
    for name, seconds in one_time_draws(args.n_layers, args.width, args.seeds):
        print(f"  {name:<45} {seconds * 1e3:8.1f} ms")

    ex = DepthExplorer(
        n_layers=args.n_layers, width=args.width, seeds=args.seeds, batch=args.batch,
        cache=UnitWeights(),
    )  # fmt: skip
    page_is_there(ex)
    with ex.hold():  # every initializer and both widths drawn before timing, deep enough for
        for initializer in (*INITIALIZERS_WALKED, "normal_init"):
            ex.initializer.value = initializer
            for width in (128, args.width):
                ex.width.value = width
                ex.n_layers.value = args.n_layers + 10
                ex.update()
        ex.n_layers.value = args.n_layers

    floors = [draw_floor()]
    rows = []
    for view, (direction, shown, _) in VIEWS.items():
        ex.direction.value, ex.view.value = direction, shown
        for control, (widget, values, setup) in moves(ex, args.n_layers).items():
            with ex.hold():
                for name, value in setup.items():
                    getattr(ex, name).value = value
            rows.append((control, view, bench_control(ex, widget, values, args.moves)))
            ex.reset()
            ex.direction.value, ex.view.value = direction, shown

    floors.append(draw_floor())
    floor, cpu_floor = (min(f[k] for f in floors) for k in (0, 1))
    picture = np.asarray(ex.figure.canvas.get_renderer().buffer_rgba()).copy()
    encode = encoders(picture)
    print(f"\nOne move, end to end ({args.moves} moves per row, milliseconds):")
    head = f"  {'control':<12}{'view':<10}{'median':>8}{'x floor':>8}{'p90':>8}{'cpu':>8}"
    print(
        head + f"{'simulate':>10}{'figure':>8}{'full draws':>12}{'cpu/floor':>10}{'new':>8}  target"
    )
    for control, view, r in rows:
        target = VIEWS[view][2]
        verdict = "ok" if r["median"] <= target else "over"
        print(
            f"  {control:<12}{view:<10}{r['median']:8.1f}{r['median'] / floor:8.1f}"
            f"{r['p90']:8.1f}{r['cpu']:8.1f}{r['simulate']:10.1f}{r['figure']:8.1f}"
            f"{r['full']:11.0f}%{r['cpu'] / cpu_floor:10.1f}{r['new']:8.1f}  <= {target:.0f} ms"
            f" {verdict}"
        )
    print(
        f"  {'floor':<22}{floor:8.1f}{1:8.1f}{'':>8}{cpu_floor:8.1f}  (one line, no text: "
        f"matplotlib's least; before the moves {floors[0][0]:.1f}, after {floors[1][0]:.1f})"
    )
    own = f"{transport.DEFLATE.__name__} level {transport.DEFLATE_LEVEL}"
    print(
        f"  encoder: the picture's rows by {own} {encode['own']:.2f} ms; by zlib level 1 on "
        f"one thread {encode['zlib_one_thread']:.2f} ms, on two threads at once "
        f"{encode['zlib_two_threads']:.2f} ms (own / zlib one thread: "
        f"{encode['own'] / encode['zlib_one_thread']:.2f})"
    )
    print("\nPer view, the slowest control's median (wall) against its target:")
    for view, (_, _, target) in VIEWS.items():
        control, _, worst = max((r for r in rows if r[1] == view), key=lambda r: r[2]["median"])
        verdict = "met" if worst["median"] <= target else "MISSED"
        ms = worst["median"]
        print(f"  {view:<10} {ms:6.1f} ms ({control}), target {target:.0f} ms: {verdict}")
    print(
        "\nmedian/p90: wall time of the whole callback; cpu: this process's CPU time;"
        "\nsimulate / figure: the two halves of the same moves (figure = artists and drawing);"
        "\nx floor: median / the floor's wall time, both measured in this run;"
        "\nfull draws: moves that changed the axes, so drew the whole figure; the others"
        "\nredrew only the data over the kept frame (blitting); cpu/floor: cpu / floor;"
        "\nnew: median wall time of the same moves with every kept pass and theory forgotten"
        "\nbefore each (a setting never seen; the kept weights and the frames stay)."
    )


if __name__ == "__main__":
    main()
