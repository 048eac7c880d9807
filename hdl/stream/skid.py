"""Skid: a registered AXI4-Stream slice between two units, so that no path runs from one unit's state
through the other's handshake.

A unit's ``tready`` is a function of its own state (an engine's: the ring's space, its frame flags), and
the unit upstream moves its output queue on it in the same cycle: joined, the two make one path across
both units. Between them the slice gives each side a register: ``s_axis.tready`` is the register "the
spare slot is empty", and ``m_axis``'s ``tvalid``, ``tdata`` and ``tlast`` are registers. One beat a
cycle with ``m_axis.tready`` held high; a beat arriving while the output stalls waits in the spare slot.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..components import CheckedComponent


class Skid(CheckedComponent):
    """``s_axis`` to ``m_axis`` through two registers (the output and a spare), ``width`` bits a beat.

    Attributes
    ----------
    s_axis : In(axis_stream(width))
        ``tready`` is a register: the spare slot is empty.
    m_axis : Out(axis_stream(width))
        The same beats in order, one cycle later at the earliest; ``tvalid``, ``tdata``, ``tlast`` registers.
    """

    @classmethod
    def check(cls, width: int) -> None:
        if width < 1:
            raise WinohdlError(f"Skid: {width} bits a beat (at least 1)")

    def __init__(self, width: int):
        self.width = width
        super().__init__({"s_axis": In(axis_stream(width)), "m_axis": Out(axis_stream(width))})

    def elaborate(self, platform):
        m = Module()
        s, o = self.s_axis, self.m_axis
        spare_valid = Signal(name="spare_valid")
        spare_data = Signal(self.width, name="spare_data", reset_less=True)
        spare_last = Signal(name="spare_last", reset_less=True)
        m.d.comb += s.tready.eq(~spare_valid)
        taken = s.tvalid & ~spare_valid
        with m.If(~o.tvalid | o.tready):           # the output register is free this cycle
            with m.If(spare_valid):
                m.d.sync += [o.tvalid.eq(1), o.tdata.eq(spare_data), o.tlast.eq(spare_last), spare_valid.eq(0)]
            with m.Else():
                m.d.sync += [o.tvalid.eq(s.tvalid), o.tdata.eq(s.tdata), o.tlast.eq(s.tlast)]
        with m.Elif(taken):                         # the output stalls: the beat waits in the spare slot
            m.d.sync += [spare_valid.eq(1), spare_data.eq(s.tdata), spare_last.eq(s.tlast)]
        return m
