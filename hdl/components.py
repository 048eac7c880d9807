"""Amaranth components of a Winograd tile; signatures are computed from the datapath description.

The tile's ports are packed vectors (``ArrayLayout``: element i at bits ``[i*w +: w]``,
two's complement); between stages every word is its own signal at its exact width.
"""

from __future__ import annotations

import enum
from itertools import product

from amaranth.hdl import Const, Module, Mux, Signal, Value, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from winohdl.core.device import FAMILY_DEVICES

from .datapath import Division
from .fabric import fabric_product
from .options import MultiplierKind, Rounding
from .pipeline import delay, numbered, register_chain
from .shiftadd import ShiftAddGraph, Term
from .widths import Range


def words(widths: list[int]) -> wiring.Signature:
    """A bundle of separate signed words ``e0, e1, ...`` of the given exact widths.

    Internal stages connect word by word (Verilog ports ``x__e0``, ...): one
    packed bus written piecewise and read piecewise makes event-driven
    simulators re-evaluate every reader on every piece.
    """
    return wiring.Signature({f"e{i}": Out(signed(w)) for i, w in enumerate(widths)})


def word(bundle, i: int):
    """Word i of a :func:`words` bundle (or element i of an ``ArrayLayout`` view)."""
    return bundle[i] if isinstance(bundle, data.View) else getattr(bundle, f"e{i}")


def _term_value(t: Term, nodes):
    v = nodes[t.node] if t.shift == 0 else nodes[t.node] << t.shift
    return -v if t.sign < 0 else v


def _adder_value(add, nodes):
    """``a + b`` or ``a - b``: a subtraction is one subtractor, never a negation and an adder."""
    a = _term_value(Term(add.a.node, add.a.shift, 1), nodes)
    b = _term_value(Term(add.b.node, add.b.shift, 1), nodes)
    if add.a.sign > 0:
        return a + b if add.b.sign > 0 else a - b
    return b - a if add.b.sign > 0 else -(a + b)


# Deep pipelines: registers on both sides of a multiplier's hard block. The routes between the
# fabric and a hard multiplier's pins are long, so an adder straight before or after the block
# would not fit one adder level per stage; a fabric register on the fabric side of each route
# takes the adder out of that path.
DEEP_OPERAND_REGISTERS = 2  # a fabric register, then the block's input register (REG_INPUTA/B, AREG/BREG)
DEEP_PRODUCT_REGISTERS = 3  # the block's pipeline and output registers (REG_PIPELINE/OUTPUT, MREG/PREG), then
#                             a fabric register


class Cut(enum.Enum):
    """Register cuts inside a graph other than every N adder levels."""

    PASSES = "passes"
    """Between the 1D passes of a row-column graph (``stages``: each pass is an operator); none
    in a flat graph."""


