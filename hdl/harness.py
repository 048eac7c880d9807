"""A serial register harness for place and route: four pins, every core path register to register.

Small packages lack pins for a tile's wide ports, and a combinational core has no
clocked path to time. The harness shifts the inputs in one bit per cycle into a
register that drives the core, and captures the core's outputs in a register
that shifts out one bit per cycle.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


class SerialHarness(wiring.Component):
    """Wraps a tile (Winograd or direct) for place and route.

    Parameters
    ----------
    core : wiring.Component
        A tile with packed ports ``d``, ``g`` or ``u`` (inputs) and ``y`` (output), and
        optionally ``in_valid``/``out_valid``.

    Attributes
    ----------
    si : In(1)    serial input bit, shifted into the core's input register
    load : In(1)  1: capture the core's outputs; 0: shift the capture register
    so : Out(1)   serial output bit
    """

    def __init__(self, core: wiring.Component):
        self._core = core
        super().__init__({"si": In(1), "load": In(1), "so": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        names = [n for n in ("d", "g", "u") if n in core.signature.members]
        shift_in = serial_in(m, self.si, sum(len(getattr(core, n).as_value()) for n in names), "shift_in")
        offset = 0
        for n in names:
            port = getattr(core, n).as_value()
            m.d.comb += port.eq(shift_in[offset:offset + len(port)])
            offset += len(port)
        if "in_valid" in core.signature.members:
            m.d.comb += core.in_valid.eq(1)
        m.d.comb += self.so.eq(serial_out(m, core.y.as_value(), self.load, "capture"))
        return m


def serial_in(m: Module, bit: Value, width: int, name: str) -> Signal:
    """A ``width``-bit register named ``name`` that shifts ``bit`` in at bit 0 every cycle (the rest moves up)."""
    reg = Signal(width, name=name)
    m.d.sync += reg.eq(Cat(bit, reg[:-1]))
    return reg


def serial_out(m: Module, value: Value, load: Value, name: str) -> Value:
    """``value`` one bit per cycle: a register named ``name`` that loads it when ``load`` and
    otherwise shifts right; returns its bit 0."""
    reg = Signal(len(value), name=name)
    with m.If(load):
        m.d.sync += reg.eq(value)
    with m.Else():
        m.d.sync += reg.eq(reg >> 1)
    return reg[0]


class StreamHarness(wiring.Component):
    """Wraps a component with one input stream ``s_axis`` and one output stream ``m_axis`` (a
    network's top) for place and route: the input beat and every handshake on pins through a
    register, the output beat captured and shifted out one bit per cycle, so the paths timed are
    the core's own.

    Attributes
    ----------
    data : In(len(s_axis.tdata))   input tdata; ``valid`` In(1)
    y_ready, y_load : In(1)        output tready; capture the output beat (else shift it)
    so : Out(1)                    serial output bit
    ready, y_valid, y_last : Out(1)
    """

    def __init__(self, core: wiring.Component):
        self._core = core
        super().__init__({"data": In(len(core.s_axis.tdata)), "valid": In(1), "y_ready": In(1), "y_load": In(1),
                          "so": Out(1), "ready": Out(1), "y_valid": Out(1), "y_last": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        data, valid, y_ready, y_load = Signal(len(self.data)), Signal(), Signal(), Signal()
        m.d.sync += [data.eq(self.data), valid.eq(self.valid), y_ready.eq(self.y_ready), y_load.eq(self.y_load)]
        m.d.comb += [core.s_axis.tdata.eq(data), core.s_axis.tvalid.eq(valid), core.m_axis.tready.eq(y_ready)]
        m.d.sync += [self.ready.eq(core.s_axis.tready), self.y_valid.eq(core.m_axis.tvalid),
                     self.y_last.eq(core.m_axis.tlast)]
        m.d.comb += self.so.eq(serial_out(m, core.m_axis.tdata, y_load, "capture"))
        return m
