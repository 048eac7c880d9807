"""The engine's tile walker: which (tile, output-channel group, input-channel group) issues when.

Tiles go in raster order, then output-channel groups, then input-channel groups (innermost). A
tile may issue once the writer has stored its input: readiness is pipelined so that no comparator
sits between the writer's counters and the issue (see :func:`walk`); the performance model's
``Timing.issue_delay`` is :data:`hdl.engine.latency.ISSUE_DELAY`. Also here: whether a tile's input position is padding
(outside the feature map) and the kept outputs of edge tiles, both from the tile index.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed

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
    g = o.geometry
    N = g.axes
    CG, KG = o.channel_groups, o.kernel_groups
    cg_bits, kg_bits = bits_for(CG), bits_for(KG)
    wpos, wbusy, wgen, frame_end = writer.wpos, writer.wbusy, writer.wgen, writer.frame_end
    T = o.tiles
    cg = Signal(cg_bits, name="cg")
    kg = Signal(kg_bits, name="kg")
    tidx = [Signal(range(max(t, 2)), name=f"tile{ax}") for ax, t in enumerate(T)]
    # Readiness is pipelined: no comparator sits between the write counters and the issue. The
    # walker keeps three tile pointers in raster order (the current tile C, the next A, the one
    # after B), each with its clamped last input position and how many frames it is ahead of
    # C (A: 0 or 1; B: 0, 1 or 2, two only with at most two tiles per frame). Every cycle each
    # pointer's tile is checked against the writer (the comparison with the writer's position
    # alone, whether the writer is in the tile's frame, whether that frame's buffer is full); the
    # checks of the tiles current and next one cycle later are registered (``seen_c``, ``seen_a``:
    # on an advance they shift, B's moving up), and ``ready`` is registered from them (stored:
    # the buffer full, or the writer in the frame past the tile). A tile issues three cycles after
    # its last input beat (``Timing.issue_delay`` 2).
    order = list(product(*(range(n) for n in T)))
    ta, tb = order[1 % len(order)], order[2 % len(order)]
    u0, l0 = o.last_input(order[0])
    _, la = o.last_input(ta)
    ub, lb = o.last_input(tb)
    lshape = signed(bits_for(max(o.feature_map) + max(o.step) + max(g.input)) + 2)
    lastc = [Signal(lshape, name=f"lastc{ax}", init=l0[ax]) for ax in range(N)]
    tidxa = [Signal(range(max(t, 2)), name=f"tilea{ax}", init=ta[ax]) for ax, t in enumerate(T)]
    lasta = [Signal(lshape, name=f"lasta{ax}", init=la[ax]) for ax in range(N)]
    tidxb = [Signal(range(max(t, 2)), name=f"tileb{ax}", init=tb[ax]) for ax, t in enumerate(T)]
    lastub = [Signal(lshape, name=f"lastub{ax}", init=ub[ax]) for ax in range(N)]
    lastb = [Signal(lshape, name=f"lastb{ax}", init=lb[ax]) for ax in range(N)]
    ahead_a = Signal(range(2), name="ahead_a", init=int(len(order) == 1))
    ahead_b = Signal(range(3), name="ahead_b", init=(2 if len(order) == 1 else int(len(order) == 2)))
    full = [Signal(name=f"full{b}") for b in range(2)]   # buffer b holds a whole frame not yet walked

    past = _past_comparison(o, wpos)

    def checks(last, ahead, name):
        """A pointer's tile as the writer stands this cycle: (past its last position, the writer in
        its frame, its frame's buffer full); a tile two frames ahead is neither."""
        gen = rgen ^ ahead[0]
        valid = ahead != 2
        out = [Signal(name=f"{name}_{what}") for what in ("past", "inframe", "full")]
        m.d.comb += [out[0].eq(past(last)), out[1].eq(valid & wbusy & (wgen == gen)),
                     out[2].eq(valid & Mux(gen, full[1], full[0]))]
        return out
    now_c, now_a, now_b = checks(lastc, Const(0, 2), "now_c"), checks(lasta, ahead_a, "now_a"), \
        checks(lastb, ahead_b, "now_b")
    # the checks of the tiles current and next one cycle later, registered (they shift on an advance)
    seen_c = [Signal(name=f"seen_c{i}") for i in range(3)]
    seen_a = [Signal(name=f"seen_a{i}") for i in range(3)]

    def stored(seen):
        return seen[2] | (seen[1] & seen[0])
    ready = Signal(name="ready")              # registered: the current tile's input is stored
    issue = Signal(name="issue")
    drain = Signal(name="drain") if lag else Const(0)
    m.d.comb += issue.eq((ready | drain) & credit)
    # ``cg == CG - 1`` and ``kg == KG - 1`` as registers kept beside the counters (set one issue
    # ahead): the tile advance and a frame's last issue are then a LUT fewer from the registers
    # (``cg`` to ``inflight`` through them was a layer's critical path, 6.7 ns)
    last_cg = Signal(name="last_cg", init=int(CG == 1))
    last_kg = Signal(name="last_kg", init=int(KG == 1))
    # both, a register too: the tile advance is then one LUT of registers (``issue``, ``last_cg``
    # and ``last_kg`` were two levels before its fan-out, a layer's critical path at 5.8 ns)
    last_group = Signal(name="last_group", init=int(CG == 1 and KG == 1))
    last_tile = Signal(name="last_tile")
    adv = Signal(name="tile_advance")
    m.d.comb += [last_tile.eq(Cat(*[t == n - 1 for t, n in zip(tidx, T)]).all()),
                 adv.eq(issue & last_group & ~drain)]
    m.d.comb += walk_end.eq(adv & last_tile)
    ready_next = Signal(name="ready_next")
    m.d.comb += ready_next.eq(Mux(adv, stored(seen_a), stored(seen_c)))
    m.d.sync += ready.eq(ready_next)
    m.d.sync += [x.eq(Mux(adv, a, c)) for x, a, c in zip(seen_c, now_a, now_c)]
    m.d.sync += [x.eq(Mux(adv, b, a)) for x, a, b in zip(seen_a, now_a, now_b)]
    for b in range(2):
        with m.If(frame_end & (wgen == b)):
            m.d.sync += full[b].eq(1)
        with m.Elif(walk_end & (rgen == b)):
            m.d.sync += full[b].eq(0)
    with m.If(issue):
        with m.If(last_cg):
            m.d.sync += [cg.eq(0), last_cg.eq(CG == 1)]
            with m.If(last_kg):
                m.d.sync += [kg.eq(0), last_kg.eq(KG == 1), last_group.eq(CG == 1 and KG == 1)]
            with m.Else():
                m.d.sync += [kg.eq(kg + 1), last_kg.eq(kg == KG - 2), last_group.eq((CG == 1) & (kg == KG - 2))]
        with m.Else():
            m.d.sync += [cg.eq(cg + 1), last_cg.eq(cg == CG - 2), last_group.eq((cg == CG - 2) & last_kg)]
    with m.If(adv):
        m.d.sync += [tidx[ax].eq(tidxa[ax]) for ax in range(N)]
        m.d.sync += [lastc[ax].eq(lasta[ax]) for ax in range(N)]
        m.d.sync += [tidxa[ax].eq(tidxb[ax]) for ax in range(N)]
        m.d.sync += [lasta[ax].eq(lastb[ax]) for ax in range(N)]
        b_wraps = Cat(*[t == n - 1 for t, n in zip(tidxb, T)]).all()
        m.d.sync += [ahead_a.eq(ahead_b - ahead_a), ahead_b.eq(ahead_b - ahead_a + b_wraps)]
        carry = Const(1)
        for ax in reversed(range(N)):
            wrap = tidxb[ax] == T[ax] - 1
            nxt = Signal(lshape, name=f"lastub{ax}_step")
            m.d.comb += nxt.eq(lastub[ax] + o.step[ax])
            # tile t + 1 is clamped at the feature map's edge when t >= edge - 1 (a constant;
            # comparing the tile counter, not the sum, keeps a comparator off the adder)
            edge = (o.feature_map[ax] + o.padding[ax] - g.input[ax]) // o.step[ax] + 1
            clamp = Const(1) if edge <= 1 else tidxb[ax] >= edge - 1
            with m.If(carry):
                with m.If(wrap):
                    m.d.sync += [tidxb[ax].eq(0), lastub[ax].eq(u0[ax]), lastb[ax].eq(l0[ax])]
                with m.Else():
                    m.d.sync += [tidxb[ax].eq(tidxb[ax] + 1), lastub[ax].eq(nxt),
                                 lastb[ax].eq(Mux(clamp, o.feature_map[ax] - 1, nxt))]
            carry = carry & wrap

    if not lag:
        return Walk(cg, kg, tidx, issue, last_cg, last_kg, last_tile, last_group, drain, Const(0), tidx, cg, Const(0),
                    adv, last_tile)
    # the pass after a frame's last read pass multiplies its last tile (``mlast``); it drains
    # (reads nothing) only if the next frame's first tile is not stored as it begins: a tile once
    # stored stays so until it is walked, so the whole pass can read it
    mlast = Signal(name="mlast_pass")
    with m.If(walk_end):
        m.d.sync += [mlast.eq(1), drain.eq(~ready_next)]
    with m.Elif(issue & last_group):
        m.d.sync += [mlast.eq(0), drain.eq(0)]
    mtidx = [Signal.like(t, name=f"mtile{ax}") for ax, t in enumerate(tidx)]
    with m.If(adv):
        m.d.sync += [a.eq(b) for a, b in zip(mtidx, tidx)]
    first = Signal(name="first_pass")
    m.d.comb += first.eq(~mlast & Cat(*[t == 0 for t in tidx]).all())
    # a block is K / PK issues: the read of input-channel group ``read_cg`` is held through it
    block = Signal(range(max(KG, 2)), name="read_block")
    # ``block == 0`` as a register of its own: the read slot is then one LUT of registers (it
    # drives the serial B^T's fibre counter, on a small layer's critical path)
    block_start = Signal(name="read_block_start", init=1)
    read_cg = Signal(cg_bits, name="read_cg")
    read_slot = Signal(name="read_slot")
    m.d.comb += read_slot.eq(issue & ~drain & block_start)
    with m.If(issue):
        with m.If(block == KG - 1):
            m.d.sync += [block.eq(0), block_start.eq(1), read_cg.eq(Mux(read_cg == CG - 1, 0, read_cg + 1))]
        with m.Else():
            m.d.sync += [block.eq(block + 1), block_start.eq(0)]
    return Walk(cg, kg, tidx, issue, last_cg, last_kg, last_tile, last_group, drain, first, mtidx, read_cg, read_slot,
                adv, mlast)


def _past_comparison(o: EngineOptions, wpos: list):
    """``past(last)``: the writer has passed position ``last`` (lexicographic, row-major), for the
    tile pointers' clamped last positions.

    Every tile's clamped last position lies in [0, F - 1] on every axis (padding is at most the
    kernel extent minus one, below the input tile: checked here over all tiles), and so does the
    writer's position, so the lexicographic order is the order of the axes' fields concatenated
    (the first axis on top, unsigned): one comparator, one carry chain, where a comparison and an
    equality per axis combined took four LUT levels after the chain (ECP5: 8.6 ns, a whole layer's
    critical path)."""
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
        keep_bits.append(Cat(*conds).all() if conds else Const(1))
    return Cat(*keep_bits)
