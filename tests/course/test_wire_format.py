"""The wire format between the checker and the student's process: whatever arrives is a value
or a WireError, never anything else on the checker's side."""

from collections import namedtuple

import pytest

from tinyinit.course.wire_format import WireError, decode, encode


def test_forged_values_are_wire_errors_never_the_checkers_traceback():
    for forged in (
        {"t": "float", "v": "0x1p+99999"},
        {"t": "array", "dtype": "<f4", "shape": [2**63, 0], "order": "C", "data": ""},
        {"t": "tuple", "v": 5},
        {"t": "pcg32", "state": "1" * 30, "inc": "1"},
    ):
        with pytest.raises(WireError):
            decode(forged)
    Fans = namedtuple("Fans", "fan_in fan_out")
    assert decode(encode(Fans(3, 4))) == (3, 4) and type(decode(encode(Fans(3, 4)))) is tuple
