"""tinyinit.png makes ordinary PNGs, its halves compressed on two threads joined into one stream."""

from __future__ import annotations

import io
import multiprocessing
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from tinyinit import png


@given(st.binary(max_size=300), st.binary(max_size=300))
@settings(max_examples=300, deadline=None)
def test_adler32_of_two_parts_joined_is_adler32_of_the_whole(a, b):
    assert png.adler32_join(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)


def test_adler32_join_holds_where_its_sums_wrap_around_the_modulus():
    long = bytes([255]) * 100_000  # s1 passes 65521 within the first 300 bytes, s2 at once
    for a, b in [(long, long), (b"", long), (long, b""), (long[:5553], long[:65521])]:
        assert png.adler32_join(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)


@pytest.mark.parametrize(
    "size", [0, 1, png.SPLIT_ABOVE - 1, png.SPLIT_ABOVE, png.SPLIT_ABOVE + 1, 1_380_461]
)
def test_deflate_is_a_zlib_stream_of_the_same_bytes_at_any_size(size):
    data = np.random.default_rng(size).integers(0, 4, size, dtype=np.uint8).tobytes()
    packed = png.deflate(data)
    assert zlib.decompress(packed) == data  # zlib checks the Adler-32 at the end, too
    assert packed[:2] == zlib.compress(data, 1)[:2]  # the header zlib writes at level 1


def test_large_data_is_compressed_in_two_parts_one_of_them_on_the_helper_thread(monkeypatch):
    parts = []

    def counted(data, level, last):
        parts.append((len(data), last))
        return raw_deflate(data, level, last)

    raw_deflate = png._raw_deflate
    monkeypatch.setattr(png, "_raw_deflate", counted)
    data = bytes(range(256)) * 1001  # 256256 bytes: an even split
    assert zlib.decompress(png.deflate(data)) == data
    assert sorted(parts) == [(128128, False), (128128, True)]  # the first half is not final
    png.deflate(data[: png.SPLIT_ABOVE - 1])
    assert len(parts) == 2  # small: zlib.compress in one go


def test_a_figure_sized_png_reads_back_as_the_same_pixels():
    pixels = np.random.default_rng(0).integers(0, 256, (460, 750, 4), dtype=np.uint8)
    pixels[100:200] = 255  # a flat band, as most of a figure is
    picture = Image.open(io.BytesIO(png.fast_png(pixels)))
    assert picture.mode == "RGBA" and picture.size == (750, 460)
    np.testing.assert_array_equal(np.asarray(picture), pixels)


def _deflate_in_child(queue) -> None:
    data = bytes(range(256)) * 1001
    queue.put(zlib.decompress(png.deflate(data)) == data)


def test_a_forked_child_compresses_in_two_halves_too():
    png.deflate(bytes(range(256)) * 1001)  # the parent's helper thread is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_deflate_in_child, args=(queue,))
    child.start()
    child.join(timeout=30)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child never finished: it waited for the parent's helper thread")
    assert child.exitcode == 0 and queue.get(timeout=5) is True
