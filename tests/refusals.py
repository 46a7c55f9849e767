"""A table of refusals checked to the letter: each call raises this kind, in these words."""

from __future__ import annotations


def assert_refused(refusals) -> None:
    """refusals: (call, kind, words) triples; each call must raise exactly kind(words)."""
    for call, kind, words in refusals:
        try:
            call()
        except Exception as error:  # the kind is checked exactly, below
            assert (type(error), str(error)) == (kind, words)
        else:
            raise AssertionError(f"nothing raised, where {kind.__name__}({words!r}) was due")
