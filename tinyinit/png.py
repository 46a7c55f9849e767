"""A figure's pixels as a PNG, fast: what a live figure sends the browser on every move.

The explorer's figure is 750 x 460 pixels, 1.4 MB of RGBA. Turning it into a
PNG is the largest single cost of a slider move, nearly all of it zlib's. Three
choices keep it quick:

- rows unfiltered and zlib level 1 (`fast_png`): PIL's default (a filter chosen
  per row, zlib level 6) makes a file a sixth smaller in three times the time;
- the two halves of the rows compressed at the same time, one on a helper
  thread (`deflate`): zlib lets go of Python's lock while it works, so a second
  core halves the wait;
- the checksum zlib puts at the end computed per half, and joined
  (`adler32_join`), so neither thread waits for the other's bytes.

The result is an ordinary PNG that any decoder reads: the tests check that it
decodes to the same pixels, and that its stream inflates to the same bytes
(with zlib checking the joined checksum).
"""

from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ADLER_BASE = 65521  # Adler-32's two sums are kept modulo this prime, the largest below 2**16
SPLIT_ABOVE = 1 << 16  # bytes: below this, one thread (handing work over costs more than it saves)

_helper: ThreadPoolExecutor | None = None  # started on the first large picture


def _forget_helper() -> None:
    # A forked child inherits the executor but not its thread: work handed to it would wait forever.
    global _helper
    _helper = None


os.register_at_fork(after_in_child=_forget_helper)


def adler32_join(first: int, second: int, second_length: int) -> int:
    """Adler-32 of a + b, from zlib.adler32(a), zlib.adler32(b) and len(b).

    Adler-32 keeps s1 = 1 + the sum of the bytes, and s2 = the sum of s1 after
    each byte. Behind a, s1 grows by b's bytes, and each of b's len(b) bytes
    adds to s2 the s1 that a left, less the 1 b's own s1 started from:
    s1 = s1_a + s1_b - 1 and s2 = s2_a + s2_b + len(b) (s1_a - 1), modulo 65521.

    >>> a, b = b"initial ", b"weights"
    >>> adler32_join(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)
    True
    """
    s1_a, s2_a = first & 0xFFFF, first >> 16
    s1_b, s2_b = second & 0xFFFF, second >> 16
    s1 = (s1_a + s1_b - 1) % ADLER_BASE
    s2 = (s2_a + s2_b + second_length * (s1_a - 1)) % ADLER_BASE
    return s2 << 16 | s1


def _raw_deflate(data: memoryview, level: int, last: bool) -> tuple[bytes, int]:
    """(deflate stream of `data`, without zlib's header and checksum; adler32 of `data`).

    A part that is not the last ends in a sync flush: its bits end on a byte
    boundary and it is not marked final, so the next part's stream can follow it
    (the next part's compressor never saw this one, so it refers to nothing in it).
    """
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = compressor.compress(data)
    body += compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
    return body, zlib.adler32(data)


def deflate(data, level: int = 1) -> bytes:
    """zlib's format of `data` (what zlib.compress makes), the halves compressed at once.

    The first half goes to a helper thread while this one compresses the second;
    the zlib stream is the header, the two deflate streams one after the other,
    and the Adler-32 of the whole. Small data is compressed in one go.

    >>> data = bytes(range(256)) * 1000
    >>> zlib.decompress(deflate(data)) == data
    True
    """
    global _helper
    whole = memoryview(data).cast("B")
    if len(whole) < SPLIT_ABOVE:
        return zlib.compress(whole, level)
    if _helper is None:
        _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tinyinit-png")
    half = len(whole) // 2
    pending = _helper.submit(_raw_deflate, whole[:half], level, False)
    second, second_sum = _raw_deflate(whole[half:], level, True)
    first, first_sum = pending.result()
    header = zlib.compress(b"", level)[:2]  # method, window and level, as zlib writes them
    checksum = adler32_join(first_sum, second_sum, len(whole) - half)
    return header + first + second + struct.pack(">I", checksum)


def fast_png(pixels: np.ndarray) -> bytes:
    """RGBA pixels (rows, columns, 4 uint8) as a PNG: rows unfiltered, zlib level 1.

    A PNG is a signature and chunks (length, kind, data, CRC): the header (size,
    8 bits per channel, RGBA), the rows compressed (each row a filter byte, 0
    for none, then its pixels), the end.

    >>> pixels = np.zeros((2, 3, 4), np.uint8); pixels[1, 2] = (255, 0, 0, 255)
    >>> import io; from PIL import Image
    >>> np.array_equal(np.asarray(Image.open(io.BytesIO(fast_png(pixels)))), pixels)
    True
    """
    rows, columns, _ = pixels.shape
    lines = np.zeros((rows, 1 + 4 * columns), np.uint8)  # each line: filter type 0, then RGBA
    lines[:, 1:] = pixels.reshape(rows, 4 * columns)

    def chunk(kind: bytes, data: bytes) -> bytes:
        size, crc = struct.pack(">I", len(data)), struct.pack(">I", zlib.crc32(kind + data))
        return size + kind + data + crc

    header = struct.pack(">IIBBBBB", columns, rows, 8, 6, 0, 0, 0)  # 8 bits, RGBA, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", deflate(lines))
        + chunk(b"IEND", b"")
    )
