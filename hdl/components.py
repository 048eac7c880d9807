"""Amaranth components of a Winograd tile; signatures are computed from the datapath description.

The tile's ports are packed vectors (``ArrayLayout``: element i at bits ``[i*w +: w]``,
two's complement); between stages every word is its own signal at its exact width.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .datapath import Datapath, Division
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


def emit_graph(m: Module, graph: ShiftAddGraph, inputs: list, node_widths: list[int], prefix: str) -> list:
    """Signals for every adder of ``graph`` (each at its exact width); returns the row values."""
    nodes = list(inputs)
    for i, add in enumerate(graph.adders):
        idx = graph.n_inputs + i
        s = Signal(signed(node_widths[idx]), name=f"{prefix}_n{idx}")
        m.d.comb += s.eq(_term_value(add.a, nodes) + _term_value(add.b, nodes))
        nodes.append(s)
    return [Const(0, signed(1)) if t is None else _term_value(t, nodes) for t in graph.outputs]


def pipeline_register(m: Module, value, name: str, enabled: bool):
    """``value`` registered in ``sync`` when ``enabled`` (reset-less, so DSPs can absorb it)."""
    if not enabled:
        return value
    reg = Signal(value.shape(), name=name, reset_less=True)
    m.d.sync += reg.eq(value)
    return reg


def valid_chain(m: Module, in_valid, out_valid, latency: int) -> None:
    """A resettable shift register that carries ``in_valid`` alongside the data."""
    valid = in_valid
    for i in range(latency):
        nxt = Signal(name=f"valid{i}")
        m.d.sync += nxt.eq(valid)
        valid = nxt
    m.d.comb += out_valid.eq(valid)


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

    Attributes
    ----------
    x : In, words of ``in_widths`` (len(M[0]) words)
    y : Out, words of exact output widths (len(M) words)
    """

    def __init__(self, graph: ShiftAddGraph, in_widths: list[int], node_ranges: list[Range],
                 out_ranges: list[Range], name: str):
        self._graph, self._node_ranges, self._prefix = graph, node_ranges, name
        self._out_widths = [r.width for r in out_ranges]
        super().__init__({"x": In(words(in_widths)), "y": Out(words(self._out_widths))})

    def elaborate(self, platform):
        m = Module()
        xs = [word(self.x, i) for i in range(self._graph.n_inputs)]
        rows = emit_graph(m, self._graph, xs, [r.width for r in self._node_ranges], self._prefix)
        for i, v in enumerate(rows):
            m.d.comb += word(self.y, i).eq(v)
        return m


