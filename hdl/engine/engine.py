"""The streaming convolution-layer engine (Winograd, or the direct baseline), in Amaranth.

Ports (AXI4-Stream conventions; Verilog names ``<bundle>__<member>``):

``s_axis_w``  (in)  the weight stream: ``tdata`` one kernel per beat (u[k, c] = G_int g[k, c],
                    R words, with the kernel transform offline; otherwise g[k, c], |g| words,
                    transformed as loaded or, storing the kernels, as read),
                    beats k-major then c; ``tvalid``, ``tready``, ``tlast`` (ignored: the engine
                    counts K x C beats).
``s_axis_fm`` (in)  the feature map, channels-last: pixels in raster order (last axis fastest),
                    each pixel as C / PC beats of PC consecutive channels (``tdata`` lane i at bits
                    ``[i*w +: w]``); ``tlast`` is ignored (the engine counts the beats).
``m_axis_y``  (out) per output tile (raster order of tiles) and output-channel group, one beat of
                    PK x |y| words (lane pk*|y| + o: channel kg*PK + pk, tile position o row-major);
                    ``tkeep`` one bit per tile position (0: outside the layer, at the edges);
                    ``tlast`` on the layer's last beat.
``busy``      (out) a frame or a result is in flight or an output waits. ``weights_loaded`` (out)
                    a full kernel set is stored.

Protocol: a weight load is K x C beats; it is accepted only when no frame is in flight (the
walker has issued every tile of every accepted frame) and applies to the frames that start
after it; while weights are offered or a load is under way, no new frame starts. Frames stream
back to back: the feature map is double-buffered, so frame n + 1 streams in while frame n is
computed (a frame's first beat waits only while two frames are in flight). Each frame's
outputs end with ``tlast``; kernels stay loaded until the next weight load.

Inside: the feature map is stored in banks (``amaranth.lib.memory``, block RAM) by position modulo
the tile step ``output tile x stride`` per axis, so every input-tile word comes from a fixed bank
and read port (no rotation network); a tile is computed three cycles after its last input pixel has
arrived (its readiness is pipelined), so input streaming and computation overlap. Per cycle: one
input tile of PC channels through B^T, R x PK x PC multipliers, the Winograd-domain sums of the PC
lanes into R x PK accumulators (exact widths for C channels), and once per (tile, output channel)
after C / PC cycles: A^T and the exact division. Loop order: tiles, output-channel groups, input
channel groups (innermost).

Kernels stored (:class:`~hdl.engine.modes.WeightStore` ``kernels``): the weight memories hold g,
one memory of |g| words per live lane, and a kernel transform per lane forms u between the memory's
read registers and the multipliers; the data operand waits for it in as many registers
(:attr:`~hdl.engine.plan.EnginePlan.operand_wait`, less the cycles the weight read's address can be
issued earlier; with a serial B^T the transformed tiles' read address waits, not their words), and staggered fibres (below) take their u
words through one register more per fibre instead of memories of their own.

Known zeros (:mod:`hdl.engine.sparsity`, ``EngineOptions.kernel_mask``): the walker visits only the
(kg, cg) blocks with a kernel that may be non-zero (a constant table; its last block of each kg
flags the group's total), the weight memories hold one word per visited block, and a lane (pk, pc)
zero in every block has no weight memory and no multipliers (a constant zero term in the lane sums):
a depthwise layer expanded dense on PK = PC lanes keeps the diagonal, R x P multipliers instead of
R x P^2, and one block per tile and output group instead of C / PC. The weight stream keeps its
K x C beats; those outside the mask are not stored. Not with the serial input transform.

Known zero words (``EngineOptions.word_mask``, a layer trained and pruned in the Winograd domain: its zeros
are where the products are): R / F x PC multipliers whatever PK (F, ``word_fold``, the positions each serves),
each (input lane, multiplier) walking the non-zero words U[k, c, r] of its positions in the current output
group and channel (:class:`~hdl.engine.sparsity.WordSchedule`: as many issues as the lane and multiplier with
the most), its product a term of the output lane and position it selects; the weights are the initial
contents of one memory per input lane (each issue's word and select per multiplier), fixed at generation
(the weight port takes nothing). The parallel B^T only.

Serial input transform (:class:`~hdl.engine.options.InputTransform`, the default where it fits): B^T
runs once per (tile, input-channel group) instead of once per cycle. Each pass of the walker over a
tile (C / PC x K / PK issues) reads the tile once per input-channel group, every K / PK issues, one
fibre (row) per cycle straight from feature-map banks laid out along the last axis only (no
multiplexer), into the serial row-column unit (:mod:`hdl.engine.serial`), whose results go into a
block RAM of transformed tiles (two halves of C / PC tiles: one filled, one read); the multipliers
read it for every output-channel group one pass later. So one more pass follows a frame's last tile:
it reads the next frame's first tile where that is stored in time (back to back), otherwise it only
multiplies (the drain) and the next frame's first pass only reads. With the serial A^T as well, the
accumulators are staggered (:attr:`LayerEngine.staggered`): each fibre of them (along the last axis)
has its own block RAMs of transformed tiles and weights, read one cycle after the previous fibre's,
so the fibres finish one cycle apart, as A^T's first pass reads them, and it takes their OR instead
of a multiplexer over them.

Timing: nothing after the walker ever stalls. Every block is registered and the adder graphs
are cut every ``adders per stage`` levels (balanced), block-RAM outputs and multiplier operands
and products are registered with no logic between (the memories declare that a read of a word
written at the same edge never matters, so no collision bypass either), accumulators clear by
synchronous reset over their enable (no multiplexer), and zero padding is the synchronous reset
of the read register. Back-pressure
reaches only the walker, through a registered credit: results go through a first-word-fall-
through FIFO deep enough for every group the pipeline can hold, and the walker issues only while
fewer groups than that are in flight, so with ``tready`` held high the credit never binds.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..components import CheckedComponent, ConstantMatrixProduct, emit_graph, word
from .accumulate import accumulators, output_words
from ..pipeline import numbered, register, register_chain
from .copies import direct_loads, fanned, winograd_loads
from .gating import Gated, multiply
from .buffers import feature_map_fibres, feature_map_reads, feature_map_writer, output_fifo, transformed_tiles
from .weights import preloaded_weights, weight_counters, weight_memories
from .words import word_contents, word_memory, word_products
from .lines import frame_gap, line_space
from .modes import Gating
from .plan import EnginePlan
from .walker import WriterState, output_keep, walk


def axis_stream(width: int, keep: int = 0) -> wiring.Signature:
    """An AXI4-Stream source signature: tdata, tvalid, tlast (out) and tready (in); tkeep when keep."""
    members = {"tdata": Out(width), "tvalid": Out(1), "tready": In(1), "tlast": Out(1)}
    if keep:
        members["tkeep"] = Out(keep)
    return wiring.Signature(members)


def engine_signature(plan: EnginePlan) -> wiring.Signature:
    """The engine's ports, from its plan alone (see the module docstring)."""
    o, g = plan.options, plan.options.geometry
    return wiring.Signature({
        "s_axis_w": In(axis_stream(plan.n_w * plan.w_width)),
        "s_axis_fm": In(axis_stream(o.PC * o.data_width)),
        "m_axis_y": Out(axis_stream(o.PK * g.n_y * plan.y_width, keep=g.n_y)),
        "busy": Out(1), "weights_loaded": Out(1)})


