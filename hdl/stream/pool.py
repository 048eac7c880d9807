"""Pooling on a feature-map stream: MaxPool and AvgPool (2D, line buffers) and GlobalAvgPool."""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.buffers import NO_COLLISIONS
from ..engine.engine import axis_stream
from ..pipeline import less
from ..widths import Range, signed_width
from ..components import CheckedComponent
from .axis import (MUX_ENTRIES, flag_chain, lane, log2_exact, output_queue, product_register, saturate_register,
                   shift_round_value, signed_register, table_lookup, word_range)

FINISH = 4
"""Cycles from a window's last column read to its result's push: block-RAM read, column reduction,
row accumulation, the finishing register (AvgPool: rounding shift and saturation)."""


@dataclass(frozen=True)
class PoolShape:
    """A 2D pooling layer on a ``height x width x channels`` map streamed ``lanes`` channels a beat;
    torch's semantics (floor mode; ``padding <= kernel // 2``). Validated on construction."""

    height: int
    width: int
    channels: int
    lanes: int
    kernel: int
    stride: int
    padding: int = 0

    def __post_init__(self):
        sizes = (self.height, self.width, self.channels, self.lanes, self.kernel, self.stride)
        if min(sizes) < 1 or self.padding < 0:
            raise WinohdlError(f"pool: sizes {sizes} must be at least 1 and padding {self.padding} at least 0")
        if self.channels % self.lanes:
            raise WinohdlError(f"pool: {self.lanes} lanes do not divide {self.channels} channels")
        if self.padding > self.kernel // 2:
            raise WinohdlError(f"pool: padding {self.padding} is more than half the kernel {self.kernel}")
        if min(self.height, self.width) + 2 * self.padding < self.kernel:
            raise WinohdlError(f"pool: kernel {self.kernel} larger than the padded {self.height}x{self.width} map")

    @property
    def groups(self) -> int:
        """Beats per pixel."""
        return self.channels // self.lanes

    @property
    def out_height(self) -> int:
        return (self.height + 2 * self.padding - self.kernel) // self.stride + 1

    @property
    def out_width(self) -> int:
        return (self.width + 2 * self.padding - self.kernel) // self.stride + 1

    @property
    def rows(self) -> int:
        """Input rows the line buffer holds: a window's and the next output row's new ones."""
        return self.kernel + self.stride

    def row_masks(self) -> list[int]:
        """Per output row, the line-buffer banks (bit ``r mod rows``) holding a row of its window
        inside the map (rows of padding read no bank)."""
        k, s, p, R = self.kernel, self.stride, self.padding, self.rows
        return [sum(1 << (r % R) for r in range(oy * s - p, oy * s - p + k) if 0 <= r < self.height)
                for oy in range(self.out_height)]


def pool_in_block_ram(row_words: int) -> bool:
    """Whether the line buffer's banks (``row_words`` words each: a row) are block RAM (``ram_style``):
    when a row is deeper than one LUT RAM (16 words); shallower, a LUT RAM reads in one level."""
    return row_words > MUX_ENTRIES


