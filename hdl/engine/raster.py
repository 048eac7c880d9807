"""The engine's results in raster order, so that one engine's output is the next one's input.

The engine emits per output tile (raster order of tiles) and output-channel group one beat of
PK x |y| words. :class:`RasterOrder` stores a tile row (the tiles sharing a first-axis index: n0
output rows of the layer) and streams it out pixel by pixel, channels-last: each pixel as K / PK
beats of PK consecutive channels, the input stream format of an engine. Two tile rows are held
(one written while the other is read), in |y| banks, one per tile position, so a tile's beat is
written in one cycle; every bank is read at the same address and the pixel's bank is selected after.

The input's ``tready`` is a register: "the slab being written is not full", loaded from the next
values of the write slab and the full flags (a slab finished by this cycle's write or read), so it
equals ``~full[slab]`` every cycle (no beat of throughput lost) while the upstream engine's handshake,
which it drives, starts at a flip-flop rather than at the full flags' multiplexer.
"""

from __future__ import annotations

import math
from itertools import product

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..pipeline import advance_counter
from ..stream.axis import flag_chain, output_queue
from .engine import axis_stream
from .options import EngineOptions, bits_for

LATENCY = 3
"""Cycles from a read's address to its push into the output queue: the block RAM, its output register
(a block RAM's clock-to-out is long), the bank select."""


def in_raster_order(opts: EngineOptions) -> bool:
    """The engine's own output is in raster order already: its tiles are single positions (a direct
    engine), so tile order is pixel order and each tile's K / PK beats are its PK-channel groups in order.
    A network builds no :class:`RasterOrder` (and no memory) after such an engine."""
    return all(t == 1 for t in opts.geometry.output)


def raster_beats(opts: EngineOptions) -> int:
    """Beats of one frame in raster order: every output position, K / PK beats each."""
    return math.prod(opts.output_size) * opts.kernel_groups


def raster_banks(opts: EngineOptions, width: int) -> tuple[int, int, int]:
    """(count, depth, width) of :class:`RasterOrder`'s memories for results of ``width`` bits: one bank
    per tile position, two tile rows of PK-channel words each (known without building it)."""
    return opts.geometry.n_y, 2 << bits_for(slab_beats(opts)), opts.PK * width


def slab_beats(opts: EngineOptions) -> int:
    """Input beats of one tile row: its tiles, K / PK beats each."""
    return math.prod(opts.tiles[1:]) * opts.kernel_groups


