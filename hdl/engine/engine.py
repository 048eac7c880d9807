"""The streaming convolution-layer engine (Winograd, or the direct baseline), in Amaranth.

Ports (AXI4-Stream conventions; Verilog names ``<bundle>__<member>``):

``s_axis_w``  (in)  the weight stream: ``tdata`` one kernel per beat (u[k, c] = G_int g[k, c],
                    R words, with the kernel transform offline; otherwise g[k, c], |g| words),
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

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..components import (ConstantMatrixProduct, ExactDivision, emit_graph, emit_product, graph_latency,
                          split_levels, word)
from ..datapath import Datapath
from ..options import HardwareOptions, KernelTransform
from ..widths import Range
from .arith import EngineArithmetic
from .accumulate import accumulators, output_words
from .buffers import (FM_READ_REGISTERS, delay_line, feature_map_fibres, feature_map_reads,
                      feature_map_writer, output_fifo, registers, transformed_tiles, weight_counters, weight_memories)
from .options import EngineKind, EngineOptions, InputTransform, OutputTransform
from .serial import lane_divisions, serial_latency, sharing_pays
from .perf import Plan, Timing
from .transforms import serial_input_passes, serial_output_passes
from .walker import ISSUE_DELAY, WriterState, output_keep, walk

# Registers after each product: a DSP block's pipeline and output registers, then one in the
# fabric, so that the route out of the block (about 3 ns on ECP5) and the adder after it (the
# accumulator's carry chain, or the direct engine's product tree) are in different cycles: together
# they took 7.1 ns, a small layer's critical path once the block-RAM reads were fast
PRODUCT_REGISTERS = 3


def axis_stream(width: int, keep: int = 0) -> wiring.Signature:
    """An AXI4-Stream source signature: tdata, tvalid, tlast (out) and tready (in); tkeep when keep."""
    members = {"tdata": Out(width), "tvalid": Out(1), "tready": In(1), "tlast": Out(1)}
    if keep:
        members["tkeep"] = Out(keep)
    return wiring.Signature(members)


class LayerEngine(wiring.Component):
    """A whole convolution layer, streaming, bit-exact (see the module docstring).

    Parameters
    ----------
    opts : EngineOptions
    datapath : Datapath or None
        The card's datapath (Winograd engine).
    kind : EngineKind

    Attributes
    ----------
    s_axis_w : In(axis_stream(n_w * w_word_width))
    s_axis_fm : In(axis_stream(PC * data_width))
    m_axis_y : Out(axis_stream(PK * |y| * y_width, keep=|y|))
    busy, weights_loaded : Out(1)
    """

    def __init__(self, opts: EngineOptions, datapath: Datapath | None = None,
                 kind: EngineKind = EngineKind.WINOGRAD):
        self.opts, self.dp, self.kind = opts, datapath, EngineKind(kind)
        self.arith = a = EngineArithmetic(opts, datapath, self.kind)
        g = opts.geometry
        wino = self.kind is EngineKind.WINOGRAD
        self.hw_transform = wino and opts.kernel_transform is KernelTransform.HW
        if wino and not self.hw_transform:
            self.n_w, self.w_width = datapath.rank, datapath.u_port_width
        else:
            self.n_w, self.w_width = g.n_g, opts.kernel_width
        # stored kernel words: u (Winograd) or g (direct)
        self.n_store = datapath.rank if wino else g.n_g
        self.store_width = datapath.u_port_width if wino else opts.kernel_width
        self.y_width = a.y_width
        # serial A^T: acc_signs -1 where an accumulator subtracts (a column sign of A^T)
        self.acc_signs, self.passes = (serial_output_passes(opts, datapath) if wino else None) or (None, None)
        # the serial transform's last pass divides, one division per lane, when the divisors allow
        self.lane_divisions = lane_divisions(self.passes, self.arith.divisions) if self.passes else None
        self.input_passes = serial_input_passes(opts, datapath) if wino else None
        self.plan = self._plan()
        super().__init__({
            "s_axis_w": In(axis_stream(self.n_w * self.w_width)),
            "s_axis_fm": In(axis_stream(opts.PC * opts.data_width)),
            "m_axis_y": Out(axis_stream(opts.PK * g.n_y * self.y_width, keep=g.n_y)),
            "busy": Out(1), "weights_loaded": Out(1)})

    @property
    def multipliers(self) -> int:
        o, g = self.opts, self.opts.geometry
        per = self.dp.rank if self.kind is EngineKind.WINOGRAD else g.n_y * g.n_g
        return o.PK * o.PC * per

    @property
    def latency(self) -> int:
        """Cycles from a group's last issue to its output beat on ``m_axis_y``."""
        return self.plan.latency

    @property
    def timing(self) -> Timing:
        """What the performance model needs: the latency, the weight pipeline's delay and the
        weight reads still in flight after the walker's last issue."""
        return Timing(self.plan.latency, self.plan.weight_delay, self.plan.weight_drain, ISSUE_DELAY,
                      lag=self.input_passes is not None)

    @property
    def fifo_depth(self) -> int:
        """Output FIFO entries: every group in flight (issued, not yet taken) without back-pressure
        fits, so the credit never binds then: one group per C / PC cycles over the latency, plus one,
        plus the one the credit's lag can let in (it is computed from the count a cycle old)."""
        return -(-self.latency // self.opts.channel_groups) + 2

    @property
    def input_transform(self) -> InputTransform:
        """The Winograd engine's B^T as built (parallel or serial; the direct engine: parallel)."""
        return InputTransform.SERIAL if self.input_passes else InputTransform.PARALLEL

    @property
    def staggered(self) -> bool:
        """The accumulators' fibres are staggered (Winograd engine with the serial B^T and A^T).

        The serial A^T's first pass reads the accumulator totals one fibre (along the last axis)
        per cycle. Staggered, fibre f's multiplier operands are read f cycles after fibre 0's
        (its own block RAMs of weights and transformed tiles, the read address delayed), so its
        accumulators finish f cycles later, exactly when the first pass reads that fibre. Each
        total is then held for that one cycle only (a register with a synchronous reset, no
        logic) and the first pass takes the OR of the fibres instead of a multiplexer over them.
        """
        return bool(self.input_passes and self.passes)

    @property
    def output_unit_shared(self) -> bool:
        """The serial A^T's passes share one 1D unit (:func:`~hdl.engine.serial.sharing_pays`: the
        same matrix on every axis, their windows fit in the C / PC cycles of a group, and the
        adders saved outweigh the OR at the unit's input)."""
        if not self.passes:
            return False
        # staggered, the first pass's input is already the OR of the fibres; else a multiplexer
        fan_in = self.slices if self.staggered else 1
        return sharing_pays(self.passes, self.accumulator_ranges, self.arith.hw, self.opts.per_stage,
                            self.opts.channel_groups, fan_in, self.arith.output_bits)

    @property
    def input_unit_shared(self) -> bool:
        """The serial B^T's passes share one 1D unit (as :attr:`output_unit_shared`, in the
        K / PK cycles between two input tiles); its feature-map fibres are then zero outside
        their cycles."""
        return bool(self.input_passes) and sharing_pays(
            self.input_passes, [self.arith.d_range] * self.opts.geometry.n_d, list, self.opts.per_stage,
            self.opts.kernel_groups, 1)

    @property
    def fibres(self) -> int:
        """Fibres of accumulators along the last axis (the serial A^T's first pass; 1 if parallel)."""
        return self.passes[0].fibres if self.passes else 1

    @property
    def slices(self) -> int:
        """Groups of accumulators finishing together, one per fibre when staggered (else 1): each
        group's weights and transformed tiles are a memory slice of their own, read one cycle later."""
        return self.fibres if self.staggered else 1

    @property
    def accumulator_ranges(self) -> list[Range]:
        """Exact range of each accumulator's total (negated where it subtracts)."""
        signs = self.acc_signs or [1] * len(self.arith.acc_ranges)
        return [r if sg > 0 else Range(-r.hi, -r.lo, r.tight) for r, sg in zip(self.arith.acc_ranges, signs)]

    @property
    def accumulator_widths(self) -> list[int]:
        """Accumulator widths as built (modulo ``2^word_bits[r]`` in the Winograd engine)."""
        return [self.arith.hw_word(r, [x])[0].width for r, x in enumerate(self.accumulator_ranges)]

    @property
    def output_transform(self) -> OutputTransform:
        """The Winograd engine's A^T as built (parallel or serial; the direct engine: parallel)."""
        return OutputTransform.SERIAL if self.passes else OutputTransform.PARALLEL

    @property
    def split_levels(self) -> int:
        """Registered adder levels that sum the partial products of multiplications with an operand
        wider than a DSP block's (:func:`~hdl.components.emit_product`); 0 when every one fits."""
        o = self.opts
        if self.kind is EngineKind.WINOGRAD:
            return max(split_levels(v, u) for v, u in zip(self.dp.v_widths, self.dp.u_widths))
        return split_levels(o.data_width, o.kernel_width)

    def _plan(self) -> Plan:
        o, a = self.opts, self.arith
        ps = o.per_stage
        if self.kind is EngineKind.WINOGRAD:
            dp = self.dp
            # serial B^T: the multiplier operand comes from the transformed-tile block RAM, read
            # like a feature-map bank (no zero-padding register), the weights one cycle earlier
            lbt = graph_latency(dp.data_graph, ps) if not self.input_passes else -1
            lane = graph_latency(a.lane_graph, ps) + 1 if o.PC > 1 else 0
            acc = 4 + PRODUCT_REGISTERS + FM_READ_REGISTERS + lbt + lane + self.split_levels
            # A^T starts with the last sum (staggered: its first fibre is the one register after),
            # or one register later (its fibres held in registers)
            start = acc if self.staggered else acc + 1
            if self.lane_divisions:   # the division inside the serial transform's last pass
                write = start + serial_latency(self.passes, ps, self._division(ps, self.lane_divisions).latency)
            else:
                at = serial_latency(self.passes, ps) if self.passes else graph_latency(dp.output_graph, ps)
                write = start + at + 1 + self._division(ps).latency
            wdelay = 1 + graph_latency(dp.kernel_graph, ps) if self.hw_transform else 0
            stagger = self.slices - 1
            # the weight read is registered twice (below), the address delayed to meet B^T's output
            return Plan(ps, wdelay, FM_READ_REGISTERS + lbt, acc, write, stagger)

        acc = 3 + PRODUCT_REGISTERS + FM_READ_REGISTERS + self.split_levels + graph_latency(a.tree, ps) + 1
        return Plan(ps, 0, FM_READ_REGISTERS, acc, acc + 1)

    def _division(self, per_stage: int, divisions=None, in_ranges=None) -> ExactDivision:
        """The exact division of every output (or of ``divisions``: the serial transform's lanes)."""
        a = self.arith
        divisions = divisions or a.divisions
        in_ranges = in_ranges or a.hw(a.pre_ranges)[:len(divisions)]
        div = ExactDivision(divisions, in_ranges, a.y_width,
                            HardwareOptions(self.opts.data_width, self.opts.kernel_width), per_stage)
        div._MustUse__silence = True
        return div

    # ------------------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        o, a, g = self.opts, self.arith, self.opts.geometry
        wino = self.kind is EngineKind.WINOGRAD
        tm = self.plan
        ps = tm.per_stage
        sw, sfm, my = self.s_axis_w, self.s_axis_fm, self.m_axis_y
        serial_in = self.input_passes is not None

        reg = registers(m)

        # ---- control ------------------------------------------------------------------------------
        # Two frame buffers (ping-pong: the address's top bit): the writer fills frame n while the
        # walker still reads frame n - 1. ``inflight`` counts frames started by the writer and not yet
        # walked to their last issue (0..2); weights load only when it is 0.
        inflight = Signal(range(3), name="inflight")
        wbusy = Signal(name="wbusy")        # the writer is inside a frame
        wgen = Signal(name="wgen")          # buffer the writer fills
        rgen = Signal(name="rgen")          # buffer the walker reads
        loaded = Signal(name="loaded")
        w_count = Signal(range(o.weight_beats + 1), name="w_count")
        fm_open = Signal(name="fm_open")    # inflight < 2, kernels loaded, no load under way (see below)
        w_counting = Signal(name="w_counting")   # w_count != 0
        count = Signal(range(self.fifo_depth + 1), name="credit_count")  # groups issued, not yet taken
        # a weight load waits until the walker has issued every group and the last weight read is done
        reading = Signal(name="w_reading")
        # serial B^T: a drain pass (the multipliers finish a frame's last tile, nothing in flight
        # may be; a pass that reads the next frame's first tile meanwhile has that frame in flight)
        draining = Signal(name="draining")
        m.d.comb += [sw.tready.eq((inflight == 0) & ~reading & ~draining),
                     sfm.tready.eq(wbusy | (fm_open & ~sw.tvalid)),
                     self.busy.eq((inflight != 0) | (count != 0) | draining), self.weights_loaded.eq(loaded)]
        w_hs = Signal(name="w_hs")
        fm_hs = Signal(name="fm_hs")
        m.d.comb += [w_hs.eq(sw.tvalid & sw.tready), fm_hs.eq(sfm.tvalid & sfm.tready)]
        frame_start = Signal(name="frame_start")
        frame_end = Signal(name="frame_end")    # the writer's last beat of a frame
        walk_end = Signal(name="walk_end")      # the walker's last issue of a frame
        m.d.comb += frame_start.eq(fm_hs & ~wbusy)
        inflight_next = Signal(range(3), name="inflight_next")
        m.d.comb += inflight_next.eq(inflight + frame_start - walk_end)
        m.d.sync += inflight.eq(inflight_next)
        with m.If(frame_end):
            m.d.sync += wgen.eq(~wgen)
        with m.If(walk_end):
            m.d.sync += rgen.eq(~rgen)

        # ---- weight memory -----------------------------------------------------------------------
        # With the kernel transform on chip, a beat is registered and transformed (pipelined)
        # before it is written: the write and the load's bookkeeping follow ``weight_delay`` later.
        w_words = [sw.tdata[i * self.w_width:(i + 1) * self.w_width].as_signed() for i in range(self.n_w)]
        if self.hw_transform:
            dp = self.dp
            m.submodules.kernel_transform = gt = ConstantMatrixProduct(
                dp.kernel_graph, [o.kernel_width] * g.n_g, dp.kernel_node_ranges, dp.u_ranges, "g", ps)
            for i, v in enumerate(w_words):
                m.d.comb += word(gt.x, i).eq(reg(v, f"w_in{i}"))
            store = [word(gt.y, r) for r in range(dp.rank)]
            w_do = Signal(name="w_do")
            pipe = delay_line(m, w_hs, tm.weight_delay, "w_hs_d")
            m.d.comb += w_do.eq(pipe[-1])
            # beats in the transform's registers next cycle (this cycle's handshake shuts the stream already)
            piped_next = Cat(*pipe[:-2]).any()
        else:
            store, w_do, piped_next = w_words, w_hs, Const(0)
        pc_w, cg_w, pk_w, kg_w = weight_counters(m, o, w_do, w_count, loaded, w_counting)
        # a register, from the next values (a LUT of registers before the stream's handshake, whose
        # fan-out is the writer's counters, was a layer's critical path: 6.2 ns): next cycle, a
        # kernel set stored, no load's beat counted and fewer than two frames in flight. A weight
        # beat taken means no frame in flight or starting (``inflight_next`` is 0 then), so the
        # handshake selects last, one LUT from the register, not two through ``inflight_next``
        settled = loaded & ~w_counting & (inflight_next < 2)
        m.d.sync += fm_open.eq(Mux(w_do, w_count == o.weight_beats - 1, settled) & ~piped_next)
        sw_bits = self.store_width
        w_packed = Cat(*[_sext(v, sw_bits) for v in store])

        # ---- feature-map banks: write side ---------------------------------------------------------
        writer = feature_map_writer(m, o, fm_hs, wgen, frame_end)
        # inside a frame after each beat unless it was the last: the handshake as the register's
        # enable (as a set and a clear, Yosys gave it two LUTs more before its reset pin: 5.9 ns)
        with m.If(fm_hs):
            m.d.sync += wbusy.eq(~writer.at_end)
        wpos = writer.wpos

        # ---- walker ----------------------------------------------------------------------------------
        credit = Signal(name="credit", init=1)   # fewer groups in flight than the FIFO holds (registered)
        wk = walk(m, o, WriterState(wpos, wbusy, wgen, frame_end), rgen, walk_end, credit, lag=serial_in)
        cg, kg, tidx, issue, last_cg, last_kg = wk.cg, wk.kg, wk.tidx, wk.issue, wk.last_cg, wk.last_kg
        m.d.comb += draining.eq(wk.drain)
        # the issue of a multiplier group (serial B^T: not in a frame's first pass, which only reads)
        mul_issue = Signal(name="mul_issue")
        m.d.comb += mul_issue.eq(issue & ~wk.first)
        # credits: a group counts from its last issue until its beat is taken
        taken = Signal(name="taken")
        m.d.comb += taken.eq(my.tvalid & my.tready)
        count_next = Signal.like(count, name="credit_next")
        m.d.comb += count_next.eq(count + (mul_issue & last_cg) - taken)
        # the credit from the registered count (a group at most enters per cycle, so one entry of
        # margin keeps the FIFO from overflowing): not from ``count_next``, which is the issue's
        # adder and comparator after the credit itself (credit -> credit was a critical path, 6.2 ns)
        m.d.sync += [count.eq(count_next), credit.eq(count < self.fifo_depth - 1)]

        keep0 = output_keep(o, wk.mtidx)

        # ---- stage 1: the issue registered (addresses, window mask, group flags) ----------------------
        valid1 = Signal(name="valid1")
        m.d.sync += valid1.eq(mul_issue)
        last1 = reg(last_cg, "last1")
        # the multipliers' frame ends with the pass after its last reads when they lag them
        tlast1 = reg(wk.last_group & wk.mlast_tile, "tlast1")
        keep1 = reg(keep0, "keep1")
        w_raddr = reg(reg(Cat(cg, kg), "w_addr1"), "w_addr", tm.weight_read_delay)
        # staggered accumulators: fibre f reads its own weight memories f cycles after fibre 0
        w_raddrs = [w_raddr]
        for f in range(1, self.slices):
            w_raddrs.append(reg(w_raddrs[-1], f"w_addr_f{f}"))
        pending = delay_line(m, valid1, tm.weight_drain - 1, "w_pending")
        m.d.comb += reading.eq(Cat(*pending).any())

        # ---- weight memories ----------------------------------------------------------------------------
        w_read = weight_memories(m, o, reg, [self.n_store // len(w_raddrs) * sw_bits] * len(w_raddrs), w_packed,
                                 w_do, (pc_w, cg_w, pk_w, kg_w), w_raddrs, 2 if wino else 1)

        # ---- feature-map banks: memories and read ports ---------------------------------------------
        if serial_in:
            raw = feature_map_fibres(m, o, reg, writer, fm_hs, sfm.tdata, (tidx, wk.read_cg, rgen), wk.read_slot,
                                     windowed=self.input_unit_shared)
        else:
            raw = feature_map_reads(m, o, reg, writer, fm_hs, sfm.tdata, (tidx, wk.read_cg, rgen))

        # group flags travel beside the data (valid resets; the rest need not)
        def flags_at(cycle: int):
            """(valid, last, tlast, keep) as seen in ``cycle`` (stage 1 is cycle 1)."""
            v = delay_line(m, valid1, cycle - 1, "valid", 2)[-1]
            n = cycle - 1
            return (v, reg(last1, "last", n) if n else last1, reg(tlast1, "tlast", n) if n else tlast1,
                    reg(keep1, "keep", n) if n else keep1)

        wstore = {(pk, pc): [w_read[pk, pc][i * sw_bits:(i + 1) * sw_bits].as_signed() for i in range(self.n_store)]
                  for pk in range(o.PK) for pc in range(o.PC)}
        # ---- the datapath: cycle 3 + FM_READ_REGISTERS holds the input tiles and the kernels ----------
        if wino:
            dp = self.dp
            R = dp.rank
            v = transformed_tiles(m, self, reg, wk, raw) if serial_in else {}
            for pc in range(o.PC if not serial_in else 0):
                m.submodules[f"bt{pc}"] = bt = ConstantMatrixProduct(
                    dp.data_graph, [o.data_width] * g.n_d, dp.data_node_ranges, dp.v_ranges, f"bt{pc}", ps)
                for j in range(g.n_d):
                    m.d.comb += word(bt.x, j).eq(raw[j, pc])
                for r in range(R):
                    v[pc, r] = reg(word(bt.y, r), f"v{pc}_{r}")          # the multiplier operand register
            prods = {}
            for pk in range(o.PK):
                for pc in range(o.PC):
                    for r in range(R):
                        u = _trunc(wstore[pk, pc][r], dp.u_widths[r])
                        # the product registers (and the registered sums of a split product)
                        prods[pk, pc, r] = emit_product(m, v[pc, r], u, a.word_width(r, dp.m_widths[r]),
                                                        PRODUCT_REGISTERS, self.split_levels, f"p{pk}_{pc}_{r}",
                                                        split=True)
            n_acc = R
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
        else:
            pw = a.product_ranges[0].width
            n_acc = g.n_y
            sums = {}
            for pk in range(o.PK):
                prods = []
                for i, (_, dj, gk) in enumerate(a.pairs):
                    for pc in range(o.PC):
                        prods.append(emit_product(m, raw[dj, pc], wstore[pk, pc][gk], pw, PRODUCT_REGISTERS,
                                                  self.split_levels, f"p{pk}_{i}_{pc}", split=True))
                rows = emit_graph(m, a.tree, prods, [r.width for r in a.tree_node_ranges], f"tree{pk}", ps)
                for oi, val in enumerate(rows):
                    s = Signal(signed(a.lane_ranges[oi].width), name=f"lane{pk}_{oi}")
                    m.d.comb += s.eq(val)
                    sums[pk, oi] = reg(s, f"lane{pk}_{oi}_q")
        # ---- accumulators: Winograd domain (R per output channel) or outputs (direct) ----------------
        # cleared by the group's last sum (``acc_clear``, a register: a LUT before hundreds of reset pins was 6.4 ns)
        valid_p, last_p, tlast_p, keep_p = flags_at(tm.accumulate - 1)
        clear_p = valid_p & last_p
        valid_a = reg(valid_p, f"valid{tm.accumulate}", reset_less=False)
        clear_a = reg(clear_p, "acc_clear", reset_less=False)
        tlast_a, keep_a = reg(tlast_p, "tlast_a"), reg(keep_p, "keep_a")
        done = accumulators(m, self, reg, sums, n_acc, valid_a, clear_a, clear_p)
        out_valid = Signal(name="out_valid")
        m.d.sync += out_valid.eq(clear_a)
        out_meta = (reg(tlast_a, "tlast_o"), reg(keep_a, "keep_o"))   # cycle accumulate + 1
        outs, extra = output_words(m, self, reg, done, clear_a, out_valid) if wino else (dict(done), 0)
        w_valid = delay_line(m, out_valid, extra, "out_valid_d")[-1]
        w_tlast, w_keep = (reg(x, "meta_o", extra) if extra else x for x in out_meta)

        # ---- output FIFO (first word falls through to the output register) ----------------------------
        yw = self.y_width
        packed = Cat(*[_sext(outs[pk, oi], yw) for pk in range(o.PK) for oi in range(g.n_y)], w_keep, w_tlast)
        output_fifo(m, packed, w_valid, my, self.fifo_depth, o.PK * g.n_y * yw, g.n_y)
        return m


def _sext(v, width: int):
    """``v`` as exactly ``width`` bits (sign-extended or truncated), unsigned view."""
    v = v.as_signed() if hasattr(v, "as_signed") else v
    return v.as_unsigned()[:width] if len(v) >= width else Cat(v, *([v[-1]] * (width - len(v))))


def _trunc(v, width: int):
    return v[:width].as_signed()
