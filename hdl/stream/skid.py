"""Skid: a registered AXI4-Stream slice between two units, so that no path runs from one unit's state
through the other's handshake.

A unit's ``tready`` is a function of its own state (an engine's: the ring's space, its frame flags), and
the unit upstream moves its output queue on it in the same cycle: joined, the two make one path across
both units. Between them the slice gives each side a register: ``s_axis.tready`` is the register "a slot
is free" and ``m_axis.tvalid`` the register "a slot is full". The beats wait in two slots written and
read in turn (a two-entry FIFO). The free slot next to write loads the input every cycle, its enable a
register, and a handshake only moves the write pointer and the count: neither side's handshake reaches
the enable of a data register, however wide the beat (the output's ``tready`` moves the read pointer
and the two flags); ``m_axis.tdata`` and ``tlast`` are the read pointer's choice of the two slots.
One beat a cycle with ``m_axis.tready`` held high, one cycle behind the input.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..components import CheckedComponent


class Skid(CheckedComponent):
    """``s_axis`` to ``m_axis`` through two slots (a two-entry FIFO), ``width`` bits a beat.

    Attributes
    ----------
    s_axis : In(axis_stream(width))
        ``tready`` is a register: fewer than two beats held.
    m_axis : Out(axis_stream(width))
        The same beats in order, one cycle later at the earliest; ``tvalid`` a register, ``tdata`` and
        ``tlast`` a multiplexer of the two slots' registers on the read pointer (a register).
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
        data = [Signal(self.width, name=f"slot{i}_data", reset_less=True) for i in range(2)]
        last = [Signal(name=f"slot{i}_last", reset_less=True) for i in range(2)]
        wp, rp = Signal(name="write_slot"), Signal(name="read_slot")
        ready = Signal(name="ready", init=1)    # fewer than two held
        m.d.comb += [s.tready.eq(ready), o.tdata.eq(Mux(rp, data[1], data[0])), o.tlast.eq(Mux(rp, last[1], last[0]))]
        push, pop = s.tvalid & ready, o.tvalid & o.tready
        # the free slot the write pointer names loads the input every cycle, a beat or not (only the
        # handshake moves the pointer and the count): its enable is a register ("slot i is free and next
        # to write"), never the handshake, and the input's tvalid reaches three flip-flops
        load = [Signal(name=f"slot{i}_load", init=int(i == 0)) for i in range(2)]
        for i in range(2):
            with m.If(load[i]):
                m.d.sync += [data[i].eq(s.tdata), last[i].eq(s.tlast)]
        with m.If(pop):
            m.d.sync += rp.eq(~rp)
        # the count (0, 1, 2) as two flags, o.tvalid "one or two" and ready "not two"
        wp_next = wp ^ push
        ready_next = pop | (ready & ~(o.tvalid & push))
        m.d.sync += [wp.eq(wp_next), o.tvalid.eq(push | ~ready | (o.tvalid & ~pop)), ready.eq(ready_next),
                     load[0].eq(ready_next & ~wp_next), load[1].eq(ready_next & wp_next)]
        return m