class _Pool2d(CheckedComponent):
    """A 2D pooling window over a line buffer (see :class:`MaxPool`); subclasses give the arithmetic.

    The input rows go into ``kernel + stride`` line-buffer banks (block RAM, ``width x C / L`` words
    of L lanes each; row y in bank ``y mod rows``). A walker visits the outputs in raster order (each
    output pixel as C / L beats) and reads one window column per cycle from every bank at once: the
    banks holding rows of the window (a constant mask per output row) enter a reduction tree, the
    others and columns of padding give the neutral value; k columns accumulate into one output beat.
    An output row starts once the input rows of its window have arrived; a new input row may be
    written once its bank holds no row the walker still needs. A frame's last output beat must be
    issued before the next frame's first input beat is taken (one row's worth of work at the end of
    each frame is not overlapped).

    Throughput: one input beat per cycle while ``kernel <= stride**2`` (outputs take ``kernel``
    cycles a beat, and there are ``stride**2`` times fewer of them); otherwise ``kernel / stride**2``
    cycles per input beat.
    """

    finish_levels = 0    # registered levels the arithmetic adds to the finish (AvgPool's product)

    def __init__(self, shape: PoolShape, in_width: int, out_bits: int):
        self.shape, self.in_width, self.out_bits = shape, in_width, out_bits
        super().__init__({"s_axis": In(axis_stream(shape.lanes * in_width)),
                          "m_axis": Out(axis_stream(shape.lanes * out_bits))})

    @property
    def column_levels(self) -> int:
        """Registered levels of a window column: the bank words (the block RAMs' output registers), the
        masked words, then the reduction over them."""
        return 2 + (self.shape.rows - 1).bit_length()

    # the arithmetic: neutral value, column reduction, accumulation and the output word
    def _neutral(self) -> int:
        raise NotImplementedError

    def _combine(self, a, b):
        raise NotImplementedError

    def _column_range(self, r: Range) -> Range:
        raise NotImplementedError

    def _window_range(self, r: Range) -> Range:
        raise NotImplementedError

    def _finish(self, m, acc, r: Range, name: str):
        raise NotImplementedError

    def elaborate(self, platform):
        m = Module()
        sh = self.shape
        G, R, k, s, p = sh.groups, sh.rows, sh.kernel, sh.stride, sh.padding
        finish = FINISH + self.column_levels + self.finish_levels
        q = output_queue(m, self.m_axis, k - 1 + finish)
        st = self.s_axis
        # the writer: row ``wy`` (the rows done before it), bank ``wbank``, word ``waddr`` = x * G + g
        wy = Signal(range(sh.height + 1), name="wy")
        wbank = Signal(range(R), name="wbank")
        waddr = Signal(range(sh.width * G), name="waddr")
        wdone, rdone = Signal(name="wdone"), Signal(name="rdone")
        # the walker's first window row plus k (the rows it needs), plus R and R - 1 (the writer's
        # limit), each a register of its own so that every readiness check is one comparator; they
        # start the next frame's as soon as the walker is done: rows it never needs, the bottom ones
        # that no window reaches, may then fill any bank
        top = (sh.out_height - 1) * s - p + R
        need, lim, lim1 = (Signal(signed(signed_width(-p, top)), name=n, init=-p + d)
                           for n, d in (("need", k), ("limit", R), ("limit1", R - 1)))
        room, rows_in = Signal(name="room", init=1), Signal(name="rows_in")
        m.d.comb += st.tready.eq(~wdone & (rdone | room))
        hs = st.tvalid & st.tready
        row_end = hs & (waddr == sh.width * G - 1)
        with m.If(hs):
            with m.If(row_end):
                m.d.sync += [waddr.eq(0), wy.eq(wy + 1), wbank.eq(Mux(wbank == R - 1, 0, wbank + 1))]
                with m.If(wy == sh.height - 1):
                    m.d.sync += wdone.eq(1)
            with m.Else():
                m.d.sync += waddr.eq(waddr + 1)
        banks = []
        for b in range(R):
            # block RAM past one LUT RAM's 16 words (a deeper LUT RAM's read multiplexers set the Fmax);
            # no read-write bypass (the walker never reads the row being written), so no LUT sits
            # between the block RAM and the register synthesis moves into it
            block = pool_in_block_ram(sh.width * G)
            mem = Memory(shape=len(st.tdata), depth=sh.width * G, init=[],
                         attrs={**NO_COLLISIONS, "ram_style": "block"} if block else NO_COLLISIONS)
            m.submodules[f"row{b}"] = mem
            wp, rp = mem.write_port(), mem.read_port()
            m.d.comb += [wp.addr.eq(waddr), wp.data.eq(st.tdata), wp.en.eq(hs & (wbank == b))]
            banks.append(rp)
        issue, flags, oy, xcol, raddr = self._walker(m, q, rows_in, rdone, (need, lim, lim1))
        for rp in banks:
            m.d.comb += rp.addr.eq(raddr[:len(rp.addr)])
        # frame switch: both sides done with the frame
        switch = wdone & rdone
        with m.If(switch):
            m.d.sync += [wdone.eq(0), rdone.eq(0), wy.eq(0), wbank.eq(0)]
        # registered, so that no comparator sits between the row counters and the handshakes; each may
        # lag a cycle behind the counter that frees it (never behind the one that blocks it)
        m.d.sync += [room.eq(switch | Mux(row_end, less(wy, lim1), less(wy, lim))),
                     rows_in.eq(~switch & ~flags["row"] & (wdone | ~less(wy, need)))]
        mask = table_lookup(m, sh.row_masks(), R, oy, "rowmask")
        if not isinstance(mask, Const):   # a cycle later, beside the registered bank words
            mask_q = Signal(len(mask), name="rowmask_q", reset_less=True)
            m.d.sync += mask_q.eq(mask)
            mask = mask_q
        inside = flag_chain(m, (xcol >= 0) & (xcol < sh.width), 2, "inside")
        words = []
        for b, rp in enumerate(banks):
            word = Signal(len(rp.data), name=f"bank{b}_q", reset_less=True)
            m.d.sync += word.eq(rp.data)
            words.append(word)
        first = flag_chain(m, flags["first"], 2 + self.column_levels, "first")
        valid = flag_chain(m, issue & flags["lastcol"], finish, "valid")
        m.d.comb += [q.push.eq(valid), q.last.eq(flag_chain(m, issue & flags["last"], finish, "last")),
                     q.data.eq(Cat(*[self._lane(m, i, words, mask, inside, first) for i in range(sh.lanes)]))]
        return m

    def _walker(self, m, q, rows_in, rdone, bases):
        """The output walker: per output beat, ``kernel`` column reads; returns (issue, flags, oy, xcol,
        raddr) with the flags of the read issued (first column, last column, output row's last beat,
        frame's last beat). It moves ``bases`` (registers a constant apart from the first input row of the
        output row's window) a stride per output row, back to their start after the frame."""
        sh = self.shape
        G, k, s, p, OW = sh.groups, sh.kernel, sh.stride, sh.padding, sh.out_width
        oy, ox = Signal(range(sh.out_height), name="oy"), Signal(range(OW), name="ox")
        g, j = Signal(range(G), name="g"), Signal(range(k), name="j")
        x_hi = (OW - 1) * s - p + k - 1
        xcol = Signal(signed(signed_width(-p, x_hi)), name="xcol", init=-p)
        raddr = Signal(signed(signed_width(-p * G, x_hi * G + G - 1)), name="raddr", init=-p * G)
        issue = Signal(name="issue")
        m.d.comb += [issue.eq(~rdone & rows_in & ((j != 0) | q.ok)), q.reserve.eq(issue & (j == 0))]
        lastcol, g_last, ox_last, oy_last = j == k - 1, g == G - 1, ox == OW - 1, oy == sh.out_height - 1
        with m.If(issue):
            with m.If(~lastcol):
                m.d.sync += [j.eq(j + 1), xcol.eq(xcol + 1), raddr.eq(raddr + G)]
            with m.Elif(~g_last):
                m.d.sync += [j.eq(0), g.eq(g + 1), xcol.eq(xcol - (k - 1)), raddr.eq(raddr + 1 - (k - 1) * G)]
            with m.Elif(~ox_last):
                m.d.sync += [j.eq(0), g.eq(0), ox.eq(ox + 1), xcol.eq(xcol + s - (k - 1)),
                             raddr.eq(raddr + (s - (k - 1)) * G - (G - 1))]
            with m.Else():
                m.d.sync += [j.eq(0), g.eq(0), ox.eq(0), xcol.eq(-p), raddr.eq(-p * G)]
                with m.If(~oy_last):
                    m.d.sync += [oy.eq(oy + 1), *(b.eq(b + s) for b in bases)]
                with m.Else():
                    m.d.sync += [oy.eq(0), rdone.eq(1), *(b.eq(b.init) for b in bases)]
        row = issue & lastcol & g_last & ox_last
        flags = {"first": issue & (j == 0), "lastcol": lastcol, "row": row, "last": row & oy_last}
        return issue, flags, oy, xcol, raddr

    def _lane(self, m, i, bank_words, mask, inside, first):
        """Lane ``i``: the column over the banks, the window's accumulation, the output word."""
        w, neutral = self.in_width, self._neutral()
        # the masked words registered: the padding mask and the first compare (or add) are a cycle each
        words = [signed_register(m, Mux(mask[b] & inside, lane(data, i, w), neutral), word_range(w),
                                 f"word{i}_{b}") for b, data in enumerate(bank_words)]
        col_r = self._column_range(word_range(w))
        level = 0
        while len(words) > 1:      # a register after every level: one compare (or add) a cycle
            words = [signed_register(m, self._combine(words[n], words[n + 1]) if n + 1 < len(words) else words[n],
                                     col_r, f"col{i}_{level}_{n // 2}") for n in range(0, len(words), 2)]
            level += 1
        col = signed_register(m, words[0], col_r, f"col{i}")
        acc_r = self._window_range(word_range(w))
        acc = Signal(signed(signed_width(acc_r.lo, acc_r.hi)), name=f"acc{i}", reset_less=True)
        m.d.sync += acc.eq(Mux(first, col, self._combine(acc, col)))
        return self._finish(m, acc, acc_r, f"out{i}")


