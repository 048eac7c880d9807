"""Packed words: signed values side by side in one integer, value i at bits ``[i*width +: width]``
(two's complement, element 0 lowest), as every generated port and stream lane holds them."""

from __future__ import annotations


def pack(values, width: int) -> int:
    """Signed ``values`` (``width`` bits each) packed into one port value."""
    mask = (1 << width) - 1
    return sum((int(v) & mask) << (i * width) for i, v in enumerate(values))


def unpack(word: int, width: int, n: int) -> list[int]:
    """The ``n`` signed ``width``-bit values of a port value (the inverse of :func:`pack`)."""
    out = []
    for i in range(n):
        v = (int(word) >> (i * width)) & ((1 << width) - 1)
        out.append(v - (1 << width) if v >> (width - 1) else v)
    return out
