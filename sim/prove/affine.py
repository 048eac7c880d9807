"""Affine values and rectangles of the output stage's case analysis (:mod:`sim.prove.rounding`).

A value of the output logic on a rectangle of ``(t, r)``, with ``y = 2^K t + r``, is an affine
function ``a t + c r + b`` (:class:`Aff`); a rectangle (:class:`Region`) is split in halves, or at
the point where a value stops being affine (:class:`Split`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .netlist import Unsupported


@dataclass(frozen=True)
class Aff:
    """``a t + c r + b``; ``delay``: the registers between the inputs and this value (None: a constant)."""

    a: int
    c: int
    b: int
    delay: int | None = None

    def at(self, t: int, r: int) -> int:
        return self.a * t + self.c * r + self.b

    def plus(self, o: "Aff") -> "Aff":
        return Aff(self.a + o.a, self.c + o.c, self.b + o.b, joint_delay(self.delay, o.delay))

    def scale(self, k: int) -> "Aff":
        return Aff(self.a * k, self.c * k, self.b * k, self.delay)


def joint_delay(x, y):
    """The registers between the inputs and a value of ``x`` and ``y``'s delays (None: a constant)."""
    if x is None:
        return y
    if y is None or x == y:
        return x
    raise Unsupported(f"the output logic mixes values of cycles t-{x} and t-{y}")


@dataclass(frozen=True)
class Region:
    t0: int
    t1: int
    r0: int
    r1: int

    def corners(self):
        return {(t, r) for t in (self.t0, self.t1) for r in (self.r0, self.r1)}

    def halves(self) -> list["Region"]:
        if self.t0 == self.t1 and self.r0 == self.r1:
            raise AssertionError("a single point cannot be split")
        if self.t0 < self.t1:
            m = (self.t0 + self.t1) // 2
            return [Region(self.t0, m, self.r0, self.r1), Region(m + 1, self.t1, self.r0, self.r1)]
        m = (self.r0 + self.r1) // 2
        return [Region(self.t0, self.t1, self.r0, m), Region(self.t0, self.t1, m + 1, self.r1)]


class Split(Exception):
    def __init__(self, parts: list[Region]):
        super().__init__("split")
        self.parts = parts


def probe_points(P: "Region") -> set:
    """The corners of P, its centre and its points nearest y = 0 (t = 0 with small r, t = -1 with
    large r): where a difference between two affine functions on P is looked for."""
    def clamp(v, lo, hi):
        return min(max(v, lo), hi)
    pts = set(P.corners())
    pts.add(((P.t0 + P.t1) // 2, (P.r0 + P.r1) // 2))
    for t, r in ((0, P.r0), (0, P.r0 + 1), (-1, P.r1), (-1, P.r1 - 1)):
        pts.add((clamp(t, P.t0, P.t1), clamp(r, P.r0, P.r1)))
    return pts


def ceil_div(a: int, b: int) -> int:
    return -((-a) // b)
