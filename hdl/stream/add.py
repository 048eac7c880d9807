"""ResidualAdd: the sum of a residual block's two branches, aligned, requantised, optionally ReLU'd."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..widths import Range
from ..components import CheckedComponent
from .axis import (flag_chain, lane, output_queue, product_register, saturate_register, shift_round_value,
                   signed_register, word_range)

LATENCY = 4
"""Cycles from a pair's handshake to its result's push: the pair registered (the FIFO's block RAM has a
long clock-to-out: the ResNet-8 network's critical path ran from it through the adder, 95.7 MHz), the
aligned sum, the rounding shift and the saturation, each registered."""


class ResidualAdd(CheckedComponent):
    """``requantise((a << shift_main) + (b << shift_shortcut), out_shift, out_bits, relu)`` per lane, or with
    ``multiplier`` ``(M_a, M_b)``: ``requantise(a * M_a + b * M_b, out_shift, ...)`` (two activations at
    trained scales that are not powers of two: :mod:`winohdl.network.sum_multiplier`).

    ``a`` comes from the main branch, ``b`` from the shortcut, both the same shape and lanes: the
    left shifts align both to the smaller of their exponents (one of them is 0), ``out_shift`` is
    the output's exponent minus that one. The shortcut goes through a FIFO of ``shortcut_depth``
    beats (block or distributed RAM); a main beat is taken with the FIFO's oldest beat. Throughput
    one beat per cycle (``shortcut_depth >= 2``).

    No deadlock: the two branches usually fork from one stream, whose source can give a beat only
    when both take it. The shortcut may then run ahead of the main branch by as many beats as the
    main branch holds between the fork and this unit (taken from the fork, not yet offered here:
    its engines' line buffers and pipelines, its FIFOs). With ``shortcut_depth`` at least that
    many beats the fork never waits on the shortcut while the main branch needs input to make its
    next beat; with fewer, the fork, the main branch and this unit can wait on each other forever.

    Parameters
    ----------
    lanes : int
        Channels per beat.
    shift_main, shift_shortcut : int
        The aligning left shifts (>= 0).
    out_shift : int
        The rounding shift of the sum to the output's exponent (right if positive, else exact left).
    relu : bool
        Clamp at 0 below.
    high : int or None
        With ``relu``, the clamp above (ReLU6: 6 in output steps).
    shortcut_depth : int
        Beats the shortcut FIFO holds (see above).
    in_width, out_bits : int
        Bits of an input and an output value.
    multiplier : tuple of int or None
        ``(M_main, M_shortcut)`` (each >= 1), the inputs' constant multipliers in place of the aligning
        shifts (then both 0); the products are registered: one cycle more (:attr:`latency`).

    Attributes
    ----------
    s_axis_main : In(axis_stream(lanes * in_width))
        The main branch; its ``tlast`` is the output's.
    s_axis_shortcut : In(axis_stream(lanes * in_width))
        The shortcut; ``tlast`` not read.
    m_axis : Out(axis_stream(lanes * out_bits))
        The sum, same order.
    """

    @classmethod
    def check(cls, lanes: int, shift_main: int, shift_shortcut: int, out_shift: int, relu: bool = False,
              shortcut_depth: int = 16, in_width: int = 8, out_bits: int = 8, high: int | None = None,
              multiplier=None) -> None:
        if multiplier is not None and (len(multiplier) != 2 or min(multiplier) < 1 or shift_main or shift_shortcut):
            raise WinohdlError(f"ResidualAdd: multipliers {multiplier} must be two, each at least 1, without "
                               "aligning shifts")
        if min(shift_main, shift_shortcut) < 0:
            raise WinohdlError(f"ResidualAdd: aligning shifts {shift_main}, {shift_shortcut} must be left "
                               "shifts (>= 0)")
        if lanes < 1 or shortcut_depth < 1 or in_width < 1 or out_bits < 2:
            raise WinohdlError(f"ResidualAdd: lanes {lanes}, shortcut_depth {shortcut_depth}, in_width {in_width}"
                               f", out_bits {out_bits} (at least 1, 1, 1, 2)")
        if high is not None and not (relu and high >= 1):
            raise WinohdlError(f"ResidualAdd: an upper clamp ({high}) comes with the ReLU and is at least 1")

    def __init__(self, lanes: int, shift_main: int, shift_shortcut: int, out_shift: int, relu: bool = False,
                 shortcut_depth: int = 16, in_width: int = 8, out_bits: int = 8, high: int | None = None,
                 multiplier=None):
        self.lanes, self.shifts, self.out_shift, self.relu = lanes, (shift_main, shift_shortcut), out_shift, relu
        self.multiplier = None if multiplier is None else tuple(int(v) for v in multiplier)
        self.latency = LATENCY + (self.multiplier is not None)
        self.high = high
        self.shortcut_depth, self.in_width, self.out_bits = shortcut_depth, in_width, out_bits
        port = axis_stream(lanes * in_width)
        super().__init__({"s_axis_main": In(port), "s_axis_shortcut": In(port),
                          "m_axis": Out(axis_stream(lanes * out_bits))})

    def elaborate(self, platform):
        m = Module()
        L, w = self.lanes, self.in_width
        q = output_queue(m, self.m_axis, self.latency)
        a, b = self.s_axis_main, self.s_axis_shortcut
        fifo = m.submodules.shortcut = SyncFIFOBuffered(width=L * w, depth=self.shortcut_depth)
        m.d.comb += [fifo.w_data.eq(b.tdata), fifo.w_en.eq(b.tvalid), b.tready.eq(fifo.w_rdy),
                     a.tready.eq(fifo.r_rdy & q.ok)]
        hs = a.tvalid & a.tready
        m.d.comb += [fifo.r_en.eq(hs), q.reserve.eq(hs)]
        r = word_range(w)
        pair = Signal(2 * L * w, name="pair", reset_less=True)
        with m.If(hs):
            m.d.sync += pair.eq(Cat(a.tdata, fifo.r_data))
        outs = []
        for i in range(L):
            total, sum_r = self._sum(m, i, lane(pair, i, w), lane(pair, L + i, w), r)
            rounded, rr = shift_round_value(m, total, sum_r, self.out_shift, f"round{i}")
            outs.append(saturate_register(m, signed_register(m, rounded, rr, f"round{i}"), rr, self.out_bits,
                                          self.relu, f"out{i}", self.high))
        m.d.comb += [q.push.eq(flag_chain(m, hs, self.latency, "valid")),
                     q.last.eq(flag_chain(m, a.tlast, self.latency, "last")), q.data.eq(Cat(*outs))]
        return m

    def _sum(self, m, i, x, y, r: Range):
        """Lane ``i``'s aligned (or multiplied: the products registered first) sum, registered, and its range."""
        if self.multiplier is None:
            sa, sb = self.shifts
            sum_r = Range((r.lo << sa) + (r.lo << sb), (r.hi << sa) + (r.hi << sb))
            return signed_register(m, (x << sa) + (y << sb), sum_r, f"sum{i}"), sum_r
        (px, rx), (py, ry) = (product_register(m, v, r, M, f"prod{i}_{k}")
                              for k, (v, M) in enumerate(zip((x, y), self.multiplier)))
        sum_r = Range(rx.lo + ry.lo, rx.hi + ry.hi)
        return signed_register(m, px + py, sum_r, f"sum{i}"), sum_r
