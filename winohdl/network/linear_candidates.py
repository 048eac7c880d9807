"""The candidates of a linear layer: the dense unit at each count of outputs a cycle, and, where its weights have
zeros, the units walking the others (:mod:`winohdl.network.candidates` offers both for a linear node)."""

from __future__ import annotations

import numpy as np

from .budget import Memory
from .candidates import Candidate, Context, divisors
from .cells import REQUANT_LOGIC
from .decision import UnitDecision, has_zeros, linear_cycles
from .graph import Node

LANE_LOGIC = 6
"""Per output lane, logic cells a bit of its logit beside its sums: the output queue (LUT RAM and its read
multiplexer) and the arg-max's comparison (the digits network's 10-lane unit as Yosys mapped it: 1,911
cells, 1,980 planned; ResNet-8's one lane: 475, 344 planned)."""


def linear_candidates(node: Node, ctx: Context, weights=None) -> list[Candidate]:
    """The dense units (``PK`` outputs a cycle from one input word a cycle: PK multipliers over in x out / PK
    cycles), then the walking ones where ``weights`` has zeros (:func:`_walking_linear`)."""
    dw, kw = ctx.data_width, ctx.kernel_width
    fi, fo = node.attrs.in_features, node.attrs.out_features
    acc = dw + kw + max(1, fi - 1).bit_length()
    out = []
    for lo in divisors(fo):
        for li in (1,):     # the unit reads one input word a cycle
            dsp = lo * li * ctx.dsp_per_multiplier(dw, kw)
            if dsp > ctx.budget.dsp and lo * li > 1:
                break
            decision = UnitDecision(lo)
            cycles = linear_cycles(weights, node.attrs, decision)
            # one ROM of every multiplier's weight a cycle (hdl.stream.linear), the input rows' buffer
            mem = ctx.memory([Memory(1, cycles, lo * li * kw, rom=True), Memory(li, fi // li, dw)])
            logic = lo * (li * acc + acc + REQUANT_LOGIC + LANE_LOGIC * acc) + mem.logic + 100
            out.append(Candidate(node.name, decision, "linear", lo * li, dsp, mem.bram, logic, cycles, cycles,
                                 memory_logic=mem.logic))
    return out + _walking_linear(node, weights, ctx, acc)


def _walking_linear(node: Node, weights, ctx: Context, acc: int) -> list[Candidate]:
    """A linear layer's units walking its non-zero ``weights`` (:class:`hdl.stream.sparse_linear.SparseLinear`),
    Q = 1 up to the most non-zeros of a column (more would only idle): the walk's memory (column, Q weights and
    their rows an entry), every output's accumulator, each adding Q selected products."""
    if not has_zeros(weights):
        return []
    fi, fo, dw, kw = node.attrs.in_features, node.attrs.out_features, ctx.data_width, ctx.kernel_width
    out = []
    for q in range(1, max(1, int(np.count_nonzero(weights, axis=0).max())) + 1):
        dsp = q * ctx.dsp_per_multiplier(dw, kw)
        if dsp > ctx.budget.dsp and q > 1:
            break
        decision = UnitDecision(fo, multipliers=q)
        cycles = linear_cycles(weights, node.attrs, decision)
        entry = max(1, fi - 1).bit_length() + q * (kw + fo.bit_length())
        mem = ctx.memory([Memory(1, cycles, entry, rom=True), Memory(1, fi, dw)])
        logic = fo * (acc + q * (dw + kw) + REQUANT_LOGIC + LANE_LOGIC * acc) + mem.logic + 100
        out.append(Candidate(node.name, decision, "linear", q, dsp, mem.bram, logic, cycles, cycles,
                             memory_logic=mem.logic))
    return out
