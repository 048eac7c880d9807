"""A time-multiplexed (serial) row-column transform for the Winograd engine: its A^T, and its B^T.

The engine applies A^T once per (tile, output channel), after C / PC accumulation cycles, so a
fully parallel A^T idles most of the time (B^T likewise once per tile and input-channel group with
the serial input transform, :func:`~hdl.engine.buffers.transformed_tiles`: the same unit, its
first pass streamed from the feature-map banks). When the card's integer A^T is a Kronecker product
``A_1 (x) ... (x) A_N`` of per-axis matrices (:func:`~hdl.rowcol.kronecker_factors`; the constructive cards
are), ``y = A^T m`` is computed one fibre per cycle: pass 1 applies A_N to every fibre of the
accumulators along the last axis, pass 2 applies A_{N-1} to every fibre of pass 1's results along
the next axis, and so on; each pass is one shift-add unit for its 1D matrix, reading its fibre
through a multiplexer and shifting its results into a register chain per result row. The arithmetic
is the parallel A^T's, ring operations modulo ``2^W`` (:class:`~hdl.engine.arith.EngineArithmetic`),
so the outputs are the same bits.

Schedule (cycle 0: the accumulators' totals are visible): pass p reads its F_p fibres in cycles
``s_p .. s_p + F_p - 1``, the fibre registered, then its unit (``L_p`` register cuts), then the
result registers; pass p + 1 starts when the last result is visible. A pass's source is read
before the next group overwrites it as long as consecutive passes satisfy ``F_p + F_{p+1} <= P``
and ``F_1 <= P``, P the cycles between two groups (C / PC): :func:`serial_fits`.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from functools import reduce

import numpy as np
from amaranth.hdl import Array, Module, Mux, ResetSignal, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..components import ConstantMatrixProduct, graph_latency, word, words
from ..datapath import graph_bits
from ..pipeline import register
from ..rowcol import Matrix
from ..shiftadd import ShiftAddGraph, build_graph
from ..widths import Range, linear_range
from ..scaling import two_adic
from .arith import within

@dataclass(frozen=True)
class Pass:
    """One pass: the 1D matrix ``A`` applied along ``axis`` to every fibre of a tensor of ``shape``."""

    axis: int
    matrix: Matrix
    shape: tuple[int, ...]       # the source tensor's shape

    @property
    def fibres(self) -> int:
        return math.prod(self.shape) // self.shape[self.axis]

    @property
    def out_shape(self) -> tuple[int, ...]:
        s = list(self.shape)
        s[self.axis] = len(self.matrix)
        return tuple(s)

    def fibre_index(self, f: int, j: int, shape: tuple[int, ...]) -> int:
        """Flat (row-major) index in a tensor of ``shape`` of position ``j`` along the axis in fibre ``f``
        (fibres numbered row-major over the other axes)."""
        others = [a for a in range(len(shape)) if a != self.axis]
        idx = [0] * len(shape)
        for a in reversed(others):
            idx[a] = f % shape[a]
            f //= shape[a]
        idx[self.axis] = j
        return int(np.ravel_multi_index(idx, shape))


def plan_passes(factors: list[Matrix]) -> list[Pass]:
    """Passes over the last axis first (the accumulators' fastest index)."""
    shape = tuple(len(f[0]) for f in factors)
    passes = []
    for axis in reversed(range(len(factors))):
        p = Pass(axis, factors[axis], shape)
        passes.append(p)
        shape = p.out_shape
    return passes


def serial_fits(passes: list[Pass], period: int) -> bool:
    """Every source is read before the next group overwrites it: the accumulators (read one cycle
    after ``start``) when ``F_1 < period``, each pass's results when ``F_p + F_{p+1} <= period``."""
    f = [p.fibres for p in passes]
    return f[0] < period and all(a + b <= period for a, b in zip(f, f[1:]))


def serial_latency(passes: list[Pass], per_stage: int, division_latency: int | None = None) -> int:
    """Cycles from ``start`` to the whole result visible: per pass, the counter's start, the fibre
    register, the unit's cuts, the result registers, and F - 1 more fibres; with a division in the
    last pass, a register before it and its latency."""
    extra = 0 if division_latency is None else 1 + division_latency
    return extra + sum(p.fibres + 2 + graph_latency(build_graph(p.matrix), per_stage) for p in passes)


def shares_unit(passes: list[Pass], per_stage: int, period: int) -> bool:
    """One 1D unit can serve every pass: the passes apply the same matrix and their reading
    windows fit between two groups ``period`` cycles apart. Pass p reads in cycles ``s_p + 1 ..
    s_p + F_p`` with ``s_{p+1} = s_p + F_p + L + 2`` (L the unit's latency), so the last window
    ends before the next group's first one begins when ``sum F_p + (N - 1)(L + 2) <= period``."""
    if len(passes) < 2 or any(p.matrix != passes[0].matrix for p in passes):
        return False
    latency = graph_latency(build_graph(passes[0].matrix), per_stage)
    return sum(p.fibres for p in passes) + (len(passes) - 1) * (latency + 2) <= period


def pass_demands(passes: list[Pass], out_bits: list[int]) -> list[list[int]]:
    """Per pass, the low bits of each word of its result tensor that the outputs read, from
    ``out_bits`` (each output word's, the last pass's result): a word read only through
    coefficients divisible by ``2^k`` needs k bits fewer than the words it feeds (the
    arithmetic is modulo powers of two; see :mod:`hdl.engine.arith`)."""
    demands = [list(out_bits)]
    for p in reversed(passes[1:]):
        demands.insert(0, _source_demand(p, demands[0]))
    return demands


def _source_demand(p: Pass, out: list[int]) -> list[int]:
    """The bits each word of pass p's source needs, given those of its result words (``out``)."""
    src = [1] * math.prod(p.shape)
    for f in range(p.fibres):
        for i, row in enumerate(p.matrix):
            for j, c in enumerate(row):
                if c:
                    k = p.fibre_index(f, j, p.shape)
                    src[k] = max(src[k], out[p.fibre_index(f, i, p.out_shape)] - two_adic(c))
    return src


def pass_units(passes: list[Pass], in_ranges: list[Range], cap,
               out_bits: list[int] | None = None) -> list[tuple[list[Range], list[Range], list[Range]]]:
    """Per pass, its unit's ranges as built (``cap`` applied): the input words, every graph node
    and the rows, each the widest over the pass's fibres (exact ranges propagated pass by pass);
    with ``out_bits`` (:func:`pass_demands`), the input words and rows no wider than the outputs read."""
    ranges = list(in_ranges)
    units = []
    demands = pass_demands(passes, out_bits) if out_bits else None
    for n, p in enumerate(passes):
        graph = build_graph(p.matrix)
        along = range(p.shape[p.axis])
        box = [_hull(ranges[p.fibre_index(f, j, p.shape)] for f in range(p.fibres)) for j in along]
        new = [None] * math.prod(p.out_shape)
        for f in range(p.fibres):
            fibre = [ranges[p.fibre_index(f, j, p.shape)] for j in along]
            for i, row in enumerate(p.matrix):
                new[p.fibre_index(f, i, p.out_shape)] = linear_range(row, fibre)
        rows = [_hull(new[p.fibre_index(f, i, p.out_shape)] for f in range(p.fibres)) for i in range(len(p.matrix))]
        box, rows = cap(box), cap(rows)
        if demands:
            src = _source_demand(p, demands[n])
            box = [within(r, max(src[p.fibre_index(f, j, p.shape)] for f in range(p.fibres)))
                   for j, r in zip(along, box)]
            rows = [within(r, max(demands[n][p.fibre_index(f, i, p.out_shape)] for f in range(p.fibres)))
                    for i, r in enumerate(rows)]
        units.append((box, cap([linear_range(form, box) for form in graph.forms()]), rows))
        ranges = new
    return units


def or_luts(inputs: int) -> int:
    """LUT4 per bit of an OR of ``inputs`` bits (a tree of 4-input LUTs; none for one input)."""
    return -(-(inputs - 1) // 3) if inputs > 1 else 0


def sharing_pays(passes: list[Pass], in_ranges: list[Range], cap, per_stage: int, period: int,
                 stream_fan_in: int, out_bits: list[int] | None = None) -> bool:
    """Share one unit between the passes (:func:`shares_unit`) when it saves logic: the adders of
    every unit but one (one bit of carry chain per adder bit) against the OR that the streamed
    first pass's inputs gain at the shared unit's input widths (its fibre is already the OR of
    ``stream_fan_in`` words; one more input per bit). F(2x2,3x3)'s B^T, for one, saves fewer adder
    bits than its OR costs, so it is not shared."""
    if not shares_unit(passes, per_stage, period):
        return False
    units = pass_units(passes, in_ranges, cap, out_bits)
    graph = build_graph(passes[0].matrix)
    bits = [graph_bits(graph, nodes, rows) for _, nodes, rows in units]
    extra = or_luts(stream_fan_in + 1) - or_luts(stream_fan_in)
    widest = [max(r.width for r in words) for words in zip(*(u[0] for u in units))]   # the shared unit's inputs
    return sum(bits) - max(bits) > extra * sum(widest)


def lane_divisions(passes: list[Pass], divisions: list):
    """The divisions of the last pass's lanes when every output's divisor depends only on its
    position along that pass's axis (then one division per lane, reused for every fibre), else None."""
    last = passes[-1]
    lanes: dict[int, object] = {}
    for idx, d in enumerate(divisions):
        _, i = _fibre_of(last, idx)
        seen = lanes.setdefault(i, d)
        if (seen.shift, seen.odd) != (d.shift, d.odd):
            return None
    return [lanes[i] for i in range(len(last.matrix))]


class SerialTransform(wiring.Component):
    """``y = (A_1 (x) ... (x) A_N) x``, one fibre per cycle per pass (see the module docstring): the
    engine's serial A^T and serial B^T.

    Parameters
    ----------
    passes : list of Pass
    in_ranges : list of Range
        Exact range of each input word (A^T: the accumulators; B^T: the input tile).
    cap : callable
        Maps exact ranges to the ranges as built (the engine's modulo-``2^W`` cap).
    out_widths : list of int
        Width of each output word (the parallel transform's rows, as built).
    per_stage : int
        Adder levels between register cuts in each pass's unit.
    make_division : callable or None
        Given the last pass's row ranges (as built), the exact division of its lanes
        (:func:`lane_divisions`), applied to each fibre's results after a register: y are then the
        quotients, at the division's output width.
    streamed : bool
        The first pass's fibres arrive one per cycle on ``x`` (fibre f during cycle
        ``start + 1 + f``) instead of all inputs at once: no multiplexer before the first pass.
    shared : bool
        Every pass uses one 1D unit (:func:`shares_unit` must hold for the groups' period): each
        pass reads its fibre one cycle ahead into a register that is zero outside its reading
        window (a synchronous reset), and the unit's input registers take the OR of the passes'.
        Streamed, ``x`` must then be zero outside the first pass's window.
    out_bits : list of int or None
        The low bits of each output word that are read (the engine: its exact division's); every
        word before is then kept modulo the power of two that it needs (:func:`pass_demands`).

    Attributes
    ----------
    x : In, R words (held from ``start`` for ``F_1`` cycles); streamed: the first pass's fibre length,
        each at the widest range of its position over the fibres
    start : In(1), a one-cycle pulse: x holds a new group
    y : Out, |y| words (row-major over the output axes), valid from :attr:`latency` cycles after
        ``start`` until the next group's result replaces it
    """

    def __init__(self, passes: list[Pass], in_ranges: list[Range], cap, out_widths: list[int], per_stage: int,
                 make_division=None, streamed: bool = False, shared: bool = False, out_bits: list[int] | None = None):
        self._streamed, self._shared = streamed, shared
        self._demands = pass_demands(passes, out_bits) if out_bits else None
        self._passes, self._per_stage, self._out_widths = passes, per_stage, out_widths
        self._graphs: list[ShiftAddGraph] = [build_graph(p.matrix) for p in passes]
        self._units = pass_units(passes, in_ranges, cap, out_bits)
        if shared:
            # one unit at the widest of every pass's words
            self._unit_ranges = tuple([_hull(rs) for rs in zip(*(u[k] for u in self._units))] for k in range(3))
        self._division = make_division(self._units[-1][2]) if make_division else None
        self.latency = serial_latency(passes, per_stage, self._division.latency if self._division else None)
        x_widths = [r.width for r in (self._units[0][0] if streamed else cap(in_ranges))]
        super().__init__({"x": In(words(x_widths)), "start": In(1),
                          "y": Out(words(out_widths))})

    def elaborate(self, platform):
        m = Module()
        src = [] if self._streamed else [word(self.x, i) for i in range(math.prod(self._passes[0].shape))]
        go, go_next = self.start, None       # go_next: ``go`` one cycle early, where known
        shared, feeds = None, None
        if self._shared:
            box, node_ranges, row_ranges = self._unit_ranges
            m.submodules.unit = shared = ConstantMatrixProduct(
                self._graphs[0], [r.width for r in box], node_ranges, row_ranges, "unit", self._per_stage)
            feeds = [[] for _ in box]     # per input word: each pass's fibre, zero outside its window
        for n in range(len(self._passes)):
            src, go, go_next = self._pass(m, n, src, (go, go_next), shared, feeds)
        if shared is not None:
            for j, fibres in enumerate(feeds):
                x = Signal(signed(self._unit_ranges[0][j].width), name=f"unit_x{j}", reset_less=True)
                m.d.sync += x.eq(reduce(operator.or_, fibres))
                m.d.comb += word(shared.x, j).eq(x)
        for i, v in enumerate(src):
            m.d.comb += word(self.y, i).eq(v)
        return m

    def _pass(self, m: Module, n: int, src: list, start: tuple, shared, feeds) -> tuple:
        """Pass ``n``: from ``start`` (``(go, go_next)``), its fibres of ``src`` through its unit (or
        the ``shared`` one, through ``feeds``) into its result registers. Returns ``(results, done,
        done_next)``: the pass's result words, and its last result visible (a register, and its input)."""
        p, (box, node_ranges, row_ranges) = self._passes[n], self._units[n]
        if shared is None:
            m.submodules[f"pass{n}"] = unit = ConstantMatrixProduct(
                self._graphs[n], [r.width for r in box], node_ranges, row_ranges, f"pass{n}", self._per_stage)
        else:
            unit = shared
        # the fibre counter runs F cycles from ``go``
        f, active = _fibre_counter(m, n, p.fibres, start[0])
        if shared is None:
            self._read(m, n, f, src, unit)
        elif n == 0 and self._streamed:
            for j in range(p.shape[p.axis]):
                feeds[j].append(word(self.x, j))
        else:
            reading, ahead = _read_window(m, n, p.fibres, *start)
            for j, early in enumerate(_early_reads(m, n, p, box, src, reading, ahead)):
                feeds[j].append(early)
        results, delay_cycles = self._divided(m, n, [word(unit.y, i) for i in range(len(p.matrix))], unit.latency)
        # write: the fibre index and its valid travel beside the unit into the result registers
        wf, wv = f, active
        for c in range(delay_cycles):
            wf = register(m, wf, f"pass{n}_wf{c}")
            wv = register(m, wv, f"pass{n}_wv{c}", reset_less=False)
        dest = self._result_registers(m, n, results, wv)
        done, done_next = Signal(name=f"pass{n}_done"), Signal(name=f"pass{n}_done_next")
        m.d.comb += done_next.eq(wv & (wf == p.fibres - 1))
        m.d.sync += done.eq(done_next)
        return dest, done, done_next

    def _read(self, m: Module, n: int, f: Signal, src: list, unit) -> None:
        """Pass ``n``'s own unit reads fibre ``f`` (streamed, the first pass's input), registered."""
        p, box = self._passes[n], self._units[n][0]
        for j in range(p.shape[p.axis]):
            if n == 0 and self._streamed:
                fibre = word(self.x, j)
            else:
                fibre = Array([src[p.fibre_index(ff, j, p.shape)] for ff in range(p.fibres)])[f]
            x = Signal(signed(box[j].width), name=f"pass{n}_x{j}", reset_less=True)
            m.d.sync += x.eq(fibre)
            m.d.comb += word(unit.x, j).eq(x)

    def _divided(self, m: Module, n: int, results: list, latency: int) -> tuple[list, int]:
        """The last pass's results through the division (after a register), when there is one:
        ``(result words, cycles from the fibre register to them)``."""
        if n < len(self._passes) - 1 or self._division is None:
            return results, 1 + latency
        m.submodules.division = div = self._division
        for i, v in enumerate(results):
            m.d.comb += word(div.x, i).eq(register(m, v, f"pass{n}_q{i}"))
        return [word(div.y, i) for i in range(len(results))], 1 + latency + 1 + div.latency

    def _result_registers(self, m: Module, n: int, results: list, wv: Value) -> list:
        """Pass ``n``'s result tensor: per result row, a shift register over the fibres, shifted by
        each write (``wv``). Fibre F - 1's register takes the unit's result and passes it on, so after
        the pass fibre f's register holds fibre f's word: the unit's result has one load per pass,
        not one per fibre (that fan-out would be a long route after its last adder), and there is
        no write decoder."""
        p, row_ranges = self._passes[n], self._units[n][2]
        last = n == len(self._passes) - 1

        def width_of(idx):
            # the last pass's words at the parallel A^T's widths: the true value fits them and
            # the arithmetic is modulo a power of two, so dropping high bits keeps it exact
            width = self._out_widths[idx] if last else row_ranges[_fibre_of(p, idx)[1]].width
            return min(width, self._demands[n][idx]) if self._demands and not last else width
        dest = [None] * math.prod(p.out_shape)
        for i, result in enumerate(results):
            chain = [p.fibre_index(ff, i, p.out_shape) for ff in range(p.fibres)]
            source = result
            for ff in reversed(range(p.fibres)):
                idx = chain[ff]
                # wide enough for every word that passes through it on its way down the chain
                r = Signal(signed(max(width_of(k) for k in chain[:ff + 1])), name=f"pass{n}_t{idx}",
                           reset_less=True)
                with m.If(wv):
                    m.d.sync += r.eq(source)
                dest[idx] = r[:width_of(idx)].as_signed()
                source = r
        return dest


def _fibre_counter(m: Module, n: int, fibres: int, go: Value) -> tuple[Signal, Signal]:
    """Pass ``n``'s fibre counter, ``fibres`` cycles from ``go``: ``(fibre, active)``."""
    f = Signal(range(max(fibres, 2)), name=f"pass{n}_fibre")
    active = Signal(name=f"pass{n}_active")
    with m.If(go):
        m.d.sync += [f.eq(0), active.eq(1)]
    with m.Elif(active):
        m.d.sync += f.eq(f + 1)
        with m.If(f == fibres - 1):
            m.d.sync += active.eq(0)
    return f, active


def _read_window(m: Module, n: int, F: int, go: Value, go_next) -> tuple[Signal, Signal]:
    """A shared unit's read window of pass ``n`` (``F`` fibres from ``go``; ``go_next``: ``go`` one
    cycle early, or None): ``(reading, ahead)``, the fibre read next a register (0 when idle), so
    that the multiplexer's selects are flip-flops."""
    # the fibre is read one cycle ahead into a register that a synchronous reset zeroes outside
    # the window (no logic), so the unit's input is a plain OR
    reading = Signal(name=f"pass{n}_reading")
    ahead = Signal(range(max(F, 2)), name=f"pass{n}_ahead")
    m.d.sync += ahead.eq(Mux(reading & (ahead != F - 1), ahead + 1, 0))
    if go_next is None or F & (F - 1):
        # ``ahead`` is not 0 in the window's cycles after ``go`` only (one LUT of registers)
        m.d.comb += reading.eq(go | (ahead != 0))
        return reading, ahead
    # the window (``go``, then while ``ahead`` is not 0) as a register of its complement, computed
    # a cycle ahead from the previous pass's ``done`` input: it drives the reset pins of every
    # fibre register directly, not through a LUT after the fibre counter (a long route). Only
    # where F is a power of two: else Yosys gives the counter's unused values a reset term of
    # their own (a LUT stays before the reset pins), and the register costs more LUTs than it saves.
    #
    # Reset sets it; it powers up clear (a spurious window of zeros before any
    # reset, harmless) so that it changes at the first reset edge: Icarus runs
    # the read registers' ``always @*`` logic only when an input changes, and
    # with every input constant from time 0 they loaded X.
    idle = Signal(name=f"pass{n}_idle", reset_less=True)
    with m.If(ResetSignal()):
        m.d.sync += idle.eq(1)
    with m.Else():
        m.d.sync += idle.eq(~(go_next | (reading & (ahead != F - 1))))
    m.d.comb += reading.eq(~idle)
    return reading, ahead


def _early_reads(m: Module, n: int, p: Pass, box: list, src: list, reading: Value, ahead: Value) -> list:
    """Pass ``n``'s fibre for a shared unit, read at ``ahead`` one cycle early: a register per word,
    zero outside the window (a synchronous reset)."""
    out = []
    for j in range(p.shape[p.axis]):
        fibres = Array([src[p.fibre_index(ff, j, p.shape)] for ff in range(p.fibres)])
        early = Signal(signed(box[j].width), name=f"pass{n}_x{j}", reset_less=True)
        with m.If(reading):
            m.d.sync += early.eq(fibres[ahead])
        with m.Else():
            m.d.sync += early.eq(0)
        out.append(early)
    return out


def _fibre_of(p: Pass, idx: int) -> tuple[int, int]:
    """(fibre, position along the axis) of flat index ``idx`` in the pass's output tensor."""
    shape = p.out_shape
    multi = np.unravel_index(idx, shape)
    f = 0
    for a in range(len(shape)):
        if a != p.axis:
            f = f * shape[a] + int(multi[a])
    return f, int(multi[p.axis])


def _hull(ranges) -> Range:
    ranges = list(ranges)
    return Range(min(r.lo for r in ranges), max(r.hi for r in ranges), False)

