"""The layer engine's weight memories (``amaranth.lib.memory``, block RAM) and their loader's counters.

One memory per live (output lane, input lane) and slice of the stored words, written beat by beat as the
weights stream in, or holding them from the start (:func:`preloaded_weights`); with a kernel mask only
the visited blocks are stored (:mod:`hdl.engine.sparsity`).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, Value, unsigned
from amaranth.lib.memory import Memory

from ..pipeline import advance_counter
from .buffers import NO_COLLISIONS
from .options import EngineOptions, bits_for


def preloaded_weights(o: EngineOptions, beats, widths: list[int]) -> dict:
    """The weight memories' contents after a load of ``beats`` (stored words, packed; k-major, c fastest),
    as :func:`weight_memories` lays them out: ``{(pk, pc, slice): words by address}`` (live lanes only;
    with a kernel mask one word per visited block, in walk order)."""
    bits_cg = bits_for(o.channel_groups)
    index = o.blocks.index
    out = {(pk, pc, i): [0] * o.weight_depth for pk, pc in o.blocks.lanes for i in range(len(widths))}
    for b, beat in enumerate(beats):
        k, c = divmod(b, o.C)
        (kg, pk), (cg, pc) = divmod(k, o.PK), divmod(c, o.PC)
        if (pk, pc) not in o.blocks.lanes or (kg, cg) not in index:
            continue
        addr = cg | (kg << bits_cg) if o.kernel_mask is None else index[kg, cg]
        lo = 0
        for i, width in enumerate(widths):
            out[pk, pc, i][addr] = (int(beat) >> lo) & ((1 << width) - 1)
            lo += width
    return out


def _write_address(m: Module, o: EngineOptions, cg_w: Value, kg_w: Value) -> tuple[Value, Value | None]:
    """The weight memories' write address of block (cg_w, kg_w) and whether it is stored: ``Cat(cg, kg)``
    (always: ``None``), or with a kernel mask its place among the visited blocks (a constant table)."""
    if o.kernel_mask is None:
        return Cat(cg_w, kg_w), None
    addr = Signal(range(max(o.weight_depth, 2)), name="w_block")
    stored = Signal(name="w_block_stored")
    bits_cg = bits_for(o.channel_groups)
    with m.Switch(Cat(cg_w, kg_w)):
        for (kg, cg), i in o.blocks.index.items():
            with m.Case(cg | kg << bits_cg):
                m.d.comb += [addr.eq(i), stored.eq(1)]
    return addr, stored


def weight_memories(m: Module, o: EngineOptions, reg, widths: list[int], data: Value, write: Value, counters: tuple,
                    raddrs: list[Value], init: dict | None = None, operand_register: bool = True) -> dict:
    """The weight memories of each (output lane pk, input lane pc): one per slice of the stored
    words (``widths`` bits each, in order; more than one when the accumulators are staggered),
    written with ``data`` when ``write`` at the loader's ``counters`` (pc, cg, pk, kg), slice i
    read at ``raddrs[i]``; ``init``: their contents from the start (:func:`preloaded_weights`).
    Returns ``{(pk, pc): the slices' read data, concatenated}`` after two registers, for the live
    lanes only (a lane zero in every block has no memory; :mod:`hdl.engine.sparsity`); after one
    register without ``operand_register`` (gating: the multipliers' own, :mod:`hdl.engine.gating`)."""
    # the write registered twice: once here, once beside each memory, since the route from the
    # central control to every weight block RAM's write enable is long. A read follows the last
    # write by many cycles (a frame's first tile). No reset: a write still in the registers at a
    # reset stores the beat it took where it belongs (and a reset asks for a new load anyway)
    pc_w, cg_w, pk_w, kg_w = (reg(c, f"w_{n}_q") for c, n in zip(counters, ("pc", "cg", "pk", "kg")))
    waddr, stored = _write_address(m, o, cg_w, kg_w)
    write, data = reg(write, "w_write_q"), reg(data, "w_data_q")
    w_read = {}
    for pk in range(o.PK):
        for pc in range(o.PC):
            if (pk, pc) not in o.blocks.lanes:
                continue
            we = write & (pk_w == pk) & (pc_w == pc)
            parts, lo = [], 0
            for i, (width, raddr) in enumerate(zip(widths, raddrs)):
                tag = f"_f{i}" if len(widths) > 1 else ""
                mem = Memory(shape=unsigned(width), depth=o.weight_depth, init=init[pk, pc, i] if init else [],
                             attrs=NO_COLLISIONS)
                m.submodules[f"wmem_k{pk}_c{pc}{tag}"] = mem
                wp = mem.write_port()
                m.d.comb += [wp.addr.eq(reg(waddr, f"w_waddr{pk}_{pc}{tag}")),
                             wp.data.eq(reg(data[lo:lo + width], f"w_wdata{pk}_{pc}{tag}")),
                             wp.en.eq(reg(we if stored is None else we & stored, f"w_we{pk}_{pc}{tag}"))]
                rp = mem.read_port(transparent_for=())
                m.d.comb += rp.addr.eq(raddr)
                # the block RAM's output straight into a register (its clock-to-out is long); the
                # engines register it again, the multiplier operand register a DSP block absorbs, so
                # the first one stays beside the block RAM
                q = reg(rp.data, f"w_q{pk}_{pc}{tag}")
                parts.append(reg(q, f"u_q{pk}_{pc}{tag}") if operand_register else q)
                lo += width
            w_read[pk, pc] = Cat(*parts)
    return w_read


def weight_counters(m: Module, o: EngineOptions, write: Value, count: Signal, loaded: Signal,
                    counting: Signal) -> tuple:
    """The weight loader's word counters (pc, cg, pk, kg: the order of the beats, fastest first),
    advanced on each ``write``, with the load's beat ``count``, ``loaded`` (a full set stored) and
    ``counting`` (``count != 0`` as a register of its own: the feature-map stream's ready waits
    for it, and the comparison took two LUT levels of that path)."""
    pc_w = Signal(range(max(o.PC, 2)), name="w_pc")
    cg_w = Signal(bits_for(o.channel_groups), name="w_cg")
    pk_w = Signal(range(max(o.PK, 2)), name="w_pk")
    kg_w = Signal(bits_for(o.kernel_groups), name="w_kg")
    with m.If(write):
        advance_counter(m, count, o.weight_beats, at_last=[loaded.eq(1), counting.eq(0)],
                        otherwise=[loaded.eq(0), counting.eq(1)])
        carry = Const(1)
        for sig, n in [(pc_w, o.PC), (cg_w, o.channel_groups), (pk_w, o.PK), (kg_w, o.kernel_groups)]:
            with m.If(carry):
                if n == 1:
                    m.d.sync += sig.eq(0)
                else:
                    advance_counter(m, sig, n)
            carry = carry & (sig == n - 1)
    return pc_w, cg_w, pk_w, kg_w
