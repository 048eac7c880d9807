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

from amaranth.hdl import Module, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from winohdl.core.geometry import Geometry

from .components import (DEEP_OPERAND_REGISTERS, DEEP_PRODUCT_REGISTERS, ExactDivision, delay, emit_graph,
                         emit_product, graph_latency, split_levels, valid_chain, word)
from .datapath import Division
from .options import STAGES_LATENCY, HardwareOptions, Pipeline
from .shiftadd import build_graph
from .widths import bilinear_range, linear_range, product_range, word_range


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
        dr, gr = word_range(options.data_width), word_range(options.kernel_width)
        self._pairs = [(y, d, g) for y, d, g in geometry.triples.tolist()]
        self._p_range = product_range(dr, gr)
        self._graph = build_graph([[int(t[0] == o) for t in self._pairs] for o in range(geometry.n_y)], share=False)
        self._node_ranges = [linear_range(f, [self._p_range] * len(self._pairs)) for f in self._graph.forms()]
        T = geometry.tensor()
        self._y_ranges = [bilinear_range(T[o], dr, gr)[0] for o in range(geometry.n_y)]
        self.y_exact_width = max(r.width for r in self._y_ranges)
        self.y_width = options.output_width or self.y_exact_width
        members = {"d": In(data.ArrayLayout(signed(options.data_width), geometry.n_d)),
                   "g": In(data.ArrayLayout(signed(options.kernel_width), geometry.n_g)),
                   "y": Out(data.ArrayLayout(signed(self.y_width), geometry.n_y))}
        if options.pipelined:
            members["in_valid"] = In(1)
            members["out_valid"] = Out(1)
        super().__init__(members)
        deep = options.pipeline is Pipeline.DEEP
        n = options.adders_per_stage if deep else None
        unit = [Division(0, 1, 1, self.y_exact_width, build_graph([[1]])) for _ in range(geometry.n_y)]
        self._output = ExactDivision(unit, self._y_ranges, self.y_width, options, n)
        self._output._MustUse__silence = True  # unused when the baseline is built for its signature only
        self._split_levels = split_levels(options.data_width, options.kernel_width) if deep else 0
        if deep:  # operands, products (and the sums of split ones), adder tree, sums, rounding, y
            self.latency = (DEEP_OPERAND_REGISTERS + DEEP_PRODUCT_REGISTERS + self._split_levels
                            + graph_latency(self._graph, n) + 1
                            + self._output.latency + 1)
        else:
            self.latency = STAGES_LATENCY if options.pipeline is Pipeline.STAGES else 0

    @property
    def multipliers(self) -> int:
        return len(self._pairs)

    def elaborate(self, platform):
        m = Module()
        o = self.options
        deep, stages = o.pipeline is Pipeline.DEEP, o.pipeline is Pipeline.STAGES
        n = o.adders_per_stage if deep else None
        operand = DEEP_OPERAND_REGISTERS if deep else int(stages)
        d = [delay(m, self.d[i], operand, f"d_q{i}") for i in range(self.geometry.n_d)]
        g = [delay(m, self.g[i], operand, f"g_q{i}") for i in range(self.geometry.n_g)]
        prods = []
        for i, (_, di, gi) in enumerate(self._pairs):
            prods.append(emit_product(m, d[di], g[gi], self._p_range.width,
                                      DEEP_PRODUCT_REGISTERS if deep else int(stages), self._split_levels,
                                      f"p{i}", split=deep))
        rows = emit_graph(m, self._graph, prods, [r.width for r in self._node_ranges], "sum", n)
        m.submodules.output = out = self._output
        for o_, v in enumerate(rows):
            m.d.comb += word(out.x, o_).eq(delay(m, v, int(deep or stages), f"s_q{o_}"))
            m.d.comb += self.y[o_].eq(delay(m, word(out.y, o_), int(deep or stages), f"y_q{o_}"))
        if o.pipelined:
            valid_chain(m, self.in_valid, self.out_valid, self.latency)
        return m
