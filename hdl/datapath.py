"""The datapath description: one object derived from a card and the hardware options.

It holds the integer scaling, the three shift-add graphs, the exact range of
every node and therefore every width. The Python model, the Amaranth components,
the design summary and the testbench all read this one description.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from winohdl.core.card import AlgorithmCard, prove_identity
from winohdl.core.device import default_dsp_size
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from .options import HardwareOptions, KernelTransform
from .rowcol import candidates
from .scaling import ScaledCard, scale_card
from .shiftadd import ShiftAddGraph, division_graph
from .widths import Range, bilinear_range, linear_range, product_range, word_range

DSP_SIZE = default_dsp_size()
"""Signed operand sizes of the multiplier block the default figures count (ECP5 MULT18X18D, from
the device table :mod:`winohdl.core.device`; see :data:`hdl.cost.MULTIPLIER_SIZES` for the other
families)."""


def dsp_blocks(a: int, b: int, size: tuple[int, int] = DSP_SIZE) -> int:
    """Multiplier blocks of ``size`` for an ``a`` x ``b``-bit signed product (tiled, the
    better orientation): an operand above the block's width takes more than one."""
    p, q = size
    return min(math.ceil(a / p) * math.ceil(b / q), math.ceil(a / q) * math.ceil(b / p))


def graph_bits(graph: ShiftAddGraph, node_ranges: list[Range], out_ranges: list[Range]) -> int:
    """Adder bits of a graph: every adder's output width, plus the width of every negated row
    (a negation is one subtractor)."""
    bits = sum(r.width for r in node_ranges[graph.n_inputs:])
    return bits + sum(out_ranges[i].width for i, t in enumerate(graph.outputs) if t is not None and t.sign < 0)


def _linear_ranges(graph: ShiftAddGraph, box: list[Range]) -> list[Range]:
    return [linear_range(f, box) for f in graph.forms()]


def realise(matrix, dims: tuple[int, ...], side: str, box: list[Range]) -> tuple[str, ShiftAddGraph]:
    """The realisation of a transform the generator builds: flat or row-column
    (:func:`hdl.rowcol.candidates`), whichever has the fewest adder bits over the input box
    ``box`` (then adders, then depth). A negated output of an input transform is free (the
    generator folds its sign into the next transform), so row-column shares a factor and its
    negation (:func:`hdl.rowcol.row_separable`). For the output transform the box is the products'
    ranges, so the node widths compared are a sound bound (the exact bilinear ranges are
    computed for the chosen graph only)."""
    best = None
    rows = [linear_range(row, box) for row in matrix]
    for name, g in candidates(matrix, dims, side):
        if side == "in":  # a negated output of B^T or G costs nothing: fold_signs moves it onward
            key = (sum(r.width for r in _linear_ranges(g, box)[g.n_inputs:]), len(g.adders), g.depth)
        else:
            key = (graph_bits(g, _linear_ranges(g, box), rows), g.adder_count, g.depth)
        if best is None or key < best[0]:
            best = (key, name, g)
    return best[1], best[2]


@lru_cache(maxsize=4096)
def _division(odd: int, width: int) -> ShiftAddGraph:
    return division_graph(odd, width)


@lru_cache(maxsize=256)
def _y_ranges(geometry: Geometry, d_range: Range, kernel_width: int) -> tuple[Range, ...]:
    T = geometry.tensor()
    return tuple(bilinear_range(T[o], d_range, word_range(kernel_width))[0] for o in range(geometry.n_y))


@dataclass
class Plan:
    """How a card becomes hardware: the scale placement, the integer form and the graph of
    each transform with its realisation. ``estimate`` is the key it was chosen by."""

    scaled: ScaledCard
    graphs: dict
    realisation: dict
    estimate: tuple


TILE_PLACEMENTS = ("AT", "G")
"""The placements a tile chooses among (ties go to the first)."""


