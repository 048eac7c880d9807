"""A pin-light register harness for placing and routing a layer engine.

The engine's weight and output buses are far wider than a package's pins: the weight beat is
shifted in one bit per cycle into a register that drives ``s_axis_w.tdata``, and the output
beat is captured into a register that shifts out one bit per cycle. The feature-map stream and
every handshake stay on pins, each input and each output through a register, so the clock paths
timed are the engine's own (an output pin driven by the engine's logic would pull that logic to
the pad). Resource figures come from the engine alone; the harness only gives place and
route real, registered paths to time.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..harness import serial_in, serial_out


class EngineHarness(wiring.Component):
    """Wraps a :class:`~hdl.engine.engine.LayerEngine`.

    Attributes
    ----------
    w_si, w_valid : In(1)       serial weight bit; weight tvalid
    fm_data : In(PC * w)        feature-map tdata; ``fm_valid`` In(1)
    y_ready, y_load : In(1)     output tready; capture the output beat (else shift it)
    so : Out(1)                 serial output bit
    w_ready, fm_ready, y_valid, y_last, busy : Out(1)
    """

    def __init__(self, engine):
        self._engine = engine
        super().__init__({"w_si": In(1), "w_valid": In(1), "fm_data": In(len(engine.s_axis_fm.tdata)),
                          "fm_valid": In(1), "y_ready": In(1), "y_load": In(1), "so": Out(1),
                          "w_ready": Out(1), "fm_ready": Out(1), "y_valid": Out(1), "y_last": Out(1),
                          "busy": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.engine = e = self._engine
        wreg = serial_in(m, self.w_si, len(e.s_axis_w.tdata), "wreg")
        fm = Signal(len(self.fm_data))
        fv, wv, yr, yl = Signal(), Signal(), Signal(), Signal()
        m.d.sync += [fm.eq(self.fm_data), fv.eq(self.fm_valid), wv.eq(self.w_valid), yr.eq(self.y_ready),
                     yl.eq(self.y_load)]
        m.d.comb += [e.s_axis_w.tdata.eq(wreg), e.s_axis_w.tvalid.eq(wv),
                     e.s_axis_fm.tdata.eq(fm), e.s_axis_fm.tvalid.eq(fv), e.m_axis_y.tready.eq(yr)]
        m.d.sync += [self.w_ready.eq(e.s_axis_w.tready), self.fm_ready.eq(e.s_axis_fm.tready),
                     self.y_valid.eq(e.m_axis_y.tvalid), self.y_last.eq(e.m_axis_y.tlast), self.busy.eq(e.busy)]
        m.d.comb += self.so.eq(serial_out(m, Cat(e.m_axis_y.tdata, e.m_axis_y.tkeep), yl, "cap"))
        return m
