"""What the stream units share: lanes, constant tables, exact rounding and saturation, the output queue.

Every unit between the layer engines (:mod:`hdl.stream`) moves AXI4-Stream beats of L lanes
(:func:`~hdl.engine.engine.axis_stream`; lane i at bits ``[i*w +: w]``, two's complement) and is built
the same way: a free-running pipeline (no enable on the datapath registers, so vendor blocks can absorb
them) that writes an output queue, and an input side that takes a beat only when the queue has a slot
reserved for its result (a *credit*). The credit is a register, so ``s_axis.tready`` is a function of
registers only: it never passes ``m_axis.tready`` through combinationally, and gaps and back-pressure
at any cycle are absorbed by the queue. The queue holds ``latency + 4`` results: one beat per cycle
with ``m_axis.tready`` held high (a credit comes back four cycles after its result was written).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib.memory import Memory

from winohdl.core.errors import WinohdlError
from winohdl.core.words import pack, unpack  # noqa: F401  (re-exported: one definition)

from ..pipeline import kept_copies, numbered, wrapped_increment
from ..widths import Range, signed_width

# A table of at most this many words is a constant multiplexer (at most four address bits: one LUT4
# per output bit); a larger one is a ROM (amaranth.lib.memory: block RAM or distributed ROM).
MUX_ENTRIES = 16

# Cycles from a result's write into the queue to its credit's return when m_axis.tready is high
# (memory write, output register, handshake, the handshake registered): the queue holds
# ``latency + QUEUE_SLACK + 2`` results (one more: a reservation reaches the counter a cycle late).
QUEUE_SLACK = 4


def word_range(bits: int) -> Range:
    """The range of a signed ``bits``-bit word."""
    return Range(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def lane(value: Value, i: int, width: int) -> Value:
    """Lane ``i`` of a packed beat (``width`` bits a lane), signed."""
    return value[i * width:(i + 1) * width].as_signed()


def log2_exact(n: int) -> int | None:
    """``log2(n)`` when ``n`` is a power of two, else None."""
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def table_lookup(m: Module, words: list[int], width: int, index: Value, name: str) -> Value:
    """``words[index]`` (unsigned ``width``-bit words) one cycle after ``index``: a constant where
    every word is the same, a registered constant multiplexer for a small table, a ROM otherwise."""
    if len(set(words)) == 1:
        return Const(words[0], width)
    if len(words) <= MUX_ENTRIES:
        out = Signal(width, name=name, reset_less=True)
        with m.Switch(index):
            for i, w in enumerate(words):
                with m.Case(i):
                    m.d.sync += out.eq(w)
        return out
    rom = Memory(shape=unsigned(width), depth=len(words), init=words)
    m.submodules[f"{name}_rom"] = rom
    rp = rom.read_port()
    m.d.comb += rp.addr.eq(index)
    return rp.data


def sign_extend(m: Module, x: Value, width: int, name: str) -> Value:
    """``x`` (signed) as a signed word of at least ``width`` bits."""
    if len(x) >= width:
        return x
    wide = Signal(signed(width), name=name)
    m.d.comb += wide.eq(x)
    return wide


def _round_parts(m: Module, x: Value, r: Range, shift: int, name: str) -> tuple[Value, Value, Range]:
    """``x`` over ``2**shift`` (``shift > 0``) as its floor and the round-half-to-even up bit, and the
    rounded result's exact range."""
    from winohdl.core.fixed import shift_round
    xe = sign_extend(m, x.as_signed(), shift + 2, f"{name}_ext")
    floor, rem, half = xe.shift_right(shift), xe[:shift], 1 << (shift - 1)
    up = (rem > half) | ((rem == half) & xe[shift])
    return floor, up, Range(shift_round(r.lo, shift), shift_round(r.hi, shift))


