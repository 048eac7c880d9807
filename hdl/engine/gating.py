"""Zero-operand gating (:class:`~hdl.engine.modes.Gating`): a multiplier whose data operand is zero is
held still.

Each multiplier's operands come through one register each (the data's, shared by the output lanes, and
the weight's), which a DSP block absorbs. Gated, those registers load only when the data operand entering
them is not zero, so a zero leaves the multiplier's inputs (and so its partial products and product
register) as they were; the zero's flag travels beside the product, which is then taken as zero. The
product of a zero operand is zero, so the sums are the same bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Module, Mux, Signal, Value

from ..components import emit_product
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


@dataclass(frozen=True)
class Gated:
    """Zero-operand gating (:mod:`hdl.engine.gating`): each data operand's held register and zero flags,
    keyed as the operands are; :meth:`weight` holds a weight operand with its data operand's flag, and
    :meth:`product` zeroes a product whose data operand was zero."""

    operands: dict
    zero: dict       # entering the operand registers: they hold
    flags: dict      # beside the operand registers

    @classmethod
    def make(cls, m: Module, pre: dict, prefix: str = "v") -> "Gated":
        names = {k: f"{prefix}{k[0]}_{k[1]}" for k in pre}
        zero = {k: zero_flag(m, x, names[k]) for k, x in pre.items()}
        return cls({k: held(m, x, zero[k], names[k]) for k, x in pre.items()}, zero,
                   {k: flag_register(m, zero[k], names[k]) for k in pre})

    def weight(self, m: Module, w, key, name: str):
        return held(m, w, self.zero[key], f"{name}_w")

    def product(self, m: Module, prod, key, plan, name: str):
        return zeroed(m, prod, self.flags[key], plan.product.cycles + plan.split_levels, name)


def multiply(m: Module, p, data, weight, width: int, name: str, kind, gated: "Gated | None" = None, key=None):
    """An engine's multiplier of ``data`` (its operand register already built) and ``weight`` at ``width``
    bits through the product registers of plan ``p`` (:func:`~hdl.components.emit_product`, split where
    deep); ``gated``: the weight held with ``data``'s zero flag (``key``) and the product zeroed on it."""
    weight = gated.weight(m, weight, key, name) if gated else weight
    prod = emit_product(m, data, weight, width, p.product.cycles, p.split_levels, name, split=True, kind=kind,
                        span=p.options.fabric_tree.span)
    return gated.product(m, prod, key, p, name) if gated else prod
