"""The word-sparse Winograd engine's own parts (:class:`~hdl.engine.sparsity.WordSchedule`): its one weight
memory, fixed at generation (each issue's R words and the output lane each goes to), and its R multipliers,
each product selected into its output lane's accumulator."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Value, unsigned
from amaranth.lib.memory import Memory

from winohdl.core.errors import WinohdlError

from ..components import emit_product
from ..pipeline import delay
from .latency import PRODUCT_REGISTERS
from .options import EngineOptions


def word_contents(o: EngineOptions, beats, width: int) -> list[int]:
    """A word-sparse engine's weight memory (:class:`~hdl.engine.sparsity.WordSchedule`), from the K x C
    beats of u (R words of ``width`` bits each, packed; k-major, c fastest): per issue, the R words it
    multiplies (zero where a position has none) at ``width`` bits, then the R output-lane selects at
    :attr:`~hdl.engine.options.EngineOptions.select_width` bits."""
    s, R, sw = o.blocks, o.word_mask.rank, o.select_width
    mask = (1 << width) - 1
    keep = o.word_mask.array()
    for b, beat in enumerate(beats):       # a word the mask says is zero would be dropped: refuse it
        k, c = divmod(b, o.C)
        r = next((r for r in range(R) if (int(beat) >> (r * width)) & mask and not keep[k, c, r]), None)
        if r is not None:
            raise WinohdlError(f"word {r} of kernel ({k}, {c}) is non-zero, but the engine was generated with it zero")
    out = []
    for (_, c), words, selects in zip(s.blocks, s.words, s.selects):
        u = [(int(beats[k * o.C + c]) >> (r * width)) & mask if k >= 0 else 0 for r, k in enumerate(words)]
        sel = sum(pk << (r * sw) for r, pk in enumerate(selects)) if sw else 0
        out.append(sum(v << (r * width) for r, v in enumerate(u)) | sel << (R * width))
    return out


def word_memory(m: Module, o: EngineOptions, reg, width: int, raddr: Value, contents: list[int],
                operand_register: bool = True) -> tuple[list[Value], list[Value]]:
    """A word-sparse engine's one weight memory, fixed at generation (a ROM of :func:`word_contents`), read
    at ``raddr`` and registered as :func:`weight_memories` registers its reads: ``(R words, R selects)``."""
    R, sw = o.word_mask.rank, o.select_width
    mem = Memory(shape=unsigned(R * (width + sw)), depth=o.weight_depth, init=contents)
    m.submodules["wmem_words"] = mem
    rp = mem.read_port(transparent_for=())
    m.d.comb += rp.addr.eq(raddr)
    q = reg(rp.data, "w_q0_0")
    q = reg(q, "u_q0_0") if operand_register else q
    words = [q[r * width:(r + 1) * width] for r in range(R)]
    selects = [q[R * width + r * sw:R * width + (r + 1) * sw] for r in range(R)] if sw else []
    return words, selects


def word_sums(m: Module, p, v: dict, words: list, selects: list, gated) -> dict:
    """A word-sparse engine's R multipliers (one input channel an issue, PC = 1): position r's product goes
    to output lane ``selects[r]``'s accumulator, the others of its position add zero (its select travels
    beside the product; a position with no word this issue multiplies a zero weight)."""
    o, a, dp = p.options, p.arith, p.datapath
    sums = {}
    for r in range(dp.rank):
        name = f"p0_0_{r}"
        u = words[r][:dp.u_widths[r]].as_signed()
        u = gated.weight(m, u, (0, r), name) if gated else u
        prod = emit_product(m, v[0, r], u, a.word_width(r, dp.m_widths[r]), PRODUCT_REGISTERS, p.split_levels, name,
                            split=True, kind=o.multiplier_kind(0))
        prod = gated.product(m, prod, (0, r), p, name) if gated else prod
        if o.PK == 1:
            sums[0, r] = prod
            continue
        sel = delay(m, delay(m, selects[r], 1, f"sel{r}_q") if gated else selects[r], PRODUCT_REGISTERS + p.split_levels, f"sel{r}")
        for pk in range(o.PK):
            sums[pk, r] = Mux(sel == pk, prod, 0)
    return sums
