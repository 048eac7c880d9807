"""The Winograd tile: the components of :mod:`hdl.components` wired into ``y = A^T[(G g) * (B^T d)]``,
with the pipeline's registers and a latency computed from them."""

from __future__ import annotations

from amaranth.hdl import Module, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .components import (DEEP_OPERAND_REGISTERS, DEEP_PRODUCT_REGISTERS, ConstantMatrixProduct, Cut, ExactDivision,
                         MultiplierArray, division_latency, graph_latency, split_levels, valid_chain, word)
from .datapath import Datapath
from .options import KernelTransform, Pipeline
from .pipeline import delay


class WinogradTile(wiring.Component):
    """One Winograd convolution tile ``y = A^T[(G g) * (B^T d)]``, bit-exact.

    Parameters
    ----------
    datapath : Datapath
        The card, its integer scaling, graphs and widths.

    Attributes
    ----------
    d : In, ArrayLayout(signed(data_width), |d|)
        Input tile, row-major.
    g : In, ArrayLayout(signed(kernel_width), |g|)
        Kernel, row-major (kernel transform in hardware).
    u : In, ArrayLayout(signed(u_width), R)
        Transformed kernel ``G_int g`` (kernel transform offline), instead of g.
    y : Out, ArrayLayout(signed(y_width), |y|)
        Output tile, row-major.
    in_valid : In(1), out_valid : Out(1)
        Pipelined designs only: valid travels with the data, :attr:`latency` cycles.

    Pipelines: ``stages`` registers after every operator: between the 1D passes of a row-column
    B^T, G or A^T (each pass is an operator; a flat transform is one), the multiplier operands,
    the products, the output transform's rows (before the exact division) and y (latency 4 plus
    the passes' registers, computed).
    ``deep`` registers the inputs, cuts B^T, G, A^T and the inverse multiplications every
    ``adders_per_stage`` adder levels (balanced: every path crosses the same registers),
    registers the multiplier operands twice (in the fabric, then the DSP's input registers), the
    product three times (the DSP's pipeline and output registers, then in the fabric), the A^T
    rows, the quotients, the rounded value and y. Datapath registers are reset-less; only the
    valid chain resets.
    """

    def __init__(self, datapath: Datapath):
        self.dp = datapath
        self.latency = tile_latency(datapath)
        super().__init__(tile_signature(datapath))

    def _blocks(self):
        """The sub-components: (B^T, G or None, multipliers, A^T, division, transforms' latency)."""
        dp, o = self.dp, self.dp.options
        g = dp.geometry
        deep = o.pipeline is Pipeline.DEEP
        n = _cut(o)
        bt = ConstantMatrixProduct(dp.data_graph, [o.data_width] * g.n_d, dp.data_node_ranges, dp.v_ranges, "bt", n)
        gt = ConstantMatrixProduct(dp.kernel_graph, [o.kernel_width] * g.n_g, dp.kernel_node_ranges,
                                   dp.u_ranges, "g", n) if o.kernel_transform is KernelTransform.HW else None
        mul = MultiplierArray(dp.v_widths, dp.u_widths, dp.m_widths,
                              registers=DEEP_PRODUCT_REGISTERS if deep else 0, split=deep)
        at = ConstantMatrixProduct(dp.output_graph, dp.m_widths, dp.output_node_ranges, dp.pre_ranges, "at", n)
        div = ExactDivision(dp.divisions, dp.pre_ranges, dp.y_width, o, n if deep else None)
        return bt, gt, mul, at, div, max(bt.latency, gt.latency if gt else 0)

    def elaborate(self, platform):
        m = Module()
        dp, o = self.dp, self.dp.options
        g = dp.geometry
        deep = o.pipeline is Pipeline.DEEP
        stages = o.pipeline is Pipeline.STAGES

        def link(dst, src, n: int, name: str, cycles: int) -> None:
            """dst[i] = src[i] for n words, through ``cycles`` reset-less registers."""
            for i in range(n):
                m.d.comb += word(dst, i).eq(delay(m, word(src, i), cycles, f"{name}{i}"))

        bt, gt, mul, at, div, transforms = self._blocks()
        m.submodules.data_transform = bt
        link(bt.x, self.d, g.n_d, "d_q", int(deep))
        m.submodules.multipliers = mul
        if gt is not None:
            m.submodules.kernel_transform = gt
            link(gt.x, self.g, g.n_g, "g_q", int(deep))
            u, u_latency = gt.y, gt.latency
        else:
            u, u_latency = self.u, 0  # valid u words fit their exact widths (host transform of a valid g)
            if deep:  # the input register of u, matching d's
                u_reg = Signal(data.ArrayLayout(signed(dp.u_port_width), dp.rank), name="u_in", reset_less=True)
                m.d.sync += u_reg.eq(self.u)
                u = u_reg
        # the operand registers (deep: in the fabric, then a DSP block's input registers); the shorter
        # transform is delayed to balance
        operand = DEEP_OPERAND_REGISTERS if deep else int(stages)
        link(mul.v, bt.y, dp.rank, "v_q", operand + transforms - bt.latency)
        link(mul.u, u, dp.rank, "u_q", operand + transforms - u_latency)
        m.submodules.output_transform = at
        link(at.x, mul.m, dp.rank, "m_q", int(stages))
        m.submodules.division = div
        link(div.x, at.y, g.n_y, "a_q", int(deep or stages))
        link(self.y, div.y, g.n_y, "y_q", int(deep or stages))
        if o.pipelined:
            valid_chain(m, self.in_valid, self.out_valid, self.latency)
        return m


def _cut(o) -> int | Cut | None:
    """Where the transforms' adder graphs are cut: every N levels (deep), between passes (stages) or never."""
    if o.pipeline is Pipeline.DEEP:
        return o.adders_per_stage
    return Cut.PASSES if o.pipeline is Pipeline.STAGES else None


def tile_signature(dp: Datapath) -> wiring.Signature:
    """The tile's ports (see :class:`WinogradTile`), from the datapath alone."""
    o = dp.options
    members = {"d": In(data.ArrayLayout(signed(o.data_width), dp.geometry.n_d))}
    if o.kernel_transform is KernelTransform.HW:
        members["g"] = In(data.ArrayLayout(signed(o.kernel_width), dp.geometry.n_g))
    else:
        members["u"] = In(data.ArrayLayout(signed(dp.u_port_width), dp.rank))
    members["y"] = Out(data.ArrayLayout(signed(dp.y_width), dp.geometry.n_y))
    if o.pipelined:
        members["in_valid"] = In(1)
        members["out_valid"] = Out(1)
    return wiring.Signature(members)


def tile_latency(dp: Datapath) -> int:
    """Cycles from d to y (computed from the blocks' cuts, never a literal; 0 combinational)."""
    o = dp.options
    n = _cut(o)
    hw = o.kernel_transform is KernelTransform.HW
    transforms = max(graph_latency(dp.data_graph, n), graph_latency(dp.kernel_graph, n) if hw else 0)
    at = graph_latency(dp.output_graph, n)
    if o.pipeline is Pipeline.DEEP:  # in, transforms, operands, products, A^T, A^T rows, division, y
        levels = max((split_levels(a, b) for a, b in zip(dp.v_widths, dp.u_widths)), default=0)
        return (1 + transforms + DEEP_OPERAND_REGISTERS + DEEP_PRODUCT_REGISTERS + levels + at + 1
                + division_latency(dp.divisions, n, o.output_width is not None) + 1)
    if o.pipeline is Pipeline.STAGES:  # transforms' passes, operands, products, A^T's passes, A^T rows, y
        return transforms + 1 + 1 + at + 1 + 1
    return 0
