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
                    ``tlast`` on the layer's last beat. Back-pressure stalls the whole pipeline.
``busy``      (out) a frame is in flight or an output waits. ``weights_loaded`` (out) a full kernel
                    set is stored.

Protocol: a weight load is K x C beats; it is accepted only when no frame is in flight (the
walker has issued every tile of every accepted frame) and applies to the frames that start
after it; while weights are offered or a load is under way, no new frame starts. Frames stream
back to back: the feature map is double-buffered, so frame n + 1 streams in while frame n is
computed (a frame's first beat waits only while two frames are in flight). Each frame's
outputs end with ``tlast``; kernels stay loaded until the next weight load.

Inside: the feature map is stored in banks (``amaranth.lib.memory``, block RAM) by position
modulo the tile step ``output tile x stride`` per axis, so every input-tile word comes from a
fixed bank and read port (no rotation network); a tile is computed as soon as its last input
pixel has arrived, so input streaming and computation overlap. Per cycle: one input tile of PC
channels through B^T, R x PK x PC multipliers, the Winograd-domain sums of the PC lanes into
R x PK accumulators (exact widths for C channels), and once per (tile, output channel) after
C / PC cycles: A^T and the exact division. Loop order: tiles, output-channel groups, input
channel groups (innermost).
"""

from __future__ import annotations

from itertools import product

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..components import ConstantMatrixProduct, ExactDivision, emit_graph, word
from ..datapath import Datapath
from ..options import HardwareOptions, KernelTransform
from .arith import EngineArithmetic
from .options import EngineKind, EngineOptions, EnginePipeline, bits_for


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
        return 6 + (2 if self.opts.pipeline is EnginePipeline.DEEP else 0)

    # ------------------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        o, a, g = self.opts, self.arith, self.opts.geometry
        N = g.axes
        wino = self.kind is EngineKind.WINOGRAD
        deep = o.pipeline is EnginePipeline.DEEP
        CG, KG = o.channel_groups, o.kernel_groups
        cg_bits, kg_bits = bits_for(CG), bits_for(KG)
        sw, sfm, my = self.s_axis_w, self.s_axis_fm, self.m_axis_y

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
        mid_load = Signal(name="mid_load")
        m.d.comb += mid_load.eq(w_count != 0)
        stall = Signal(name="stall")
        m.d.comb += stall.eq(my.tvalid & ~my.tready)
        m.d.comb += [sw.tready.eq(inflight == 0),
                     sfm.tready.eq(wbusy | ((inflight < 2) & loaded & ~mid_load & ~sw.tvalid)),
                     self.busy.eq((inflight != 0) | my.tvalid), self.weights_loaded.eq(loaded)]
        w_hs = Signal(name="w_hs")
        fm_hs = Signal(name="fm_hs")
        m.d.comb += [w_hs.eq(sw.tvalid & sw.tready), fm_hs.eq(sfm.tvalid & sfm.tready)]
        frame_start = Signal(name="frame_start")
        frame_end = Signal(name="frame_end")    # the writer's last beat of a frame
        walk_end = Signal(name="walk_end")      # the walker's last issue of a frame
        m.d.comb += frame_start.eq(fm_hs & ~wbusy)
        m.d.sync += inflight.eq(inflight + frame_start - walk_end)
        with m.If(frame_start):
            m.d.sync += wbusy.eq(1)
        with m.If(frame_end):
            m.d.sync += [wbusy.eq(0), wgen.eq(~wgen)]
        with m.If(walk_end):
            m.d.sync += rgen.eq(~rgen)

        # ---- weight memory -----------------------------------------------------------------------
        pc_w = Signal(range(max(o.PC, 2)), name="w_pc")
        cg_w = Signal(cg_bits, name="w_cg")
        pk_w = Signal(range(max(o.PK, 2)), name="w_pk")
        kg_w = Signal(kg_bits, name="w_kg")
        with m.If(w_hs):
            with m.If(w_count == o.weight_beats - 1):
                m.d.sync += [w_count.eq(0), loaded.eq(1)]
            with m.Else():
                m.d.sync += [w_count.eq(w_count + 1), loaded.eq(0)]
            self._count(m, [(pc_w, o.PC), (cg_w, CG), (pk_w, o.PK), (kg_w, KG)])
        w_words = [sw.tdata[i * self.w_width:(i + 1) * self.w_width].as_signed() for i in range(self.n_w)]
        if self.hw_transform:
            dp = self.dp
            m.submodules.kernel_transform = gt = ConstantMatrixProduct(
                dp.kernel_graph, [o.kernel_width] * g.n_g, dp.kernel_node_ranges, dp.u_ranges, "g")
            for i, v in enumerate(w_words):
                m.d.comb += word(gt.x, i).eq(v)
            store = [word(gt.y, r) for r in range(dp.rank)]
        else:
            store = w_words
        sw_bits = self.store_width
        w_packed = Cat(*[_sext(v, sw_bits) for v in store])
        # walker position (defined below) drives the read address
        cg = Signal(cg_bits, name="cg")
        kg = Signal(kg_bits, name="kg")
        w_read = {}
        for pk in range(o.PK):
            for pc in range(o.PC):
                mem = Memory(shape=unsigned(self.n_store * sw_bits), depth=o.weight_depth, init=[])
                m.submodules[f"wmem_k{pk}_c{pc}"] = mem
                wp = mem.write_port()
                m.d.comb += [wp.addr.eq(Cat(cg_w, kg_w)), wp.data.eq(w_packed),
                             wp.en.eq(w_hs & (pk_w == pk) & (pc_w == pc))]
                rp = mem.read_port(transparent_for=())
                m.d.comb += [rp.addr.eq(Cat(cg, kg)), rp.en.eq(~stall)]
                w_read[pk, pc] = rp.data

        # ---- feature-map banks: write side ---------------------------------------------------------
        wpos = [Signal(range(f + 1), name=f"wpos{ax}") for ax, f in enumerate(o.feature_map)]
        wres = [Signal(range(max(s, 2)), name=f"wres{ax}") for ax, s in enumerate(o.step)]
        wquo = [Signal(b, name=f"wquo{ax}") for ax, b in enumerate(o.quotient_bits)]
        wcg = Signal(cg_bits, name="wcg")
        with m.If(fm_hs):
            with m.If(wcg == CG - 1):
                m.d.sync += wcg.eq(0)
                carry = Const(1)
                for ax in reversed(range(N)):
                    wrap = wpos[ax] == o.feature_map[ax] - 1
                    with m.If(carry):
                        with m.If(wrap):
                            m.d.sync += [wpos[ax].eq(0), wres[ax].eq(0), wquo[ax].eq(0)]
                        with m.Else():
                            m.d.sync += wpos[ax].eq(wpos[ax] + 1)
                            with m.If(wres[ax] == o.step[ax] - 1):
                                m.d.sync += [wres[ax].eq(0), wquo[ax].eq(wquo[ax] + 1)]
                            with m.Else():
                                m.d.sync += wres[ax].eq(wres[ax] + 1)
                    carry = carry & wrap
            with m.Else():
                m.d.sync += wcg.eq(wcg + 1)
        w_addr = Cat(wcg, *reversed(wquo), wgen)
        # (explicit expressions, not assignments inside the If chains: Icarus never evaluates a
        # combinational block at time 0 whose inputs do not change)
        m.d.comb += frame_end.eq(fm_hs & (wcg == CG - 1)
                                 & Cat(*[p == f - 1 for p, f in zip(wpos, o.feature_map)]).all())

        # ---- walker ----------------------------------------------------------------------------------
        T = o.tiles
        tidx = [Signal(range(max(t, 2)), name=f"tile{ax}") for ax, t in enumerate(T)]
        lastu = [Signal(signed(bits_for(o.feature_map[ax] + o.step[ax] + g.input[ax]) + 2), name=f"lastu{ax}",
                        init=g.input[ax] - 1 - o.padding[ax]) for ax in range(N)]
        last = []
        for ax in range(N):
            lv = Signal.like(lastu[ax], name=f"last{ax}")
            m.d.comb += lv.eq(Mux(lastu[ax] > o.feature_map[ax] - 1, o.feature_map[ax] - 1, lastu[ax]))
            last.append(lv)
        gt_ = Const(0)
        for ax in reversed(range(N)):
            gt_ = (wpos[ax] > last[ax]) | ((wpos[ax] == last[ax]) & gt_)
        ready = Signal(name="ready")
        m.d.comb += ready.eq((inflight != 0) & (~wbusy | (wgen != rgen) | gt_))
        issue = Signal(name="issue")
        m.d.comb += issue.eq(ready & ~stall)
        last_cg = Signal(name="last_cg")
        last_kg = Signal(name="last_kg")
        last_tile = Signal(name="last_tile")
        m.d.comb += [last_cg.eq(cg == CG - 1), last_kg.eq(kg == KG - 1),
                     last_tile.eq(Cat(*[t == n - 1 for t, n in zip(tidx, T)]).all())]
        m.d.comb += walk_end.eq(issue & last_cg & last_kg & last_tile)
        with m.If(issue):
            with m.If(last_cg):
                m.d.sync += cg.eq(0)
                with m.If(last_kg):
                    m.d.sync += kg.eq(0)
                    carry = Const(1)
                    for ax in reversed(range(N)):
                        wrap = tidx[ax] == T[ax] - 1
                        with m.If(carry):
                            with m.If(wrap):
                                m.d.sync += [tidx[ax].eq(0), lastu[ax].eq(g.input[ax] - 1 - o.padding[ax])]
                            with m.Else():
                                m.d.sync += [tidx[ax].eq(tidx[ax] + 1), lastu[ax].eq(lastu[ax] + o.step[ax])]
                        carry = carry & wrap
                with m.Else():
                    m.d.sync += kg.eq(kg + 1)
            with m.Else():
                m.d.sync += cg.eq(cg + 1)

        # window validity (zero padding) per axis and word position, from the tile index
        axis_valid = []
        for ax in range(N):
            per = []
            for j in range(g.input[ax]):
                lo = -(-(o.padding[ax] - j) // o.step[ax])        # ceil
                hi = (o.feature_map[ax] - 1 + o.padding[ax] - j) // o.step[ax]
                v = Signal(name=f"inside{ax}_{j}")
                cond = Const(1)
                if lo > 0:
                    cond = cond & (tidx[ax] >= lo)
                if hi < T[ax] - 1:
                    cond = cond & (tidx[ax] <= hi)
                m.d.comb += v.eq(cond)
                per.append(v)
            axis_valid.append(per)
        mask0 = Cat(*[Cat(*[axis_valid[ax][jj[ax]] for ax in range(N)]).all() for jj, _, _ in o.window])
        # outputs kept at the layer's edges (per tile position, row-major)
        keep_bits = []
        for oo in product(*(range(n) for n in g.output)):
            conds = []
            for ax in range(N):
                rem = o.output_size[ax] - (T[ax] - 1) * g.output[ax]
                if oo[ax] >= rem:
                    conds.append(tidx[ax] != T[ax] - 1)
            keep_bits.append(Cat(*conds).all() if conds else Const(1))
        keep0 = Cat(*keep_bits)

        # ---- feature-map banks: memories and read ports ---------------------------------------------
        raw = {}  # (window word j, lane pc) -> read data (stage 1)
        for b in o.banks:
            for pc in range(o.PC):
                mem = Memory(shape=unsigned(o.data_width), depth=o.bank_depth, init=[])
                name = "fm_bank_" + "_".join(map(str, b)) + f"_c{pc}"
                m.submodules[name] = mem
                wp = mem.write_port()
                sel = Cat(*[r == bb for r, bb in zip(wres, b)]).all()
                m.d.comb += [wp.addr.eq(w_addr), wp.en.eq(fm_hs & sel),
                             wp.data.eq(sfm.tdata[pc * o.data_width:(pc + 1) * o.data_width])]
                for j, (jj, res, quo) in enumerate(o.window):
                    if res != b:
                        continue
                    rp = mem.read_port(transparent_for=())
                    fields = [(tidx[ax] + quo[ax])[:o.quotient_bits[ax]] for ax in range(N)]
                    m.d.comb += [rp.addr.eq(Cat(cg, *reversed(fields), rgen)), rp.en.eq(~stall)]
                    raw[j, pc] = rp.data

        # ---- pipeline ---------------------------------------------------------------------------------
        def reg(value, name, reset_less=True):
            """``value`` one stage later (held while stalled); datapath registers have no reset."""
            value = Value.cast(value)
            r = Signal(value.shape(), name=name, reset_less=reset_less)
            with m.If(~stall):
                m.d.sync += r.eq(value)
            return r

        def flag(value, name):
            return reg(value, name, reset_less=False)

        meta0 = {"valid": issue, "first": cg == 0, "last": last_cg, "tlast": last_cg & last_kg & last_tile,
                 "keep": keep0}
        meta1 = {k: flag(v, f"{k}1") for k, v in meta0.items()}
        mask1 = reg(mask0, "mask1")
        window = {(j, pc): Mux(mask1[j], raw[j, pc].as_signed(), 0) for j in range(g.n_d) for pc in range(o.PC)}
        wstore = {(pk, pc): [w_read[pk, pc][i * sw_bits:(i + 1) * sw_bits].as_signed() for i in range(self.n_store)]
                  for pk in range(o.PK) for pc in range(o.PC)}
        meta2 = {k: flag(v, f"{k}2") for k, v in meta1.items()}
        if wino:
            dp = self.dp
            R = dp.rank
            v2 = {}
            for pc in range(o.PC):
                m.submodules[f"bt{pc}"] = bt = ConstantMatrixProduct(
                    dp.data_graph, [o.data_width] * g.n_d, dp.data_node_ranges, dp.v_ranges, f"bt{pc}")
                for j in range(g.n_d):
                    m.d.comb += word(bt.x, j).eq(window[j, pc])
                for r in range(R):
                    v2[pc, r] = reg(word(bt.y, r), f"v{pc}_{r}")
            u2 = {(pk, pc, r): reg(_trunc(wstore[pk, pc][r], dp.u_widths[r]), f"u{pk}_{pc}_{r}")
                  for pk in range(o.PK) for pc in range(o.PC) for r in range(R)}
            prods = {}
            for (pk, pc, r), u in u2.items():
                p = Signal(signed(dp.m_widths[r]), name=f"p{pk}_{pc}_{r}")
                m.d.comb += p.eq(v2[pc, r] * u)
                prods[pk, pc, r] = reg(p, f"p{pk}_{pc}_{r}_q")
            n_acc = R
            sums = {}
            for pk in range(o.PK):
                for r in range(R):
                    s = Signal(signed(a.lane_ranges[r].width), name=f"lane{pk}_{r}")
                    m.d.comb += s.eq(sum(prods[pk, pc, r] for pc in range(o.PC)))
                    sums[pk, r] = s
        else:
            d2 = {(j, pc): reg(window[j, pc], f"d{pc}_{j}") for j in range(g.n_d) for pc in range(o.PC)}
            g2 = {(pk, pc, k): reg(wstore[pk, pc][k], f"g{pk}_{pc}_{k}")
                  for pk in range(o.PK) for pc in range(o.PC) for k in range(g.n_g)}
            pw = a.product_ranges[0].width
            n_acc = g.n_y
            sums = {}
            for pk in range(o.PK):
                prods = []
                for i, (_, dj, gk) in enumerate(a.pairs):
                    for pc in range(o.PC):
                        p = Signal(signed(pw), name=f"p{pk}_{i}_{pc}")
                        m.d.comb += p.eq(d2[dj, pc] * g2[pk, pc, gk])
                        prods.append(reg(p, f"p{pk}_{i}_{pc}_q"))
                rows = emit_graph(m, a.tree, prods, [r.width for r in a.tree_node_ranges], f"tree{pk}")
                for oi, v in enumerate(rows):
                    s = Signal(signed(a.lane_ranges[oi].width), name=f"lane{pk}_{oi}")
                    m.d.comb += s.eq(v)
                    sums[pk, oi] = s
        meta3 = {k: flag(v, f"{k}3") for k, v in meta2.items()}
        if deep:
            sums = {key: reg(s, f"{s.name}_q") for key, s in sums.items()}
            meta3 = {k: flag(v, f"{k}3d") for k, v in meta3.items()}
        # accumulators: Winograd domain (R per output channel) or outputs (direct)
        acc = {}
        for pk in range(o.PK):
            for i in range(n_acc):
                r = Signal(signed(a.acc_ranges[i].width), name=f"acc{pk}_{i}", reset_less=True)
                with m.If(~stall & meta3["valid"]):
                    m.d.sync += r.eq(Mux(meta3["first"], 0, r) + sums[pk, i])
                acc[pk, i] = r
        done4 = flag(meta3["valid"] & meta3["last"], "done4")
        meta4 = {"valid": done4, "tlast": flag(meta3["tlast"], "tlast4"), "keep": flag(meta3["keep"], "keep4")}
        outs = {}
        if wino:
            hw = HardwareOptions(o.data_width, o.kernel_width)
            for pk in range(o.PK):
                m.submodules[f"at{pk}"] = at = ConstantMatrixProduct(
                    dp.output_graph, a.acc_widths, a.at_node_ranges, a.pre_ranges, f"at{pk}")
                for r in range(R):
                    m.d.comb += word(at.x, r).eq(acc[pk, r])
                m.submodules[f"div{pk}"] = div = ExactDivision(a.divisions, a.pre_ranges, a.y_width, hw)
                for oi in range(g.n_y):
                    m.d.comb += word(div.x, oi).eq(reg(word(at.y, oi), f"pre{pk}_{oi}"))
                for oi in range(g.n_y):
                    outs[pk, oi] = word(div.y, oi)
        else:
            for pk in range(o.PK):
                for oi in range(g.n_y):
                    outs[pk, oi] = reg(acc[pk, oi], f"pre{pk}_{oi}")
        meta5 = {k: flag(v, f"{k}5") for k, v in meta4.items()}
        if deep:
            outs = {key: reg(v, f"y{key[0]}_{key[1]}_q") for key, v in outs.items()}
            meta5 = {k: flag(v, f"{k}5d") for k, v in meta5.items()}
        # output register (the stream's tdata)
        yw = self.y_width
        packed = Cat(*[_sext(outs[pk, oi], yw) for pk in range(o.PK) for oi in range(g.n_y)])
        with m.If(~stall):
            m.d.sync += [my.tvalid.eq(meta5["valid"]), my.tdata.eq(packed), my.tlast.eq(meta5["tlast"] & meta5["valid"]),
                         my.tkeep.eq(meta5["keep"])]
        return m

    @staticmethod
    def _count(m: Module, counters) -> None:
        """Advance a chain of counters (fastest first), each wrapping at its modulus."""
        carry = Const(1)
        for sig, n in counters:
            with m.If(carry):
                if n == 1:
                    m.d.sync += sig.eq(0)
                else:
                    with m.If(sig == n - 1):
                        m.d.sync += sig.eq(0)
                    with m.Else():
                        m.d.sync += sig.eq(sig + 1)
            carry = carry & (sig == n - 1)


def _sext(v, width: int):
    """``v`` as exactly ``width`` bits (sign-extended or truncated), unsigned view."""
    v = v.as_signed() if hasattr(v, "as_signed") else v
    return v.as_unsigned()[:width] if len(v) >= width else Cat(v, *([v[-1]] * (width - len(v))))


def _trunc(v, width: int):
    return v[:width].as_signed()
