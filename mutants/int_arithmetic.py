"""C++'s integer arithmetic in Python, for the Python mutants (each spec
folder's <folder>_mutants.py) to give exactly what their C++ twins give:
int32/int16/int8 conversions (modular since C++20), truncating division,
float32 rounding."""

import struct

INT32_MAX = 2**31 - 1


def ints(values):
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def int32(x):  # static_cast<std::int32_t>: modular since C++20
    return (x + 2**31) % 2**32 - 2**31


def int8(x):
    return (x + 128) % 256 - 128


def int16(x):
    return (x + 2**15) % 2**16 - 2**15


def trunc_div(a, b):  # C++ integer division rounds toward zero
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


