"""The hardware cost of an algorithm: what "cheaper" means, from the generator's own exact widths.

Every figure is read off the :class:`~hdl.datapath.Datapath` the generator builds
(the same scale placement, the same flat or row-column graph per transform, the
same exact ranges), for reference options (8-bit data and kernel, kernel
transform in hardware, unless others are given):

* adders of B^T, G (counted only when the kernel transform is in hardware), A^T
  and of the exact division (negations count, shifts are free);
* adder bits: the sum of every adder's output width (exact ranges; a division's
  adders are modular, at the output's width) -- what carry chains cost in every
  technology;
* multiplier blocks: per multiplier, the tiles of the family's block its exact
  operand widths need (an operand above 18 bits takes more than one MULT18);
  :data:`MULTIPLIER_SIZES` per family, the objective counts ECP5's 18 x 18;
* logic depth: adder levels through the deeper input transform, A^T and the division.

:func:`cost_key` (and any :func:`make_cost_key`) is the :data:`miner.costs.CostFunction`
the application passes to the miner; it ranks by an objective (:data:`OBJECTIVES`,
default ``dsp``: multiplier blocks, then adder bits, then depth). The miner calls
it on local optima and final candidates only (its inner loop screens in floating
point), so the exact figures are affordable there: about 0.5 s for F(4x4, 3x3).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from winohdl.core.card import AlgorithmCard
from winohdl.core.device import FAMILY_DEVICES
from winohdl.core.errors import WinohdlError

from .datapath import DSP_SIZE, Datapath, dsp_blocks
from .options import DEFAULT_OBJECTIVE, OBJECTIVES, HardwareOptions

MULTIPLIER_SIZES = {f: FAMILY_DEVICES[f].dsp.size for f in ("ecp5", "xilinx", "ice40", "gowin")}
"""Signed operand sizes of each family's multiplier block, from the device table
(:mod:`winohdl.core.device`): ECP5 MULT18X18D 18 x 18, xc7 DSP48E1 25 x 18, iCE40 SB_MAC16
16 x 16, Gowin MULT18X18 18 x 18."""



@dataclass(frozen=True)
class TransformAdders:
    """Two-input adders (subtractors included) of each transform."""

    BT: int
    G: int
    AT: int


@dataclass(frozen=True)
class CardCost:
    """The hardware cost of a bilinear algorithm, ranked by :meth:`key` (lower is cheaper).

    Parameters
    ----------
    rank : int
        Multiplications R.
    adders : TransformAdders
        Exact adders of the generator's graphs of B^T, G, A^T.
    depth : TransformAdders
        Adder levels of each transform.
    max_denominator : int
    max_abs_constant : Fraction
    division : int
        Adders of the exact divisions (all outputs).
    adder_bits : dict
        Adder bits of ``BT``, ``G``, ``AT`` and ``division``.
    operand_widths : tuple of (int, int)
        Exact (data-side, kernel-side) operand widths of each multiplier.
    logic_depth : int
    realisation : dict
        ``flat`` or ``row-column`` per transform.
    placement : str
        Where G's denominators went (:data:`hdl.scaling.PLACEMENTS`).
    kernel_in_hardware : bool
        Whether G's adders count.
    objective : str
        One of :data:`OBJECTIVES`.
    """

    rank: int
    adders: TransformAdders
    depth: TransformAdders
    max_denominator: int
    max_abs_constant: Fraction
    division: int = 0
    adder_bits: dict = dataclasses.field(default_factory=dict)
    operand_widths: tuple = ()
    logic_depth: int = 0
    realisation: dict = dataclasses.field(default_factory=dict)
    placement: str = "AT"
    kernel_in_hardware: bool = True
    objective: str = DEFAULT_OBJECTIVE

    def dsp_blocks(self, family: str | None = None) -> int:
        size = MULTIPLIER_SIZES[family] if family else DSP_SIZE
        return sum(dsp_blocks(a, b, size) for a, b in self.operand_widths)

    @property
    def total_adders(self) -> int:
        a = self.adders
        return a.BT + a.AT + self.division + (a.G if self.kernel_in_hardware else 0)

    @property
    def total_bits(self) -> int:
        b = self.adder_bits
        return b.get("BT", 0) + b.get("AT", 0) + b.get("division", 0) + (b.get("G", 0) if self.kernel_in_hardware else 0)

    def key(self, objective: str | None = None) -> tuple:
        """The sortable key of ``objective`` (default: this cost's), see :data:`OBJECTIVES`;
        ties end at max denominator and max |constant| (bit growth)."""
        o = objective or self.objective
        dsp, bits, depth, adders = self.dsp_blocks(), self.total_bits, self.logic_depth, self.total_adders
        tail = (self.max_denominator, self.max_abs_constant)
        match o:
            case "dsp":
                head = (dsp, bits, depth, adders, self.rank)
            case "bits":
                head = (bits, dsp, depth, adders, self.rank)
            case "adders":
                head = (adders, dsp, bits, depth, self.rank)
            case "depth":
                head = (depth, dsp, bits, adders, self.rank)
            case "rank":
                head = (self.rank, bits, depth, dsp, adders)
            case _:
                raise WinohdlError(f"unknown objective {o!r}; choose one of {', '.join(OBJECTIVES)}")
        return head + tail

    def figures(self) -> dict:
        """The headline figures: R, multiplier blocks, adders, adder bits, depth."""
        return {"rank": self.rank, "dsp_blocks": self.dsp_blocks(), "adders": self.total_adders,
                "adder_bits": self.total_bits, "depth": self.logic_depth}

    def to_json(self) -> dict:
        """The costs block written into card files for people to read (never read back)."""
        a, d = self.adders, self.depth
        return {"rank": self.rank, "objective": self.objective,
                "adders": {"BT": a.BT, "G": a.G, "AT": a.AT}, "division_adders": self.division,
                "adder_bits": dict(self.adder_bits), "depth": {"BT": d.BT, "G": d.G, "AT": d.AT},
                "logic_depth": self.logic_depth, "dsp_blocks": {f: self.dsp_blocks(f) for f in MULTIPLIER_SIZES},
                "operand_widths": [list(w) for w in self.operand_widths],
                "realisation": dict(self.realisation), "placement": self.placement,
                "kernel_in_hardware": self.kernel_in_hardware,
                "max_denominator": self.max_denominator, "max_abs_constant": str(self.max_abs_constant)}

    def line(self) -> str:
        a, b, r = self.adders, self.adder_bits, self.realisation
        g = "" if self.kernel_in_hardware else " (offline)"
        return (f"adders     B^T {a.BT} ({r.get('BT', 'flat')}), G {a.G}{g} ({r.get('G', 'flat')}), "
                f"A^T {a.AT} ({r.get('AT', 'flat')}), division {self.division}; adder bits {self.total_bits} "
                f"(B^T {b.get('BT', 0)}, G {b.get('G', 0)}, A^T {b.get('AT', 0)}, division {b.get('division', 0)}); "
                f"multiplier blocks {self.dsp_blocks()} (18x18); depth {self.logic_depth}; "
                f"scale in {self.placement} (exact: the generator's graphs and widths)")

    def summary(self) -> str:
        """One line for search reports (a string, so readers print it as it is)."""
        a = self.adders
        return (f"R {self.rank}, blocks {self.dsp_blocks()}, adder bits {self.total_bits}, depth {self.logic_depth}, "
                f"adders B^T {a.BT} G {a.G} A^T {a.AT} division {self.division}")


def cost_of_datapath(dp: Datapath, objective: str = DEFAULT_OBJECTIVE) -> CardCost:
    """The cost of a built datapath (its exact widths and graphs)."""
    card = dp.card
    values = [Fraction(v) for m in (card.BT, card.G, card.AT) for row in m for v in row]
    return CardCost(dp.rank, TransformAdders(dp.adders["BT"], dp.adders["G"], dp.adders["AT"]),
                    TransformAdders(**dp.depths),
                    max((v.denominator for v in values), default=1), max((abs(v) for v in values), default=Fraction(0)),
                    division=dp.adders["division"], adder_bits=dict(dp.adder_bits),
                    operand_widths=tuple(zip(dp.v_widths, dp.u_widths)), logic_depth=dp.logic_depth,
                    realisation=dict(dp.realisation), placement=dp.scaled.placement,
                    kernel_in_hardware=dp.kernel_in_hardware, objective=objective)


REFERENCE_OPTIONS = HardwareOptions()


def cost_of(card: AlgorithmCard, options: HardwareOptions | None = None,
            objective: str = DEFAULT_OBJECTIVE) -> CardCost:
    """The exact cost of a proven card with ``options`` (default: the reference options)."""
    return cost_of_datapath(Datapath(card, options or REFERENCE_OPTIONS), objective)


def card_cost(BT, G, AT, geometry=None, options: HardwareOptions | None = None,
              objective: str = DEFAULT_OBJECTIVE) -> CardCost:
    """The exact cost of rational transforms B^T, G, A^T of ``geometry`` (proven first)."""
    if geometry is None:
        raise WinohdlError("the hardware cost needs the geometry (row-column realisation, widths)")
    return cost_of(_card(geometry, BT, G, AT), options, objective)


def _card(geometry, BT, G, AT) -> AlgorithmCard:
    key = (geometry, tuple(map(tuple, BT)), tuple(map(tuple, G)), tuple(map(tuple, AT)))
    return _cached_card(key)


@lru_cache(maxsize=512)
def _cached_card(key) -> AlgorithmCard:
    return AlgorithmCard.build(key[0], *key[1:], {"method": "cost"})


def make_cost_key(objective: str = DEFAULT_OBJECTIVE, options: HardwareOptions | None = None):
    """A :data:`miner.costs.CostFunction` ranking by ``objective`` with ``options``."""
    if objective not in OBJECTIVES:
        raise WinohdlError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")

    @lru_cache(maxsize=2048)
    def cached(key) -> tuple:
        return card_cost(*key[1:], geometry=key[0], options=options, objective=objective).key()

    def key_fn(BT, G, AT, geometry=None) -> tuple:
        if geometry is None:
            raise WinohdlError("the hardware cost needs the geometry (row-column realisation, widths)")
        return cached((geometry, tuple(map(tuple, BT)), tuple(map(tuple, G)), tuple(map(tuple, AT))))

    key_fn.objective = objective
    key_fn.describe = lambda key: describe_key(objective, key)
    return key_fn


KEY_FIELDS = {"dsp": ("multiplier blocks", "adder bits", "logic depth", "adders", "R"),
              "bits": ("adder bits", "multiplier blocks", "logic depth", "adders", "R"),
              "adders": ("adders", "multiplier blocks", "adder bits", "logic depth", "R"),
              "depth": ("logic depth", "multiplier blocks", "adder bits", "adders", "R"),
              "rank": ("R", "adder bits", "logic depth", "multiplier blocks", "adders")}
"""The names of :meth:`CardCost.key`'s values per objective (then max denominator, max |constant|)."""


def describe_key(objective: str, key: tuple) -> str:
    """``key`` (of ``objective``) in words: "multiplier blocks 25, adder bits 715, ...", most
    significant first, so a search report reads without the key's order at hand."""
    names = KEY_FIELDS[objective] + ("max denominator", "max |constant|")
    return ", ".join(f"{n} {v}" for n, v in zip(names, key))


cost_key = make_cost_key()
""":data:`miner.costs.CostFunction` of the default objective and the reference options."""


def front_figures(BT, G, AT, geometry=None, options: HardwareOptions | None = None) -> tuple[int, int, int]:
    """:data:`miner.costs.FiguresFunction`: (multiplications, adder bits, logic depth), exact."""
    c = card_cost(BT, G, AT, geometry=geometry, options=options)
    return c.rank, c.total_bits, c.logic_depth