class MultiplierArray(wiring.Component):
    """R parallel signed multipliers, ``m[r] = v[r] * u[r]``.

    Parameters
    ----------
    v_widths, u_widths, m_widths : list of int
        Exact operand and product widths of each of the R multipliers.

    Attributes
    ----------
    v : In, R words of ``v_widths`` (transformed data)
    u : In, R words of ``u_widths`` (transformed kernel)
    m : Out, R words of ``m_widths`` (products)
    """

    def __init__(self, v_widths: list[int], u_widths: list[int], m_widths: list[int]):
        self._R = len(v_widths)
        super().__init__({"v": In(words(v_widths)), "u": In(words(u_widths)), "m": Out(words(m_widths))})

    def elaborate(self, platform):
        m = Module()
        for r in range(self._R):
            m.d.comb += word(self.m, r).eq(word(self.v, r) * word(self.u, r))
        return m


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

    Attributes
    ----------
    x : In, |y| words (dividends, exact widths)
    y : Out, ArrayLayout(signed(out_width), |y|)
    """

    def __init__(self, divisions: list[Division], in_ranges: list[Range], out_width: int, options):
        self._divisions, self._options = divisions, options
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
                (val,) = emit_graph(m, div.graph, [src], [div.width] * div.graph.n_nodes, f"div{i}")
                m.d.comb += q.eq(val)
            m.d.comb += word(self.y, i).eq(self._quantise(m, q, i) if o.output_width is not None else q)
        return m

    def _quantise(self, m: Module, q, i: int):
        o = self._options
        s = o.output_shift
        if s and o.rounding == "round-half-up":
            r = (q + (1 << (s - 1))) >> s
        elif s and o.rounding == "round-half-even":
            floor, rem = q >> s, q[:s]
            half = 1 << (s - 1)
            up = (rem > half) | ((rem == half) & floor[0])
            r = floor + up
        else:
            r = q >> s
        rs = Signal(signed(len(q) + 1), name=f"round{i}")
        m.d.comb += rs.eq(r)
        lo, hi = -(1 << (o.output_width - 1)), (1 << (o.output_width - 1)) - 1
        out = Signal(signed(o.output_width), name=f"sat{i}")
        with m.If(rs > hi):
            m.d.comb += out.eq(hi)
        with m.Elif(rs < lo):
            m.d.comb += out.eq(lo)
        with m.Else():
            m.d.comb += out.eq(rs)
        return out


class WinogradTile(wiring.Component):
    """One Winograd convolution tile ``y = A^T[(G g) * (B^T d)]``, bit-exact.

    Parameters
    ----------
    datapath : Datapath
        The card, its integer scaling, graphs and widths.

    Attributes
    ----------
    d : In, ArrayLayout(signed(data_width), |d|)
        Input tile, row-major.
    g : In, ArrayLayout(signed(kernel_width), |g|)
        Kernel, row-major (kernel transform in hardware).
    u : In, ArrayLayout(signed(u_width), R)
        Transformed kernel ``G_int g`` (kernel transform offline), instead of g.
    y : Out, ArrayLayout(signed(y_width), |y|)
        Output tile, row-major.
    in_valid : In(1), out_valid : Out(1)
        Pipelined designs only: valid travels with the data (latency 3).
    """

    def __init__(self, datapath: Datapath):
        self.dp = dp = datapath
        o = dp.options
        members = {"d": In(data.ArrayLayout(signed(o.data_width), dp.geometry.n_d))}
        if o.kernel_transform == "hw":
            members["g"] = In(data.ArrayLayout(signed(o.kernel_width), dp.geometry.n_g))
        else:
            members["u"] = In(data.ArrayLayout(signed(dp.u_port_width), dp.rank))
        members["y"] = Out(data.ArrayLayout(signed(dp.y_width), dp.geometry.n_y))
        if o.pipeline != "none":
            members["in_valid"] = In(1)
            members["out_valid"] = Out(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        dp = self.dp
        g = dp.geometry
        pipelined = dp.options.pipeline != "none"

        def link(dst, src, n: int, name: str = "", register: bool = False) -> None:
            """dst[i] = src[i] for n words; through a register per word for a pipeline stage."""
            for i in range(n):
                m.d.comb += word(dst, i).eq(pipeline_register(m, word(src, i), f"{name}{i}", register and pipelined))

        m.submodules.data_transform = bt = ConstantMatrixProduct(
            dp.data_graph, [dp.options.data_width] * g.n_d, dp.data_node_ranges, dp.v_ranges, "bt")
        link(bt.x, self.d, g.n_d)
        m.submodules.multipliers = mul = MultiplierArray(dp.v_widths, dp.u_widths, dp.m_widths)
        if dp.options.kernel_transform == "hw":
            m.submodules.kernel_transform = gt = ConstantMatrixProduct(
                dp.kernel_graph, [dp.options.kernel_width] * g.n_g, dp.kernel_node_ranges, dp.u_ranges, "g")
            link(gt.x, self.g, g.n_g)
            u = gt.y
        else:
            u = self.u  # valid u words fit their exact widths (host transform of a valid g)
        link(mul.v, bt.y, dp.rank, "v_q", register=True)
        link(mul.u, u, dp.rank, "u_q", register=True)
        m.submodules.output_transform = at = ConstantMatrixProduct(
            dp.output_graph, dp.m_widths, dp.output_node_ranges, dp.pre_ranges, "at")
        link(at.x, mul.m, dp.rank, "m_q", register=True)
        m.submodules.division = div = ExactDivision(dp.divisions, dp.pre_ranges, dp.y_width, dp.options)
        link(div.x, at.y, g.n_y)
        link(self.y, div.y, g.n_y, "y_q", register=True)
        if pipelined:
            valid_chain(m, self.in_valid, self.out_valid, dp.options.latency)
        return m
