"""The layer engine's memories (``amaranth.lib.memory``, block RAM) and the logic right around them.

The feature-map banks (the writer's counters, the banks, the read ports with zero padding), the
serial B^T's memory of transformed tiles and the output FIFO (the weight memories:
:mod:`hdl.engine.weights`). Each builder
adds its logic to the engine's module ``m``; :class:`~hdl.engine.engine.LayerEngine` wires them
(its module docstring has the protocol and the timing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from amaranth.hdl import Cat, Const, Module, Signal, Value, signed, unsigned
from amaranth.lib.memory import Memory

from ..components import word
from ..pipeline import advance_counter, all_of, numbered, register_chain, wrapped_increment
from .lines import first_row_slot, quotient_slot, ring_step
from .latency import FM_READ_REGISTERS, READ_TO_TILE, TILE_WRITE_REGISTERS
from .modes import TileMemory
from .options import EngineOptions, bits_for
from .serial import SerialTransform
from .walker import tile_inside

# The engine never uses a block-RAM read of an address written in the same cycle: weights load
# only while no tile is issued or in flight, and a tile reads feature-map words written at least
# three cycles earlier (or zeroes them: padding), the next frame writing the other half. So the
# memories say that read-write collisions do not matter (Yosys's ``no_rw_check``): without it,
# Yosys emulates read-old-data with a bypass register and a LUT per read bit between the block
# RAM and its read register (on the critical path, and many LUTs).
NO_COLLISIONS = {"no_rw_check": 1}


@dataclass(frozen=True)
class FeatureMapWriter:
    """The feature-map writer's state (signals of the engine's module).

    Attributes
    ----------
    wpos : list of Signal
        The position of the next beat, per axis.
    wres, wquo : list of Signal
        Its residue and quotient modulo the tile step, per axis (the bank it goes to, its address).
    wcg : Signal
        The input-channel group of the next beat.
    wgen : Value
        The frame buffer being written.
    at_end : Signal
        The next beat is the frame's last (a register).
    wslot, wrow : Signal or None
        Line buffers: the first axis's quotient slot and row in the ring.
    rings : bool
        Two rings (:attr:`~hdl.engine.modes.Buffering.RINGS`): the frame buffer's bit sits below the ring field.
    row_step : Value
        The beat taken this cycle is the last of a row (the first axis's position moves).
    """

    wpos: list
    wres: list
    wquo: list
    wcg: Signal
    wgen: Value
    at_end: Signal
    wslot: Signal | None = None
    wrow: Signal | None = None
    rings: bool = False
    row_step: Value | None = None

    @property
    def ring_top(self) -> list:
        """The address's fields above the ring's lower ones: (frame bit,) ring field."""
        return [self.wgen] if self.rings else []

    @property
    def lines_addr(self) -> Value:
        """Line buffers: the address of :func:`feature_map_reads`' banks without the ring slot (channel
        group, the other axes' quotients, the frame bit of two rings): the slot picks the word's row."""
        return Cat(self.wcg, *reversed(self.wquo[1:]), *self.ring_top)

    @property
    def addr(self) -> Value:
        """The bank address of :func:`feature_map_reads`' banks (channel group, position quotients,
        frame buffer; line buffers: the first axis's quotient as its ring slot, no frame buffer)."""
        if self.wslot is not None:
            return Cat(self.wcg, *reversed(self.wquo[1:]), *self.ring_top, self.wslot)
        return Cat(self.wcg, *reversed(self.wquo), self.wgen)

    def fibre_addr(self, o: EngineOptions) -> Value:
        """The bank address of :func:`feature_map_fibres`' banks (channel group, the last axis's
        position quotient, every other axis's whole position, frame buffer; line buffers: the first
        axis as its ring row, or in 1D its quotient's ring slot, no frame buffer)."""
        if o.axes == 1:
            return self.addr
        lead = [self.wpos[ax][:bits_for(o.feature_map[ax])] for ax in reversed(range(o.axes - 1))]
        if self.wrow is not None:
            return Cat(self.wcg, self.wquo[-1], *lead[:-1], *self.ring_top, self.wrow)
        return Cat(self.wcg, self.wquo[-1], *lead, self.wgen)


def feature_map_writer(m: Module, o: EngineOptions, fm_hs: Value, wgen: Value, frame_end: Signal) -> FeatureMapWriter:
    """The writer's counters, advanced on each feature-map handshake ``fm_hs``; drives ``frame_end``."""
    N, CG = o.axes, o.channel_groups
    wpos = [Signal(range(f + 1), name=f"wpos{ax}") for ax, f in enumerate(o.feature_map)]
    wres = [Signal(range(max(s, 2)), name=f"wres{ax}") for ax, s in enumerate(o.step)]
    wquo = [Signal(b, name=f"wquo{ax}") for ax, b in enumerate(o.quotient_bits)]
    wcg = Signal(bits_for(CG), name="wcg")
    # ``wcg == CG - 1`` as a register kept beside the counter (set one beat ahead): the handshake,
    # that comparison and the carry are not three LUT levels into ``wpos``
    wcg_last = Signal(name="wcg_last", init=int(CG == 1))
    # line buffers: the first axis's quotient and row in the ring (lines.py)
    lines = o.line_buffered
    wslot = Signal(range(max(o.line_slots, 2)), name="wslot") if lines else None
    wrow = Signal(range(max(o.line_rows, 2)), name="wrow") if lines else None

    def ring(ax: int, frame: list, row: list, quotient: list) -> tuple[list, list, list]:
        if not lines or ax:
            return frame, row, quotient
        return (frame + [wslot.eq(0), wrow.eq(0)], row + [wrow.eq(ring_step(wrow, o.line_rows, 1))],
                quotient + [wslot.eq(ring_step(wslot, o.line_slots, 1))])

    def next_pixel():
        m.d.sync += wcg_last.eq(CG == 1)
        # the position, row-major; its residue and quotient modulo the tile step beside it
        carry = Const(1)
        for ax in reversed(range(N)):
            wrap = wpos[ax] == o.feature_map[ax] - 1
            at_end, row, at_quotient = ring(ax, [wres[ax].eq(0), wquo[ax].eq(0)], [], [wquo[ax].eq(wquo[ax] + 1)])
            with m.If(carry):
                advance_counter(m, wpos[ax], o.feature_map[ax], last=wrap, at_last=at_end,
                                otherwise=partial(_step_residue, m, wres[ax], o.step[ax], row, at_quotient))
            carry = carry & wrap
    with m.If(fm_hs):
        advance_counter(m, wcg, CG, last=wcg_last, at_last=next_pixel, otherwise=[wcg_last.eq(wcg == CG - 2)])
    # ``at_end``: the next beat is the frame's last, a register set one beat ahead (on the
    # penultimate beat), so ``frame_end`` is one LUT after the handshake, not after the counters'
    # comparisons (several LUT levels from ``wpos`` to ``wbusy``)
    at_end = Signal(name="at_end", init=int(o.fm_beats == 1))
    with m.If(fm_hs):
        m.d.sync += at_end.eq(_last_after_step([(wcg, CG)] + [(p, f) for p, f in zip(reversed(wpos),
                                                                                 reversed(o.feature_map))]))
    # (explicit expressions, not assignments inside the If chains: Icarus never evaluates a
    # combinational block at time 0 whose inputs do not change)
    m.d.comb += frame_end.eq(fm_hs & at_end)
    row_step = fm_hs & wcg_last & Cat(*[p == f - 1 for p, f in zip(wpos[1:], o.feature_map[1:])]).all()
    return FeatureMapWriter(wpos, wres, wquo, wcg, wgen, at_end, wslot, wrow, o.line_rings == 2, row_step)


def _step_residue(m: Module, wres: Signal, step: int, row: list, at_quotient: list) -> None:
    """The position's step along an axis: its residue advances, the quotient after the last residue."""
    m.d.sync += row
    advance_counter(m, wres, step, at_last=at_quotient)


def _last_after_step(digits: list) -> Value:
    """One step of the mixed-radix counter ``digits`` (``(signal, radix)``, fastest first) brings it
    to its last value (every digit at its largest): it stands one before it, or has one value only."""
    moving = [k for k, (_, radix) in enumerate(digits) if radix > 1]
    if not moving:
        return Const(1)
    k = moving[0]
    return Cat(*[d == (radix - 2 if i == k else radix - 1) for i, (d, radix) in enumerate(digits)]).all()


def _bank(m: Module, o: EngineOptions, reg, name: str, depth: int, waddr: Value, write: Value, wdata: Value):
    """One feature-map bank (block RAM, ``data_width`` bits a word) written at ``waddr`` with
    ``wdata`` when ``write``. The write is registered (no handshake logic before the block RAMs'
    enables); the walker sees a position three cycles after its beat, so a read always follows."""
    mem = Memory(shape=unsigned(o.data_width), depth=depth, init=[], attrs=NO_COLLISIONS)
    m.submodules[name] = mem
    wp = mem.write_port()
    m.d.comb += [wp.addr.eq(waddr), wp.en.eq(reg(write, f"fm_we_{name}", reset_less=False)), wp.data.eq(wdata)]
    return mem


def _padded_read(m: Module, o: EngineOptions, reg, mem, addr: Value, inside: Value, name: str) -> Signal:
    """A read of ``mem`` at ``addr`` (registered once here): the block RAM's output into a register
    beside it, then the word register, zero where ``inside`` (as of the address cycle, delayed to
    match) is low: zero padding as the register's synchronous reset, no multiplexer."""
    rp = mem.read_port(transparent_for=())
    m.d.comb += rp.addr.eq(reg(addr, f"addr{name}"))
    data = reg(rp.data, f"d{name}_ram", FM_READ_REGISTERS)
    keep = reg(inside, f"d{name}_in", 2 + FM_READ_REGISTERS)
    q = Signal(signed(o.data_width), name=f"d{name}", reset_less=True)
    with m.If(keep):
        m.d.sync += q.eq(data.as_signed())
    with m.Else():
        m.d.sync += q.eq(0)
    return q


def _lane_data(reg, o: EngineOptions, tdata: Value) -> list:
    """Each input-channel lane's word of a feature-map beat, registered."""
    return [reg(tdata[pc * o.data_width:(pc + 1) * o.data_width], f"fm_wdata{pc}") for pc in range(o.PC)]


def _line_bank(m: Module, o: EngineOptions, reg, name: str, waddr: tuple, write: Value, wdata: Value):
    """A line-buffer bank: one word per (channel group, position along the other axes), the ring's slots
    side by side in it (``line_slots`` words of ``data_width`` bits), each written alone (a byte enable)
    at ``waddr`` = (address, slot), both registered: the window words of one bank that differ only in
    their row are one read, not one copy of the bank each."""
    mem = Memory(shape=unsigned(o.line_slots * o.data_width), depth=o.line_bank_depth, init=[], attrs=NO_COLLISIONS)
    m.submodules[name] = mem
    wp = mem.write_port(granularity=o.data_width)
    we = reg(write, f"fm_we_{name}", reset_less=False)
    addr, slot = waddr
    m.d.comb += [wp.addr.eq(addr), wp.en.eq(Cat(*[we & (slot == i) for i in range(o.line_slots)])),
                 wp.data.eq(wdata.replicate(o.line_slots))]
    return mem


def _line_reads(m: Module, o: EngineOptions, reg, mem, b: tuple, pc: int, where: tuple) -> dict:
    """The reads of line-buffer bank ``b`` (lane ``pc``): one read port per distinct quotient along the
    axes after the first, each window word its row's slot of that read, zero outside the feature map."""
    tidx, cg, rgen = where
    ring = [rgen] if o.line_rings == 2 else []
    ports, raw = {}, {}
    for j, (jj, res, quo) in enumerate(o.window):
        if res != b:
            continue
        if quo[1:] not in ports:
            rp = mem.read_port(transparent_for=())
            fields = [(tidx[ax] + quo[ax])[:o.quotient_bits[ax]] for ax in range(1, o.axes)]
            tag = "_".join(map(str, quo[1:])) or "0"
            m.d.comb += rp.addr.eq(reg(Cat(cg, *reversed(fields), *ring), f"addr{pc}_{'_'.join(map(str, b))}_{tag}"))
            ports[quo[1:]] = reg(rp.data, f"d{pc}_{'_'.join(map(str, b))}_{tag}_ram", FM_READ_REGISTERS)
        data = ports[quo[1:]]
        # the slot and the padding flag as of the address cycle, delayed to meet the read
        slot = reg(quotient_slot(o, tidx[0], quo[0]), f"d{pc}_{j}_slot", 2 + FM_READ_REGISTERS)
        keep = reg(all_of(tile_inside(o, tidx, ax, jj[ax]) for ax in range(o.axes)), f"d{pc}_{j}_in",
                   2 + FM_READ_REGISTERS)
        q = Signal(signed(o.data_width), name=f"d{pc}_{j}", reset_less=True)
        with m.If(keep):
            m.d.sync += q.eq(data.word_select(slot, o.data_width).as_signed())
        with m.Else():
            m.d.sync += q.eq(0)
        raw[j, pc] = q
    return raw


def feature_map_reads(m: Module, o: EngineOptions, reg, writer: FeatureMapWriter, fm_hs: Value, tdata: Value,
                      where: tuple) -> dict:
    """The feature-map banks (by position modulo the tile step, so every input-tile word has a fixed
    bank and read port; line buffers: :func:`_line_bank`), written from ``tdata`` and read at
    ``where`` = (tile index per axis, input-channel group, frame buffer). Returns ``{(window word j, lane pc): read register}``, zero outside
    the feature map."""
    tidx, cg, rgen = where
    raw = {}
    if o.line_buffered:   # the slot picks the word's row: it is not part of the address
        waddr = (reg(writer.lines_addr, "fm_waddr"), reg(writer.wslot, "fm_wslot"))
    else:
        waddr = reg(writer.addr, "fm_waddr")
    wdata = _lane_data(reg, o, tdata)
    for b in o.banks:
        for pc in range(o.PC):
            name = "fm_bank_" + "_".join(map(str, b)) + f"_c{pc}"
            sel = Cat(*[r == bb for r, bb in zip(writer.wres, b)]).all()
            if o.line_buffered:
                raw.update(_line_reads(m, o, reg, _line_bank(m, o, reg, name, waddr, fm_hs & sel, wdata[pc]), b, pc,
                                       where))
                continue
            mem = _bank(m, o, reg, name, o.bank_depth, waddr, fm_hs & sel, wdata[pc])
            for j, (jj, res, quo) in enumerate(o.window):
                if res != b:
                    continue
                fields = [(tidx[ax] + quo[ax])[:o.quotient_bits[ax]] for ax in range(o.axes)]
                inside = all_of(tile_inside(o, tidx, ax, jj[ax]) for ax in range(o.axes))
                raw[j, pc] = _padded_read(m, o, reg, mem, Cat(cg, *reversed(fields), rgen), inside, f"{pc}_{j}")
    return raw


def feature_map_fibres(m: Module, o: EngineOptions, reg, writer: FeatureMapWriter, fm_hs: Value, tdata: Value,
                       where: tuple, slot: Value, windowed: bool = False) -> dict:
    """The feature-map banks of the serial input transform (:attr:`EngineOptions.fibre_banks`: by
    the last axis's residue only), read one fibre of the input tile per cycle: from the read
    ``slot`` (an issue), fibre f (the words of one row: the other axes' offsets row-major) is in the
    read registers during cycle ``slot + READ_TO_TILE + 1 + f``, zero outside the feature map.
    ``where`` = (tile index per axis, input-channel group, frame buffer); ``windowed``: zero too
    outside the tile's fibres (a transform unit that the passes share reads the OR of its inputs).
    Returns ``{(position j along the last axis, lane pc): read register}``."""
    # the slot and its coordinates registered first: the walker's issue logic, several LUT levels
    # from the credit, does not drive the fibre counters' reset pins directly
    slot = reg(slot, "fibre_slot", reset_less=False)
    tidx, cg, rgen = [reg(t, f"fibre_tile{ax}") for ax, t in enumerate(where[0])], reg(where[1], "fibre_cg"), \
        reg(where[2], "fibre_gen")
    g, N = o.geometry, o.axes
    last = N - 1
    lead = range(last)
    # the fibre's position along each other axis: loaded at the slot, then row-major
    shape = signed(max(bits_for(f + 2 * p + s * t) for f, p, s, t in zip(o.feature_map, o.padding, o.step,
                                                                          o.tiles)) + 2)
    rpos = [Signal(shape, name=f"fibre_pos{ax}") for ax in lead]
    rk = [Signal(range(max(g.input[ax], 2)), name=f"fibre_k{ax}") for ax in lead]
    # line buffers: the first axis's row in the ring beside its position (lines.py)
    rring = Signal(range(max(o.line_rows, 2)), name="fibre_ring") if o.line_buffered and N > 1 else None
    with m.If(slot):
        m.d.sync += [r.eq(tidx[ax] * o.step[ax] - o.padding[ax]) for r, ax in zip(rpos, lead)]
        m.d.sync += [k.eq(0) for k in rk]
        if rring is not None:
            m.d.sync += rring.eq(first_row_slot(o, tidx[0]))
    with m.Else():
        carry = Const(1)
        for ax in reversed(lead):
            wrap = rk[ax] == g.input[ax] - 1
            back, ahead = [rpos[ax].eq(rpos[ax] - (g.input[ax] - 1))], [rpos[ax].eq(rpos[ax] + 1)]
            if ax == 0 and rring is not None:
                back.append(rring.eq(ring_step(rring, o.line_rows, -(g.input[0] - 1))))
                ahead.append(rring.eq(ring_step(rring, o.line_rows, 1)))
            with m.If(carry):
                advance_counter(m, rk[ax], g.input[ax], last=wrap, at_last=back, otherwise=ahead)
            carry = carry & wrap
    row_inside = all_of((r >= 0) & (r < o.feature_map[ax]) for r, ax in zip(rpos, lead))
    if windowed:
        # the fibres' address cycles: the F after the slot
        fibres = math.prod(g.input[:last])
        left = Signal(range(fibres + 1), name="fibres_left")
        with m.If(slot):
            m.d.sync += left.eq(fibres)
        with m.Elif(left != 0):
            m.d.sync += left.eq(left - 1)
        row_inside = all_of([row_inside, left != 0])
    fields = [rpos[ax][:bits_for(o.feature_map[ax])] for ax in reversed(lead)]
    top = [rgen]
    ring_top = [rgen] if o.line_rings == 2 else []   # the frame bit below the ring field (rings)
    if rring is not None:
        fields, top = fields[:-1] + ring_top + [rring], []
    raw = {}
    waddr = reg(writer.fibre_addr(o), "fm_waddr")
    wdata = _lane_data(reg, o, tdata)
    for b in o.fibre_banks:
        for pc in range(o.PC):
            name = f"fm_bank_{b}_c{pc}"
            mem = _bank(m, o, reg, name, o.fibre_bank_depth, waddr, fm_hs & (writer.wres[last] == b), wdata[pc])
            for j in range(g.input[last]):
                if (j - o.padding[last]) % o.step[last] != b:
                    continue
                offset = (j - o.padding[last]) // o.step[last]
                xq = (tidx[last] + offset)[:o.quotient_bits[last]]
                if o.line_buffered and N == 1:
                    xq, top = Cat(*ring_top, quotient_slot(o, tidx[0], offset)), []
                inside = all_of([row_inside, tile_inside(o, tidx, last, j)])
                raw[j, pc] = _padded_read(m, o, reg, mem, Cat(cg, xq, *fields, *top), inside, f"{pc}_{j}")
    return raw


def transformed_tiles(m: Module, engine, reg, wk, raw, final: bool = True) -> dict:
    """Serial B^T (:class:`~hdl.engine.options.InputTransform`): per input-channel lane, the input
    tile read at each read slot of the walker ``wk`` (``raw``: :func:`feature_map_fibres`, one fibre
    per cycle) goes through the serial transform into a block RAM of transformed tiles (or LUT RAM,
    :class:`~hdl.engine.modes.TileMemory`; two halves: the tiles being read and the ones being
    multiplied, ``C / PC`` tiles each), which the multipliers read once per output-channel group. Returns the
    multiplier operands ``{(lane pc, r): v}`` (without their register, ``final`` False: gating adds it)."""
    o, dp = engine.opts, engine.dp
    g, R = o.geometry, dp.rank
    cg_bits = bits_for(o.channel_groups)
    # which half holds the tiles being read (it flips when a reading pass ends)
    half = Signal(name="bt_half")
    with m.If(wk.advance):
        m.d.sync += half.eq(~half)
    start = reg(wk.read_slot, "bt_start", READ_TO_TILE.cycles, reset_less=False)
    # staggered accumulators: fibre f of the tile reads its own memory f cycles after fibre 0
    # (and all of them later by the cycles the kernels transformed as read take: EnginePlan.operand_wait)
    wait = numbered("v_addr_wait", engine.operand_wait)
    v_addrs = register_chain(m, Cat(wk.cg, ~half), ["v_addr", *wait, *numbered("v_addr_f", engine.slices - 1, 1)])
    v_addrs = v_addrs[1 + len(wait):]
    widths = dp.v_widths
    per = R // len(v_addrs)
    v = {}
    for pc in range(o.PC):
        m.submodules[f"bt{pc}"] = bt = SerialTransform(
            engine.input_passes, [engine.arith.d_range] * g.n_d, list, widths, engine.stages.per_stage, streamed=True,
            shared=engine.input_unit_shared)
        m.d.comb += bt.start.eq(start)
        for j in range(g.input[-1]):
            m.d.comb += word(bt.x, j).eq(raw[j, pc])
        done = READ_TO_TILE.cycles + bt.latency + TILE_WRITE_REGISTERS
        waddr = reg(Cat(wk.read_cg, half), f"v_waddr{pc}", done)
        we = reg(wk.read_slot, f"v_we{pc}", done, reset_less=False)
        for f, raddr in enumerate(v_addrs):
            lanes = range(f * per, (f + 1) * per)
            tag = f"_f{f}" if len(v_addrs) > 1 else ""
            # block RAM even when shallow, unless the options leave it to Yosys's costs (TileMemory)
            mem = Memory(shape=unsigned(sum(widths[r] for r in lanes)), depth=2 << cg_bits, init=[],
                         attrs=tile_attrs(o.tile_memory))
            m.submodules[f"vmem_c{pc}{tag}"] = mem
            wp = mem.write_port()
            wdata = reg(Cat(*[word(bt.y, r) for r in lanes]), f"v_wdata{pc}{tag}", TILE_WRITE_REGISTERS)
            m.d.comb += [wp.addr.eq(waddr), wp.en.eq(we), wp.data.eq(wdata)]
            rp = mem.read_port(transparent_for=())
            m.d.comb += rp.addr.eq(raddr)
            # the block RAM's output registered (beside it), then the multiplier operand register
            data = reg(rp.data, f"v_q{pc}{tag}", FM_READ_REGISTERS)
            lo = 0
            for r in lanes:
                v[pc, r] = reg(data[lo:lo + widths[r]].as_signed(), f"v{pc}_{r}", int(final))
                lo += widths[r]
    return v


def tile_attrs(where: TileMemory) -> dict:
    """The transformed-tile memory's attributes: no read-write collisions either way (a tile is read a
    pass after it is written, the other half being written), block RAM forced or left to Yosys."""
    return {**NO_COLLISIONS, "ram_style": "block"} if where is TileMemory.BLOCK else NO_COLLISIONS


def output_fifo(m: Module, packed: Value, write: Value, out, depth: int, nbits: int, n_keep: int) -> None:
    """A first-word-fall-through FIFO of ``depth`` results (``packed``: data, keep, last), written
    when ``write``, popped into the output register of the stream ``out`` (tdata ``nbits`` wide,
    tkeep ``n_keep``) whenever it is empty or taken. The writer never offers more than ``depth``
    results (the engine's credit)."""
    # one slot more than it ever holds, so that the pointers alone tell empty from full: no level
    # counter, whose update would sit after ``tready``, the pop and an adder
    slots = depth + 1
    fifo = Memory(shape=unsigned(len(packed)), depth=slots, init=[])
    m.submodules.out_fifo = fifo
    fw = fifo.write_port()
    fr = fifo.read_port(domain="comb")
    wr = Signal(range(slots), name="fifo_wr")
    rd = Signal(range(slots), name="fifo_rd")
    nonempty = Signal(name="fifo_nonempty")
    take = Signal(name="fifo_take")    # the output register may load
    pop = Signal(name="fifo_pop")
    m.d.comb += [fw.addr.eq(wr), fw.data.eq(packed), fw.en.eq(write), fr.addr.eq(rd), nonempty.eq(wr != rd),
                 take.eq(~out.tvalid | out.tready), pop.eq(take & nonempty)]
    with m.If(write):
        m.d.sync += wr.eq(wrapped_increment(wr, slots))
    with m.If(pop):
        m.d.sync += rd.eq(wrapped_increment(rd, slots))
    # the output register loads whenever it may, empty FIFO or not (its tvalid then goes low, and
    # AXI4-Stream lets data change while tvalid is low): the pop then drives the read pointer only,
    # not every data bit (a wide fan-out)
    with m.If(take):
        m.d.sync += [out.tvalid.eq(nonempty), out.tdata.eq(fr.data[:nbits]),
                     out.tkeep.eq(fr.data[nbits:nbits + n_keep]), out.tlast.eq(fr.data[nbits + n_keep])]