@dataclass
class _Control:
    """The engine's control signals shared between its parts (see :func:`_control`)."""

    inflight_next: Signal
    wbusy: Signal
    wgen: Signal
    rgen: Signal
    loaded: Signal
    w_count: Signal
    fm_open: Signal
    w_counting: Signal
    count: Signal
    reading: Signal
    draining: Signal
    w_hs: Signal
    fm_hs: Signal
    frame_end: Signal
    walk_end: Signal
    space: Signal
    gap: Value


class LayerEngine(CheckedComponent):
    """A whole convolution layer, streaming, bit-exact (see the module docstring).

    Parameters
    ----------
    plan : EnginePlan
        Everything the engine is (:func:`~hdl.engine.plan.plan_engine`); this class only builds it.
    weights : sequence of int, optional
        Weight beats (as ``s_axis_w`` takes them) stored from the start: the engine comes out of reset
        with them loaded and ``s_axis_w`` may replace them (the kernel transform offline, or direct).

    Attributes
    ----------
    s_axis_w : In(axis_stream(n_w * w_width))
    s_axis_fm : In(axis_stream(PC * data_width))
    m_axis_y : Out(axis_stream(PK * |y| * y_width, keep=|y|))
    busy, weights_loaded : Out(1)
    """

    @classmethod
    def check(cls, plan: EnginePlan, weights=None) -> None:
        if plan.options.word_mask is not None and weights is None:
            raise WinohdlError("a word-sparse engine (a word mask) is generated with its weights: give them")
        if weights is not None and (plan.hw_transform or len(weights) != plan.options.weight_beats):
            raise WinohdlError(f"preloaded weights: {plan.options.weight_beats} beats of u with the kernel transform "
                               f"offline or of g with the kernels stored, got {len(weights)}"
                               f"{' (transform on chip as loaded)' if plan.hw_transform else ''}")

    def __init__(self, plan: EnginePlan, weights=None):
        self.plan = plan
        self.weights = None if weights is None else tuple(int(b) for b in weights)
        super().__init__(engine_signature(plan))

    def elaborate(self, platform):
        m = Module()
        p, o = self.plan, self.plan.options
        reg = partial(register, m)
        ctl = _control(m, p, self, preloaded=self.weights is not None)
        w_packed, w_do, counters = _weight_input(m, p, self.s_axis_w, ctl, reg)
        # the feature-map banks' write side: inside a frame after each beat unless it was the last
        writer = feature_map_writer(m, o, ctl.fm_hs, ctl.wgen, ctl.frame_end)
        with m.If(ctl.fm_hs):
            m.d.sync += ctl.wbusy.eq(~writer.at_end)
        wk, mul_issue = _walker(m, p, ctl, writer, self.m_axis_y)
        if o.line_buffered:
            m.d.comb += ctl.space.eq(line_space(m, o, wk.tidx[0], writer, ctl.rgen))
        valid1, last1, tlast1, keep1, w_raddrs = _issue_stage(m, p, reg, ctl, wk, mul_issue)
        sw_bits = p.store_width
        w_raddrs = w_raddrs[:p.weight_slices]
        widths = [p.n_store // len(w_raddrs) * sw_bits] * len(w_raddrs)
        # gated, the operand registers are the multipliers' own (gating.py): the memories' read one fewer
        # (the kernels stored: the transform's last register)
        gate = o.gating is Gating.ZERO_OPERAND
        selects = None
        if o.word_mask is not None:     # a memory a lane of each issue's words and their lanes, fixed (words.py)
            read = [word_memory(m, o, reg, sw_bits, w_raddrs[0], word_contents(o, self.weights, sw_bits, pc), pc,
                                operand_register=not gate) for pc in range(o.PC)]
            w_read, selects = {(0, pc): q for pc, (q, _) in enumerate(read)}, [sel for _, sel in read]
        else:
            init = None if self.weights is None else preloaded_weights(o, self.weights, widths)
            w_read = weight_memories(m, o, reg, widths, w_packed, w_do, counters, w_raddrs, init,
                                     operand_register=not gate or p.reads_kernels)
        if p.input_passes is not None:
            raw = feature_map_fibres(m, o, reg, writer, ctl.fm_hs, self.s_axis_fm.tdata, (wk.tidx, wk.read_cg, ctl.rgen),
                                     wk.read_slot, windowed=p.input_unit_shared)
        else:
            raw = feature_map_reads(m, o, reg, writer, ctl.fm_hs, self.s_axis_fm.tdata,
                                    (wk.tidx, wk.read_cg, ctl.rgen))
        wstore = {(pk, pc): [w_read[pk, pc][i * sw_bits:(i + 1) * sw_bits].as_signed() for i in range(p.n_store)]
                  for pk, pc in w_read}
        if p.reads_kernels:
            wstore = {lane: _kernel_transform(m, p, reg, g, f"{lane[0]}_{lane[1]}", final=not gate)
                      for lane, g in wstore.items()}
        if p.winograd:
            sums, n_acc = _winograd_sums(m, p, reg, wk, raw, wstore, selects), p.datapath.rank
        else:
            sums, n_acc = _direct_sums(m, p, reg, raw, wstore), o.geometry.n_y
        _accumulate_and_emit(m, p, reg, sums, n_acc, (valid1, last1, tlast1, keep1), self.m_axis_y)
        return m


def _control(m: Module, p: EnginePlan, ports, preloaded: bool = False) -> _Control:
    """Frames, weight loads and credits. Two frame buffers (ping-pong: the address's top bit): the
    writer fills frame n while the walker still reads frame n - 1; ``inflight`` counts frames started
    by the writer and not yet walked to their last issue (0..2); weights load only when it is 0.
    ``preloaded``: a kernel set is stored from the start (``loaded`` out of reset)."""
    o = p.options
    sw, sfm = ports.s_axis_w, ports.s_axis_fm
    inflight = Signal(range(3), name="inflight")
    c = _Control(
        inflight_next=None, wbusy=Signal(name="wbusy"), wgen=Signal(name="wgen"), rgen=Signal(name="rgen"),
        loaded=Signal(name="loaded", init=int(preloaded)), w_count=Signal(range(o.weight_beats + 1), name="w_count"),
        fm_open=Signal(name="fm_open"), w_counting=Signal(name="w_counting"),
        count=Signal(range(p.fifo_depth + 1), name="credit_count"),
        # a weight load waits until the walker has issued every group and the last weight read is done
        reading=Signal(name="w_reading"),
        # serial B^T: a drain pass (the multipliers finish a frame's last tile)
        draining=Signal(name="draining"), w_hs=None, fm_hs=None, frame_end=None, walk_end=None,
        # line buffers: room in the ring for the writer's row (set by the engine once the walker exists)
        space=Signal(name="line_space_ok", init=1), gap=Const(0))
    # (a word-sparse engine's weights are fixed at generation: it takes none)
    m.d.comb += [sw.tready.eq((inflight == 0) & ~c.reading & ~c.draining if o.word_mask is None else 0),
                 # (two rings: ``fm_open`` stays high inside a frame, so the ring's limit must gate it there)
                 sfm.tready.eq(Mux(c.wbusy, c.space, c.fm_open & ~sw.tvalid) if o.line_buffered else
                               c.wbusy | (c.fm_open & ~sw.tvalid)),
                 ports.busy.eq((inflight != 0) | (c.count != 0) | c.draining), ports.weights_loaded.eq(c.loaded)]
    c.w_hs, c.fm_hs = Signal(name="w_hs"), Signal(name="fm_hs")
    m.d.comb += [c.w_hs.eq(sw.tvalid & sw.tready), c.fm_hs.eq(sfm.tvalid & sfm.tready)]
    frame_start = Signal(name="frame_start")
    c.frame_end = Signal(name="frame_end")    # the writer's last beat of a frame
    c.walk_end = Signal(name="walk_end")      # the walker's last issue of a frame
    m.d.comb += frame_start.eq(c.fm_hs & ~c.wbusy)
    c.inflight_next = Signal(range(3), name="inflight_next")
    m.d.comb += c.inflight_next.eq(inflight + frame_start - c.walk_end)
    m.d.sync += inflight.eq(c.inflight_next)
    if o.line_buffered:
        c.gap = frame_gap(m, c.walk_end)
    with m.If(c.frame_end):
        m.d.sync += c.wgen.eq(~c.wgen)
    with m.If(c.walk_end):
        m.d.sync += c.rgen.eq(~c.rgen)
    return c


def _weight_input(m: Module, p: EnginePlan, sw, c: _Control, reg):
    """The weight stream into the memories' write side: ``(packed words, write, counters)``. With the
    kernel transform on chip a beat is registered and transformed (pipelined) before it is written."""
    o, g, ps = p.options, p.options.geometry, p.stages.per_stage
    w_words = [sw.tdata[i * p.w_width:(i + 1) * p.w_width].as_signed() for i in range(p.n_w)]
    if p.hw_transform:
        dp = p.datapath
        m.submodules.kernel_transform = gt = ConstantMatrixProduct(
            dp.kernel_graph, [o.kernel_width] * g.n_g, dp.kernel_node_ranges, dp.u_ranges, "g", ps)
        for i, v in enumerate(w_words):
            m.d.comb += word(gt.x, i).eq(reg(v, f"w_in{i}"))
        store = [word(gt.y, r) for r in range(dp.rank)]
        w_do = Signal(name="w_do")
        pipe = register_chain(m, c.w_hs, numbered("w_hs_d", p.stages.weight_delay), reset_less=False)
        m.d.comb += w_do.eq(pipe[-1])
        # beats in the transform's registers next cycle (this cycle's handshake shuts the stream already)
        piped_next = Cat(*pipe[:-2]).any()
    else:
        store, w_do, piped_next = w_words, c.w_hs, Const(0)
    counters = weight_counters(m, o, w_do, c.w_count, c.loaded, c.w_counting)
    # a register from the next values: a kernel set stored, no load's beat counted and fewer than two
    # frames in flight. A weight beat taken means no frame in flight, so the handshake selects last
    # one ring of line buffers: one frame in flight at a time; and with line buffers none starts in the
    # walker's wake (lines.py)
    settled = c.loaded & ~c.w_counting & (c.inflight_next < o.frames_in_flight)
    opened = Mux(w_do, c.w_count == o.weight_beats - 1, settled) & ~piped_next
    m.d.sync += c.fm_open.eq(opened & ~c.gap if o.line_buffered else opened)
    return Cat(*[_sext(v, p.store_width) for v in store]), w_do, counters


def _walker(m: Module, p: EnginePlan, c: _Control, writer, my):
    """The walker and the credit that keeps the output FIFO from overflowing: ``(walk, mul_issue)``."""
    credit = Signal(name="credit", init=1)   # fewer groups in flight than the FIFO holds (registered)
    wk = walk(m, p.options, WriterState(writer.wpos, c.wbusy, c.wgen, c.frame_end), c.rgen, c.walk_end, credit,
              lag=p.input_passes is not None)
    m.d.comb += c.draining.eq(wk.drain)
    # the issue of a multiplier group (serial B^T: not in a frame's first pass, which only reads)
    mul_issue = Signal(name="mul_issue")
    m.d.comb += mul_issue.eq(wk.issue & ~wk.first)
    # credits: a group counts from its last issue until its beat is taken
    taken = Signal(name="taken")
    m.d.comb += taken.eq(my.tvalid & my.tready)
    # one step up or down, each computed from the register alone (the handshakes only select: no adders
    # in series after them); the credit from the registered count (a group at most enters per cycle: one
    # entry of margin), so the issue's logic and the comparator are not between the credit and itself
    enter = mul_issue & wk.last_cg
    with m.If(enter & ~taken):
        m.d.sync += c.count.eq(c.count + 1)
    with m.Elif(taken & ~enter):
        m.d.sync += c.count.eq(c.count - 1)
    m.d.sync += credit.eq(c.count < p.fifo_depth - 1)
    return wk, mul_issue


def _kernel_transform(m: Module, p: EnginePlan, reg, g: list, tag: str, final: bool = True) -> list:
    """u = G_int g of one lane's kernel as read from its memory (:attr:`EnginePlan.reads_kernels`), each
    word registered as the multiplier's operand, :attr:`EnginePlan.kernel_read_cycles` after the read;
    a staggered fibre's words (:attr:`EnginePlan.staggered`) one register more per fibre, as its own
    memory's read was a cycle later per fibre. ``final`` False: without the operand register (gating adds it)."""
    o, dp = p.options, p.datapath
    m.submodules[f"gt{tag}"] = gt = ConstantMatrixProduct(dp.kernel_graph, [o.kernel_width] * o.geometry.n_g,
                                                          dp.kernel_node_ranges, dp.u_ranges, f"gt{tag}", o.per_stage)
    for i, v in enumerate(g):
        m.d.comb += word(gt.x, i).eq(v)
    per = dp.rank // p.slices
    return [reg(word(gt.y, r), f"u{tag}_{r}", int(final) + r // per) for r in range(dp.rank)]


def _issue_stage(m: Module, p: EnginePlan, reg, c: _Control, wk, mul_issue):
    """Stage 1, the issue registered: ``(valid, last, tlast, keep, weight read addresses)``."""
    keep0 = output_keep(p.options, wk.mtidx)
    valid1 = Signal(name="valid1")
    m.d.sync += valid1.eq(mul_issue)
    last1 = reg(wk.last_cg, "last1")
    # the multipliers' frame ends with the pass after its last reads when they lag them
    tlast1 = reg(wk.last_group & wk.mlast_tile, "tlast1")
    keep1 = reg(keep0, "keep1")
    w_raddr = reg(reg(wk.block, "w_addr1"), "w_addr", p.stages.weight_read_delay)
    # staggered accumulators: fibre f reads its own weight memories f cycles after fibre 0
    w_raddrs = register_chain(m, w_raddr, numbered("w_addr_f", p.slices - 1, 1))
    pending = register_chain(m, valid1, numbered("w_pending", p.stages.weight_drain - 1), reset_less=False)
    m.d.comb += c.reading.eq(Cat(*pending).any())
    return valid1, last1, tlast1, keep1, w_raddrs


_ZERO = Const(0, signed(1))
"""The product of a lane whose weight is zero in every visited block (:mod:`hdl.engine.sparsity`):
a constant, so synthesis builds neither the multiplier nor its adder-tree term."""


def _winograd_sums(m: Module, p: EnginePlan, reg, wk, raw, wstore, selects=None) -> dict:
    """B^T (or the transformed tiles), the R x PK x PC multipliers and the sums over the PC lanes:
    ``{(pk, r): sum}``, registered. Word-sparse (``selects``, a word mask): R / F x PC multipliers, each product
    a term of the output lane its select names (:func:`hdl.engine.words.word_products`)."""
    o, a, dp, ps = p.options, p.arith, p.datapath, p.stages.per_stage
    g, R = o.geometry, dp.rank
    gate = o.gating is Gating.ZERO_OPERAND       # the operands without their last register (gating.py)
    v = transformed_tiles(m, p, reg, wk, raw, final=not gate) if p.input_passes is not None else {}
    for pc in range(o.PC if p.input_passes is None else 0):
        m.submodules[f"bt{pc}"] = bt = ConstantMatrixProduct(
            dp.data_graph, [o.data_width] * g.n_d, dp.data_node_ranges, dp.v_ranges, f"bt{pc}", ps)
        for j in range(g.n_d):
            m.d.comb += word(bt.x, j).eq(raw[j, pc])
        for r in range(R):
            v[pc, r] = reg(word(bt.y, r), f"v{pc}_{r}", int(not gate or p.operand_wait > 0))   # the operand register
    if p.operand_wait and p.input_passes is None:    # the operand waits for u, transformed as read
        v = {k: reg(x, f"v{k[0]}_{k[1]}_wait", p.operand_wait - int(gate)) for k, x in v.items()}
    gated = Gated.make(m, v) if gate else None
    v = gated.operands if gate else v
    prods = {} if selects is None else word_products(m, p, v, wstore, selects, gated)
    if selects is None:     # each operand's copy for each output lane it feeds
        v = fanned(m, v, winograd_loads(o, R), o.operand_fanout, "v")
    for pk in range(o.PK if selects is None else 0):
        for pc in range(o.PC):
            for r in range(R):
                if (pk, pc) not in wstore:      # a lane zero in every block: no multiplier, a zero term
                    prods[pk, pc, r] = _ZERO
                    continue
                u = wstore[pk, pc][r][:dp.u_widths[r]].as_signed()
                prods[pk, pc, r] = multiply(m, p, v[(pc, r), pk], u, a.word_width(r, dp.m_widths[r]),
                                            f"p{pk}_{pc}_{r}", o.multiplier_kind(pk), gated, (pc, r))
    sums = {}
    for pk in range(o.PK):
        for r in range(R):
            if o.PC == 1:
                sums[pk, r] = prods[pk, 0, r]
                continue
            (row,) = emit_graph(m, a.lane_graph, [prods[pk, pc, r] for pc in range(o.PC)],
                                [x.width for x in a.hw_word(r, a.lane_node_ranges[r])], f"lane{pk}_{r}", ps)
            s = Signal(signed(a.word_width(r, a.lane_ranges[r].width)), name=f"lane{pk}_{r}")
            m.d.comb += s.eq(row)
            sums[pk, r] = reg(s, f"lane{pk}_{r}_q")
    return sums


def _direct_sums(m: Module, p: EnginePlan, reg, raw, wstore) -> dict:
    """The |y| x |g| x PK x PC multipliers and their sum per output: ``{(pk, o): sum}``, registered."""
    o, a, ps = p.options, p.arith, p.stages.per_stage
    pw = a.product_ranges[0].width
    # the data operand registered once more (the register a DSP block absorbs), as the weight is: the
    # weight's first register then stays beside its block RAM (a network's critical path ran from a
    # weight block RAM to a distant multiplier)
    taps = {(dj, pc) for _, dj, _ in a.pairs for pc in range(o.PC)}
    gate = o.gating is Gating.ZERO_OPERAND       # the weights come without their last register then
    operand = {(dj, pc): raw[dj, pc] if gate else reg(raw[dj, pc], f"x{dj}_{pc}") for dj, pc in sorted(taps)}
    gated = Gated.make(m, operand, "x") if gate else None
    operand = gated.operands if gate else operand
    operand = fanned(m, operand, direct_loads(o, a.pairs), o.operand_fanout, "x")
    sums = {}
    for pk in range(o.PK):
        prods = []
        for i, (_, dj, gk) in enumerate(a.pairs):
            for pc in range(o.PC):
                if (pk, pc) not in wstore:      # a lane zero in every block: no multiplier, a zero term
                    prods.append(_ZERO)
                    continue
                prods.append(multiply(m, p, operand[(dj, pc), (pk, i)], wstore[pk, pc][gk], pw, f"p{pk}_{i}_{pc}",
                                      o.multiplier_kind(pk), gated, (dj, pc)))
        rows = emit_graph(m, a.tree, prods, [r.width for r in a.tree_node_ranges], f"tree{pk}", ps)
        for oi, val in enumerate(rows):
            s = Signal(signed(a.lane_ranges[oi].width), name=f"lane{pk}_{oi}")
            m.d.comb += s.eq(val)
            sums[pk, oi] = reg(s, f"lane{pk}_{oi}_q")
    return sums


def _accumulate_and_emit(m: Module, p: EnginePlan, reg, sums: dict, n_acc: int, stage1, my) -> None:
    """The accumulators (Winograd domain, R per output channel, or the direct outputs), then (Winograd)
    A^T and the exact division, into the output FIFO. The group flags travel beside the data."""
    o, g, tm = p.options, p.options.geometry, p.stages
    valid1, last1, tlast1, keep1 = stage1
    n = tm.accumulate - 2        # the flags as seen in the cycle before the accumulators add
    valid_p = register_chain(m, valid1, numbered("valid", n, 2), reset_less=False)[-1]
    last_p, tlast_p, keep_p = ((reg(x, name, n) if n else x) for x, name in
                               ((last1, "last"), (tlast1, "tlast"), (keep1, "keep")))
    # the accumulators clear with the group's last sum (``acc_clear``, a register, not a LUT before
    # hundreds of reset pins)
    clear_p = valid_p & last_p
    valid_a = reg(valid_p, f"valid{tm.accumulate}", reset_less=False)
    clear_a = reg(clear_p, "acc_clear", reset_less=False)
    tlast_a, keep_a = reg(tlast_p, "tlast_a"), reg(keep_p, "keep_a")
    done = accumulators(m, p, reg, sums, n_acc, valid_a, clear_a, clear_p)
    out_valid = Signal(name="out_valid")
    m.d.sync += out_valid.eq(clear_a)
    out_meta = (reg(tlast_a, "tlast_o"), reg(keep_a, "keep_o"))   # cycle accumulate + 1
    outs, extra = output_words(m, p, reg, done, clear_a, out_valid) if p.winograd else (dict(done), 0)
    w_valid = register_chain(m, out_valid, numbered("out_valid_d", extra), reset_less=False)[-1]
    w_tlast, w_keep = (reg(x, "meta_o", extra) if extra else x for x in out_meta)
    yw = p.y_width
    packed = Cat(*[_sext(outs[pk, oi], yw) for pk in range(o.PK) for oi in range(g.n_y)], w_keep, w_tlast)
    output_fifo(m, packed, w_valid, my, p.fifo_depth, o.PK * g.n_y * yw, g.n_y)


def _sext(v, width: int) -> Value:
    """``v`` as exactly ``width`` bits (sign-extended or truncated), unsigned view."""
    v = v.as_signed() if hasattr(v, "as_signed") else v
    return v.as_unsigned()[:width] if len(v) >= width else Cat(v, *([v[-1]] * (width - len(v))))
