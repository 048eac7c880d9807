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