@lru_cache(maxsize=256)
def plan_card(card: AlgorithmCard, options: HardwareOptions, placements: tuple[str, ...] = TILE_PLACEMENTS) -> Plan:
    """Choose where G's denominators go (among ``placements``, :data:`hdl.scaling.PLACEMENTS`;
    signs are folded on the realised graphs) and, per transform, flat or row-column, minimising
    (multiplier blocks, adder bits, depth, adders, the placement's index) with a sound bound for
    the output transform's widths (cheap: linear forms only). Every placement is an exact
    rescaling of the card.

    Remembered per process (a pure function of the card's matrices and the options; nothing changes
    a plan once made): a design opened for each simulator, each check and each command planned its
    card again, a tenth of the test suite's time."""
    g = card.geometry
    d_box, g_box = [options.d_range] * g.n_d, [word_range(options.kernel_width)] * g.n_g
    hw = options.kernel_transform is KernelTransform.HW
    y_width = max(r.width for r in _y_ranges(g, options.d_range, options.kernel_width))
    best = None
    for placement in placements:
        memo: dict = {}

        def choice(M, which):
            M = tuple(map(tuple, M))
            if (M, which) not in memo:
                box = d_box if which == "BT" else g_box
                memo[(M, which)] = realise(M, g.input if which == "BT" else g.kernel, "in", box)
            return memo[(M, which)]

        def real(M, which):
            return choice(M, which)[1]

        try:
            s = scale_card(card, placement, real)
        except WinohdlError:
            if placement == placements[0]:
                raise
            continue
        (bt_name, bt), (g_name, gt) = memo[(s.BT, "BT")] if (s.BT, "BT") in memo else             realise(s.BT, g.input, "in", d_box), realise(s.G, g.kernel, "in", g_box)
        v = [linear_range(r, d_box) for r in s.BT]
        u = [linear_range(r, g_box) for r in s.G]
        m = [product_range(a, b) for a, b in zip(v, u)]
        at_name, at = realise(s.AT, g.output, "out", m)
        bits = graph_bits(bt, _linear_ranges(bt, d_box), v) + graph_bits(at, _linear_ranges(at, m),
                                                                          [linear_range(r, m) for r in s.AT])
        if hw:
            bits += graph_bits(gt, _linear_ranges(gt, g_box), u)
        divs = [_division(s.shift_and_odd(o)[1], y_width) for o in range(g.n_y) if s.shift_and_odd(o)[1] > 1]
        bits += sum(dv.adder_count for dv in divs) * y_width
        dsp = sum(dsp_blocks(a.width, b.width) for a, b in zip(v, u))
        depth = max(bt.depth, gt.depth if hw else 0) + at.depth + max((dv.depth for dv in divs), default=0)
        adders = bt.adder_count + at.adder_count + (gt.adder_count if hw else 0) + sum(dv.adder_count for dv in divs)
        key = (dsp, bits, depth, adders, placements.index(placement))
        if best is None or key < best.estimate:
            best = Plan(s, {"BT": bt, "G": gt, "AT": at}, {"BT": bt_name, "G": g_name, "AT": at_name}, key)
    return best


@dataclass(frozen=True)
class Division:
    """Exact division of output o by D = odd << shift: ``((x >> shift) * inverse) mod 2^width``."""

    shift: int
    odd: int
    inverse: int
    width: int
    graph: ShiftAddGraph  # x * inverse as shift-adds, evaluated modulo 2^width

    @property
    def trivial_odd(self) -> bool:
        return self.odd == 1


