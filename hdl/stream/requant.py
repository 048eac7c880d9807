"""Requantise: a convolution's accumulators as int8 activations (bias, an integer multiplier where the
scales are not powers of two, rounding shift, saturation, ReLU)."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..widths import Range, signed_width
from ..pipeline import register
from ..components import CheckedComponent
from .axis import (flag_chain, lane, output_queue, saturate_register, shift_round_registered,
                   signed_register, table_lookup, word_range)

LATENCY = 5
"""Cycles from an input handshake to its result's push into the output queue: the bias look-up,
the add, the rounding shift (two: the floor and the round-up bit, then their sum) and the
saturation, each registered. A multiplier (any ``M != 1``) adds one registered cycle, the product,
between the add and the shift."""


class Requantise(CheckedComponent):
    """``requantise((acc + bias[c]) * M[c], shift[c], out_bits, relu)`` on a stream of accumulators
    (clamped at ``high`` too where given; ``M`` is 1 for every channel unless ``multiplier`` is given).

    Beats carry ``lanes`` consecutive channels; the channel group (``C / lanes`` beats per pixel)
    cycles with every beat and starts again after ``tlast``. Throughput one beat per cycle; latency
    ``LATENCY + 2`` cycles to ``m_axis`` (the output queue's register and memory).

    Parameters
    ----------
    lanes : int
        Channels per beat L (divides C).
    in_width : int
        Bits of an input accumulator word (two's complement).
    bias : list of int
        Per output channel, added to the accumulator first (at its exponent); C entries.
    shift : list of int
        Per output channel, the rounding shift right (round half to even), or an exact left shift
        where <= 0; C entries. Each distinct shift is one rounding circuit, selected per lane.
    relu : bool
        Clamp at 0 below.
    out_bits : int
        Bits of an output word (8: int8).
    high : int or None
        With ``relu``, the clamp above (ReLU6: 6 in output steps), below the word's own top.
    multiplier : list of int or None
        Per output channel, the integer ``M >= 1`` the sum is multiplied by before the rounding shift
        (trained scales that are not powers of two: :mod:`winohdl.network.multiplier`); None: 1 for
        every channel, no multiplier in the circuit.

    Attributes
    ----------
    s_axis : In(axis_stream(lanes * in_width))
        The accumulators, lane i at bits ``[i*in_width +: in_width]``.
    m_axis : Out(axis_stream(lanes * out_bits))
        The activations, same order; ``tlast`` as it came in.
    """

    @classmethod
    def check(cls, lanes: int, in_width: int, bias, shift, relu: bool = False, out_bits: int = 8,
              high: int | None = None, multiplier=None) -> None:
        C = len(bias)
        if multiplier is not None and (len(multiplier) != C or min(multiplier) < 1):
            raise WinohdlError(f"Requantise: {len(multiplier)} multipliers for {C} channels (each at least 1)")
        if C == 0 or len(shift) != C:
            raise WinohdlError(f"Requantise: {C} biases and {len(shift)} shifts (one of each per channel, "
                               "at least one)")
        if lanes < 1 or C % lanes:
            raise WinohdlError(f"Requantise: {lanes} lanes do not divide {C} channels")
        if in_width < 1 or out_bits < 2:
            raise WinohdlError(f"Requantise: in_width {in_width} and out_bits {out_bits} (at least 1 and 2)")
        if high is not None and not (relu and high >= 1):
            raise WinohdlError(f"Requantise: an upper clamp ({high}) comes with the ReLU and is at least 1")

    def __init__(self, lanes: int, in_width: int, bias, shift, relu: bool = False, out_bits: int = 8,
                 high: int | None = None, multiplier=None):
        self.bias, self.shift = [int(b) for b in bias], [int(s) for s in shift]
        self.multiplier = [1] * len(self.bias) if multiplier is None else [int(v) for v in multiplier]
        self.multiplied = any(v != 1 for v in self.multiplier)
        self.latency = LATENCY + int(self.multiplied)
        C = len(self.bias)
        self.lanes, self.in_width, self.relu, self.out_bits, self.high = lanes, in_width, relu, out_bits, high
        self.groups = C // lanes
        super().__init__({"s_axis": In(axis_stream(lanes * in_width)), "m_axis": Out(axis_stream(lanes * out_bits))})

    def elaborate(self, platform):
        m = Module()
        L, G = self.lanes, self.groups
        q = output_queue(m, self.m_axis, self.latency)
        s = self.s_axis
        hs = s.tvalid & s.tready
        m.d.comb += [s.tready.eq(q.ok), q.reserve.eq(hs)]
        group = Signal(range(G), name="group")
        with m.If(hs):
            m.d.sync += group.eq(Mux(s.tlast | (group == G - 1), 0, group + 1))
        shifts = sorted(set(self.shift))
        b_lo, b_hi = min(self.bias + [0]), max(self.bias + [0])
        bw, sw = signed_width(b_lo, b_hi), max(1, (len(shifts) - 1).bit_length())
        mw = max(self.multiplier).bit_length() if self.multiplied else 0
        ew = bw + sw + mw
        # per channel group, each lane's bias, the index of its shift among the distinct ones, its multiplier
        entry = [(self.bias[c] & ((1 << bw) - 1)) | (shifts.index(self.shift[c]) << bw)
                 | ((self.multiplier[c] << (bw + sw)) if mw else 0) for c in range(G * L)]
        words = [sum(entry[g * L + i] << (i * ew) for i in range(L)) for g in range(G)]
        table = table_lookup(m, words, L * ew, group, "consts")
        acc_r = word_range(self.in_width)
        x = [signed_register(m, lane(s.tdata, i, self.in_width), acc_r, f"acc{i}") for i in range(L)]
        outs = []
        for i in range(L):
            entry = table[i * ew:(i + 1) * ew]
            outs.append(self._lane(m, i, x[i], acc_r, entry[:bw].as_signed(), Range(b_lo, b_hi), entry[bw:bw + sw],
                                   shifts, entry[bw + sw:] if mw else None))
        m.d.comb += [q.push.eq(flag_chain(m, hs, self.latency, "valid")),
                     q.last.eq(flag_chain(m, s.tlast, self.latency, "last")),
                     q.data.eq(Cat(*outs))]
        return m

    def _lane(self, m, i, x, acc_r, bias, bias_r, sel, shifts, mult=None):
        """Lane ``i``'s add, product (with a multiplier), rounding shift and saturation, each into a
        register; its output word."""
        sum_r = Range(acc_r.lo + bias_r.lo, acc_r.hi + bias_r.hi)
        total = signed_register(m, x + bias if bias_r != Range(0, 0) else x, sum_r, f"sum{i}")
        if mult is not None:
            lo, hi = min(self.multiplier), max(self.multiplier)
            mult_d = register(m, mult, f"mult{i}")            # beside the sum
            prod_r = Range(min(sum_r.lo * hi, sum_r.lo * lo), max(sum_r.hi * hi, sum_r.hi * lo))
            total, sum_r = signed_register(m, total * mult_d, prod_r, f"prod{i}"), prod_r
        # beside the sum (and the product), then the two rounding cycles
        sel_d = register(m, sel, f"sel{i}", cycles=3 + int(mult is not None))
        rounded = [shift_round_registered(m, total, sum_r, sh, f"round{i}_{k}") for k, sh in enumerate(shifts)]
        value, r = rounded[0]
        for k in range(1, len(shifts)):
            value = Mux(sel_d == k, rounded[k][0], value)
            r = Range(min(r.lo, rounded[k][1].lo), max(r.hi, rounded[k][1].hi))
        return saturate_register(m, value, r, self.out_bits, self.relu, f"sat{i}", self.high)
