"""Zero-operand gating (:class:`~hdl.engine.modes.Gating`): a multiplier whose data operand is zero is
held still.

Each multiplier's operands come through one register each (the data's, shared by the output lanes, and
the weight's), which a DSP block absorbs. Gated, those registers load only when the data operand entering
them is not zero, so a zero leaves the multiplier's inputs (and so its partial products and product
register) as they were; the zero's flag travels beside the product, which is then taken as zero. The
product of a zero operand is zero, so the sums are the same bit for bit.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value

from ..pipeline import delay


def zero_flag(m: Module, value: Value, name: str) -> Signal:
    """``value == 0``, the flag that holds the operand registers ``value`` enters (combinational)."""
    z = Signal(name=f"{name}_zero")
    m.d.comb += z.eq(value == 0)
    return z


def held(m: Module, value: Value, hold: Value, name: str) -> Signal:
    """The operand register of ``value``, loading only while ``hold`` is low (its clock enable)."""
    value = Value.cast(value)
    r = Signal(value.shape(), name=name, reset_less=True)
    with m.If(~hold):
        m.d.sync += r.eq(value)
    return r


def flag_register(m: Module, hold: Value, name: str) -> Signal:
    """``hold`` registered beside the operand registers it gates (the product's zero flag)."""
    r = Signal(name=f"{name}_zq", reset_less=True)
    m.d.sync += r.eq(hold)
    return r


def zeroed(m: Module, product: Value, flag: Value, cycles: int, name: str) -> Value:
    """``product``, or zero where the operands' flag, ``cycles`` registers behind it, is set."""
    late = delay(m, flag, cycles, f"{name}_zf") if cycles else flag
    return Mux(late, 0, product)