class Datapath:
    """Everything the hardware needs, derived from a proven card.

    Parameters
    ----------
    card : AlgorithmCard
        Re-proven here before anything is generated.
    options : HardwareOptions
    placements : tuple of str
        Where G's denominators may go (:func:`plan_card`).
    """

    def __init__(self, card: AlgorithmCard, options: HardwareOptions, placements: tuple[str, ...] = TILE_PLACEMENTS):
        t0 = time.perf_counter()
        prove_identity(card.geometry, card.BT, card.G, card.AT)  # the generator re-checks the proof
        self.card = card
        self.options = options
        self.geometry = card.geometry
        self.plan = plan_card(card, options, placements)
        self.scaled: ScaledCard = self.plan.scaled
        prove_identity(card.geometry, *self.scaled.rational_terms())  # scaling kept the identity
        # its own copies: the plan is shared by every Datapath of the card (plan_card remembers it),
        # and a mutant generator edits its graphs
        self.data_graph, self.kernel_graph, self.output_graph = (copy.deepcopy(self.plan.graphs[t])
                                                                 for t in ("BT", "G", "AT"))
        self.realisation: dict = dict(self.plan.realisation)  # "flat" or "row-column" per transform
        self.d_range = options.d_range           # the d words' values (signed, or non-negative)
        self.g_range = word_range(options.kernel_width)
        self._analyse()
        self.seconds = time.perf_counter() - t0

    # ---- range analysis -------------------------------------------------------------------------
    def _analyse(self) -> None:
        s, g = self.scaled, self.geometry
        self.data_node_ranges = [linear_range(f, [self.d_range] * g.n_d) for f in self.data_graph.forms()]
        self.kernel_node_ranges = [linear_range(f, [self.g_range] * g.n_g) for f in self.kernel_graph.forms()]
        self.v_ranges = [linear_range(row, [self.d_range] * g.n_d) for row in s.BT]
        self.u_ranges = [linear_range(row, [self.g_range] * g.n_g) for row in s.G]
        self.m_ranges = [product_range(a, b) for a, b in zip(self.v_ranges, self.u_ranges)]
        B, Gm = np.array(s.BT, dtype=object), np.array(s.G, dtype=object)
        self.output_node_ranges, self.output_witnesses = [], []
        for form in self.output_graph.forms():
            if len([c for c in form if c]) == 1:  # one product, shifted: the product's own range
                r = next(i for i, c in enumerate(form) if c)
                lo, hi = sorted((form[r] * self.m_ranges[r].lo, form[r] * self.m_ranges[r].hi))
                self.output_node_ranges.append(Range(lo, hi, self.m_ranges[r].tight))
                self.output_witnesses.append(None)
                continue
            C = sum((c * np.outer(B[r], Gm[r]) for r, c in enumerate(form) if c), np.zeros((g.n_d, g.n_g), object))
            rng, wit = bilinear_range(C, self.d_range, self.g_range)
            self.output_node_ranges.append(rng)
            self.output_witnesses.append(wit)
        self.y_exact_ranges = list(_y_ranges(g, self.options.d_range, self.options.kernel_width))
        self.pre_ranges = [Range(r.lo * D, r.hi * D, r.tight) for r, D in zip(self.y_exact_ranges, s.divisor)]
        self.y_exact_width = max(r.width for r in self.y_exact_ranges)
        self.divisions = []
        for o in range(g.n_y):
            shift, odd = s.shift_and_odd(o)
            inv = pow(odd, -1, 1 << self.y_exact_width) if odd > 1 else 1
            self.divisions.append(Division(shift, odd, inv, self.y_exact_width,
                                           _division(odd, self.y_exact_width) if odd > 1 else division_graph(1, 1)))

    # ---- widths -----------------------------------------------------------------------------------
    @cached_property
    def v_widths(self) -> list[int]:
        return [r.width for r in self.v_ranges]

    @cached_property
    def u_widths(self) -> list[int]:
        return [r.width for r in self.u_ranges]

    @cached_property
    def m_widths(self) -> list[int]:
        return [r.width for r in self.m_ranges]

    @property
    def u_port_width(self) -> int:
        """Width of each word of the offline-transformed kernel port u."""
        return max(self.u_widths)

    @property
    def y_width(self) -> int:
        o = self.options
        return self.y_exact_width if o.output_width is None else o.output_width

    @property
    def rank(self) -> int:
        return self.scaled.rank

    @cached_property
    def adders(self) -> dict:
        """Exact adder counts per transform (negations included) and of the exact divisions."""
        div = sum(dv.graph.adder_count for dv in self.divisions if not dv.trivial_odd)
        return {"BT": self.data_graph.adder_count, "G": self.kernel_graph.adder_count,
                "AT": self.output_graph.adder_count, "division": div}

    @cached_property
    def depths(self) -> dict:
        return {"BT": self.data_graph.depth, "G": self.kernel_graph.depth, "AT": self.output_graph.depth}

    @cached_property
    def adder_bits(self) -> dict:
        """Sum of every adder's output width (its exact range) per transform and of the divisions
        (each of their adders is ``y_exact_width`` bits, modular)."""
        div = sum(dv.graph.adder_count * dv.width for dv in self.divisions if not dv.trivial_odd)
        return {"BT": graph_bits(self.data_graph, self.data_node_ranges, self.v_ranges),
                "G": graph_bits(self.kernel_graph, self.kernel_node_ranges, self.u_ranges),
                "AT": graph_bits(self.output_graph, self.output_node_ranges, self.pre_ranges), "division": div}

    @cached_property
    def division_depth(self) -> int:
        return max((dv.graph.depth for dv in self.divisions if not dv.trivial_odd), default=0)

    @property
    def kernel_in_hardware(self) -> bool:
        return self.options.kernel_transform is KernelTransform.HW

    @property
    def logic_depth(self) -> int:
        """Adder levels on the longest path: the deeper input transform (G only in hardware),
        the output transform and the division (the multipliers not counted)."""
        d = self.depths
        return max(d["BT"], d["G"] if self.kernel_in_hardware else 0) + d["AT"] + self.division_depth

    def dsp_blocks(self, size: tuple[int, int] = DSP_SIZE) -> int:
        """Multiplier blocks of ``size`` for the R multipliers at their exact operand widths."""
        return sum(dsp_blocks(a, b, size) for a, b in zip(self.v_widths, self.u_widths))

    def host_kernel_transform(self, g: list[int]) -> list[int]:
        """The exact offline kernel transform ``u = G_int g`` (integers) for the ``u`` port."""
        if len(g) != self.geometry.n_g:
            raise WinohdlError(f"kernel has {len(g)} words, the geometry needs {self.geometry.n_g}")
        return [sum(c * x for c, x in zip(row, g)) for row in self.scaled.G]
