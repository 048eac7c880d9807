"""The engine's tile walker: which (tile, output-channel group, input-channel group) issues when.

Tiles go in raster order, then output-channel groups, then input-channel groups (innermost). A
tile may issue once the writer has stored its input: readiness is pipelined so that no comparator
sits between the writer's counters and the issue (see :func:`walk`); the performance model's
``Timing.issue_delay`` is :data:`hdl.engine.latency.ISSUE_DELAY`. Also here: whether a tile's input position is padding
(outside the feature map) and the kept outputs of edge tiles, both from the tile index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed

from ..pipeline import advance_counter, all_of, wrapped_increment
from .options import EngineOptions, bits_for

@dataclass(frozen=True)
class WriterState:
    """What the walker reads of the feature-map writer (signals of the engine's module).

    Attributes
    ----------
    wpos : list of Signal
        The position of the next beat, per axis (row-major).
    wbusy : Signal
        The writer is inside a frame.
    wgen : Signal
        The frame buffer it fills.
    frame_end : Signal
        The last beat of a frame is taken this cycle.
    """

    wpos: list
    wbusy: Value
    wgen: Value
    frame_end: Value


@dataclass(frozen=True)
class Walk:
    """The walker's state and issue (signals of the engine's module).

    Attributes
    ----------
    cg, kg : Signal
        Input- and output-channel group of the current issue.
    block : Value
        The weight memories' address of the current issue's block: ``Cat(cg, kg)``, or with a
        kernel mask the block's place among the visited ones (:mod:`hdl.engine.sparsity`).
    tidx : list of Signal
        The current tile, per axis.
    issue : Signal
        A group issues this cycle.
    last_cg, last_kg, last_tile : Signal
        The current issue is the last input-channel group, output-channel group, tile.
    last_group : Signal
        ``last_cg & last_kg``, a register of its own.
    drain : Value
        Lagging walk: the pass after a frame's last tile, which multiplies that tile and reads
        nothing (``tidx`` already points at the next frame's first tile, not yet stored when the
        pass began); else constant 0.
    first : Value
        Lagging walk: the current pass reads a frame's first tile and multiplies nothing.
    mtidx : list of Signal
        Lagging walk: the tile the multipliers work on (the previous pass's); else ``tidx``.
    read_cg : Signal
        Lagging walk: the input-channel group the current block of ``K / PK`` issues reads.
    read_slot : Value
        Lagging walk: the first issue of a block of a reading pass (a new input tile is read).
    advance : Signal
        The current issue ends a reading pass: the walker moves to the next tile.
    mlast_tile : Value
        The multipliers work on a frame's last tile (lagging walk: the pass after its last read
        pass, a drain or the next frame's first reads; else ``last_tile``).
    """

    cg: Signal
    kg: Signal
    block: Value
    tidx: list
    issue: Signal
    last_cg: Signal
    last_kg: Signal
    last_tile: Signal
    last_group: Signal
    drain: Value
    first: Value
    mtidx: list
    read_cg: Value
    read_slot: Value
    advance: Signal
    mlast_tile: Value


def walk(m: Module, o: EngineOptions, writer: WriterState, rgen: Value, walk_end: Signal,
         credit: Value, lag: bool = False) -> Walk:
    """Build the walker into ``m``: it issues while ``credit`` is high and the current tile is stored,
    drives ``walk_end`` (the last issue of a frame) and reads ``rgen`` (the buffer it walks).

    ``lag`` (the serial input transform): the multipliers work one tile behind the reads. Each pass
    of ``C / PC x K / PK`` issues reads its tile once per input-channel group (``read_slot``, every
    ``K / PK`` issues) while the multipliers take the previous pass's tile. The pass after a frame's
    last tile multiplies that tile; it reads the next frame's first tile if that is stored when
    the pass begins (frames back to back then cost no pass more than their tiles), and otherwise
    reads nothing (``drain``, no stored input needed), and the next frame's first pass multiplies
    nothing."""
    groups = _Blocks.make(o) if o.skips else _Groups.make(o)
    ptr = _Pointers.make(o)
    full = [Signal(name=f"full{b}") for b in range(2)]   # buffer b holds a whole frame not yet walked
    now = _checks(m, o, writer, rgen, ptr, full)
    ready = Signal(name="ready")              # registered: the current tile's input is stored
    issue = Signal(name="issue")
    drain = Signal(name="drain") if lag else Const(0)
    m.d.comb += issue.eq((ready | drain) & credit)
    last_tile = Signal(name="last_tile")
    adv = Signal(name="tile_advance")
    m.d.comb += [last_tile.eq(Cat(*[t == n - 1 for t, n in zip(ptr.tidx, o.tiles)]).all()),
                 adv.eq(issue & groups.last_group & ~drain)]
    m.d.comb += walk_end.eq(adv & last_tile)
    ready_next = _register_readiness(m, now, adv, ready)
    # a buffer's flag set as the writer ends its frame, cleared at its walk's last issue: written as one
    # sum, the walk's end armed from registers alone per buffer, so the issue (from ``ready``, which fans
    # out widely) meets the flag's input in one LUT rather than through the If chain's comparisons
    for b in range(2):
        armed = Signal(name=f"end_armed{b}")
        m.d.comb += armed.eq(groups.last_group & last_tile & ~drain & (rgen == b))
        m.d.sync += full[b].eq((writer.frame_end & (writer.wgen == b)) | (full[b] & ~(issue & armed)))
    with m.If(issue):
        groups.count(m, o)
    with m.If(adv):
        ptr.advance(m, o)
    w = Walk(cg=groups.cg, kg=groups.kg, block=groups.block, tidx=ptr.tidx, issue=issue, last_cg=groups.last_cg,
             last_kg=groups.last_kg, last_tile=last_tile, last_group=groups.last_group, drain=drain,
             first=Const(0), mtidx=ptr.tidx, read_cg=groups.cg, read_slot=Const(0), advance=adv,
             mlast_tile=last_tile)
    return _lagging(m, o, w, walk_end, ready_next) if lag else w


@dataclass(frozen=True)
class _Groups:
    """The channel-group counters of the current issue, with ``cg == CG - 1`` and ``kg == KG - 1``
    as registers kept beside them (set one issue ahead)."""

    cg: Signal
    kg: Signal
    # the tile advance and a frame's last issue are then a LUT fewer from the registers (the path
    # from ``cg`` to ``inflight`` is long)
    last_cg: Signal
    last_kg: Signal
    # both, a register too: the tile advance, which fans out widely, is then one LUT of registers
    last_group: Signal

    @staticmethod
    def make(o: EngineOptions) -> "_Groups":
        CG, KG = o.channel_groups, o.kernel_groups
        return _Groups(Signal(bits_for(CG), name="cg"), Signal(bits_for(KG), name="kg"),
                       Signal(name="last_cg", init=int(CG == 1)), Signal(name="last_kg", init=int(KG == 1)),
                       Signal(name="last_group", init=int(CG == 1 and KG == 1)))

    def count(self, m: Module, o: EngineOptions) -> None:
        """One issue: the next input-channel group, and after the last the next output-channel group."""
        CG, KG = o.channel_groups, o.kernel_groups
        cg, kg, last_cg, last_kg, last_group = self.cg, self.kg, self.last_cg, self.last_kg, self.last_group

        def next_kg():
            m.d.sync += last_cg.eq(CG == 1)
            advance_counter(m, kg, KG, last=last_kg, at_last=[last_kg.eq(KG == 1), last_group.eq(CG == 1 and KG == 1)],
                            otherwise=[last_kg.eq(kg == KG - 2), last_group.eq((CG == 1) & (kg == KG - 2))])
        advance_counter(m, cg, CG, last=last_cg, at_last=next_kg,
                        otherwise=[last_cg.eq(cg == CG - 2), last_group.eq((cg == CG - 2) & last_kg)])

    @property
    def block(self) -> Value:
        return Cat(self.cg, self.kg)


@dataclass(frozen=True)
class _Blocks:
    """With a kernel mask: the visited (kg, cg) blocks in walk order (:mod:`hdl.engine.sparsity`).
    ``block`` counts them; ``cg``, ``kg`` and the flags are registers loaded from constant tables of
    the next block, indexed by the current one (no table after the counter's incrementer)."""

    block: Signal
    cg: Signal
    kg: Signal
    last_cg: Signal      # the last visited block of its output-channel group
    last_kg: Signal
    last_group: Signal   # the last visited block of the tile

    @staticmethod
    def _flags(o: EngineOptions, i: int) -> tuple[int, int, int, int, int]:
        """(kg, cg, last of its group, last group, last block) of visited block ``i``."""
        blocks = o.blocks.blocks
        kg, cg = blocks[i]
        last_cg = i == len(blocks) - 1 or blocks[i + 1][0] != kg
        return kg, cg, int(last_cg), int(kg == o.kernel_groups - 1), int(i == len(blocks) - 1)

    @staticmethod
    def make(o: EngineOptions) -> "_Blocks":
        n = len(o.blocks.blocks)
        kg, cg, lc, lk, lg = _Blocks._flags(o, 0)
        return _Blocks(Signal(range(max(n, 2)), name="block"), Signal(bits_for(o.channel_groups), name="cg", init=cg),
                       Signal(bits_for(o.kernel_groups), name="kg", init=kg), Signal(name="last_cg", init=lc),
                       Signal(name="last_kg", init=lk), Signal(name="last_group", init=lg))

    def count(self, m: Module, o: EngineOptions) -> None:
        """One issue: the next visited block (after the last, the first)."""
        n = len(o.blocks.blocks)
        with m.Switch(self.block):
            for i in range(n):
                with m.Case(i):
                    nxt = (i + 1) % n
                    kg, cg, lc, lk, lg = self._flags(o, nxt)
                    m.d.sync += [self.block.eq(nxt), self.kg.eq(kg), self.cg.eq(cg), self.last_cg.eq(lc),
                                 self.last_kg.eq(lk), self.last_group.eq(lg)]


@dataclass(frozen=True)
class _Pointers:
    """The walker's three tile pointers in raster order: the current tile C (``tidx``), the next A
    and the one after B, each with its clamped last input position (``last*``; B's unclamped too,
    ``lastub``, which steps) and how many frames A and B are ahead of C (A: 0 or 1; B: 0, 1 or 2,
    two only with at most two tiles per frame)."""

    tidx: list
    lastc: list
    tidxa: list
    lasta: list
    tidxb: list
    lastub: list
    lastb: list
    ahead_a: Signal
    ahead_b: Signal

    @staticmethod
    def make(o: EngineOptions) -> "_Pointers":
        T, N = o.tiles, o.axes
        order = _raster(o)
        ta, tb = order[1 % len(order)], order[2 % len(order)]
        _, l0 = o.last_input(order[0])
        _, la = o.last_input(ta)
        ub, lb = o.last_input(tb)
        lshape = _position_shape(o)

        def tiles(name, init=None):
            return [Signal(range(max(t, 2)), name=f"{name}{ax}", init=0 if init is None else init[ax])
                    for ax, t in enumerate(T)]

        def positions(name, init):
            return [Signal(lshape, name=f"{name}{ax}", init=init[ax]) for ax in range(N)]
        return _Pointers(tiles("tile"), positions("lastc", l0), tiles("tilea", ta), positions("lasta", la),
                         tiles("tileb", tb), positions("lastub", ub), positions("lastb", lb),
                         Signal(range(2), name="ahead_a", init=int(len(order) == 1)),
                         Signal(range(3), name="ahead_b", init=(2 if len(order) == 1 else int(len(order) == 2))))

    def advance(self, m: Module, o: EngineOptions) -> None:
        """The tile advance: A moves to C, B to A, and B steps to the next tile in raster order."""
        T, N, g = o.tiles, o.axes, o.geometry
        u0, l0 = o.last_input(_raster(o)[0])
        m.d.sync += [self.tidx[ax].eq(self.tidxa[ax]) for ax in range(N)]
        m.d.sync += [self.lastc[ax].eq(self.lasta[ax]) for ax in range(N)]
        m.d.sync += [self.tidxa[ax].eq(self.tidxb[ax]) for ax in range(N)]
        m.d.sync += [self.lasta[ax].eq(self.lastb[ax]) for ax in range(N)]
        b_wraps = Cat(*[t == n - 1 for t, n in zip(self.tidxb, T)]).all()
        m.d.sync += [self.ahead_a.eq(self.ahead_b - self.ahead_a),
                     self.ahead_b.eq(self.ahead_b - self.ahead_a + b_wraps)]

        carry = Const(1)
        for ax in reversed(range(N)):
            wrap = self.tidxb[ax] == T[ax] - 1
            nxt = Signal(_position_shape(o), name=f"lastub{ax}_step")
            m.d.comb += nxt.eq(self.lastub[ax] + o.step[ax])
            # tile t + 1 is clamped at the feature map's edge when t >= edge - 1 (a constant;
            # comparing the tile counter, not the sum, keeps a comparator off the adder)
            edge = (o.feature_map[ax] + o.padding[ax] - g.input[ax]) // o.step[ax] + 1
            clamp = Const(1) if edge <= 1 else self.tidxb[ax] >= edge - 1
            with m.If(carry):
                advance_counter(m, self.tidxb[ax], T[ax], last=wrap,
                                at_last=[self.lastub[ax].eq(u0[ax]), self.lastb[ax].eq(l0[ax])],
                                otherwise=[self.lastub[ax].eq(nxt),
                                           self.lastb[ax].eq(Mux(clamp, o.feature_map[ax] - 1, nxt))])
            carry = carry & wrap


def _raster(o: EngineOptions) -> list:
    """Every tile index, in raster order."""
    return list(product(*(range(n) for n in o.tiles)))


def _position_shape(o: EngineOptions):
    """The shape of the pointers' last input positions (padding and a step beyond the map, signed)."""
    return signed(bits_for(max(o.feature_map) + max(o.step) + max(o.geometry.input)) + 2)


def _checks(m: Module, o: EngineOptions, writer: WriterState, rgen: Value, ptr: _Pointers, full: list) -> tuple:
    """Each pointer's tile against the writer this cycle: per pointer (C, A, B), whether the writer
    has passed its last position, is in its frame, and whether that frame's buffer is full."""
    # Readiness is pipelined: no comparator sits between the write counters and the issue. Every
    # cycle each pointer's tile is checked against the writer (the comparison with the writer's
    # position alone, whether the writer is in the tile's frame, whether that frame's buffer is
    # full); the checks of the tiles current and next one cycle later are registered (``seen_c``,
    # ``seen_a``: on an advance they shift, B's moving up), and ``ready`` is registered from them
    # (stored: the buffer full, or the writer in the frame past the tile). A tile issues three
    # cycles after its last input beat (``Timing.issue_delay`` 2).
    past = _past_comparison(o, writer.wpos)

    def checks(last, ahead, name):
        """A pointer's tile as the writer stands this cycle: (past its last position, the writer in
        its frame, its frame's buffer full); a tile two frames ahead is neither."""
        gen = rgen ^ ahead[0]
        valid = ahead != 2
        out = [Signal(name=f"{name}_{what}") for what in ("past", "inframe", "full")]
        m.d.comb += [out[0].eq(past(last)), out[1].eq(valid & writer.wbusy & (writer.wgen == gen)),
                     out[2].eq(valid & Mux(gen, full[1], full[0]))]
        return out
    return (checks(ptr.lastc, Const(0, 2), "now_c"), checks(ptr.lasta, ptr.ahead_a, "now_a"),
            checks(ptr.lastb, ptr.ahead_b, "now_b"))


def _register_readiness(m: Module, now: tuple, adv: Value, ready: Signal) -> Signal:
    """The checks of the tiles current and next one cycle later, registered (they shift on an
    advance), and ``ready`` from them; returns ``ready``'s input (the tile current next cycle is
    stored)."""
    now_c, now_a, now_b = now
    seen_c = [Signal(name=f"seen_c{i}") for i in range(3)]
    seen_a = [Signal(name=f"seen_a{i}") for i in range(3)]
    ready_next = Signal(name="ready_next")
    m.d.comb += ready_next.eq(Mux(adv, _stored(seen_a), _stored(seen_c)))
    m.d.sync += ready.eq(ready_next)
    m.d.sync += [x.eq(Mux(adv, a, c)) for x, a, c in zip(seen_c, now_a, now_c)]
    m.d.sync += [x.eq(Mux(adv, b, a)) for x, a, b in zip(seen_a, now_a, now_b)]
    return ready_next


def _stored(seen: list) -> Value:
    """A tile's input is stored: its frame's buffer is full, or the writer is in its frame and past it."""
    return seen[2] | (seen[1] & seen[0])


def _lagging(m: Module, o: EngineOptions, w: Walk, walk_end: Value, ready_next: Value) -> Walk:
    """The lagging walk's signals (:func:`walk`'s ``lag``) added to ``w``."""
    CG, KG = o.channel_groups, o.kernel_groups
    # the pass after a frame's last read pass multiplies its last tile (``mlast``); it drains
    # (reads nothing) only if the next frame's first tile is not stored as it begins: a tile once
    # stored stays so until it is walked, so the whole pass can read it
    mlast = Signal(name="mlast_pass")
    with m.If(walk_end):
        m.d.sync += [mlast.eq(1), w.drain.eq(~ready_next)]
    with m.Elif(w.issue & w.last_group):
        m.d.sync += [mlast.eq(0), w.drain.eq(0)]
    mtidx = [Signal.like(t, name=f"mtile{ax}") for ax, t in enumerate(w.tidx)]
    with m.If(w.advance):
        m.d.sync += [a.eq(b) for a, b in zip(mtidx, w.tidx)]
    first = Signal(name="first_pass")
    m.d.comb += first.eq(~mlast & Cat(*[t == 0 for t in w.tidx]).all())
    # a block is K / PK issues: the read of input-channel group ``read_cg`` is held through it
    block = Signal(range(max(KG, 2)), name="read_block")
    # ``block == 0`` as a register of its own: the read slot, which drives the serial B^T's fibre
    # counter, is then one LUT of registers
    block_start = Signal(name="read_block_start", init=1)
    read_cg = Signal(bits_for(CG), name="read_cg")
    read_slot = Signal(name="read_slot")
    m.d.comb += read_slot.eq(w.issue & ~w.drain & block_start)
    with m.If(w.issue):
        advance_counter(m, block, KG, at_last=[block_start.eq(1), read_cg.eq(wrapped_increment(read_cg, CG))],
                        otherwise=[block_start.eq(0)])
    return replace(w, first=first, mtidx=mtidx, read_cg=read_cg, read_slot=read_slot, mlast_tile=mlast)


def _past_comparison(o: EngineOptions, wpos: list):
    """``past(last)``: the writer has passed position ``last`` (lexicographic, row-major), for the
    tile pointers' clamped last positions.

    Every tile's clamped last position lies in [0, F - 1] on every axis (padding is at most the
    kernel extent minus one, below the input tile: checked here over all tiles), and so does the
    writer's position, so the lexicographic order is the order of the axes' fields concatenated
    (the first axis on top, unsigned): one comparator, one carry chain, not a comparison and an
    equality per axis combined in several LUT levels after the chains."""
    N = o.axes
    widths = [max(1, f.bit_length()) for f in o.feature_map]
    assert all(0 <= o.last_input(tuple(t if a == ax else 0 for a in range(N)))[1][ax] < 2 ** widths[ax]
               for ax in range(N) for t in range(o.tiles[ax])), "a tile's last input position off the map"
    writer_key = Cat(*[wpos[ax][:widths[ax]] for ax in reversed(range(N))])

    def concatenated(last):
        # as the borrow of a subtraction, so synthesis keeps one carry chain whose last bit is the
        # answer (written as ``>``, Yosys split it back into a comparison and an equality per axis)
        return (Cat(*[last[ax][:widths[ax]] for ax in reversed(range(N))]) - writer_key)[len(writer_key)]
    return concatenated


def tile_inside(o: EngineOptions, tidx: list, ax: int, j: int) -> Value:
    """Input-tile position ``j`` along axis ``ax`` of tile ``tidx`` lies inside the feature map (else
    it is zero padding): a range of tile indices, two comparisons with constants at most."""
    lo = -(-(o.padding[ax] - j) // o.step[ax])        # ceil
    hi = (o.feature_map[ax] - 1 + o.padding[ax] - j) // o.step[ax]
    cond = Const(1)
    if lo > 0:
        cond = cond & (tidx[ax] >= lo)
    if hi < o.tiles[ax] - 1:
        cond = cond & (tidx[ax] <= hi)
    return cond


def output_keep(o: EngineOptions, tidx: list) -> Value:
    """One bit per output of a tile (row-major): inside the layer's output (edge tiles keep fewer)."""
    g, T = o.geometry, o.tiles
    N = g.axes
    keep_bits = []
    for oo in product(*(range(n) for n in g.output)):
        conds = []
        for ax in range(N):
            rem = o.output_size[ax] - (T[ax] - 1) * g.output[ax]
            if oo[ax] >= rem:
                conds.append(tidx[ax] != T[ax] - 1)
        keep_bits.append(all_of(conds))
    if all(isinstance(k, Const) for k in keep_bits):      # no tile is cut: a constant, no registers
        return Const((1 << len(keep_bits)) - 1, len(keep_bits))
    return Cat(*keep_bits)
