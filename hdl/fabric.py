"""Multipliers in the fabric: a signed product as radix-4 Booth partial products and a registered tree.

Where the hard multiplier blocks run out, a product is built from LUTs and carry chains
(:class:`hdl.options.MultiplierKind` ``FABRIC``). It is written as adders of selected, shifted copies of one
operand, never as ``a * b``: Yosys maps every ``$mul`` cell to a DSP block (ECP5 MULT18X18D) with no
per-cell switch, and a sum of shifted words is never turned back into a ``$mul``.

The narrower operand ``b`` is recoded in radix-4 Booth digits ``d_i`` in {-2, -1, 0, 1, 2} (from bits
``b[2i+1], b[2i], b[2i-1]``, ``b[-1] = 0``), so ``a * b = sum_i d_i * a * 4^i``: ceil(nb / 2) partial
products instead of nb. A negative digit's partial product is the complement of ``|d_i| a`` plus one;
the one (at bit ``2i``) fills the free low bits of the next partial product, the last digit's is one
more addend. Everything is kept modulo ``2^width``
(the product word as the engine builds it, which may be narrower than the full product: the
Winograd engine keeps each word modulo the bits its outputs read), and each addend is added only
above its lowest non-zero bit, so no carry chain spends cells on the low zeros.

The adder tree is balanced and registered within the ``registers`` that follow a DSP block's product
(the block's pipeline and output registers and one in the fabric), so a fabric product arrives in the
same cycle as a hard one and the engine's schedule does not change. A register after every level holds the
widest words (the first levels' several sums); with a ``span`` of 2 (:class:`hdl.options.FabricTree`)
two levels sit between registers, each register as late as that allows, and the registers left over
delay the product (one word each): :func:`tree_cuts`.
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


def tree_cuts(depth: int, registers: int, span: int = 1) -> set[int]:
    """The levels of a ``depth``-level tree whose sums are registered, ``registers`` at most: no more than
    ``span`` levels (more where the registers are too few) between two registers, each cut as late as
    that allows, so the registers hold the later levels' fewer words; the last level is always one."""
    if depth == 0 or registers == 0:
        return set()
    span = max(span, -(-depth // registers))
    return {min(c, depth - 1) for c in range(span - 1, depth - 1 + span, span)}


def fabric_bits(a_width: int, b_width: int, width: int) -> tuple[int, int]:
    """``(select bits, adder bits)`` of :func:`fabric_product` for signed ``a_width`` x ``b_width``
    operands and a ``width``-bit product word: the partial products' selected bits (each a function
    of two bits of one operand and three of the other) and the adders' output bits (carry chains).
    The technology's figures per bit are the device table's (:class:`winohdl.core.device.FabricMultiplier`)."""
    n = _digits(a_width, b_width, width)
    select = sum(width - 2 * i for i in range(n))
    level, adders = addend_offsets(n), 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), 2):
            pair = level[i:i + 2]
            if len(pair) == 2:
                adders += width - max(pair)
            nxt.append(min(pair))
        level = nxt
    return select, adders


def register_bits(a_width: int, b_width: int, width: int, registers: int, span: int = 1) -> int:
    """Flip-flops of :func:`fabric_product`'s registers (the tree's registered sums and the product's
    delays) for signed ``a_width`` x ``b_width`` operands and a ``width``-bit product word."""
    n = _digits(a_width, b_width, width)
    level = [(o, width - o) for o in addend_offsets(n)[:-1]] + [(2 * n - 2, 1)]    # (offset, bits)
    return _registered(level, width, registers, span)


def fitted_register_bits(a_width: int, b_width: int, width: int, registers: int) -> int:
    """:func:`register_bits` of the tree the planner's flip-flop model was fitted on
    (:func:`winohdl.network.cells.flip_flops`): every level registered, the negative digits' ones an
    addend of their own, last."""
    n = _digits(a_width, b_width, width)
    return _registered([(2 * i, width - 2 * i) for i in range(n)] + [(0, n)], width, registers, 1)


def _digits(a_width: int, b_width: int, width: int) -> int:
    return len([i for i in range(booth_digits(min(a_width, b_width))) if 2 * i < width])


def _registered(level: list[tuple[int, int]], width: int, registers: int, span: int) -> int:
    """Bits registered in a tree over ``level`` ((offset, bits) addends) at ``span``, and its delays."""
    cuts, bits, d = tree_cuts(tree_levels(len(level)), registers, span), 0, 0
    while len(level) > 1:
        level = [(min(o for o, _ in pair), width - min(o for o, _ in pair)) if len(pair) == 2 else pair[0]
                 for pair in (level[i:i + 2] for i in range(0, len(level), 2))]
        bits += sum(n for _, n in level) if d in cuts else 0
        d += 1
    return bits + (registers - len(cuts)) * width


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
    pps, negs = [], []
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
        pps.append(((mag ^ neg.replicate(n)).as_unsigned()[:n], off))
        negs.append(neg)
    # a negative digit's one (at bit 2i) sits in the next partial product's free low bits; the last
    # digit's is an addend of its own
    out = [pps[0]] + [(Cat(negs[i - 1], Const(0, 1), w), off - 2) for i, (w, off) in enumerate(pps) if i]
    return out + [(negs[-1], pps[-1][1])]


def addend_offsets(digits: int) -> list[int]:
    """The offsets of :func:`_partial_products`' addends, in order, for ``digits`` partial products."""
    return [0] + [2 * i - 2 for i in range(1, digits)] + [2 * digits - 2]


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


def fabric_product(m: Module, a, b, width: int, registers: int, name: str, span: int = 1) -> Value:
    """``a * b`` (signed) modulo ``2^width`` as a signed ``width``-bit word, built in the fabric,
    ``registers`` registers later, ``span`` adder levels between them (see the module docstring); the
    narrower operand is recoded."""
    a, b = Value.cast(a).as_signed(), Value.cast(b).as_signed()
    if len(b) > len(a):
        a, b = b, a
    # named once: each partial product reads the operands bit by bit, and an expression read that
    # way is rebuilt at every read (a 6x slower elaboration of an engine's fabric lane)
    a, b = _named(m, a, f"{name}_fa"), _named(m, b, f"{name}_fb")
    level = _partial_products(a, b, width)
    depth = tree_levels(len(level))
    cuts = tree_cuts(depth, registers, span)
    d = 0
    while len(level) > 1:
        nxt = [_add(m, level[i], level[i + 1], width, f"{name}_f{d}_{i // 2}", d in cuts) if i + 1 < len(level)
               else _carry(m, level[i], f"{name}_f{d}_{i // 2}", d in cuts) for i in range(0, len(level), 2)]
        level, d = nxt, d + 1
    word, off = level[0]
    p = Signal(signed(width), name=f"{name}_fabric")
    m.d.comb += p.eq(Cat(Const(0, off), word) if off else word)
    return delay(m, p, registers - len(cuts), name)