class MaxPool(_Pool2d):
    """2D max pooling on a feature-map stream (torch's ``max_pool2d``, floor mode; padding never wins).

    Parameters
    ----------
    shape : PoolShape
    width : int
        Bits of a value in and out (two's complement).

    Attributes
    ----------
    s_axis : In(axis_stream(L * width))
        The feature map, channels-last raster order, C / L beats a pixel; ``tlast`` is not read
        (the unit counts the beats).
    m_axis : Out(axis_stream(L * width))
        The pooled map, same order; ``tlast`` on each frame's last beat.
    """

    def __init__(self, shape: PoolShape, width: int = 8):
        super().__init__(shape, width, width)

    def _neutral(self):
        return -(1 << (self.in_width - 1))

    def _combine(self, a, b):
        return Mux(less(a, b), b, a)

    def _column_range(self, r):
        return r

    def _window_range(self, r):
        return r

    def _finish(self, m, acc, r, name):
        out = Signal(signed(self.out_bits), name=name, reset_less=True)
        m.d.sync += out.eq(acc)
        return out


class AvgPool(_Pool2d):
    """2D average pooling, padding counted (torch's ``avg_pool2d`` with ``count_include_pad``): the
    window's exact sum, shifted right by ``log2(kernel**2) + extra_shift`` rounding half to even,
    saturated to ``out_bits``. ``kernel**2`` must be a power of two.

    Parameters
    ----------
    shape : PoolShape
    extra_shift : int
        A further requantisation shift (right if positive, exact left if the total is negative).
    in_width, out_bits : int
        Bits of a value in and out (two's complement).
    multiplier : int
        Trained scales: the window's sum times this constant (standing for ``s_in / (kernel**2 * s_out)``),
        then shifted by ``extra_shift`` alone (any kernel; the product registered: one cycle more).

    Attributes
    ----------
    s_axis : In(axis_stream(L * in_width))
        As :class:`MaxPool`'s.
    m_axis : Out(axis_stream(L * out_bits))
        As :class:`MaxPool`'s.
    """

    @classmethod
    def check(cls, shape: PoolShape, extra_shift: int = 0, in_width: int = 8, out_bits: int = 8,
              multiplier: int = 1) -> None:
        if multiplier < 1:
            raise WinohdlError(f"AvgPool: multiplier {multiplier} (at least 1)")
        if multiplier == 1 and log2_exact(shape.kernel ** 2) is None:
            raise WinohdlError(f"AvgPool: kernel {shape.kernel}: the window count {shape.kernel ** 2} is "
                               "not a power of two")

    def __init__(self, shape: PoolShape, extra_shift: int = 0, in_width: int = 8, out_bits: int = 8,
                 multiplier: int = 1):
        self.multiplier = int(multiplier)
        self.finish_levels = int(self.multiplier != 1)
        self.log2_count = 0 if self.multiplier != 1 else log2_exact(shape.kernel ** 2)
        self.extra_shift = extra_shift
        super().__init__(shape, in_width, out_bits)

    def _neutral(self):
        return 0

    def _combine(self, a, b):
        return a + b

    def _column_range(self, r):
        return Range(r.lo * self.shape.kernel, r.hi * self.shape.kernel)

    def _window_range(self, r):
        return Range(r.lo * self.shape.kernel ** 2, r.hi * self.shape.kernel ** 2)

    def _finish(self, m, acc, r, name):
        if self.multiplier != 1:
            acc, r = product_register(m, acc, r, self.multiplier, f"{name}_prod")
        shifted, sr = shift_round_value(m, acc, r, self.log2_count + self.extra_shift, name)
        return saturate_register(m, shifted, sr, self.out_bits, False, name)


