"""Exact ranges and widths of an engine's arithmetic (interval analysis over C input channels).

A Winograd-domain accumulator sums C independent products ``v[c, r] * u[c, r]``, so its
exact range is C times the product's (every product range contains 0, so each partial
sum lies inside it too); every node of the output transform is a bilinear form summed over
C independent channels: C times the tile's exact node range. The exact division then
works modulo ``2^w`` with w the width of C times the tile's output range.

Modular Winograd domain: the exact division of output o only reads bits ``shift_o`` to
``shift_o + w - 1`` of its dividend (an arithmetic shift, then arithmetic modulo ``2^w``), and
products, sums and the output transform are ring operations, so every Winograd-domain word
(products, lane sums, accumulators, output-transform nodes and rows) is kept modulo
``2^W`` with ``W = w + max shift`` (:attr:`EngineArithmetic.modulus_bits`): a word whose exact
range is wider wraps, and the outputs are still exact. Each Winograd-domain word r (product, lane
sum, accumulator) needs fewer: output o reads ``AT[o, r] * acc[r]`` modulo ``2^(w + shift_o)``, so
a change of ``acc[r]`` by a multiple of ``2^b`` with ``b + v2(AT[o, r]) >= w + shift_o`` (v2: the
power of two dividing) is never read. Word r is kept modulo ``2^word_bits[r]``, the least b that
holds for every output that reads it (:attr:`EngineArithmetic.word_bits`); A^T itself stays modulo
``2^W`` (it is linear, so its outputs are ``sum_r AT[o, r] * acc[r]`` modulo ``2^W`` whatever its
graph). F(4x4,3x3)'s A^T columns carry G's scales 6, 4, 4, 1, 1, 24 per axis: 96 accumulator
bits fewer than 36 x W. The ``*_ranges`` stay the exact ranges
(the golden model checks them); the ``hw_*`` widths are what the hardware builds.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..datapath import Datapath, Division
from ..model import RangeViolation
from ..scaling import two_adic
from ..shiftadd import build_graph, division_graph
from ..widths import Range, bilinear_range, linear_range, product_range, word_range
from .options import EngineKind, EngineOptions


@lru_cache(maxsize=4096)
def _division_graph(odd: int, width: int):
    """:func:`hdl.shiftadd.division_graph`, once per process for an odd divisor and width (read only: a
    planner plans the same layer at many PK and PC, whose divisions are the same)."""
    return division_graph(odd, width)


def within(r: Range, bits: int) -> Range:
    """``r`` as built when its word is kept modulo ``2^bits`` (the full ``bits``-bit range if wider)."""
    return r if r.width <= bits else Range(-(1 << (bits - 1)), (1 << (bits - 1)) - 1, False)


def scale(r: Range, n: int) -> Range:
    """The range of a sum of n independent values each in ``r``."""
    return Range(r.lo * n, r.hi * n, r.tight)


class EngineArithmetic:
    """Every width of one engine, from the options and (Winograd) the card's datapath.

    Attributes
    ----------
    lane_ranges : list of Range
        Per accumulated word: the sum over the PC parallel input channels of one cycle.
    acc_ranges : list of Range
        Per accumulated word (R for Winograd, |y| for direct): the sum over all C channels.
    at_node_ranges, pre_ranges : list of Range
        Winograd: the output transform's nodes and rows (before the exact division).
    y_ranges : list of Range
        Per output word of a tile: the layer's exact output range; ``y_width`` its width.
    divisions : list of Division
        Winograd: the exact division of each output, modulo ``2^y_width``.
    modulus_bits : int or None
        Winograd: W, the width every Winograd-domain word is kept at most (modulo ``2^W``).
    word_bits : list of int or None
        Winograd: per Winograd-domain word r (product, lane sum, accumulator), the bits any
        output reads, at most W: the word is kept modulo ``2^word_bits[r]``.
    """

    @classmethod
    def of(cls, opts: EngineOptions, dp: Datapath | None, kind: EngineKind) -> "EngineArithmetic":
        """The arithmetic of ``opts``, shared by every engine of the same card, widths, C and PC (what it
        depends on; not K, PK, buffers or memories): a network's planner builds thousands of engine plans
        of a few arithmetics. Treat it as immutable."""
        return _shared(kind, dp, _Fields(opts.geometry, opts.C, opts.PC, opts.d_range, opts.kernel_width))

    def __init__(self, opts: EngineOptions, dp: Datapath | None, kind: EngineKind):
        self.dp, self.kind = dp, kind
        g, C, PC = opts.geometry, opts.C, opts.PC
        self.d_range, self.g_range = opts.d_range, word_range(opts.kernel_width)
        if kind is EngineKind.WINOGRAD:
            if dp is None:
                raise ValueError("the Winograd engine needs the card's datapath")
            self.product_ranges = list(dp.m_ranges)
            self.lane_ranges = [scale(r, PC) for r in dp.m_ranges]
            self.acc_ranges = [scale(r, C) for r in dp.m_ranges]
            self.at_node_ranges = [scale(r, C) for r in dp.output_node_ranges]
            self.pre_ranges = [scale(r, C) for r in dp.pre_ranges]
            self.y_ranges = [scale(r, C) for r in dp.y_exact_ranges]
            self.y_width = max(r.width for r in self.y_ranges)
            s = dp.scaled
            self.divisions = []
            for o in range(g.n_y):
                shift, odd = s.shift_and_odd(o)
                inv = pow(odd, -1, 1 << self.y_width) if odd > 1 else 1
                graph = _division_graph(odd, self.y_width) if odd > 1 else _division_graph(1, 1)
                self.divisions.append(Division(shift, odd, inv, self.y_width, graph))
            # the sum over the PC lanes of one cycle, per Winograd-domain word (a balanced tree)
            self.lane_graph = build_graph([[1] * PC], share=False)
            self.lane_node_ranges = [[linear_range(f, [r] * PC) for f in self.lane_graph.forms()]
                                     for r in dp.m_ranges]
            self.modulus_bits = self.y_width + max(d.shift for d in self.divisions)
            self.word_bits = [self._word_bits(column) for column in zip(*dp.scaled.AT)]
        else:
            p = product_range(self.d_range, self.g_range)
            self.product_ranges = [p]
            self.pairs = [tuple(t) for t in g.triples.tolist()]  # (y, d, g)
            # one cycle: for each output, the sum over taps and the PC lanes
            self.tree = build_graph([[int(t[0] == o) for t in self.pairs for _ in range(PC)]
                                     for o in range(g.n_y)], share=False)
            self.tree_node_ranges = [linear_range(f, [p] * (len(self.pairs) * PC)) for f in self.tree.forms()]
            T = g.tensor()
            one = [bilinear_range(T[o], self.d_range, self.g_range)[0] for o in range(g.n_y)]
            self.lane_ranges = [scale(r, PC) for r in one]
            self.acc_ranges = [scale(r, C) for r in one]
            self.y_ranges = list(self.acc_ranges)
            self.y_width = max(r.width for r in self.y_ranges)
            self.modulus_bits = None  # the outputs are the accumulators: nothing wraps
            self.word_bits = None

    @property
    def output_bits(self) -> list[int]:
        """Winograd: the low bits of each output's dividend that its exact division reads."""
        return [self.y_width + d.shift for d in self.divisions]

    def _word_bits(self, column) -> int:
        """The low bits of a Winograd-domain word that the outputs read (``column``: its A^T
        coefficient per output; see the module docstring)."""
        need = [b - two_adic(c) for c, b in zip(column, self.output_bits) if c]
        return max(1, min(self.modulus_bits, max(need, default=1)))

    def hw(self, ranges: list[Range]) -> list[Range]:
        """``ranges`` as built: a range wider than :attr:`modulus_bits` becomes the full
        ``modulus_bits``-bit two's-complement range (the word wraps; see the module docstring)."""
        if self.modulus_bits is None:
            return list(ranges)
        return [within(r, self.modulus_bits) for r in ranges]

    def hw_word(self, r: int, ranges: list[Range]) -> list[Range]:
        """``ranges`` of Winograd-domain word r as built: kept modulo ``2^word_bits[r]``
        (the direct engine: unchanged)."""
        if self.word_bits is None:
            return list(ranges)
        return [within(x, self.word_bits[r]) for x in ranges]

    def word_width(self, r: int, width: int) -> int:
        """A width of Winograd-domain word r as built (at most ``word_bits[r]``)."""
        return width if self.word_bits is None else min(width, self.word_bits[r])

    @property
    def acc_widths(self) -> list[int]:
        """Accumulator widths as built (modulo ``2^word_bits[r]`` in the Winograd engine)."""
        return [self.hw_word(r, [x])[0].width for r, x in enumerate(self.acc_ranges)]

    @property
    def acc_width_max(self) -> int:
        """The widest exact accumulator value (the golden model's integer type)."""
        return max(r.width for r in self.acc_ranges)

    @staticmethod
    def check(values, ranges: list[Range], where: str) -> None:
        """Raise RangeViolation when a value of the last axis leaves its range."""
        arr = np.asarray(values, dtype=object)
        flat = arr.reshape(-1, arr.shape[-1])
        for i, r in enumerate(ranges):
            col = flat[:, i]
            if col.size and (min(col) < r.lo or max(col) > r.hi):
                raise RangeViolation(f"{where} word {i} outside [{r.lo}, {r.hi}]: "
                                     f"{min(col)}..{max(col)}")


class _Fields(NamedTuple):
    """What :class:`EngineArithmetic` reads of an engine's options (its cache key with the card and kind)."""

    geometry: object
    C: int
    PC: int
    d_range: Range
    kernel_width: int


@lru_cache(maxsize=1024)
def _shared(kind: EngineKind, dp: Datapath | None, fields: _Fields) -> EngineArithmetic:
    return EngineArithmetic(fields, dp, kind)
