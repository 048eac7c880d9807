"""The datapath description: one object derived from a card and the hardware options.

It holds the integer scaling, the three shift-add graphs, the exact range of
every node and therefore every width. The Python model, the Amaranth components,
the design summary and the testbench all read this one description.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from winohdl.core.card import AlgorithmCard, prove_identity
from winohdl.core.errors import WinohdlError

from .options import HardwareOptions
from .scaling import ScaledCard, scale_card
from .shiftadd import ShiftAddGraph, build_graph
from .widths import Range, bilinear_range, linear_range, product_range, word_range


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
    """

    def __init__(self, card: AlgorithmCard, options: HardwareOptions):
        t0 = time.perf_counter()
        prove_identity(card.geometry, card.BT, card.G, card.AT)  # the generator re-checks the proof
        self.card = card
        self.options = options
        self.geometry = card.geometry
        self.scaled: ScaledCard = scale_card(card)
        prove_identity(card.geometry, *self.scaled.rational_terms())  # scaling kept the identity
        s = self.scaled
        self.data_graph = build_graph(s.BT)
        self.kernel_graph = build_graph(s.G)
        self.output_graph = build_graph(s.AT)
        self.d_range = word_range(options.data_width)
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
        T = g.tensor()
        self.y_exact_ranges = [bilinear_range(T[o], self.d_range, self.g_range)[0] for o in range(g.n_y)]
        self.pre_ranges = [Range(r.lo * D, r.hi * D, r.tight) for r, D in zip(self.y_exact_ranges, s.divisor)]
        self.y_exact_width = max(r.width for r in self.y_exact_ranges)
        self.divisions = []
        for o in range(g.n_y):
            shift, odd = s.shift_and_odd(o)
            inv = pow(odd, -1, 1 << self.y_exact_width) if odd > 1 else 1
            self.divisions.append(Division(shift, odd, inv, self.y_exact_width, build_graph([[inv]])))

    # ---- widths -----------------------------------------------------------------------------------
    @property
    def v_widths(self) -> list[int]:
        return [r.width for r in self.v_ranges]

    @property
    def u_widths(self) -> list[int]:
        return [r.width for r in self.u_ranges]

    @property
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

    def host_kernel_transform(self, g: list[int]) -> list[int]:
        """The exact offline kernel transform ``u = G_int g`` (integers) for the ``u`` port."""
        if len(g) != self.geometry.n_g:
            raise WinohdlError(f"kernel has {len(g)} words, the geometry needs {self.geometry.n_g}")
        return [sum(c * x for c, x in zip(row, g)) for row in self.scaled.G]