GAP_LATENCY = 3
"""GlobalAvgPool: cycles from a last-pixel beat to its result's push (sum, rounding, saturation)."""


class GlobalAvgPool(CheckedComponent):
    """Per-channel average over a whole frame: ``shift_round(sum, log2(H*W) + extra_shift)`` saturated
    (with ``divide`` false: ``shift_round(sum, extra_shift)``, the sum, its 1/(H*W) taken elsewhere).

    The C per-channel sums rotate through C / L registers of L lanes (one shift per beat: no
    read-modify-write hazard, no multiplexer); a frame's first pixel starts them afresh. The beats
    of the frame's last pixel produce the C / L output beats. Throughput one beat per cycle.

    Parameters
    ----------
    height, width, channels, lanes : int
        The input map and the beats (``lanes`` divides ``channels``); ``height * width`` a power of two
        where the unit divides.
    extra_shift : int
        A further requantisation shift.
    divide : bool
        Divide by ``height * width`` (a shift), or not.
    in_width, out_bits : int
        Bits of a value in and out.
    multiplier : int
        The sum times this constant before the rounding shift (trained scales: ``M`` standing for
        ``s_in / (H * W * s_out)``, with ``divide`` false); the product registered: one cycle more.

    Attributes
    ----------
    s_axis : In(axis_stream(lanes * in_width))
        The feature map, channels-last raster order; ``tlast`` not read (the unit counts).
    m_axis : Out(axis_stream(lanes * out_bits))
        C / L beats per frame, channels in order; ``tlast`` on the last.
    """

    @classmethod
    def check(cls, height: int, width: int, channels: int, lanes: int, extra_shift: int = 0,
              in_width: int = 8, out_bits: int = 8, divide: bool = True, multiplier: int = 1) -> None:
        if multiplier < 1:
            raise WinohdlError(f"GlobalAvgPool: multiplier {multiplier} (at least 1)")
        if min(height, width, channels, lanes) < 1 or channels % lanes:
            raise WinohdlError(f"GlobalAvgPool: {height}x{width}x{channels} with {lanes} lanes (positive; "
                               "lanes divide channels)")
        if divide and log2_exact(height * width) is None:
            raise WinohdlError(f"GlobalAvgPool: H*W = {height * width} is not a power of two")

    def __init__(self, height: int, width: int, channels: int, lanes: int, extra_shift: int = 0,
                 in_width: int = 8, out_bits: int = 8, divide: bool = True, multiplier: int = 1):
        self.multiplier = int(multiplier)
        self.latency = GAP_LATENCY + (self.multiplier != 1)
        self.log2_count = log2_exact(height * width) if divide else 0
        self.pixels, self.channels, self.lanes = height * width, channels, lanes
        self.extra_shift, self.in_width, self.out_bits = extra_shift, in_width, out_bits
        super().__init__({"s_axis": In(axis_stream(lanes * in_width)), "m_axis": Out(axis_stream(lanes * out_bits))})

    def elaborate(self, platform):
        m = Module()
        L, G, w = self.lanes, self.channels // self.lanes, self.in_width
        q = output_queue(m, self.m_axis, self.latency)
        st = self.s_axis
        pix, g = Signal(range(self.pixels), name="pix"), Signal(range(G), name="g")
        # the pixel's first and last as registers beside the counter: a comparison of it would sit on the
        # handshake's path (tready, the counter's enable), the network's critical path (docs/benchmarks.md)
        first_pix = Signal(name="first_pix", init=1)
        last_pix = Signal(name="last_pix", init=int(self.pixels == 1))
        m.d.comb += st.tready.eq(~last_pix | q.ok)
        hs = st.tvalid & st.tready
        m.d.comb += q.reserve.eq(hs & last_pix)
        with m.If(hs):
            with m.If(g == G - 1):
                m.d.sync += [g.eq(0), pix.eq(Mux(last_pix, 0, pix + 1)), first_pix.eq(last_pix),
                             last_pix.eq(Mux(last_pix, self.pixels == 1, pix == self.pixels - 2))]
            with m.Else():
                m.d.sync += g.eq(g + 1)
        in_r = word_range(w)
        sum_r = Range(in_r.lo * self.pixels, in_r.hi * self.pixels)
        outs = []
        for i in range(L):
            sums = [Signal(signed(signed_width(sum_r.lo, sum_r.hi)), name=f"sum{i}_{n}", reset_less=True)
                    for n in range(G)]
            with m.If(hs):
                m.d.sync += [sums[n].eq(sums[n + 1]) for n in range(G - 1)]
                m.d.sync += sums[-1].eq(Mux(first_pix, 0, sums[0]) + lane(st.tdata, i, w))
            total, total_r = sums[-1], sum_r
            if self.multiplier != 1:
                total, total_r = product_register(m, total, sum_r, self.multiplier, f"prod{i}")
            shifted, sr = shift_round_value(m, total, total_r, self.log2_count + self.extra_shift, f"avg{i}")
            outs.append(saturate_register(m, signed_register(m, shifted, sr, f"avg{i}"), sr, self.out_bits, False,
                                          f"out{i}"))
        m.d.comb += [q.push.eq(flag_chain(m, hs & last_pix, self.latency, "valid")),
                     q.last.eq(flag_chain(m, hs & last_pix & (g == G - 1), self.latency, "last")),
                     q.data.eq(Cat(*outs))]
        return m