def shift_round_value(m: Module, x: Value, r: Range, shift: int, name: str) -> tuple[Value, Range]:
    """Hardware :func:`winohdl.core.fixed.shift_round`: ``x`` (signed, values in ``r``) over ``2**shift``
    rounded half to even, or ``x << -shift`` for ``shift <= 0``; with the result's exact range."""
    if shift <= 0:
        return x.as_signed() << -shift, Range(r.lo << -shift, r.hi << -shift)
    floor, up, out = _round_parts(m, x, r, shift, name)
    return floor + up, out


def shift_round_registered(m: Module, x: Value, r: Range, shift: int, name: str) -> tuple[Signal, Range]:
    """:func:`shift_round_value` in two registered cycles: the floor and the round-up bit (a comparison
    of the dropped bits), then their sum; a left shift (``shift <= 0``) is registered twice."""
    if shift <= 0:
        value, out = shift_round_value(m, x, r, shift, name)
        return signed_register(m, signed_register(m, value, out, f"{name}_q"), out, f"{name}_r"), out
    floor, up, out = _round_parts(m, x, r, shift, name)
    floor_q = signed_register(m, floor, Range(r.lo >> shift, r.hi >> shift), f"{name}_floor")
    up_q = Signal(name=f"{name}_up", reset_less=True)
    m.d.sync += up_q.eq(up)
    return signed_register(m, floor_q + up_q, out, f"{name}_r"), out


def saturate_value(x: Value, r: Range, lo: int, hi: int) -> tuple[Value, Range]:
    """``x`` (values in ``r``) clamped to ``[lo, hi]``; a test only at an end ``r`` crosses. Both tests
    read ``x`` (side by side, not one after the other), and at a power-of-two end they read its top
    bits rather than compare (``x > 2**k - 1``: not negative and a bit from k up set)."""
    x = x.as_signed()
    n, sign = len(x), x[-1]
    over = under = None
    if r.hi > hi:
        k = (hi + 1).bit_length() - 1
        over = ~sign & x[k:].any() if hi + 1 == 1 << k and k < n else x > hi
    if r.lo < lo:
        k = (-lo).bit_length() - 1
        under = sign if lo == 0 else sign & ~x[k:].all() if lo < 0 and -lo == 1 << k and k < n else x < lo
    value = x if over is None else Mux(over, hi, x)
    value = value if under is None else Mux(under, lo, value)
    return value, Range(max(r.lo, lo), min(r.hi, hi))


def signed_register(m: Module, value: Value, r: Range, name: str) -> Signal:
    """A reset-less register of the exact width of ``r`` loading ``value`` every cycle."""
    reg = Signal(signed(signed_width(r.lo, r.hi)), name=name, reset_less=True)
    m.d.sync += reg.eq(value)
    return reg


def product_register(m: Module, value: Value, r: Range, M: int, name: str) -> tuple[Signal, Range]:
    """``value`` (values in ``r``) times the constant ``M`` >= 1 (a trained scale's multiplier), registered at
    the product's exact width, and the product's range."""
    pr = Range(r.lo * M, r.hi * M)
    return signed_register(m, value * M, pr, name), pr


def saturate_register(m: Module, x: Value, r: Range, bits: int, relu: bool, name: str,
                      high: int | None = None) -> Signal:
    """``x`` (values in ``r``) saturated to a signed ``bits``-bit word (at 0 below with ``relu``, at ``high``
    above where given: a clamp such as ReLU6's), registered."""
    top = (1 << (bits - 1)) - 1
    value, _ = saturate_value(x, r, 0 if relu else -top - 1, top if high is None else min(top, high))
    out = Signal(signed(bits), name=name, reset_less=True)
    m.d.sync += out.eq(value)
    return out


def flag_chain(m: Module, value: Value, cycles: int, name: str) -> Value:
    """A control flag ``cycles`` registers late (registers with a reset: valid bits)."""
    for c in range(cycles):
        reg = Signal(name=f"{name}_d{c}")
        m.d.sync += reg.eq(value)
        value = reg
    return value