class RasterOrder(wiring.Component):
    """Tile-ordered engine results (``s_axis``, the engine's ``m_axis_y``) in raster order (``m_axis``).

    Parameters
    ----------
    opts : EngineOptions
        The layer (output tile, output size, K, PK).
    width : int
        Bits of one result word (the engine's ``y_width``).

    Attributes
    ----------
    s_axis : In(axis_stream(PK * |y| * width, keep=|y|))
        The engine's results; ``tkeep`` and ``tlast`` are not needed (positions are counted).
    m_axis : Out(axis_stream(PK * width))
        Pixels in raster order (last axis fastest), each as K / PK beats of PK consecutive channels;
        ``tlast`` on a frame's last beat. One beat per cycle while a tile row is stored.
    """

    def __init__(self, opts: EngineOptions, width: int):
        self.opts, self.width = opts, width
        g = opts.geometry
        super().__init__({"s_axis": In(axis_stream(opts.PK * g.n_y * width, keep=g.n_y)),
                          "m_axis": Out(axis_stream(opts.PK * width))})

    @property
    def slab_beats(self) -> int:
        return slab_beats(self.opts)

    def elaborate(self, platform):
        m = Module()
        o = self.opts
        abits = bits_for(self.slab_beats)
        full = [Signal(name=f"slab_full{s}") for s in range(2)]
        banks = self._banks(m, abits)
        read_done = Signal(name="read_slab_done")   # this cycle's read is the last of its slab
        rd = _Reader.make(o)
        self._writer(m, banks, full, abits, rd.slab, read_done)
        q = output_queue(m, self.m_axis, LATENCY)
        go = Signal(name="read_go")
        m.d.comb += go.eq(q.ok & Mux(rd.slab, full[1], full[0]))
        addr = Cat((rd.tile_index(o) * o.kernel_groups + rd.kg)[:abits], rd.slab)
        sel = Signal(range(max(len(banks), 2)), name="read_bank")
        last = Signal(name="read_last")
        m.d.sync += [sel.eq(rd.bank(o)), last.eq(rd.frame_last(o))]
        # every bank read every cycle (no enable): the address holds between reads and only ``read_valid``
        # marks a real one, so ``go`` (the queue's credit and the full flags) drives the counters and the
        # flags, not the clock enable of every read register
        for bank in banks:
            m.d.comb += bank.rp.addr.eq(addr)
        # each bank's word into its own register (the block RAM's output register), then the select
        # (no reset: a plain register, which synthesis moves into the block RAM as its output register)
        words = [Signal(len(bank.rp.data), name=f"read_q{i}", reset_less=True) for i, bank in enumerate(banks)]
        m.d.sync += [w.eq(bank.rp.data) for w, bank in zip(words, banks)]
        valid, last = flag_chain(m, go, 2, "read_valid"), flag_chain(m, last, 1, "read_last_q")
        sel_q = Signal.like(sel, name="read_bank_q")
        m.d.sync += sel_q.eq(sel)
        sel = sel_q
        picked = Signal(len(words[0]), name="read_pick")
        with m.Switch(sel):
            for i, w in enumerate(words):
                with m.Case(i):
                    m.d.sync += picked.eq(w)
        pushed = Signal(name="read_push")
        last2 = Signal(name="read_last2")
        m.d.sync += [pushed.eq(valid), last2.eq(last)]
        m.d.comb += [q.reserve.eq(go), q.push.eq(pushed), q.data.eq(picked), q.last.eq(last2)]
        with m.If(go):
            rd.advance(m, o, full, read_done)
        return m

    def _banks(self, m: Module, abits: int) -> list:
        """One memory per tile position: two tile rows of PK-channel words."""
        count, depth, width = raster_banks(self.opts, self.width)
        out = []
        for i in range(count):
            mem = Memory(shape=unsigned(width), depth=depth, init=[])
            m.submodules[f"raster_bank{i}"] = mem
            mem.wp, mem.rp = mem.write_port(), mem.read_port(transparent_for=())
            out.append(mem)
        return out

    def _writer(self, m: Module, banks: list, full: list, abits: int, read_slab: Signal,
                read_done: Signal) -> Signal:
        """Each input beat into the banks at (beat of the tile row, slab); a slab full after its last.
        ``tready`` is the register ``write_ready``: ``~full[slab]`` from the next values of both
        (``read_done``: this cycle's read ends slab ``read_slab``)."""
        o, s = self.opts, self.s_axis
        n_y, w = o.geometry.n_y, self.width
        count = Signal(range(max(self.slab_beats, 2)), name="write_beat")
        slab = Signal(name="write_slab")
        n = self.slab_beats
        # the count at the tile row's last beat, a register beside the counter (off the handshake's path)
        at_last = Signal(name="write_at_last", init=int(n == 1))
        ready = Signal(name="write_ready", init=1)      # both slabs empty after reset
        m.d.comb += s.tready.eq(ready)
        hs = s.tvalid & s.tready
        # whether each slab is free next cycle: not full, or its read ends now. The next write slab is
        # the other one where this beat ends the current (a slab being written is not full): the
        # handshake only selects between two values of registers and the read side
        free_next = [~full[i] | (read_done & (read_slab == i)) for i in range(2)]
        stay, swap = Mux(slab, free_next[1], free_next[0]), Mux(slab, free_next[0], free_next[1])
        m.d.sync += ready.eq(Mux(hs & at_last, swap, stay))
        for i, bank in enumerate(banks):
            words = [s.tdata[(pk * n_y + i) * w:(pk * n_y + i + 1) * w] for pk in range(o.PK)]
            m.d.comb += [bank.wp.addr.eq(Cat(count[:abits], slab)), bank.wp.data.eq(Cat(*words)), bank.wp.en.eq(hs)]
        with m.If(hs):
            def slab_done():
                m.d.sync += [slab.eq(~slab), at_last.eq(n == 1)]
                with m.If(slab):
                    m.d.sync += full[1].eq(1)
                with m.Else():
                    m.d.sync += full[0].eq(1)
            advance_counter(m, count, n, last=at_last, at_last=slab_done,
                            otherwise=[at_last.eq(count == n - 2)] if n > 1 else [])
        return slab


