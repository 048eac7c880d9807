"""Multipliers in the fabric: a signed product as radix-4 Booth partial products and a registered tree.

Where the hard multiplier blocks run out, a product is built from LUTs and carry chains
(:class:`hdl.options.MultiplierKind` ``FABRIC``). It is written as adders of selected, shifted copies of one
operand, never as ``a * b``: Yosys maps every ``$mul`` cell to a DSP block (ECP5 MULT18X18D) with no
per-cell switch, and a sum of shifted words is never turned back into a ``$mul``.

The narrower operand ``b`` is recoded in radix-4 Booth digits ``d_i`` in {-2, -1, 0, 1, 2} (from bits
``b[2i+1], b[2i], b[2i-1]``, ``b[-1] = 0``), so ``a * b = sum_i d_i * a * 4^i``: ceil(nb / 2) partial
products instead of nb. A negative digit's partial product is the complement of ``|d_i| a`` plus one;
the ones (one per digit, at bit ``2i``) form one more addend. Everything is kept modulo ``2^width``
(the product word as the engine builds it, which may be narrower than the full product: the
Winograd engine keeps each word modulo the bits its outputs read), and each addend is added only
above its lowest non-zero bit, so no carry chain spends cells on the low zeros.

The adder tree is balanced and registered: its levels are spread over the ``registers`` that follow a
DSP block's product (the block's pipeline and output registers and one in the fabric), so a fabric
product arrives in the same cycle as a hard one and the engine's schedule does not change.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed, unsigned

from .pipeline import delay


def booth_digits(b_width: int) -> int:
    """Radix-4 Booth digits (partial products) of a signed ``b_width``-bit multiplier."""
    return (b_width + 1) // 2


def tree_levels(addends: int) -> int:
    """Adder levels of a balanced tree over ``addends`` words."""
    return max(0, (addends - 1).bit_length())


def fabric_bits(a_width: int, b_width: int, width: int) -> tuple[int, int]:
    """``(select bits, adder bits)`` of :func:`fabric_product` for signed ``a_width`` x ``b_width``
    operands and a ``width``-bit product word: the partial products' selected bits (each a function
    of two bits of one operand and three of the other) and the adders' output bits (carry chains).
    The technology's figures per bit are the device table's (:class:`winohdl.core.device.FabricMultiplier`)."""
    nb = min(a_width, b_width)
    offsets = [2 * i for i in range(booth_digits(nb)) if 2 * i < width]
    select = sum(width - o for o in offsets)
    level, adders = offsets + [0], 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), 2):
            pair = level[i:i + 2]
            if len(pair) == 2:
                adders += width - max(pair)
            nxt.append(min(pair))
        level = nxt
    return select, adders


def _wrap(v: Value, width: int) -> Value:
    """The low ``width`` bits of ``v`` sign-extended (``v`` signed), unsigned."""
    v = v.as_signed()
    if len(v) >= width:
        return v.as_unsigned()[:width]
    return Cat(v.as_unsigned(), v[-1].replicate(width - len(v)))


def _partial_products(a: Value, b: Value, width: int) -> list[tuple[Value, int]]:
    """``(bits, offset)`` addends whose sum modulo ``2^width`` is ``a * b``: the word ``bits`` placed
    at bit ``offset`` (its bits below ``offset`` are zero and never added)."""
    nb = len(b)
    bits = [b[min(i, nb - 1)] for i in range(2 * booth_digits(nb))]    # b sign-extended to the digits
    out, negs = [], []
    for i in range(booth_digits(nb)):
        off = 2 * i
        if off >= width:
            break
        hi, mid, lo = bits[2 * i + 1], bits[2 * i], bits[2 * i - 1] if i else Const(0, 1)
        one = mid ^ lo
        two = (hi & ~mid & ~lo) | (~hi & mid & lo)
        neg = hi & ~(mid & lo)
        n = width - off
        x = _wrap(a, n)
        mag = Mux(two, Cat(Const(0, 1), x)[:n], Mux(one, x, 0))
        out.append(((mag ^ neg.replicate(n)).as_unsigned()[:n], off))
        negs.append((neg, off))
    # the ones of the negative digits, each at bit 2i of one word (their bits never collide)
    word = Cat(*[bit for neg, off in negs for bit in (neg, Const(0, 1))])[:width]
    out.append((word, 0))
    return out


def _add(m: Module, x: tuple[Value, int], y: tuple[Value, int], width: int, name: str,
         registered: bool) -> tuple[Value, int]:
    """``x + y`` modulo ``2^width`` (see :func:`_partial_products`); registered when asked."""
    (vx, ox), (vy, oy) = sorted((x, y), key=lambda t: t[1])
    n, low = width - ox, oy - ox
    s = Signal(unsigned(n), name=name, reset_less=True)
    total = Cat(vx[:low], (vx[low:] + vy)[:n - low]) if low else (vx + vy)[:n]
    if registered:
        m.d.sync += s.eq(total)
    else:
        m.d.comb += s.eq(total)
    return s, ox


def _carry(m: Module, x: tuple[Value, int], name: str, registered: bool) -> tuple[Value, int]:
    """An addend left over at an odd level, registered with the level's sums when they are."""
    if not registered:
        return x
    s = Signal(unsigned(len(x[0])), name=name, reset_less=True)
    m.d.sync += s.eq(x[0])
    return s, x[1]


def _named(m: Module, v: Value, name: str) -> Value:
    """``v`` as a signal of its own (a signal already is one)."""
    if isinstance(v, Signal):
        return v
    s = Signal(v.shape(), name=name)
    m.d.comb += s.eq(v)
    return s


def fabric_product(m: Module, a, b, width: int, registers: int, name: str) -> Value:
    """``a * b`` (signed) modulo ``2^width`` as a signed ``width``-bit word, built in the fabric,
    ``registers`` registers later (see the module docstring); the narrower operand is recoded."""
    a, b = Value.cast(a).as_signed(), Value.cast(b).as_signed()
    if len(b) > len(a):
        a, b = b, a
    # named once: each partial product reads the operands bit by bit, and an expression read that
    # way is rebuilt at every read (a 6x slower elaboration of an engine's fabric lane)
    a, b = _named(m, a, f"{name}_fa"), _named(m, b, f"{name}_fb")
    level = _partial_products(a, b, width)
    depth = tree_levels(len(level))
    # registers over the levels: the last level's register is the first, the rest trail the tree
    cuts = {depth - 1 - i for i in range(min(registers, depth))}
    d = 0
    while len(level) > 1:
        nxt = [_add(m, level[i], level[i + 1], width, f"{name}_f{d}_{i // 2}", d in cuts) if i + 1 < len(level)
               else _carry(m, level[i], f"{name}_f{d}_{i // 2}", d in cuts) for i in range(0, len(level), 2)]
        level, d = nxt, d + 1
    word, off = level[0]
    p = Signal(signed(width), name=f"{name}_fabric")
    m.d.comb += p.eq(Cat(Const(0, off), word) if off else word)
    return delay(m, p, registers - len(cuts), name)
