"""Bit-exact Python model of the generated datapath: the specification the hardware must match.

It evaluates the very shift-add graphs the generator emits, on Python integers,
checks every node against its analysed range (so an overflow in hardware would
be a failed range here first), and applies the exact divisions and the optional
output rounding and saturation exactly as the hardware does.
"""

from __future__ import annotations

from dataclasses import dataclass

from winohdl.core.errors import WinohdlError

from .datapath import Datapath
from .options import HardwareOptions, Rounding
from .widths import Range


class RangeViolation(AssertionError):
    """A node left its analysed range: the width analysis would be unsafe."""


def wrap(value: int, width: int) -> int:
    """Two's complement value of the low ``width`` bits."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def quantise(y: int, options: HardwareOptions) -> int:
    """Drop ``output_shift`` low bits with the named rounding, then saturate to ``output_width``."""
    if options.output_width is None:
        return y
    s = options.output_shift
    if s:
        match options.rounding:
            case Rounding.TRUNCATE:
                y = y >> s
            case Rounding.ROUND_HALF_UP:
                y = (y + (1 << (s - 1))) >> s
            case Rounding.ROUND_HALF_EVEN:
                q, r = y >> s, y & ((1 << s) - 1)
                half = 1 << (s - 1)
                y = q + (1 if r > half or (r == half and q & 1) else 0)
            case other:
                raise AssertionError(f"no rounding {other!r}")
    lo, hi = -(1 << (options.output_width - 1)), (1 << (options.output_width - 1)) - 1
    return min(max(y, lo), hi)


def _check(values, ranges: list[Range], where: str) -> None:
    for i, (v, r) in enumerate(zip(values, ranges)):
        if not r.lo <= v <= r.hi:
            raise RangeViolation(f"{where} node {i} = {v} outside [{r.lo}, {r.hi}]")


@dataclass
class Trace:
    """Every intermediate of one evaluation (for debugging and width tests)."""

    v: list[int]
    u: list[int]
    m: list[int]
    output_nodes: list[int]
    pre: list[int]
    y_exact: list[int]
    y: list[int]


class DatapathModel:
    """Evaluate a :class:`Datapath` exactly as the hardware computes it."""

    def __init__(self, datapath: Datapath):
        self.dp = datapath

    def _check_words(self, words, n: int, rng: Range, name: str) -> list[int]:
        words = [int(x) for x in words]
        if len(words) != n:
            raise WinohdlError(f"{name} has {len(words)} words, the design takes {n}")
        bad = [x for x in words if not rng.lo <= x <= rng.hi]
        if bad:
            raise WinohdlError(f"{name} word {bad[0]} outside [{rng.lo}, {rng.hi}]")
        return words

    def trace(self, d, g=None, u=None) -> Trace:
        dp = self.dp
        d = self._check_words(d, dp.geometry.n_d, dp.d_range, "d")
        data_nodes = dp.data_graph.evaluate_nodes(d)
        _check(data_nodes, dp.data_node_ranges, "data transform")
        v = dp.data_graph.evaluate(d)
        if u is None:
            g = self._check_words(g, dp.geometry.n_g, dp.g_range, "g")
            kernel_nodes = dp.kernel_graph.evaluate_nodes(g)
            _check(kernel_nodes, dp.kernel_node_ranges, "kernel transform")
            u = dp.kernel_graph.evaluate(g)
        _check(u, dp.u_ranges, "transformed kernel")
        m = [a * b for a, b in zip(v, u)]
        _check(m, dp.m_ranges, "product")
        out_nodes = dp.output_graph.evaluate_nodes(m)
        _check(out_nodes, dp.output_node_ranges, "output transform")
        pre = dp.output_graph.evaluate(m)
        _check(pre, dp.pre_ranges, "output before division")
        y_exact = []
        for x, div in zip(pre, dp.divisions):
            x >>= div.shift
            y_exact.append(wrap(div.graph.evaluate([x])[0], div.width))
        _check(y_exact, dp.y_exact_ranges, "output")
        y = [quantise(v_, dp.options) for v_ in y_exact]
        return Trace(v, list(u), m, out_nodes, pre, y_exact, y)

    def __call__(self, d, g=None, u=None) -> list[int]:
        return self.trace(d, g, u).y