def node_stages(graph: ShiftAddGraph, per_stage: int | Cut | None) -> list[int]:
    """Pipeline stage of every node: inputs 0; an adder at logic level L >= 1 in stage
    ``(L - 1) // per_stage`` (a register cut after every ``per_stage`` levels); with
    :attr:`Cut.PASSES`, the 1D pass that built it (:meth:`ShiftAddGraph.pass_stages`); all 0
    when ``per_stage`` is None (combinational)."""
    if per_stage is None:
        return [0] * graph.n_nodes
    if per_stage is Cut.PASSES:
        return graph.pass_stages()
    return [0 if lvl == 0 else (lvl - 1) // per_stage for lvl in graph.depths()]


def graph_latency(graph: ShiftAddGraph, per_stage: int | Cut | None) -> int:
    """Registers between the inputs and the rows of ``graph`` cut every ``per_stage`` levels."""
    stages = node_stages(graph, per_stage)
    return max((stages[t.node] for t in graph.outputs if t is not None), default=0)


def emit_graph(m: Module, graph: ShiftAddGraph, inputs: list, node_widths: list[int], prefix: str,
               per_stage: int | Cut | None = None) -> list:
    """Signals for every adder of ``graph`` (each at its exact width); returns the row values.

    With ``per_stage``, a register cut follows every ``per_stage`` adder levels (or every 1D
    pass, :attr:`Cut.PASSES`) and every
    operand is delayed to its adder's stage, so every path from an input to a row crosses
    the same :func:`graph_latency` registers (balanced); rows come out at that stage.
    """
    nodes = list(inputs)
    stages = node_stages(graph, per_stage)
    available: dict[tuple[int, int], object] = {}

    def at(node: int, stage: int):
        """Node ``node`` as seen in ``stage`` (delayed from the stage that computes it)."""
        key = (node, stage)
        if key not in available:
            available[key] = nodes[node] if stage == stages[node] else \
                delay(m, at(node, stage - 1), 1, f"{prefix}_n{node}_s{stage}")
        return available[key]

    for i, add in enumerate(graph.adders):
        idx = graph.n_inputs + i
        s = Signal(signed(node_widths[idx]), name=f"{prefix}_n{idx}")
        view = {n: at(n, stages[idx]) for n in (add.a.node, add.b.node)}
        m.d.comb += s.eq(_adder_value(add, view))
        nodes.append(s)
    last = graph_latency(graph, per_stage)
    return [Const(0, signed(1)) if t is None else _term_value(t, {t.node: at(t.node, last)})
            for t in graph.outputs]


def valid_chain(m: Module, in_valid, out_valid, latency: int) -> None:
    """``out_valid`` is ``in_valid`` ``latency`` cycles late: the valid flag travels beside the data,
    through registers with a reset (``valid0``, ...)."""
    m.d.comb += out_valid.eq(register_chain(m, in_valid, numbered("valid", latency), reset_less=False)[-1])


class ConstantMatrixProduct(wiring.Component):
    """``y = M @ x`` for a constant integer matrix M, as two-input adders and free shifts.

    Parameters
    ----------
    graph : ShiftAddGraph
        The shift-add realisation of M (rows are outputs).
    in_widths : list of int
        Signed width of each input word.
    node_ranges : list of Range
        Exact range of every graph node (inputs first), giving each adder's width.
    out_ranges : list of Range
        Exact range of each output word.
    name : str
        Prefix of the internal signal names.
    per_stage : int, Cut or None
        None: combinational. Otherwise a register cut after every ``per_stage`` adder
        levels, or between the 1D passes of a row-column graph (:attr:`Cut.PASSES`), in clock
        domain ``sync``; :attr:`latency` registers from x to y.

    Attributes
    ----------
    x : In, words of ``in_widths`` (len(M[0]) words)
    y : Out, words of exact output widths (len(M) words)
    """

    def __init__(self, graph: ShiftAddGraph, in_widths: list[int], node_ranges: list[Range],
                 out_ranges: list[Range], name: str, per_stage: int | Cut | None = None):
        self._graph, self._node_ranges, self._prefix = graph, node_ranges, name
        self._per_stage = per_stage
        self.latency = graph_latency(graph, per_stage)
        self._out_widths = [r.width for r in out_ranges]
        super().__init__({"x": In(words(in_widths)), "y": Out(words(self._out_widths))})

    def elaborate(self, platform):
        m = Module()
        xs = [word(self.x, i) for i in range(self._graph.n_inputs)]
        rows = emit_graph(m, self._graph, xs, [r.width for r in self._node_ranges], self._prefix, self._per_stage)
        for i, v in enumerate(rows):
            m.d.comb += word(self.y, i).eq(v)
        return m


# The widest signed operand of the hard multipliers deep pipelines target (ECP5 MULT18X18D, Gowin
# MULT18X18, from the device table; an xc7 DSP48E1 would take 25 bits on one side). A wider operand is
# split here, so every partial product has its own registers and the partial products are summed after
# them: left to Yosys, the split's sum sits unregistered between the blocks and the product register.
DSP_OPERAND_BITS = min(FAMILY_DEVICES["ecp5"].dsp.size + FAMILY_DEVICES["gowin"].dsp.size)
# A low chunk of at most this many bits is multiplied in the fabric (masked, shifted copies of the
# other operand): a hard block for it would be a waste (a 19-bit operand: one block, not two).
FABRIC_CHUNK_BITS = 2


def operand_chunks(width: int, limit: int = DSP_OPERAND_BITS) -> list[tuple[int, int, bool]]:
    """``(offset, bits, signed)`` chunks of a signed ``width``-bit operand, low first: the top
    ``limit`` bits as one signed chunk, the bits below it as unsigned chunks of at most
    ``limit - 1`` bits (which fit the block as signed operands); one chunk when it fits."""
    if width <= limit:
        return [(0, width, True)]
    low = width - limit
    chunks = [(lo, min(limit - 1, low - lo), False) for lo in range(0, low, limit - 1)]
    return chunks + [(low, limit, True)]


def _chunk(value, offset: int, bits: int, is_signed: bool):
    part = value[offset:offset + bits]
    return part.as_signed() if is_signed else part


def _chunk_product(a, b, ca, cb):
    """One partial product: a hard multiplier, or masked shifted copies of the other operand when
    one chunk is a small unsigned one (:data:`FABRIC_CHUNK_BITS`)."""
    (oa, na, sa), (ob, nb, sb) = ca, cb
    x, y = _chunk(a, oa, na, sa), _chunk(b, ob, nb, sb)
    for small, other, n, is_signed in ((x, y, na, sa), (y, x, nb, sb)):
        if not is_signed and n <= FABRIC_CHUNK_BITS:
            terms = [Mux(small[i], other << i, 0) for i in range(n)]
            return sum(terms[1:], terms[0])
    return x * y


def split_levels(a_width: int, b_width: int) -> int:
    """Adder levels (each registered) that sum the partial products of a split multiplication."""
    return (len(operand_chunks(a_width)) * len(operand_chunks(b_width)) - 1).bit_length()


def emit_product(m: Module, a, b, width: int, registers: int, levels: int, name: str, split: bool = False,
                 kind: MultiplierKind = MultiplierKind.DSP, span: int = 1):
    """``a * b`` at ``width`` bits, ``registers + levels`` reset-less registers later.

    ``kind`` FABRIC: built in the fabric (:func:`hdl.fabric.fabric_product`, no split), its adder tree
    registered within the same latency, ``span`` levels between registers.

    Unsplit: the product, then that many registers (the first ones a DSP block absorbs). Split
    (:func:`operand_chunks`, deep pipelines): every partial product is its own multiplier with
    ``registers`` registers, then a tree of registered adders sums them (modulo 2^width, exact
    since the true product fits), delayed to ``levels`` (>= :func:`split_levels`) to balance.
    """
    a, b = Value.cast(a), Value.cast(b)
    if kind is MultiplierKind.FABRIC:
        return delay(m, fabric_product(m, a, b, width, registers, name, span), levels, f"{name}_bal")
    if not split or max(len(a), len(b)) <= DSP_OPERAND_BITS:
        p = Signal(signed(width), name=name)
        m.d.comb += p.eq(a * b)
        return delay(m, p, registers + levels, name)
    level = []
    for (oa, na, sa), (ob, nb, sb) in product(operand_chunks(len(a)), operand_chunks(len(b))):
        p = Signal(signed(na + nb + 1), name=f"{name}_{oa}_{ob}")
        m.d.comb += p.eq(_chunk_product(a, b, (oa, na, sa), (ob, nb, sb)))
        q = Signal(signed(width), name=f"{name}_{oa}_{ob}_shift")
        m.d.comb += q.eq(delay(m, p, registers, f"{name}_{oa}_{ob}") << (oa + ob))
        level.append(q)
    depth = 0
    while len(level) > 1:
        pairs = [level[i:i + 2] for i in range(0, len(level), 2)]
        level = []
        for i, pair in enumerate(pairs):
            s = Signal(signed(width), name=f"{name}_sum{depth}_{i}", reset_less=True)
            m.d.sync += s.eq(pair[0] + pair[1] if len(pair) == 2 else pair[0])
            level.append(s)
        depth += 1
    return delay(m, level[0], levels - depth, f"{name}_bal")


class MultiplierArray(wiring.Component):
    """R parallel signed multipliers, ``m[r] = v[r] * u[r]``.

    Parameters
    ----------
    v_widths, u_widths, m_widths : list of int
        Exact operand and product widths of each of the R multipliers.
    registers : int
        Reset-less registers after each product (0: combinational; :data:`DEEP_PRODUCT_REGISTERS`
        in deep pipelines: the pipeline and output registers a vendor DSP block absorbs, then one
        in the fabric; its input registers are the caller's operand registers).
    split : bool
        Split operands wider than :data:`DSP_OPERAND_BITS` (:func:`emit_product`); every product
        is delayed to the deepest sum of partial products (balanced), which :attr:`latency` counts.
        Deep pipelines only (``registers`` > 0).

    Attributes
    ----------
    v : In, R words of ``v_widths`` (transformed data)
    u : In, R words of ``u_widths`` (transformed kernel)
    m : Out, R words of ``m_widths`` (products)
    """

    def __init__(self, v_widths: list[int], u_widths: list[int], m_widths: list[int], registers: int = 0,
                 split: bool = False):
        self._R, self._m_widths, self._registers = len(v_widths), m_widths, registers
        self._split = split and registers > 0
        self._levels = max((split_levels(a, b) for a, b in zip(v_widths, u_widths)), default=0) \
            if self._split else 0
        self.latency = registers + self._levels
        super().__init__({"v": In(words(v_widths)), "u": In(words(u_widths)), "m": Out(words(m_widths))})

    def elaborate(self, platform):
        m = Module()
        for r in range(self._R):
            m.d.comb += word(self.m, r).eq(emit_product(m, word(self.v, r), word(self.u, r), self._m_widths[r],
                                                        self._registers, self._levels, f"p{r}", self._split))
        return m


def division_latency(divisions: list, per_stage: int | None, rounds: bool) -> int:
    """Registers of an :class:`ExactDivision` (pipelined: the inverse multiplications' cuts, a register
    after them when any is needed and, when the result is rounded, one after the rounding)."""
    if per_stage is None:
        return 0
    nontrivial = [d for d in divisions if not d.trivial_odd]
    inverse = max((graph_latency(d.graph, per_stage) for d in nontrivial), default=0)
    return inverse + bool(nontrivial) + rounds


class ExactDivision(wiring.Component):
    """Exact division of each output by its constant ``D[o] = odd << shift``.

    The true quotient is an integer, so an arithmetic shift removes the power of
    two and a multiplication by the odd part's inverse modulo 2^width (shift-adds,
    wrapping) removes the rest. With an output width, the result is then rounded
    (``output_shift`` bits dropped by the named mode) and saturated.

    Parameters
    ----------
    divisions : list of Division
    in_ranges : list of Range
        Exact range of each dividend (the output transform's rows).
    out_width : int
        Width of every output word.
    options : HardwareOptions
    per_stage : int or None
        None: combinational. Otherwise the inverse multiplications are cut every
        ``per_stage`` adder levels (balanced over the outputs), with a register after them
        and, with an output width, after the rounding: :attr:`latency` registers in all.

    Attributes
    ----------
    x : In, |y| words (dividends, exact widths)
    y : Out, ArrayLayout(signed(out_width), |y|)
    """

    def __init__(self, divisions: list[Division], in_ranges: list[Range], out_width: int, options,
                 per_stage: int | None = None):
        self._divisions, self._options, self._per_stage = divisions, options, per_stage
        nontrivial = [d for d in divisions if not d.trivial_odd]
        self._inverse_latency = max((graph_latency(d.graph, per_stage) for d in nontrivial), default=0)
        self._inverse_register = per_stage is not None and bool(nontrivial)
        self._round_register = per_stage is not None and options.output_width is not None
        self.latency = division_latency(divisions, per_stage, options.output_width is not None)
        super().__init__({"x": In(words([r.width for r in in_ranges])),
                          "y": Out(words([out_width] * len(divisions)))})

    def elaborate(self, platform):
        m = Module()
        o = self._options
        for i, div in enumerate(self._divisions):
            q = Signal(signed(div.width), name=f"quot{i}")
            shifted = word(self.x, i) >> div.shift if div.shift else word(self.x, i)
            if div.trivial_odd:
                m.d.comb += q.eq(shifted)
            else:
                src = Signal(signed(div.width), name=f"div{i}_in")
                m.d.comb += src.eq(shifted)  # wraps modulo 2^width: exact for the modular inverse
                (val,) = emit_graph(m, div.graph, [src], [div.width] * div.graph.n_nodes, f"div{i}", self._per_stage)
                m.d.comb += q.eq(delay(m, val, self._inverse_latency - graph_latency(div.graph, self._per_stage),
                                       f"div{i}_bal"))
            if div.trivial_odd:
                q = delay(m, q, self._inverse_latency + self._inverse_register, f"quot{i}_bal")
            else:
                q = delay(m, q, self._inverse_register, f"quot{i}_q")
            m.d.comb += word(self.y, i).eq(self._quantise(m, q, i) if o.output_width is not None else q)
        return m

    def _quantise(self, m: Module, q, i: int):
        o = self._options
        s = o.output_shift
        match o.rounding:
            case _ if not s:
                r = q
            case Rounding.TRUNCATE:
                r = q >> s
            case Rounding.ROUND_HALF_UP:
                r = (q + (1 << (s - 1))) >> s
            case Rounding.ROUND_HALF_EVEN:
                floor, rem = q >> s, q[:s]
                half = 1 << (s - 1)
                up = (rem > half) | ((rem == half) & floor[0])
                r = floor + up
            case other:
                raise AssertionError(f"no rounding {other!r}")
        rs = Signal(signed(len(q) + 1), name=f"round{i}")
        m.d.comb += rs.eq(r)
        rs = delay(m, rs, self._round_register, f"round{i}")  # deep: rounding and saturation in two stages
        lo, hi = -(1 << (o.output_width - 1)), (1 << (o.output_width - 1)) - 1
        out = Signal(signed(o.output_width), name=f"sat{i}")
        with m.If(rs > hi):
            m.d.comb += out.eq(hi)
        with m.Elif(rs < lo):
            m.d.comb += out.eq(lo)
        with m.Else():
            m.d.comb += out.eq(rs)
        return out


class CheckedComponent(wiring.Component):
    """A component whose parameters are checked before it exists: :meth:`check` takes the constructor's
    arguments and raises WinohdlError (one line), so a refused component is never half-built (and
    Amaranth has no unused component to warn about)."""

    @classmethod
    def check(cls, *args, **kwargs) -> None:
        """Raise WinohdlError for parameters the component cannot take (none here)."""

    def __new__(cls, *args, src_loc_at: int = 0, **kwargs):
        cls.check(*args, **kwargs)
        return super().__new__(cls, *args, src_loc_at=src_loc_at + 1, **kwargs)