class _Reader:
    """The read side's counters: slab, tile row, row within it, position along the other axes
    (residue and quotient modulo the tile) and output-channel group (fastest)."""

    def __init__(self, slab, t0, row, res, quo, kg):
        self.slab, self.t0, self.row, self.res, self.quo, self.kg = slab, t0, row, res, quo, kg

    @staticmethod
    def make(o: EngineOptions) -> "_Reader":
        n, T = o.geometry.output, o.tiles
        return _Reader(Signal(name="read_slab"), Signal(range(max(T[0], 2)), name="read_t0"),
                       Signal(range(max(n[0], 2)), name="read_row"),
                       [Signal(range(max(n[a], 2)), name=f"read_res{a}") for a in range(1, o.axes)],
                       [Signal(range(max(T[a], 2)), name=f"read_quo{a}") for a in range(1, o.axes)],
                       Signal(range(max(o.kernel_groups, 2)), name="read_kg"))

    def tile_index(self, o: EngineOptions):
        """The tile's index within its row (raster order of the other axes)."""
        idx = Const(0)
        for a, q in zip(range(1, o.axes), self.quo):
            idx = idx * o.tiles[a] + q
        return idx

    def bank(self, o: EngineOptions):
        """The tile position (row-major) of the current pixel: its bank."""
        n = o.geometry.output
        idx = self.row
        for a, r in zip(range(1, o.axes), self.res):
            idx = idx * n[a] + r
        return idx

    def _rows_last(self, o: EngineOptions):
        """The current row is the tile row's last inside the layer (the last tile row may be short)."""
        n0, T0, O0 = o.geometry.output[0], o.tiles[0], o.output_size[0]
        tail = O0 - (T0 - 1) * n0
        if tail == n0:
            return self.row == n0 - 1
        return Cat(self.row == n0 - 1, (self.t0 == T0 - 1) & (self.row == tail - 1)).any()

    def _position_last(self, o: EngineOptions, a: int):
        """The position along axis ``a`` (>= 1) is the layer's last."""
        n, O, T = o.geometry.output, o.output_size, o.tiles
        return (self.quo[a - 1] == T[a] - 1) & (self.res[a - 1] == O[a] - 1 - (T[a] - 1) * n[a])

    def frame_last(self, o: EngineOptions):
        conds = [self.kg == o.kernel_groups - 1, self._rows_last(o), self.t0 == o.tiles[0] - 1]
        conds += [self._position_last(o, a) for a in range(1, o.axes)]
        return Cat(*conds).all()

    def advance(self, m: Module, o: EngineOptions, full: list, done: Signal) -> None:
        """One beat read: kg, then the positions (last axis fastest), then the row, then the slab
        (``done`` high, combinationally, when this beat ends it)."""
        n, T = o.geometry.output, o.tiles

        def slab_done():
            m.d.comb += done.eq(1)
            m.d.sync += self.slab.eq(~self.slab)
            with m.If(self.slab):
                m.d.sync += full[1].eq(0)
            with m.Else():
                m.d.sync += full[0].eq(0)
            advance_counter(m, self.t0, T[0])

        def next_row():
            with m.If(self._rows_last(o)):
                m.d.sync += self.row.eq(0)
                slab_done()
            with m.Else():
                m.d.sync += self.row.eq(self.row + 1)

        step = next_row
        for a in range(1, o.axes):
            step = self._axis_step(m, o, a, step)
        advance_counter(m, self.kg, o.kernel_groups, at_last=step)

    def _axis_step(self, m: Module, o: EngineOptions, a: int, outer):
        """The position along axis ``a`` moves on; after the layer's last, ``outer`` (the axis before)."""
        n, T = o.geometry.output, o.tiles
        res, quo = self.res[a - 1], self.quo[a - 1]

        def step():
            with m.If(self._position_last(o, a)):
                m.d.sync += [res.eq(0), quo.eq(0)]
                outer()
            with m.Else():
                advance_counter(m, res, n[a], at_last=[quo.eq(quo + 1)])
        return step
