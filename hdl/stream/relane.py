"""Relane: a stream of ``L_in`` words a beat as ``L_out`` words a beat (one divides the other).

Between a layer that emits PK channels a beat and one that takes PC, so the planner may choose
each layer's parallelism alone. Words keep their order; ``tlast`` stays on the frame's last word.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..components import CheckedComponent
from .axis import output_queue


class Relane(CheckedComponent):
    """``in_lanes`` words a beat in, ``out_lanes`` out, ``width`` bits a word (the two differ).

    Splitting (``in_lanes = k * out_lanes``): a beat is held and leaves in k beats, low words first
    (k cycles a beat in). Gathering (``out_lanes = k * in_lanes``): k beats fill one (one beat a cycle
    in). Results go through the output queue of the units (:func:`hdl.stream.axis.output_queue`), so
    ``s_axis.tready`` is a function of registers, never of ``m_axis.tready``.

    Attributes
    ----------
    s_axis : In(axis_stream(in_lanes * width))
    m_axis : Out(axis_stream(out_lanes * width))
    """

    @classmethod
    def check(cls, in_lanes: int, out_lanes: int, width: int) -> None:
        if min(in_lanes, out_lanes, width) < 1 or in_lanes == out_lanes or (in_lanes % out_lanes and
                                                                             out_lanes % in_lanes):
            raise WinohdlError(f"Relane: {in_lanes} lanes to {out_lanes}: they must differ and one must "
                               "divide the other")

    def __init__(self, in_lanes: int, out_lanes: int, width: int):
        self.in_lanes, self.out_lanes, self.width = in_lanes, out_lanes, width
        super().__init__({"s_axis": In(axis_stream(in_lanes * width)), "m_axis": Out(axis_stream(out_lanes * width))})

    def elaborate(self, platform):
        m = Module()
        q = output_queue(m, self.m_axis, 1)
        pushed = Signal(name="pushed")
        m.d.sync += pushed.eq(q.reserve)
        m.d.comb += q.push.eq(pushed)
        (self._split if self.in_lanes > self.out_lanes else self._gather)(m, q)
        return m

    def _split(self, m: Module, q) -> None:
        s, k = self.s_axis, self.in_lanes // self.out_lanes
        part = self.out_lanes * self.width
        held, last = Signal(len(s.tdata), name="held"), Signal(name="held_last")
        left = Signal(range(k + 1), name="parts_left")     # parts of the held beat still to leave
        emit = Signal(name="emit")
        m.d.comb += [emit.eq((left != 0) & q.ok), q.reserve.eq(emit),
                     s.tready.eq((left == 0) | ((left == 1) & q.ok))]
        with m.If(emit):
            m.d.sync += [q.data.eq(held[:part]), q.last.eq(last & (left == 1))]
        with m.If(s.tvalid & s.tready):
            m.d.sync += [held.eq(s.tdata), last.eq(s.tlast), left.eq(k)]
        with m.Elif(emit):
            m.d.sync += [held.eq(held >> part), left.eq(left - 1)]

    def _gather(self, m: Module, q) -> None:
        s, k = self.s_axis, self.out_lanes // self.in_lanes
        part = self.in_lanes * self.width
        n = Signal(range(k), name="parts_in")
        m.d.comb += [s.tready.eq((n != k - 1) | q.ok), q.reserve.eq(s.tvalid & s.tready & (n == k - 1))]
        with m.If(s.tvalid & s.tready):
            with m.Switch(n):
                for i in range(k):
                    with m.Case(i):
                        m.d.sync += q.data[i * part:(i + 1) * part].eq(s.tdata)
            m.d.sync += [n.eq(Mux(n == k - 1, 0, n + 1)), q.last.eq(s.tlast)]