def flag_copies(m: Module, value: Value, n: int, name: str) -> list:
    """A control flag one register later, ``n`` times over (``<name>_c<i>``, with a reset, kept:
    :func:`hdl.pipeline.kept_copies`): a flag that selects in many words, a copy for each user."""
    return kept_copies(m, value, numbered(f"{name}_c", n), reset_less=False)


@dataclass(frozen=True)
class Queue:
    """The output queue's producer side (see :func:`output_queue`).

    Attributes
    ----------
    ok : Value
        A credit is free: a register (three or more credits a cycle ago).
    reserve : Signal
        Take a credit this cycle (only while ``ok``): a result will be pushed later.
    push, data, last : Signal
        Write ``data`` (the beat's tdata) and ``last`` (its tlast) into the queue.
    """

    ok: Value
    reserve: Signal
    push: Signal
    data: Signal
    last: Signal


def output_queue(m: Module, out, latency: int, name: str = "q") -> Queue:
    """A FIFO of ``latency + QUEUE_SLACK + 2`` results into the registered stream ``out`` (tdata, tvalid,
    tready, tlast), with the credit counter that keeps it from overflowing: a producer reserves a
    credit when it commits to a result (at most ``latency`` cycles before pushing it) and the credit
    returns when the result leaves on ``out``."""
    # ``ok`` is a register, and so is the reservation before it reaches the counter: the producer's
    # handshake (which fans out over its whole unit) never routes into the counter's adder. Two
    # reservations may be in flight beside the counter, so ``ok`` is "at least three credits" a cycle
    # ago, which still leaves one; the two credits never taken are two slots more, which keep the rate
    capacity = latency + QUEUE_SLACK + 2
    width = len(out.tdata)
    data = Signal(width, name=f"{name}_data")
    last = Signal(name=f"{name}_last")
    push = Signal(name=f"{name}_push")
    reserve = Signal(name=f"{name}_reserve")
    credits = Signal(range(capacity + 1), name=f"{name}_credits", init=capacity)
    ok = Signal(name=f"{name}_ok", init=1)
    # the output handshake registered before it returns its credit (a cycle later: the queue has a slot
    # more), so the reader's tready does not reach the counter in the cycle it is asserted
    release = Signal(name=f"{name}_release")
    m.d.sync += release.eq(out.tvalid & out.tready)
    reserved = Signal(name=f"{name}_reserved")
    m.d.sync += reserved.eq(reserve)
    # one step up or down, each computed from the register alone: the registered handshakes only select
    with m.If(reserved & ~release):
        m.d.sync += credits.eq(credits - 1)
    with m.Elif(release & ~reserved):
        m.d.sync += credits.eq(credits + 1)
    m.d.sync += ok.eq(credits >= 3)
    # one slot more than it ever holds, so that the pointers alone tell empty from full
    slots = capacity + 1
    fifo = Memory(shape=unsigned(width + 1), depth=slots, init=[])
    m.submodules[f"{name}_fifo"] = fifo
    fw = fifo.write_port()
    fr = fifo.read_port(domain="comb")
    wr = Signal(range(slots), name=f"{name}_wr")
    rd = Signal(range(slots), name=f"{name}_rd")
    take = Signal(name=f"{name}_take")
    nonempty = wr != rd
    m.d.comb += [fw.addr.eq(wr), fw.data.eq(Cat(data, last)), fw.en.eq(push), fr.addr.eq(rd),
                 take.eq(~out.tvalid | out.tready)]
    with m.If(push):
        m.d.sync += wr.eq(wrapped_increment(wr, slots))
    with m.If(take & nonempty):
        m.d.sync += rd.eq(wrapped_increment(rd, slots))
    with m.If(take):
        m.d.sync += [out.tvalid.eq(nonempty), out.tdata.eq(fr.data[:width]), out.tlast.eq(fr.data[width])]
    return Queue(ok, reserve, push, data, last)
