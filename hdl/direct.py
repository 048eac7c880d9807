"""Direct-convolution baseline with the same ports, widths and pipeline options as the Winograd tile.

|y| x |g| multipliers and one adder tree per output. ``stages`` registers the multiplier
operands, the products, the sums (before the output stage's rounding) and the outputs (latency 4,
like the Winograd tile); ``deep``
registers the operands twice (in the fabric, then a DSP's input registers), each product three
times (a DSP's pipeline and output registers, then in the fabric), cuts
the adder trees every ``adders_per_stage`` levels, and registers the sums, the rounded
value and y, like the Winograd tile's deep pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Module, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from winohdl.core.geometry import Geometry

from .components import (DEEP_OPERAND_REGISTERS, DEEP_PRODUCT_REGISTERS, ExactDivision, division_latency, emit_graph,
                         emit_product, graph_latency, split_levels, valid_chain, word)
from .datapath import Division
from .options import STAGES_LATENCY, HardwareOptions, Pipeline
from .pipeline import delay
from .shiftadd import ShiftAddGraph, build_graph
from .widths import Range, bilinear_range, linear_range, product_range, word_range


@dataclass(frozen=True)
class DirectArithmetic:
    """The direct tile's taps, adder tree, exact ranges, ports and latency (no hardware built)."""

    geometry: Geometry
    options: HardwareOptions
    pairs: tuple
    p_range: Range
    graph: ShiftAddGraph
    node_ranges: tuple
    y_ranges: tuple
    units: tuple

    @classmethod
    def of(cls, geometry: Geometry, options: HardwareOptions) -> "DirectArithmetic":
        dr, gr = options.d_range, word_range(options.kernel_width)
        pairs = tuple(tuple(t) for t in geometry.triples.tolist())
        p = product_range(dr, gr)
        graph = build_graph([[int(t[0] == o) for t in pairs] for o in range(geometry.n_y)], share=False)
        T = geometry.tensor()
        y_ranges = tuple(bilinear_range(T[o], dr, gr)[0] for o in range(geometry.n_y))
        exact = max(r.width for r in y_ranges)
        units = tuple(Division(0, 1, 1, exact, build_graph([[1]])) for _ in range(geometry.n_y))
        return cls(geometry, options, pairs, p, graph,
                   tuple(linear_range(f, [p] * len(pairs)) for f in graph.forms()), y_ranges, units)

    @property
    def y_exact_width(self) -> int:
        return max(r.width for r in self.y_ranges)

    @property
    def y_width(self) -> int:
        return self.options.output_width or self.y_exact_width

    @property
    def split_levels(self) -> int:
        o = self.options
        return split_levels(o.data_width, o.kernel_width) if o.pipeline is Pipeline.DEEP else 0

    @property
    def latency(self) -> int:
        o = self.options
        if o.pipeline is not Pipeline.DEEP:
            return STAGES_LATENCY if o.pipeline is Pipeline.STAGES else 0
        n = o.adders_per_stage  # operands, products (and the sums of split ones), adder tree, sums, rounding, y
        return (DEEP_OPERAND_REGISTERS + DEEP_PRODUCT_REGISTERS + self.split_levels + graph_latency(self.graph, n)
                + 1 + division_latency(list(self.units), n, o.output_width is not None) + 1)

    def signature(self) -> wiring.Signature:
        o, g = self.options, self.geometry
        members = {"d": In(data.ArrayLayout(signed(o.data_width), g.n_d)),
                   "g": In(data.ArrayLayout(signed(o.kernel_width), g.n_g)),
                   "y": Out(data.ArrayLayout(signed(self.y_width), g.n_y))}
        if o.pipelined:
            members["in_valid"] = In(1)
            members["out_valid"] = Out(1)
        return wiring.Signature(members)


class DirectConvolution(wiring.Component):
    """Direct convolution of one tile: ``y[o] = sum_k d[pos(o, k)] * g[k]``.

    Parameters
    ----------
    geometry : Geometry
    options : HardwareOptions
        Widths, pipelining and output rounding; the kernel always enters as g.

    Attributes
    ----------
    d : In, ArrayLayout(signed(data_width), |d|)
    g : In, ArrayLayout(signed(kernel_width), |g|)
    y : Out, ArrayLayout(signed(y_width), |y|)
    in_valid : In(1), out_valid : Out(1)
        Pipelined designs only.
    """

    def __init__(self, geometry: Geometry, options: HardwareOptions):
        self.geometry, self.options = geometry, options
        self._a = a = DirectArithmetic.of(geometry, options)
        self.y_exact_width, self.y_width, self.latency = a.y_exact_width, a.y_width, a.latency
        super().__init__(a.signature())

    @property
    def multipliers(self) -> int:
        return len(self._a.pairs)

    def elaborate(self, platform):
        m = Module()
        o = self.options
        deep, stages = o.pipeline is Pipeline.DEEP, o.pipeline is Pipeline.STAGES
        n = o.adders_per_stage if deep else None
        operand = DEEP_OPERAND_REGISTERS if deep else int(stages)
        a = self._a
        d = [delay(m, self.d[i], operand, f"d_q{i}") for i in range(self.geometry.n_d)]
        g = [delay(m, self.g[i], operand, f"g_q{i}") for i in range(self.geometry.n_g)]
        prods = []
        for i, (_, di, gi) in enumerate(a.pairs):
            prods.append(emit_product(m, d[di], g[gi], a.p_range.width,
                                      DEEP_PRODUCT_REGISTERS if deep else int(stages), a.split_levels,
                                      f"p{i}", split=deep))
        rows = emit_graph(m, a.graph, prods, [r.width for r in a.node_ranges], "sum", n)
        m.submodules.output = out = ExactDivision(a.units, a.y_ranges, a.y_width, o, n)
        for o_, v in enumerate(rows):
            m.d.comb += word(out.x, o_).eq(delay(m, v, int(deep or stages), f"s_q{o_}"))
            m.d.comb += self.y[o_].eq(delay(m, word(out.y, o_), int(deep or stages), f"y_q{o_}"))
        if o.pipelined:
            valid_chain(m, self.in_valid, self.out_valid, self.latency)
        return m
