"""The word-sparse Winograd engine's own parts (:class:`~hdl.engine.sparsity.WordSchedule`): a weight memory per
input lane, fixed at generation (each issue's R words and the output lane each goes to), and its R x PC
multipliers, each product a term of the output lane it selects."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Value, unsigned
from amaranth.lib.memory import Memory

from winohdl.core.errors import WinohdlError

from ..pipeline import delay
from .gating import multiply
from .latency import PRODUCT_REGISTERS
from .options import EngineOptions


def word_contents(o: EngineOptions, beats, width: int, pc: int) -> list[int]:
    """Input lane ``pc``'s weight memory in a word-sparse engine (:class:`~hdl.engine.sparsity.WordSchedule`),
    from the K x C beats of u (R words of ``width`` bits each, packed; k-major, c fastest): per issue, the R
    words it multiplies (zero where a position has none) at ``width`` bits, then the R output-lane selects at
    :attr:`~hdl.engine.options.EngineOptions.select_width` bits. A non-zero word outside the mask: one error."""
    s, R, sw = o.blocks, o.word_mask.rank, o.select_width
    mask = (1 << width) - 1
    keep = o.word_mask.array()
    for b, beat in enumerate(beats):       # a word the mask says is zero would be dropped: refuse it
        k, c = divmod(b, o.C)
        r = next((r for r in range(R) if (int(beat) >> (r * width)) & mask and not keep[k, c, r]), None)
        if r is not None:
            raise WinohdlError(f"word {r} of kernel ({k}, {c}) is non-zero, but the engine was generated with it zero")
    out = []
    for (_, cg), words, selects in zip(s.blocks, s.words, s.selects):
        c = cg * o.PC + pc
        lane = slice(pc * R, (pc + 1) * R)
        u = [(int(beats[k * o.C + c]) >> (r * width)) & mask if k >= 0 else 0 for r, k in enumerate(words[lane])]
        sel = sum(pk << (r * sw) for r, pk in enumerate(selects[lane])) if sw else 0
        out.append(sum(v << (r * width) for r, v in enumerate(u)) | sel << (R * width))
    return out


def word_memory(m: Module, o: EngineOptions, reg, width: int, raddr: Value, contents: list[int], pc: int,
                operand_register: bool = True) -> tuple[Value, list[Value]]:
    """Input lane ``pc``'s weight memory, fixed at generation (a ROM of :func:`word_contents`), read at
    ``raddr`` and registered as :func:`~hdl.engine.weights.weight_memories` registers its reads: ``(the R words
    packed, the R selects)``."""
    R, sw = o.word_mask.rank, o.select_width
    mem = Memory(shape=unsigned(R * (width + sw)), depth=o.weight_depth, init=contents)
    m.submodules[f"wmem_words{pc}"] = mem
    rp = mem.read_port(transparent_for=())
    m.d.comb += rp.addr.eq(raddr)
    q = reg(rp.data, f"w_q0_{pc}")
    q = reg(q, f"u_q0_{pc}") if operand_register else q
    selects = [q[R * width + r * sw:R * width + (r + 1) * sw] for r in range(R)] if sw else []
    return q[:R * width], selects


def word_products(m: Module, p, v: dict, wstore: dict, selects: dict, gated) -> dict:
    """A word-sparse engine's R x PC multipliers: ``{(pk, pc, r): product}``, lane (pc, r)'s product in output
    lane ``selects[pc][r]``'s term and zero in the others (the select travels beside the product; a lane
    with no word this issue multiplies a zero weight), summed over the PC lanes as the dense engine's are."""
    o, a, dp = p.options, p.arith, p.datapath
    prods = {}
    for pc in range(o.PC):
        for r in range(dp.rank):
            u = wstore[0, pc][r][:dp.u_widths[r]].as_signed()
            prod = multiply(m, p, v[pc, r], u, a.word_width(r, dp.m_widths[r]), f"p0_{pc}_{r}", o.multiplier_kind(0),
                            gated, (pc, r))
            if o.PK == 1:
                prods[0, pc, r] = prod
                continue
            sel = selects[pc][r]
            sel = delay(m, delay(m, sel, 1, f"sel{pc}_{r}_q") if gated else sel, PRODUCT_REGISTERS + p.split_levels,
                        f"sel{pc}_{r}")
            for pk in range(o.PK):
                prods[pk, pc, r] = Mux(sel == pk, prod, 0)
    return prods
