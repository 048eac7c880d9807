"""Line buffers (:attr:`~hdl.engine.modes.Buffering.LINES`): the feature map as a ring of rows.

Along the first axis the banks hold :attr:`~hdl.engine.options.EngineOptions.line_rows` rows (the
input tile's rows plus one tile step, in whole tile steps), not two frames. A bank addressed by the
position's quotient modulo the tile step keeps its first-axis quotient modulo ``line_slots`` in the
address's top field; a bank of the serial input transform (whole positions along the leading axes)
keeps the row modulo ``line_rows``. Every window of ``line_rows`` consecutive rows then has distinct
addresses in each bank, so the writer may run ``line_rows`` rows ahead of the first row that the
walker's current tile reads (:func:`line_space`), and it waits there. The walker reads nothing of
a tile row once it has moved past it, beyond the reads in flight, which :data:`LINE_RELEASE`
covers. With one ring frames do not overlap: the next frame's first beat waits until the walker has
issued the last tile of the frame before it, and as long again (the rows of the two would share the
ring). With two (:attr:`~hdl.engine.modes.Buffering.RINGS`, the frame's parity in the address) the
next frame fills the other ring while this one is walked, as far as the walker at that frame's first
tile row would let it; a frame still waits out the reads in flight of the one two before it.

Nothing here reads the ring position from a counter beside the walker: the ring slot of a tile
row is a constant table of the tile index (a few LUTs), so no counter can drift from ``tidx``.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from ..pipeline import less, numbered, register_chain
from .latency import LINE_RELEASE
from .options import EngineOptions, bits_for


def _table(values: list[int], index: Value, width: int) -> Value:
    """``values[index]`` as a constant table (LUTs); one value needs no table. A word selected from
    one constant, not an ``Array``: that becomes a process, which Icarus does not evaluate at time 0
    while its index stays put (the first tile row would read undefined addresses)."""
    if len(set(values)) == 1:
        return Const(values[0], width)
    packed = sum(v << (i * width) for i, v in enumerate(values))
    return Const(packed, width * len(values)).word_select(index, width)


def quotient_slot(o: EngineOptions, tile0: Value, offset: int) -> Value:
    """The ring slot of first-axis quotient ``tile0 + offset`` (a window word's bank address field)."""
    n = o.line_slots
    return _table([(t + offset) % n for t in range(max(o.tiles[0], 2))], tile0, bits_for(n))


def first_row_slot(o: EngineOptions, tile0: Value) -> Value:
    """The ring row of tile row ``tile0``'s first input row ``tile0 * step - P`` (the serial input
    transform's fibre counter starts there)."""
    n, s, p = o.line_rows, o.step[0], o.padding[0]
    return _table([(t * s - p) % n for t in range(max(o.tiles[0], 2))], tile0, bits_for(n))


def ring_step(value: Value, n: int, by: int) -> Value:
    """``(value + by) mod n`` for ``0 <= value < n`` and ``-n < by < n``: one adder, one multiplexer."""
    if by >= 0:
        return Mux(value >= n - by, value + (by - n), value + by)
    return Mux(value < -by, value + (n + by), value + by)


def line_space(m: Module, o: EngineOptions, tile0: Value, writer, rgen: Value) -> Signal:
    """The writer may store a beat of its row: it lies fewer than ``line_rows`` rows past the first
    row of the walker's current tile row ``tile0`` as it stood :data:`LINE_RELEASE` + 1 cycles ago (the
    reads of the tile row before it are done by then). With two rings (the writer's frame bit against
    the walker's ``rgen``), a writer a frame ahead fills the other ring as far as the walker at that
    frame's first tile row would let it. A register: the rule is evaluated a cycle ahead for the row
    and for the one after it, and the writer's row step selects (no comparison before ``tready``)."""
    s, p = o.step[0], o.padding[0]
    late = register_chain(m, Cat(tile0, rgen), numbered("line_tile", LINE_RELEASE.cycles), reset_less=False)[-1]
    # reset to its value at tile row 0: its bits that never change then equal their reset value, so synthesis
    # drops them (otherwise each is a flip-flop stepping once after reset, which Yosys merges across a
    # network's engines into one long route: docs/benchmarks.md)
    limit = Signal(range((o.tiles[0] + o.line_slots) * s + 1), name="line_limit", init=o.line_slots * s - p)
    m.d.sync += limit.eq((late[:len(tile0)] + o.line_slots) * s - p)
    late_gen = Signal(name="line_gen")
    m.d.sync += late_gen.eq(late[-1])

    def rule(row):
        if o.line_rings == 1:
            return less(row, limit)
        return Mux(writer.wgen != late_gen, row < o.line_rows - p, less(row, limit))
    row = writer.wpos[0]
    here, after = Signal(name="line_space_here", init=1), Signal(name="line_space_after", init=1)
    moved = Signal(name="line_row_moved")
    m.d.sync += [here.eq(rule(row)), after.eq(rule(row + 1)), moved.eq(writer.row_step)]
    space = Signal(name="line_space")
    m.d.comb += space.eq(Mux(moved, after, here))
    return space


def frame_gap(m: Module, walk_end: Value) -> Value:
    """High for :data:`LINE_RELEASE` cycles after the walker's last issue of a frame: the next frame
    must not start writing rows that the last tiles' reads in flight still take."""
    chain = register_chain(m, walk_end, numbered("line_gap", LINE_RELEASE.cycles), reset_less=False)
    return Cat(*chain).any()
