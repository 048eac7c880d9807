"""The word-sparse Winograd engine's own parts (:class:`~hdl.engine.sparsity.WordSchedule`): a weight memory per
input lane, fixed at generation (each issue's word and select per multiplier), and its R / F x PC multipliers
(F, the fold: the positions each serves), each product a term of the output lane and position it selects."""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Value, unsigned
from amaranth.lib.memory import Memory

from winohdl.core.errors import WinohdlError

from ..pipeline import delay
from .gating import multiply
from .options import EngineOptions


def word_contents(o: EngineOptions, beats, width: int, pc: int) -> list[int]:
    """Input lane ``pc``'s weight memory in a word-sparse engine (:class:`~hdl.engine.sparsity.WordSchedule`),
    from the K x C beats of u (R words of ``width`` bits each, packed; k-major, c fastest): per issue, the word
    each of the lane's R / F multipliers takes (zero where it has none) at ``width`` bits, then their selects
    at :attr:`~hdl.engine.options.EngineOptions.select_width` bits. A non-zero word outside the mask: one error."""
    s, R, sw, n = o.blocks, o.word_mask.rank, o.select_width, o.word_multipliers
    mask = (1 << width) - 1
    keep = o.word_mask.array()
    for b, beat in enumerate(beats):       # a word the mask says is zero would be dropped: refuse it
        k, c = divmod(b, o.C)
        r = next((r for r in range(R) if (int(beat) >> (r * width)) & mask and not keep[k, c, r]), None)
        if r is not None:
            raise WinohdlError(f"word {r} of kernel ({k}, {c}) is non-zero, but the engine was generated with it zero")
    out = []
    for (_, cg), words, selects, positions in zip(s.blocks, s.words, s.selects, s.positions):
        c, lane = cg * o.PC + pc, slice(pc * n, (pc + 1) * n)
        u = [(int(beats[k * o.C + c]) >> (r * width)) & mask if k >= 0 else 0
             for k, r in zip(words[lane], positions[lane])]
        sel = sum(x << (j * sw) for j, x in enumerate(selects[lane])) if sw else 0
        out.append(sum(v << (j * width) for j, v in enumerate(u)) | sel << (n * width))
    return out


def word_memory(m: Module, o: EngineOptions, reg, width: int, raddr: Value, contents: list[int], pc: int,
                operand_register: bool = True) -> tuple[Value, list[Value]]:
    """Input lane ``pc``'s weight memory, fixed at generation (a ROM of :func:`word_contents`), read at
    ``raddr`` and registered as :func:`~hdl.engine.weights.weight_memories` registers its reads: ``(the
    multipliers' words packed, their selects)``."""
    n, sw = o.word_multipliers, o.select_width
    mem = Memory(shape=unsigned(n * (width + sw)), depth=o.weight_depth, init=contents)
    m.submodules[f"wmem_words{pc}"] = mem
    rp = mem.read_port(transparent_for=())
    m.d.comb += rp.addr.eq(raddr)
    q = reg(rp.data, f"w_q0_{pc}")
    q = reg(q, f"u_q0_{pc}") if operand_register else q
    selects = [q[n * width + j * sw:n * width + (j + 1) * sw] for j in range(n)] if sw else []
    return q[:n * width], selects


def word_products(m: Module, p, v: dict, wstore: dict, selects: dict, gated) -> dict:
    """A word-sparse engine's R / F x PC multipliers: ``{(pk, pc, r): product}``. Multiplier (pc, j) takes the
    data operand of the position its select names among its F (a multiplexer in front of the multiplier), and
    its product is that position's term in the output lane its select names, zero in the others (the select
    travels beside the product; a multiplier with no word this issue multiplies a zero weight); the terms
    are summed over the PC lanes as the dense engine's are."""
    o, a, dp, F = p.options, p.arith, p.datapath, p.options.word_fold
    lane_bits, prods = (o.PK - 1).bit_length(), {}
    for pc in range(o.PC):
        for j in range(o.word_multipliers):
            rs, sel = range(j * F, (j + 1) * F), selects[pc][j] if selects[pc] else None
            data = v[pc, j] if F == 1 else Array([v[pc, r] for r in rs])[sel[lane_bits:]]
            u = wstore[0, pc][j][:max(dp.u_widths[r] for r in rs)].as_signed()
            width = max(a.word_width(r, dp.m_widths[r]) for r in rs)
            prod = multiply(m, p, data, u, width, f"p0_{pc}_{j}", o.multiplier_kind(0), gated, (pc, j))
            if sel is None:             # one output lane, one position
                prods[0, pc, j] = prod
                continue
            sel = delay(m, delay(m, sel, 1, f"sel{pc}_{j}_q") if gated else sel, p.product.cycles + p.split_levels,
                        f"sel{pc}_{j}")
            for i, r in enumerate(rs):
                wr = a.word_width(r, dp.m_widths[r])      # the position's own word: the product modulo its width
                term = prod if wr == width else prod[:wr].as_signed()
                for pk in range(o.PK):
                    prods[pk, pc, r] = Mux(sel == (pk | i << lane_bits), term, 0)
    return prods
