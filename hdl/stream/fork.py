"""Fork: one stream to several consumers (a residual block's main branch and its shortcut).

Every consumer gets every beat. A beat leaves the input when each consumer has taken it: a flag per
consumer remembers that it has, so ``tvalid`` towards a consumer never waits on another's ``tready``
(AXI4-Stream: a source's valid must not depend on the sink's ready).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.engine import axis_stream
from ..components import CheckedComponent


class Fork(CheckedComponent):
    """``s_axis`` to ``m_axis0 .. m_axis{n-1}``, ``width`` bits a beat, ``tlast`` with it.

    Attributes
    ----------
    s_axis : In(axis_stream(width))
    m_axis0 ... : Out(axis_stream(width))
        The same beats, each taken at its consumer's pace (the input waits for the slowest).
    """

    @classmethod
    def check(cls, width: int, outputs: int) -> None:
        if outputs < 2 or width < 1:
            raise WinohdlError(f"Fork: {outputs} outputs of {width} bits (at least 2 and 1)")

    def __init__(self, width: int, outputs: int):
        self.width, self.outputs = width, outputs
        super().__init__({"s_axis": In(axis_stream(width)),
                          **{f"m_axis{i}": Out(axis_stream(width)) for i in range(outputs)}})

    def port(self, i: int):
        return getattr(self, f"m_axis{i}")

    def elaborate(self, platform):
        m = Module()
        s = self.s_axis
        sent = [Signal(name=f"sent{i}") for i in range(self.outputs)]   # consumer i took the current beat
        done = []
        for i, flag in enumerate(sent):
            o = self.port(i)
            m.d.comb += [o.tdata.eq(s.tdata), o.tlast.eq(s.tlast), o.tvalid.eq(s.tvalid & ~flag)]
            done.append(flag | o.tready)
        m.d.comb += s.tready.eq(Cat(*done).all())
        for i, flag in enumerate(sent):
            o = self.port(i)
            with m.If(s.tvalid & s.tready):
                m.d.sync += flag.eq(0)
            with m.Elif(o.tvalid & o.tready):
                m.d.sync += flag.eq(1)
        return m
